"""What scipy's L-BFGS-B itself costs per iteration, by problem size.

The optimiser is serial and runs between objective evaluations, so on a
problem with millions of parameters it bounds what more threads can gain
(Amdahl). Measured on a separable quadratic (its evaluation is a few
vectorised NumPy operations, timed and subtracted), for the parameter counts
of the CoNLL-2002 and SXU benchmarks, with ``maxcor=10`` (what LinearChainCRF
uses) and ``maxcor=6`` (CRFsuite's default memory).

    python benchmarks/lbfgsb_overhead.py
"""

import time
from datetime import date

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from _common import machine


def per_iteration(n, maxcor, iters=60):
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

    with threadpool_limits(limits=1, user_api="blas"):
        t = time.perf_counter()
        res = minimize(fg, np.zeros(n), jac=True, method="L-BFGS-B",
                       options=dict(maxiter=iters, maxcor=maxcor, ftol=1e-15, gtol=1e-12))
        total = time.perf_counter() - t
    return (total - spent[0]) / res.nit


def main():
    print(f"# scipy L-BFGS-B time per iteration outside the objective — {date.today()} — "
          f"{machine()}")
    print("| parameters | maxcor=10 ms/iter | maxcor=6 ms/iter |\n|---|---|---|")
    for name, n in (("CoNLL-2002", 96_080), ("SXU", 1_243_531), ("", 10_000_000)):
        a, b = per_iteration(n, 10), per_iteration(n, 6)
        print(f"| {n:,} {('(' + name + ')') if name else ''} | {a * 1e3:.1f} | {b * 1e3:.1f} |")


if __name__ == "__main__":
    main()
