"""scipy's L-BFGS-B against skcrf's own two-loop L-BFGS with a backtracking
line search (the OWL-QN code of ``skcrf._optimize`` run with c1 = 0), fit to
convergence on CoNLL-2002 (the ``bench_conll2002.py`` problem: tutorial
features, c2=1, seen transitions only, no start/end weights).

The own optimiser would need less memory than scipy's workspace; this
measures whether its iterations are as good.

    python benchmarks/bench_own_lbfgs.py --data ../shared/data/conll2002
"""

import argparse
import json
import os
import subprocess
import sys
from datetime import date

from _common import DEFAULT_DATA, load_conll2002, machine, timed_fit, vectorise


def child(which, n_jobs, data):
    import skcrf._crf as C
    from skcrf import LinearChainCRF
    from skcrf._optimize import minimize_owlqn

    if which == "own":
        C.minimize_lbfgs = lambda fun, theta0, **kw: minimize_owlqn(fun, theta0, c1=0.0, **kw)
    Xtr, ytr, Xte, _ = load_conll2002(data)
    S, _ = vectorise(Xtr, Xte)
    LinearChainCRF(max_iter=2).fit(S[:20], ytr[:20])
    model = LinearChainCRF(c2=1.0, all_possible_transitions=False,
                           start_end_transitions=False, n_jobs=n_jobs)
    out = timed_fit(model, S, ytr)
    out.update(which=which, n_jobs=n_jobs, n_iter=model.n_iter_, objective=model.objective_,
               reason=model.stop_reason_)
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.path.join(DEFAULT_DATA, "conll2002"))
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--child", default=None)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.n_jobs, args.data)
        return
    print(f"# L-BFGS-B (scipy) vs own L-BFGS with backtracking, CoNLL-2002, c2=1, "
          f"n_jobs={args.n_jobs} — {date.today()} — {machine()}")
    print("| optimiser | fit s | iterations | final objective | stop |\n|---|---|---|---|---|")
    for which in ("scipy", "own"):
        res = subprocess.run([sys.executable, __file__, "--child", which, "--data", args.data,
                              "--n-jobs", str(args.n_jobs)], capture_output=True, text=True,
                             check=True)
        r = json.loads(res.stdout.strip().splitlines()[-1])
        print(f"| {which} | {r['fit_s']:.1f} | {r['n_iter']} | {r['objective']:.2f} | "
              f"{r['reason']} |", flush=True)


if __name__ == "__main__":
    main()
