"""L-BFGS memory (``maxcor``): 10 against CRFsuite's 6, fit to convergence.

Fewer memories cost less per iteration (scipy's serial step, and 8 bytes per
parameter and memory twice over) but may need more iterations. Measured on
CoNLL-2002 (the ``bench_conll2002.py`` problem: tutorial features, c2=1, seen
transitions only, no start/end weights), each setting in its own process:
iterations, evaluations, fit time, final objective, memory ``fit`` adds.

    python benchmarks/tuning/bench_lbfgs_memories.py --data ../shared/data/conll2002
"""

import argparse
import json
import os
import sys
from datetime import date

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import DEFAULT_DATA, load_conll2002, machine, run_json_child, timed_fit, vectorise


def child(m, args):
    from skcrf import LinearChainCRF

    Xtr, ytr, Xte, _ = load_conll2002(args.data)
    S, _ = vectorise(Xtr, Xte)
    del Xtr, Xte

    class CRF(LinearChainCRF):
        def _optimizer_options(self):
            return dict(super()._optimizer_options(), m=m)

    CRF(max_iter=2).fit(S[:20], ytr[:20])
    model = CRF(c2=1.0, all_possible_transitions=False, start_end_transitions=False,
                n_jobs=args.n_jobs)
    out = timed_fit(model, S, ytr)
    out.update(n_iter=model.n_iter_, objective=model.objective_,
               added_mb=out["fit_peak_rss_mb"] - out["rss_before_fit_mb"])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(DEFAULT_DATA, "conll2002"))
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--child", type=int, default=None)
    args = ap.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args)))
        return
    print(f"# L-BFGS memories on CoNLL-2002, c2=1, n_jobs={args.n_jobs} — {date.today()} — "
          f"{machine()}")
    print("| maxcor | iterations | fit s | s / iteration | objective | fit adds MB |\n"
          "|---|---|---|---|---|---|", flush=True)
    for m in (10, 6):
        cmd = [sys.executable, os.path.abspath(__file__), "--child", str(m), "--data", args.data,
               "--n-jobs", str(args.n_jobs)]
        r = run_json_child(cmd)
        print(f"| {m} | {r['n_iter']} | {r['fit_s']:.1f} | {r['fit_s'] / r['n_iter']:.3f} | "
              f"{r['objective']:.4f} | {r['added_mb']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
