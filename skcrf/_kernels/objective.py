"""The data term of the training objective: ``sum_s w_s log Z_s`` and the
expected feature counts, over chunks of sequences.

``_objective_chunk`` runs the sequences of one chunk in SIMD lanes into a
gradient buffer of its own (``_deferred_terms`` runs the rare ones whose
lanes would underflow, one at a time);
``_objective_parallel`` runs the chunks on Numba's threads;
``_objective_owned`` runs several threads on one shared state gradient,
block by block (memory that does not grow with threads).
"""

import numpy as np
from numba import njit, prange

from ._jit import _JIT
from .emissions import as_matrix
from .forward_backward import (
    _listed_buffers,
    _max_length,
    _posterior_buffers,
    _posteriors,
    _weigh_marginals,
)
from .lane_forward_backward import (
    _add_lane_pairs,
    _lane_marginals,
    _lane_posteriors,
    _lane_setup,
    _lane_take,
)
from .lanes import N_LANES
from .state_counts import _owned_state_counts, add_state_counts


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
                     gW, gA, gS, gE, logz_out, deferred):
    """Expected counts and log Z of the sequences of chunk ``c``: positions
    ``bounds[c]:bounds[c + 1]`` of ``order``, which lists the chunk's
    sequences by length within windows of consecutive ones, so that every
    ``N_LANES`` of them in a row go through :func:`_lane_posteriors` together
    with little padding (the chunk's last few too, with copies in the lanes
    left over; empty sequences are skipped).

    A batch whose scaled recursion would underflow is left to the caller: its
    sequences are flagged in ``deferred`` (every other sequence's flag is
    cleared), for :func:`_deferred_terms` to run one by one. That keeps the
    one-sequence forward-backward and its log-space fallback, which almost
    no problem needs, out of this kernel: a cold first fit compiles it only
    when it is used.

    Every chunk reads the same state weights ``W``, a dense (rows, width)
    matrix or flat records (:mod:`skcrf._training.records`), and accumulates
    its expected counts into its own ``gW[c]`` (of W's layout; cleared where
    read by the previous evaluation's gather,
    :func:`skcrf._kernels.vector._gradient_chunk`) and ``gA[c]``, ``gS[c]``,
    ``gE[c]``; the caller sums them over chunks. (``A``, ``start``, ``end``
    are for :func:`_deferred_terms`: one argument list for both.)
    """
    lo, hi = bounds[c], bounds[c + 1]
    gWc, gAc, gSc, gEc = gW[c], gA[c], gS[c], gE[c]
    L = expA.shape[0]   # (W's rows may be padded)
    lb, reach, gA8 = _lane_setup(lo, hi, offsets, L, expA, exp_start)
    P = np.empty((max(_max_length(lo, hi, offsets), 1), L))
    seqs = np.empty(N_LANES, dtype=np.int64)
    gAc[:, :] = 0.0
    gSc[:] = 0.0
    gEc[:] = 0.0
    i = lo
    while i < hi:
        n, i = _lane_take(i, hi, order, offsets, seqs, logz_out)
        if n == 0:
            break
        ok = _lane_posteriors(seqs, n, indptr, indices, data, offsets, weights, W, expA,
                              exp_start, exp_end, shifts, reach, lb, gA8, gSc, gEc,
                              logz_out)
        for b in range(n):
            s = seqs[b]
            deferred[s] = not ok
            if ok and weights[s] != 0.0:
                _lane_marginals(lb[1], b, lb[-1], L, P, 0)
                add_state_counts(indptr, indices, data, offsets[s], lb[-1][b], P, gWc)
    _add_lane_pairs(gA8, expA, gAc)


@njit(**_JIT)
def _deferred_terms(seqs, indptr, indices, data, offsets, weights, W, A, start, end, expA,
                    exp_start, exp_end, shifts, gW, gA, gS, gE, logz_out):
    """The sequences ``seqs`` that :func:`_objective_chunk` deferred, one by
    one through the underflow-safe path (:func:`_sequence_terms`): log Z
    into ``logz_out``, the expected counts added to chunk 0's buffers (the
    caller sums the chunks' buffers, whichever chunk a sequence came from)."""
    L = expA.shape[0]
    bufs = _listed_buffers(seqs, offsets, L)
    alpha, beta = bufs[1], bufs[2]
    expAT = np.ascontiguousarray(expA.T)
    for s in seqs:
        T = _sequence_terms(s, indptr, indices, data, offsets, weights, W, A, start, end,
                            expA, expAT, exp_start, exp_end, shifts, bufs, gA[0], gS[0],
                            gE[0], logz_out)
        if T > 0 and weights[s] != 0.0:
            _weigh_marginals(alpha, beta, weights[s], T)
            add_state_counts(indptr, indices, data, offsets[s], T, alpha, gW[0])


@njit(parallel=True, **_JIT)
def _objective_parallel(bounds, *args):
    for c in prange(bounds.size - 1): _objective_chunk(c, bounds, *args)  # noqa: E701


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
    seqs = np.empty(N_LANES, dtype=np.int64)
    i = lo
    while i < hi:
        n, i = _lane_take(i, hi, order, offsets, seqs, logz_out)
        if n == 0:
            break
        if _lane_posteriors(seqs, n, indptr, indices, data, offsets, weights, W, expA,
                            exp_start, exp_end, shifts, reach, lb, gA8, gS, gE, logz_out):
            for b in range(n):
                _lane_marginals(lb[1], b, lb[-1], L, P, offsets[seqs[b]] - tb0)
            continue
        # (the block's marginals are needed before its state counts: the
        # underflow-safe path runs here, not deferred as in _objective_chunk)
        for s in seqs[:n]:
            T = _sequence_terms(s, indptr, indices, data, offsets, weights, W, A,
                                start, end, expA, expAT, exp_start, exp_end, shifts,
                                bufs, gA, gS, gE, logz_out)
            w = weights[s]
            r0 = offsets[s] - tb0
            for t in range(T):
                for j in range(L):
                    P[r0 + t, j] = w * alpha[t, j] * beta[t, j]
    _add_lane_pairs(gA8, expA, gA)


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
    # (gW: cleared where read by the previous evaluation's gather, see
    # skcrf._kernels.vector._gradient_chunk)
    for k in prange(K):
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
            _owned_state_counts(k, tb0, tb1, tb0, indptr, indices, data, split, P,
                                as_matrix(gW))
