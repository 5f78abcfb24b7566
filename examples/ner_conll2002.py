"""Named-entity recognition on CoNLL-2002 Spanish with BIO constraints.
====================================================================

SequenceFeaturizer on (word, POS) tokens + LinearChainCRF(constraints="BIO"):
prints the span report on esp.testb, the 5 best label sequences of one test
sentence with their probabilities, and the learned transition weights (saved
as a heatmap when matplotlib is installed).

::

    python examples/ner_conll2002.py --data ../shared/data/conll2002 [--limit 3000]
"""

import argparse
import os
import time

import numpy as np
from sklearn.pipeline import make_pipeline

from skcrf import LinearChainCRF, SequenceFeaturizer, repair_tags
from skcrf.datasets import read_conll
from skcrf.metrics import span_classification_report


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                   "shared", "data", "conll2002"))
    ap.add_argument("--c2", type=float, default=1.0)
    ap.add_argument("--n-jobs", type=int, default=-1)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--plot", default="ner_transitions.png")
    args = ap.parse_args()

    X, y = read_conll(os.path.join(args.data, "esp.train"))
    X, y = X[: args.limit], [repair_tags(t) for t in y[: args.limit]]
    X_test, y_test = read_conll(os.path.join(args.data, "esp.testb"))
    pipe = make_pipeline(
        SequenceFeaturizer(unit_offsets=(-1, 0, 1), ngram_offsets=((-1, 0), (0, 1))),
        LinearChainCRF(c2=args.c2, constraints="BIO", n_jobs=args.n_jobs),
    )
    t = time.perf_counter()
    pipe.fit(X, y)
    crf = pipe[-1]
    print(f"trained on {len(X):,} sentences in {time.perf_counter() - t:.1f} s "
          f"({crf.n_iter_} iterations, {pipe[0].n_features_out_:,} features)")
    print(span_classification_report(y_test, pipe.predict(X_test), scheme="BIO"))

    sent = next(s for s, tags in zip(X_test, y_test)
                if 6 <= len(s) <= 14 and sum(t != "O" for t in tags) >= 2)
    words = [w for w, _ in sent]
    print("5 best analyses of:", " ".join(words))
    for labels, lp in pipe[-1].predict_topk(pipe[0].transform([sent]), k=5)[0]:
        ents = [f"{w}/{t}" for w, t in zip(words, labels) if t != "O"]
        print(f"  p={np.exp(lp):.3f}  {' '.join(ents) or '(no entity)'}")

    labels = crf.classes_.tolist()
    table = crf.transitions_
    print("transition weights (row: from, column: to; -inf = forbidden):")
    print(" " * 8 + "".join(f"{b:>8}" for b in labels))
    for a in labels:
        print(f"{a:>8}" + "".join(f"{table[a][b]:8.2f}" for b in labels))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no heatmap)")
        return
    M = np.where(np.isfinite(crf.transition_coef_), crf.transition_coef_, np.nan)
    fig, ax = plt.subplots(figsize=(6, 5))
    im = ax.imshow(M, cmap="coolwarm")
    ax.set_xticks(range(len(labels)), labels, rotation=90)
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlabel("to")
    ax.set_ylabel("from (blank: forbidden by BIO)")
    fig.colorbar(im)
    fig.tight_layout()
    fig.savefig(args.plot, dpi=120)
    print(f"heatmap saved to {args.plot}")


if __name__ == "__main__":
    main()
