"""How close the default stopping rule gets to the optimum on CoNLL-2002 Spanish.

Fits the bench_conll2002.py problem (tutorial features, c2=1, no start/end
weights, seen transitions only) with tol=1e-12 and prints the objective after
selected iterations relative to that optimum.

    python benchmarks/tuning/conll2002_optimum.py --data ../shared/data/conll2002
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import DEFAULT_DATA, load_conll2002, vectorise

from skcrf import LinearChainCRF


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(DEFAULT_DATA, "conll2002"))
    args = ap.parse_args()
    Xtr, ytr, Xte, _ = load_conll2002(args.data)
    S, _ = vectorise(Xtr, Xte)
    t = time.perf_counter()
    crf = LinearChainCRF(all_possible_transitions=False, start_end_transitions=False,
                         n_jobs=-1, tol=1e-12, max_iter=4000).fit(S, ytr)
    print(f"tight optimum {crf.objective_!r} after {crf.n_iter_} iterations, "
          f"{time.perf_counter() - t:.0f} s")
    for k in (100, 150, 200, 250, 290, 300, 400, 600):
        if k <= len(crf.loss_curve_):
            f = crf.loss_curve_[k - 1]
            gap = (f - crf.objective_) / crf.objective_
            print(f"iteration {k}: {f:.4f}  relative gap {gap:.2e}")


if __name__ == "__main__":
    main()
