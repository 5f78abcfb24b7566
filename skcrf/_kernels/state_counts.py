"""Expected state counts: the state part of the gradient,
``gW[f, :] += x_tf * P[t, :]`` for every non-zero, with P the (weighted)
node marginals.

The mirror image of :mod:`.emissions` (same row layouts, same prefetching),
plus the shared-gradient variant in which each thread owns a range of
feature rows (:func:`_owned_state_counts`, with the row sort and splits it
needs).
"""

import numpy as np
from numba import njit, types
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
    _prefetch_limit,
    _quad_count,
    _quad_of_row,
    _value_mask,
)
from .intrinsics import prefetch_row
from .lanes import qadd, qfma, qload, qsplat, qstore, vadd, vload, vmul, vsplat, vstore


@njit(**_JIT)
def _add_state_counts(indptr, indices, data, t0, T, P, gW):
    """Expected state counts of one sequence: gW[f, :L] += x_tf * P[t, :] for
    every non-zero (t, f) of tokens t0..t0+T-1, with ``P[t]`` the token's node
    marginals times the sequence weight (L = ``P.shape[1]``).

    Rows of 4-16 columns as quads, the token's marginals in registers; the
    row update written out here rather than through :func:`_add_scaled_row`
    (LLVM did not inline that call per non-zero)."""
    dm = _value_mask(data, indices)
    lim, udm = _prefetch_limit(indices, 0), _U(dm)
    Lw = gW.shape[1]
    uLw = _U(Lw)
    gf = gW.reshape(-1)
    if Lw >= _WIDE:
        _add_state_counts_wide(indptr, indices, data, t0, T, P, gW)
        return
    for t in range(T):
        nq, q0, q1, q2, q3 = _row_quads(P, t, Lw)
        p, p1 = _U(indptr[t0 + t]), _U(indptr[t0 + t + 1])
        if nq == 0:
            while p < p1:
                f = indices[p]
                v = data[p & udm]
                for j in range(P.shape[1]):
                    gW[f, j] += v * P[t, j]
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
    """:func:`_add_state_counts` for rows of more than 16 columns: the
    token's marginals copied to a contiguous row (zero in a padded row's
    last columns), added to each non-zero's gradient row 8 columns at a time
    (then 4, then one by one); multiply and add rounded apart, as the
    scalar loop did."""
    L = P.shape[1]
    W = gW.shape[1]
    uW = _U(W)
    gf = gW.reshape(-1)
    prow = np.zeros(W)
    n8 = W // 8 * 8
    n4 = W // 4 * 4
    dm = _value_mask(data, indices)
    lim, udm = _prefetch_limit(indices, 0), _U(dm)
    for t in range(T):
        for j in range(L):
            prow[j] = P[t, j]
        p, p1 = _U(indptr[t0 + t]), _U(indptr[t0 + t + 1])
        while p < p1:
            if p < lim:
                prefetch_row(gW, indices[p + _PD])
            k = _U(indices[p]) * uW
            _add_wide_row(gf, k, data[p & udm], dm == 0, prow, n8, n4, W)
            p += _U1


@njit(**_JIT)
def _add_wide_row(gf, k, v, binary, prow, n8, n4, W):
    """gf[k:k + W] += v * prow (v = 1 when ``binary``: no multiply)."""
    j = 0
    if binary:
        while j < n8:
            vstore(gf, k + _U(j), vadd(vload(gf, k + _U(j)), vload(prow, j)))
            j += 8
        if j < n4:
            qstore(gf, k + _U(j), qadd(qload(gf, k + _U(j)), qload(prow, j)))
            j += 4
        while j < W:
            gf[k + _U(j)] += prow[j]
            j += 1
    else:
        vv = vsplat(v)
        while j < n8:
            vstore(gf, k + _U(j), vadd(vload(gf, k + _U(j)), vmul(vv, vload(prow, j))))
            j += 8
        while j < W:
            gf[k + _U(j)] += v * prow[j]
            j += 1


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
def _add_state_counts_compact(indptr, indices, data, t0, T, P, rp, lab, g):
    """:func:`_add_state_counts` for a compact gradient: g[k] += v * P[t, lab[k]]
    for the parameters k of every non-zero (f, v) of token t0 + t."""
    nnz = indices.size
    dm = _value_mask(data, indices)
    rp2 = rp.reshape((rp.size, 1))
    g2 = g.reshape((g.size, 1))
    lab2 = lab.reshape((lab.size, 1))
    n_par = g.size
    for t in range(T):
        for p in range(indptr[t0 + t], indptr[t0 + t + 1]):
            if p + 2 * PREFETCH_DISTANCE < nnz:
                prefetch_row(rp2, indices[p + 2 * PREFETCH_DISTANCE])
            if p + PREFETCH_DISTANCE < nnz:
                k = rp[indices[p + PREFETCH_DISTANCE]]
                if k < n_par:
                    prefetch_row(g2, k)
                    prefetch_row(lab2, k)
            f = indices[p]
            v = data[p & dm]
            for k in range(rp[f], rp[f + 1]):
                g[k] += v * P[t, lab[k]]


def add_state_counts(indptr, indices, data, t0, T, P, gW):
    """Expected state counts of tokens t0..t0+T-1 (marginals ``P``) added to a
    dense (:func:`_add_state_counts`) or compact (``gW = (rp, lab, g)``:
    :func:`_add_state_counts_compact`) gradient; compiled code only."""
    raise NotImplementedError("a Numba overload; call it from compiled code")


@overload(add_state_counts, jit_options=_JIT)
def _add_state_counts_overload(indptr, indices, data, t0, T, P, gW):
    if isinstance(gW, types.Array):
        def dense(indptr, indices, data, t0, T, P, gW):
            _add_state_counts(indptr, indices, data, t0, T, P, gW)
        return dense

    def compact(indptr, indices, data, t0, T, P, gW):
        _add_state_counts_compact(indptr, indices, data, t0, T, P, gW[0], gW[1], gW[2])
    return compact


def chunk_gradient(gW, c):
    """Chunk c's gradient buffer, cleared: ``gW[c]`` of a dense (n_chunks,
    rows, width) array; of a compact ``(rp, lab, g0, g_rest)``, ``(rp, lab,
    g0)`` for chunk 0 (g0: the state part of the gradient the objective
    returns) and ``(rp, lab, g_rest[c - 1])`` for the others; compiled code
    only."""
    raise NotImplementedError("a Numba overload; call it from compiled code")


@overload(chunk_gradient, jit_options=_JIT)
def _chunk_gradient_overload(gW, c):
    if isinstance(gW, types.Array):
        def dense(gW, c):
            gWc = gW[c]
            gWc[:, :] = 0.0
            return gWc
        return dense

    def compact(gW, c):
        gc = gW[2] if c == 0 else gW[3][c - 1]
        gc[:] = 0.0
        return (gW[0], gW[1], gc)
    return compact


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
    gf = gW.reshape(-1)
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
