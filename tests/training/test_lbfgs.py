"""The compact L-BFGS history: its direction is the textbook two-loop
recursion's (Nocedal & Wright, algorithm 7.4) on the stored pairs, in float64
and float32 storage, serial and threaded, across the ring's wrap-around; and
the optimiser built on it follows scipy's L-BFGS-B iterate for iterate."""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize

from skcrf._training.lbfgs import _BLOCK, History
from skcrf._training.optimize import minimize_lbfgs


def two_loop(pairs, v):
    """-H v for pairs [(s, y), ...] oldest first; -v without pairs."""
    q = -np.asarray(v, dtype=np.float64)
    alpha = []
    for s, y in reversed(pairs):
        a = s.dot(q) / s.dot(y)
        alpha.append(a)
        q -= a * y
    if pairs:
        s, y = pairs[-1]
        q *= s.dot(y) / y.dot(y)
    for (s, y), a in zip(pairs, reversed(alpha)):
        b = y.dot(q) / s.dot(y)
        q += s * (a - b)
    return q


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("n", [7, 2 * _BLOCK + 13])
def test_direction_is_the_two_loop_recursion(dtype, n_threads, n):
    rng = np.random.default_rng(n + n_threads)
    m = 3
    h = History(n, m, n_threads=n_threads, dtype=dtype)
    x = rng.normal(size=n)
    g = rng.normal(size=n)
    h.refresh(g)
    d = np.empty(n)
    assert h.direction(g, d) == pytest.approx((-g.dot(g), np.linalg.norm(g)))
    np.testing.assert_array_equal(d, -g)
    pairs = []
    for _ in range(6):                # more pairs than m: the ring wraps around
        x_new = x + 0.1 * rng.normal(size=n)
        # a convex quadratic's gradient change keeps the curvature positive
        g_new = g + 2.0 * (x_new - x) + 0.01 * rng.normal(size=n)
        h.update(x_new, x, g_new, g, g_new)
        s = (x_new - x).astype(dtype).astype(np.float64)
        y = (g_new - g).astype(dtype).astype(np.float64)
        pairs = (pairs + [(s, y)])[-m:]
        x, g = x_new, g_new
        vd, d_norm = h.direction(g, d)
        ref = two_loop(pairs, g)
        np.testing.assert_allclose(d, ref, rtol=1e-9, atol=1e-12 * np.abs(ref).max())
        assert vd == pytest.approx(g.dot(ref), rel=1e-9)
        assert d_norm == pytest.approx(np.linalg.norm(ref), rel=1e-6)
    assert h.n_pairs == m


def test_skipped_pair_keeps_the_history_and_reset_forgets_it():
    rng = np.random.default_rng(1)
    n = 50
    h = History(n, 4, dtype=np.float64)
    x, g = rng.normal(size=n), rng.normal(size=n)
    x1, g1 = x + 0.1, g + 0.3
    h.update(x1, x, g1, g, g1)
    before = [(h.S[r].copy(), h.Y[r].copy()) for r in h.order]
    x2, g2 = x1 + 0.1, g1 - 5.0       # negative curvature: the caller skips it
    h.update(x2, x1, g2, g1, g2, store=False)
    assert h.n_pairs == 1
    np.testing.assert_array_equal(h.S[h.order[0]], before[0][0])
    d = np.empty(n)
    h.direction(g2, d)
    np.testing.assert_allclose(d, two_loop([(x1 - x, g1 - g)], g2), rtol=1e-12)
    h.reset()
    h.direction(g2, d)
    np.testing.assert_array_equal(d, -g2)


def logistic(seed=0, n=300, rows=400):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(rows, n))
    b = rng.integers(0, 2, rows) * 2 - 1

    def fun(x):
        z = A @ x * b
        return (float(np.logaddexp(0, -z).sum() + 0.01 * x @ x),
                A.T @ (-b / (1 + np.exp(z))) + 0.02 * x)
    return fun, n


@pytest.mark.parametrize("n_threads", [1, 2])
def test_iterates_are_scipys_lbfgsb(n_threads):
    """Same directions, same line search, same constants: with float64 history
    the iterates are L-BFGS-B's to rounding, iteration for iteration."""
    fun, n = logistic()
    for k in (1, 5, 40):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = minimize(fun, np.zeros(n), jac=True, method="L-BFGS-B",
                           options=dict(maxiter=k, maxcor=10, ftol=1e-15, gtol=1e-10))
            res = minimize_lbfgs(fun, np.zeros(n), max_iter=k, tol=0.0,
                                 history_dtype=np.float64, n_threads=n_threads)
        assert res.n_iter == ref.nit == k
        assert res.n_evals == ref.nfev
        np.testing.assert_allclose(res.x, ref.x, rtol=1e-9, atol=1e-11)
        assert res.fun == pytest.approx(ref.fun, rel=1e-12)


def test_float32_history_reaches_the_same_optimum():
    fun, n = logistic(seed=3)
    ref = minimize(fun, np.zeros(n), jac=True, method="L-BFGS-B",
                   options=dict(maxiter=2000, maxcor=10, ftol=1e-15, gtol=1e-9))
    res = minimize_lbfgs(fun, np.zeros(n), max_iter=2000, tol=1e-12)
    assert res.fun == pytest.approx(ref.fun, rel=1e-10)
    np.testing.assert_allclose(res.x, ref.x, atol=1e-4)
