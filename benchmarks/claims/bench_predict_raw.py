"""Prediction from raw text, featurisation included: skcrf Pipeline vs sklearn-crfsuite.

Word segmentation on SIGHAN 2008 SXU. Both sides use the same character
templates (SequenceFeaturizer's defaults without a dictionary: characters at
offsets -2..2, the bigrams (-2,-1) (-1,0) (0,1) (1,2) and the skip pair
(-1,+1), character types at -1..1, a bias):

* skcrf: ``make_pipeline(SequenceFeaturizer(), LinearChainCRF())`` on the raw
  strings;
* sklearn-crfsuite: the usual Python feature function (one list of attribute
  strings per character) feeding ``sklearn_crfsuite.CRF``.

Both are trained on the first ``--train`` sentences (c2=1, ``--max-iter``
iterations: prediction speed does not depend on convergence), then predict
the whole test set from its raw strings, timed end to end (best of
``--repeat``). Prints characters per second and the ratio.

    python benchmarks/claims/bench_predict_raw.py --data ../shared/data/sighan2008_sxu
"""

import argparse
import os
import sys
import time
import warnings
from datetime import date
from functools import cache

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import DEFAULT_DATA, machine


@cache
def _ctype(ch):
    from skcrf.feature_extraction._char_classes import char_type

    return char_type(ch)


def char_features(sent):
    """The same templates as SequenceFeaturizer's defaults, in plain Python."""
    n = len(sent)
    padded = ["<s-2>", "<s-1>"] + list(sent) + ["</s+1>", "</s+2>"]
    types = ["pad", "pad"] + [_ctype(c) for c in sent] + ["pad", "pad"]
    feats = []
    for i in range(n):
        def c(k, i=i):
            return padded[i + 2 + k]
        feats.append([
            "bias",
            "C[-2]=" + c(-2), "C[-1]=" + c(-1), "C[0]=" + c(0), "C[1]=" + c(1),
            "C[2]=" + c(2),
            "C[-2]C[-1]=" + c(-2) + c(-1), "C[-1]C[0]=" + c(-1) + c(0),
            "C[0]C[1]=" + c(0) + c(1), "C[1]C[2]=" + c(1) + c(2),
            "C[-1]C[1]=" + c(-1) + c(1),
            "T[-1]=" + types[i + 1], "T[0]=" + types[i + 2], "T[1]=" + types[i + 3],
        ])
    return feats


def best_time(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(DEFAULT_DATA, "sighan2008_sxu"))
    ap.add_argument("--train", type=int, default=5000)
    ap.add_argument("--max-iter", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    import sklearn_crfsuite
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.pipeline import make_pipeline

    from skcrf import LinearChainCRF, SequenceFeaturizer
    from skcrf.segmentation import read_segmented, words_to_tags

    train = read_segmented(os.path.join(args.data, "train.txt"))[:args.train]
    test = read_segmented(os.path.join(args.data, "test.txt"))
    train_text = ["".join(s) for s in train]
    test_text = ["".join(s) for s in test]
    y = [words_to_tags(s) for s in train]
    n_chars = sum(len(s) for s in test_text)
    print(f"# Predict from raw text, SXU word segmentation — {date.today()} — {machine()}")
    print(f"trained on {len(train):,} sentences; test {len(test):,} sentences, "
          f"{n_chars:,} characters; best of {args.repeat}")

    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for n_jobs in (1, -1):
            pipe = make_pipeline(SequenceFeaturizer(),
                                 LinearChainCRF(c2=1.0, max_iter=args.max_iter,
                                                all_possible_transitions=False,
                                                n_jobs=n_jobs))
            pipe.fit(train_text, y)
            pipe.predict(test_text[:10])  # load the compiled kernels
            t, pred_sk = best_time(lambda: pipe.predict(test_text), args.repeat)
            rows.append((f"skcrf Pipeline, n_jobs={n_jobs}", t))
    crf = sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.0, c2=1.0,
                               max_iterations=args.max_iter, all_possible_transitions=False)
    crf.fit([char_features(s) for s in train_text], y)
    t, pred_cs = best_time(lambda: crf.predict([char_features(s) for s in test_text]),
                           args.repeat)
    rows.append(("sklearn-crfsuite + Python features", t))

    agree = sum(a == b for p, q in zip(pred_sk, pred_cs) for a, b in zip(p, q)) / n_chars
    print("\n| engine | predict s | characters/s |\n|---|---|---|")
    for name, t in rows:
        print(f"| {name} | {t:.3f} | {n_chars / t:,.0f} |")
    for name, t in rows[:2]:
        print(f"{name} / CRFsuite: {rows[2][1] / t:.1f}x faster")
    print(f"tags that agree between the two models: {agree:.4f}")


if __name__ == "__main__":
    main()
