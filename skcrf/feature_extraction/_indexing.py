"""Numbering feature keys into columns at ``fit`` time (Numba).

:class:`SlotIndexer` numbers the keys of a (n_tokens, n_slots) key matrix one
slot's column at a time (the whole matrix need never exist), counting each
key and remembering its first occurrence; :class:`KeyIndex` is the result:
the distinct keys in order of first occurrence and the text as CSR rows of
their numbers.
"""

import numpy as np
from numba import njit

from ._hashing import (
    _JIT,
    _np_grown,
    _probe,
    _probe_at,
    _remap_csr,
    _splitmix,
    bucket_table,
    hash_buckets,
    pow2_at_least,
)


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
    templates of a :class:`~skcrf.feature_extraction._templates.TemplateSet` hash distinct ids
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
        :class:`~skcrf.feature_extraction._templates.CodedTemplate`): ``codes`` (n_rows,) uint8,
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
        :meth:`~skcrf.feature_extraction._templates.TemplateSet.index`).

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
        # slot-major views (n_keyed, n_rows), (n_coded, n_rows): C-ordered
        # whatever the slot counts (an (n_rows, 1) array is both C- and
        # Fortran-ordered, and Numba would compile the kernel once per layout)
        _csr_of_ids(self.ids.T, self.codes.T, self.coded, self.slot_col, self.code_entry,
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
def codes_to_keys(codes, code_keys, keys, slot0):
    """``keys[:, slot0 + k] = code_keys[k, codes[:, k]]`` (code 0: key 0)."""
    for k in range(codes.shape[1]):
        for t in range(codes.shape[0]):
            c = codes[t, k]
            keys[t, slot0 + k] = code_keys[k, c] if c != 0 else np.uint64(0)


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
    within a row: a keyed slot's entries are in ``ids`` (n_keyed, n_rows;
    -1: none), a coded slot's are its codes in ``codes`` (n_coded, n_rows,
    0: none) through ``code_entry``. Written into ``indptr`` (n_rows + 1,
    zero-filled) and ``indices`` (nnz + 1: the last element is scratch); the
    caller allocates them with NumPy, which asks the kernel for huge pages for
    large arrays (Numba's allocator does not: many more page faults).

    A block of rows at a time: each slot's column of the block is read in
    order into a small row-major stage (-1 where the slot has no feature),
    then the stage is compacted row by row into ``indices`` without a branch
    (every value is written at the next free place, which advances only for a
    feature: the next value overwrites a -1). Against counting each row first
    and scattering each slot's features into the rows, with a branch per
    code, this streams every array once."""
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
                    stage[r - r0, s] = col_of[j, codes[j, r]]
            else:
                for r in range(r0, r1):
                    e = ids[j, r]
                    v = column[max(e, 0)]
                    stage[r - r0, s] = v if e >= 0 else -1
        for r in range(r0, r1):
            for s in range(n_slots):
                v = stage[r - r0, s]
                indices[q] = v
                q += v >= 0
            indptr[r + 1] = q
