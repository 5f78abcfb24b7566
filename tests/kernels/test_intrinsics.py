"""The hand-written helpers the kernels use in place of libm / missing Numba features."""

from decimal import Decimal, getcontext

import numpy as np
import pytest
from numba import njit

from skcrf._kernels.intrinsics import exp_nonpositive, flat_view, prefetch_at, prefetch_row
from skcrf._kernels.lanes import N_LANES, vexp_nonpositive, vload, vstore


@njit(cache=False)
def _exp_all(x, out):
    for i in range(x.size):
        out[i] = exp_nonpositive(x[i])


@njit(cache=False, fastmath={"contract"})
def _exp_all_fused(x, out):
    # as the kernels compile it: multiply-adds fused (skcrf._kernels._JIT_EXP)
    for i in range(x.size):
        out[i] = exp_nonpositive(x[i])


def _exp_lanes(x, out):
    # the lane version, eight values at a time (as K._lane_posteriors runs it)
    n = -(-x.size // N_LANES) * N_LANES
    buf = np.zeros(n)
    buf[:x.size] = x
    _exp_lane_array(buf)
    out[:] = buf[:x.size]


@njit(cache=False)
def _exp_lane_array(buf):
    for k in range(0, buf.size, N_LANES):
        vstore(buf, k, vexp_nonpositive(vload(buf, k)))


@njit(cache=False)
def _row_sums_with_prefetch(M, rows, out):
    for k in range(rows.size):
        prefetch_row(M, rows[k])
        acc = 0.0
        for j in range(M.shape[1]):
            acc += M[rows[k], j]
        out[k] = acc


@njit(cache=False)
def _row_sums_with_line_hints(M, rows, out):
    # every line of each row hinted through the flat array, as the wide rows' passes do
    flat = M.reshape(-1)
    n = M.shape[1]
    for k in range(rows.size):
        for j in range(0, n, 8):
            prefetch_at(flat, rows[k] * n + j)
        prefetch_at(flat, rows[k] * n + n - 1)
        acc = 0.0
        for j in range(n):
            acc += M[rows[k], j]
        out[k] = acc


def _exact_exp(x):
    """exp(x) to well beyond double precision, as long doubles (or Decimals where long
    double is only a double): the oracle is the true value, not another libm's rounding
    of it (NumPy's own exp is only faithfully rounded and differs between CPUs)."""
    if np.finfo(np.longdouble).nmant >= 63:
        return np.exp(x.astype(np.longdouble))
    getcontext().prec = 40
    return np.array([Decimal(v).exp() for v in x.tolist()], dtype=object)


@pytest.mark.parametrize("exp_all", [_exp_all, _exp_all_fused, _exp_lanes])
def test_exp_nonpositive_within_1_25_ulp_of_the_true_value(exp_all):
    # measured: at most 1.09 ulp without fused multiply-adds, 1.00 with them (NumPy's
    # exp: 1.00); an error in the range reduction or a coefficient shows up as many ulps
    rng = np.random.default_rng(0)
    x = np.concatenate([
        -np.linspace(0.0, 708.0, 200_001),
        -rng.exponential(scale=3.0, size=100_000),
        -rng.random(10_000) * 1e-12,
        [0.0, -0.0, -1e-300, -5e-324, -np.log(2) / 2, -np.log(2), -707.9999],
    ])
    out = np.empty_like(x)
    exp_all(x, out)
    exact = _exact_exp(x)
    if exact.dtype == object:
        err = np.array([float(abs(Decimal(o) - e)) for o, e in zip(out.tolist(), exact)])
    else:
        err = np.abs(out.astype(np.longdouble) - exact).astype(np.float64)
    ulps = err / np.spacing(exact.astype(np.float64))
    assert ulps.max() < 1.25, (x[np.argmax(ulps)], ulps.max())


@pytest.mark.parametrize("exp_all", [_exp_all, _exp_all_fused])
def test_exp_nonpositive_underflow_and_special_values(exp_all):
    x = np.array([-708.5, -745.2, -1e6, -np.inf, np.nan])
    out = np.empty_like(x)
    exp_all(x, out)
    assert np.array_equal(out[:4], np.zeros(4))
    assert np.isnan(out[4])


@pytest.mark.parametrize("n_cols", [1, 9, 33])
def test_prefetch_row_is_only_a_hint(n_cols):
    rng = np.random.default_rng(n_cols)
    M = rng.normal(size=(1000, n_cols))
    rows = rng.integers(0, 1000, size=5000).astype(np.int32)
    out = np.empty(rows.size)
    _row_sums_with_prefetch(M, rows, out)
    np.testing.assert_allclose(out, M[rows].sum(axis=1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n_cols", [1, 15, 42, 59])
def test_prefetch_at_is_only_a_hint(n_cols):
    rng = np.random.default_rng(n_cols)
    M = rng.normal(size=(1000, n_cols))
    before = M.copy()
    rows = rng.integers(0, 1000, size=5000).astype(np.int32)
    out = np.empty(rows.size)
    _row_sums_with_line_hints(M, rows, out)
    np.testing.assert_allclose(out, M[rows].sum(axis=1), rtol=1e-12, atol=1e-12)
    assert np.array_equal(M, before)


@pytest.mark.parametrize("exp_all", [_exp_all, _exp_lanes])
def test_exp_nonpositive_special_values(exp_all):
    x = np.array([0.0, -0.0, -708.0, -708.5, -745.2, -1e308, -np.inf, np.nan, -1.0, np.nan,
                  -np.inf, -3.5])
    out = np.empty_like(x)
    exp_all(x, out)
    want = np.exp(x)
    want[(x < -708.0)] = 0.0
    np.testing.assert_array_equal(np.isnan(out), np.isnan(x))
    ok = ~np.isnan(x)
    np.testing.assert_allclose(out[ok], want[ok], rtol=3e-16, atol=0.0)


@njit(cache=False)
def _flat_write(M, k, v):
    f = flat_view(M)
    f[k] = v
    return f.size, f[k]


@pytest.mark.parametrize("shape", [(7,), (5, 9), (4, 1, 15), (3, 2, 8)])
def test_flat_view_is_the_arrays_elements_in_order(shape):
    M = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    k = M.size - 2
    size, got = _flat_write(M, k, -1.5)
    assert size == M.size and got == -1.5
    # a view, not a copy: the write lands in M, at the k-th element in C order
    want = np.arange(M.size, dtype=np.float64)
    want[k] = -1.5
    assert np.array_equal(M.reshape(-1), want)


def test_flat_view_refuses_a_strided_array():
    from numba.core.errors import TypingError

    with pytest.raises(TypingError):
        _flat_write(np.zeros((4, 6))[:, ::2], 0, 1.0)
