"""Loops that several kernels share are compiled once, not once per array
layout or per number of slots: a cold first fit pays Numba's compiler for
every specialisation, so a second copy of a loop is compile time for nothing.

Checked on the dispatchers' signatures. The callers are typed here by
uncached copies (``cache=False``): a kernel loaded from Numba's disk cache
brings its callees compiled inside it without typing them again, whereas
typing a caller asks each callee for the signature it is given."""

import numpy as np
import pytest
from numba import njit

from skcrf._kernels import decode, emissions
from skcrf.feature_extraction import _indexing
from skcrf.feature_extraction._indexing import SlotIndexer


def _layouts(dispatcher, arg):
    return {sig[arg].layout for sig in dispatcher.signatures}


@njit(cache=False)
def _rows(indptr, indices, data, W, out):
    emissions._emissions(indptr, indices, data, 0, out.shape[0], W, out)


@njit(cache=False)
def _lane(indptr, indices, data, W, out3):
    emissions._emissions(indptr, indices, data, 0, out3.shape[0], W, out3[:, :, 1])


@pytest.mark.parametrize("width, loop", [(2, "_emissions_narrow"), (4, "_emissions_quads"),
                                         (12, "_emissions_quads"), (20, "_emissions_wide")])
def test_emission_loops_compile_for_any_layout(width, loop):
    """The one-sequence kernels give contiguous rows, the lane kernels a
    strided view (one lane of an interleaved array): both reach the same
    compiled loop, typed 'A' (skcrf._kernels._jit.any_layout)."""
    rng = np.random.default_rng(width)
    indptr = np.array([0, 2, 3, 5], dtype=np.int64)
    indices = rng.integers(0, 6, size=5).astype(np.int32)
    data = rng.normal(size=5)
    W = rng.normal(size=(6, width))
    out = np.zeros((3, width))
    out3 = np.zeros((3, width, 8))
    _rows(indptr, indices, data, W, out)
    _lane(indptr, indices, data, W, out3)
    np.testing.assert_array_equal(out3[:, :, 1], out)
    np.testing.assert_allclose(out[0], data[0] * W[indices[0]] + data[1] * W[indices[1]])
    assert _layouts(getattr(emissions, loop), 6) == {"A"}
    for other in ("_emissions_narrow", "_emissions_quads", "_emissions_wide"):
        assert _layouts(getattr(emissions, other), 6) <= {"A"}


def test_way_back_compiles_for_any_layout():
    """Viterbi's way back reads the lanes' strided score views and the
    one-sequence kernel's contiguous scores through one compilation."""
    viterbi_one = njit(cache=False, **decode._viterbi_one.targetoptions)(
        decode._viterbi_one.py_func)
    rng = np.random.default_rng(0)
    L, T = 3, 4
    indptr = np.arange(T + 1, dtype=np.int64)
    indices = rng.integers(0, 5, size=T).astype(np.int32)
    data = np.ones(1)
    W, A = rng.normal(size=(5, L)), rng.normal(size=(L, L))
    start, end = rng.normal(size=L), rng.normal(size=L)
    offsets = np.array([0, T], dtype=np.int64)
    out, best = np.zeros(T, dtype=np.int64), np.zeros(1)
    viterbi_one(0, indptr, indices, data, offsets, W, A, np.ascontiguousarray(A.T), start,
                end, np.empty((T, L)), np.empty((T, L)), out, best)
    E = W[indices]
    brute = max((sum(E[t, p[t]] for t in range(T)) + start[p[0]] + end[p[-1]]
                 + sum(A[p[t - 1], p[t]] for t in range(1, T)), p)
                for p in np.ndindex(*(L,) * T))
    assert best[0] == pytest.approx(brute[0])
    np.testing.assert_array_equal(out, brute[1])
    assert _layouts(decode._best_path, 0) == {"A"}   # (and so its _last_label)


@pytest.mark.parametrize("n_keyed, n_coded", [(1, 0), (2, 0), (1, 1), (2, 2), (0, 1)])
def test_csr_of_ids_has_one_layout(n_keyed, n_coded):
    """An (n_rows, 1) array is both C- and Fortran-ordered, and Numba types
    it as C: the slot columns are handed over slot-major, C-ordered for any
    number of slots."""
    rng = np.random.default_rng(n_keyed * 10 + n_coded)
    n_rows = 50
    coded = [False] * n_keyed + [True] * n_coded
    indexer = SlotIndexer(n_rows, len(coded), coded_slots=coded)
    for s in range(n_keyed):
        indexer.add(rng.integers(0, 6, size=n_rows).astype(np.uint64), s)
    for s in range(n_keyed, len(coded)):
        indexer.add_codes(rng.integers(0, 4, size=n_rows).astype(np.uint8),
                          np.arange(4, dtype=np.uint64), s)
    index = indexer.finish()
    assert index is not None
    assert _layouts(_indexing._csr_of_ids, 0) == {"C"}
    assert _layouts(_indexing._csr_of_ids, 1) == {"C"}
