"""Expected state counts: the state part of the gradient,
``gW[f, :] += x_tf * P[t, :]`` for every non-zero, with P the (weighted)
node marginals.

The mirror image of :mod:`.emissions` (same row layouts, same prefetching),
plus the shared-gradient variant in which each thread owns a range of
feature rows (:func:`_owned_state_counts`, with the row sort and splits it
needs).
"""

import numpy as np
from numba import njit
from numba.extending import overload

from ._jit import _JIT
from .emissions import (
    _PD,
    _U,
    _U1,
    _U4,
    _U8,
    _U12,
    _WIDE,
    PREFETCH_DISTANCE,
    _prefetch_block,
    _prefetch_limit,
    _quad_count,
    _quad_of_row,
    _value_mask,
    _wide_block,
)
from .intrinsics import flat_view, prefetch_at, prefetch_row
from .lanes import N_LANES, qadd, qfma, qload, qsplat, qstore, vadd, vload, vmul, vsplat, vstore


@njit(**_JIT)
def _add_state_counts(indptr, indices, data, t0, T, P, gW):
    """Expected state counts of one sequence: gW[f, :L] += x_tf * P[t, :] for
    every non-zero (t, f) of tokens t0..t0+T-1, with ``P[t]`` the token's node
    marginals times the sequence weight (L = ``P.shape[1]``), for rows of any
    width: :func:`_add_state_counts_wide` from 17 columns on,
    :func:`_add_state_counts_quads` below."""
    if gW.shape[1] >= _WIDE:
        _add_state_counts_wide(indptr, indices, data, t0, T, P, gW)
    else:
        _add_state_counts_quads(indptr, indices, data, t0, T, P, gW)


@njit(**_JIT)
def _add_state_counts_quads(indptr, indices, data, t0, T, P, gW):
    """:func:`_add_state_counts` for rows of up to 16 columns (correct for
    any width): rows of 4, 8, 12 or 16 columns as quads, the token's
    marginals in registers, the row update written out here rather than
    through :func:`_add_scaled_row` (LLVM did not inline that call per
    non-zero); others by a scalar loop."""
    # (gW: a (rows, width) matrix or its quad_rows view, written flat either way)
    dm = _value_mask(data, indices)
    lim, udm = _prefetch_limit(indices, 0), _U(dm)
    Lw = gW.shape[-1]
    uLw = _U(Lw)
    gf = flat_view(gW)
    for t in range(T):
        nq, q0, q1, q2, q3 = _row_quads(P, t, Lw)
        p, p1 = _U(indptr[t0 + t]), _U(indptr[t0 + t + 1])
        if nq == 0:
            while p < p1:
                k = _U(indices[p]) * uLw
                v = data[p & udm]
                for j in range(P.shape[1]):
                    gf[k + _U(j)] += v * P[t, j]
                p += _U1
        elif dm == 0:
            while p < p1:
                if p < lim:
                    prefetch_row(gW, indices[p + _PD])
                k = _U(indices[p]) * uLw
                qstore(gf, k, qadd(q0, qload(gf, k)))
                if nq > 1:
                    qstore(gf, k + _U4, qadd(q1, qload(gf, k + _U4)))
                if nq > 2:
                    qstore(gf, k + _U8, qadd(q2, qload(gf, k + _U8)))
                if nq > 3:
                    qstore(gf, k + _U12, qadd(q3, qload(gf, k + _U12)))
                p += _U1
        else:
            while p < p1:
                if p < lim:
                    prefetch_row(gW, indices[p + _PD])
                k = _U(indices[p]) * uLw
                v = qsplat(data[p])
                qstore(gf, k, qfma(v, q0, qload(gf, k)))
                if nq > 1:
                    qstore(gf, k + _U4, qfma(v, q1, qload(gf, k + _U4)))
                if nq > 2:
                    qstore(gf, k + _U8, qfma(v, q2, qload(gf, k + _U8)))
                if nq > 3:
                    qstore(gf, k + _U12, qfma(v, q3, qload(gf, k + _U12)))
                p += _U1


@njit(**_JIT)
def _add_state_counts_wide(indptr, indices, data, t0, T, P, gW):
    """:func:`_add_state_counts` for rows of more than 16 columns, in blocks
    of up to four vectors of 8 columns (as :func:`_emissions_wide` reads
    them): the token's marginals of a block are held in registers, and each
    non-zero's gradient row is loaded, added to and stored back a vector at
    a time. The last vector of a block ends at the block's end and may
    overlap the one before (columns 9-16 after 8-15 for 17 labels): all of a
    non-zero's vectors are loaded before any is stored, so the overlapping
    columns get the same sum twice, not the marginal twice. A last block
    narrower than a vector (columns 32-40 of 41) is one vector reaching back
    into the block before, whose columns it adds 0 to. Multiply and add
    rounded apart, as in the other row widths.

    Written out here, not as a row-update call per non-zero: such a call
    reloads the marginals from memory for every non-zero."""
    L = P.shape[1]
    Lw = _U(gW.shape[1])
    gf = flat_view(gW)
    prow, tail = np.zeros(L), np.zeros(N_LANES)
    dm = _value_mask(data, indices)
    lim, udm = _prefetch_limit(indices, 0), _U(dm)
    binary = dm == 0
    for t in range(T):
        for j in range(L):
            prow[j] = P[t, j]
        p0, p1 = _U(indptr[t0 + t]), _U(indptr[t0 + t + 1])
        j0 = 0
        while j0 < L:
            done = j0                          # columns 0..done-1 are added
            j0, bw, nv, o0, o1, o2, o3 = _wide_block(j0, L)
            q0, q1 = vload(prow, o0), vload(prow, o1)
            q2, q3 = vload(prow, o2), vload(prow, o3)
            if j0 < done:
                # a last vector reaching back into the previous block's
                # columns (added in an earlier pass): it adds 0 to them
                for i in range(N_LANES):
                    tail[i] = prow[j0 + i] if j0 + i >= done else 0.0
                q0 = vload(tail, 0)
            p = p0
            while p < p1:
                if p < lim:
                    _prefetch_block(gf, _U(indices[p + _PD]) * Lw, nv, o0, o1, o2, o3)
                k = _U(indices[p]) * Lw
                x0 = vload(gf, k + o0)
                x1 = vload(gf, k + o1) if nv > 1 else x0
                x2 = vload(gf, k + o2) if nv > 2 else x0
                x3 = vload(gf, k + o3) if nv > 3 else x0
                if binary:
                    x0, x1, x2, x3 = vadd(x0, q0), vadd(x1, q1), vadd(x2, q2), vadd(x3, q3)
                else:
                    v = vsplat(data[p & udm])
                    x0, x1 = vadd(x0, vmul(v, q0)), vadd(x1, vmul(v, q1))
                    x2, x3 = vadd(x2, vmul(v, q2)), vadd(x3, vmul(v, q3))
                vstore(gf, k + o0, x0)
                if nv > 1:
                    vstore(gf, k + o1, x1)
                if nv > 2:
                    vstore(gf, k + o2, x2)
                if nv > 3:
                    vstore(gf, k + o3, x3)
                p += _U1
            j0 += bw


@njit(inline="always", **_JIT)
def _row_quads(P, r, Lw):
    """Row r of P as the quads of a gradient row of ``Lw`` columns:
    ``(nq, q0, q1, q2, q3)``, nq = 0 when such rows are not read as quads."""
    nq = _quad_count(Lw)
    q0 = _quad_of_row(P, r, 0)
    q1 = _quad_of_row(P, r, 1) if nq > 1 else q0
    q2 = _quad_of_row(P, r, 2) if nq > 2 else q0
    q3 = _quad_of_row(P, r, 3) if nq > 3 else q0
    return nq, q0, q1, q2, q3


@njit(**_JIT)
def _add_scaled_row(gW, gf, f, v, P, r, nq, q0, q1, q2, q3):
    """gW[f, :L] += v * P[r, :]: as nq quads (``gf`` is gW flat, q0.. the
    row's quads from :func:`_row_quads`), or a scalar loop when nq = 0."""
    if nq == 0:
        for j in range(P.shape[1]):
            gW[f, j] += v * P[r, j]
        return
    k = f * gW.shape[1]
    s = qsplat(v)
    qstore(gf, k, qfma(s, q0, qload(gf, k)))
    if nq > 1:
        qstore(gf, k + 4, qfma(s, q1, qload(gf, k + 4)))
    if nq > 2:
        qstore(gf, k + 8, qfma(s, q2, qload(gf, k + 8)))
    if nq > 3:
        qstore(gf, k + 12, qfma(s, q3, qload(gf, k + 12)))


@njit(**_JIT)
def _add_state_counts_records(indptr, rec, data, t0, T, P, G):
    """:func:`_add_state_counts` for a gradient kept as records (the layout
    of :func:`skcrf._kernels.emissions._emissions_records`: ``G`` holds the
    weights' headers and labels, its value slots accumulate): for non-zero
    (f, v) of token t0 + t, ``v * P[t, label]`` is added to each of f's
    parameters, or the token's whole row of marginals to f's dense row
    (padded to whole vectors of N_LANES; the padding gets 0 added)."""
    L = P.shape[1]
    dm = _value_mask(data, rec)
    lim, udm = _prefetch_limit(rec, 0), _U(dm)
    binary = dm == 0
    nv = (L + N_LANES - 1) // N_LANES
    prow = np.zeros(nv * N_LANES)
    for t in range(T):
        for j in range(L):
            prow[j] = P[t, j]
        p, p1 = _U(indptr[t0 + t]), _U(indptr[t0 + t + 1])
        while p < p1:
            if p < lim:
                prefetch_at(G, _U(rec[p + _PD]))
            o = _U(rec[p])
            h = G[o]
            if h < 0.0:
                base = _U(-h) - _U1
                if binary:
                    for i in range(nv):
                        k = _U(i * N_LANES)
                        vstore(G, base + k, vadd(vload(G, base + k), vload(prow, k)))
                else:
                    v = vsplat(data[p])
                    for i in range(nv):
                        k = _U(i * N_LANES)
                        vstore(G, base + k, vadd(vload(G, base + k),
                                                 vmul(v, vload(prow, k))))
            else:
                v = data[p & udm]
                q = o + _U1
                for _ in range(int(h)):
                    G[q + _U1] += v * prow[_U(G[q])]
                    q += _U(2)
            p += _U1


def add_state_counts(indptr, indices, data, t0, T, P, gW):
    """Expected state counts of tokens t0..t0+T-1 (marginals ``P``) added to a
    dense gradient matrix (:func:`_add_state_counts`), to quad rows (the view
    of :func:`skcrf._kernels.emissions.quad_rows`: :func:`_add_state_counts_quads`
    alone) or to records (``gW``
    flat, ``indices`` the offsets of the non-zeros' records:
    :func:`_add_state_counts_records`); compiled code only."""
    raise NotImplementedError("a Numba overload; call it from compiled code")


@overload(add_state_counts, jit_options=_JIT)
def _add_state_counts_overload(indptr, indices, data, t0, T, P, gW):
    if gW.ndim == 3:
        def quads(indptr, indices, data, t0, T, P, gW):
            _add_state_counts_quads(indptr, indices, data, t0, T, P, gW)
        return quads
    if gW.ndim == 2:
        def dense(indptr, indices, data, t0, T, P, gW):
            # (_add_state_counts written out, not called: the call per sequence,
            # or the same function inlined by Numba, made the evaluations at 17
            # labels slower in paired A/Bs; see docs/benchmarks.md)
            if gW.shape[1] >= _WIDE:
                _add_state_counts_wide(indptr, indices, data, t0, T, P, gW)
            else:
                _add_state_counts_quads(indptr, indices, data, t0, T, P, gW)
        return dense

    def records(indptr, indices, data, t0, T, P, gW):
        _add_state_counts_records(indptr, indices, data, t0, T, P, gW)
    return records


@njit(**_JIT)
def _owned_state_counts(k, t_lo, t_hi, tb0, indptr, indices, data, split, P, gW):
    """Expected state counts of tokens ``t_lo..t_hi-1`` for the feature rows
    thread ``k`` owns: each token's non-zeros are sorted by row, and
    ``split[t, k]:split[t, k + 1]`` (relative to ``indptr[t]``) are the ones in
    thread ``k``'s rows, so no other thread writes them.

    The rows to prefetch are this thread's, ``PREFETCH_DISTANCE`` of its own
    non-zeros ahead (a second cursor walks them), not the next non-zeros in
    storage, which mostly belong to the other threads."""
    dm = _value_mask(data, indices)
    gf = flat_view(gW)
    # the look-ahead cursor: token ta, position pa in its owned range [pa, pe)
    ta = t_lo
    pa, pe = 0, 0
    if ta < t_hi:
        pa, pe = indptr[ta] + split[ta, k], indptr[ta] + split[ta, k + 1]
    for _ in range(PREFETCH_DISTANCE):
        pa, pe, ta = _advance(pa, pe, ta, t_hi, k, indptr, split)
    for t in range(t_lo, t_hi):
        p0 = indptr[t]
        r = t - tb0   # (no row view per token: its reference count, shared by
        #               the threads, would bounce between their caches)
        nq, q0, q1, q2, q3 = _row_quads(P, r, gW.shape[1])
        for p in range(p0 + split[t, k], p0 + split[t, k + 1]):
            if pa < pe:
                prefetch_row(gW, indices[pa])
            pa, pe, ta = _advance(pa, pe, ta, t_hi, k, indptr, split)
            _add_scaled_row(gW, gf, indices[p], data[p & dm], P, r, nq, q0, q1, q2, q3)


@njit(**_JIT)
def _advance(pa, pe, ta, t_hi, k, indptr, split):
    """Move the look-ahead cursor of :func:`_owned_state_counts` one owned
    non-zero on (past tokens with none); ``pa == pe`` at the end."""
    pa += 1
    while pa >= pe and ta + 1 < t_hi:
        ta += 1
        pa, pe = indptr[ta] + split[ta, k], indptr[ta] + split[ta, k + 1]
    return pa, pe, ta


@njit(**_JIT)
def _sort_token_rows(indptr, indices, data, sort_data):
    """Sort every token's non-zeros by feature row, in place; ``data`` follows
    when ``sort_data`` (a value per non-zero). (Insertion sort for the usual few non-zeros per
    token, a merge sort beyond.)"""
    for t in range(indptr.size - 1):
        p0, p1 = indptr[t], indptr[t + 1]
        if p1 - p0 > 32:
            order = np.argsort(indices[p0:p1], kind="mergesort")
            indices[p0:p1] = indices[p0:p1][order]
            if sort_data:
                data[p0:p1] = data[p0:p1][order]
            continue
        for p in range(p0 + 1, p1):
            f = indices[p]
            v = data[p] if sort_data else 0.0
            q = p - 1
            while q >= p0 and indices[q] > f:
                indices[q + 1] = indices[q]
                if sort_data:
                    data[q + 1] = data[q]
                q -= 1
            indices[q + 1] = f
            if sort_data:
                data[q + 1] = v


@njit(**_JIT)
def _row_splits(indptr, indices, row_bounds, split):
    """``split[t, k]``: how many of token t's (sorted) non-zeros lie in rows
    below ``row_bounds[k]``."""
    K = row_bounds.size - 1
    for t in range(indptr.size - 1):
        p0, p1 = indptr[t], indptr[t + 1]
        p = p0
        for k in range(K + 1):
            while p < p1 and indices[p] < row_bounds[k]:
                p += 1
            split[t, k] = p - p0
