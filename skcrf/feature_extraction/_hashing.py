"""Hashing primitives and open-addressing tables (Numba), and the look-up of
feature keys into columns at ``transform`` time.

A feature instance is identified by a 64-bit key: the template's id hashed
together with the ids of the units it looked at, ``h = splitmix(tid);
h = splitmix(h ^ id_k)`` for each unit (:func:`_splitmix`, :func:`_finish`).
Key 0 means "no feature in this slot". A table is a (size, width) uint64
array whose column 0 holds the key (0 = empty slot) and the other columns its
values, so one probe touches one cache line. :func:`keys_to_csr` maps a
text's key matrix to the CSR rows of the fitted columns.
"""

import numpy as np
from numba import njit

from ._units import SPLITMIX_GOLD, SPLITMIX_M1, SPLITMIX_M2

_JIT = dict(cache=True, nogil=True, fastmath=False)

_M1, _M2, _GOLD = np.uint64(SPLITMIX_M1), np.uint64(SPLITMIX_M2), np.uint64(SPLITMIX_GOLD)


@njit(**_JIT)
def _splitmix(x):
    x = np.uint64(x) + _GOLD
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


@njit(**_JIT)
def pow2_at_least(n):
    """The smallest power of two >= n, at least 16 (a table's row count)."""
    p = 16
    while p < n:
        p *= 2
    return p


@njit(**_JIT)
def bucket_table(start):
    """An empty (rows, 2) table for the buckets that ``start`` bounds: twice
    the biggest bucket's rows, reused bucket after bucket (each bucket uses
    the first :func:`pow2_at_least` (2 × its size) rows)."""
    biggest = 0
    for b in range(start.size - 1):
        biggest = max(biggest, start[b + 1] - start[b])
    return np.zeros((pow2_at_least(2 * biggest), 2), dtype=np.uint64)


@njit(**_JIT)
def bucket_bounds(h, n, per_bucket):
    """For a counting sort of the first n hashes ``h`` by their top bits into
    buckets of about ``per_bucket`` (at least 16 buckets): ``(start, shift)``,
    bucket b = ``h >> shift`` holding positions ``start[b]:start[b + 1]``."""
    bits = 4
    while (1 << bits) * per_bucket < n:
        bits += 1
    shift = np.uint64(64 - bits)
    start = np.zeros((1 << bits) + 1, dtype=np.int64)
    for e in range(n):
        start[np.int64(h[e] >> shift) + 1] += 1
    for b in range(1 << bits):
        start[b + 1] += start[b]
    return start, shift


@njit(**_JIT)
def hash_buckets(h, per_bucket):
    """Counting sort of the hashes ``h`` by their top bits, into buckets of
    about ``per_bucket`` (at least 16 buckets): ``(start, order)``, bucket b
    holding ``order[start[b]:start[b + 1]]``, in their order within ``h``."""
    n = h.size
    start, shift = bucket_bounds(h, n, per_bucket)
    fill = start[:-1].copy()
    order = np.empty(n, dtype=np.int64)
    for e in range(n):
        b = np.int64(h[e] >> shift)
        order[fill[b]] = e
        fill[b] += 1
    return start, order


def new_table(n_expected, width=2):
    size = 1 << max(4, int(2 * max(n_expected, 1) - 1).bit_length())
    return np.zeros((size, width), dtype=np.uint64)


@njit(**_JIT)
def _probe(table, key):
    """Row of ``key`` in ``table``, or of the empty row where it would go."""
    mask = np.uint64(table.shape[0] - 1)
    return _probe_at(table, _splitmix(key) & mask, mask, key)


@njit(**_JIT)
def _probe_at(table, i, mask, key):
    """Row of ``key`` in the first ``mask + 1`` rows of ``table`` (linear
    probing from row i), or of the empty row where it would go."""
    while table[i, 0] != np.uint64(0) and table[i, 0] != key:
        i = (i + np.uint64(1)) & mask
    return i


def _np_grown(a, n, size):
    """The first n elements of ``a`` in a new NumPy array of ``size`` (the
    rest unset; NumPy asks for huge pages for large arrays, Numba does not)."""
    out = np.empty(size, dtype=a.dtype)
    out[:n] = a[:n]
    return out


@njit(**_JIT)
def _grown(a, size):
    """``a`` copied into a new array of ``size`` elements (the rest unset)."""
    out = np.empty(size, dtype=a.dtype)
    out[:a.size] = a
    return out


@njit(**_JIT)
def _remap_csr(indptr, indices, remap):
    """CSR rows with every column ``c`` renamed ``remap[c]`` and dropped where
    that is negative."""
    out_ptr = np.zeros(indptr.size, dtype=np.int64)
    out = np.empty(indices.size, dtype=np.int32)
    nnz = 0
    for r in range(indptr.size - 1):
        for j in range(indptr[r], indptr[r + 1]):
            c = remap[indices[j]]
            if c >= 0:
                out[nnz] = c
                nnz += 1
        out_ptr[r + 1] = nnz
    return out_ptr, out[:nnz].copy()


@njit(**_JIT)
def build_lookup_values(keys, values, table):
    """Insert ``keys[i] -> values[i]`` into an empty ``table`` (width 2)."""
    for i in range(keys.size):
        j = _probe(table, keys[i])
        table[j, 0] = keys[i]
        table[j, 1] = values[i]


def vocabulary_table(keys):
    """Look-up table (width 2: key, column) of the vocabulary ``keys``, for
    :func:`keys_to_csr`. Never saved: rebuilt from the vocabulary when needed
    (random inserts are independent stores, so this runs at memory
    throughput, ~0.05 s for 10^6 keys)."""
    table = new_table(keys.size, width=2)
    _build_lookup(keys, table)
    return table


@njit(**_JIT)
def _build_lookup(keys, table):
    """Insert ``keys[i] -> i`` into an empty ``table`` (width 2)."""
    for i in range(keys.size):
        j = _probe(table, keys[i])
        table[j, 0] = keys[i]
        table[j, 1] = np.uint64(i)


@njit(**_JIT)
def keys_to_csr(keys, table):
    """CSR (indptr, indices) of the keys of each row that the vocabulary
    table (:func:`vocabulary_table`) knows.

    Columns within a row are unique (distinct keys have distinct columns, and
    a row never holds one key twice) but not sorted: the kernels do not need
    sorted rows, and sorting would double the cost.
    """
    n_rows, n_slots = keys.shape
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    indices = np.empty(n_rows * n_slots, dtype=np.int32)
    nnz = 0
    for r in range(n_rows):
        for s in range(n_slots):
            k = keys[r, s]
            if k == np.uint64(0):
                continue
            i = _probe(table, k)
            if table[i, 0] == np.uint64(0):
                continue
            indices[nnz] = np.int32(table[i, 1])
            nnz += 1
        indptr[r + 1] = nnz
    return indptr, indices[:nnz].copy()


@njit(**_JIT)
def _finish(h):
    return h if h != np.uint64(0) else np.uint64(1)


@njit(**_JIT)
def _step(h, cp):
    return _splitmix(h ^ np.uint64(cp))
