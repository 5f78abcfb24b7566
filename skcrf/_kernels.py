"""Numba kernels: emissions, forward-backward, gradient accumulation, Viterbi,
k-best, path scores, and the fit-time pair counts.

Every function here takes only contiguous arrays and scalars. The inputs are

* the token features as CSR arrays ``indptr`` (int64, n_tokens + 1),
  ``indices`` (int32) and ``data`` (float64), and ``offsets`` (int64,
  n_sequences + 1): sequence ``s`` owns token rows ``offsets[s]:offsets[s + 1]``
  (:class:`skcrf._sequences.KernelArrays`). Binary features (every value 1:
  what :class:`~skcrf.SequenceFeaturizer` gives) come as a ``data`` of one
  element, 1.0, instead of one per non-zero: the kernels read value p as
  ``data[p & _value_mask(data, indices)]``;
* the state weights as a dense feature-major matrix ``W`` of shape
  ``(n_features, n_labels)`` (one contiguous row per feature: the emission of
  a non-zero is a short contiguous multiply-add) or, in the training
  objective of a large model with few parameters per feature, compact:
  ``(rp, lab, th)``, feature f's parameters ``th[rp[f]:rp[f + 1]]`` for the
  labels ``lab[rp[f]:rp[f + 1]]`` (:func:`emissions`, :func:`add_state_counts`);
* transition weights ``A[from, to]`` and start / end weights.

The forward-backward recursions run in probability space with per-position
scaling (as CRFsuite does): ``exp`` is taken once per (token, label) cell and
once per transition matrix, not once per L*L cell and token as a log-sum-exp
would. A disallowed transition has weight -inf, i.e. 0 after ``exp``.
The expected transition counts are accumulated during the backward pass,
which computes the products they need anyway (the lane kernel sums them
after it, as a small matrix product per batch: :func:`_lane_pair_counts`).

Where the time goes (``benchmarks/profile_objective.py``): the two sparse
passes (emission scores, expected state counts) read one feature row per
non-zero, and the rows of rare features are scattered through memory, so
both passes prefetch the row they will need ``PREFETCH_DISTANCE`` non-zeros
ahead. The recursions of one sequence are latency-bound chains of L-term dot
products, so the training objective runs them for ``N_LANES`` sequences at
once, one per SIMD lane (:func:`_lane_posteriors`, on the vector type of
:mod:`skcrf._lanes`): the sequences of a chunk are visited by length within
windows of consecutive ones, so that each batch needs little padding; the
one-sequence kernel (:func:`_forward_backward`) remains for the rest, for
inference, and as the reference the lane kernel is tested against.

Each pass over sequences is a chunk kernel ``*_chunk(c, bounds, ...)`` for
the sequences ``bounds[c]:bounds[c + 1]`` plus a ``prange`` driver
``*_parallel(bounds, ...)``; :func:`skcrf._parallel.run_chunks` picks one.
Chunks that accumulate (the objective) own a slice of every gradient buffer,
so the drivers need no atomics.

The kernels use ``fastmath=False`` (-inf weights and their ``exp`` of 0 must
keep IEEE semantics), except the scaled recursion, which only allows
reassociation and fused multiply-adds (``_JIT_RECURSION``).
"""

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from ._intrinsics import exp_nonpositive, prefetch_row
from ._lanes import (N_LANES, N_QUAD, qadd, qfma, qget, qload, qmake, qsplat, qstore,
                     qzero, vadd, vdiv, vexponent, vfma, vhmax, vhmin, vlane, vload,
                     vexp_nonpositive, vmantissa, vmax, vmin, vmul, vselect, vsplat, vstore, vsub,
                     vsum)

_JIT = dict(cache=True, nogil=True, fastmath=False, error_model="numpy")
# The recursions may reassociate sums and fuse multiply-adds, so that their
# L-term dot products vectorise (1.3x at 9 labels, 2x at 20). These flags
# assume nothing about inf or NaN, so the IEEE semantics the -inf weights
# rely on are kept; the results differ from strict order in the last bits.
_JIT_RECURSION = dict(_JIT, fastmath={"reassoc", "contract"})
# exp's polynomial with fused multiply-adds (as accurate: tested within 1.25 ulp
# of the true value); no reassociation, which would change its range reduction
_JIT_EXP = dict(_JIT, fastmath={"contract"})

# How many non-zeros ahead the sparse passes prefetch the feature row they
# will need (about the latency of a cache miss divided by the time per
# non-zero; 16-64 measured alike on CoNLL-2002, none 1.7x slower).
PREFETCH_DISTANCE = 32
# the same and small offsets as unsigned integers, for the sparse passes'
# unsigned positions (Numba adds a negative-index wraparound to every read
# through a signed index: 8-13 % of those passes' time on CoNLL-2002,
# benchmarks/results/pairs_ab.txt)
_U = np.uint64
_PD = np.uint64(PREFETCH_DISTANCE)
_U1, _U4, _U8, _U12 = np.uint64(1), np.uint64(4), np.uint64(8), np.uint64(12)


@njit(inline="always", **_JIT)
def _prefetch_limit(indices, extra):
    """The positions p below which the non-zero ``PREFETCH_DISTANCE + extra``
    ahead exists (unsigned)."""
    return _U(max(indices.size - PREFETCH_DISTANCE - extra, 0))


# --------------------------------------------------------------------------
# per-sequence building blocks
# --------------------------------------------------------------------------
@njit(**_JIT)
def _value_mask(data, indices):
    """``data[p & mask]`` is the value of non-zero p: mask -1 when ``data``
    has a value per non-zero, 0 when it is the one value 1.0 of binary
    features (no branch in the loops that read it)."""
    return np.int64(-1) if data.size == indices.size else np.int64(0)


@njit(**_JIT)
def _emissions(indptr, indices, data, t0, T, W, out):
    """out[t, :] = sum over non-zeros (f, v) of token t0 + t of v * W[f, :L],
    L = ``out.shape[1]`` (at most ``W.shape[1]``: a training weight matrix has
    its rows padded to :func:`skcrf._lanes.row_width`).

    Rows of 4 to 16 columns are read as quads, the token's sums held in
    registers (:func:`_emissions_quads`); other widths go through a scalar
    loop, two non-zeros per step: each step's multiply-adds go to ``out[t]``
    once, so the chain of updates of that row through memory is half as long
    (measured 1.12x on CoNLL-2002; four per step was no faster)."""
    if _read_quad_count(W.shape[1]):
        _emissions_quads(indptr, indices, data, t0, T, W, out)
        return
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


@njit(**_JIT)
def _emissions_quads(indptr, indices, data, t0, T, W, out):
    """:func:`_emissions` for rows of 4 to 16 columns: each non-zero's row
    is read as nq quads into two sets of accumulators (even and odd
    non-zeros, two independent chains), the token's sums stored once. A
    width that is not a multiple of 4 (a fitted model's unpadded rows, e.g.
    9 labels) has its last quad end at the row's end and overlap the one
    before (columns 5-8 after 4-7): the overlapping sums are the same
    additions in the same order, so storing both writes equal values
    (:func:`_store_quad_at`). 9 labels read as 3 quads instead of a scalar
    loop: CoNLL-2002's test set's emissions in 1.6 instead of 2.4 ms
    (measured with the rows padded to 12, which read the same 3 quads).

    Written out in full on purpose: binary features have a loop of their own
    (a multiply by the value 1.0 cost 40 %); the tests on nq are the same for
    every non-zero (predicted branches, measured free); and helper functions
    for the row updates, even inlined, made the loop 2-3x slower."""
    Wf = W.reshape(-1)
    Lw = _U(W.shape[1])
    nq = _read_quad_count(W.shape[1])
    # where quads 1-3 start in a row: 4, 8, 12, but never past the row's end
    o1, o2, o3 = _quad_offset(1, W.shape[1]), _quad_offset(2, W.shape[1]), \
        _quad_offset(3, W.shape[1])
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
    4, 8, 12 or 16 columns (what ``skcrf._lanes.row_width`` pads to), 0 for
    any other width (a scalar loop)."""
    return width // N_QUAD if width % N_QUAD == 0 and width <= 4 * N_QUAD else 0


@njit(inline="always", **_JIT)
def _quad_of_row(P, r, k):
    """Values ``4k..4k+3`` of row r of P as a quad (0 beyond its columns)."""
    L = P.shape[1]
    j = 4 * k
    return qmake(P[r, j] if j < L else 0.0, P[r, j + 1] if j + 1 < L else 0.0,
                 P[r, j + 2] if j + 2 < L else 0.0, P[r, j + 3] if j + 3 < L else 0.0)


@njit(**_JIT_EXP)
def _exp_shifted(E, U):
    """U[t] = exp(E[t] - max(E[t])); returns the sum of the maxima.

    Kept out of the (reassociating) recursion so that the exp's range
    reduction is evaluated in the order written (only multiply-adds are
    fused, see ``_JIT_EXP``). The shifted scores are
    written first and exponentiated in place in one flat loop over the
    sequence's T * L cells: the polynomial then vectorises over whole
    vectors, not over rows of L labels and a remainder (measured on
    CoNLL-2002, 9 labels: 12.6 -> 7.8 ms for the corpus, with fused
    multiply-adds)."""
    T, L = E.shape
    total = 0.0
    for t in range(T):
        m = E[t, 0]
        for j in range(1, L):
            if E[t, j] > m:
                m = E[t, j]
        for j in range(L):
            U[t, j] = E[t, j] - m
        total += m
    u = U.reshape(T * L)
    for k in range(T * L):
        u[k] = exp_nonpositive(u[k])
    return total


#: the smallest normal float64: a forward value below it has lost precision
_TINY = np.finfo(np.float64).tiny
_LN2 = np.log(2.0)


@njit(**_JIT)
def _underflowed(alpha, expAT, t, j):
    """Whether ``alpha[t, j]``, found below the smallest normal number, is
    an underflow rather than a structural 0 (no allowed transition into j
    from a label that is reachable at t - 1).

    The scaled recursion is exact only while every reachable forward value
    stays a normal number: a label whose paths are e^-745 below the best at
    some position becomes 0, and if its paths win later (a large emission
    ahead that only it may transition to) log Z silently misses them. The
    caller then falls back to the log-space recursion.
    """
    for i in range(alpha.shape[1]):
        if alpha[t - 1, i] > 0.0 and expAT[j, i] > 0.0:
            return True
    return False


@njit(**_JIT_RECURSION)
def _forward_backward(E, U, expA, expAT, exp_start, exp_end, alpha, beta, scale,
                      work, w, gA):
    """Scaled forward-backward on one sequence of length T = E.shape[0] >= 1.

    On return ``U[t] = exp(E[t] - max(E[t]))``, ``alpha[t]`` and ``beta[t]``
    are the scaled forward / backward vectors whose product is the node
    marginal P(y_t = j), ``scale[t]`` the forward normaliser. Returns
    ``log Z`` up to the shifts the caller applied to ``expA`` / start / end.
    Returns NaN when the scaled recursion underflowed (every path got
    probability 0 in floating point, or a reachable forward value fell below
    the smallest normal number: see :func:`_underflowed`); ``gA`` is then
    untouched.

    ``expAT`` is ``expA`` transposed (C-contiguous): the forward step is then
    one dot product per label, whose chains the CPU runs side by side.
    When ``w != 0`` the backward pass also adds ``w`` times the expected
    transition counts, ``sum_t P(y_{t-1} = i, y_t = j)``, to ``gA``: the pair
    marginal at t is ``alpha[t-1, i] * expA[i, j] * U[t, j] * beta[t, j] /
    scale[t]``, and the backward step computes exactly those products.
    """
    T, L = E.shape
    logz = _exp_shifted(E, U)
    # forward
    s = 0.0
    for j in range(L):
        alpha[0, j] = exp_start[j] * U[0, j]
        s += alpha[0, j]
        if alpha[0, j] < _TINY and exp_start[j] > 0.0:
            return np.nan                     # underflow: see _underflowed
    if not (s > 0.0 and s < np.inf):
        return np.nan
    scale[0] = s
    inv = 1.0 / s
    for j in range(L):
        alpha[0, j] *= inv
    logz += np.log(s)
    for t in range(1, T):
        s = 0.0
        for j in range(L):
            acc = 0.0
            for i in range(L):
                acc += alpha[t - 1, i] * expAT[j, i]
            acc *= U[t, j]
            alpha[t, j] = acc
            s += acc
            if acc < _TINY and _underflowed(alpha, expAT, t, j):
                return np.nan
        if not (s > 0.0 and s < np.inf):
            return np.nan
        scale[t] = s
        inv = 1.0 / s
        for j in range(L):
            alpha[t, j] *= inv
        logz += np.log(s)
    s = 0.0
    for j in range(L):
        s += alpha[T - 1, j] * exp_end[j]
    if not (s > 0.0 and s < np.inf):
        return np.nan
    logz += np.log(s)
    # backward (and the pair marginals of (t, t + 1))
    inv = 1.0 / s
    for j in range(L):
        beta[T - 1, j] = exp_end[j] * inv
    for t in range(T - 2, -1, -1):
        inv = 1.0 / scale[t + 1]
        for j in range(L):
            work[j] = U[t + 1, j] * beta[t + 1, j] * inv
        if w == 0.0:
            for i in range(L):
                acc = 0.0
                for j in range(L):
                    acc += expA[i, j] * work[j]
                beta[t, i] = acc
        else:
            for i in range(L):
                acc = 0.0
                wa = w * alpha[t, i]
                for j in range(L):
                    prod = expA[i, j] * work[j]
                    acc += prod
                    gA[i, j] += wa * prod
                beta[t, i] = acc
    return logz


@njit(**_JIT)
def _forward_backward_log(E, A, start, end, la, lb):
    """Log-space forward-backward: the slow, underflow-free reference.

    Used only for a sequence on which the scaled recursion underflowed.
    Fills ``la`` / ``lb`` with log forward / backward scores and returns
    log Z (exact, no shifts).
    """
    T, L = E.shape
    for j in range(L):
        la[0, j] = start[j] + E[0, j]
    for t in range(1, T):
        for j in range(L):
            m = -np.inf
            for i in range(L):
                v = la[t - 1, i] + A[i, j]
                if v > m:
                    m = v
            acc = 0.0
            if m > -np.inf:
                for i in range(L):
                    acc += np.exp(la[t - 1, i] + A[i, j] - m)
                la[t, j] = m + np.log(acc) + E[t, j]
            else:
                la[t, j] = -np.inf
    for j in range(L):
        lb[T - 1, j] = end[j]
    for t in range(T - 2, -1, -1):
        for i in range(L):
            m = -np.inf
            for j in range(L):
                v = A[i, j] + E[t + 1, j] + lb[t + 1, j]
                if v > m:
                    m = v
            acc = 0.0
            if m > -np.inf:
                for j in range(L):
                    acc += np.exp(A[i, j] + E[t + 1, j] + lb[t + 1, j] - m)
                lb[t, i] = m + np.log(acc)
            else:
                lb[t, i] = -np.inf
    m = -np.inf
    for j in range(L):
        v = la[T - 1, j] + end[j]
        if v > m:
            m = v
    if m == -np.inf:
        return -np.inf
    acc = 0.0
    for j in range(L):
        acc += np.exp(la[T - 1, j] + end[j] - m)
    return m + np.log(acc)


@njit(**_JIT)
def _add_state_counts(indptr, indices, data, t0, T, P, gW):
    """Expected state counts of one sequence: gW[f, :L] += x_tf * P[t, :] for
    every non-zero (t, f) of tokens t0..t0+T-1, with ``P[t]`` the token's node
    marginals times the sequence weight (L = ``P.shape[1]``).

    Rows of 4-16 columns as quads, the token's marginals in registers; the
    row update written out here rather than through :func:`_add_scaled_row`
    (a call per non-zero that LLVM did not inline: 1.5x slower)."""
    dm = _value_mask(data, indices)
    lim, udm = _prefetch_limit(indices, 0), _U(dm)
    Lw = gW.shape[1]
    uLw = _U(Lw)
    gf = gW.reshape(-1)
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
def _accumulate_pairs_log(E, A, la, lb, logz, w, gA):
    T, L = E.shape
    for t in range(1, T):
        for i in range(L):
            for j in range(L):
                v = la[t - 1, i] + A[i, j] + E[t, j] + lb[t, j] - logz
                if v > -np.inf:
                    gA[i, j] += w * np.exp(v)


@njit(**_JIT)
def _sequence_marginals(E, U, A, start, end, expA, expAT, exp_start, exp_end,
                        alpha, beta, scale, work, la, lb, w, gA):
    """Forward-backward with the log-space fallback. Returns (log Z, scaled).

    ``scaled`` is False when the fallback ran; then ``alpha`` holds the node
    marginals, ``beta`` ones, and ``la``/``lb`` the log-space quantities.
    The returned log Z is relative to the shifts of ``expA`` etc.; the caller
    adds them back only when ``scaled`` is True.
    """
    logz = _forward_backward(E, U, expA, expAT, exp_start, exp_end, alpha, beta,
                             scale, work, w, gA)
    if logz == logz:
        return logz, True
    T, L = E.shape
    logz = _forward_backward_log(E, A, start, end, la, lb)
    if w != 0.0:
        _accumulate_pairs_log(E, A, la, lb, logz, w, gA)
    for t in range(T):
        for j in range(L):
            alpha[t, j] = np.exp(la[t, j] + lb[t, j] - logz)
            beta[t, j] = 1.0
    return logz, False


@njit(**_JIT)
def _posterior_buffers(lo, hi, offsets, L):
    """Work arrays for the longest sequence of lo..hi-1:
    (E, alpha, beta, U, scale, work, la, lb)."""
    maxT = _max_length(lo, hi, offsets)
    return (np.empty((maxT, L)), np.empty((maxT, L)), np.empty((maxT, L)),
            np.empty((maxT, L)), np.empty(maxT), np.empty(L),
            np.empty((maxT, L)), np.empty((maxT, L)))


@njit(**_JIT)
def _posteriors(t0, T, indptr, indices, data, W, A, start, end, expA, expAT,
                exp_start, exp_end, shifts, bufs, w, gA):
    """Emissions and forward-backward of the sequence at rows t0..t0+T-1 (T >= 1).

    Leaves the node marginals as ``alpha * beta`` in ``bufs`` and returns
    ``(log Z, scaled)``; ``scaled`` is False when the log-space fallback ran.
    With ``w != 0`` also adds ``w`` times the expected transition counts to ``gA``.
    """
    E, alpha, beta, U, scale, work, la, lb = bufs
    emissions(indptr, indices, data, t0, T, W, E)
    logz, scaled = _sequence_marginals(
        E[:T], U[:T], A, start, end, expA, expAT, exp_start, exp_end,
        alpha[:T], beta[:T], scale[:T], work, la[:T], lb[:T], w, gA)
    if scaled:
        logz += _shift_total(shifts, T)
    return logz, scaled


@njit(**_JIT)
def _shift_total(shifts, T):
    """What the shifted exponentials left out of log Z for a length-T sequence.

    ``shifts = (start_shift, end_shift, transition_shift)``: the caller
    exponentiated ``start - shifts[0]``, ``end - shifts[1]`` and
    ``A - shifts[2]`` to keep them in range.
    """
    return shifts[0] + shifts[1] + (T - 1) * shifts[2]


@njit(**_JIT)
def _max_length(lo, hi, offsets):
    maxT = 0
    for s in range(lo, hi):
        maxT = max(maxT, offsets[s + 1] - offsets[s])
    return maxT


# --------------------------------------------------------------------------
# eight sequences of one length at once, one per SIMD lane (skcrf._lanes)
# --------------------------------------------------------------------------
@njit(**_JIT)
def _lane_run(i, hi, order, offsets):
    """How many sequences from position ``i`` of ``order`` go through the
    next step: ``N_LANES`` (together, in lanes) when there are that many
    before ``hi`` and none is empty, else 1 (alone)."""
    if i + N_LANES > hi:
        return 1
    for b in range(N_LANES):
        s = order[i + b]
        if offsets[s + 1] == offsets[s]:
            return 1
    return N_LANES


@njit(**_JIT)
def _lane_buffers(maxT, L):
    """Work arrays of :func:`_lane_posteriors` for sequences up to ``maxT``
    long: (U8, alpha8, beta8, scale8, work8, w8, check8, first8, lengths);
    the ``*8`` are lane arrays (``skcrf._lanes``), ``E`` one sequence's
    emissions."""
    T = max(maxT, 1)
    n = T * L * N_LANES
    return (np.empty(n), np.empty(n), np.empty(n),
            np.empty(T * N_LANES), np.empty(L * N_LANES), np.empty(N_LANES),
            np.empty(n), np.empty(T * N_LANES), np.empty(N_LANES, dtype=np.int64))


@njit(**_JIT)
def _reachable(expA, exp_start, maxT):
    """``reach[t, j]``: whether label j can be reached at position t at all
    (some allowed path leads there; the same for every sequence), for
    t < maxT, and ``settled``: the first t from which every row equals the
    last one. The scaled recursion's underflow test (:func:`_underflowed`)
    asks exactly this of a forward value found below the smallest normal
    number, provided that no value before it underflowed."""
    L = expA.shape[0]
    T = max(maxT, 1)
    reach = np.zeros((T, L), dtype=np.bool_)
    for j in range(L):
        reach[0, j] = exp_start[j] > 0.0
    for t in range(1, T):
        for i in range(L):
            if reach[t - 1, i]:
                for j in range(L):
                    if expA[i, j] > 0.0:
                        reach[t, j] = True
    settled = T - 1
    while settled > 0:
        same = True
        for j in range(L):
            if reach[settled - 1, j] != reach[T - 1, j]:
                same = False
        if not same:
            break
        settled -= 1
    return reach, settled


@njit(**_JIT)
def _lane_posteriors(seqs, indptr, indices, data, offsets, weights, W, expA, exp_start,
                     exp_end, shifts, reach, lb, gA8, gS, gE, logz_out):
    """Forward-backward of the ``N_LANES`` non-empty sequences ``seqs`` side
    by side, one per lane: the same arithmetic as :func:`_forward_backward`
    on each (scaled recursion, expected transition counts on the way back),
    on lane vectors laid out (t, label, lane).

    The lanes share their last position: a sequence of length T_b occupies
    positions ``d_b = T - T_b .. T - 1`` of its lane, T the longest of the
    batch. Its recursion starts at ``d_b`` (the start weights are selected
    there); the padding before it has emission scores 0, is excluded from
    the underflow test, and is cleared (forward values and exp-emissions 0,
    scale 1) before the backward pass, so that it adds nothing to the
    expected counts and its backward values stay 0 however long it is.
    ``reach`` is what :func:`_reachable` returns for the longest sequence of
    the chunk, ``lb`` what :func:`_lane_buffers` returns.

    Returns False, having changed nothing but the work arrays, when any of
    the sequences needs the underflow-safe path (the caller then runs them
    one by one through :func:`_sequence_marginals`). Otherwise writes each
    sequence's log Z to ``logz_out``, adds its weighted pair sums (its
    expected transition counts but for the factor ``expA[i, j]``,
    :func:`_lane_pair_counts`) to the lane array ``gA8`` ((i, j, lane), summed
    over lanes and multiplied by ``expA`` by the caller, :func:`_add_lane_pairs`)
    and its start / end marginals to ``gS`` / ``gE``, and
    leaves ``weight * P(y_t = j)`` in ``alpha8`` (``lb[1]``, read with
    :func:`_lane_marginals`).
    """
    U8, alpha8, beta8, scale8, work8, w8, check8, first8, lengths = lb
    L = expA.shape[0]   # (W's rows may be padded)
    NL = N_LANES
    T = 0
    for b in range(NL):
        lengths[b] = offsets[seqs[b] + 1] - offsets[seqs[b]]
        T = max(T, lengths[b])
    # which cells the underflow test watches (0) or not (inf): none of the
    # padding, and the reachable labels, which from position ``settled`` of a
    # sequence on are those of the last row of ``reach``; where each lane
    # starts (first8 = 1)
    reach, settled = reach
    for b in range(NL):
        d = T - lengths[b]
        for t in range(T):
            first8[t * NL + b] = 1.0 if t == d else 0.0
            scale8[t * NL + b] = np.inf if t < d else 0.0   # (scale8: free until
    for t in range(T):                                      # the forward pass)
        pad = vload(scale8, t * NL)
        for j in range(L):
            vstore(check8, (t * L + j) * NL,
                   vadd(pad, vsplat(0.0 if reach[reach.shape[0] - 1, j] else np.inf)))
    for b in range(NL):
        d = T - lengths[b]
        for t in range(min(settled, lengths[b])):
            for j in range(L):
                check8[((d + t) * L + j) * NL + b] = 0.0 if reach[t, j] else np.inf
    # emissions, one sequence at a time, straight into lane b after its
    # padding (a strided view of the lane array)
    for t in range(T):
        for j in range(L):
            vstore(U8, (t * L + j) * NL, vsplat(0.0))
    U3 = U8[:T * L * NL].reshape((T, L, NL))
    for b in range(NL):
        d = T - lengths[b]
        emissions(indptr, indices, data, offsets[seqs[b]], lengths[b], W, U3[d:, :, b])
        w8[b] = weights[seqs[b]]
    # U = exp(E - max_j E), the maxima summed per lane (0 in the padding)
    maxima = vsplat(0.0)
    for t in range(T):
        k0 = t * L * NL
        m = vload(U8, k0)
        for j in range(1, L):
            m = vmax(m, vload(U8, k0 + j * NL))
        for j in range(L):
            vstore(U8, k0 + j * NL, vsub(vload(U8, k0 + j * NL), m))
        maxima = vadd(maxima, m)
    for k in range(T * L):
        vstore(U8, k * NL, vexp_nonpositive(vload(U8, k * NL)))
    # forward, tracking each lane's smallest watched value, and the product
    # of its scales (from its first position on) as mantissa * 2**exponent
    lowest = vsplat(np.inf)
    one = vsplat(1.0)
    live = vload(first8, 0)
    s = vsplat(0.0)
    for j in range(L):
        a = vmul(vsplat(exp_start[j]), vload(U8, j * NL))
        vstore(alpha8, j * NL, a)
        s = vadd(s, a)
        lowest = vmin(lowest, vadd(a, vload(check8, j * NL)))
    vstore(scale8, 0, s)
    s_live = vselect(live, s, one)
    s_low, s_high = s_live, s_live
    mant, expo = vmantissa(s_live), vexponent(s_live)
    inv = vdiv(one, s)
    for j in range(L):
        vstore(alpha8, j * NL, vmul(vload(alpha8, j * NL), inv))
    for t in range(1, T):
        p0 = (t - 1) * L * NL
        k0 = t * L * NL
        first = vload(first8, t * NL)
        starts = vhmax(first) > 0.0
        s = vsplat(0.0)
        for j in range(L):
            acc = vsplat(0.0)
            for i in range(L):
                acc = vfma(vload(alpha8, p0 + i * NL), vsplat(expA[i, j]), acc)
            if starts:
                acc = vselect(first, vsplat(exp_start[j]), acc)
            acc = vmul(acc, vload(U8, k0 + j * NL))
            vstore(alpha8, k0 + j * NL, acc)
            s = vadd(s, acc)
            lowest = vmin(lowest, vadd(acc, vload(check8, k0 + j * NL)))
        vstore(scale8, t * NL, s)
        live = vmax(live, first)
        s_live = vselect(live, s, one)
        s_low, s_high = vmin(s_low, s_live), vmax(s_high, s_live)
        mant = vmul(mant, s_live)
        expo = vadd(expo, vexponent(mant))
        mant = vmantissa(mant)
        inv = vdiv(one, s)
        for j in range(L):
            vstore(alpha8, k0 + j * NL, vmul(vload(alpha8, k0 + j * NL), inv))
    k0 = (T - 1) * L * NL
    s = vsplat(0.0)
    for j in range(L):
        s = vfma(vload(alpha8, k0 + j * NL), vsplat(exp_end[j]), s)
    # log Z per lane; any underflow, empty path set or overflow: give up
    # (every scale is a positive normal number, and so is the end sum)
    if not (vhmin(lowest) >= _TINY and vhmin(s_low) >= _TINY and vhmax(s_high) < np.inf):
        return False
    for b in range(NL):
        lz = (vlane(maxima, b) + np.log(vlane(mant, b)) + vlane(expo, b) * _LN2
              + np.log(vlane(s, b)) + _shift_total(shifts, lengths[b]))
        if not (lz > -np.inf and lz < np.inf):
            return False
        work8[b] = lz
    for b in range(NL):
        logz_out[seqs[b]] = work8[b]
    # clear the padding: no forward mass, no emission (so that the backward
    # values there are 0 too, not products of up to T unscaled steps), scale 1
    for b in range(NL):
        for t in range(T - lengths[b]):
            scale8[t * NL + b] = 1.0
            for j in range(L):
                alpha8[(t * L + j) * NL + b] = 0.0
                U8[(t * L + j) * NL + b] = 0.0
    # backward. Step t leaves work_t = U_{t+1} beta_{t+1} / scale_{t+1} in
    # U8's row t + 1 (the exp-emissions are not read again), from which
    # _lane_pair_counts sums the pair marginals of (t, t + 1) afterwards
    inv = vdiv(vsplat(1.0), s)
    for j in range(L):
        vstore(beta8, k0 + j * NL, vmul(vsplat(exp_end[j]), inv))
    for t in range(T - 2, -1, -1):
        k0 = t * L * NL
        n0 = (t + 1) * L * NL
        inv = vdiv(vsplat(1.0), vload(scale8, (t + 1) * NL))
        for j in range(L):
            vstore(U8, n0 + j * NL, vmul(vmul(vload(U8, n0 + j * NL),
                                              vload(beta8, n0 + j * NL)), inv))
        for i in range(L):
            acc = vsplat(0.0)
            for j in range(L):
                acc = vfma(vsplat(expA[i, j]), vload(U8, n0 + j * NL), acc)
            vstore(beta8, k0 + i * NL, acc)
    w = vload(w8, 0)
    _lane_pair_counts(alpha8, U8, w, T, L, gA8)
    # weighted node marginals, in place of alpha; start and end marginals
    for k in range(T * L):
        vstore(alpha8, k * NL, vmul(w, vmul(vload(alpha8, k * NL), vload(beta8, k * NL))))
    k0 = (T - 1) * L * NL
    for j in range(L):
        gE[j] += vsum(vload(alpha8, k0 + j * NL))
    for b in range(NL):
        k0 = (T - lengths[b]) * L * NL
        for j in range(L):
            gS[j] += alpha8[k0 + j * NL + b]
    return True


@njit(**_JIT_RECURSION)
def _lane_pair_counts(alpha8, work8, w, T, L, gA8):
    """Add a lane batch's weighted pair sums to ``gA8``:
    ``gA8[i, j] += w sum_t alpha_t[i] work_t[j]``, t = 0..T-2, with ``work_t``
    (= U_{t+1} beta_{t+1} / scale_{t+1}) in row t + 1 of ``work8``. The pair
    marginal of (i, j) at (t, t + 1) is ``expA[i, j] alpha_t[i] work_t[j]``;
    ``expA[i, j]`` does not depend on t or on the sequence, so
    :func:`_add_lane_pairs` multiplies the sums by it once.

    The sum over t is a small matrix product per lane (alpha^T work), computed
    in blocks of 3 x 3 cells held in registers over tiles of positions whose
    rows stay in cache (adding each position's products to ``gA8``
    would load and store every cell at every position). Blocks overlap at
    the edges when L is not a multiple of 3: those cells are computed twice,
    added once."""
    NL = N_LANES
    LN = L * NL
    tile = max(2, _PAIR_TILE_VALUES // LN)
    for t0 in range(0, T - 1, tile):
        t1 = min(t0 + tile, T - 1)
        for i0 in range(0, L, 3):
            i1, i2 = min(i0 + 1, L - 1), min(i0 + 2, L - 1)
            for j0 in range(0, L, 3):
                j1, j2 = min(j0 + 1, L - 1), min(j0 + 2, L - 1)
                c00 = c01 = c02 = c10 = c11 = c12 = c20 = c21 = c22 = vsplat(0.0)
                for t in range(t0, t1):
                    a, n = t * LN, (t + 1) * LN
                    x0, x1, x2 = (vload(alpha8, a + i0 * NL), vload(alpha8, a + i1 * NL),
                                  vload(alpha8, a + i2 * NL))
                    y0, y1, y2 = (vload(work8, n + j0 * NL), vload(work8, n + j1 * NL),
                                  vload(work8, n + j2 * NL))
                    c00, c01, c02 = vfma(x0, y0, c00), vfma(x0, y1, c01), vfma(x0, y2, c02)
                    c10, c11, c12 = vfma(x1, y0, c10), vfma(x1, y1, c11), vfma(x1, y2, c12)
                    c20, c21, c22 = vfma(x2, y0, c20), vfma(x2, y1, c21), vfma(x2, y2, c22)
                _add_pair_row(gA8, w, i0, j0, j1, j2, L, c00, c01, c02)
                if i1 > i0:
                    _add_pair_row(gA8, w, i1, j0, j1, j2, L, c10, c11, c12)
                if i2 > i1:
                    _add_pair_row(gA8, w, i2, j0, j1, j2, L, c20, c21, c22)

# values in the alpha (and in the work) rows of one tile of _lane_pair_counts:
# 32 KiB each (4,096 measured 1-3 % faster than 1,024 on CoNLL-2002's 9 labels
# and on 22 labels: fewer stores of the cells, the rows still in L2)
_PAIR_TILE_VALUES = 4096


@njit(inline="always", **_JIT_RECURSION)
def _add_pair_row(gA8, w, i, j0, j1, j2, L, c0, c1, c2):
    """gA8[i, j] += w c for the distinct columns j of j0 <= j1 <= j2 (lane
    vectors; a repeated column, an edge block's, is added once)."""
    g = (i * L + j0) * N_LANES
    vstore(gA8, g, vfma(w, c0, vload(gA8, g)))
    if j1 > j0:
        g = (i * L + j1) * N_LANES
        vstore(gA8, g, vfma(w, c1, vload(gA8, g)))
    if j2 > j1:
        g = (i * L + j2) * N_LANES
        vstore(gA8, g, vfma(w, c2, vload(gA8, g)))


@njit(**_JIT)
def _lane_setup(lo, hi, offsets, L, expA, exp_start):
    """What the sequences ``lo..hi-1`` need for :func:`_lane_posteriors`: the
    work arrays, the reachable labels, and the lane array of transition
    counts (zero)."""
    maxT = _max_length(lo, hi, offsets)
    return (_lane_buffers(maxT, L), _reachable(expA, exp_start, maxT),
            np.zeros(L * L * N_LANES))


@njit(**_JIT)
def _lane_marginals(P8, b, lengths, L, P, r0):
    """The sequence of lane ``b`` (``lengths[b]`` tokens, the last ones of the
    batch's ``max(lengths)`` positions) from the lane array ``P8`` ((t, label,
    lane)) into rows ``r0..r0+lengths[b]-1`` of ``P``."""
    T = 0
    for k in range(N_LANES):
        T = max(T, lengths[k])
    d = T - lengths[b]
    for t in range(lengths[b]):
        for j in range(L):
            P[r0 + t, j] = P8[((d + t) * L + j) * N_LANES + b]


@njit(**_JIT)
def _add_lane_pairs(gA8, expA, gA):
    """gA[i, j] += expA[i, j] times the lanes of gA8's (i, j) summed (the
    pair sums of :func:`_lane_pair_counts`); gA8 back to 0."""
    L = gA.shape[0]
    for i in range(L):
        for j in range(L):
            g = (i * L + j) * N_LANES
            gA[i, j] += expA[i, j] * vsum(vload(gA8, g))
            vstore(gA8, g, vsplat(0.0))


# --------------------------------------------------------------------------
# compact state weights: a large model with few (feature, label) parameters
# --------------------------------------------------------------------------
# The training objective may hold the state weights as the parameter vector
# itself instead of a dense (n_features, n_labels) matrix (see
# skcrf._objective.CRFLoss): ``W = (rp, lab, th)`` with feature f's parameters
# ``th[rp[f]:rp[f + 1]]`` for the labels ``lab[rp[f]:rp[f + 1]]``, and the
# gradient ``(rp, lab, g)`` in the same order. The kernels below take either
# form: :func:`emissions` and :func:`add_state_counts` pick the dense or the
# compact loop when Numba compiles the caller (no branch at run time).

@njit(**_JIT)
def _emissions_compact(indptr, indices, data, t0, T, rp, lab, th, out):
    """:func:`_emissions` for compact state weights: out[t, lab[k]] += v *
    th[k] for the parameters k of every non-zero (f, v) of token t0 + t.

    Two prefetch stages: the row pointer of the feature 2 * PREFETCH_DISTANCE
    non-zeros ahead, then the parameters and labels of the one
    PREFETCH_DISTANCE ahead (whose row pointer is in cache by then)."""
    L = out.shape[1]
    nnz = indices.size
    dm = _value_mask(data, indices)
    rp2 = rp.reshape((rp.size, 1))
    th2 = th.reshape((th.size, 1))
    lab2 = lab.reshape((lab.size, 1))
    n_par = th.size
    for t in range(T):
        for j in range(L):
            out[t, j] = 0.0
        for p in range(indptr[t0 + t], indptr[t0 + t + 1]):
            if p + 2 * PREFETCH_DISTANCE < nnz:
                prefetch_row(rp2, indices[p + 2 * PREFETCH_DISTANCE])
            if p + PREFETCH_DISTANCE < nnz:
                k = rp[indices[p + PREFETCH_DISTANCE]]
                if k < n_par:
                    prefetch_row(th2, k)
                    prefetch_row(lab2, k)
            f = indices[p]
            v = data[p & dm]
            for k in range(rp[f], rp[f + 1]):
                out[t, lab[k]] += v * th[k]


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


def emissions(indptr, indices, data, t0, T, W, out):
    """Emission scores of tokens t0..t0+T-1 into ``out`` from dense (``W`` an
    array: :func:`_emissions`) or compact (``W = (rp, lab, th)``:
    :func:`_emissions_compact`) state weights; compiled code only."""
    raise NotImplementedError("a Numba overload; call it from compiled code")


@overload(emissions, jit_options=_JIT)
def _emissions_overload(indptr, indices, data, t0, T, W, out):
    if isinstance(W, types.Array):
        def dense(indptr, indices, data, t0, T, W, out):
            _emissions(indptr, indices, data, t0, T, W, out)
        return dense

    def compact(indptr, indices, data, t0, T, W, out):
        _emissions_compact(indptr, indices, data, t0, T, W[0], W[1], W[2], out)
    return compact


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


# --------------------------------------------------------------------------
# the data term: sum_s w_s log Z_s and expected feature counts
# --------------------------------------------------------------------------
@njit(**_JIT)
def _sequence_terms(s, indptr, indices, data, offsets, weights, W, A, start, end, expA,
                    expAT, exp_start, exp_end, shifts, bufs, gA, gS, gE, logz_out):
    """Sequence ``s``: its log Z into ``logz_out[s]``, its weight times its
    expected transition, start and end counts added to ``gA``, ``gS``, ``gE``,
    and its node marginals left as ``alpha * beta`` in ``bufs``. Returns its
    length (0: nothing else computed)."""
    t0 = offsets[s]
    T = offsets[s + 1] - t0
    if T == 0:
        logz_out[s] = 0.0
        return 0
    w = weights[s]
    logz, _ = _posteriors(t0, T, indptr, indices, data, W, A, start, end,
                          expA, expAT, exp_start, exp_end, shifts, bufs, w, gA)
    logz_out[s] = logz
    alpha, beta = bufs[1], bufs[2]
    for j in range(alpha.shape[1]):
        gS[j] += w * alpha[0, j] * beta[0, j]
        gE[j] += w * alpha[T - 1, j] * beta[T - 1, j]
    return T


@njit(**_JIT)
def _objective_chunk(c, bounds, order, indptr, indices, data, offsets, weights,
                     W, A, start, end, expA, exp_start, exp_end, shifts,
                     gW, gA, gS, gE, logz_out):
    """Expected counts and log Z of the sequences of chunk ``c``: positions
    ``bounds[c]:bounds[c + 1]`` of ``order``, which lists the chunk's
    sequences by length within windows of consecutive ones, so that every
    ``N_LANES`` of them in a row go through :func:`_lane_posteriors` together
    with little padding (empty sequences, the last few, and a batch that
    needs the underflow-safe path, one by one).

    Every chunk reads the same state weights ``W`` (n_features, n_labels),
    or compact ``(rp, lab, th)``, and accumulates its expected counts into its
    own ``gW[c]`` (compact: its own vector, :func:`chunk_gradient`; and
    ``gA[c]``, ``gS[c]``, ``gE[c]``); the caller sums them over chunks.
    """
    lo, hi = bounds[c], bounds[c + 1]
    gWc, gAc, gSc, gEc = chunk_gradient(gW, c), gA[c], gS[c], gE[c]
    L = expA.shape[0]   # (W's rows may be padded)
    bufs = _posterior_buffers(lo, hi, offsets, L)
    P, alpha, beta = bufs[0], bufs[1], bufs[2]
    lb, reach, gA8 = _lane_setup(lo, hi, offsets, L, expA, exp_start)
    expAT = np.ascontiguousarray(expA.T)
    gAc[:, :] = 0.0
    gSc[:] = 0.0
    gEc[:] = 0.0
    i = lo
    while i < hi:
        n = _lane_run(i, hi, order, offsets)
        if n > 1 and _lane_posteriors(order[i:i + n], indptr, indices, data, offsets,
                                      weights, W, expA, exp_start, exp_end, shifts, reach,
                                      lb, gA8, gSc, gEc, logz_out):
            for b in range(n):
                s = order[i + b]
                if weights[s] != 0.0:
                    _lane_marginals(lb[1], b, lb[-1], L, P, 0)
                    add_state_counts(indptr, indices, data, offsets[s], lb[-1][b], P,
                                     gWc)
        else:
            for s in order[i:i + n]:
                T = _sequence_terms(s, indptr, indices, data, offsets, weights, W, A,
                                    start, end, expA, expAT, exp_start, exp_end, shifts,
                                    bufs, gAc, gSc, gEc, logz_out)
                if T > 0 and weights[s] != 0.0:
                    _weigh_marginals(alpha, beta, weights[s], T)
                    add_state_counts(indptr, indices, data, offsets[s], T, alpha, gWc)
        i += n
    _add_lane_pairs(gA8, expA, gAc)


@njit(**_JIT)
def _weigh_marginals(alpha, beta, w, T):
    """alpha[:T] = w * alpha[:T] * beta[:T]: the weighted node marginals."""
    for t in range(T):
        for j in range(alpha.shape[1]):
            alpha[t, j] = w * alpha[t, j] * beta[t, j]


@njit(parallel=True, **_JIT)
def _objective_parallel(bounds, *args):
    for c in prange(bounds.size - 1): _objective_chunk(c, bounds, *args)  # noqa: E701


@njit(parallel=True, **_JIT)
def _objective_parallel_compact(bounds, order, indptr, indices, data, offsets, weights,
                                rp, lab, th, A, start, end, expA, exp_start, exp_end,
                                shifts, g0, g_rest, gA, gS, gE, logz_out):
    """:func:`_objective_parallel` for compact state weights ``(rp, lab, th)``
    and gradients ``(rp, lab, g0, g_rest)`` (:func:`chunk_gradient`), passed
    apart (a parallel driver takes arrays, not tuples of them)."""
    for c in prange(bounds.size - 1):
        _objective_chunk(c, bounds, order, indptr, indices, data, offsets, weights,
                         (rp, lab, th), A, start, end, expA, exp_start, exp_end, shifts,
                         (rp, lab, g0, g_rest), gA, gS, gE, logz_out)


# --------------------------------------------------------------------------
# the data term on several threads without a gradient buffer per thread
# --------------------------------------------------------------------------
@njit(**_JIT)
def _block_posteriors(lo, hi, order, tb0, indptr, indices, data, offsets, weights, W, A,
                      start, end, expA, expAT, exp_start, exp_end, shifts, gA, gS, gE,
                      logz_out, P):
    """The sequences at positions ``lo..hi-1`` of ``order`` (by length within
    windows, see :func:`_objective_chunk`), in a block whose first token is
    ``tb0``: log Z, the expected transition / start / end counts (added to this
    thread's ``gA``, ``gS``, ``gE``), and ``w`` times each token's node
    marginals written to ``P[t - tb0]`` for the state counts that follow."""
    L = expA.shape[0]   # (W's rows may be padded)
    if hi <= lo:
        return
    bufs = _posterior_buffers(lo, hi, offsets, L)
    alpha, beta = bufs[1], bufs[2]
    lb, reach, gA8 = _lane_setup(lo, hi, offsets, L, expA, exp_start)
    i = lo
    while i < hi:
        n = _lane_run(i, hi, order, offsets)
        if n > 1 and _lane_posteriors(order[i:i + n], indptr, indices, data, offsets,
                                      weights, W, expA, exp_start, exp_end, shifts, reach,
                                      lb, gA8, gS, gE, logz_out):
            for b in range(n):
                _lane_marginals(lb[1], b, lb[-1], L, P, offsets[order[i + b]] - tb0)
        else:
            for s in order[i:i + n]:
                T = _sequence_terms(s, indptr, indices, data, offsets, weights, W, A,
                                    start, end, expA, expAT, exp_start, exp_end, shifts,
                                    bufs, gA, gS, gE, logz_out)
                w = weights[s]
                r0 = offsets[s] - tb0
                for t in range(T):
                    for j in range(L):
                        P[r0 + t, j] = w * alpha[t, j] * beta[t, j]
        i += n
    _add_lane_pairs(gA8, expA, gA)


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


@njit(parallel=True, **_JIT)
def _objective_owned(blocks, phase, order, row_bounds, split, indptr, indices, data, offsets,
                     weights, W, A, start, end, expA, exp_start, exp_end, shifts, gW, gA,
                     gS, gE, logz_out, P):
    """The data term on ``K = phase.shape[1] - 1`` threads sharing one state
    gradient ``gW``. Block by block (sequences ``blocks[b]:blocks[b + 1]``):
    thread k runs forward-backward on sequences ``phase[b, k]:phase[b, k + 1]``
    and writes their tokens' marginals to ``P``; then thread k adds the state
    counts of every token of the block to the rows it owns,
    ``row_bounds[k]:row_bounds[k + 1]``. ``gA``, ``gS``, ``gE`` are per thread
    (L x L each). Memory: one ``gW`` whatever K, plus ``P`` (a block's tokens)."""
    K = phase.shape[1] - 1
    expAT = np.ascontiguousarray(expA.T)
    for k in prange(K):
        gW[row_bounds[k]:row_bounds[k + 1], :] = 0.0
        gA[k, :, :] = 0.0
        gS[k, :] = 0.0
        gE[k, :] = 0.0
    for b in range(blocks.size - 1):
        tb0 = offsets[blocks[b]]
        tb1 = offsets[blocks[b + 1]]
        for k in prange(K):
            _block_posteriors(phase[b, k], phase[b, k + 1], order, tb0, indptr, indices, data,
                              offsets, weights, W, A, start, end, expA, expAT, exp_start,
                              exp_end, shifts, gA[k], gS[k], gE[k], logz_out, P)
        for k in prange(K):
            _owned_state_counts(k, tb0, tb1, tb0, indptr, indices, data, split, P, gW)


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


# --------------------------------------------------------------------------
# parameter vector <-> dense weights, gradient assembly, L2
# (compiled loops: on a million parameters the NumPy expressions, with their
# temporaries, were a noticeable serial step of every evaluation; these run
# in a few ms, so they stay serial: threads saved < 1 % of an SXU iteration)
# --------------------------------------------------------------------------
@njit(**_JIT)
def _scatter(values, positions, flat):
    """flat[positions[k]] = values[k]."""
    for k in range(positions.size):
        flat[positions[k]] = values[k]


@njit(**_JIT)
def _gather_sum(flat, positions, out):
    """out[k] = sum over chunks c of flat[c, positions[k]]."""
    for k in range(positions.size):
        acc = 0.0
        for c in range(flat.shape[0]):
            acc += flat[c, positions[k]]
        out[k] = acc


@njit(**_JIT)
def _subtract_empirical(theta, empirical, g):
    """g -= empirical in place; returns theta . empirical."""
    te = 0.0
    for k in range(theta.size):
        g[k] -= empirical[k]
        te += theta[k] * empirical[k]
    return te


@njit(**_JIT)
def _add_l2(theta, c2, g):
    """g += 2 c2 theta in place; returns theta . theta."""
    tt = 0.0
    for k in range(theta.size):
        t = theta[k]
        g[k] += 2.0 * c2 * t
        tt += t * t
    return tt


# --------------------------------------------------------------------------
# fit-time bookkeeping: which (feature, label) pairs occur, and how often
# --------------------------------------------------------------------------
@njit(**_JIT)
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(**_JIT)
def _seen_label_masks(indptr, indices, offsets, y, weights, masks):
    """Bit ``y_t`` of ``masks[f]`` is set for every non-zero (t, f) of a
    sequence of positive weight: one bit per (feature, label) pair, so the
    pass needs n_features * ceil(n_labels / 64) words, not a dense matrix."""
    for s in range(offsets.size - 1):
        if not weights[s] > 0.0:
            continue
        for t in range(offsets[s], offsets[s + 1]):
            word = y[t] >> 6
            bit = np.uint64(1) << np.uint64(y[t] & 63)
            for p in range(indptr[t], indptr[t + 1]):
                masks[indices[p], word] |= bit


@njit(**_JIT)
def _mask_row_sizes(masks, sizes):
    for f in range(masks.shape[0]):
        n = 0
        for w in range(masks.shape[1]):
            n += _popcount(masks[f, w])
        sizes[f] = n


@njit(**_JIT)
def _mask_keys(masks, ptr, n_labels, keys):
    """The set bits as sorted flat keys ``feature * n_labels + label``."""
    for f in range(masks.shape[0]):
        k = ptr[f]
        for w in range(masks.shape[1]):
            m = masks[f, w]
            b = 0
            while m != np.uint64(0):
                if m & np.uint64(1):
                    keys[k] = f * n_labels + w * 64 + b
                    k += 1
                m >>= np.uint64(1)
                b += 1


@njit(**_JIT)
def _pair_counts(indptr, indices, data, offsets, y, weights, masks, ptr, counts):
    """counts[k] += w_s * x_tf for the pair (f, y_t) stored at position k =
    ptr[f] + (rank of y_t among the labels set in masks[f])."""
    dm = _value_mask(data, indices)
    for s in range(offsets.size - 1):
        w = weights[s]
        if not w > 0.0:
            continue
        for t in range(offsets[s], offsets[s + 1]):
            word = y[t] >> 6
            below = (np.uint64(1) << np.uint64(y[t] & 63)) - np.uint64(1)
            for p in range(indptr[t], indptr[t + 1]):
                f = indices[p]
                k = ptr[f]
                for v in range(word):
                    k += _popcount(masks[f, v])
                k += _popcount(masks[f, word] & below)
                counts[k] += w * data[p & dm]


# --------------------------------------------------------------------------
# inference: Viterbi, marginals, path scores, exact k-best
# --------------------------------------------------------------------------
@njit(inline="always", **_JIT)
def _max_step(score, AT, E, t, L):
    """Viterbi's forward step at t: the best score of each label, without
    the argmax (see :func:`_viterbi_chunk`)."""
    for j in range(L):
        best = -np.inf
        for i in range(L):
            v = score[t - 1, i] + AT[j, i]
            if v > best:
                best = v
        score[t, j] = best + E[t, j]


@njit(**_JIT)
def _viterbi_chunk(c, bounds, order, indptr, indices, data, offsets, W, A, start, end,
                   out, best_out):
    """Best path of each sequence of chunk ``c`` into ``out`` (label per
    token) and its score into ``best_out`` (-inf: no allowed path).

    The chunk's sequences are visited in ``order`` (by length within
    windows, :func:`skcrf._parallel.order_by_length`); every N_LANES in a
    row, none empty and none longer than :data:`_VITERBI_LANE_MAX_T`, run
    side by side in SIMD lanes (:func:`_lane_viterbi`), the others one at a
    time. Both give the same scores, bit for bit.

    The forward pass keeps only the best score of each (t, label): no argmax,
    no back-pointer table (measured on CoNLL-2002's test set, 9 labels:
    3.7-3.9 against 3.9-4.2 ms, alternating runs); the way back
    (:func:`_best_path`) recomputes the argmax along the best path only, L
    terms per token. Ties go to the lowest previous label, as a back-pointer
    table filled in the same order would give: the values compared are the
    same floating-point numbers either way."""
    lo, hi = bounds[c], bounds[c + 1]
    L = A.shape[0]
    maxT = _max_length(lo, hi, offsets)
    E = np.empty((maxT, L))
    score = np.empty((maxT, L))
    AT = np.ascontiguousarray(A.T)
    n8 = max(min(maxT, _VITERBI_LANE_MAX_T), 1) * L * N_LANES
    U8, S8 = np.empty(n8), np.empty(n8)
    i = lo
    while i < hi:
        n = _lane_run(i, hi, order, offsets)
        if n == N_LANES and _longest(order[i:i + n], offsets) <= _VITERBI_LANE_MAX_T:
            _lane_viterbi(order[i:i + n], indptr, indices, data, offsets, W, A, start, end,
                          U8, S8, out, best_out)
        else:
            for k in range(i, i + n):
                _viterbi_one(order[k], indptr, indices, data, offsets, W, A, AT, start,
                             end, E, score, out, best_out)
        i += n


#: sequences longer than this run Viterbi alone, not in lanes (whose work
#: arrays, 2 x N_LANES x length x labels values, would otherwise grow with
#: the longest sequence: 11 MB at 9 labels)
_VITERBI_LANE_MAX_T = 2048


@njit(**_JIT)
def _longest(seqs, offsets):
    T = 0
    for s in seqs:
        T = max(T, offsets[s + 1] - offsets[s])
    return T


@njit(**_JIT)
def _viterbi_one(s, indptr, indices, data, offsets, W, A, AT, start, end, E, score,
                 out, best_out):
    """Viterbi of sequence s alone (E and score: work arrays of its length
    or longer)."""
    t0 = offsets[s]
    T = offsets[s + 1] - t0
    if T == 0:
        best_out[s] = 0.0
        return
    L = A.shape[0]
    _emissions(indptr, indices, data, t0, T, W, E)
    for j in range(L):
        score[0, j] = E[0, j] + start[j]
    for t in range(1, T):
        _max_step(score, AT, E, t, L)
    best_out[s] = _best_path(score, A, end, T, t0, out)


@njit(**_JIT)
def _lane_viterbi(seqs, indptr, indices, data, offsets, W, A, start, end, U8, S8, out,
                  best_out):
    """Viterbi of the N_LANES non-empty sequences ``seqs`` side by side, one
    per lane, on lane arrays laid out (t, label, lane): the emissions
    ``U8``, the best scores ``S8``. The lanes start together at t = 0; a
    lane past its sequence's end computes values that nothing reads. Each
    best score is the running maximum over the previous labels in the same
    order as :func:`_max_step`'s (``vmax`` keeps the earlier value on ties
    and NaN), plus the same emission: the same bits. The way back runs per
    lane (:func:`_best_path` on the lane's strided view)."""
    L = A.shape[0]
    NL = N_LANES
    T = _longest(seqs, offsets)
    U3 = U8[:T * L * NL].reshape((T, L, NL))
    for b in range(NL):
        t0 = offsets[seqs[b]]
        Tb = offsets[seqs[b] + 1] - t0
        _emissions(indptr, indices, data, t0, Tb, W, U3[:Tb, :, b])
    for j in range(L):
        vstore(S8, j * NL, vadd(vload(U8, j * NL), vsplat(start[j])))
    for t in range(1, T):
        p0 = (t - 1) * L * NL
        k0 = t * L * NL
        for j in range(L):
            best = vsplat(-np.inf)
            for i in range(L):
                best = vmax(best, vadd(vload(S8, p0 + i * NL), vsplat(A[i, j])))
            vstore(S8, k0 + j * NL, vadd(best, vload(U8, k0 + j * NL)))
    S3 = S8[:T * L * NL].reshape((T, L, NL))
    for b in range(NL):
        t0 = offsets[seqs[b]]
        Tb = offsets[seqs[b] + 1] - t0
        best_out[seqs[b]] = _best_path(S3[:, :, b], A, end, Tb, t0, out)


@njit(**_JIT)
def _best_path(score, A, end, T, t0, out):
    """The labels of the best path into ``out[t0:t0 + T]`` from the best
    scores ``score[t, j]`` of the forward pass (the argmax recomputed along
    the path, first maximum on ties); returns the path's score."""
    L = A.shape[0]
    best = -np.inf
    arg = 0
    for j in range(L):
        v = score[T - 1, j] + end[j]
        if v > best:
            best = v
            arg = j
    out[t0 + T - 1] = arg
    for t in range(T - 1, 0, -1):
        b = -np.inf
        prev = 0
        for i in range(L):
            v = score[t - 1, i] + A[i, arg]
            if v > b:
                b = v
                prev = i
        arg = prev
        out[t0 + t - 1] = arg
    return best


@njit(parallel=True, **_JIT)
def _viterbi_parallel(bounds, *args):
    for c in prange(bounds.size - 1): _viterbi_chunk(c, bounds, *args)  # noqa: E701


@njit(**_JIT)
def _marginals_chunk(c, bounds, indptr, indices, data, offsets, W, A, start, end,
                     expA, exp_start, exp_end, shifts, out, logz_out):
    """Node marginals (rows of ``out``) and log Z of the sequences of chunk
    ``c``; log Z is -inf (and the rows NaN) when no path is allowed."""
    lo, hi = bounds[c], bounds[c + 1]
    L = W.shape[1]
    bufs = _posterior_buffers(lo, hi, offsets, L)
    alpha, beta = bufs[1], bufs[2]
    expAT = np.ascontiguousarray(expA.T)
    no_counts = np.zeros((L, L))
    for s in range(lo, hi):
        t0 = offsets[s]
        T = offsets[s + 1] - t0
        if T == 0:
            logz_out[s] = 0.0
            continue
        logz, _ = _posteriors(t0, T, indptr, indices, data, W, A, start, end,
                              expA, expAT, exp_start, exp_end, shifts, bufs,
                              0.0, no_counts)
        logz_out[s] = logz
        for t in range(T):
            for j in range(L):
                out[t0 + t, j] = alpha[t, j] * beta[t, j]


@njit(parallel=True, **_JIT)
def _marginals_parallel(bounds, *args):
    for c in prange(bounds.size - 1): _marginals_chunk(c, bounds, *args)  # noqa: E701


@njit(**_JIT)
def _path_scores_chunk(c, bounds, indptr, indices, data, offsets, W, A, start, end,
                       y, out):
    """Score of the given label path ``y`` of each sequence of chunk ``c``
    (-inf when it uses a forbidden transition)."""
    dm = _value_mask(data, indices)
    for s in range(bounds[c], bounds[c + 1]):
        t0 = offsets[s]
        T = offsets[s + 1] - t0
        if T == 0:
            out[s] = 0.0
            continue
        total = start[y[t0]] + end[y[t0 + T - 1]]
        for t in range(t0, t0 + T):
            lab = y[t]
            if t > t0:
                total += A[y[t - 1], lab]
            for p in range(indptr[t], indptr[t + 1]):
                total += data[p & dm] * W[indices[p], lab]
        out[s] = total


@njit(parallel=True, **_JIT)
def _path_scores_parallel(bounds, *args):
    for c in prange(bounds.size - 1): _path_scores_chunk(c, bounds, *args)  # noqa: E701


@njit(**_JIT)
def _insert_topk(scores, labs, ranks, n, k, v, lab, rank):
    """Insert candidate (v, lab, rank) into the sorted top-k lists of length n.

    Strict comparison: among equal scores the earlier candidate (smaller
    label, then smaller rank) stays ahead, so ties are broken deterministically.
    Returns the new length.
    """
    if v == -np.inf or (n == k and not v > scores[k - 1]):
        return n
    pos = n if n < k else k - 1
    while pos > 0 and v > scores[pos - 1]:
        if pos < k:
            scores[pos] = scores[pos - 1]
            labs[pos] = labs[pos - 1]
            ranks[pos] = ranks[pos - 1]
        pos -= 1
    scores[pos] = v
    labs[pos] = lab
    ranks[pos] = rank
    return min(n + 1, k)


@njit(**_JIT)
def _topk_chunk(c, bounds, indptr, indices, data, offsets, W, A, start, end, k,
                out_paths, out_scores, out_count):
    """The k highest-scoring label sequences of the sequences of chunk ``c``.

    ``out_paths[t, r]`` is the label at token row t of the r-th best path,
    ``out_scores[s, r]`` its score, ``out_count[s]`` how many finite-score
    paths exist (at most k; 0 when no path is allowed).
    """
    lo, hi = bounds[c], bounds[c + 1]
    L = W.shape[1]
    maxT = _max_length(lo, hi, offsets)
    E = np.empty((maxT, L))
    sc = np.full((maxT, L, k), -np.inf)
    bl = np.zeros((maxT, L, k), dtype=np.int32)
    br = np.zeros((maxT, L, k), dtype=np.int32)
    cnt = np.zeros((maxT, L), dtype=np.int32)
    fs = np.empty(k)
    fl = np.zeros(k, dtype=np.int32)
    fr = np.zeros(k, dtype=np.int32)
    for s in range(lo, hi):
        t0 = offsets[s]
        T = offsets[s + 1] - t0
        if T == 0:
            out_count[s] = 1  # the empty path
            out_scores[s, 0] = 0.0
            continue
        _emissions(indptr, indices, data, t0, T, W, E)
        for j in range(L):
            v = E[0, j] + start[j]
            cnt[0, j] = 0
            if v > -np.inf:
                sc[0, j, 0] = v
                cnt[0, j] = 1
        for t in range(1, T):
            for j in range(L):
                n = 0
                for i in range(L):
                    a = A[i, j]
                    for r in range(cnt[t - 1, i]):
                        n = _insert_topk(sc[t, j], bl[t, j], br[t, j], n, k,
                                         sc[t - 1, i, r] + a, i, r)
                cnt[t, j] = n
                for r in range(n):
                    sc[t, j, r] += E[t, j]
        n = 0
        for j in range(L):
            for r in range(cnt[T - 1, j]):
                n = _insert_topk(fs, fl, fr, n, k, sc[T - 1, j, r] + end[j], j, r)
        out_count[s] = n
        for q in range(n):
            out_scores[s, q] = fs[q]
            lab, rank = fl[q], fr[q]
            for t in range(T - 1, -1, -1):
                out_paths[t0 + t, q] = lab
                lab, rank = bl[t, lab, rank], br[t, lab, rank]


@njit(parallel=True, **_JIT)
def _topk_parallel(bounds, *args):
    for c in prange(bounds.size - 1): _topk_chunk(c, bounds, *args)  # noqa: E701
