"""Window-template keys and what each feature read (Numba).

The keys of window templates (:func:`window_keys`, all of a set in one pass:
:func:`windows_keys`), the dense n-gram ids that several templates share
(:func:`ext_dense`, :func:`unary_ids`, :func:`pair_ids`, :func:`tuple_keys`,
:func:`member_keys`), and, for naming features, the unit ids each kept
feature read (:func:`feature_ids`, :func:`unit_codes`).
"""

import numpy as np
from numba import njit

from ._hashing import _JIT, _finish, _grown, _splitmix
from ._units import ABSENT as _ABSENT
from ._units import MAX_OFFSET as _MAX_OFFSET
from ._units import PAD as _PAD


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


def unit_codes(ids, src_of, pad, absent, base, codes):
    """``codes[j, k]`` for what feature j read in part k (``ids[j, k]`` of source
    ``src_of[j, k]``; -1: no part): ``base + i`` for the i-th distinct (source,
    id) in order of first appearance, ``-(id - pad)`` for a padding id.
    Returns the distinct (source, id) pairs (``u_src``, ``u_id``) in that order.

    A Python function choosing between two kernels, so that the hash-table one,
    which the word-segmentation sources never need, is compiled only when ids
    are out of the direct kernel's range (a compiled chooser would compile both
    on a first run)."""
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
    # loop (Numba compiles an array reassigned inside a loop to slow code)
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
