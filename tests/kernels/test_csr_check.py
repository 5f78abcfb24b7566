"""The one-pass check of the kernels' CSR rows against its NumPy statement:
the first problem found, where, the all-ones flag and the int32 copy."""

import numpy as np
import pytest

from skcrf._kernels.csr_check import BAD_INDEX, BAD_INDPTR, NOT_FINITE, OK, check_csr


def _numpy_check(indptr, indices, data, n_features):
    """What check_csr must return, said with NumPy."""
    bad = np.flatnonzero((indices < 0) | (indices >= n_features))
    if bad.size:
        return BAD_INDEX, int(bad[0]), False
    if indptr.size < 1 or indptr[0] != 0 or indptr[-1] != indices.size:
        return BAD_INDPTR, 0, False
    drops = np.flatnonzero(np.diff(indptr) < 0)
    if drops.size:
        return BAD_INDPTR, int(drops[0]), False
    if data.size != indices.size:
        return OK, 0, False
    bad = np.flatnonzero(~np.isfinite(data))
    if bad.size:
        return NOT_FINITE, int(bad[0]), False
    return OK, 0, bool(np.all(data == 1.0))


def _random_csr(rng, n_rows=40, n_features=30):
    lengths = rng.integers(0, 6, size=n_rows)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    indices = rng.integers(0, n_features, size=indptr[-1])
    data = np.where(rng.random(indptr[-1]) < 0.5, 1.0, rng.normal(size=indptr[-1]))
    return indptr, indices, data


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_same_answer_as_numpy_on_mutated_rows(seed, index_dtype):
    rng = np.random.default_rng(seed)
    n_features = 30
    indptr, indices, data = _random_csr(rng, n_features=n_features)
    if seed % 5 == 1:
        data[:] = 1.0
    for _ in range(rng.integers(0, 3)):   # zero to two problems, anywhere
        kind = rng.integers(0, 4)
        if kind == 0 and indices.size:
            indices[rng.integers(indices.size)] = rng.choice([-1, n_features, 10**6])
        elif kind == 1 and data.size:
            data[rng.integers(data.size)] = rng.choice([np.nan, np.inf, -np.inf])
        elif kind == 2 and indptr.size > 2:
            r = rng.integers(1, indptr.size - 1)
            indptr[r] = indptr[r + 1] + 1
        elif kind == 3:
            indptr[-1] += rng.choice([-1, 1])
    indices = indices.astype(index_dtype)
    out = np.full(indices.size, -7, dtype=np.int32)
    got = check_csr(indptr, indices, data, n_features, out)
    assert tuple(got) == _numpy_check(indptr, indices, data, n_features)
    if got[0] == OK:
        assert np.array_equal(out, indices)     # the copy the kernels take


def test_binary_rows_read_no_values_and_copy_nothing_when_asked():
    indptr = np.array([0, 2, 3], dtype=np.int64)
    indices = np.array([4, 1, 0], dtype=np.int32)
    assert tuple(check_csr(indptr, indices, np.ones(1), 5, indices[:0])) == (OK, 0, False)
    assert tuple(check_csr(indptr, indices, np.ones(3), 5, indices[:0])) == (OK, 0, True)
    assert tuple(check_csr(indptr, indices, np.array([1.0, 2.0, 1.0]), 5,
                           indices[:0])) == (OK, 0, False)


def test_empty_rows_and_no_features():
    empty = np.zeros(0, dtype=np.int32)
    assert tuple(check_csr(np.zeros(4, dtype=np.int64), empty, np.zeros(0), 0, empty)) \
        == (OK, 0, True)
    # a column index when there is no feature at all
    assert tuple(check_csr(np.array([0, 1]), np.zeros(1, dtype=np.int32), np.ones(1), 0,
                           empty))[0] == BAD_INDEX
