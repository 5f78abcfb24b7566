"""The training objective against brute-force enumeration and finite differences."""

import numpy as np
import pytest
import scipy.sparse as sp

import skcrf._training.loss as O
from skcrf import Sequences
from skcrf._arrays import aligned_rows
from skcrf._kernels.lanes import row_width
from skcrf._training.layout import ParameterLayout
from skcrf._training.loss import CRFLoss, Objective
from skcrf._training.penalty import ElasticNet
from tests.oracles import naive
from tests.oracles.problems import model_from_weights, random_problem


def _objective(seqs, flat, layout, c2, weights, n_threads=1):
    """The penalised objective of a fit, and its data term."""
    loss = CRFLoss(seqs.kernel_arrays(), flat, weights, layout, n_threads=n_threads)
    return Objective([loss], ElasticNet(0.0, c2)), loss


def _setup(X, y, L, start_end, c2=0.0, weights=None, n_threads=1, state_pos=None):
    seqs = Sequences.from_list(X, n_features=X[0].shape[1])
    F = seqs.n_features
    state_pos = np.arange(F * L) if state_pos is None else state_pos
    layout = ParameterLayout(F, L, state_pos, np.arange(L * L), start_end)
    flat = np.concatenate(y).astype(np.int32) if y else np.zeros(0, np.int32)
    w = np.ones(len(X)) if weights is None else weights
    obj, loss = _objective(seqs, flat, layout, c2, w, n_threads)
    return obj, layout, loss


def _enumerated_counts(X, W, A, start, end, layout):
    """Expected feature counts by enumeration, packed in the layout's order."""
    L = A.shape[0]
    eW, eA, eS, eE = np.zeros_like(W), np.zeros_like(A), np.zeros(L), np.zeros(L)
    for x in X:
        if not len(x):
            continue
        node, pair = naive.marginals(x, W, A, start, end)
        eW += x.T @ node
        eA += pair
        eS += node[0]
        eE += node[-1]
    return layout.pack(eW, eA, eS, eE)


@pytest.mark.parametrize("start_end", [True, False])
@pytest.mark.parametrize("float_values", [True, False])
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("pairs", ["all", "some"])
def test_log_z_likelihood_and_expected_counts_match_enumeration(start_end, float_values, seed,
                                                                pairs):
    rng = np.random.default_rng(seed)
    L = 3 if pairs == "all" else 5
    X, y, W, A, start, end = random_problem(rng, n_seq=5, max_len=5, n_labels=L,
                                            n_features=6, float_values=float_values)
    if not start_end:
        start, end = np.zeros(L), np.zeros(L)
    state_pos = None
    if pairs == "some":
        # features with every label as a parameter, with some, with one, with
        # none: the weights of the other pairs are no parameter and stay 0
        F = X[0].shape[1]
        keep = rng.random((F, L)) < 0.4
        keep[0] = True
        keep[1] = [True, False, True, False, True]
        keep[2] = [False, False, False, True, False]
        keep[3] = [True, False, False, False, False]
        keep[-1] = False
        state_pos = np.flatnonzero(keep.reshape(-1))
        W = np.where(keep, W, 0.0)
    obj, layout, loss = _setup(X, y, L, start_end, state_pos=state_pos)
    theta = layout.pack(W, A, start, end)
    f, g = obj(theta)

    want_logz = [naive.log_z(x, W, A, start, end) if len(x) else 0.0 for x in X]
    np.testing.assert_allclose(loss.log_z, want_logz, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(f, naive.objective(X, y, W, A, start, end, 0.0, 0.0),
                               rtol=1e-10)

    # expected counts = gradient + empirical (c2 = 0)
    np.testing.assert_allclose(g + loss.empirical,
                               _enumerated_counts(X, W, A, start, end, layout),
                               rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("L", [1, 2, 4, 6, 8, 9, 12, 13, 16, 17])
@pytest.mark.parametrize("float_values", [True, False])
def test_every_row_width_matches_enumeration(L, float_values):
    """The sparse passes read weight rows of 4, 8, 12, 16 columns as quads
    (training pads its rows to those widths up to 16 labels; prediction
    uses them when L is one) and others with a scalar loop: log Z, the
    expected counts, Viterbi and the marginals agree with enumeration at every
    width, for tokens with no, one, an odd and an even number of non-zeros."""
    rng = np.random.default_rng(100 + L)
    X, y, W, A, start, end = random_problem(rng, n_seq=18, max_len=3 if L <= 9 else 2,
                                            n_labels=L, n_features=9, density=0.5,
                                            float_values=float_values, min_len=1)
    value = 1.7 if float_values else 1.0
    X[0][0] = 0.0                      # no non-zero
    X[1][0] = 0.0
    X[1][0, 4] = value                 # one
    X[2][0] = 0.0
    X[2][0, [0, 5, 8]] = value         # three
    X[3][0] = value                    # all nine
    obj, layout, loss = _setup(X, y, L, True)
    assert loss._W.shape[1] == (-(-L // 4) * 4 if L <= 16 else L)
    theta = layout.pack(W, A, start, end)
    f, g = obj(theta)
    np.testing.assert_allclose(loss.log_z, [naive.log_z(x, W, A, start, end) for x in X],
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(g + loss.empirical,
                               _enumerated_counts(X, W, A, start, end, layout),
                               rtol=1e-8, atol=1e-10)
    crf = model_from_weights(W, A, start, end)
    for x, path, probs in zip(X, crf.predict(X), crf.predict_marginals(X)):
        assert list(path) == list(naive.viterbi(x, W, A, start, end))
        np.testing.assert_allclose([[p[k] for k in range(L)] for p in probs],
                                   naive.marginals(x, W, A, start, end)[0], atol=1e-10)


def test_gradient_matches_finite_differences():
    rng = np.random.default_rng(42)
    L = 3
    X, y, W, A, start, end = random_problem(rng, n_seq=6, max_len=6, n_labels=L,
                                            n_features=4, min_len=1)
    weights = rng.uniform(0.5, 2.0, size=len(X))
    obj, layout, _ = _setup(X, y, L, True, c2=0.3, weights=weights)
    theta = rng.normal(size=layout.n_params)
    _, g = obj(theta)
    eps = 1e-6
    fd = np.empty_like(theta)
    for k in range(theta.size):
        e = np.zeros_like(theta)
        e[k] = eps
        fd[k] = (obj(theta + e)[0] - obj(theta - e)[0]) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6)
    # and the value is the weighted penalised objective
    Wd, Ad, sd, ed = layout.unpack(theta)
    want = naive.objective(X, y, Wd, Ad, sd, ed, 0.3, theta @ theta, weights)
    np.testing.assert_allclose(obj(theta)[0], want, rtol=1e-10)


def test_restricted_layout_keeps_other_weights_at_zero():
    rng = np.random.default_rng(3)
    L = 3
    X, y, W, A, start, end = random_problem(rng, n_seq=4, max_len=4, n_labels=L, min_len=1)
    seqs = Sequences.from_list(X)
    F = seqs.n_features
    state_pos = np.array([0, 4, 7, 11])
    trans_pos = np.array([1, 5])
    layout = ParameterLayout(F, L, state_pos, trans_pos, False)
    obj, _ = _objective(seqs, np.concatenate(y).astype(np.int32), layout, 0.0,
                        np.ones(len(X)))
    theta = rng.normal(size=layout.n_params)
    f, g = obj(theta)
    Wd, Ad, sd, ed = layout.unpack(theta)
    assert np.count_nonzero(Wd) == 4 and np.count_nonzero(Ad) == 2
    assert not sd.any() and not ed.any()
    np.testing.assert_allclose(f, naive.objective(X, y, Wd, Ad, sd, ed, 0.0, 0.0), rtol=1e-10)
    eps = 1e-6
    for k in range(theta.size):
        e = np.zeros_like(theta)
        e[k] = eps
        fd = (obj(theta + e)[0] - obj(theta - e)[0]) / (2 * eps)
        assert g[k] == pytest.approx(fd, rel=1e-5, abs=1e-6)


def test_two_threads_give_the_same_objective_and_gradient():
    rng = np.random.default_rng(7)
    L = 4
    X, y, W, A, start, end = random_problem(rng, n_seq=40, max_len=12, n_labels=L,
                                            n_features=20, density=0.2)
    obj1, layout, loss1 = _setup(X, y, L, True, c2=0.5, n_threads=1)
    obj2, _, loss2 = _setup(X, y, L, True, c2=0.5, n_threads=2)
    assert loss2.parallel and not loss1.parallel
    # small buffers: each thread has its own
    assert loss2._owned is None and loss2._gW.shape[0] == 2
    # one thread renumbers the features (most frequent first) in a copy of
    # the indices; two threads with private buffers keep the features' own
    # numbers and the caller's indices (every feature is used here)
    F = X[0].shape[1]
    assert loss2._rows == F + 1 and loss2._W.shape[0] == aligned_rows(F + 1, loss2._width)
    assert np.array_equal(loss2.arrays[1], _csr_indices(X))
    assert not np.array_equal(loss1.arrays[1], loss2.arrays[1])
    theta = layout.pack(W, A, start, end)
    f1, g1 = obj1(theta)
    f2, g2 = obj2(theta)
    assert f2 == pytest.approx(f1, rel=1e-12)
    np.testing.assert_allclose(g2, g1, rtol=1e-10, atol=1e-12)


def test_parameter_passes_on_two_threads_give_the_same_objective_and_gradient():
    """With more than a block of state parameters, the scatter of theta into
    the weight rows, the gradient's gather and the L2 term run in two chunks:
    same loss and gradient as one thread."""
    rng = np.random.default_rng(3)
    L, F = 4, 1500                      # 6,000 state parameters: three blocks
    X, y, W, A, start, end = random_problem(rng, n_seq=60, max_len=10, n_labels=L,
                                            n_features=F, density=0.01)
    obj1, layout, loss1 = _setup(X, y, L, True, c2=0.5, n_threads=1)
    obj2, _, loss2 = _setup(X, y, L, True, c2=0.5, n_threads=2)
    assert loss1._state_bounds.size == 2 and loss2._state_bounds.size == 3
    theta = layout.pack(W, A, start, end)
    f1, g1 = obj1(theta)
    f2, g2 = obj2(theta)
    assert f2 == pytest.approx(f1, rel=1e-12)
    np.testing.assert_allclose(g2, g1, rtol=1e-10, atol=1e-12)
    # the L2 term added in the gradient's pass (one local term) is the
    # penalty's own, added apart (what several terms get)
    split = Objective([loss1, _ZeroTerm(theta.size)], ElasticNet(0.0, 0.5))
    f3, g3 = split(theta)
    assert f3 == pytest.approx(f1, rel=1e-12)
    np.testing.assert_array_equal(g3, g1)
    # and both are the objective: one coordinate by finite differences
    k = int(np.argmax(np.abs(g2[layout.state])))
    e = np.zeros_like(theta)
    e[k] = 1e-5
    fd = (obj2(theta + e)[0] - obj2(theta - e)[0]) / 2e-5
    assert g2[k] == pytest.approx(fd, rel=1e-5)


class _ZeroTerm:
    """A data term that adds nothing: an Objective of two terms, whose
    penalty is then added apart from the terms' passes."""

    def __init__(self, n):
        self.n = n

    def __call__(self, theta):
        return 0.0, np.zeros(self.n)


def _csr_indices(X):
    """The column indices of the CSR rows of ``X`` (a list of dense matrices)."""
    return sp.csr_matrix(np.concatenate(X)).indices


@pytest.mark.parametrize("n_threads", [2, 3])
@pytest.mark.parametrize("float_values", [True, False])
def test_threads_sharing_one_gradient_match_one_thread(n_threads, float_values, monkeypatch):
    """Several threads share one state gradient, each adding to the feature rows
    it owns, block by block: the same loss and gradient as one thread, with
    empty sequences, zero-weight sequences, tokens with many non-zeros (sorted
    by merge sort, not insertion) and many small blocks (forced)."""

    rng = np.random.default_rng(11)
    L = 5
    X, y, W, A, start, end = random_problem(rng, n_seq=60, max_len=9, n_labels=L,
                                            n_features=80, density=0.08,
                                            float_values=float_values)
    X[3] = np.zeros((0, 80))
    y[3] = y[3][:0]
    X[7] = (rng.random((4, 80)) < 0.6) * (rng.normal(size=(4, 80)) if float_values else 1.0)
    y[7] = rng.integers(0, L, 4)
    weights = rng.uniform(0.5, 2.0, len(X))
    weights[[5, 20]] = 0.0
    obj1, layout, loss1 = _setup(X, y, L, True, c2=0.5, weights=weights, n_threads=1)
    monkeypatch.setattr(O, "_BLOCK_ELEMENTS", 20 * L)   # blocks of ~3 sequences
    monkeypatch.setattr(O, "_PRIVATE_GRADIENT_BYTES", 0)   # always shared
    obj2, _, loss2 = _setup(X, y, L, True, c2=0.5, weights=weights, n_threads=n_threads)
    assert loss2.parallel and loss2._gW.shape[0] == 1
    assert loss2._owned.blocks.size > 10
    theta = layout.pack(W, A, start, end)
    f1, g1 = obj1(theta)
    f2, g2 = obj2(theta)
    assert f2 == pytest.approx(f1, rel=1e-12)
    np.testing.assert_allclose(g2, g1, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(loss2.log_z, loss1.log_z, rtol=1e-12)


def test_huge_weights_fall_back_to_log_space_without_nan():
    # emission gaps of 1e4 underflow the scaled recursion when the only
    # allowed continuation has probability exp(-1e4)
    L = 2
    X = [np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])]
    y = [np.array([0, 0, 0])]
    W = np.array([[1e4, 0.0], [0.0, 1e4]])
    A = np.array([[0.0, -1e4], [-1e4, 0.0]])
    start, end = np.zeros(L), np.zeros(L)
    # plus an ordinary sequence, weighted differently, that stays on the scaled path
    X.append(np.array([[0.5, 0.0], [0.0, 0.0]]))
    y.append(np.array([1, 0]))
    weights = np.array([2.0, 0.5])
    obj, layout, loss = _setup(X, y, L, True, weights=weights)
    f, g = obj(layout.pack(W, A, start, end))
    assert np.isfinite(f) and np.isfinite(g).all()
    want = naive.log_z(X[0], W, A, start, end)
    assert loss.log_z[0] == pytest.approx(want, rel=1e-12)
    # expected counts (node, pair, start, end) of both sequences against enumeration
    eW, eA, eS, eE = np.zeros_like(W), np.zeros_like(A), np.zeros(L), np.zeros(L)
    for x, w in zip(X, weights):
        node, pair = naive.marginals(x, W, A, start, end)
        eW += w * x.T @ node
        eA += w * pair
        eS += w * node[0]
        eE += w * node[-1]
    np.testing.assert_allclose(g + loss.empirical, layout.pack(eW, eA, eS, eE),
                               rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_unused_feature_columns_cost_no_rows_and_change_nothing(n_threads):
    # the same data spread over 3x the columns (two empty columns beside each
    # used one): one row per used feature plus one shared row, same loss, and
    # the data term's gradient is 0 on the empty columns' weights
    rng = np.random.default_rng(11)
    L = 3
    X, y, W, A, start, end = random_problem(rng, n_seq=12, max_len=6, n_labels=L,
                                            n_features=8, density=0.4, min_len=1)
    F = X[0].shape[1]
    wide = []
    for x in X:
        z = np.zeros((x.shape[0], 3 * F + 2))
        z[:, 3 * np.arange(F) + 1] = x
        wide.append(z)
    _, layout, loss = _setup(X, y, L, True, n_threads=n_threads)
    _, layout_w, loss_w = _setup(wide, y, L, True, n_threads=n_threads)
    used = np.count_nonzero(np.concatenate(X).any(axis=0))
    # (rows padded to 4 columns; their count to whole cache lines)
    rows = aligned_rows(used + 1, row_width(L))
    assert loss_w._W.shape == (rows, row_width(L)) and rows - (used + 1) < 8
    assert loss_w._gW.shape[1:] == (rows, row_width(L))
    theta = layout.pack(W, A, start, end)
    Ww = np.zeros((3 * F + 2, L))
    Ww[3 * np.arange(F) + 1] = W
    Ww[0] = rng.normal(size=L)                 # weights of empty columns: no effect
    theta_w = layout_w.pack(Ww, A, start, end)
    f, g = loss(theta)
    fw, gw = loss_w(theta_w)
    assert fw == pytest.approx(f, rel=1e-12)
    Gw, Aw, sw, ew = layout_w.unpack(gw)
    G, Ag, sg, eg = layout.unpack(g)
    np.testing.assert_allclose(Gw[3 * np.arange(F) + 1], G, rtol=1e-10, atol=1e-12)
    assert not Gw[np.setdiff1d(np.arange(3 * F + 2), 3 * np.arange(F) + 1)].any()
    np.testing.assert_allclose(Aw, Ag, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(f, naive.objective(X, y, W, A, start, end, 0.0, 0.0),
                               rtol=1e-10)


def test_partial_underflow_of_the_scaled_recursion_falls_back():
    # At t=0 label 2 is e^-800 below label 0, so its scaled forward value
    # underflows to 0 while label 0 keeps the sum positive. Only label 2 may
    # follow label 2, and its emissions of +600 at t=1 and t=2 (each gap
    # small enough for the labels 0 and 1 to stay representable) make the
    # path 2-2-2 win: 1200 against 800. The scaled recursion alone would
    # return log Z ~ 800, below the best path's score; the underflow test
    # must send the sequence to log space.
    L = 3
    X = [np.eye(3)]
    y = [np.array([2, 2, 2])]
    W = np.array([[800.0, 0.0, 0.0], [0.0, 0.0, 600.0], [0.0, 0.0, 600.0]])
    allowed = np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1]], dtype=bool)
    A = np.where(allowed, 0.0, -np.inf)
    start, end = np.zeros(L), np.zeros(L)
    layout = ParameterLayout(3, L, np.arange(3 * L), np.flatnonzero(allowed.reshape(-1)),
                             True, A_fixed=A)
    loss = CRFLoss(Sequences.from_list(X).kernel_arrays(),
                   np.concatenate(y).astype(np.int32), np.ones(1), layout)
    f, g = loss(layout.pack(W, np.zeros((L, L)), start, end))
    want = naive.log_z(X[0], W, A, start, end)
    assert want == pytest.approx(1200.0, abs=1e-9)
    assert loss.log_z[0] == pytest.approx(want, rel=1e-12)
    assert f == pytest.approx(want - 1200.0, abs=1e-9)   # -log p(2 2 2) ~ 0
    assert np.isfinite(g).all()


@pytest.mark.parametrize("seed", range(3))
def test_huge_random_weights_keep_log_z_above_every_path(seed):
    # what an L-BFGS trial step far out produces: scores of thousands of nats.
    # log Z can never be below the best path's score, the gradient must stay
    # finite, and log Z must match the log-space value (brute force here).
    from skcrf import _inference as inference
    from skcrf._arrays import Weights

    rng = np.random.default_rng(seed)
    L = 4
    X, y, W, A, start, end = random_problem(rng, n_seq=8, max_len=5, n_labels=L,
                                            n_features=6, min_len=1, scale=300.0)
    A[rng.random((L, L)) < 0.3] = -np.inf
    A[np.diag_indices(L)] = 0.0
    seqs = Sequences.from_list(X)
    trans = np.flatnonzero(np.isfinite(A).reshape(-1))
    layout = ParameterLayout(seqs.n_features, L, np.arange(seqs.n_features * L), trans,
                             True, A_fixed=np.where(np.isfinite(A), 0.0, -np.inf))
    flat = np.zeros(seqs.n_tokens, dtype=np.int32)      # label 0 everywhere: allowed
    loss = CRFLoss(seqs.kernel_arrays(), flat, np.ones(len(X)), layout)
    f, g = loss(layout.pack(W, np.where(np.isfinite(A), A, 0.0), start, end))
    assert np.isfinite(f) and np.isfinite(g).all()
    _, best = inference.viterbi(seqs.kernel_arrays(), Weights.from_arrays(W, A, start, end))
    assert (loss.log_z >= best - 1e-9 * np.abs(best)).all()
    for s, x in enumerate(X):
        assert loss.log_z[s] == pytest.approx(naive.log_z(x, W, A, start, end), rel=1e-12)


@pytest.mark.parametrize("kind", ["one thread", "private gradients", "shared gradient",
                                  "records", "records, two threads"])
def test_repeated_evaluations_match_fresh_ones(kind, monkeypatch):
    """The gradient buffers are cleared by the gather that reads them,
    not before each evaluation: every evaluation of one objective, at points
    visited in any order, gives the bits of a new objective's first one, also
    after an evaluation stopped between its state counts and its gather."""
    rng = np.random.default_rng(5)
    L = 4
    X, y, W, A, start, end = random_problem(rng, n_seq=40, max_len=8, n_labels=L,
                                            n_features=30, density=0.2, float_values=True)
    # parameters for some (feature, label) cells only: the others' cells of
    # the buffers receive counts that nothing reads or clears
    state_pos = np.flatnonzero(rng.random(30 * L) < 0.5)
    n_threads = 1 if kind in ("one thread", "records") else 2
    if kind == "shared gradient":
        monkeypatch.setattr(O, "_PRIVATE_GRADIENT_BYTES", 0)
    if kind.startswith("records"):
        monkeypatch.setattr(O, "_COMPACT_MIN_BYTES", -1)
        monkeypatch.setattr(O, "_COMPACT_MAX_FILL", 2.0)
    obj, layout, loss = _setup(X, y, L, True, c2=0.3, n_threads=n_threads,
                               state_pos=state_pos)
    assert (loss._owned is not None) == (kind == "shared gradient")
    assert loss.compact == kind.startswith("records")
    points = [layout.pack(W * s, A * s, start * s, end * s) for s in (1.0, -0.5, 2.0)]

    def fresh(theta):
        return _setup(X, y, L, True, c2=0.3, n_threads=n_threads, state_pos=state_pos)[0](
            theta)

    want = [fresh(theta) for theta in points]
    for k in (0, 1, 2, 1, 0, 2):
        f, g = obj(points[k])
        assert f == want[k][0]
        np.testing.assert_array_equal(g, want[k][1])
    # stopped after the state counts, before the gather: the counts left in
    # the buffers are cleared by the next evaluation (in every cell of a
    # dense buffer; in the value slots of records, whose headers and labels
    # the kernels never write)
    if loss.compact:
        loss._gW[:, loss._pos] += 1.0
    else:
        loss._gW += 1.0
    loss._counts_pending = True
    f, g = obj(points[1])
    assert f == want[1][0]
    np.testing.assert_array_equal(g, want[1][1])


@pytest.mark.parametrize("L", [2, 9, 15, 17])
@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_weight_and_gradient_buffers_start_on_cache_lines(L, n_threads):
    # a row of 4, 8, 12 or 16 float64 read or added to as vectors must not
    # start at the allocator's 16 bytes into a line (slower by chance)
    rng = np.random.default_rng(L)
    # (up to 3 tokens: 17**3 paths to enumerate)
    X, y, W, A, start, end = random_problem(rng, n_seq=12, max_len=3, n_labels=L,
                                            n_features=11, density=0.4, min_len=1)
    obj, layout, loss = _setup(X, y, L, True, n_threads=n_threads)
    f, g = obj(layout.pack(W, A, start, end))
    buffers = (loss._W, *loss._gW)
    assert all(b.ctypes.data % 64 == 0 and b.flags.c_contiguous for b in buffers)
    want = sum(naive.log_z(x, W, A, start, end) for x in X)
    assert sum(loss.log_z) == pytest.approx(want, rel=1e-10)
