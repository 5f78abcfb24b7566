"""Compile work of the first run's helper workloads, A/B: how long the
kernels of a default WordSegmenter's fit (``segmenter-fit``) and predict
(``segmenter-predict``) take to compile in an empty Numba cache, for one or
more checkouts, alternating (the VM's speed drifts: compare runs close in
time).

    python benchmarks/dev/compile_workloads.py /path/to/A /path/to/B [--reps 3]
        [--workloads segmenter-fit segmenter-predict] [--n-jobs 1]

Each run is a fresh process on a fresh ``NUMBA_CACHE_DIR`` running
``skcrf._warm_up``'s workload (what ``skcrf demo``'s helper processes run,
then what the process waiting for the helper compiles meanwhile, when the
workload names that: the fit's optimiser kernels),
with a listener on Numba's compile events: it prints the wall time, the
summed compile time of the top-level compilations and their number, and the
kernels compiled (``--kernels``).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, time
from numba.core import event
names, stack, total = [], [], [0.0]
class Listener(event.Listener):
    def on_start(self, ev):
        stack.append(time.perf_counter())
    def on_end(self, ev):
        t0 = stack.pop()
        if not stack:                 # a top-level compilation (with its callees)
            total[0] += time.perf_counter() - t0
        f = ev.data["dispatcher"].py_func
        names.append(f.__module__ + "." + f.__qualname__)
event.register("numba:compile", Listener())
from skcrf import _warm_up
t = time.perf_counter()
work = _warm_up.WORKLOADS[sys.argv[1]]
# (a workload with what the waiting process compiles meanwhile: both, in turn)
for part in work if isinstance(work, tuple) else (work,):
    if part is not None:
        part(int(sys.argv[2]))
print(json.dumps({"wall": time.perf_counter() - t, "compile": total[0],
                  "n": len(names), "kernels": sorted(set(names))}))
"""


def run(checkout, workload, n_jobs):
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache,
                   PYTHONPATH=os.path.abspath(checkout))
        res = subprocess.run([sys.executable, "-c", CHILD, workload, str(n_jobs)], env=env,
                             capture_output=True, text=True, cwd=cache)
    if res.returncode:
        raise SystemExit(res.stderr)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkouts", nargs="+")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--workloads", nargs="+", default=["segmenter-fit", "segmenter-predict"])
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--kernels", action="store_true", help="list the kernels compiled")
    args = ap.parse_args()
    for workload in args.workloads:
        print(f"== {workload} (n_jobs={args.n_jobs}), empty cache, {args.reps} runs each")
        results = {c: [] for c in args.checkouts}
        for _ in range(args.reps):
            for c in args.checkouts:
                r = run(c, workload, args.n_jobs)
                results[c].append(r)
                print(f"  {c}: wall {r['wall']:.1f} s, compiling {r['compile']:.1f} s, "
                      f"{r['n']} compilations", flush=True)
        for c, rs in results.items():
            walls = sorted(r["wall"] for r in rs)
            print(f"{c}: median wall {walls[len(walls) // 2]:.1f} s "
                  f"(min {walls[0]:.1f}), {rs[0]['n']} compilations")
            if args.kernels:
                print("   " + "\n   ".join(rs[0]["kernels"]))


if __name__ == "__main__":
    main()
