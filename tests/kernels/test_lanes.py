"""Eight sequences side by side in SIMD lanes: the lane vector type, the lane
forward-backward against the one-sequence kernel, and the objective over
batches of equal-length sequences against brute-force enumeration."""

import numpy as np
import pytest
from numba import njit

import skcrf._training.loss as O
from skcrf import Sequences
from skcrf._kernels.forward_backward import _posterior_buffers, _posteriors
from skcrf._kernels.inference import exp_transitions
from skcrf._kernels.lane_forward_backward import (
    _add_lane_pairs,
    _lane_buffers,
    _lane_marginals,
    _lane_posteriors,
    _reachable,
)
from skcrf._kernels.lanes import (
    N_LANES,
    vadd,
    vall,
    vdiv,
    vfma,
    vhmax,
    vhmin,
    vlane,
    vload,
    vmax,
    vmin,
    vmul,
    vselect,
    vsplat,
    vstore,
    vsub,
    vsum,
    vtake,
)
from skcrf._training.layout import ParameterLayout
from skcrf._training.loss import CRFLoss
from tests.oracles import naive
from tests.oracles.problems import random_problem


@njit(cache=False)
def _lane_ops(a, out):
    x, y = vload(a, 0), vload(a, N_LANES)
    mask = vsub(vmax(x, y), x)          # 0 where x >= y
    for k, v in enumerate((vadd(x, y), vsub(x, y), vmul(x, y), vdiv(x, y), vmax(x, y),
                           vmin(x, y), vfma(x, y, vsplat(2.0)), vselect(mask, x, y))):
        vstore(out, k * N_LANES, v)
    return vsum(x), vhmin(y), vlane(x, 3), vhmax(y)


def test_lane_operations_match_numpy():
    a = np.random.default_rng(0).normal(size=2 * N_LANES)
    a[N_LANES:N_LANES + 3] = a[:3] + 1.0      # y > x in some lanes, not in all
    a[N_LANES + 3:] = a[3:N_LANES] - 1.0
    out = np.empty(8 * N_LANES)
    total, lowest, third, highest = _lane_ops(a, out)
    x, y = a[:N_LANES], a[N_LANES:]
    want = [x + y, x - y, x * y, x / y, np.maximum(x, y), np.minimum(x, y), x * y + 2.0,
            np.where(y > x, x, y)]
    assert 0 < (y > x).sum() < N_LANES
    np.testing.assert_allclose(out.reshape(8, N_LANES), want, rtol=1e-15)
    assert total == pytest.approx(x.sum(), rel=1e-15)
    assert lowest == y.min() and third == x[3] and highest == y.max()
    for k in (0, 5):               # a NaN in the first lane or in a later one
        b = a.copy()
        b[N_LANES + k] = np.nan
        assert np.isnan(_lane_ops(b, out)[1]) and np.isnan(_lane_ops(b, out)[3])


@njit(cache=False)
def _all(a):
    return vall(vload(a, 0))


def test_vall_is_whether_every_lane_is_non_zero():
    assert _all(np.ones(N_LANES))
    assert _all(np.full(N_LANES, np.nan))          # NaN is not zero
    assert _all(np.array([1.0, -2.0, np.inf, 1e-300, -0.5, np.nan, 3.0, -np.inf]))
    for k in range(N_LANES):                       # one zero lane, wherever it is
        for zero in (0.0, -0.0):
            a = np.ones(N_LANES)
            a[k] = zero
            assert not _all(a)
    assert not _all(np.zeros(N_LANES))


@njit(cache=False)
def _take(a, base, idx, out):
    vstore(out, 0, vtake(a, base, vload(idx, 0)))


def test_vtake_gathers_each_lane_from_its_own_offset():
    a = np.random.default_rng(1).normal(size=40)
    idx = np.array([0.0, 7.0, 3.0, 3.0, 29.0, 1.0, 12.0, 0.0])
    out = np.empty(N_LANES)
    for base in (0, 5, 10):
        _take(a, base, idx, out)
        np.testing.assert_array_equal(out, a[base + idx.astype(int)])


def _kernel_problem(rng, L, T, forbid, ragged):
    X, y, W, A, start, end = random_problem(rng, n_seq=N_LANES, max_len=T,
                                            min_len=1 if ragged else T,
                                            n_labels=L, n_features=7)
    if forbid:
        A[rng.random((L, L)) < 0.3] = -np.inf
        A[np.diag_indices(L)] = 0.0
        start[0] = -np.inf if L > 1 else start[0]
    seqs = Sequences.from_list(X)
    return seqs.kernel_arrays(), W, A, start, end


# (5, 40) and (22, 12) span several tiles of _lane_pair_counts; from 10
# labels the recursion steps run in blocks of four labels (10, 13, 15, 22 and
# 42: the last block overlapping the one before by one to three labels)
@pytest.mark.parametrize("L,T", [(1, 3), (3, 1), (4, 6), (9, 5), (5, 40), (10, 3), (13, 4),
                                 (15, 4), (22, 12), (42, 5)])
@pytest.mark.parametrize("forbid", [False, True])
@pytest.mark.parametrize("ragged", [False, True])
@pytest.mark.parametrize("n", [N_LANES, 3])
def test_lane_posteriors_match_the_one_sequence_kernel(L, T, forbid, ragged, n):
    """Eight sequences of one length, or of 1..T tokens (the shorter ones
    padded at the front of their lanes); or only the first ``n`` lanes
    counting, the others copies of the last (a chunk's last batch): those
    add nothing and write no log Z."""
    rng = np.random.default_rng(L * 10 + T)
    (indptr, indices, data, offsets), W, A, start, end = _kernel_problem(rng, L, T, forbid,
                                                                         ragged)
    expA, es, ee, shifts = exp_transitions(A, start, end)
    weights = rng.uniform(0.5, 2.0, N_LANES)
    weights[2] = 0.0
    seqs = np.arange(N_LANES)[::-1].copy()
    seqs[n:] = seqs[n - 1]
    lb = _lane_buffers(T, L)
    gA8 = np.zeros(L * L * N_LANES)
    gS, gE, logz = np.zeros(L), np.zeros(L), np.full(N_LANES, np.nan)
    reach = _reachable(expA, es, T)
    assert _lane_posteriors(seqs, n, indptr, indices, data, offsets, weights, W, expA,
                              es, ee, shifts, reach, lb, gA8, gS, gE, logz)
    assert np.isnan(np.delete(logz, seqs[:n])).all()
    gA = np.zeros((L, L))
    _add_lane_pairs(gA8, expA, gA)
    assert not gA8.any()
    # the same, one sequence at a time
    bufs = _posterior_buffers(0, N_LANES, offsets, L)
    wA, wS, wE = np.zeros((L, L)), np.zeros(L), np.zeros(L)
    lengths = np.diff(offsets)[seqs]
    assert (lb[-1] == lengths).all() and (ragged or (lengths == T).all())
    if ragged and T > 1 and n == N_LANES:
        assert lengths.min() < lengths.max()
    for b, s in enumerate(seqs[:n]):
        Tb = lengths[b]
        lz, scaled = _posteriors(offsets[s], Tb, indptr, indices, data, W, A, start, end,
                                   expA, np.ascontiguousarray(expA.T), es, ee, shifts,
                                   bufs, weights[s], wA)
        assert scaled
        assert logz[s] == pytest.approx(lz, rel=1e-13, abs=1e-13)
        P = np.full((Tb + 2, L), np.nan)
        _lane_marginals(lb[1], b, lb[-1], L, P, 1)
        assert np.isnan(P[0]).all() and np.isnan(P[-1]).all()
        node = bufs[1][:Tb] * bufs[2][:Tb]
        np.testing.assert_allclose(P[1:-1], weights[s] * node, rtol=1e-12, atol=1e-15)
        wS += weights[s] * node[0]
        wE += weights[s] * node[Tb - 1]
    np.testing.assert_allclose(gA, wA, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gS, wS, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(gE, wE, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("long_len", [40, 1500])
def test_long_padding_adds_nothing(long_len):
    """One long sequence beside seven of one or two tokens: the short lanes are
    padded over (almost) the whole length. Unscaled backward values over 1,500
    padded positions would overflow (inf * 0 = NaN in the counts): the
    objective must match the one-sequence kernel, and a fit must train."""
    from skcrf import LinearChainCRF

    rng = np.random.default_rng(long_len)
    L, F = 5, 30
    lengths = [long_len] + [1, 2] * 3 + [1]
    X = [(rng.random((T, F)) < 0.3) * 1.0 for T in lengths]
    y = [rng.integers(0, L, T) for T in lengths]
    W = rng.normal(size=(F, L))
    A = rng.normal(size=(L, L))
    seqs = Sequences.from_list(X)
    indptr, indices, data, offsets = seqs.kernel_arrays()
    start = end = np.zeros(L)
    expA, es, ee, shifts = exp_transitions(A, start, end)
    lb = _lane_buffers(long_len, L)
    gA8 = np.zeros(L * L * N_LANES)
    gS, gE, logz = np.zeros(L), np.zeros(L), np.zeros(N_LANES)
    weights = np.ones(N_LANES)
    assert _lane_posteriors(np.arange(N_LANES), N_LANES, indptr, indices, data, offsets,
                              weights, W, expA, es, ee, shifts, _reachable(expA, es, long_len),
                              lb, gA8, gS, gE, logz)
    gA = np.zeros((L, L))
    _add_lane_pairs(gA8, expA, gA)
    assert np.isfinite(gA).all() and np.isfinite(lb[1][:long_len * L * N_LANES]).all()
    wA = np.zeros((L, L))
    bufs = _posterior_buffers(0, N_LANES, offsets, L)
    for s in range(N_LANES):
        lz, _ = _posteriors(offsets[s], lengths[s], indptr, indices, data, W, A, start,
                              end, expA, np.ascontiguousarray(expA.T), es, ee, shifts,
                              bufs, 1.0, wA)
        assert logz[s] == pytest.approx(lz, rel=1e-12)
    np.testing.assert_allclose(gA, wA, rtol=1e-10, atol=1e-12)
    # a fit on one thread (one chunk, whose batch holds all eight) trains
    labels = np.array(list("abcde"))
    m = LinearChainCRF(max_iter=30, tol=0.0).fit(seqs, [labels[t] for t in y])
    assert m.n_iter_ == 30 and np.isfinite(m.coef_).all()
    assert m.history_[-1]["objective"] < m.history_[0]["objective"]


@pytest.mark.parametrize("at", [0, 1, 2])
def test_lane_posteriors_give_up_on_underflow_and_change_nothing(at):
    # lane 5 holds the sequence of test_objective's partial-underflow test,
    # after ``at`` neutral tokens: label 2 falls e^-800 below label 0 at
    # position ``at`` but wins later
    L, T = 3, 3 + at
    W = np.array([[800.0, 0.0, 0.0], [0.0, 0.0, 600.0], [0.0, 0.0, 600.0]])
    X = [np.zeros((T, 3)) for _ in range(N_LANES)]
    X[5] = np.vstack([np.zeros((at, 3)), np.eye(3)])
    allowed = np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1]], dtype=bool)
    A = np.where(allowed, 0.0, -np.inf)
    indptr, indices, data, offsets = Sequences.from_list(X).kernel_arrays()
    expA, es, ee, shifts = exp_transitions(A, np.zeros(L), np.zeros(L))
    lb = _lane_buffers(T, L)
    gA8 = np.zeros(L * L * N_LANES)
    gS, gE, logz = np.zeros(L), np.zeros(L), np.full(N_LANES, -1.0)
    args = (indptr, indices, data, offsets, np.ones(N_LANES), W, expA, es, ee, shifts,
            _reachable(expA, es, T), lb, gA8, gS, gE, logz)
    assert not _lane_posteriors(np.arange(N_LANES), N_LANES, *args)
    assert not gA8.any() and not gS.any() and not gE.any() and (logz == -1.0).all()
    # without that lane the batch goes through
    assert _lane_posteriors(np.array([0, 1, 2, 3, 4, 6, 7, 0]), N_LANES, *args)
    # and the objective, which then runs lane 5 alone in log space, gets it right
    _, loss = _setup(X, [np.zeros(T, dtype=np.int64)] * N_LANES, L, A)
    start = np.zeros(L)
    loss(loss.layout.pack(W, np.zeros((L, L)), start, start))
    assert loss.log_z[5] == pytest.approx(naive.log_z(X[5], W, A, start, start), rel=1e-12)
    assert loss.log_z[5] == pytest.approx(1200.0, rel=1e-12)


@pytest.mark.parametrize("L", [4, 17])
def test_the_warm_ups_call_of_the_deferred_path_changes_nothing(L, monkeypatch):
    """skcrf compile runs _deferred_terms with no sequence deferred, so that
    it is compiled for each objective kernel: the same bits, and the kernel
    compiled for the weights' type (quad rows at 4 labels, a matrix at 17)."""
    import numba

    from skcrf._kernels import compile_helper
    from skcrf._kernels.emissions import quad_rows
    from skcrf._kernels.objective import _deferred_terms

    rng = np.random.default_rng(L)
    X, y, W, A, start, end = random_problem(rng, n_seq=21, max_len=6, min_len=1,
                                            n_labels=L, n_features=7, density=0.4)
    layout, loss = _setup(X, y, L)
    theta = layout.pack(W, A, start, end)
    f1, g1 = loss(theta)
    assert not loss._deferred.any()
    monkeypatch.setattr(compile_helper, "RARE_PATHS", True)
    f2, g2 = loss(theta)
    assert f2 == f1 and np.array_equal(g2, g1)
    assert numba.typeof(quad_rows(loss._W)) in [sig[6] for sig in _deferred_terms.signatures]
    assert (quad_rows(loss._W).ndim == 3) == (L <= 16)


def test_sequences_are_ordered_by_length_within_windows_of_each_range():
    from skcrf._kernels.parallel import order_by_length

    offsets = np.cumsum([0, 3, 1, 2, 1, 0, 3, 2])
    order = order_by_length(offsets, np.array([0, 4, 7]), window=100)
    assert order.tolist() == [1, 3, 2, 0, 4, 6, 5]      # stable within 0..3 and 4..6
    order = order_by_length(offsets, np.array([0, 4, 7]), window=3)
    assert order.tolist() == [1, 2, 0, 3, 4, 6, 5]      # windows 0..2, 3 | 4..6


def _setup(X, y, L, A_fixed=None, weights=None, n_threads=1):
    seqs = Sequences.from_list(X, n_features=X[0].shape[1])
    F = seqs.n_features
    trans = np.arange(L * L) if A_fixed is None else \
        np.flatnonzero(np.isfinite(A_fixed).reshape(-1))
    layout = ParameterLayout(F, L, np.arange(F * L), trans, True, A_fixed=A_fixed)
    flat = np.concatenate(y).astype(np.int32)
    w = np.ones(len(X)) if weights is None else weights
    return layout, CRFLoss(seqs.kernel_arrays(), flat, w, layout, n_threads=n_threads)


@pytest.mark.parametrize("n_threads,shared", [(1, False), (2, False), (2, True)])
@pytest.mark.parametrize("constrained", [False, True])
def test_objective_over_lane_batches_matches_enumeration(n_threads, shared, constrained,
                                                          monkeypatch):
    """A hundred sequences of 0-3 tokens (most run in lane batches), some
    with zero weight, one that underflows the scaled recursion inside a batch:
    log Z and the expected counts against enumeration."""

    rng = np.random.default_rng(7 + constrained)
    L = 4
    X, y, W, A, start, end = random_problem(rng, n_seq=120, max_len=3, min_len=1,
                                            n_labels=L, n_features=9, density=0.4)
    A_fixed = None
    if constrained:
        allowed = rng.random((L, L)) < 0.7
        allowed[np.diag_indices(L)] = True
        allowed[:, 0] = True
        A_fixed = np.where(allowed, 0.0, -np.inf)
        A = np.where(allowed, A, -np.inf)
        y = [np.zeros(len(s), dtype=np.int64) for s in y]   # label 0 is always allowed
    # a sequence whose scaled recursion underflows: huge weights on feature 8
    W[8] = [1e4, -1e4, 0.0, 5.0]
    X[10] = np.zeros((3, 9))
    X[10][:, 8] = [1.0, -1.0, 1.0]
    y[10] = np.zeros(3, dtype=np.int64)
    X[20], y[20] = np.zeros((0, 9)), np.zeros(0, dtype=np.int64)   # an empty one
    weights = rng.uniform(0.5, 2.0, len(X))
    weights[[3, 4]] = 0.0
    if shared:
        monkeypatch.setattr(O, "_BLOCK_ELEMENTS", 120 * L)   # 2 blocks
        monkeypatch.setattr(O, "_PRIVATE_GRADIENT_BYTES", 0)
    layout, loss = _setup(X, y, L, A_fixed, weights, n_threads)
    assert (loss._owned is not None) == shared
    f, g = loss(layout.pack(W, np.where(np.isfinite(A), A, 0.0), start, end))
    assert np.isfinite(f) and np.isfinite(g).all()
    want = [naive.log_z(x, W, A, start, end) if len(x) else 0.0 for x in X]
    np.testing.assert_allclose(loss.log_z, want, rtol=1e-11)
    eW, eA, eS, eE = np.zeros_like(W), np.zeros((L, L)), np.zeros(L), np.zeros(L)
    for x, w in zip(X, weights):
        if not len(x):
            continue
        node, pair = naive.marginals(x, W, A, start, end)
        eW += w * x.T @ node
        eA += w * pair
        eS += w * node[0]
        eE += w * node[-1]
    np.testing.assert_allclose(g + loss.empirical, layout.pack(eW, eA, eS, eE),
                               rtol=1e-8, atol=1e-10)
    if not shared:
        # the underflowing batches (feature 8 is in most sequences) were left
        # to _deferred_terms
        assert loss._deferred[10] and not loss._deferred[20]
        # at weights that underflow nowhere, the flags are cleared: nothing is
        # run twice
        W[8] = 0.0
        loss(layout.pack(W, np.where(np.isfinite(A), A, 0.0), start, end))
        assert not loss._deferred.any()
        want = [naive.log_z(x, W, A, start, end) if len(x) else 0.0 for x in X]
        np.testing.assert_allclose(loss.log_z, want, rtol=1e-11)
    if shared:
        assert loss._owned.blocks.size > 2
