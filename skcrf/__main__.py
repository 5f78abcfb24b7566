"""Command line: ``python -m skcrf demo``."""

import argparse
import sys
import time
from collections import Counter


def demo(args):
    from sklearn.pipeline import make_pipeline

    from . import LinearChainCRF, SequenceFeaturizer
    from .datasets import load_sample_cws
    from .metrics import segmentation_scores
    from .segmentation import tags_to_words, words_to_tags

    sents = load_sample_cws()
    n_test = max(1, len(sents) // 10)
    train, test = sents[:-n_test], sents[-n_test:]
    X_train = ["".join(s) for s in train]
    y_train = [words_to_tags(s) for s in train]
    X_test = ["".join(s) for s in test]
    print(f"Bundled sample (UD Chinese GSD, CC BY-SA 4.0): {len(train)} training "
          f"sentences ({sum(map(len, X_train)):,} characters), {len(test)} held out.")

    # dictionary features from the training words seen at least 3 times: rare
    # words stay out so that training also shows words no dictionary covers
    counts = Counter(w for s in train for w in s)
    dictionary = {w for w, c in counts.items() if c >= args.dict_min_count}
    pipe = make_pipeline(SequenceFeaturizer(dictionary=dictionary or None),
                         LinearChainCRF(c2=args.c2, n_jobs=args.n_jobs))
    t = time.perf_counter()
    pipe.fit(X_train, y_train)
    crf = pipe[-1]
    print(f"Trained featurizer + CRF in {time.perf_counter() - t:.1f} s "
          f"({crf.n_iter_} L-BFGS iterations, {pipe[0].n_features_out_:,} features, "
          f"objective {crf.objective_:.2f}, dictionary of {len(dictionary):,} words; "
          "the first run also compiles the kernels).")

    pred = [tags_to_words(x, tags) for x, tags in zip(X_test, pipe.predict(X_test))]
    s = segmentation_scores(test, pred, train_words={w for ws in train for w in ws})
    print(f"Held-out words: precision {s['precision']:.4f}  recall {s['recall']:.4f}  "
          f"F1 {s['f1']:.4f}  OOV rate {s['oov_rate']:.3f}  OOV recall "
          f"{s['oov_recall']:.4f}  IV recall {s['iv_recall']:.4f}")
    examples = args.sentences or ["上海市体育局召开体育宣传工作会议", "我们在北京大学学习自然语言处理"]
    for text, tags in zip(examples, pipe.predict(examples)):
        print(f"  {text}  ->  {' / '.join(tags_to_words(text, tags))}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m skcrf",
                                 description="skcrf: linear-chain CRFs for scikit-learn.")
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="train a Chinese word segmenter on the bundled sample "
                                    "and score it on a held-out part")
    d.add_argument("--c2", type=float, default=0.3, help="L2 strength (default 0.3)")
    d.add_argument("--dict-min-count", type=int, default=3,
                   help="dictionary = training words seen at least this often (default 3)")
    d.add_argument("--n-jobs", type=int, default=None, help="kernel threads (default 1)")
    d.add_argument("sentences", nargs="*", help="sentences to segment after training")
    args = ap.parse_args(argv)
    if args.command == "demo":
        return demo(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
