"""Fit to convergence with two checkouts of skcrf, alternating, each fit in its
own process: an A/B test of a change to the optimiser or the objective.

Reports per fit: seconds, iterations, evaluations, final objective and the
memory the fit adds above its starting RSS (peak reset just before ``fit``).
The problems are those of ``bench_conll2002.py`` (tutorial features, c2=1,
seen transitions, no start/end weights), ``bench_sxu.py`` (default features,
dictionary of words seen >= 5 times) and ``bench_memory.py``'s synthetic
22-label corpus (40 iterations, ``tol=0``).

    python benchmarks/dev/ab_fit.py /path/to/checkout_A /path/to/checkout_B \\
        --problem conll2002 --data ../shared/data/conll2002 --n-jobs 1 2 --rounds 2
"""

import argparse
import json
import os
import subprocess
import sys
from datetime import date

HERE = os.path.dirname(os.path.abspath(__file__))


def child(problem, n_jobs, data):
    import warnings

    import numpy as np
    from _common import timed_fit

    max_iter, tol = 100_000, 1e-5
    if problem == "conll2002":
        from _common import load_conll2002, vectorise

        Xtr, ytr, Xte, _ = load_conll2002(data)
        S, _ = vectorise(Xtr, Xte)
    elif problem == "sxu":
        from bench_sxu import featurise

        _, S, ytr, _, _ = featurise(data, None)
    else:
        from bench_memory import SYNTH
        from synthetic import make_corpus

        S, ytr = make_corpus(**SYNTH)
        max_iter, tol = 40, 0.0
    from skcrf import LinearChainCRF

    LinearChainCRF(max_iter=2, n_jobs=n_jobs).fit([np.eye(2)] * 2, [["a", "b"]] * 2)
    model = LinearChainCRF(c2=1.0, max_iter=max_iter, tol=tol, n_jobs=n_jobs,
                           all_possible_transitions=False, start_end_transitions=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = timed_fit(model, S, ytr)
    out.update(n_iter=model.n_iter_, n_evals=model.history_[-1]["n_evals"],
               objective=model.objective_, added_mb=out["fit_peak_rss_mb"] -
               out["rss_before_fit_mb"], n_params=model.n_params_)
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkouts", nargs="*", help="two checkouts: A and B")
    ap.add_argument("--problem", choices=["conll2002", "sxu", "synthetic22"],
                    default="conll2002")
    ap.add_argument("--data", default=None)
    ap.add_argument("--n-jobs", type=int, nargs="+", default=[1])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--child", nargs=3, default=None)
    args = ap.parse_args()
    if args.child:
        checkout, problem, n_jobs = args.child
        sys.path[:0] = [checkout, os.path.join(HERE, ".."), os.path.join(HERE, "..", "claims")]
        child(problem, int(n_jobs), args.data)
        return
    if len(args.checkouts) != 2:
        ap.error("give two checkouts")
    sys.path.insert(0, os.path.join(HERE, ".."))
    from _common import DEFAULT_DATA, machine

    data = args.data or os.path.join(
        DEFAULT_DATA, {"sxu": "sighan2008_sxu"}.get(args.problem, "conll2002"))
    print(f"# fit A/B, {args.problem}, c2=1 — {date.today()} — {machine()}\n"
          f"# A = {args.checkouts[0]}\n# B = {args.checkouts[1]}")
    print("| round | n_jobs | checkout | fit s | iterations | evaluations | objective | "
          "added MB |\n|---|---|---|---|---|---|---|---|")
    for r in range(args.rounds):
        for n_jobs in args.n_jobs:
            for name, checkout in zip("AB", args.checkouts):
                res = subprocess.run(
                    [sys.executable, __file__, "--data", data, "--child",
                     os.path.abspath(checkout), args.problem, str(n_jobs)],
                    capture_output=True, text=True)
                if res.returncode:
                    sys.stderr.write(res.stderr)
                    raise SystemExit("child failed")
                o = json.loads(res.stdout.strip().splitlines()[-1])
                print(f"| {r + 1} | {n_jobs} | {name} | {o['fit_s']:.1f} | {o['n_iter']} | "
                      f"{o['n_evals']} | {o['objective']:.4f} | {o['added_mb']:.0f} |",
                      flush=True)


if __name__ == "__main__":
    main()
