"""Numba kernels that turn template instances into sparse feature columns.

A feature instance is identified by a 64-bit key: the template's id hashed
together with the ids of the units it looked at (code points, hashed
strings, padding ids), ``h = splitmix(tid); h = splitmix(h ^ id_k)`` for each
unit. Keys go into an open-addressing hash table (``fit``: count;
``transform``: look up), and the hits become the CSR rows of the feature
matrix. No Python runs per feature occurrence.

Key 0 means "no feature in this slot".
"""

import numpy as np
from numba import njit

from ._units import ABSENT as _ABSENT
from ._units import MAX_OFFSET as _MAX_OFFSET
from ._units import PAD as _PAD
from ._units import SPLITMIX_GOLD, SPLITMIX_M1, SPLITMIX_M2

_JIT = dict(cache=True, nogil=True, fastmath=False)

_M1, _M2, _GOLD = np.uint64(SPLITMIX_M1), np.uint64(SPLITMIX_M2), np.uint64(SPLITMIX_GOLD)


@njit(**_JIT)
def _splitmix(x):
    x = np.uint64(x) + _GOLD
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


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


class KeyIndex:
    """The distinct keys of a (n_rows, n_slots) key matrix, numbered in order of
    first occurrence, and the matrix itself as CSR rows of those numbers.

    Built in one pass (:func:`index_keys`): every key is probed once, so fit
    needs no second look-up pass. Attributes: ``keys`` (n,) uint64 in column
    order, ``counts`` and ``first`` (flat position ``row * n_slots + slot`` of
    the first occurrence) per column, ``indptr`` / ``indices`` (int32) of the
    rows, and ``table``, a look-up table (width 2: key, column) of all the keys.
    """

    __slots__ = ("keys", "counts", "first", "indptr", "indices", "table")

    def __init__(self, keys, counts, first, indptr, indices, table):
        self.keys, self.counts, self.first = keys, counts, first
        self.indptr, self.indices, self.table = indptr, indices, table

    def keep(self, mask):
        """Only the columns where ``mask`` holds, renumbered in order; the
        table no longer matches and is dropped (None)."""
        remap = np.cumsum(mask, dtype=np.int64) - 1
        remap[~mask] = -1
        indptr, indices = _remap_csr(self.indptr, self.indices, remap)
        return KeyIndex(self.keys[mask], self.counts[mask], self.first[mask], indptr,
                        indices, None)


def index_keys(keys, initial_size=None):
    """:class:`KeyIndex` of the non-zero keys of ``keys`` (n_rows, n_slots).

    The hash table starts at ``initial_size`` rows (default: a sixteenth of
    the occurrences) and doubles when half full (the keys seen so far are
    re-inserted), so its size follows the number of distinct keys, not of
    occurrences.
    """
    n_rows, n_slots = keys.shape
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    nnz = int(np.count_nonzero(keys))
    indices = np.empty(nnz, dtype=np.int32)
    if initial_size is None:
        initial_size = max(1 << 12, nnz // 16)
    table = new_table(initial_size // 2, width=2)
    cap = table.shape[0] // 2
    col_keys = np.empty(cap, dtype=np.uint64)
    counts = np.empty(cap, dtype=np.int64)
    first = np.empty(cap, dtype=np.int64)
    r, n_cols = 0, 0
    while True:
        r, n_cols = _index_rows(keys, r, table, col_keys, counts, first, indptr, indices,
                                n_cols)
        if r == n_rows:
            break
        table = np.zeros((2 * table.shape[0], 2), dtype=np.uint64)
        cap = table.shape[0] // 2
        col_keys, counts, first = (_grown(a, cap) for a in (col_keys, counts, first))
        _reinsert(col_keys, n_cols, table)
    if n_cols >= 2 ** 31:
        raise ValueError(f"{n_cols} distinct features: more than int32 columns hold.")
    return KeyIndex(col_keys[:n_cols].copy(), counts[:n_cols].copy(),
                    first[:n_cols].copy(), indptr, indices, table)


def _grown(a, size):
    out = np.empty(size, dtype=a.dtype)
    out[:a.size] = a
    return out


@njit(**_JIT)
def _index_rows(keys, r0, table, col_keys, counts, first, indptr, indices, n_cols):
    """Number the keys of rows r0.. (see :func:`index_keys`); stops before a
    row that could fill the table past half. Returns (next row, columns)."""
    n_rows, n_slots = keys.shape
    limit = table.shape[0] // 2
    nnz = indptr[r0]
    for r in range(r0, n_rows):
        if n_cols + n_slots > limit:
            return r, n_cols
        for s in range(n_slots):
            k = keys[r, s]
            if k == np.uint64(0):
                continue
            i = _probe(table, k)
            if table[i, 0] == np.uint64(0):
                table[i, 0] = k
                table[i, 1] = np.uint64(n_cols)
                col_keys[n_cols] = k
                counts[n_cols] = 0
                first[n_cols] = r * n_slots + s
                c = n_cols
                n_cols += 1
            else:
                c = np.int64(table[i, 1])
            counts[c] += 1
            indices[nnz] = c
            nnz += 1
        indptr[r + 1] = nnz
    return n_rows, n_cols


@njit(**_JIT)
def _reinsert(col_keys, n_cols, table):
    for c in range(n_cols):
        i = _probe(table, col_keys[c])
        table[i, 0] = col_keys[c]
        table[i, 1] = np.uint64(c)


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
def build_lookup(keys, table):
    """Insert ``keys[i] -> i`` into an empty ``table`` (width 2)."""
    for i in range(keys.size):
        j = _probe(table, keys[i])
        table[j, 0] = keys[i]
        table[j, 1] = np.uint64(i)


@njit(**_JIT)
def build_lookup_values(keys, values, table):
    """Insert ``keys[i] -> values[i]`` into an empty ``table`` (width 2)."""
    for i in range(keys.size):
        j = _probe(table, keys[i])
        table[j, 0] = keys[i]
        table[j, 1] = values[i]


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
PAD = np.int64(_PAD)
MAX_OFFSET = np.int64(_MAX_OFFSET)
ABSENT = np.int64(_ABSENT)


@njit(**_JIT)
def _unit_at(units, t0, T, p):
    """Id at position p of the sequence at rows t0..t0+T-1: the unit, or the
    padding id ``PAD + d`` (d before the start) / ``PAD + MAX_OFFSET + d``
    (d after the end)."""
    if p < 0:
        return PAD - p
    if p >= T:
        return PAD + MAX_OFFSET + (p - T + 1)
    return units[t0 + p]


@njit(**_JIT)
def _finish(h):
    return h if h != np.uint64(0) else np.uint64(1)


@njit(**_JIT)
def window_keys(sources, offsets, part_src, part_off, tid, keys, slot):
    """Keys of one window template into ``keys[:, slot]``.

    The template reads ``sources[part_src[k]]`` at offset ``part_off[k]`` for
    every part k; a position where any part reads ABSENT gets no feature
    (key 0). With no parts the template is a constant feature. (One and two
    parts, the common cases, have loops of their own that the compiler can
    keep in registers.)
    """
    h0 = _splitmix(np.uint64(tid))
    n_parts = part_src.size
    for s in range(offsets.size - 1):
        t0 = offsets[s]
        T = offsets[s + 1] - t0
        if n_parts == 0:
            for t in range(T):
                keys[t0 + t, slot] = _finish(h0)
        elif n_parts == 1:
            u0, o0 = sources[part_src[0]], part_off[0]
            for t in range(T):
                a = _unit_at(u0, t0, T, t + o0)
                if a != ABSENT:
                    keys[t0 + t, slot] = _finish(_splitmix(h0 ^ np.uint64(a)))
        elif n_parts == 2:
            u0, o0 = sources[part_src[0]], part_off[0]
            u1, o1 = sources[part_src[1]], part_off[1]
            for t in range(T):
                a = _unit_at(u0, t0, T, t + o0)
                b = _unit_at(u1, t0, T, t + o1)
                if a != ABSENT and b != ABSENT:
                    h = _splitmix(_splitmix(h0 ^ np.uint64(a)) ^ np.uint64(b))
                    keys[t0 + t, slot] = _finish(h)
        else:
            for t in range(T):
                h = h0
                absent = False
                for k in range(n_parts):
                    u = _unit_at(sources[part_src[k]], t0, T, t + part_off[k])
                    if u == ABSENT:
                        absent = True
                        break
                    h = _splitmix(h ^ np.uint64(u))
                if not absent:
                    keys[t0 + t, slot] = _finish(h)


@njit(**_JIT)
def windows_keys(sources, offsets, part_src, part_off, n_parts, tids, slots, keys):
    """Keys of several window templates at once (template j: ``n_parts[j]``
    parts ``part_src[j, :]`` / ``part_off[j, :]``, id ``tids[j]``, into
    ``keys[:, slots[j]]``), the same keys as :func:`window_keys` gives each.

    One pass over the tokens that fills each token's slots together: the
    writes stay within a row of ``keys`` instead of striding down a column
    once per template.
    """
    n_tpl = tids.size
    h0 = np.empty(n_tpl, dtype=np.uint64)
    for j in range(n_tpl):
        h0[j] = _splitmix(np.uint64(tids[j]))
    for s in range(offsets.size - 1):
        t0 = offsets[s]
        T = offsets[s + 1] - t0
        for t in range(T):
            for j in range(n_tpl):
                h = h0[j]
                absent = False
                for k in range(n_parts[j]):
                    u = _unit_at(sources[part_src[j, k]], t0, T, t + part_off[j, k])
                    if u == ABSENT:
                        absent = True
                        break
                    h = _splitmix(h ^ np.uint64(u))
                if not absent:
                    keys[t0 + t, slots[j]] = _finish(h)


@njit(**_JIT)
def window_ids(sources, offsets, rows, seq, part_src, part_off, out):
    """The ids a window template read at token ``rows[j]`` (of sequence
    ``seq[j]``): ``out[j, k]`` for part k (padding ids included)."""
    for j in range(rows.size):
        s = seq[j]
        t0 = offsets[s]
        T = offsets[s + 1] - t0
        for k in range(part_src.size):
            out[j, k] = _unit_at(sources[part_src[k]], t0, T, rows[j] - t0 + part_off[k])


@njit(**_JIT)
def flag_keys(flags, tids, keys, slot0):
    """Keys of (n_tokens, n_flags) boolean / count flags (0 = absent)."""
    for t in range(flags.shape[0]):
        for k in range(flags.shape[1]):
            if flags[t, k] != 0:
                keys[t, slot0 + k] = _finish(_splitmix(np.uint64(tids[k])))


# ------------------------------------------------------------- dictionary
@njit(**_JIT)
def _step(h, cp):
    return _splitmix(h ^ np.uint64(cp))


@njit(**_JIT)
def hash_words(cps, word_offsets, table):
    """Insert every dictionary word and each of its prefixes into ``table``
    (width 2: rolling hash -> word index + 1 for a whole word, 0 for a
    prefix only)."""
    for w in range(word_offsets.size - 1):
        h = np.uint64(0x12345)
        for p in range(word_offsets[w], word_offsets[w + 1]):
            h = _step(h, cps[p])
            hk = h if h != np.uint64(0) else np.uint64(1)
            i = _probe(table, hk)
            table[i, 0] = hk
            if p == word_offsets[w + 1] - 1:
                table[i, 1] = np.uint64(w + 1)


@njit(**_JIT)
def count_dictionary_matches(cps, offsets, fold, table, hits):
    """hits[w, fold[s]] += 1 for every match of word w - 1 in sequence s."""
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
                w = table[i, 1]
                if w != np.uint64(0):
                    hits[w, fold[s]] += 1



@njit(cache=True, nogil=True)
def seen_in_other_folds(hits, w, fold):
    """Whether dictionary word ``w`` occurs in a fold other than ``fold``
    (``hits[w, g]``: its occurrences in fold g). Without folds (one column),
    every word counts as seen."""
    n_folds = hits.shape[1]
    if n_folds <= 1:
        return True
    for g in range(n_folds):
        if g != fold and hits[w, g] > 0:
            return True
    return False

@njit(**_JIT)
def dictionary_flags(cps, offsets, fold, hits, table, cap, flags):
    """Mark dictionary matches: ``flags[t, 3 * (k - 1) + {0, 1, 2}]`` for
    "a word of (capped) length k begins / ends / passes through t".

    Every match of every length is found (not greedy maximum matching): from
    each position the scan extends while the text so far is a prefix of some
    dictionary word. Matches never cross sequence boundaries. With more than
    one fold (``hits`` has a column per fold), a word counts in sequence s
    only if it also occurs in another fold than ``fold[s]``.
    """
    for s in range(offsets.size - 1):
        t0 = offsets[s]
        T = offsets[s + 1] - t0
        f = fold[s]
        for t in range(T):
            h = np.uint64(0x12345)
            for k in range(1, T - t + 1):
                h = _step(h, cps[t0 + t + k - 1])
                hk = h if h != np.uint64(0) else np.uint64(1)
                i = _probe(table, hk)
                if table[i, 0] != hk:
                    break  # no dictionary word starts with this text
                w = table[i, 1]
                if w == np.uint64(0):
                    continue
                if not seen_in_other_folds(hits, w, f):
                    continue
                kk = min(k, cap) - 1
                flags[t0 + t, 3 * kk] = 1
                flags[t0 + t + k - 1, 3 * kk + 1] = 1
                for u in range(t + 1, t + k - 1):
                    flags[t0 + u, 3 * kk + 2] = 1
