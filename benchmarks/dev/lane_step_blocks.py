"""A step of the lane forward recursion with four labels per block (the
package's ``_lane_step``) against eight (eight independent chains of
multiply-adds sharing each load of x[i]); not used by the package.

    python benchmarks/dev/lane_step_blocks.py

Prints nanoseconds per step of eight sequences side by side (30 positions,
best of 7 x 200 repeats) by label count, and whether both give the same bits.
"""

import time

import numpy as np
from numba import njit

from skcrf._kernels._jit import _JIT
from skcrf._kernels.lane_forward_backward import _lane_step
from skcrf._kernels.lanes import N_LANES, vfma, vload, vsplat, vstore

# step8 compiled as the package compiles its kernels (but not cached: a script)
J = dict(_JIT, cache=False)
step4 = _lane_step


@njit(**J)
def step8(x8, x0, M, y8, y0, L):
    NL = N_LANES
    for jb in range(0, L, 8):
        j = min(jb, L - 8)
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = vsplat(0.0)
        for i in range(L):
            x = vload(x8, x0 + i * NL)
            a0 = vfma(x, vsplat(M[i, j]), a0)
            a1 = vfma(x, vsplat(M[i, j + 1]), a1)
            a2 = vfma(x, vsplat(M[i, j + 2]), a2)
            a3 = vfma(x, vsplat(M[i, j + 3]), a3)
            a4 = vfma(x, vsplat(M[i, j + 4]), a4)
            a5 = vfma(x, vsplat(M[i, j + 5]), a5)
            a6 = vfma(x, vsplat(M[i, j + 6]), a6)
            a7 = vfma(x, vsplat(M[i, j + 7]), a7)
        vstore(y8, y0 + j * NL, a0)
        vstore(y8, y0 + (j + 1) * NL, a1)
        vstore(y8, y0 + (j + 2) * NL, a2)
        vstore(y8, y0 + (j + 3) * NL, a3)
        vstore(y8, y0 + (j + 4) * NL, a4)
        vstore(y8, y0 + (j + 5) * NL, a5)
        vstore(y8, y0 + (j + 6) * NL, a6)
        vstore(y8, y0 + (j + 7) * NL, a7)

@njit(**J)
def run(step, T, x8, M, L):
    for t in range(1, T):
        step(x8, (t - 1) * L * N_LANES, M, x8, t * L * N_LANES, L)

for L in (12, 17, 24, 42, 59, 100):
    T = 30
    rng = np.random.default_rng(0)
    M = rng.random((L, L)) / L
    res = {}
    x8c = rng.random(T * L * N_LANES)
    for name, st in (("4", step4), ("8", step8)):
        x8 = x8c.copy()
        run(st, T, x8, M, L)
        best = 1e9
        for _ in range(7):
            x8[:] = x8c
            t = time.perf_counter()
            for _ in range(200):
                run(st, T, x8, M, L)
            best = min(best, time.perf_counter() - t)
        res[name] = best / (200 * (T - 1)) * 1e9
        out = x8.copy()
        res[name + "_v"] = out
    same = np.array_equal(res["4_v"], res["8_v"])
    print(f"L={L}: ns per step: 4 labels per block {res['4']:.0f}, 8 labels per block "
          f"{res['8']:.0f} (x{res['8'] / res['4']:.2f}); same bits {same}")
