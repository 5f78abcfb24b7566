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
    return _probe_at(table, _splitmix(key) & mask, mask, key)


@njit(**_JIT)
def _probe_at(table, i, mask, key):
    """Row of ``key`` in the first ``mask + 1`` rows of ``table`` (linear
    probing from row i), or of the empty row where it would go."""
    while table[i, 0] != np.uint64(0) and table[i, 0] != key:
        i = (i + np.uint64(1)) & mask
    return i


class KeyIndex:
    """The distinct keys of a (n_rows, n_slots) key matrix, numbered in order of
    first occurrence (row by row, slot by slot), and the matrix itself as CSR
    rows of those numbers.

    Attributes (built by :func:`index_keys` or a :class:`SlotIndexer`):
    ``keys`` (n,) uint64 in column order, ``counts`` and ``first`` (flat
    position ``row * n_slots + slot`` of the first occurrence) per column, and
    ``indptr`` / ``indices`` (int32) of the rows. The look-up table of the
    keys is :func:`vocabulary_table` of ``keys``.
    """

    __slots__ = ("keys", "counts", "first", "indptr", "indices")

    def __init__(self, keys, counts, first, indptr, indices):
        self.keys, self.counts, self.first = keys, counts, first
        self.indptr, self.indices = indptr, indices

    def keep(self, mask):
        """Only the columns where ``mask`` holds, renumbered in order."""
        remap = np.cumsum(mask, dtype=np.int64) - 1
        remap[~mask] = -1
        indptr, indices = _remap_csr(self.indptr, self.indices, remap)
        return KeyIndex(self.keys[mask], self.counts[mask], self.first[mask], indptr,
                        indices)


def index_keys(keys, initial_size=None):
    """:class:`KeyIndex` of the non-zero keys of ``keys`` (n_rows, n_slots).

    Slot by slot (a Fortran-ordered ``keys`` is read without a copy): each
    slot numbers its keys with a table of its own, which grows (doubles) with
    the slot's distinct keys from ``initial_size`` rows (default 1024), so a
    slot of a few keys probes a table in L1 and a slot of characters pairs
    one that stays in the cache while its column is read, instead of every
    occurrence probing one table of all the keys. A key in several slots is
    then merged into one column (in cache-sized buckets of the distinct keys),
    and the columns are renumbered in order of first occurrence.
    """
    keys = np.asfortranarray(keys)
    n_rows, n_slots = keys.shape
    indexer = SlotIndexer(n_rows, n_slots, initial_size)
    for s in range(n_slots):
        indexer.add(keys[:, s], s)
    return indexer.finish()


class SlotIndexer:
    """Numbers the keys of a (n_rows, n_slots) key matrix given one slot's
    column at a time (:meth:`add`, in slot order), so that the whole matrix
    need never exist; :meth:`finish` gives the :class:`KeyIndex`.

    A slot whose distinct keys fit a table in L2 is numbered in one pass
    over its column; a slot with more (character pairs: ~10^5 keys) is
    partitioned by the top bits of its keys' hashes into buckets of a few
    thousand occurrences, each numbered with a small table.

    ``disjoint_slots=True`` promises that no key occurs in two slots (the
    templates of a :class:`~skcrf._templates.TemplateSet` hash distinct ids
    into their keys) and skips merging them.

    ``coded_slots`` (a boolean per slot) marks the slots given as codes
    (:meth:`add_codes`): they keep their uint8 codes and a code -> entry map
    instead of an int32 entry per row.
    """

    _DIRECT_MAX = 1 << 16          # table rows (16 bytes each) of a slot numbered directly

    def __init__(self, n_rows, n_slots, initial_size=None, disjoint_slots=False,
                 coded_slots=None):
        self.n_rows, self.n_slots = n_rows, n_slots
        self.disjoint_slots = disjoint_slots
        self.size0 = (1024 if initial_size is None
                      else max(16, 1 << (int(initial_size) - 1).bit_length()))
        coded = (np.zeros(n_slots, dtype=bool) if coded_slots is None
                 else np.asarray(coded_slots, dtype=bool))
        self.coded = coded
        # column of each slot in ids (keyed slots) or codes (coded slots)
        self.slot_col = np.zeros(n_slots, dtype=np.int64)
        self.slot_col[~coded] = np.arange(int((~coded).sum()))
        self.slot_col[coded] = np.arange(int(coded.sum()))
        self.ids = np.empty((n_rows, int((~coded).sum())), dtype=np.int32,
                            order="F")                         # entry, -1: none
        self.codes = np.empty((n_rows, int(coded.sum())), dtype=np.uint8, order="F")
        self.code_entry = np.full((int(coded.sum()), 256), -1, dtype=np.int64)
        cap = n_rows + 1024
        self.ent_keys = np.empty(cap, dtype=np.uint64)
        self.counts = np.empty(cap, dtype=np.int64)
        self.first = np.empty(cap, dtype=np.int64)
        self.n_ent = 0

    def _reserve(self, n):
        if self.n_ent + n + 1 >= self.ent_keys.size:
            size = max(2 * self.ent_keys.size, self.n_ent + n + 1024)
            self.ent_keys, self.counts, self.first = (
                _np_grown(a, self.n_ent, size)
                for a in (self.ent_keys, self.counts, self.first))

    def add(self, col, s):
        """Number the keys ``col`` (n_rows,) uint64 of slot s (0: no key)."""
        if self.coded[s]:
            raise ValueError(f"slot {s} was declared coded: give it with add_codes.")
        col = np.ascontiguousarray(col, dtype=np.uint64)
        ids = self.ids[:, self.slot_col[s]]
        table = np.zeros((self.size0, 2), dtype=np.uint64)
        e0, r = self.n_ent, 0
        while True:
            r, self.n_ent = _index_slot(col, r, s, self.n_slots, table, e0, self.n_ent,
                                        self.ent_keys, self.counts, self.first, ids)
            if r == self.n_rows:
                return
            self._reserve(1)
            if 2 * (self.n_ent - e0 + 1) > table.shape[0]:
                if 2 * table.shape[0] > self._DIRECT_MAX:      # many keys: in buckets
                    self.n_ent = e0
                    self._reserve(self.n_rows)
                    self.n_ent = _index_slot_buckets(col, s, self.n_slots, e0, self.ent_keys,
                                                     self.counts, self.first, ids)
                    return
                table = np.zeros((2 * table.shape[0], 2), dtype=np.uint64)
                _reinsert(self.ent_keys, e0, self.n_ent, table)

    def add_codes(self, codes, code_keys, s):
        """Number the features of slot s given as codes (see
        :class:`~skcrf._templates.CodedTemplate`): ``codes`` (n_rows,) uint8,
        0 for none, code c standing for the key ``code_keys[c]``."""
        if not self.coded[s]:
            raise ValueError(f"slot {s} was not declared coded: give it with add.")
        code_keys = np.ascontiguousarray(code_keys, dtype=np.uint64)
        if code_keys.size > 256 or code_keys.size < 1:
            raise ValueError(f"a coded slot has 1 to 255 features, got {code_keys.size - 1}.")
        self._reserve(code_keys.size)
        c = self.slot_col[s]
        column = self.codes[:, c]
        if np.asarray(codes).ctypes.data != column.ctypes.data:   # else written in place
            column[:] = codes
        self.n_ent = _index_codes(column, code_keys, s, self.n_slots, self.n_ent,
                                  self.ent_keys, self.counts, self.first, self.code_entry[c])

    def add_ids(self, ids, id_keys, s, offsets=None, width=0, shift=0):
        """Number slot s given as ids into a key table: ``ids`` (n_rows,) int32,
        -1 for no feature, id i standing for the key ``id_keys[i]`` (the
        n-grams that several window templates share, see
        :meth:`~skcrf._templates.TemplateSet.index`).

        With ``offsets`` (the sequences' row offsets), ``ids`` holds the ids
        of *extended* positions, ``width`` more per sequence than it has rows,
        and row t of sequence q reads ``ids[t + q * width + shift]``."""
        if self.coded[s]:
            raise ValueError(f"slot {s} was declared coded: give it with add_codes.")
        ids = np.ascontiguousarray(ids, dtype=np.int32)
        if offsets is None:
            offsets, width, shift = np.array([0, self.n_rows], dtype=np.int64), 0, 0
        offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        if (offsets[-1] != self.n_rows or not 0 <= shift <= width
                or ids.size != self.n_rows + width * (offsets.size - 1)):
            raise ValueError("ids do not match the rows, offsets and width given.")
        id_keys = np.ascontiguousarray(id_keys, dtype=np.uint64)
        self._reserve(min(id_keys.size, self.n_rows))
        self.n_ent = _index_ids(ids, offsets, width, shift, id_keys, s, self.n_slots,
                                self.n_ent, self.ent_keys, self.counts, self.first,
                                self.ids[:, self.slot_col[s]],
                                np.full(id_keys.size, -1, dtype=np.int32))

    def finish(self):
        n_ent, n_rows, n_slots = self.n_ent, self.n_rows, self.n_slots
        if n_ent >= 2 ** 31:
            raise ValueError(f"{n_ent} distinct features: more than int32 columns hold.")
        ent_keys, counts, first = (a[:n_ent] for a in (self.ent_keys, self.counts,
                                                         self.first))
        canon = (np.arange(n_ent) if self.disjoint_slots
                 else _canonical_entries(ent_keys, first))
        column = np.empty(n_ent, dtype=np.int32)
        _columns(canon, first, n_slots, np.zeros(n_rows + 1, dtype=np.int64), column)
        n_cols = int(column.max()) + 1 if n_ent else 0
        col_keys = np.empty(n_cols, dtype=np.uint64)
        col_counts = np.zeros(n_cols, dtype=np.int64)
        col_first = np.full(n_cols, np.iinfo(np.int64).max, dtype=np.int64)
        _gather_columns(ent_keys, counts, first, column, col_keys, col_counts, col_first)
        nnz = int(counts.sum())
        indptr = np.zeros(n_rows + 1, dtype=np.int64)
        indices = np.empty(nnz + 1, dtype=np.int32)     # + 1: scratch
        _csr_of_ids(self.ids, self.codes, self.coded, self.slot_col, self.code_entry,
                    column if n_ent else np.full(1, -1, dtype=np.int32), indptr, indices)
        if indptr[-1] != nnz:
            raise RuntimeError(f"CSR rows hold {indptr[-1]} features, counted {nnz}.")
        indices = indices[:nnz]
        self.ids = self.codes = None
        return KeyIndex(col_keys, col_counts, col_first, indptr, indices)


@njit(**_JIT)
def _index_slot_buckets(col, s, n_slots, e0, ent_keys, counts, first, ids):
    """Number the keys of one slot's column (entries from e0) bucket by bucket:
    the occurrences are counting-sorted by the top bits of their key's hash
    (stable: rows stay in order within a bucket), then each bucket is
    numbered with a table that stays in the cache. Returns the entries."""
    n = col.size
    nz = 0
    for r in range(n):
        nz += col[r] != np.uint64(0)
    rows = np.empty(nz, dtype=np.int64)
    hashes = np.empty(nz, dtype=np.uint64)
    q = 0
    for r in range(n):
        k = col[r]
        if k == np.uint64(0):
            ids[r] = -1
        else:
            rows[q] = r
            hashes[q] = _splitmix(k)
            q += 1
    start, order = hash_buckets(hashes, 2048)
    pk = np.empty(nz, dtype=np.uint64)
    ph = np.empty(nz, dtype=np.uint64)
    pr = np.empty(nz, dtype=np.int64)
    for j in range(nz):
        q = order[j]
        pr[j] = rows[q]
        ph[j] = hashes[q]
        pk[j] = col[rows[q]]
    tab = bucket_table(start)
    n_ent = e0
    for b in range(start.size - 1):
        lo, hi = start[b], start[b + 1]
        m = pow2_at_least(2 * (hi - lo))
        mask = np.uint64(m - 1)
        for j in range(lo, hi):
            k = pk[j]
            i = _probe_at(tab, ph[j] & mask, mask, k)
            if tab[i, 0] == np.uint64(0):        # rows ascend: its first occurrence
                tab[i, 0] = k
                tab[i, 1] = np.uint64(n_ent)
                _new_entry(ent_keys, counts, first, n_ent, k, pr[j] * n_slots + s)
                n_ent += 1
            e = np.int64(tab[i, 1])
            counts[e] += 1
            ids[pr[j]] = e
        tab[:m] = 0
    return n_ent


@njit(**_JIT)
def _new_entry(ent_keys, counts, first, e, key, pos):
    """Entry e: the key, no occurrence counted yet, first seen at ``pos``
    (row * n_slots + slot)."""
    ent_keys[e] = key
    counts[e] = 0
    first[e] = pos


@njit(**_JIT)
def _index_codes(codes, code_keys, s, n_slots, n_ent, ent_keys, counts, first, entry):
    """Number one slot's codes (entries from ``n_ent``, in order of first
    occurrence): an entry per code that occurs (``entry[code]``, -1 on entry),
    found by its code, no hashing. Returns the entries."""
    for r in range(codes.size):
        c = codes[r]
        if c == 0:
            continue
        e = entry[c]
        if e < 0:
            if c >= code_keys.size or code_keys[c] == np.uint64(0):
                raise ValueError("a template wrote a code that has no key")
            e = n_ent
            entry[c] = e
            _new_entry(ent_keys, counts, first, e, code_keys[c], r * n_slots + s)
            n_ent += 1
        counts[e] += 1
    return n_ent


@njit(**_JIT)
def _index_ids(ids_in, offsets, width, shift, id_keys, s, n_slots, n_ent, ent_keys,
               counts, first, ids, entry):
    """Number one slot given as ids into ``id_keys`` (-1: none): an entry per
    id that occurs, in order of first occurrence; row r of sequence q reads
    ``ids_in[r + q * width + shift]``; ``entry``: -1 per id, work space.
    Returns the entries."""
    for q in range(offsets.size - 1):
        d = q * width + shift
        for r in range(offsets[q], offsets[q + 1]):
            i = ids_in[r + d]
            if i < 0:
                ids[r] = -1
                continue
            if i >= id_keys.size:
                raise ValueError("an id past the key table")
            e = np.int64(entry[i])
            if e < 0:
                e = n_ent
                entry[i] = e
                _new_entry(ent_keys, counts, first, e, id_keys[i], r * n_slots + s)
                n_ent += 1
            counts[e] += 1
            ids[r] = e
    return n_ent


@njit(**_JIT)
def ext_dense(dense, n_dense, offsets, rel, lo, hi, out):
    """The dense id of the unit that a part at offset ``rel`` reads from every
    *extended* position p = lo .. T - 1 + hi of every sequence, into
    ``out[offsets[s] + s * (hi - lo) + p - lo]``: ``dense[t]`` for a unit of the
    sequence (-1: ABSENT), ``n_dense + d - 1`` for the padding d units before
    it, ``n_dense + MAX_OFFSET + d - 1`` for the padding d units after it.
    Window templates that read the same parts at offsets shifted by b
    (lo <= b <= hi) read the n-gram at p = t + b."""
    width = hi - lo
    for s in range(offsets.size - 1):
        t0 = offsets[s]
        T = offsets[s + 1] - t0
        x0 = t0 + s * width - lo
        for p in range(lo, T + hi):
            q = p + rel
            if q < 0:
                out[x0 + p] = n_dense - q - 1
            elif q >= T:
                out[x0 + p] = n_dense + MAX_OFFSET + q - T
            else:
                out[x0 + p] = dense[t0 + q]


@njit(**_JIT)
def unary_ids(a, n_a):
    """Number the distinct values of ``a`` (dense ids in ``[0, n_a)``, -1: none)
    in order of first occurrence: ``(id per position, first position of each id)``."""
    id_of = np.full(n_a, -1, dtype=np.int32)
    ids = np.empty(a.size, dtype=np.int32)
    first = np.empty(n_a, dtype=np.int64)
    m = 0
    for x in range(a.size):
        v = a[x]
        if v < 0:
            ids[x] = -1
            continue
        if id_of[v] < 0:
            id_of[v] = m
            first[m] = x
            m += 1
        ids[x] = id_of[v]
    return ids, first[:m].copy()


@njit(**_JIT)
def pair_ids(a, b, n_a, n_b):
    """Number the distinct pairs ``(a[x], b[x])`` (dense ids in ``[0, n_a)`` and
    ``[0, n_b)``; -1 in either: no pair) without hashing: the positions are
    counting-sorted by ``a``, then each group of equal ``a`` numbers its ``b``
    with an array of n_b stamps. Returns ``(id per position, first position of
    each id)``; ids are in order of ``a``, not of first occurrence."""
    n = a.size
    start = np.zeros(n_a + 1, dtype=np.int64)
    for x in range(n):
        if a[x] >= 0 and b[x] >= 0:
            start[a[x] + 1] += 1
    for i in range(n_a):
        start[i + 1] += start[i]
    fill = start[:-1].copy()
    order = np.empty(start[n_a], dtype=np.int64)
    ids = np.empty(n, dtype=np.int32)
    for x in range(n):
        if a[x] >= 0 and b[x] >= 0:
            order[fill[a[x]]] = x
            fill[a[x]] += 1
        else:
            ids[x] = -1
    stamp = np.full(n_b, -1, dtype=np.int64)
    id_of = np.empty(n_b, dtype=np.int32)
    first = np.empty(start[n_a], dtype=np.int64)
    m = 0
    for i in range(n_a):
        for j in range(start[i], start[i + 1]):
            x = order[j]
            v = b[x]
            if stamp[v] != i:
                stamp[v] = i
                id_of[v] = m
                first[m] = x          # positions ascend within a group
                m += 1
            ids[x] = id_of[v]
    return ids, first[:m].copy()


@njit(**_JIT)
def tuple_keys(ext, keys):
    """A hash key of the dense ids ``ext[:, x]`` of every position x (0 where
    any is -1), for n-grams of three parts or more."""
    for x in range(ext.shape[1]):
        h = np.uint64(0x6A09E667F3BCC909)
        absent = False
        for k in range(ext.shape[0]):
            v = ext[k, x]
            if v < 0:
                absent = True
                break
            h = _splitmix(h ^ np.uint64(v))
        keys[x] = np.uint64(0) if absent else _finish(h)


@njit(**_JIT)
def member_keys(units, tid, keys):
    """Key of each n-gram (``units[g]``) in the window template of id ``tid``:
    :func:`window_keys`'s hash of what it read."""
    h0 = _splitmix(np.uint64(tid))
    for g in range(units.shape[0]):
        h = h0
        for k in range(units.shape[1]):
            h = _splitmix(h ^ np.uint64(units[g, k]))
        keys[g] = _finish(h)


@njit(**_JIT)
def codes_to_keys(codes, code_keys, keys, slot0):
    """``keys[:, slot0 + k] = code_keys[k, codes[:, k]]`` (code 0: key 0)."""
    for k in range(codes.shape[1]):
        for t in range(codes.shape[0]):
            c = codes[t, k]
            keys[t, slot0 + k] = code_keys[k, c] if c != 0 else np.uint64(0)


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
def _index_slot(col, r0, s, n_slots, table, e0, n_ent, ent_keys, counts, first, ids):
    """Number the keys of one slot's column from row r0 (entries e0.. are this
    slot's, ``table``: key -> entry); stops before a new key that would fill the
    table past half or the entry arrays. Returns (next row, entries)."""
    limit = table.shape[0] // 2
    cap = ent_keys.size
    last_k, last_e = np.uint64(0), -1     # runs of one key (bias, flags, classes)
    for r in range(r0, col.size):
        k = col[r]
        if k == np.uint64(0):
            ids[r] = -1
            continue
        if k == last_k:
            counts[last_e] += 1
            ids[r] = last_e
            continue
        i = _probe(table, k)
        if table[i, 0] == k:
            e = np.int64(table[i, 1])
        else:
            if n_ent - e0 + 1 > limit or n_ent + 1 >= cap:
                return r, n_ent
            table[i, 0] = k
            table[i, 1] = np.uint64(n_ent)
            _new_entry(ent_keys, counts, first, n_ent, k, r * n_slots + s)
            e = n_ent
            n_ent += 1
        counts[e] += 1
        ids[r] = e
        last_k, last_e = k, e
    return col.size, n_ent


@njit(**_JIT)
def _reinsert(ent_keys, e0, e1, table):
    for e in range(e0, e1):
        i = _probe(table, ent_keys[e])
        table[i, 0] = ent_keys[e]
        table[i, 1] = np.uint64(e)


@njit(**_JIT)
def _canonical_entries(ent_keys, first):
    """For every (slot, key) entry, the entry of the same key that occurs
    first in the text (a key in several slots); merged in buckets of the top
    bits of the keys' hashes, so that each bucket's table stays in the cache."""
    n = ent_keys.size
    canon = np.arange(n)
    if n == 0:
        return canon
    h = np.empty(n, dtype=np.uint64)
    for e in range(n):
        h[e] = _splitmix(ent_keys[e] ^ np.uint64(0x51ED))
    start, order = hash_buckets(h, 1024)
    tab = bucket_table(start)      # key, its entry first in the text
    for b in range(start.size - 1):
        lo, hi = start[b], start[b + 1]
        m = pow2_at_least(2 * (hi - lo))
        mask = np.uint64(m - 1)
        for j in range(lo, hi):
            e = order[j]
            i = _probe_at(tab, h[e] & mask, mask, ent_keys[e])
            if tab[i, 0] == np.uint64(0):
                tab[i, 0] = ent_keys[e]
                tab[i, 1] = np.uint64(e)
            elif first[e] < first[np.int64(tab[i, 1])]:
                tab[i, 1] = np.uint64(e)
        for j in range(lo, hi):
            e = order[j]
            canon[e] = np.int64(tab[_probe_at(tab, h[e] & mask, mask, ent_keys[e]), 1])
        tab[:m] = 0
    return canon


@njit(**_JIT)
def _columns(canon, first, n_slots, rstart, column):
    """Column of every entry, into ``column``: the canonical entries
    (``canon[e] == e``) are numbered in order of first occurrence by a
    counting sort on the row of it (entries come slot by slot, so within a row
    they stay in slot order); the others take their canonical entry's column.
    ``rstart``: n_rows + 1 zeros, work space."""
    n = canon.size
    n_rows = rstart.size - 1
    for e in range(n):
        if canon[e] == e:
            rstart[first[e] // n_slots + 1] += 1
    for r in range(n_rows):
        rstart[r + 1] += rstart[r]
    for e in range(n):
        if canon[e] == e:
            r = first[e] // n_slots
            column[e] = rstart[r]
            rstart[r] += 1
    # within a row, entries of later slots were counted after earlier ones
    for e in range(n):
        if canon[e] != e:
            column[e] = column[canon[e]]


@njit(**_JIT)
def _gather_columns(ent_keys, counts, first, column, col_keys, col_counts, col_first):
    for e in range(ent_keys.size):
        c = column[e]
        col_counts[c] += counts[e]
        if first[e] < col_first[c]:
            col_keys[c] = ent_keys[e]
            col_first[c] = first[e]


@njit(**_JIT)
def _csr_of_ids(ids, codes, coded, slot_col, code_entry, column, indptr, indices):
    """CSR rows of the columns of the entries of every slot, in slot order
    within a row: a keyed slot's entries are in ``ids`` (n_rows, n_keyed,
    Fortran-ordered; -1: none), a coded slot's are its codes in ``codes``
    (0: none) through ``code_entry``. Written into ``indptr`` (n_rows + 1,
    zero-filled) and ``indices`` (nnz + 1: the last element is scratch); the
    caller allocates them with NumPy, which asks the kernel for huge pages for
    large arrays (Numba's allocator does not: 26M indices took 70x more page
    faults and ~40 ms more system time).

    A block of rows at a time: each slot's column of the block is read in
    order into a small row-major stage (-1 where the slot has no feature),
    then the stage is compacted row by row into ``indices`` without a branch
    (every value is written at the next free place, which advances only for a
    feature: the next value overwrites a -1). Against counting each row first
    and scattering each slot's features into the rows, with a branch per
    code: 76 against 122-136 ms for SXU's 25.8M features."""
    n_rows = indptr.size - 1
    n_slots = coded.size
    block = min(512, max(16, 32768 // max(n_slots, 1)))     # stage <= 128 KiB
    stage = np.empty((block, n_slots), dtype=np.int32)
    col_of = np.empty((code_entry.shape[0], 256), dtype=np.int32)
    for c in range(code_entry.shape[0]):
        for k in range(256):
            e = code_entry[c, k]                    # code 0 (no feature): -1
            col_of[c, k] = column[e] if e >= 0 else -1
    q = 0
    for r0 in range(0, n_rows, block):
        r1 = min(r0 + block, n_rows)
        for s in range(n_slots):
            j = slot_col[s]
            if coded[s]:
                for r in range(r0, r1):
                    stage[r - r0, s] = col_of[j, codes[r, j]]
            else:
                for r in range(r0, r1):
                    e = ids[r, j]
                    v = column[max(e, 0)]
                    stage[r - r0, s] = v if e >= 0 else -1
        for r in range(r0, r1):
            for s in range(n_slots):
                v = stage[r - r0, s]
                indices[q] = v
                q += v >= 0
            indptr[r + 1] = q


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
    (key 0; every key of the slot is written). With no parts the template is
    a constant feature. (One and two
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
                keys[t0 + t, slot] = (_finish(_splitmix(h0 ^ np.uint64(a))) if a != ABSENT
                                      else np.uint64(0))
        elif n_parts == 2:
            u0, o0 = sources[part_src[0]], part_off[0]
            u1, o1 = sources[part_src[1]], part_off[1]
            for t in range(T):
                a = _unit_at(u0, t0, T, t + o0)
                b = _unit_at(u1, t0, T, t + o1)
                h = _splitmix(_splitmix(h0 ^ np.uint64(a)) ^ np.uint64(b))
                keys[t0 + t, slot] = (_finish(h) if a != ABSENT and b != ABSENT
                                      else np.uint64(0))
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
                keys[t0 + t, slot] = np.uint64(0) if absent else _finish(h)


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
def feature_ids(sources, offsets, rows, seq, slots, slot_src, slot_off, out, src_of):
    """The ids the window template of ``slots[j]`` read at token ``rows[j]``
    (of sequence ``seq[j]``): ``out[j, k]`` for each part k of the slot
    (``slot_src[slot, k]`` the source row, -1 past its last part, and
    ``slot_off[slot, k]`` the offset; padding ids included), and
    ``src_of[j, k]``, the source row."""
    for j in range(rows.size):
        s = seq[j]
        t0 = offsets[s]
        T = offsets[s + 1] - t0
        sl = slots[j]
        for k in range(slot_src.shape[1]):
            src = slot_src[sl, k]
            src_of[j, k] = src
            if src < 0:
                continue
            out[j, k] = _unit_at(sources[src], t0, T, rows[j] - t0 + slot_off[sl, k])


@njit(**_JIT)
def unit_codes(ids, src_of, pad, absent, base, codes):
    """``codes[j, k]`` for what feature j read in part k (``ids[j, k]`` of source
    ``src_of[j, k]``; -1: no part): ``base + i`` for the i-th distinct (source,
    id) in order of first appearance, ``-(id - pad)`` for a padding id.
    Returns the distinct (source, id) pairs (``u_src``, ``u_id``) in that order."""
    direct = _direct_unit_codes(ids, src_of, pad, absent, base, codes)
    if direct is not None:
        return direct
    return _hashed_unit_codes(ids, src_of, pad, absent, base, codes)


@njit(**_JIT)
def _hashed_unit_codes(ids, src_of, pad, absent, base, codes):
    """:func:`unit_codes` for any ids: (source, id) numbered through a hash table."""
    n, m = ids.shape
    table = np.zeros((4096, 3), dtype=np.int64)     # 1 + source, id, code
    u_src = np.empty(1024, dtype=np.int64)
    u_id = np.empty(1024, dtype=np.int64)
    nu = 0
    for j in range(n):
        for k in range(m):
            src = src_of[j, k]
            if src < 0:
                continue
            u = ids[j, k]
            if u >= pad:
                codes[j, k] = -(u - pad)
                continue
            if u == absent:
                continue
            i = _code_row(table, src, u)
            if table[i, 0] == 0:
                if 2 * (nu + 1) > table.shape[0]:           # grow: rehash what is in
                    table = np.zeros((2 * table.shape[0], 3), dtype=np.int64)
                    for q in range(nu):
                        r = _code_row(table, u_src[q], u_id[q])
                        table[r, 0], table[r, 1], table[r, 2] = u_src[q] + 1, u_id[q], q
                    i = _code_row(table, src, u)
                if nu == u_src.size:
                    u_src = _grown(u_src, 2 * nu)
                    u_id = _grown(u_id, 2 * nu)
                table[i, 0], table[i, 1], table[i, 2] = src + 1, u, nu
                u_src[nu] = src
                u_id[nu] = u
                nu += 1
            codes[j, k] = base + table[i, 2]
    return u_src[:nu].copy(), u_id[:nu].copy()


#: ``unit_codes`` numbers ids through a direct-mapped array (one int32 per
#: possible id of each source) when every source's ids lie in [0, this)
_DIRECT_IDS = 1 << 22
#: ... and when the slots of all sources together are at most this many
#: (20 bytes of address space each, touched only where ids occur)
_DIRECT_TOTAL = 1 << 25


@njit(**_JIT)
def _direct_unit_codes(ids, src_of, pad, absent, base, codes):
    """:func:`unit_codes` when every non-padding id is in [0, _DIRECT_IDS) (code
    points, types, classes — the word-segmentation sources): an array indexed
    by (source, id) instead of a hash table, the same codes in the same order.
    Returns None when some id is out of that range. The array is zero-filled
    lazily by the OS, so only the pages of ids that occur are touched."""
    n, m = ids.shape
    n_src = 0
    for j in range(n):
        for k in range(m):
            if src_of[j, k] + 1 > n_src:
                n_src = src_of[j, k] + 1
    top = np.zeros(n_src + 1, dtype=np.int64)
    for j in range(n):
        for k in range(m):
            src = src_of[j, k]
            if src < 0:
                continue
            u = ids[j, k]
            if u >= pad or u == absent:
                continue
            if u < 0 or u >= _DIRECT_IDS:
                return None
            if u + 1 > top[src + 1]:
                top[src + 1] = u + 1
    for q in range(n_src):
        top[q + 1] += top[q]                        # each source's start
    if top[n_src] > _DIRECT_TOTAL:
        return None
    seen = np.zeros(top[n_src], dtype=np.int32)     # 1 + code; 0: not seen yet
    # at most one entry per slot of ``seen``: sized once, never grown in the
    # loop (an array reassigned inside the loop made it 6x slower: 70 vs 11 ms
    # for SXU's 1.4M features)
    u_src = np.empty(top[n_src], dtype=np.int64)
    u_id = np.empty(top[n_src], dtype=np.int64)
    nu = 0
    for j in range(n):
        for k in range(m):
            src = src_of[j, k]
            if src < 0:
                continue
            u = ids[j, k]
            if u >= pad:
                codes[j, k] = -(u - pad)
                continue
            if u == absent:
                continue
            at = top[src] + u
            if seen[at] == 0:
                u_src[nu] = src
                u_id[nu] = u
                nu += 1
                seen[at] = nu
            codes[j, k] = base + seen[at] - 1
    return u_src[:nu].copy(), u_id[:nu].copy()


@njit(**_JIT)
def _code_row(table, src, u):
    mask = np.uint64(table.shape[0] - 1)
    i = _splitmix(np.uint64(u) ^ (np.uint64(src) << np.uint64(48))) & mask
    while table[i, 0] != 0 and (table[i, 0] != src + 1 or table[i, 1] != u):
        i = (i + np.uint64(1)) & mask
    return i


@njit(**_JIT)
def flag_key(tid):
    """Key of the one feature of a flag slot of template id ``tid``."""
    return _finish(_splitmix(np.uint64(tid)))


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


def dictionary_matches(cps, offsets, table):
    """Every match of a dictionary word in the text: ``(start, length, word,
    sequence)`` int64 arrays, in text order.

    Every match of every length is found (not greedy maximum matching): from
    each position the scan extends while the text so far is a prefix of some
    dictionary word (``table``: see :func:`hash_words`). Matches never cross
    sequence boundaries. The arrays are allocated here, with NumPy (huge pages
    for large arrays, unlike Numba's allocator), room for two matches per
    character first, and grown when the scan stops full."""
    out = np.empty((4, max(16, 2 * cps.size)), dtype=np.int64)
    s, m = 0, 0
    while True:
        s, m = _matches_from(cps, offsets, table, s, m, out)
        if s == offsets.size - 1:
            return out[0, :m], out[1, :m], out[2, :m], out[3, :m]
        grown = np.empty((4, 2 * out.shape[1]), dtype=np.int64)
        grown[:, :m] = out[:, :m]
        out = grown


@njit(**_JIT)
def _matches_from(cps, offsets, table, s, m, out):
    """The matches of sequences s, s + 1, ... written to the rows of ``out``
    (start, length, word, sequence) from column m on, a whole sequence at a
    time, until the last sequence or until a sequence does not fit; returns
    (first sequence not written, matches). ``out`` is never reassigned here:
    growing arrays inside this loop made the whole scan about 1.5x slower."""
    start, length, word, seq = out[0], out[1], out[2], out[3]
    while s < offsets.size - 1:
        t0, T = offsets[s], offsets[s + 1] - offsets[s]
        m_seq = m
        for t in range(T):
            h = np.uint64(0x12345)
            for k in range(1, T - t + 1):
                h = _step(h, cps[t0 + t + k - 1])
                hk = h if h != np.uint64(0) else np.uint64(1)
                i = _probe(table, hk)
                if table[i, 0] != hk:
                    break  # no dictionary word starts with this text
                w = np.int64(table[i, 1])
                if w == 0:
                    continue
                if m_seq == start.size:
                    return s, m         # full: the caller grows out, asks again
                start[m_seq], length[m_seq], word[m_seq], seq[m_seq] = t0 + t, k, w, s
                m_seq += 1
        m = m_seq
        s += 1
    return s, m


@njit(**_JIT)
def count_matches(word, seq, fold, hits):
    """hits[w, fold[s]] += 1 for every match of word w - 1 in sequence s."""
    for j in range(word.size):
        hits[word[j], fold[seq[j]]] += 1


@njit(**_JIT)
def match_flags(start, length, word, seq, fold, hits, cap, flags):
    """Mark dictionary matches (:func:`dictionary_matches`):
    ``flags[t, 3 * (k - 1) + {0, 1, 2}]`` for "a word of (capped) length k
    begins / ends / passes through t". With more than one fold (``hits`` has
    a column per fold), a word counts in sequence s only if it also occurs in
    another fold than ``fold[s]``."""
    for j in range(start.size):
        w = np.uint64(word[j])
        if not seen_in_other_folds(hits, w, fold[seq[j]]):
            continue
        t, k = start[j], length[j]
        kk = min(k, cap) - 1
        flags[t, 3 * kk] = 1
        flags[t + k - 1, 3 * kk + 1] = 1
        for u in range(t + 1, t + k - 1):
            flags[u, 3 * kk + 2] = 1
