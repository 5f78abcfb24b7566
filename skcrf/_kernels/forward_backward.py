"""Forward-backward of one sequence in probability space with per-position
scaling (as CRFsuite does), its log-space fallback, and node marginals.

``exp`` is taken once per (token, label) cell (:func:`_exp_shifted`) and
once per transition matrix, not per L*L cell as a log-sum-exp would. The
scaled recursion is exact while every reachable forward value stays a normal
number; :func:`_underflowed` detects the rare case where it does not and the
caller falls back to :func:`_forward_backward_log`. This module is also the
reference the SIMD-lane kernel (:mod:`.lane_forward_backward`) is tested
against.
"""

import numpy as np
from numba import njit

from ._jit import _JIT, _JIT_EXP, _JIT_RECURSION, any_layout
from .emissions import emissions
from .intrinsics import exp_nonpositive


@njit(**_JIT)
def _max_length(lo, hi, offsets):
    maxT = 0
    for s in range(lo, hi):
        maxT = max(maxT, offsets[s + 1] - offsets[s])
    return maxT


@njit(**_JIT_EXP)
def _exp_shifted(E, U):
    """U[t] = exp(E[t] - max(E[t])); returns the sum of the maxima.

    Kept out of the (reassociating) recursion so that the exp's range
    reduction is evaluated in the order written (only multiply-adds are
    fused, see ``_JIT_EXP``). The shifted scores are
    written first and exponentiated in place in one flat loop over the
    sequence's T * L cells: the polynomial then vectorises over whole
    vectors, not over rows of L labels and a remainder."""
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
def _accumulate_pairs_log(E, A, la, lb, logz, w, gA):
    T, L = E.shape
    for t in range(1, T):
        for i in range(L):
            for j in range(L):
                v = la[t - 1, i] + A[i, j] + E[t, j] + lb[t, j] - logz
                if v > -np.inf:
                    gA[i, j] += w * np.exp(v)


@njit(**_JIT)
def _log_space_marginals(E, A, start, end, alpha, beta, la, lb, w, gA):
    """The fallback of :func:`_posteriors` when the scaled recursion
    underflowed: log Z by :func:`_forward_backward_log` (exact, no shifts),
    the node marginals into ``alpha`` (``beta`` ones), ``w`` times the
    expected transition counts added to ``gA``; ``la``/``lb`` hold the
    log-space quantities."""
    T, L = E.shape
    logz = _forward_backward_log(E, A, start, end, la, lb)
    if w != 0.0:
        _accumulate_pairs_log(E, A, la, lb, logz, w, gA)
    for t in range(T):
        for j in range(L):
            alpha[t, j] = np.exp(la[t, j] + lb[t, j] - logz)
            beta[t, j] = 1.0
    return logz


@njit(inline="always", **_JIT)
def _work_arrays(maxT, L):
    """(E, alpha, beta, U, scale, work, la, lb) for sequences up to maxT long."""
    return (np.empty((maxT, L)), np.empty((maxT, L)), np.empty((maxT, L)),
            np.empty((maxT, L)), np.empty(maxT), np.empty(L),
            np.empty((maxT, L)), np.empty((maxT, L)))


@njit(**_JIT)
def _posterior_buffers(lo, hi, offsets, L):
    """Work arrays for the longest sequence of lo..hi-1:
    (E, alpha, beta, U, scale, work, la, lb)."""
    return _work_arrays(_max_length(lo, hi, offsets), L)


@njit(**_JIT)
def _listed_buffers(seqs, offsets, L):
    """:func:`_posterior_buffers` for the longest of the sequences ``seqs``
    (the few that the underflow-safe kernels are given)."""
    maxT = 1
    for s in seqs:
        maxT = max(maxT, offsets[s + 1] - offsets[s])
    return _work_arrays(maxT, L)


@njit(**_JIT)
def _scaled_posteriors(t0, T, indptr, indices, data, W, expA, expAT, exp_start, exp_end,
                       shifts, bufs, w, gA):
    """Emissions and the scaled forward-backward of the sequence at rows
    t0..t0+T-1 (T >= 1): its log Z, the node marginals left as ``alpha *
    beta`` in ``bufs``, ``w`` times its expected transition counts added to
    ``gA`` (``w != 0``). Returns NaN, the emissions left in ``bufs``, when the
    recursion underflowed (the caller's fallback: :func:`_posteriors`, or a
    kernel of its own that only the inputs needing it compile)."""
    E, alpha, beta, U, scale, work, la, lb = bufs
    emissions(indptr, indices, data, t0, T, W, any_layout(E))   # as the lanes' views
    logz = _forward_backward(E[:T], U[:T], expA, expAT, exp_start, exp_end, alpha[:T],
                             beta[:T], scale[:T], work, w, gA)
    return logz + _shift_total(shifts, T)


@njit(**_JIT)
def _posteriors(t0, T, indptr, indices, data, W, A, start, end, expA, expAT,
                exp_start, exp_end, shifts, bufs, w, gA):
    """:func:`_scaled_posteriors` with the log-space fallback
    (:func:`_log_space_marginals`). Returns ``(log Z, scaled)``; ``scaled``
    is False when the fallback ran."""
    logz = _scaled_posteriors(t0, T, indptr, indices, data, W, expA, expAT, exp_start,
                              exp_end, shifts, bufs, w, gA)
    if logz == logz:
        return logz, True
    E, alpha, beta, U, scale, work, la, lb = bufs
    return _log_space_marginals(E[:T], A, start, end, alpha[:T], beta[:T], la[:T], lb[:T],
                                w, gA), False


@njit(**_JIT)
def _shift_total(shifts, T):
    """What the shifted exponentials left out of log Z for a length-T sequence.

    ``shifts = (start_shift, end_shift, transition_shift)``: the caller
    exponentiated ``start - shifts[0]``, ``end - shifts[1]`` and
    ``A - shifts[2]`` to keep them in range.
    """
    return shifts[0] + shifts[1] + (T - 1) * shifts[2]


@njit(**_JIT)
def _weigh_marginals(alpha, beta, w, T):
    """alpha[:T] = w * alpha[:T] * beta[:T]: the weighted node marginals."""
    for t in range(T):
        for j in range(alpha.shape[1]):
            alpha[t, j] = w * alpha[t, j] * beta[t, j]
