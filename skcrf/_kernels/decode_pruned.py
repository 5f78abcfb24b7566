"""Viterbi for many labels: a step that skips the previous labels that
cannot win.

From :data:`PRUNE_MIN_LABELS` labels on, :func:`skcrf._kernels.inference.viterbi`
decodes with :func:`_viterbi_pruned_chunk` instead of
:func:`skcrf._kernels.decode._viterbi_chunk`: one sequence at a time, each
step over the previous labels an exact bound leaves in the running
(:func:`_pruned_step`), where the lanes of the narrow kernel do L^2 / N_LANES
vector steps per token whatever the scores. Both give the same paths and the
same bits. A separate kernel, chosen by the label count, so that a model of
few labels never compiles this one.
"""

import numpy as np
from numba import njit, prange

from ._jit import _JIT, any_layout
from .decode import _VITERBI_LANE_MAX_T, _lane_viterbi, _last_label, _longest
from .emissions import _emissions
from .forward_backward import _max_length
from .lane_forward_backward import _lane_run
from .lanes import N_LANES, vadd, vhmax, vload, vmax, vsplat, vstore

#: from this many labels on, Viterbi decodes with the pruned kernels. The
#: lanes' step costs L^2 / 8 vector operations per token and the pruned one
#: about (2 + K) L / 8 (K: labels kept), but one sequence at a time: each step
#: waits for the one before (the floor, the labels kept, their row), where the
#: lanes overlap eight sequences. On real taggers (K of two or three) the
#: pruned step overtakes the lanes between 42 and 59 labels (the A/Bs are in
#: benchmarks/results/predict_ab_1207.txt).
PRUNE_MIN_LABELS = 48

#: a chunk goes on in lanes once its steps keep more than 1 / LANES_ABOVE of
#: the labels on average (emissions that hardly separate them: at a quarter
#: the two cost about the same)
LANES_ABOVE = 4


@njit(**_JIT)
def _viterbi_pruned_chunk(c, bounds, order, indptr, indices, data, offsets, W, A, start,
                          end, out, best_out):
    """:func:`skcrf._kernels.decode._viterbi_chunk` with the pruned step:
    each sequence of chunk ``c`` alone (:func:`_viterbi_one_pruned`), in
    ``order``. A model and input whose steps keep more than 1 /
    :data:`LANES_ABOVE` of the labels (emissions that hardly separate
    them), over the chunk's first 256 steps or more, decode the rest of the
    chunk in lanes, which then cost less than the pruned step: the same bits
    either way."""
    lo, hi = bounds[c], bounds[c + 1]
    L = A.shape[0]
    maxT = _max_length(lo, hi, offsets)
    E = np.empty((maxT, L))
    score = np.empty((maxT, L))
    cands = np.empty((maxT, L + 1), dtype=np.int32)
    table = _viterbi_table(A)
    U8 = S8 = np.empty(0)                  # the lanes' work arrays, made on switching
    lanes = False
    kept = steps = 0
    i = lo
    while i < hi:
        n = _lane_run(i, hi, order, offsets)
        if lanes and n == N_LANES and _longest(order[i:i + n], offsets) <= _VITERBI_LANE_MAX_T:
            _lane_viterbi(order[i:i + n], n, indptr, indices, data, offsets, W, A, start,
                          end, U8, S8, out, best_out)
        else:
            for k in range(i, i + n):
                kept += _viterbi_one_pruned(order[k], indptr, indices, data, offsets, W, A,
                                            table, start, end, E, score, cands, out,
                                            best_out)
                steps += max(offsets[order[k] + 1] - offsets[order[k]] - 1, 0)
            if not lanes and steps >= 256 and LANES_ABOVE * kept > steps * L:
                lanes = True
                n8 = max(min(maxT, _VITERBI_LANE_MAX_T), 1) * L * N_LANES
                U8, S8 = np.empty(n8), np.empty(n8)
        i += n


@njit(parallel=True, **_JIT)
def _viterbi_pruned_parallel(bounds, *args):
    for c in prange(bounds.size - 1): _viterbi_pruned_chunk(c, bounds, *args)  # noqa: E701


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
def _pruned_step(sf, Af, rowmax, rowmin, Ef, t, L, cands):
    """Viterbi's forward step at t (as
    :func:`skcrf._kernels.decode._max_step`, the same values)
    over the previous labels that can win: their indices, in increasing
    order, go to ``cands[t, :K]`` and their count K to ``cands[t, L]``;
    returns K. ``sf``, ``Ef``: the score and emission matrices (rows of L)
    flat; ``Af``: the transitions (L, L) flat; ``rowmax``, ``rowmin``: each
    previous label's largest and smallest transition weight.

    Bound: with lo_i = score[t-1, i] + min_j A[i, j] and floor = max_i lo_i,
    a label i whose hi_i = score[t-1, i] + max_j A[i, j] is below floor
    loses to the label that gives floor for every next label j, strictly
    (rounding is monotone, so the floating-point sums keep the order of
    the exact ones). Dropping it changes no maximum and no first maximum:
    the result is the same bits as the full step's. Emissions that separate
    the labels leave only a few in the running, so a step costs about
    (2 + K) L operations instead of L^2; when nothing can be dropped
    (all scores close, or -inf weights in every row: floor = -inf) it is
    the full step plus two passes of L.

    Every pass is vector work over labels, eight at a time, and the
    candidates are collected without a branch (a branch on scores
    mispredicts): the floor is a maximum, the same whatever the order its
    terms are taken in (no score is NaN: the weights are finite or -inf);
    each label j's maximum over the kept labels runs in their increasing
    order, as the full step's, ``vmax`` keeping the earlier value on ties."""
    p0, k0 = (t - 1) * L, t * L
    NL = N_LANES
    L8 = L - L % NL
    acc = vsplat(-np.inf)
    for i in range(0, L8, NL):
        acc = vmax(acc, vadd(vload(sf, p0 + i), vload(rowmin, i)))
    floor = vhmax(acc)
    for i in range(L8, L):
        floor = max(floor, sf[p0 + i] + rowmin[i])
    K = 0
    for i in range(L):
        cands[t, K] = i
        K += sf[p0 + i] + rowmax[i] >= floor
    # (row t written and read as vectors: a vector load of values just stored
    # one by one waits for the stores to retire, the store-to-load forwarding
    # failing; so the row starts at -inf and gets its emissions as vectors too)
    ninf = vsplat(-np.inf)
    for j in range(0, L8, NL):
        vstore(sf, k0 + j, ninf)
    for j in range(L8, L):
        sf[k0 + j] = -np.inf
    for k in range(K):
        i = cands[t, k]
        p = sf[p0 + i]
        pv = vsplat(p)
        for j in range(0, L8, NL):
            vstore(sf, k0 + j, vmax(vload(sf, k0 + j), vadd(pv, vload(Af, i * L + j))))
        for j in range(L8, L):
            v = p + Af[i * L + j]
            if v > sf[k0 + j]:
                sf[k0 + j] = v
    for j in range(0, L8, NL):
        vstore(sf, k0 + j, vadd(vload(sf, k0 + j), vload(Ef, k0 + j)))
    for j in range(L8, L):
        sf[k0 + j] += Ef[k0 + j]
    cands[t, L] = K
    return K


@njit(**_JIT)
def _viterbi_one_pruned(s, indptr, indices, data, offsets, W, A, table, start, end, E,
                        score, cands, out, best_out):
    """Viterbi of sequence s alone with the pruned step (E, score: work
    arrays of at least its length rows, cands the same with L + 1 columns;
    ``table`` from :func:`_viterbi_table`); the way back looks only at the
    labels each step kept. Returns how many previous labels the steps kept,
    summed over the sequence, which :func:`_viterbi_pruned_chunk` watches."""
    t0 = offsets[s]
    T = offsets[s + 1] - t0
    if T == 0:
        best_out[s] = 0.0
        return 0
    L = A.shape[0]
    _emissions(indptr, indices, data, t0, T, W, E)
    for j in range(L):
        score[0, j] = E[0, j] + start[j]
    kept = 0
    sf, Ef, Af = score.reshape(-1), E.reshape(-1), A.reshape(-1)
    rowmax, rowmin = table[L], table[L + 1]
    for t in range(1, T):
        kept += _pruned_step(sf, Af, rowmax, rowmin, Ef, t, L, cands)
    best_out[s] = _best_path_pruned(score, A, end, T, t0, out, cands)
    return kept


@njit(**_JIT)
def _best_path_pruned(score, A, end, T, t0, out, cands):
    """:func:`skcrf._kernels.decode._best_path` after :func:`_pruned_step`: the argmax into token t
    runs over the labels that step kept (``cands[t, :cands[t, L]]``, in
    increasing order). A dropped label is strictly below a kept one for
    every next label, so the first maximum is the same."""
    L = A.shape[0]
    best, arg = _last_label(any_layout(score), end, T)
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
