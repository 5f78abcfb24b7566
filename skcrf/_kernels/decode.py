"""Decoding kernels: Viterbi (eight sequences side by side in SIMD lanes, or
one at a time), node marginals with log Z, and path scores.

Each is a chunk kernel ``*_chunk(c, bounds, ...)`` plus a ``prange`` driver
``*_parallel``; :func:`skcrf._kernels.parallel.run_chunks` picks one.
"""

import numpy as np
from numba import njit, prange

from ._jit import _JIT, any_layout
from .emissions import _value_mask, emissions
from .forward_backward import _listed_buffers, _max_length, _posteriors
from .intrinsics import flat_view
from .lane_forward_backward import _lane_buffers, _lane_scaled_posteriors, _reachable
from .lanes import N_LANES, vadd, vlane, vless, vload, vmax, vselect, vsplat, vstore, vtake


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
    windows, :func:`skcrf._kernels.parallel.order_by_length`) and run
    N_LANES side by side in SIMD lanes (:func:`_lane_viterbi`); the last few
    of a chunk fill a batch with copies (:func:`_viterbi_take`), so that no
    sequence needs the one-at-a-time kernel, whose compilation a cold first
    predict would wait for. A sequence longer than
    :data:`_VITERBI_LANE_MAX_T` is left to that kernel (its score set to NaN:
    :func:`_viterbi_listed`, called by the driver only when there is one).
    Both give the same scores, bit for bit.

    The forward pass keeps only the best score of each (t, label): no argmax,
    no back-pointer table (less memory traffic per step); the way back
    (:func:`_best_path`) recomputes the argmax along the best path only, L
    terms per token. Ties go to the lowest previous label, as a back-pointer
    table filled in the same order would give: the values compared are the
    same floating-point numbers either way."""
    lo, hi = bounds[c], bounds[c + 1]
    L = A.shape[0]
    maxT = _max_length(lo, hi, offsets)
    n8 = max(min(maxT, _VITERBI_LANE_MAX_T), 1) * L * N_LANES
    U8, S8 = np.empty(n8), np.empty(n8)
    seqs = np.empty(N_LANES, dtype=np.int64)
    i = lo
    while i < hi:
        n, i = _viterbi_take(i, hi, order, offsets, seqs, best_out)
        if n:
            _lane_viterbi(seqs, n, indptr, indices, data, offsets, W, A, start, end,
                          U8, S8, out, best_out)


#: sequences longer than this run Viterbi alone, not in lanes (whose work
#: arrays, 2 x N_LANES x length x labels values, would otherwise grow with
#: the longest sequence: 11 MB at 9 labels)
_VITERBI_LANE_MAX_T = 2048


# (lane_forward_backward._lane_take with a length cap: a copy, so that the
# objective's kernel, whose speed is measured and tuned, does not change for the
# decoding's sake; benchmarks/results/cold_first_use_1207.txt has the A/B)
@njit(inline="always", **_JIT)
def _viterbi_take(i, hi, order, offsets, seqs, best_out):
    """The next batch from position ``i`` of ``order`` (up to ``hi``): up to
    N_LANES sequences into ``seqs``, the lanes left over filled with copies
    of the last one. Empty sequences are skipped (score 0), as are those
    longer than :data:`_VITERBI_LANE_MAX_T` (score NaN: left to
    :func:`_viterbi_listed`). Returns ``(n, i)``: how many lanes count (0:
    none) and the position after the batch."""
    n = 0
    while i < hi and n < N_LANES:
        s = order[i]
        i += 1
        T = offsets[s + 1] - offsets[s]
        if T == 0:
            best_out[s] = 0.0
        elif T > _VITERBI_LANE_MAX_T:
            best_out[s] = np.nan
        else:
            seqs[n] = s
            n += 1
    for b in range(n, N_LANES):
        seqs[b] = seqs[max(n - 1, 0)]
    return n, i


@njit(**_JIT)
def _longest(seqs, offsets):
    T = 0
    for s in seqs:
        T = max(T, offsets[s + 1] - offsets[s])
    return T


@njit(**_JIT)
def _viterbi_listed(seqs, indptr, indices, data, offsets, W, A, start, end, out,
                    best_out):
    """Viterbi of the sequences ``seqs``, one at a time (:func:`_viterbi_one`):
    those :func:`_viterbi_chunk` leaves (too long for the lanes), and only
    they; a kernel of its own, which inputs without such sequences never
    compile."""
    L = A.shape[0]
    maxT = max(_longest(seqs, offsets), 1)
    E = np.empty((maxT, L))
    score = np.empty((maxT, L))
    AT = np.ascontiguousarray(A.T)
    for s in seqs:
        _viterbi_one(s, indptr, indices, data, offsets, W, A, AT, start, end, E, score,
                     out, best_out)


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
    emissions(indptr, indices, data, t0, T, W, E)
    for j in range(L):
        score[0, j] = E[0, j] + start[j]
    for t in range(1, T):
        _max_step(score, AT, E, t, L)
    # (typed as the lanes' strided views are: one compiled way back)
    best_out[s] = _best_path(any_layout(score), A, end, T, t0, out)


@njit(**_JIT)
def _lane_viterbi(seqs, n, indptr, indices, data, offsets, W, A, start, end, U8, S8, out,
                  best_out):
    """Viterbi of the sequences ``seqs`` (N_LANES, none empty; the first
    ``n`` count, the others are copies of the n-th, whose emissions are
    copied rather than computed again) side by side, one per lane, on lane
    arrays laid out (t, label, lane): the emissions ``U8``, the best scores
    ``S8``. The lanes start together at t = 0; a lane past its sequence's
    end computes values that nothing reads. Each best score is the running
    maximum over the previous labels in the same order as
    :func:`_max_step`'s (``vmax`` keeps the earlier value on ties and NaN),
    plus the same emission: the same bits. The ways back of the ``n``
    lanes run interleaved (:func:`_lane_way_back`)."""
    L = A.shape[0]
    T = _lane_first_step(seqs, n, indptr, indices, data, offsets, W, start, U8, S8, L)
    for t in range(1, T):
        _lane_max_step(S8, U8, A, t, L, None, L)
    _lane_way_back(seqs, n, offsets, A, end, S8, T, out, best_out, None)


@njit(inline="always", **_JIT)
def _lane_first_step(seqs, n, indptr, indices, data, offsets, W, start, U8, S8, L):
    """The emissions of the lanes' sequences into ``U8`` (the copies'
    copied from lane ``n - 1``), their scores at t = 0 into ``S8``; returns
    the batch's length, the longest sequence's."""
    NL = N_LANES
    T = _longest(seqs, offsets)
    U3 = U8[:T * L * NL].reshape((T, L, NL))
    for b in range(NL):
        t0 = offsets[seqs[b]]
        Tb = offsets[seqs[b] + 1] - t0
        if b < n:
            emissions(indptr, indices, data, t0, Tb, W, U3[:Tb, :, b])
        else:
            for t in range(Tb):
                for j in range(L):
                    U3[t, j, b] = U3[t, j, n - 1]
    for j in range(L):
        vstore(S8, j * NL, vadd(vload(U8, j * NL), vsplat(start[j])))
    return T


# The forward step of the lanes, a block of labels j at a time. Each label's
# best score is a running maximum over the previous labels i, a chain of L
# dependent vmax (each waits for the one before): label by label, with many
# labels, the processor runs out of independent work and waits on that chain.
# Four labels' chains side by side share each previous score's load and run
# interleaved (eight gained little more here, and would not fit AVX2's 16
# registers). Each chain is the same maximum in the same order: the same bits.
@njit(inline="always", **_JIT)
def _lane_max_step(S8, U8, A, t, L, cands, K):
    """S8's lanes at t: each label's best previous score plus its emission
    (U8), the maximum over every previous label (``cands`` None) or over the
    K kept in ``cands[t, :K]`` (the pruned lanes of
    :mod:`.decode_pruned`), in increasing order either way."""
    j = 0
    while j + 4 <= L:
        _lane_max_block4(S8, U8, A, t, j, L, cands, K)
        j += 4
    while j < L:
        _lane_max_block1(S8, U8, A, t, j, L, cands, K)
        j += 1


@njit(inline="always", **_JIT)
def _lane_max_block4(S8, U8, A, t, j, L, cands, K):
    """S8's lanes for labels j..j+3 at t: the best previous score through
    each plus its emission (U8). (`cands is None` is known when Numba
    compiles: one loop or the other.)"""
    NL = N_LANES
    p0, k0 = (t - 1) * L * NL, t * L * NL
    b0 = b1 = b2 = b3 = vsplat(-np.inf)
    for k in range(K):
        i = k if cands is None else cands[t, k]
        s = vload(S8, p0 + i * NL)
        b0 = vmax(b0, vadd(s, vsplat(A[i, j])))
        b1 = vmax(b1, vadd(s, vsplat(A[i, j + 1])))
        b2 = vmax(b2, vadd(s, vsplat(A[i, j + 2])))
        b3 = vmax(b3, vadd(s, vsplat(A[i, j + 3])))
    o = k0 + j * NL
    vstore(S8, o, vadd(b0, vload(U8, o)))
    vstore(S8, o + NL, vadd(b1, vload(U8, o + NL)))
    vstore(S8, o + 2 * NL, vadd(b2, vload(U8, o + 2 * NL)))
    vstore(S8, o + 3 * NL, vadd(b3, vload(U8, o + 3 * NL)))


@njit(inline="always", **_JIT)
def _lane_max_block1(S8, U8, A, t, j, L, cands, K):
    """:func:`_lane_max_block4` for label j alone."""
    NL = N_LANES
    p0, k0 = (t - 1) * L * NL, t * L * NL
    best = vsplat(-np.inf)
    for k in range(K):
        i = k if cands is None else cands[t, k]
        best = vmax(best, vadd(vload(S8, p0 + i * NL), vsplat(A[i, j])))
    vstore(S8, k0 + j * NL, vadd(best, vload(U8, k0 + j * NL)))


@njit(**_JIT)
def _lane_way_back(seqs, n, offsets, A, end, S8, T, out, best_out, cands):
    """The labels of the best paths of the first ``n`` lanes of
    :func:`_lane_viterbi` (best scores ``S8``, laid out (t, label, lane);
    lane b holds positions 0..T_b - 1) into ``out``, their scores into
    ``best_out``: what :func:`_best_path` does for one lane, for the eight
    lanes at once. ``cands``: None, or after the pruned lanes
    (:func:`skcrf._kernels.decode_pruned._lane_viterbi_pruned`) the
    previous labels each step kept (``cands[t, :cands[t, L]]``, increasing),
    the only ones the argmax into t then looks at: a dropped label is
    strictly below a kept one for every next label, in every lane, so the
    first maximum is the same.nce.

    One lane's way back is a chain of dependent steps (each step's argmax
    over the previous labels needs the label the step before chose); done a
    lane at a time, its compare-and-branch on scores mispredicts often. Here
    each step is one vector argmax over the previous labels for all lanes:
    the lanes' current labels ``arg`` (as floats) pick their transition
    weights ``A[i, arg]`` (:func:`vtake`), and a running maximum with its
    label is kept by compare and select, no branch. A lane whose sequence
    ends before t keeps its last label until its own last step. Same
    comparisons in the same order as :func:`_best_path` (``v > best``, first
    maximum on ties): the same paths."""
    L = A.shape[0]
    NL = N_LANES
    S3 = S8[:T * L * NL].reshape((T, L, NL))
    Af = flat_view(A)
    lane = np.empty(2 * NL)            # the lanes' lengths, then their last labels
    for b in range(NL):
        t0 = offsets[seqs[b]]
        Tb = offsets[seqs[b] + 1] - t0
        best, arg = _last_label(S3[:, :, b], end, Tb)
        lane[b], lane[NL + b] = Tb, arg
        if b < n:
            best_out[seqs[b]] = best
            out[t0 + Tb - 1] = arg
    lengths, arg = vload(lane, 0), vload(lane, NL)
    for t in range(T - 1, 0, -1):
        p0 = (t - 1) * L * NL
        best, prev = vsplat(-np.inf), vsplat(0.0)
        # (`cands is None` is known when Numba compiles: one loop or the other)
        K = L if cands is None else cands[t, L]
        for k in range(K):
            i = k if cands is None else cands[t, k]
            v = vadd(vload(S8, p0 + i * NL), vtake(Af, i * L, arg))
            up = vless(best, v)
            best, prev = vselect(up, v, best), vselect(up, vsplat(i), prev)
        # (lanes whose sequence reaches t take the step)
        arg = vselect(vless(vsplat(t), lengths), prev, arg)
        for b in range(n):
            if t < lane[b]:
                # (a label held as a float: the int64 array's store converts it)
                out[offsets[seqs[b]] + t - 1] = vlane(prev, b)


@njit(**_JIT)
def _last_label(score, end, T):
    """The best final score with the end weights, and its label (the first
    maximum): where both ways back start."""
    best = -np.inf
    arg = 0
    for j in range(end.size):
        v = score[T - 1, j] + end[j]
        if v > best:
            best = v
            arg = j
    return best, arg


@njit(**_JIT)
def _best_path(score, A, end, T, t0, out):
    """The labels of the best path into ``out[t0:t0 + T]`` from the best
    scores ``score[t, j]`` of the forward pass (the argmax recomputed along
    the path, first maximum on ties); returns the path's score."""
    L = A.shape[0]
    best, arg = _last_label(score, end, T)
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
def _marginals_chunk(c, bounds, order, indptr, indices, data, offsets, W, A, start, end,
                     expA, exp_start, exp_end, shifts, out, logz_out):
    """Node marginals (rows of ``out``) and log Z of the sequences of chunk
    ``c``, N_LANES side by side in SIMD lanes, in ``order`` (by length
    within windows), the last few beside copies of the last one
    (:func:`_lane_take`): the objective's scaled forward-backward in lanes
    (:mod:`.lane_forward_backward`), which a fit has compiled already. A
    sequence longer than :data:`_VITERBI_LANE_MAX_T`, and every sequence of a
    batch on which the scaled recursion underflows (or that no path
    allows), gets log Z NaN and is left to :func:`_marginals_listed`, one at
    a time: a kernel of its own, compiled only when used."""
    lo, hi = bounds[c], bounds[c + 1]
    L = A.shape[0]
    maxT = min(_max_length(lo, hi, offsets), _VITERBI_LANE_MAX_T)
    reach = _reachable(expA, exp_start, maxT)
    lb = _lane_buffers(maxT, L)
    alpha8, beta8, lengths = lb[1], lb[2], lb[8]
    ones = np.ones(offsets.size - 1)      # (the lanes' sequence weights)
    seqs = np.empty(N_LANES, dtype=np.int64)
    NL = N_LANES
    i = lo
    while i < hi:
        n, i = _viterbi_take(i, hi, order, offsets, seqs, logz_out)
        if n == 0:
            continue
        T = _lane_scaled_posteriors(seqs, n, indptr, indices, data, offsets, ones, W, expA,
                                    exp_start, exp_end, shifts, reach, lb, logz_out)
        if T == 0:
            for b in range(n):
                logz_out[seqs[b]] = np.nan
            continue
        for b in range(n):
            t0, Tb = offsets[seqs[b]], lengths[b]
            d = T - Tb
            for t in range(Tb):
                k = (d + t) * L * NL + b
                for j in range(L):
                    out[t0 + t, j] = alpha8[k + j * NL] * beta8[k + j * NL]


@njit(**_JIT)
def _marginals_listed(seqs, indptr, indices, data, offsets, W, A, start, end, expA,
                      exp_start, exp_end, shifts, out, logz_out):
    """:func:`_marginals_chunk` for the sequences ``seqs`` it left (log Z
    NaN), one at a time: the scaled recursion, or where it underflows the
    log-space one (:func:`_posteriors`); log Z -inf (and the rows NaN) when
    no path is allowed."""
    L = A.shape[0]
    bufs = _listed_buffers(seqs, offsets, L)
    alpha, beta = bufs[1], bufs[2]
    expAT = np.ascontiguousarray(expA.T)
    no_counts = np.zeros((L, L))
    for s in seqs:
        t0 = offsets[s]
        T = offsets[s + 1] - t0
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
