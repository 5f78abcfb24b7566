"""Chinese word segmentation on the SIGHAN 2008 SXU corpus.

Trains SequenceFeaturizer (character n-grams, character types, dictionary
matches from the training words) + LinearChainCRF on BMES tags, scores the
test set with the SIGHAN definitions (P/R/F1, OOV and IV recall) and segments
a few new sentences.

    python examples/chinese_word_segmentation.py --data ../shared/data/sighan2008_sxu

Options: --c2, --n-jobs, --limit N (first N training sentences, for a quick run),
--dict-min-count K (dictionary = training words seen at least K times; 0 = no
dictionary).

Why a count threshold: with every training word in the dictionary, the
dictionary features separate the training words perfectly, the model learns
to trust them, and it then cannot segment out-of-vocabulary words, which no
dictionary match covers. Leaving the rare words out lets the training data show
the model uncovered words too.
"""

import argparse
import os
import resource
import time
from collections import Counter

from sklearn.pipeline import make_pipeline

from skcrf import LinearChainCRF, SequenceFeaturizer
from skcrf.metrics import segmentation_scores
from skcrf.segmentation import read_segmented, tags_to_words, words_to_tags


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                   "shared", "data", "sighan2008_sxu"))
    ap.add_argument("--c2", type=float, default=1.0)
    ap.add_argument("--n-jobs", type=int, default=-1)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--verbose", type=int, default=0)
    ap.add_argument("--dict-min-count", type=int, default=5)
    args = ap.parse_args()

    train = read_segmented(os.path.join(args.data, "train.txt"))[: args.limit]
    test = read_segmented(os.path.join(args.data, "test.txt"))
    train_words = {w for s in train for w in s}
    counts = Counter(w for s in train for w in s)
    dictionary = ({w for w, c in counts.items() if c >= args.dict_min_count}
                  if args.dict_min_count > 0 else None)
    X_train = ["".join(s) for s in train]
    y_train = [words_to_tags(s) for s in train]
    X_test = ["".join(s) for s in test]
    print(f"train: {len(train):,} sentences, {sum(map(len, X_train)):,} characters; "
          f"test: {len(test):,} sentences; dictionary: "
          f"{len(dictionary) if dictionary else 0:,} training words seen >= "
          f"{args.dict_min_count} times")

    featurizer = SequenceFeaturizer(dictionary=dictionary)
    t = time.perf_counter()
    featurizer.fit(X_train)
    t_feat = time.perf_counter() - t
    t = time.perf_counter()
    Xtr = featurizer.transform(X_train)
    t_tr = time.perf_counter() - t
    print(f"featurizer: fit {t_feat:.2f} s, transform {t_tr:.2f} s "
          f"({featurizer.n_features_out_:,} features, {Xtr.X.nnz:,} non-zeros)")

    pipe = make_pipeline(featurizer, LinearChainCRF(c2=args.c2, n_jobs=args.n_jobs,
                                                    verbose=args.verbose))
    t = time.perf_counter()
    pipe.fit(X_train, y_train)
    crf = pipe[-1]
    print(f"fit (featurizer + CRF): {time.perf_counter() - t:.1f} s, {crf.n_iter_} "
          f"iterations, objective {crf.objective_:.2f}, "
          f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")

    pipe.predict(X_test[:2])  # first call loads the compiled Viterbi kernel
    t = time.perf_counter()
    pred_tags = pipe.predict(X_test)
    dt = time.perf_counter() - t
    pred = [tags_to_words(x, tags) for x, tags in zip(X_test, pred_tags)]
    s = segmentation_scores(test, pred, train_words=train_words)
    print(f"test: P {s['precision']:.4f}  R {s['recall']:.4f}  F1 {s['f1']:.4f}  "
          f"OOV rate {s['oov_rate']:.3f}  OOV recall {s['oov_recall']:.4f}  "
          f"IV recall {s['iv_recall']:.4f}  ({sum(map(len, X_test)) / dt:,.0f} chars/s "
          f"from raw text)")
    for text in ["上海市体育局召开体育宣传工作会议", "２００８年奥运会在北京举行",
                 "我们在北京大学学习自然语言处理"]:
        print("  ", " / ".join(tags_to_words(text, pipe.predict([text])[0])))


if __name__ == "__main__":
    main()
