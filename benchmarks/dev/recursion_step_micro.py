"""Time of the lane forward and backward recursions per position, by label count,
with the steps four labels at a time (``_lane_step``) or one label at a time.

``--blocked-from N`` sets ``skcrf._kernels.lane_forward_backward._BLOCKED_STEP``
before anything compiles (a module constant that Numba freezes into the code,
so each setting runs in its own process with its own empty Numba cache):

    for n in 1000 4 1000 4; do NUMBA_CACHE_DIR=$(mktemp -d) \\
        python benchmarks/dev/recursion_step_micro.py --blocked-from $n; done

Prints nanoseconds per position of eight sequences side by side (one lane
batch of 30 positions, forward then backward, repeated), best of 7.
"""

import argparse
import time

import numpy as np

from skcrf._kernels import lane_forward_backward as F

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--blocked-from", type=int, required=True)
ap.add_argument("--labels", default="4,6,8,9,10,11,12,13,14,15,16,17,24,42,59")
args = ap.parse_args()
F._BLOCKED_STEP = args.blocked_from

from numba import njit  # noqa: E402

from skcrf._kernels.lanes import N_LANES  # noqa: E402


@njit(cache=False, nogil=True, error_model="numpy")
def _both(expA, es, ee, lb, T, L, reps):
    U0 = lb[0].copy()
    for _ in range(reps):
        lb[0][:] = U0     # (the backward pass rewrites the exp-emissions)
        _, _, _, _, _, s = F._lane_forward(expA, es, ee, lb, T, L)
        F._lane_backward(expA, ee, s, lb, T, L)


out = []
for L in (int(x) for x in args.labels.split(",")):
    T = 30
    reps = max(1, 20_000_000 // (T * L * L))
    rng = np.random.default_rng(0)
    expA, es, ee = rng.random((L, L)), rng.random(L), rng.random(L)
    lb = F._lane_buffers(T, L)
    lb[0][:] = rng.random(lb[0].size)
    lb[6][:] = 0.0                      # underflow watch: every cell
    lb[7][:] = 0.0
    lb[7][:N_LANES] = 1.0               # every lane starts at position 0
    lb[8][:] = T
    _both(expA, es, ee, lb, T, L, 1)
    best = np.inf
    for _ in range(7):
        t = time.perf_counter()
        _both(expA, es, ee, lb, T, L, reps)
        best = min(best, time.perf_counter() - t)
    out.append(f"{L}:{best / (reps * T) * 1e9:.0f}")
print(f"blocked from {args.blocked_from} labels:", " ".join(out),
      "(labels:ns per position, forward + backward)")
