"""Chinese word segmentation on the SIGHAN 2008 SXU corpus with WordSegmenter.
===========================================================================

Trains ``WordSegmenter()`` (6 tags; character n-grams and classes; a
dictionary of the training words and accessor-variety statistics, both
jackknifed over contiguous folds while fitting; and a second CRF on the
character features alone whose new words are taken where the main model
splits them unsurely), scores the test set with the
SIGHAN definitions (P / R / F1, OOV and IV recall) and segments a few new
sentences.

::

    python examples/chinese_word_segmentation.py --data ../shared/data/sighan2008_sxu

Options: --c2, --n-jobs, --limit N (first N training sentences, for a quick
run), --no-dictionary, --with-test-text (the raw test text as unlabeled text
for the accessor-variety statistics, as the SIGHAN closed track allowed).

Why jackknifed: with every training word in the dictionary, the dictionary
features separate the training words perfectly, the model learns to trust
them, and it then cannot segment out-of-vocabulary words, which no dictionary
match covers. While fitting, each block of training sentences therefore sees
only the words (and n-gram statistics) of the other blocks, as new text will.
"""

import argparse
import os
import resource
import time

from skcrf import WordSegmenter
from skcrf.metrics import segmentation_scores
from skcrf.segmentation import read_segmented


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                   "shared", "data", "sighan2008_sxu"))
    ap.add_argument("--c2", type=float, default=WordSegmenter().c2)
    ap.add_argument("--n-jobs", type=int, default=-1)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--verbose", type=int, default=0)
    ap.add_argument("--no-dictionary", action="store_true")
    ap.add_argument("--with-test-text", action="store_true")
    args = ap.parse_args()

    train = read_segmented(os.path.join(args.data, "train.txt"))[: args.limit]
    test = read_segmented(os.path.join(args.data, "test.txt"))
    X_train = ["".join(s) for s in train]
    X_test = ["".join(s) for s in test]
    print(f"train: {len(train):,} sentences, {sum(map(len, X_train)):,} characters; "
          f"test: {len(test):,} sentences")

    seg = WordSegmenter(c2=args.c2, n_jobs=args.n_jobs, verbose=args.verbose,
                        dictionary=None if args.no_dictionary else "train",
                        unlabeled_text=X_test if args.with_test_text else None)
    t = time.perf_counter()
    seg.fit(X_train, train)
    print(f"fit (featurising + CRF): {time.perf_counter() - t:.1f} s, "
          f"{seg.crf_.n_iter_} iterations, {seg.featurizer_.n_features_out_:,} features, "
          f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")

    seg.predict(X_test[:2])  # the first call loads the compiled Viterbi kernel
    t = time.perf_counter()
    pred = seg.predict(X_test)
    dt = time.perf_counter() - t
    s = segmentation_scores(test, pred, train_words=seg.train_words_)
    print(f"test: P {s['precision']:.4f}  R {s['recall']:.4f}  F1 {s['f1']:.4f}  "
          f"OOV rate {s['oov_rate']:.3f}  OOV recall {s['oov_recall']:.4f}  "
          f"IV recall {s['iv_recall']:.4f}  ({sum(map(len, X_test)) / dt:,.0f} chars/s "
          f"from raw text)")
    for text in ["上海市体育局召开体育宣传工作会议", "２００８年奥运会在北京举行",
                 "我们在北京大学学习自然语言处理"]:
        print("  ", " / ".join(seg.predict([text])[0]))


if __name__ == "__main__":
    main()
