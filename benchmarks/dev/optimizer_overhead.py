"""What the optimiser itself costs per iteration, by problem size: skcrf's
L-BFGS (compiled, threaded, float32 history) against scipy's L-BFGS-B.

The optimiser runs between objective evaluations, so on a problem with
millions of parameters its serial part bounds what more threads can gain
(Amdahl). Measured on a separable quadratic (its evaluation is a few
vectorised NumPy operations, timed and subtracted), for the parameter counts
of the CoNLL-2002 and SXU benchmarks and 10^7, with 10 correction pairs
(what LinearChainCRF uses); skcrf with 1 and 2 threads. Also the bytes per
parameter each optimiser allocates (tracemalloc peak above the input).

    python benchmarks/dev/optimizer_overhead.py
"""

import os
import sys
import time
import tracemalloc
from datetime import date

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _common import machine


def problem(n):
    rng = np.random.default_rng(0)
    d = rng.uniform(1.0, 100.0, n)
    b = rng.normal(size=n)
    spent = [0.0]

    def fg(x):
        t = time.perf_counter()
        r = x - b
        g = d * r
        f = 0.5 * float(np.dot(g, r))
        spent[0] += time.perf_counter() - t
        return f, g
    return fg, spent


def per_iteration(n, which, n_threads=1, iters=60):
    """(ms per iteration outside the objective, bytes per parameter allocated)."""
    import warnings

    from skcrf._training.optimize import minimize_lbfgs

    fg, spent = problem(n)
    x0 = np.zeros(n)
    if which == "skcrf":   # compile / load the kernels first
        minimize_lbfgs(problem(4000)[0], np.zeros(4000), max_iter=3, tol=0.0,
                       n_threads=n_threads)
    tracemalloc.start()
    with threadpool_limits(limits=1, user_api="blas"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        if which == "scipy":
            res = minimize(fg, x0, jac=True, method="L-BFGS-B",
                           options=dict(maxiter=iters, maxcor=10, ftol=1e-15, gtol=1e-12))
            nit = res.nit
        else:
            res = minimize_lbfgs(fg, x0, max_iter=iters, tol=0.0, n_threads=n_threads)
            nit = res.n_iter
        total = time.perf_counter() - t
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return (total - spent[0]) / nit * 1e3, peak / n


def main():
    print(f"# optimiser time per iteration outside the objective, 10 pairs — {date.today()} "
          f"— {machine()}")
    print("| parameters | scipy L-BFGS-B ms/iter | skcrf 1 thread | skcrf 2 threads | "
          "scipy bytes/param | skcrf bytes/param |\n|---|---|---|---|---|---|")
    for name, n in (("CoNLL-2002", 96_080), ("SXU", 1_243_531), ("", 10_000_000)):
        a, ma = per_iteration(n, "scipy")
        b, mb = per_iteration(n, "skcrf", 1)
        c, _ = per_iteration(n, "skcrf", 2)
        label = f"{n:,}" + (f" ({name})" if name else "")
        print(f"| {label} | {a:.1f} | {b:.1f} | {c:.1f} | {ma:.0f} | {mb:.0f} |", flush=True)


if __name__ == "__main__":
    main()
