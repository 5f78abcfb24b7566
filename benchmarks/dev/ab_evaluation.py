"""Time one objective evaluation (loss + gradient) of two checkouts of skcrf
on the same problems, alternating, each in its own process: an A/B test of a
kernel change.

    python benchmarks/dev/ab_evaluation.py /path/to/checkout_A /path/to/checkout_B \
        --data ../shared/data/conll2002 [--problems conll2002 sxu synthetic22]

(``sxu``: the SIGHAN 2008 SXU training text with the ``bench_sxu.py``
features, read from ``--sxu-data``.)
"""

import argparse
import json
import os
import subprocess
import sys
from datetime import date

HERE = os.path.dirname(os.path.abspath(__file__))


def child(problem, threads, data):
    import time

    import numpy as np

    sys.path[:0] = [os.path.join(HERE, ".."), os.path.join(HERE, "..", "claims")]
    from _common import skcrf_module
    from ab_inprocess import load_problem

    build_layout = skcrf_module("skcrf", "layout").build_layout
    count_pairs = skcrf_module("skcrf", "layout").count_pairs
    CRFLoss = skcrf_module("skcrf", "loss").CRFLoss

    # (``data`` is the problem's own path: --sxu-data for sxu)
    S, ytr = load_problem(problem, data, data)
    flat = np.concatenate([np.asarray(s) for s in ytr])
    classes, yi = np.unique(flat, return_inverse=True)
    yi = yi.astype(np.int32).reshape(-1)
    arrays, w = S.kernel_arrays(), np.ones(len(S))
    counts = count_pairs(arrays, yi, w, classes.size, S.n_features)
    layout = build_layout(counts, all_possible_transitions=False, start_end=False)
    theta = np.random.default_rng(0).normal(scale=0.1, size=layout.n_params)
    loss = CRFLoss(arrays, yi, w, layout, counts, n_threads=threads)
    loss(theta)
    times, cpu = [], []
    for _ in range(9):
        t, c = time.perf_counter(), time.process_time()
        f, _ = loss(theta)
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return {"median_s": float(np.median(times)), "median_cpu_s": float(np.median(cpu)),
            "f": f}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkouts", nargs="*")
    ap.add_argument("--data", default=os.path.join(HERE, "..", "..", "..", "shared", "data",
                                                    "conll2002"))
    ap.add_argument("--sxu-data", default=os.path.join(HERE, "..", "..", "..", "shared", "data",
                                                        "sighan2008_sxu"))
    ap.add_argument("--problems", nargs="+", default=["conll2002", "synthetic22"],
                    choices=["conll2002", "sxu", "synthetic22"])
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--child", nargs=2, default=None)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), args.data)))
        return
    sys.path.insert(0, os.path.join(HERE, ".."))
    from _common import machine

    print(f"# one evaluation, median of 9 in a process, best over rounds, A/B alternating "
          f"(wall time, and CPU time of all threads) — {date.today()} — {machine()}")
    print("| problem | threads | " + " | ".join(os.path.basename(c.rstrip("/")) or c
                                              for c in args.checkouts) + " |")
    print("|---|---|" + "---|" * len(args.checkouts), flush=True)
    for problem in args.problems:
        data = args.sxu_data if problem == "sxu" else args.data
        for threads in args.threads:
            best = {c: [] for c in args.checkouts}
            cpu = {c: [] for c in args.checkouts}
            for _ in range(args.rounds):
                for c in args.checkouts:
                    env = dict(os.environ, PYTHONPATH=os.path.abspath(c))
                    out = subprocess.run(
                        [sys.executable, os.path.abspath(__file__), "--child", problem,
                         str(threads), "--data", data],
                        capture_output=True, text=True, env=env, cwd=HERE)
                    if out.returncode:
                        sys.exit(out.stderr)
                    res = json.loads(out.stdout.splitlines()[-1])
                    best[c].append(res["median_s"])
                    cpu[c].append(res["median_cpu_s"])
            print(f"| {problem} | {threads} | " + " | ".join(
                f"{min(best[c]) * 1e3:.1f} ms ({min(cpu[c]) * 1e3:.0f} ms CPU)"
                for c in args.checkouts) + " |", flush=True)


if __name__ == "__main__":
    main()
