"""GridSearchCV over the L2 strength c2 on CoNLL-2002 Spanish NER, from raw tokens.
================================================================================

The whole pipeline (SequenceFeaturizer on (word, POS) tokens + LinearChainCRF) is
cross-validated on esp.train with exact-span F1; the refit model is scored on
esp.testb. With matplotlib installed, also saves a plot of F1 against c2.

::

    python examples/grid_search_c2.py --data ../shared/data/conll2002 [--limit 3000]
"""

import argparse
import os
import time

from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline

from skcrf import LinearChainCRF, SequenceFeaturizer
from skcrf.datasets import read_conll
from skcrf.metrics import make_span_f1_scorer, span_classification_report


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                   "shared", "data", "conll2002"))
    ap.add_argument("--c2", type=float, nargs="+", default=[0.1, 0.3, 1.0, 3.0])
    ap.add_argument("--folds", type=int, default=3)
    ap.add_argument("--n-jobs", type=int, default=2, help="parallel fits of the search")
    ap.add_argument("--limit", type=int, default=None, help="first N training sentences")
    ap.add_argument("--plot", default="grid_search_c2.png")
    args = ap.parse_args()

    X, y = read_conll(os.path.join(args.data, "esp.train"))
    X, y = X[: args.limit], y[: args.limit]
    X_test, y_test = read_conll(os.path.join(args.data, "esp.testb"))
    print(f"esp.train: {len(X):,} sentences; esp.testb: {len(X_test):,}")

    pipe = make_pipeline(
        SequenceFeaturizer(unit_offsets=(-1, 0, 1), ngram_offsets=((-1, 0), (0, 1)),
                           min_freq=1),
        LinearChainCRF(),
    )
    search = GridSearchCV(pipe, {"linearchaincrf__c2": args.c2},
                          scoring=make_span_f1_scorer("BIO"), cv=KFold(args.folds),
                          n_jobs=args.n_jobs, refit=True)
    t = time.perf_counter()
    search.fit(X, y)
    print(f"search: {len(args.c2)} values x {args.folds} folds in "
          f"{time.perf_counter() - t:.0f} s (n_jobs={args.n_jobs})")
    res = search.cv_results_
    for c2, m, s in zip(args.c2, res["mean_test_score"], res["std_test_score"]):
        print(f"  c2={c2:<6g} span F1 {m:.4f} +- {s:.4f}")
    best = search.best_estimator_
    pred = best.predict(X_test)
    print(f"best c2={search.best_params_['linearchaincrf__c2']}; refit model on esp.testb:")
    print(span_classification_report(y_test, pred, scheme="BIO"))

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot)")
        return
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.errorbar(args.c2, res["mean_test_score"], yerr=res["std_test_score"], marker="o")
    ax.set_xscale("log")
    ax.set_xlabel("c2")
    ax.set_ylabel(f"{args.folds}-fold span F1")
    ax.set_title("CoNLL-2002 Spanish NER")
    fig.tight_layout()
    fig.savefig(args.plot, dpi=120)
    print(f"plot saved to {args.plot}")


if __name__ == "__main__":
    main()
