"""Forward-backward of eight sequences of one length at once, one per SIMD
lane (the ``<8 x double>`` type of :mod:`.lanes`).

The recursion of one sequence is a latency-bound chain of short L-term dot
products; eight independent sequences side by side fill the vector units.
Sequences are batched by length within windows (see
:func:`skcrf._kernels.parallel.order_by_length`) and padded at the front of
their lanes; a batch whose values would underflow falls back to the
one-sequence kernel. Expected transition counts are summed after the
backward pass as a tiled small matrix product per batch.
"""

import numpy as np
from numba import njit
from numba.extending import overload

from ._jit import _JIT, _JIT_RECURSION
from .emissions import emissions
from .forward_backward import _LN2, _TINY, _max_length, _shift_total
from .lanes import (
    N_LANES,
    vadd,
    vdiv,
    vexp_nonpositive,
    vexponent,
    vfma,
    vhmax,
    vhmin,
    vlane,
    vload,
    vmantissa,
    vmax,
    vmin,
    vmul,
    vselect,
    vsplat,
    vstore,
    vsub,
    vsum,
)


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
def _lane_take(i, hi, order, offsets, seqs, logz_out):
    """The next batch from position ``i`` of ``order`` (up to ``hi``): up to
    ``N_LANES`` non-empty sequences into ``seqs``, the lanes left over (the
    last few sequences of a range) filled with copies of the last one, so
    that every sequence runs in lanes and the objective needs no
    one-sequence path (whose compilation a cold first fit would wait for);
    the copies cost at most one batch per range. Empty sequences are
    skipped, their log Z set to 0. Returns ``(n, i)``: how many lanes count (0: none left) and the
    position after the batch."""
    n = 0
    while i < hi and n < N_LANES:
        s = order[i]
        i += 1
        if offsets[s + 1] == offsets[s]:
            logz_out[s] = 0.0
        else:
            seqs[n] = s
            n += 1
    for b in range(n, N_LANES):
        seqs[b] = seqs[max(n - 1, 0)]
    return n, i


@njit(**_JIT)
def _lane_buffers(maxT, L):
    """Work arrays of :func:`_lane_posteriors` for sequences up to ``maxT``
    long: (U8, alpha8, beta8, scale8, work8, w8, check8, first8, lengths);
    the ``*8`` are lane arrays (``skcrf._kernels.lanes``), ``E`` one sequence's
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


# (both inlined in Numba's IR, as is _lane_setup: compiled once, inside the
# objective or the marginals, not also on their own and linked in by LLVM)
@njit(inline="always", **_JIT)
def _lane_posteriors(seqs, n, indptr, indices, data, offsets, weights, W, expA, exp_start,
                     exp_end, shifts, reach, lb, gA8, gS, gE, logz_out):
    """:func:`_lane_scaled_posteriors` of a batch, then its weighted pair sums
    (expected transition counts but for the factor ``expA[i, j]``,
    :func:`_lane_pair_counts`) added to the lane array ``gA8`` ((i, j, lane),
    summed over lanes and multiplied by ``expA`` by :func:`_add_lane_pairs`)
    and its start / end marginals to ``gS`` / ``gE``; ``weight * P(y_t = j)``
    left in ``alpha8`` (``lb[1]``, read with :func:`_lane_marginals`). False
    when the scaled recursion gave up (the caller then runs the batch through
    :func:`_posteriors`, or leaves it to ``objective._deferred_terms``)."""
    T = _lane_scaled_posteriors(seqs, n, indptr, indices, data, offsets, weights, W, expA,
                                exp_start, exp_end, shifts, reach, lb, logz_out)
    if T:
        w = vload(lb[5], 0)   # (L from expA: W's rows may be padded)
        lane_pair_counts(W, lb[1], lb[0], w, T, expA.shape[0], gA8)
        _lane_node_marginals(w, lb, T, expA.shape[0], gS, gE)
    return T > 0


@njit(inline="always", **_JIT)
def _lane_scaled_posteriors(seqs, n, indptr, indices, data, offsets, weights, W, expA,
                            exp_start, exp_end, shifts, reach, lb, logz_out):
    """Scaled forward-backward of the ``N_LANES`` non-empty sequences ``seqs``
    side by side, one per lane: the same arithmetic as :func:`_forward_backward`
    on each, on lane vectors laid out (t, label, lane). Only the first ``n``
    lanes count: the others (a chunk's last few sequences, padded with copies,
    :func:`_lane_take`) run with weight 0 and write no log Z.

    The lanes share their last position: a sequence of length T_b occupies
    positions ``d_b = T - T_b .. T - 1`` of its lane (T the batch's longest)
    and its recursion starts at ``d_b`` (start weights selected there); the
    padding before it has emission scores 0, is excluded from the underflow
    test, and is cleared (forward values, exp-emissions 0, scale 1) before the
    backward pass: it adds nothing to the expected counts, its backward
    values stay 0. ``reach``: :func:`_reachable` of the chunk's longest
    sequence; ``lb``: :func:`_lane_buffers`.

    Returns 0 when a sequence needs the underflow-safe path (an underflow, an
    empty path set or an overflow); otherwise T, each counted sequence's log Z
    written to ``logz_out``, the forward and backward values left in
    ``alpha8`` / ``beta8`` (their product is ``P(y_t = j)``) and ``U8`` as
    :func:`_lane_backward` leaves it."""
    U8, alpha8, beta8, scale8, work8, w8, check8, first8, lengths = lb
    L = expA.shape[0]   # (W's rows may be padded)
    T = _lane_batch(seqs, offsets, reach, lb, L)
    maxima = _lane_emissions(seqs, indptr, indices, data, offsets, weights, W, lb, T, L)
    for b in range(n, N_LANES):
        w8[b] = 0.0
    lowest, s_low, s_high, mant, expo, s = _lane_forward(expA, exp_start, exp_end, lb, T, L)
    # (every scale is a positive normal number, and so is the end sum)
    if not (vhmin(lowest) >= _TINY and vhmin(s_low) >= _TINY and vhmax(s_high) < np.inf):
        return 0
    for b in range(N_LANES):
        lz = (vlane(maxima, b) + np.log(vlane(mant, b)) + vlane(expo, b) * _LN2
              + np.log(vlane(s, b)) + _shift_total(shifts, lengths[b]))
        if not (lz > -np.inf and lz < np.inf):
            return 0
        work8[b] = lz
    for b in range(n):
        logz_out[seqs[b]] = work8[b]
    _lane_backward(expA, exp_end, s, lb, T, L)
    return T


@njit(**_JIT)
def _lane_batch(seqs, offsets, reach, lb, L):
    """Set up a batch: each lane's length, where it starts (``first8`` = 1),
    and which cells the underflow test watches (``check8`` 0) or not (inf):
    none of the padding, and the reachable labels, which from position
    ``settled`` of a sequence on are those of the last row of ``reach``.
    Returns T, the longest length."""
    U8, alpha8, beta8, scale8, work8, w8, check8, first8, lengths = lb
    NL = N_LANES
    T = 0
    for b in range(NL):
        lengths[b] = offsets[seqs[b] + 1] - offsets[seqs[b]]
        T = max(T, lengths[b])
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
    return T


@njit(**_JIT)
def _lane_emissions(seqs, indptr, indices, data, offsets, weights, W, lb, T, L):
    """The batch's exp-emissions ``U = exp(E - max_j E)`` in ``U8`` (computed
    one sequence at a time, straight into lane b after its padding: a strided
    view of the lane array) and its weights in ``w8``; returns the maxima
    summed per lane (0 in the padding)."""
    U8, alpha8, beta8, scale8, work8, w8, check8, first8, lengths = lb
    NL = N_LANES
    for t in range(T):
        for j in range(L):
            vstore(U8, (t * L + j) * NL, vsplat(0.0))
    U3 = U8[:T * L * NL].reshape((T, L, NL))
    for b in range(NL):
        d = T - lengths[b]
        emissions(indptr, indices, data, offsets[seqs[b]], lengths[b], W, U3[d:, :, b])
        w8[b] = weights[seqs[b]]
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
    return maxima


@njit(**_JIT)
def _lane_forward(expA, exp_start, exp_end, lb, T, L):
    """The scaled forward pass of a batch, tracking each lane's smallest
    watched value and the product of its scales (from its first position on)
    as mantissa * 2**exponent. Returns ``(lowest, smallest scale, largest
    scale, mantissa, exponent, end sum)``, lane vectors."""
    U8, alpha8, beta8, scale8, work8, w8, check8, first8, lengths = lb
    NL = N_LANES
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
        if L >= _BLOCKED_STEP:
            _lane_step(alpha8, p0, expA, alpha8, k0, L)
        s = vsplat(0.0)
        for j in range(L):
            if L >= _BLOCKED_STEP:
                acc = vload(alpha8, k0 + j * NL)
            else:
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
    return lowest, s_low, s_high, mant, expo, s


@njit(**_JIT)
def _lane_backward(expA, exp_end, s, lb, T, L):
    """Clear the padding (no forward mass, no emission, so that the backward
    values there are 0 too, not products of up to T unscaled steps; scale 1),
    then the backward pass. Step t leaves work_t = U_{t+1} beta_{t+1} /
    scale_{t+1} in U8's row t + 1 (the exp-emissions are not read again), from
    which :func:`_lane_pair_counts` sums the pair marginals of (t, t + 1)."""
    U8, alpha8, beta8, scale8, work8, w8, check8, first8, lengths = lb
    NL = N_LANES
    for b in range(NL):
        for t in range(T - lengths[b]):
            scale8[t * NL + b] = 1.0
            for j in range(L):
                alpha8[(t * L + j) * NL + b] = 0.0
                U8[(t * L + j) * NL + b] = 0.0
    k0 = (T - 1) * L * NL
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
        if L >= _BLOCKED_STEP:
            _lane_step_back(U8, n0, expA, beta8, k0, L)
        else:
            for i in range(L):
                acc = vsplat(0.0)
                for j in range(L):
                    acc = vfma(vsplat(expA[i, j]), vload(U8, n0 + j * NL), acc)
                vstore(beta8, k0 + i * NL, acc)


#: from this many labels the recursion steps run four labels at a time
#: (:func:`_lane_step`); below, each label's short chain of multiply-adds
#: overlaps the next ones' in the processor's out-of-order window anyway, and
#: the blocked step's second pass over the row costs more than it saves
#: (measured in docs/benchmarks.md)
_BLOCKED_STEP = 10


@njit(**_JIT)
def _lane_step(x8, x0, M, y8, y0, L):
    """One step of the forward recursion in lanes: ``y[j] = sum_i x[i] M[i, j]``
    for the lane vectors ``x[i]`` at ``x0 + i * N_LANES`` of ``x8`` and
    ``y[j]`` at ``y0 + j * N_LANES`` of ``y8``, each sum in the order
    i = 0..L-1.

    Four labels j at a time: four independent chains of multiply-adds share
    each load of x[i]. One label's chain alone waits on the multiply-add's
    latency at every term; and finishing each label inside this loop (start
    weights, emission, underflow watch) kept the compiler from overlapping
    the chains, so the caller finishes the row in a second pass. With L not
    a multiple of 4 the last block ends at label L - 1 and recomputes up to
    three labels, storing the same sums again (L >= 4)."""
    NL = N_LANES
    for jb in range(0, L, 4):
        j = min(jb, L - 4)
        a0 = a1 = a2 = a3 = vsplat(0.0)
        for i in range(L):
            x = vload(x8, x0 + i * NL)
            a0 = vfma(x, vsplat(M[i, j]), a0)
            a1 = vfma(x, vsplat(M[i, j + 1]), a1)
            a2 = vfma(x, vsplat(M[i, j + 2]), a2)
            a3 = vfma(x, vsplat(M[i, j + 3]), a3)
        vstore(y8, y0 + j * NL, a0)
        vstore(y8, y0 + (j + 1) * NL, a1)
        vstore(y8, y0 + (j + 2) * NL, a2)
        vstore(y8, y0 + (j + 3) * NL, a3)


@njit(**_JIT)
def _lane_step_back(x8, x0, M, y8, y0, L):
    """One step of the backward recursion in lanes: ``y[i] = sum_j M[i, j]
    x[j]``, each sum in the order j = 0..L-1; four labels i at a time, as in
    :func:`_lane_step` (L >= 4)."""
    NL = N_LANES
    for ib in range(0, L, 4):
        i = min(ib, L - 4)
        b0 = b1 = b2 = b3 = vsplat(0.0)
        for j in range(L):
            x = vload(x8, x0 + j * NL)
            b0 = vfma(vsplat(M[i, j]), x, b0)
            b1 = vfma(vsplat(M[i + 1, j]), x, b1)
            b2 = vfma(vsplat(M[i + 2, j]), x, b2)
            b3 = vfma(vsplat(M[i + 3, j]), x, b3)
        vstore(y8, y0 + i * NL, b0)
        vstore(y8, y0 + (i + 1) * NL, b1)
        vstore(y8, y0 + (i + 2) * NL, b2)
        vstore(y8, y0 + (i + 3) * NL, b3)


@njit(**_JIT)
def _lane_node_marginals(w, lb, T, L, gS, gE):
    """Weighted node marginals in place of alpha; start and end marginals
    added to ``gS`` / ``gE``."""
    U8, alpha8, beta8, scale8, work8, w8, check8, first8, lengths = lb
    NL = N_LANES
    for k in range(T * L):
        vstore(alpha8, k * NL, vmul(w, vmul(vload(alpha8, k * NL), vload(beta8, k * NL))))
    k0 = (T - 1) * L * NL
    for j in range(L):
        gE[j] += vsum(vload(alpha8, k0 + j * NL))
    for b in range(NL):
        k0 = (T - lengths[b]) * L * NL
        for j in range(L):
            gS[j] += alpha8[k0 + j * NL + b]


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
    added once. Correct for any L; beyond ``_PAIR_WIDE`` labels
    :func:`lane_pair_counts` takes :func:`_lane_pair_counts_wide`."""
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


#: beyond this many labels, _lane_pair_counts_wide
_PAIR_WIDE = 16


def lane_pair_counts(W, alpha8, work8, w, T, L, gA8):
    """:func:`_lane_pair_counts` or, beyond ``_PAIR_WIDE`` labels,
    :func:`_lane_pair_counts_wide`; only the former for state weights ``W``
    held as quad rows (:func:`skcrf._kernels.emissions.quad_rows`: at most 16
    labels), so that their compiled callers do not include the other.
    Compiled code only."""
    raise NotImplementedError("a Numba overload; call it from compiled code")


# (inlined: a call would pass the shared weights W along, one more update of
# their reference count per batch from every thread, for a type test)
@overload(lane_pair_counts, jit_options=_JIT, inline="always")
def _lane_pair_counts_overload(W, alpha8, work8, w, T, L, gA8):
    if W.ndim == 3:
        def quads(W, alpha8, work8, w, T, L, gA8):
            _lane_pair_counts(alpha8, work8, w, T, L, gA8)
        return quads

    def any_width(W, alpha8, work8, w, T, L, gA8):
        if L > _PAIR_WIDE:
            _lane_pair_counts_wide(alpha8, work8, w, T, L, gA8)
        else:
            _lane_pair_counts(alpha8, work8, w, T, L, gA8)
    return any_width


@njit(**_JIT_RECURSION)
def _lane_pair_counts_wide(alpha8, work8, w, T, L, gA8):
    """:func:`_lane_pair_counts` for many labels: blocks of 4 x 4 cells held
    in registers over all positions at once (the rows of a batch then stream
    from L2, which keeps up with 16 multiply-adds per 8 loads), each cell
    added to ``gA8`` once per batch. The 3 x 3 blocks over tiles of positions
    that fit L1 cost a read-modify-write of every cell per tile: at 50
    labels a tile is a handful of positions, and those writes dominated."""
    NL = N_LANES
    LN = L * NL
    for i0 in range(0, L, 4):
        i1, i2, i3 = min(i0 + 1, L - 1), min(i0 + 2, L - 1), min(i0 + 3, L - 1)
        for j0 in range(0, L, 4):
            j1, j2, j3 = min(j0 + 1, L - 1), min(j0 + 2, L - 1), min(j0 + 3, L - 1)
            c00 = c01 = c02 = c03 = c10 = c11 = c12 = c13 = vsplat(0.0)
            c20 = c21 = c22 = c23 = c30 = c31 = c32 = c33 = vsplat(0.0)
            for t in range(T - 1):
                a, n = t * LN, (t + 1) * LN
                x0, x1 = vload(alpha8, a + i0 * NL), vload(alpha8, a + i1 * NL)
                x2, x3 = vload(alpha8, a + i2 * NL), vload(alpha8, a + i3 * NL)
                y0, y1 = vload(work8, n + j0 * NL), vload(work8, n + j1 * NL)
                y2, y3 = vload(work8, n + j2 * NL), vload(work8, n + j3 * NL)
                c00, c01, c02, c03 = (vfma(x0, y0, c00), vfma(x0, y1, c01),
                                      vfma(x0, y2, c02), vfma(x0, y3, c03))
                c10, c11, c12, c13 = (vfma(x1, y0, c10), vfma(x1, y1, c11),
                                      vfma(x1, y2, c12), vfma(x1, y3, c13))
                c20, c21, c22, c23 = (vfma(x2, y0, c20), vfma(x2, y1, c21),
                                      vfma(x2, y2, c22), vfma(x2, y3, c23))
                c30, c31, c32, c33 = (vfma(x3, y0, c30), vfma(x3, y1, c31),
                                      vfma(x3, y2, c32), vfma(x3, y3, c33))
            _add_pair_row4(gA8, w, i0, j0, j1, j2, j3, L, c00, c01, c02, c03)
            if i1 > i0:
                _add_pair_row4(gA8, w, i1, j0, j1, j2, j3, L, c10, c11, c12, c13)
            if i2 > i1:
                _add_pair_row4(gA8, w, i2, j0, j1, j2, j3, L, c20, c21, c22, c23)
            if i3 > i2:
                _add_pair_row4(gA8, w, i3, j0, j1, j2, j3, L, c30, c31, c32, c33)


@njit(inline="always", **_JIT_RECURSION)
def _add_pair_row4(gA8, w, i, j0, j1, j2, j3, L, c0, c1, c2, c3):
    """:func:`_add_pair_row` for four columns."""
    _add_pair_row(gA8, w, i, j0, j1, j2, L, c0, c1, c2)
    if j3 > j2:
        g = (i * L + j3) * N_LANES
        vstore(gA8, g, vfma(w, c3, vload(gA8, g)))


# values in the alpha (and in the work) rows of one tile of _lane_pair_counts:
# 32 KiB each (fewer stores of the cells than smaller tiles, the rows still in L2)
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


@njit(inline="always", **_JIT)
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
