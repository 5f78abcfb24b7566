"""The emission scores ``E[t] = sum_f x_tf W[f]`` of the sparse pass
(``skcrf._kernels._emissions``) against a dense product, for every row width:
scalar loops (1-3 and 17+ columns), quads (4, 8, 12, 16), overlapping quads
(other widths up to 16: a fitted model's unpadded rows) and a training
matrix's padded rows read into fewer columns."""

import numpy as np
import pytest
from numba import njit

from skcrf._kernels.emissions import _emissions


@njit(cache=False)
def _all_emissions(indptr, indices, data, offsets, W, out):
    for s in range(offsets.size - 1):
        t0, t1 = offsets[s], offsets[s + 1]
        _emissions(indptr, indices, data, t0, t1 - t0, W, out[t0:t1])


def _problem(rng, n_tokens, n_features, binary):
    per = rng.integers(0, 8, size=n_tokens)       # 0 to 7 non-zeros per token
    indptr = np.concatenate([[0], np.cumsum(per)]).astype(np.int64)
    indices = np.concatenate([rng.choice(n_features, size=k, replace=False)
                              for k in per]).astype(np.int32)
    values = np.ones(indices.size) if binary else rng.normal(size=indices.size)
    X = np.zeros((n_tokens, n_features))
    X[np.repeat(np.arange(n_tokens), per), indices] = values
    data = np.ones(1) if binary else values
    # sequences of 0 to 9 tokens
    cuts = np.sort(rng.choice(np.arange(1, n_tokens), size=n_tokens // 5, replace=False))
    offsets = np.concatenate([[0], cuts, [n_tokens]]).astype(np.int64)
    return indptr, indices, data, offsets, X


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("width", list(range(1, 19)) + [20, 24, 25, 32, 33, 40, 42, 59, 67])
def test_emissions_match_the_dense_product(width, binary):
    rng = np.random.default_rng(width)
    indptr, indices, data, offsets, X = _problem(rng, 120, 30, binary)
    W = rng.normal(size=(30, width))
    out = np.full((X.shape[0], width), np.nan)
    _all_emissions(indptr, indices, data, offsets, W, out)
    np.testing.assert_allclose(out, X @ W, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("L", [3, 5, 9, 12, 14])
def test_padded_rows_fill_only_the_labels_columns(L, binary):
    # a training matrix's rows are padded to a multiple of 4 columns; the
    # scores are written into L columns and nothing beyond
    rng = np.random.default_rng(100 + L)
    indptr, indices, data, offsets, X = _problem(rng, 80, 25, binary)
    width = -(-L // 4) * 4
    W = rng.normal(size=(25, width))
    out = np.full((X.shape[0], L + 1), np.nan)
    _all_emissions(indptr, indices, data, offsets, W, out[:, :L])
    np.testing.assert_allclose(out[:, :L], X @ W[:, :L], rtol=1e-12, atol=1e-12)
    assert np.isnan(out[:, L]).all()


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("width, L", [(17, 17), (24, 24), (33, 33), (42, 42), (70, 70),
                                      (20, 18), (40, 33)])
def test_wide_rows_add_in_the_order_of_the_non_zeros(width, L, binary):
    """From 17 columns, each column adds its non-zeros' weights in their
    order, multiply and add rounded apart (binary features: the even and
    the odd non-zeros' sums apart, added at the end): the same bits as a
    sequential sum in that order (and as the NumPy engine), whatever block or
    overlapping vector the column falls in, into contiguous rows or a
    strided (lane) view."""
    rng = np.random.default_rng(width * 100 + L)
    indptr, indices, data, offsets, _ = _problem(rng, 90, 40, binary)
    W = rng.normal(size=(40, width))
    expected = np.zeros((indptr.size - 1, L))
    for t in range(indptr.size - 1):
        odd = np.zeros(L)
        for p in range(indptr[t], indptr[t + 1]):
            v = data[p] if data.size > 1 else 1.0
            if binary and (p - indptr[t]) % 2 == 1:      # an odd rank
                odd = odd + W[indices[p], :L]
            else:
                row = W[indices[p], :L] if binary else v * W[indices[p], :L]
                expected[t] = expected[t] + row
        expected[t] = expected[t] + odd
    out = np.full((indptr.size - 1, L), np.nan)
    _all_emissions(indptr, indices, data, offsets, W, out)
    np.testing.assert_array_equal(out, expected)
    lanes = np.full((indptr.size - 1, L, 8), np.nan)
    _all_emissions(indptr, indices, data, offsets, W, lanes[:, :, 3])
    np.testing.assert_array_equal(lanes[:, :, 3], expected)
    assert np.isnan(np.delete(lanes, 3, axis=2)).all()
