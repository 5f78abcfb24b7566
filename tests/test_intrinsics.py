"""The hand-written helpers the kernels use in place of libm / missing Numba features."""

import numpy as np
import pytest
from numba import njit

from skcrf._intrinsics import exp_nonpositive, prefetch_row


@njit(cache=False)
def _exp_all(x, out):
    for i in range(x.size):
        out[i] = exp_nonpositive(x[i])


@njit(cache=False, fastmath={"contract"})
def _exp_all_fused(x, out):
    # as the kernels compile it: multiply-adds fused (skcrf._kernels._JIT_EXP)
    for i in range(x.size):
        out[i] = exp_nonpositive(x[i])


@njit(cache=False)
def _row_sums_with_prefetch(M, rows, out):
    for k in range(rows.size):
        prefetch_row(M, rows[k])
        acc = 0.0
        for j in range(M.shape[1]):
            acc += M[rows[k], j]
        out[k] = acc


@pytest.mark.parametrize("exp_all", [_exp_all, _exp_all_fused])
def test_exp_nonpositive_within_one_ulp_of_numpy(exp_all):
    rng = np.random.default_rng(0)
    x = np.concatenate([
        -np.linspace(0.0, 708.0, 200_001),
        -rng.exponential(scale=3.0, size=100_000),
        -rng.random(10_000) * 1e-12,
        [0.0, -0.0, -1e-300, -5e-324, -np.log(2) / 2, -np.log(2), -707.9999],
    ])
    out = np.empty_like(x)
    exp_all(x, out)
    ref = np.exp(x)
    ulps = np.abs(out - ref) / np.spacing(ref)
    assert ulps.max() <= 1.0, (x[np.argmax(ulps)], ulps.max())


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
