"""Emission scores: the sparse-times-dense product of a sequence's CSR rows
and the state weights, ``E[t, :] = sum_f x_tf W[f, :]``.

Dense feature-major weights (one contiguous row per non-zero, read as
quads when the row is 4-16 wide) or, in the training objective of a large
sparse model, one record per feature (:func:`_emissions_records`):
:func:`emissions` picks the loop when Numba compiles its caller. Rows of
rare features are scattered through memory, so the passes prefetch the row
they will need ``PREFETCH_DISTANCE`` non-zeros ahead.
"""

import numpy as np
from numba import njit
from numba.extending import overload

from ._jit import _JIT, any_layout
from .intrinsics import flat_view, prefetch_at, prefetch_row
from .lanes import (
    N_LANES,
    N_QUAD,
    qadd,
    qfma,
    qget,
    qload,
    qmake,
    qsplat,
    qzero,
    vadd,
    vlane,
    vload,
    vmul,
    vsplat,
    vstore,
)

# How many non-zeros ahead the sparse passes prefetch the feature row they
# will need (about the latency of a cache miss divided by the time per
# non-zero; the range around it measures alike).
PREFETCH_DISTANCE = 32

# the same and small offsets as unsigned integers, for the sparse passes'
# unsigned positions (Numba adds a negative-index wraparound to every read
# through a signed index)
_U = np.uint64

_PD = np.uint64(PREFETCH_DISTANCE)

_U1, _U4, _U8, _U12 = np.uint64(1), np.uint64(4), np.uint64(8), np.uint64(12)


@njit(inline="always", **_JIT)
def _prefetch_limit(indices, extra):
    """The positions p below which the non-zero ``PREFETCH_DISTANCE + extra``
    ahead exists (unsigned)."""
    return _U(max(indices.size - PREFETCH_DISTANCE - extra, 0))


@njit(**_JIT)
def _value_mask(data, indices):
    """``data[p & mask]`` is the value of non-zero p: mask -1 when ``data``
    has a value per non-zero, 0 when it is the one value 1.0 of binary
    features (no branch in the loops that read it)."""
    return np.int64(-1) if data.size == indices.size else np.int64(0)


@njit(inline="always", **_JIT)
def _emissions(indptr, indices, data, t0, T, W, out):
    """out[t, :] = sum over non-zeros (f, v) of token t0 + t of v * W[f, :L],
    L = ``out.shape[1]`` (at most ``W.shape[1]``: a training weight matrix has
    its rows padded to :func:`skcrf._kernels.lanes.row_width`).

    Rows of 4 to 16 columns are read as quads, the token's sums held in
    registers (:func:`_emissions_quads`); wider rows as vectors of 8
    (:func:`_emissions_wide`); narrower ones (1-3 labels) by
    :func:`_emissions_narrow`. Inlined into its callers, so each loop is
    compiled once, for an ``out`` of any layout (:func:`any_layout`)."""
    if _read_quad_count(W.shape[1]):
        _emissions_quads(indptr, indices, data, t0, T, W, any_layout(out))
    elif W.shape[1] >= _WIDE:
        _emissions_wide(indptr, indices, data, t0, T, W, any_layout(out))
    else:
        _emissions_narrow(indptr, indices, data, t0, T, W, any_layout(out))


@njit(**_JIT)
def _emissions_narrow(indptr, indices, data, t0, T, W, out):
    """:func:`_emissions` for rows of 1-3 columns: a scalar loop, two
    non-zeros per step: each step's multiply-adds go to ``out[t]`` once, so
    the chain of updates of that row through memory is half as long (four
    per step was no faster)."""
    L = out.shape[1]
    # unsigned positions (here and in the other sparse passes): no
    # negative-index wraparound in the code of every read
    lim, udm = _prefetch_limit(indices, 1), _U(_value_mask(data, indices))
    for t in range(T):
        for j in range(L):
            out[t, j] = 0.0
        p, p1 = _U(indptr[t0 + t]), _U(indptr[t0 + t + 1])
        while p + _U1 < p1:
            if p < lim:
                prefetch_row(W, indices[p + _PD])
                prefetch_row(W, indices[p + _PD + _U1])
            f, g = indices[p], indices[p + _U1]
            v, u = data[p & udm], data[(p + _U1) & udm]
            for j in range(L):
                out[t, j] += v * W[f, j] + u * W[g, j]
            p += _U(2)
        if p < p1:
            if p < lim:
                prefetch_row(W, indices[p + _PD])
            f = indices[p]
            v = data[p & udm]
            for j in range(L):
                out[t, j] += v * W[f, j]


#: rows at least this wide (beyond the quads' 16) are read as vectors of 8
_WIDE = 17


@njit(**_JIT)
def _emissions_wide(indptr, indices, data, t0, T, W, out):
    """:func:`_emissions` for rows of more than 16 columns: a token's sums
    are held in registers, up to four vectors of 8 (32 columns) at a time;
    a wider row is done in blocks of 32 columns, each a pass over the
    token's non-zeros. The last vector of a block ends at the block's end
    and may overlap the one before (columns 9-16 after 0-7 for 17 labels):
    the overlapping sums are the same additions in the same order, so both
    stores write equal values.

    Binary features (no multiply) go to two sets of sums, the even and the
    odd non-zeros', added at the end, as the quad rows do: each set's chain
    of dependent additions is half as long (one chain per vector made each
    non-zero wait for the previous one's addition). Valued features go to
    one set of sums in the order of the non-zeros, multiply and add
    rounded apart. Either way what the NumPy engine computes.

    Not a row of sums in memory: read, added to and written back for every
    non-zero, it would make each non-zero wait for the previous one's store."""
    L = out.shape[1]
    Lw = _U(W.shape[1])
    Wf = flat_view(W)
    dm = _value_mask(data, indices)
    lim, udm = _prefetch_limit(indices, 1), _U(dm)
    binary = dm == 0
    for t in range(T):
        p0, p1 = _U(indptr[t0 + t]), _U(indptr[t0 + t + 1])
        j0 = 0
        while j0 < L:
            j0, bw, nv, o0, o1, o2, o3 = _wide_block(j0, L)
            a0 = a1 = a2 = a3 = b0 = b1 = b2 = b3 = vsplat(0.0)
            p = p0
            if binary:
                while p + _U1 < p1:
                    if p < lim:
                        _prefetch_block(Wf, _U(indices[p + _PD]) * Lw, nv, o0, o1, o2, o3)
                        _prefetch_block(Wf, _U(indices[p + _PD + _U1]) * Lw, nv, o0, o1, o2,
                                        o3)
                    f, g = _U(indices[p]) * Lw, _U(indices[p + _U1]) * Lw
                    a0 = vadd(a0, vload(Wf, f + o0))
                    b0 = vadd(b0, vload(Wf, g + o0))
                    if nv > 1:
                        a1 = vadd(a1, vload(Wf, f + o1))
                        b1 = vadd(b1, vload(Wf, g + o1))
                    if nv > 2:
                        a2 = vadd(a2, vload(Wf, f + o2))
                        b2 = vadd(b2, vload(Wf, g + o2))
                    if nv > 3:
                        a3 = vadd(a3, vload(Wf, f + o3))
                        b3 = vadd(b3, vload(Wf, g + o3))
                    p += _U(2)
            while p < p1:
                # the last non-zero of an odd count; every one of valued features
                if p < lim:
                    _prefetch_block(Wf, _U(indices[p + _PD]) * Lw, nv, o0, o1, o2, o3)
                f = _U(indices[p]) * Lw
                v = vsplat(data[p & udm])
                a0 = vadd(a0, vmul(v, vload(Wf, f + o0)))
                if nv > 1:
                    a1 = vadd(a1, vmul(v, vload(Wf, f + o1)))
                if nv > 2:
                    a2 = vadd(a2, vmul(v, vload(Wf, f + o2)))
                if nv > 3:
                    a3 = vadd(a3, vmul(v, vload(Wf, f + o3)))
                p += _U1
            _store_vector_at(out, t, o0, vadd(a0, b0))
            if nv > 1:
                _store_vector_at(out, t, o1, vadd(a1, b1))
            if nv > 2:
                _store_vector_at(out, t, o2, vadd(a2, b2))
            if nv > 3:
                _store_vector_at(out, t, o3, vadd(a3, b3))
            j0 += bw


#: columns of a block of :func:`_emissions_wide`: four vectors of N_LANES (8)
#: held in registers (8 of AVX2's 16 registers, 4 of AVX-512's 32)
_WIDE_BLOCK = 4 * N_LANES


@njit(inline="always", **_JIT)
def _wide_block(j0, L):
    """The block of a wide row's ``L`` columns that starts at ``j0``:
    ``(start, width, n_vectors, o0, o1, o2, o3)``, the offsets of its (up to
    four) vectors of N_LANES columns; the next block starts at ``start +
    width``. A last block starts early enough to hold one whole vector, and a
    block's last vector ends at the block's end: either may overlap columns
    before it (the callers say what they do with those)."""
    j0 = min(j0, L - N_LANES)
    bw = min(_WIDE_BLOCK, L - j0)
    nv = (bw + N_LANES - 1) // N_LANES
    return (j0, bw, nv, _U(j0), _U(j0 + min(N_LANES, bw - N_LANES)),
            _U(j0 + min(2 * N_LANES, bw - N_LANES)), _U(j0 + min(3 * N_LANES, bw - N_LANES)))


@njit(inline="always", **_JIT)
def _prefetch_block(a, k, nv, o0, o1, o2, o3):
    """Prefetch every cache line of the block of a wide row that starts at
    ``a[k]`` (flat), its vectors at offsets ``o0..o3`` (:func:`_wide_block`:
    the last one at ``o3``, whatever ``nv``): a hint at the start of each
    vector and at the last one's end, none more than a line apart. A wide
    row spans up to seven lines (59 labels), the block up to five;
    :func:`skcrf._kernels.intrinsics.prefetch_row` covers only two."""
    prefetch_at(a, k + o0)
    if nv > 1:
        prefetch_at(a, k + o1)
    if nv > 2:
        prefetch_at(a, k + o2)
    if nv > 3:
        prefetch_at(a, k + o3)
    prefetch_at(a, k + o3 + _U(N_LANES - 1))


@njit(inline="always", **_JIT)
def _store_vector_at(out, t, off, v):
    """out[t, off + i] = lane i of v (8 columns)."""
    for i in range(N_LANES):
        out[t, off + _U(i)] = vlane(v, i)


@njit(**_JIT)
def _emissions_quads(indptr, indices, data, t0, T, W, out):
    """:func:`_emissions` for rows of 4 to 16 columns: each non-zero's row
    is read as nq quads into two sets of accumulators (even and odd
    non-zeros, two independent chains), the token's sums stored once. A
    width that is not a multiple of 4 (a fitted model's unpadded rows, e.g.
    9 labels) has its last quad end at the row's end and overlap the one
    before (columns 5-8 after 4-7): the overlapping sums are the same
    additions in the same order, so storing both writes equal values
    (:func:`_store_quad_at`), so 9 labels read as 3 quads instead of a
    scalar loop.

    Written out in full on purpose: binary features have a loop of their own
    (no multiply by the value 1.0); the tests on nq are the same for every
    non-zero (predicted branches, free); and helper functions for the row
    updates, even inlined, made the loop several times slower."""
    # (W: a (rows, width) matrix or its quad_rows view, read flat either way)
    Wf = flat_view(W)
    width = W.shape[-1]
    Lw = _U(width)
    nq = _read_quad_count(width)
    # where quads 1-3 start in a row: 4, 8, 12, but never past the row's end
    o1, o2, o3 = _quad_offset(1, width), _quad_offset(2, width), _quad_offset(3, width)
    dm = _value_mask(data, indices)
    lim, udm = _prefetch_limit(indices, 1), _U(dm)
    binary = dm == 0
    for t in range(T):
        a0 = a1 = a2 = a3 = b0 = b1 = b2 = b3 = qzero()
        p, p1 = _U(indptr[t0 + t]), _U(indptr[t0 + t + 1])
        if binary:
            while p + _U1 < p1:
                if p < lim:
                    prefetch_row(W, indices[p + _PD])
                    prefetch_row(W, indices[p + _PD + _U1])
                f, g = _U(indices[p]) * Lw, _U(indices[p + _U1]) * Lw
                a0 = qadd(a0, qload(Wf, f))
                b0 = qadd(b0, qload(Wf, g))
                if nq > 1:
                    a1 = qadd(a1, qload(Wf, f + o1))
                    b1 = qadd(b1, qload(Wf, g + o1))
                if nq > 2:
                    a2 = qadd(a2, qload(Wf, f + o2))
                    b2 = qadd(b2, qload(Wf, g + o2))
                if nq > 3:
                    a3 = qadd(a3, qload(Wf, f + o3))
                    b3 = qadd(b3, qload(Wf, g + o3))
                p += _U(2)
        while p < p1:
            # the last non-zero of an odd count; every one of valued features
            if p < lim:
                prefetch_row(W, indices[p + _PD])
            f = _U(indices[p]) * Lw
            v = qsplat(data[p & udm])
            a0 = qfma(v, qload(Wf, f), a0)
            if nq > 1:
                a1 = qfma(v, qload(Wf, f + o1), a1)
            if nq > 2:
                a2 = qfma(v, qload(Wf, f + o2), a2)
            if nq > 3:
                a3 = qfma(v, qload(Wf, f + o3), a3)
            p += _U1
        _store_quad_at(out, t, 0, qadd(a0, b0))
        if nq > 1:
            _store_quad_at(out, t, o1, qadd(a1, b1))
        if nq > 2:
            _store_quad_at(out, t, o2, qadd(a2, b2))
        if nq > 3:
            _store_quad_at(out, t, o3, qadd(a3, b3))


@njit(inline="always", **_JIT)
def _read_quad_count(width):
    """How many quads a weight row of ``width`` columns is *read* as by
    :func:`_emissions_quads`: ceil(width / 4) for 4 to 16 columns (the last
    quad may overlap the one before), 0 otherwise (a scalar loop)."""
    return (width + N_QUAD - 1) // N_QUAD if N_QUAD <= width <= 4 * N_QUAD else 0


@njit(inline="always", **_JIT)
def _quad_offset(k, width):
    """Column where quad k of a row of ``width`` columns starts when read:
    4k, or width - 4 for a last quad that would pass the row's end."""
    return _U(min(N_QUAD * k, width - N_QUAD))


@njit(inline="always", **_JIT)
def _store_quad_at(out, t, off, q):
    """out[t, off + i] = lane i of q, for the columns of ``out`` (a training
    matrix's padded rows are wider than ``out``)."""
    L = _U(out.shape[1])
    for i in range(N_QUAD):
        j = off + _U(i)
        if j < L:
            out[t, j] = qget(q, i)


@njit(inline="always", **_JIT)
def _quad_count(width):
    """How many quads a weight row of ``width`` columns is read as: 1-4 for
    4, 8, 12 or 16 columns (what ``skcrf._kernels.lanes.row_width`` pads to), 0 for
    any other width (a scalar loop)."""
    return width // N_QUAD if width % N_QUAD == 0 and width <= 4 * N_QUAD else 0


@njit(inline="always", **_JIT)
def _quad_of_row(P, r, k):
    """Values ``4k..4k+3`` of row r of P as a quad (0 beyond its columns)."""
    L = P.shape[1]
    j = 4 * k
    return qmake(P[r, j] if j < L else 0.0, P[r, j + 1] if j + 1 < L else 0.0,
                 P[r, j + 2] if j + 2 < L else 0.0, P[r, j + 3] if j + 3 < L else 0.0)


@njit(**_JIT)
def _emissions_records(indptr, rec, data, t0, T, R, out):
    """:func:`_emissions` for state weights kept as records (the training
    objective of a large model with few parameters per feature,
    :mod:`skcrf._training.records`): ``rec[p]`` is the offset in the flat
    float64 array ``R`` of the record of non-zero p's feature, either
    ``[n, label_0, weight_0, ..., label_n-1, weight_n-1]`` (its n
    parameters) or ``[-(1 + o)]``: the feature has a dense row of weights at
    ``R[o:o + width]`` (frequent features with many labels; ``width`` = L
    padded to whole vectors of N_LANES), added whole as vectors.

    One record per non-zero, mostly within one cache line, prefetched
    ``PREFETCH_DISTANCE`` non-zeros ahead: a dense row of L labels costs L / 8
    cache lines per non-zero, and most features of a many-label task
    co-occur with a handful of labels. A token's sums are built in a
    contiguous row (``out`` may be a strided lane view) and stored once;
    each column adds its non-zeros' terms in the order of the non-zeros,
    multiply and add rounded apart, dense row or not (a dense row's columns
    that are not parameters hold 0): the dense rows change no bit.

    :func:`skcrf._kernels.state_counts._add_state_counts_records` repeats this
    loop on purpose: as inlined helper functions the row updates made both
    passes several times slower."""
    L = out.shape[1]
    dm = _value_mask(data, rec)
    lim, udm = _prefetch_limit(rec, 0), _U(dm)
    binary = dm == 0
    nv = (L + N_LANES - 1) // N_LANES
    acc = np.zeros(nv * N_LANES)
    for t in range(T):
        acc[:] = 0.0
        p, p1 = _U(indptr[t0 + t]), _U(indptr[t0 + t + 1])
        while p < p1:
            if p < lim:
                prefetch_at(R, _U(rec[p + _PD]))
            o = _U(rec[p])
            h = R[o]
            if h < 0.0:
                base = _U(-h) - _U1
                if binary:
                    for i in range(nv):
                        k = _U(i * N_LANES)
                        vstore(acc, k, vadd(vload(acc, k), vload(R, base + k)))
                else:
                    v = vsplat(data[p])
                    for i in range(nv):
                        k = _U(i * N_LANES)
                        vstore(acc, k, vadd(vload(acc, k), vmul(v, vload(R, base + k))))
            else:
                v = data[p & udm]
                q = o + _U1
                for _ in range(int(h)):
                    acc[_U(R[q])] += v * R[q + _U1]
                    q += _U(2)
            p += _U1
        for j in range(L):
            out[t, j] = acc[j]


def emissions(indptr, indices, data, t0, T, W, out):
    """Emission scores of tokens t0..t0+T-1 into ``out`` from a dense state
    weight matrix ``W`` (:func:`_emissions`, any width), from quad rows (the
    3-D view of :func:`quad_rows`: :func:`_emissions_quads` alone) or from
    records (``W`` the flat record array, ``indices`` the offsets of the
    non-zeros' records: :func:`_emissions_records`); compiled code only."""
    raise NotImplementedError("a Numba overload; call it from compiled code")


@overload(emissions, jit_options=_JIT)
def _emissions_overload(indptr, indices, data, t0, T, W, out):
    if W.ndim == 3:
        def quads(indptr, indices, data, t0, T, W, out):
            # (the view as it is: a reshape here would be one more reference
            # count update of the weights, shared by every thread, per call)
            _emissions_quads(indptr, indices, data, t0, T, W, any_layout(out))
        return quads
    if W.ndim == 2:
        def dense(indptr, indices, data, t0, T, W, out):
            _emissions(indptr, indices, data, t0, T, W, out)
        return dense

    def records(indptr, indices, data, t0, T, W, out):
        _emissions_records(indptr, indices, data, t0, T, W, any_layout(out))
    return records


def quad_rows(M):
    """``M`` (..., rows, width) as the training objective and the decoding
    drivers hand it to compiled code: rows of 4 to 16 columns (a training
    matrix's rows for up to 16 labels, padded by
    :func:`skcrf._kernels.lanes.row_width`; a fitted model's rows of 4-16
    labels) as the view (..., rows, 1, width); any other width as it is.

    The view's type (one more dimension) is how compiled code knows, when
    Numba compiles it, that the rows are quads: :func:`emissions`,
    :func:`skcrf._kernels.state_counts.add_state_counts` and the lanes' pair
    counts then include only their quad loops, not also the loops for wide
    rows that a matrix of unknown width needs (which the compiler would
    otherwise build, and a cold first fit wait for, for nothing). The quad
    loops read it flat, as they read a matrix, and take it as it is: a
    reshape per call would update the reference count of the weights, which
    every thread shares (an atomic operation on one cache line that the
    threads pass back and forth); what needs the matrix once per block
    takes :func:`as_matrix`."""
    width = M.shape[-1]
    if N_QUAD <= width <= 4 * N_QUAD:
        return M.reshape(M.shape[:-1] + (1, width))
    return M


def as_matrix(M):
    """The (rows, width) matrix of a :func:`quad_rows` view, or ``M`` itself
    when it is a matrix already; compiled code only."""
    raise NotImplementedError("a Numba overload; call it from compiled code")


@overload(as_matrix, jit_options=_JIT, inline="always")
def _as_matrix_overload(M):
    if M.ndim == 3:
        return lambda M: M.reshape((M.shape[0], M.shape[2]))
    return lambda M: M
