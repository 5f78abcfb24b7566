"""A cold first use, A/B: checkouts alternating, a fresh Numba cache per run.

Two measurements (the VM's speed drifts by up to ~1.4x within hours: only runs
close in time compare):

``--demo``: ``python -m skcrf demo`` in a fresh process and an empty
``NUMBA_CACHE_DIR`` (what README's first command does on a fresh install):
wall and user CPU time (the helper processes' included), and the scores line.

``--labels 9 20``: a first fit of a synthetic problem of that many labels (300
sequences of 1-14 tokens, 40 binary features, 5 iterations), then ``predict``
and ``predict_marginals`` on it, in an empty cache: what a user's first fit of
a new shape compiles, beyond the demo's.

    python benchmarks/dev/cold_first_use.py /path/to/A /path/to/B --demo --reps 4
    python benchmarks/dev/cold_first_use.py /path/to/A /path/to/B --labels 9 20
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

SHAPE = r"""
import sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")          # (5 iterations do not converge)
from skcrf import LinearChainCRF
L = int(sys.argv[1])
rng = np.random.default_rng(0)
X = [(rng.random((int(T), 40)) < 0.2) * 1.0 for T in rng.integers(1, 15, 300)]
y = [[str(v) for v in rng.integers(0, L, len(x))] for x in X]
t = time.perf_counter()
m = LinearChainCRF(max_iter=5).fit(X, y)
fit = time.perf_counter() - t
t = time.perf_counter()
m.predict(X)
m.predict_marginals(X)
print(f"{fit:.1f} {time.perf_counter() - t:.1f}")
"""


def _run(checkout, args):
    """Run ``python args`` with ``checkout`` first on the path, in a fresh
    cache; returns (stdout, wall s, user CPU s of it and its children)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache,
                   PYTHONPATH=os.path.abspath(checkout))
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
        t = time.perf_counter()
        res = subprocess.run([sys.executable, *args], env=env, capture_output=True,
                             text=True, cwd=cache)
        wall = time.perf_counter() - t
        user = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before
    if res.returncode:
        raise SystemExit(res.stderr)
    return res.stdout, wall, user


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkouts", nargs="+")
    ap.add_argument("--demo", action="store_true", help="time a cold `skcrf demo`")
    ap.add_argument("--labels", type=int, nargs="*", default=[],
                    help="time a cold first fit + predict of this many labels")
    ap.add_argument("--reps", type=int, default=2)
    args = ap.parse_args()
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    if args.demo:
        print("== cold `python -m skcrf demo` (fresh cache): wall s, user CPU s")
        for _ in range(args.reps):
            for c in args.checkouts:
                out, wall, user = _run(c, ["-m", "skcrf", "demo"])
                scores = next((line for line in out.splitlines()
                               if line.startswith("Held-out")), "")
                print(f"  {time.strftime('%H:%M:%S')} {c}: {wall:.2f} s, user {user:.1f} s"
                      f"  [{scores[scores.find('F1'):scores.find('OOV rate')].strip()}]",
                      flush=True)
    for L in args.labels:
        print(f"== {L} labels, fresh cache: cold 5-iteration fit s, then predict + "
              "predict_marginals s")
        for _ in range(args.reps):
            for c in args.checkouts:
                out, wall, _ = _run(c, ["-c", SHAPE, str(L)])
                fit, decode = out.split()
                print(f"  {c}: fit {fit} s, predict + marginals {decode} s", flush=True)


if __name__ == "__main__":
    main()
