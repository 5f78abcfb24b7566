"""Numba kernels that turn template instances into sparse feature columns.

A feature instance is identified by a 64-bit key ``mix(template, a, b)`` where
``a`` and ``b`` are 64-bit ids of what the template looked at (code points,
hashed strings, padding markers, lengths). Keys go into an open-addressing
hash table (``fit``: count; ``transform``: look up), and the hits become the
CSR rows of the feature matrix. No Python runs per feature occurrence.

Key 0 means "no feature in this slot".
"""

import numpy as np
from numba import njit

_JIT = dict(cache=True, nogil=True, fastmath=False)

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLD = np.uint64(0x9E3779B97F4A7C15)


@njit(**_JIT)
def _splitmix(x):
    x = np.uint64(x) + _GOLD
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


@njit(**_JIT)
def mix(tpl, a, b):
    """64-bit key of template ``tpl`` applied to ids ``a``, ``b`` (never 0)."""
    h = _splitmix(np.uint64(tpl))
    h = _splitmix(h ^ np.uint64(a))
    h = _splitmix(h ^ np.uint64(b))
    if h == np.uint64(0):
        h = np.uint64(1)
    return h


# ----------------------------------------------------------------- tables
# A table is a (size, width) uint64 array, size a power of two: column 0
# holds the key (0 = empty slot), the other columns its values, so one probe
# touches one cache line.
def new_table(n_expected, width=2):
    size = 1 << max(4, int(2 * max(n_expected, 1) - 1).bit_length())
    return np.zeros((size, width), dtype=np.uint64)


@njit(**_JIT)
def _probe(table, key):
    """Row of ``key`` in ``table``, or of the empty row where it would go."""
    mask = np.uint64(table.shape[0] - 1)
    i = _splitmix(key) & mask
    while table[i, 0] != np.uint64(0) and table[i, 0] != key:
        i = (i + np.uint64(1)) & mask
    return i


@njit(**_JIT)
def count_keys(keys, table):
    """Insert every non-zero key of ``keys`` (n_rows, n_slots) into ``table``
    (width 3: key, count, first flat position).

    Returns the number of distinct keys, or -1 when the table would become
    more than half full (the caller retries with a bigger one).
    """
    n_rows, n_slots = keys.shape
    limit = table.shape[0] // 2
    filled = 0
    for r in range(n_rows):
        for s in range(n_slots):
            k = keys[r, s]
            if k == np.uint64(0):
                continue
            i = _probe(table, k)
            if table[i, 0] == np.uint64(0):
                filled += 1
                if filled > limit:
                    return -1
                table[i, 0] = k
                table[i, 2] = np.uint64(r * n_slots + s)
            table[i, 1] += np.uint64(1)
    return filled


def count_all(keys):
    """Table of distinct keys with counts and first positions, grown as needed."""
    guess = max(16, int(np.count_nonzero(keys[: min(len(keys), 20000)])) * 4)
    while True:
        table = new_table(guess, width=3)
        if count_keys(keys, table) >= 0:
            return table
        guess *= 4


@njit(**_JIT)
def build_lookup(keys, table):
    """Insert ``keys[i] -> i`` into an empty ``table`` (width 2)."""
    for i in range(keys.size):
        j = _probe(table, keys[i])
        table[j, 0] = keys[i]
        table[j, 1] = np.uint64(i)


@njit(**_JIT)
def keys_to_csr(keys, table):
    """CSR (indptr, indices) of the known keys of each row.

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


# -------------------------------------------------------------- templates
PAD = np.int64(1) << np.int64(62)  # ids >= PAD are sentence padding
NO_OFFSET = np.int64(-(1 << 40))   # second offset of a single-unit template


@njit(**_JIT)
def _unit_at(units, t0, T, p):
    """Id of the unit at position p of a sequence, or a padding id."""
    if p < 0:
        return PAD + (-p)            # BOS-1, BOS-2, ...
    if p >= T:
        return PAD + 1000 + (p - T + 1)  # EOS+1, EOS+2, ...
    return units[t0 + p]


@njit(**_JIT)
def window_keys(units, offsets, specs, tpl_ids, keys, slot0):
    """Keys of unit / n-gram templates.

    ``units`` (n_columns, n_tokens) ids; ``specs`` rows ``(column, off1, off2)``
    with ``off2 == NO_OFFSET`` for a single-unit template. Writes
    ``keys[:, slot0 + k]`` for template k.
    """
    n_seq = offsets.size - 1
    for s in range(n_seq):
        t0 = offsets[s]
        T = offsets[s + 1] - t0
        for k in range(specs.shape[0]):
            col, o1, o2 = specs[k, 0], specs[k, 1], specs[k, 2]
            u = units[col]
            for t in range(T):
                a = _unit_at(u, t0, T, t + o1)
                b = np.int64(0) if o2 == NO_OFFSET else _unit_at(u, t0, T, t + o2)
                keys[t0 + t, slot0 + k] = mix(tpl_ids[k], a, b)


@njit(**_JIT)
def token_attr_keys(attrs, tpl_ids, keys, slot0):
    """Keys of per-token attributes (0 = absent): ``attrs`` (n_tokens, n_attr)."""
    for t in range(attrs.shape[0]):
        for k in range(attrs.shape[1]):
            a = attrs[t, k]
            if a != 0:
                keys[t, slot0 + k] = mix(tpl_ids[k], a, 0)


@njit(**_JIT)
def flag_keys(flags, tpl_ids, keys, slot0):
    """Keys of (n_tokens, n_flags) boolean / count flags (0 = absent)."""
    for t in range(flags.shape[0]):
        for k in range(flags.shape[1]):
            if flags[t, k] != 0:
                keys[t, slot0 + k] = mix(tpl_ids[k], 0, 0)


# ------------------------------------------------------------- dictionary
@njit(**_JIT)
def _step(h, cp):
    return _splitmix(h ^ np.uint64(cp))


@njit(**_JIT)
def hash_words(cps, word_offsets, table):
    """Insert every dictionary word and each of its prefixes into ``table``
    (width 2: rolling hash, 1 for a whole word / 0 for a prefix only)."""
    for w in range(word_offsets.size - 1):
        h = np.uint64(0x12345)
        for p in range(word_offsets[w], word_offsets[w + 1]):
            h = _step(h, cps[p])
            hk = h if h != np.uint64(0) else np.uint64(1)
            i = _probe(table, hk)
            table[i, 0] = hk
            if p == word_offsets[w + 1] - 1:
                table[i, 1] = np.uint64(1)


@njit(**_JIT)
def dictionary_flags(cps, offsets, table, cap, flags):
    """Mark dictionary matches: ``flags[t, 3 * (k - 1) + {0, 1, 2}]`` for
    "a word of (capped) length k begins / ends / passes through t".

    Every match of every length is found (not greedy maximum matching): from
    each position the scan extends while the text so far is a prefix of some
    dictionary word. Matches never cross sequence boundaries.
    """
    for s in range(offsets.size - 1):
        t0 = offsets[s]
        T = offsets[s + 1] - t0
        for t in range(T):
            h = np.uint64(0x12345)
            for k in range(1, T - t + 1):
                h = _step(h, cps[t0 + t + k - 1])
                hk = h if h != np.uint64(0) else np.uint64(1)
                i = _probe(table, hk)
                if table[i, 0] != hk:
                    break  # no dictionary word starts with this text
                if table[i, 1] == np.uint64(1):
                    kk = min(k, cap) - 1
                    flags[t0 + t, 3 * kk] = 1
                    flags[t0 + t + k - 1, 3 * kk + 1] = 1
                    for u in range(t + 1, t + k - 1):
                        flags[t0 + u, 3 * kk + 2] = 1
