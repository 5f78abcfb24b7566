"""Viterbi for many labels: steps that skip the previous labels that
cannot win.

From :data:`PRUNE_MIN_LABELS` labels on, :func:`skcrf._kernels.inference.viterbi`
decodes with :func:`_viterbi_pruned_chunk` instead of
:func:`skcrf._kernels.decode._viterbi_chunk`. Both run eight sequences side
by side in SIMD lanes, but where the narrow kernel's step does L^2 /
N_LANES vector operations per token whatever the scores, this one's
(:func:`_lane_viterbi_pruned`) first drops the previous labels that an
exact bound shows cannot win in any of the eight lanes, then takes the
maximum over the others only. Taggers' emissions separate the labels, so a
lane keeps a few of them and the eight lanes together not many more.
When they do not (most labels kept in some lane), a chunk of many labels goes
on one sequence at a time with the same bound (:func:`_pruned_step`), and
back in lanes if that keeps many labels too. Every way gives the same paths
and the same bits. A separate kernel, chosen by the label count (and not for
a model whose every label forbids some transition, which leaves the bound
nothing to drop: :func:`skcrf._kernels.inference._decodes_pruned`), so that
a model of few labels never compiles this one.
"""

import numpy as np
from numba import njit, prange

from ._jit import _JIT, any_layout
from .decode import (
    _VITERBI_LANE_MAX_T,
    _lane_first_step,
    _lane_max_step,
    _lane_way_back,
    _last_label,
    _viterbi_take,
)
from .emissions import emissions
from .forward_backward import _max_length
from .intrinsics import flat_view
from .lanes import N_LANES, vadd, vall, vhmax, vless, vload, vmax, vselect, vsplat, vstore

#: from this many labels on, Viterbi decodes with the pruned kernels: rows
#: too wide for quads. With fewer labels the eight lanes between them keep
#: most previous labels, so the bound's passes cost about what the step
#: saves, and pruning quad rows too would compile the decoding a second time
#: (measurements: benchmarks/results/viterbi_pruned_lanes_1207.txt).
PRUNE_MIN_LABELS = 17

#: from this many labels on, :func:`skcrf._kernels.inference.viterbi_sequence`
#: (one sequence per call, no lanes) takes the pruned step
#: (:func:`_viterbi_one_pruned`); below, the full one (the threshold the batch
#: kernels had when both were chosen together)
SEQUENCE_PRUNE_MIN_LABELS = 48

#: with this many labels or more, the chunk goes on one sequence at a time
#: once the lanes' steps keep more than 1 / ALONE_ABOVE of the labels on
#: average (each lane keeps a few, but different ones: the one-sequence step
#: then does less work). With fewer labels, never: a step of one sequence
#: waits for the one before (the floor, the labels kept, their rows), a
#: fixed cost per step that the few labels it skips do not make up for.
ALONE_MIN_LABELS = 64
ALONE_ABOVE = 2

#: and back in lanes, for the rest of the chunk, once the one-sequence steps
#: keep more than 1 / LANES_ABOVE of the labels (emissions that hardly
#: separate them: the lanes overlap eight such steps, where one sequence
#: waits for each step before the next)
LANES_ABOVE = 4

#: steps a chunk decodes before it compares the labels kept with the above
_SETTLE_STEPS = 256


@njit(**_JIT)
def _viterbi_pruned_chunk(c, bounds, order, indptr, indices, data, offsets, W, A, start,
                          end, out, best_out):
    """:func:`skcrf._kernels.decode._viterbi_chunk` with pruned steps: the
    sequences of chunk ``c``, in ``order``, eight at a time in lanes
    (:func:`_lane_viterbi_pruned`); one at a time (:func:`_viterbi_one_pruned`)
    after the chunk's first :data:`_SETTLE_STEPS` steps or more if the lanes
    keep more than 1 / :data:`ALONE_ABOVE` of the labels (from
    :data:`ALONE_MIN_LABELS` labels on), and in lanes again for good if one
    at a time keeps more than 1 / :data:`LANES_ABOVE`.
    Sequences longer than :data:`_VITERBI_LANE_MAX_T` run one at a time."""
    lo, hi = bounds[c], bounds[c + 1]
    L = A.shape[0]
    maxT = max(_max_length(lo, hi, offsets), 1)
    # (rows for one sequence of the longest, or one lane batch: work arrays
    # of both ways, made once)
    E = np.empty((maxT, L))
    score = np.empty((maxT, L))
    cands = np.empty((maxT, L + 1), dtype=np.int32)
    table = _viterbi_table(A)
    rowmax, rowmin = table[L], table[L + 1]
    n8 = min(maxT, _VITERBI_LANE_MAX_T) * L * N_LANES
    U8, S8 = np.empty(n8), np.empty(n8)
    seqs = np.empty(N_LANES, dtype=np.int64)
    alone = False
    settled = L < ALONE_MIN_LABELS
    kept = steps = 0
    i = lo
    while i < hi:
        if alone:
            s = order[i]
            i += 1
            kept += _viterbi_one_pruned(s, indptr, indices, data, offsets, W, A, table,
                                        start, end, E, score, cands, out, best_out)
            steps += max(offsets[s + 1] - offsets[s] - 1, 0)
            if steps >= _SETTLE_STEPS and LANES_ABOVE * kept > steps * L:
                alone, settled = False, True
            continue
        n, i = _viterbi_take(i, hi, order, offsets, seqs, best_out)
        if n:
            k, T = _lane_viterbi_pruned(seqs, n, indptr, indices, data, offsets, W, A,
                                        start, end, rowmax, rowmin, U8, S8, cands, out,
                                        best_out)
            kept += k
            steps += T - 1
            if not settled and steps >= _SETTLE_STEPS and ALONE_ABOVE * kept > steps * L:
                alone = True
                kept = steps = 0
    # (sequences too long for the lanes: left with score NaN by _viterbi_take)
    for k in range(lo, hi):
        s = order[k]
        if np.isnan(best_out[s]):
            _viterbi_one_pruned(s, indptr, indices, data, offsets, W, A, table, start, end,
                                E, score, cands, out, best_out)


@njit(parallel=True, **_JIT)
def _viterbi_pruned_parallel(bounds, *args):
    for c in prange(bounds.size - 1): _viterbi_pruned_chunk(c, bounds, *args)  # noqa: E701


@njit(**_JIT)
def _lane_viterbi_pruned(seqs, n, indptr, indices, data, offsets, W, A, start, end, rowmax,
                         rowmin, U8, S8, cands, out, best_out):
    """:func:`skcrf._kernels.decode._lane_viterbi` with pruned steps: at each
    step the previous labels that can win in some lane
    (:func:`_lane_kept`) go to ``cands[t]``, and each label's best score is
    the maximum over those only, in the same increasing order, as the full
    step's over all (a dropped label is strictly below a kept one, whatever
    the next label, in every lane): the same bits; the way back looks at the
    same labels. Returns ``(labels kept, summed over the steps, batch
    length)``."""
    L = A.shape[0]
    NL = N_LANES
    T = _lane_first_step(seqs, n, indptr, indices, data, offsets, W, start, U8, S8, L)
    lengths = np.empty(NL)
    for b in range(NL):
        lengths[b] = offsets[seqs[b] + 1] - offsets[seqs[b]]
    lanes_T = vload(lengths, 0)
    kept = 0
    for t in range(1, T):
        K = _lane_kept(S8, t, L, rowmax, rowmin, lanes_T, cands)
        kept += K
        _lane_max_step(S8, U8, A, t, L, cands, K)
    _lane_way_back(seqs, n, offsets, A, end, S8, T, out, best_out, cands)
    return kept, T


@njit(inline="always", **_JIT)
def _lane_kept(S8, t, L, rowmax, rowmin, lanes_T, cands):
    """The previous labels i that can win step t in some lane still in its
    sequence (``t < lanes_T``), in increasing order, into ``cands[t, :K]``,
    K into ``cands[t, L]``; returns K.

    :func:`_pruned_step`'s bound, lane by lane: with floor = max_i
    (score[i] + min_j A[i, j]), a label whose score[i] + max_j A[i, j] is
    below floor loses to the label that gives floor for every next label j,
    strictly. A label is dropped when it is so in every live lane. The floor
    is a maximum, the same in any order: four running maxima, not one chain
    of L dependent ones. The test is branch-free (a branch on scores
    mispredicts); a lane past its sequence's end (whose scores nothing
    reads) drops everything."""
    NL = N_LANES
    p0 = (t - 1) * L * NL
    f0 = f1 = f2 = f3 = vsplat(-np.inf)
    i = 0
    while i + 4 <= L:
        f0 = vmax(f0, vadd(vload(S8, p0 + i * NL), vsplat(rowmin[i])))
        f1 = vmax(f1, vadd(vload(S8, p0 + (i + 1) * NL), vsplat(rowmin[i + 1])))
        f2 = vmax(f2, vadd(vload(S8, p0 + (i + 2) * NL), vsplat(rowmin[i + 2])))
        f3 = vmax(f3, vadd(vload(S8, p0 + (i + 3) * NL), vsplat(rowmin[i + 3])))
        i += 4
    while i < L:
        f0 = vmax(f0, vadd(vload(S8, p0 + i * NL), vsplat(rowmin[i])))
        i += 1
    floor = vmax(vmax(f0, f1), vmax(f2, f3))
    live = vless(vsplat(t), lanes_T)
    one = vsplat(1.0)
    K = 0
    for i in range(L):
        # (a NaN score, or a floor of -inf, keeps the label: never dropped
        # wrongly)
        drop = vselect(live, vless(vadd(vload(S8, p0 + i * NL), vsplat(rowmax[i])), floor), one)
        cands[t, K] = i
        K += not vall(drop)
    cands[t, L] = K
    return K


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
    emissions(indptr, indices, data, t0, T, W, E)
    for j in range(L):
        score[0, j] = E[0, j] + start[j]
    kept = 0
    sf, Ef, Af = flat_view(score), flat_view(E), flat_view(A)
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
