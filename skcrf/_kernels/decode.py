"""Decoding kernels: Viterbi (one sequence at a time, or eight side by side
in SIMD lanes), node marginals with log Z, and path scores.

Each is a chunk kernel ``*_chunk(c, bounds, ...)`` plus a ``prange`` driver
``*_parallel``; :func:`skcrf._kernels.parallel.run_chunks` picks one.
"""

import numpy as np
from numba import njit, prange

from ._jit import _JIT
from .emissions import _emissions, _value_mask
from .forward_backward import _max_length, _posterior_buffers, _posteriors
from .lane_forward_backward import _lane_run
from .lanes import N_LANES, vadd, vload, vmax, vsplat, vstore


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
    windows, :func:`skcrf._kernels.parallel.order_by_length`); every N_LANES in a
    row, none empty and none longer than :data:`_VITERBI_LANE_MAX_T`, run
    side by side in SIMD lanes (:func:`_lane_viterbi`), the others one at a
    time. Both give the same scores, bit for bit.

    From :data:`_PRUNE_MIN_LABELS` labels on, sequences run alone with the
    pruned step (:func:`_pruned_step`), which does a few L-term rows per
    token where the lanes do L^2 / N_LANES vector steps, unless the step
    keeps too many labels on this model and input (then lanes).

    The forward pass keeps only the best score of each (t, label): no argmax,
    no back-pointer table (less memory traffic per step); the way back
    (:func:`_best_path`) recomputes the argmax along the best path only, L
    terms per token. Ties go to the lowest previous label, as a back-pointer
    table filled in the same order would give: the values compared are the
    same floating-point numbers either way."""
    lo, hi = bounds[c], bounds[c + 1]
    L = A.shape[0]
    maxT = _max_length(lo, hi, offsets)
    E = np.empty((maxT, L))
    score = np.empty((maxT, L))
    cands = np.empty((maxT, L + 1), dtype=np.int32)
    table = _viterbi_table(A)
    n8 = max(min(maxT, _VITERBI_LANE_MAX_T), 1) * L * N_LANES
    U8, S8 = np.empty(n8), np.empty(n8)
    lanes = L < _PRUNE_MIN_LABELS
    kept = steps = 0
    i = lo
    while i < hi:
        n = _lane_run(i, hi, order, offsets)
        if lanes and n == N_LANES and _longest(order[i:i + n], offsets) <= _VITERBI_LANE_MAX_T:
            _lane_viterbi(order[i:i + n], indptr, indices, data, offsets, W, A, start, end,
                          U8, S8, out, best_out)
        else:
            for k in range(i, i + n):
                kept += _viterbi_one(order[k], indptr, indices, data, offsets, W, A,
                                     table, start, end, E, score, cands, out, best_out)
                steps += max(offsets[order[k] + 1] - offsets[order[k]] - 1, 0)
            # a model whose emissions leave many labels in the running (more
            # than a quarter kept, over the chunk's first 256 steps or more)
            # decodes the rest of the chunk in lanes: the pruned step
            # costs more than the lanes' full one then
            if not lanes and steps >= 256 and 4 * kept > steps * L:
                lanes = True
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


#: from this many labels on, Viterbi runs one sequence at a time with the
#: pruned step (fewer labels: side by side in lanes, or the full step)
_PRUNE_MIN_LABELS = 32


@njit(**_JIT)
def _viterbi_table(A):
    """What the one-sequence Viterbi reads of the transitions, (L + 2, L):
    rows 0..L-1 ``A.T`` (row j: the weights into label j, contiguous), row L
    each previous label's largest weight ``max_j A[i, j]``, row L + 1 its
    smallest (the bounds of :func:`_pruned_step`)."""
    L = A.shape[0]
    table = np.empty((L + 2, L))
    for i in range(L):
        hi = A[i, 0]
        lo = A[i, 0]
        for j in range(L):
            table[j, i] = A[i, j]
            if A[i, j] > hi:
                hi = A[i, j]
            if A[i, j] < lo:
                lo = A[i, j]
        table[L, i] = hi
        table[L + 1, i] = lo
    return table


@njit(**_JIT)
def _pruned_step(score, A, table, E, t, L, cands):
    """Viterbi's forward step at t (as :func:`_max_step`, the same values)
    over the previous labels that can win: their indices, in increasing
    order, go to ``cands[t, :K]`` and their count K to ``cands[t, L]``;
    returns K.

    Bound: with lo_i = score[t-1, i] + min_j A[i, j] and floor = max_i lo_i,
    a label i whose hi_i = score[t-1, i] + max_j A[i, j] is below floor
    loses to the label that gives floor for every next label j, strictly
    (rounding is monotone, so the floating-point sums keep the order of
    the exact ones). Dropping it changes no maximum and no first maximum:
    the result is the same bits as the full step's. Emissions that separate
    the labels leave only a few in the running, so a step costs about
    (2 + K) L operations instead of L^2; when nothing can be dropped
    (all scores close, or -inf weights in every row: floor = -inf) it is
    the full step plus two passes of L."""
    rowmax, rowmin = table[L], table[L + 1]
    floor = -np.inf
    for i in range(L):
        v = score[t - 1, i] + rowmin[i]
        if v > floor:
            floor = v
    K = 0
    for i in range(L):
        if score[t - 1, i] + rowmax[i] >= floor:
            cands[t, K] = i
            K += 1
    for j in range(L):
        score[t, j] = -np.inf
    for k in range(K):
        i = cands[t, k]
        p = score[t - 1, i]
        for j in range(L):
            v = p + A[i, j]
            if v > score[t, j]:
                score[t, j] = v
    for j in range(L):
        score[t, j] += E[t, j]
    cands[t, L] = K
    return K


@njit(**_JIT)
def _viterbi_one(s, indptr, indices, data, offsets, W, A, table, start, end, E, score,
                 cands, out, best_out):
    """Viterbi of sequence s alone (E, score: work arrays of at least its
    length rows, cands the same with L + 1 columns; ``table`` from
    :func:`_viterbi_table`). From :data:`_PRUNE_MIN_LABELS` labels on, the
    pruned step, and the way back looks only at the labels that step kept.
    Returns how many previous labels the pruned steps kept, summed over the
    sequence (0 for the full step), which :func:`_viterbi_chunk` watches."""
    t0 = offsets[s]
    T = offsets[s + 1] - t0
    if T == 0:
        best_out[s] = 0.0
        return 0
    L = A.shape[0]
    _emissions(indptr, indices, data, t0, T, W, E)
    for j in range(L):
        score[0, j] = E[0, j] + start[j]
    if L < _PRUNE_MIN_LABELS:
        for t in range(1, T):
            _max_step(score, table, E, t, L)
        best_out[s] = _best_path(score, A, end, T, t0, out)
        return 0
    kept = 0
    for t in range(1, T):
        kept += _pruned_step(score, A, table, E, t, L, cands)
    best_out[s] = _best_path_pruned(score, A, end, T, t0, out, cands)
    return kept


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


@njit(**_JIT)
def _best_path_pruned(score, A, end, T, t0, out, cands):
    """:func:`_best_path` after :func:`_pruned_step`: the argmax into token t
    runs over the labels that step kept (``cands[t, :cands[t, L]]``, in
    increasing order). A dropped label is strictly below a kept one for
    every next label, so the first maximum is the same."""
    L = A.shape[0]
    best, arg = _last_label(score, end, T)
    out[t0 + T - 1] = arg
    for t in range(T - 1, 0, -1):
        b = -np.inf
        prev = 0
        for k in range(cands[t, L]):
            i = cands[t, k]
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
