"""The expected state counts of the sparse pass, ``gW[f] += x_tf P[t]``
(``skcrf._kernels.state_counts._add_state_counts``), against a dense
product for every row width: scalar loops (1-3 columns), quads (a training
matrix's rows padded to 4-16 columns), and vectors of 8 from 17 columns on,
whose last vector may overlap the one before."""

import numpy as np
import pytest
from numba import njit

from skcrf._kernels.lanes import row_width
from skcrf._kernels.state_counts import _add_state_counts

from .test_emissions import _problem


@njit(cache=False)
def _all_state_counts(indptr, indices, data, offsets, P, gW):
    for s in range(offsets.size - 1):
        t0, t1 = offsets[s], offsets[s + 1]
        _add_state_counts(indptr, indices, data, t0, t1 - t0, P[t0:t1], gW)


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("L", list(range(1, 19)) + [20, 24, 25, 32, 33, 40, 42, 59, 67])
def test_state_counts_match_the_dense_product(L, binary):
    rng = np.random.default_rng(L + 1000 * binary)
    indptr, indices, data, offsets, X = _problem(rng, 120, 30, binary)
    P = rng.uniform(size=(X.shape[0], L))
    start = rng.normal(size=(30, row_width(L)))
    gW = start.copy()
    _all_state_counts(indptr, indices, data, offsets, P, gW)
    np.testing.assert_allclose(gW[:, :L], start[:, :L] + X.T @ P, rtol=1e-12, atol=1e-12)
    # a padded row's extra columns get nothing
    np.testing.assert_array_equal(gW[:, L:], start[:, L:])


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("L", [17, 23, 24, 33, 42, 70])
def test_wide_rows_add_in_the_order_of_the_non_zeros(L, binary):
    """From 17 columns each column adds its non-zeros' terms in their order,
    multiply and add rounded apart: the bits of a sequential sum, in the
    columns two overlapping vectors share too (added once, not twice)."""
    rng = np.random.default_rng(L * 10 + binary)
    # few features, so that rows recur within and across tokens
    indptr, indices, data, offsets, _ = _problem(rng, 90, 9, binary)
    P = rng.uniform(size=(indptr.size - 1, L))
    gW = rng.normal(size=(9, L))
    expected = gW.copy()
    for t in range(indptr.size - 1):
        for p in range(indptr[t], indptr[t + 1]):
            v = data[p] if data.size > 1 else 1.0
            f = indices[p]
            expected[f] = expected[f] + (P[t] if binary else v * P[t])
    _all_state_counts(indptr, indices, data, offsets, P, gW)
    np.testing.assert_array_equal(gW, expected)
