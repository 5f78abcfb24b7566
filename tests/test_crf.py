"""LinearChainCRF: predictions against enumeration, fitting reaches the optimum."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning, NotFittedError

from skcrf import LinearChainCRF, Sequences
from skcrf._training.layout import ParameterLayout
from skcrf._training.loss import CRFLoss, Objective
from skcrf._training.penalty import ElasticNet
from tests.oracles import naive
from tests.oracles.problems import model_from_weights, random_problem


@pytest.mark.parametrize("n_jobs", [None, 2])
@pytest.mark.parametrize("start_end", [True, False])
@pytest.mark.parametrize("seed", range(5))
def test_predict_and_marginals_match_enumeration(seed, start_end, n_jobs):
    rng = np.random.default_rng(seed)
    L = int(rng.integers(1, 5))
    X, _, W, A, start, end = random_problem(rng, n_seq=6, max_len=5, n_labels=L,
                                            scale=2.0)
    if not start_end:
        start, end = np.zeros(L), np.zeros(L)
    crf = model_from_weights(W, A, start, end)
    crf.n_jobs = n_jobs
    pred = crf.predict(X)
    marg = crf.predict_marginals(X)
    for x, p, m in zip(X, pred, marg):
        assert len(p) == len(x) and m.shape == (len(x), L)
        if not len(x):
            continue
        np.testing.assert_array_equal(p, naive.viterbi(x, W, A, start, end))
        node, _ = naive.marginals(x, W, A, start, end)
        np.testing.assert_allclose(m, node, rtol=1e-9, atol=1e-12)


def test_string_labels_and_column_order():
    rng = np.random.default_rng(1)
    X, _, W, A, start, end = random_problem(rng, n_seq=3, max_len=4, n_labels=3, min_len=1)
    crf = model_from_weights(W, A, start, end, classes=["B", "I", "O"])
    for x, p, m in zip(X, crf.predict(X), crf.predict_marginals(X)):
        want = naive.viterbi(x, W, A, start, end)
        assert p == [["B", "I", "O"][k] for k in want]
        np.testing.assert_allclose(m.sum(axis=1), 1.0)


def _toy_data(rng, n_seq=60, L=3, F=8, max_len=8):
    """Labels that depend on features and on the previous label."""
    X, y = [], []
    Wtrue = rng.normal(scale=2, size=(F, L))
    for _ in range(n_seq):
        T = int(rng.integers(1, max_len + 1))
        x = (rng.random((T, F)) < 0.4) * rng.uniform(0.5, 1.5, size=(T, F))
        lab = np.argmax(x @ Wtrue + rng.gumbel(size=(T, L)), axis=1)
        X.append(sp.csr_matrix(x))
        y.append([f"L{k}" for k in lab])
    return X, y


def _seen_pairs(X, y, classes):
    """(feature, label) and (label, label) pairs of the data, by plain loops."""
    L = classes.size
    seen = np.zeros((X[0].shape[1], L), bool)
    pairs = set()
    for x, lab in zip(X, y):
        idx = np.searchsorted(classes, lab)
        for t in range(x.shape[0]):
            seen[x[t].indices, idx[t]] = True
        pairs.update(zip(idx[:-1].tolist(), idx[1:].tolist()))
    return seen, np.array(sorted(a * L + b for a, b in pairs), dtype=np.int64)


@pytest.mark.parametrize("kw", [
    dict(),
    dict(all_possible_states=True, start_end_transitions=False),
    dict(all_possible_transitions=False, c2=0.1),
])
def test_fit_reaches_the_optimum(kw):
    rng = np.random.default_rng(0)
    X, y = _toy_data(rng)
    crf = LinearChainCRF(tol=1e-9, **kw).fit(X, y)
    L, F = crf.classes_.size, X[0].shape[1]
    # the layout the fit should have used, built here from the data by loops
    seen, trans_seen = _seen_pairs(X, y, crf.classes_)
    state_pos = (np.arange(F * L) if kw.get("all_possible_states")
                 else np.flatnonzero(seen.reshape(-1)))
    trans_pos = np.arange(L * L) if kw.get("all_possible_transitions", True) else trans_seen
    layout = ParameterLayout(F, L, state_pos, trans_pos,
                             kw.get("start_end_transitions", True))
    assert crf.n_params_ == layout.n_params
    seqs = Sequences.from_list(X)
    y_idx = np.searchsorted(crf.classes_, np.concatenate(y)).astype(np.int32)
    obj = Objective([CRFLoss(seqs.kernel_arrays(), y_idx, np.ones(len(X)), layout)],
                    ElasticNet(0.0, crf.c2))
    theta = layout.pack(np.ascontiguousarray(crf.coef_.T), crf.transition_coef_,
                        crf.start_coef_, crf.end_coef_)
    f, g = obj(theta)
    assert f == pytest.approx(crf.objective_, rel=1e-12)
    assert np.abs(g).max() < 1e-4 * max(1.0, abs(f)) / theta.size ** 0.5
    assert crf.loss_curve_[-1] == pytest.approx(f, rel=1e-9)
    assert crf.n_iter_ == len(crf.loss_curve_)
    # weights without a parameter are exactly zero, those with one are not
    if not kw.get("all_possible_states"):
        assert not crf.coef_[~seen.T].any()
        assert crf.coef_[seen.T].all()
    if not kw.get("all_possible_transitions", True):
        unseen = np.ones(L * L, bool)
        unseen[trans_seen] = False
        assert not crf.transition_coef_.reshape(-1)[unseen].any()
    if not kw.get("start_end_transitions", True):
        assert not crf.start_coef_.any() and not crf.end_coef_.any()


def test_optimum_balances_expected_and_empirical_counts_through_public_api():
    # at the optimum with all states: X^T (P - onehot) + 2 c2 W = 0 per label
    rng = np.random.default_rng(5)
    X, y = _toy_data(rng, n_seq=40)
    c2 = 0.5
    crf = LinearChainCRF(c2=c2, tol=1e-10, all_possible_states=True).fit(X, y)
    marg = crf.predict_marginals(X)
    grad = 2 * c2 * crf.coef_.T.copy()
    for x, lab, m in zip(X, y, marg):
        onehot = (np.asarray(lab)[:, None] == crf.classes_[None, :]).astype(float)
        grad += x.T @ (m - onehot)
    assert np.abs(grad).max() < 1e-4


def test_loss_decreases_and_model_learns():
    rng = np.random.default_rng(2)
    X, y = _toy_data(rng, n_seq=200)
    crf = LinearChainCRF(c2=0.1).fit(X, y)
    assert np.all(np.diff(crf.loss_curve_) <= 1e-9 * abs(crf.loss_curve_[0]))
    labels, counts = np.unique(np.concatenate(y), return_counts=True)
    majority = counts.max() / counts.sum()
    assert crf.score(X, y) > majority + 0.25
    assert crf.objective_ < crf.loss_curve_[0]


def test_n_jobs_1_and_2_agree():
    rng = np.random.default_rng(9)
    X, y = _toy_data(rng, n_seq=120)
    a = LinearChainCRF(c2=0.3, n_jobs=1).fit(X, y)
    b = LinearChainCRF(c2=0.3, n_jobs=2).fit(X, y)
    assert b.objective_ == pytest.approx(a.objective_, rel=1e-8)
    assert a.predict(X) == b.predict(X)


_DETERMINISM = """
import sys, numpy as np, scipy.sparse as sp
from skcrf import LinearChainCRF
rng = np.random.default_rng(11)
X, y = [], []
for _ in range(50):
    T = int(rng.integers(1, 9))
    x = (rng.random((T, 8)) < 0.4) * rng.uniform(0.5, 1.5, size=(T, 8))
    X.append(sp.csr_matrix(x))
    y.append(list(rng.choice(["L0", "L1", "L2"], size=T)))
crf = LinearChainCRF(c2=0.3, n_jobs=int(sys.argv[1])).fit(X, y)
np.save(sys.argv[2], np.concatenate([crf.coef_.ravel(), crf.transition_coef_.ravel(),
                                     [crf.objective_]]))
"""


def test_fits_are_deterministic_across_processes_and_thread_counts(tmp_path):
    import subprocess
    import sys

    got = {}
    for run, n_jobs in enumerate([1, 1, 2, 2]):
        out = tmp_path / f"{run}.npy"
        res = subprocess.run([sys.executable, "-c", _DETERMINISM, str(n_jobs), str(out)],
                             capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stderr
        got[run] = np.load(out)
    # the same thread count gives bit-identical weights in another process
    np.testing.assert_array_equal(got[0], got[1])
    np.testing.assert_array_equal(got[2], got[3])
    # another thread count sums in another order: equal up to rounding
    np.testing.assert_allclose(got[2], got[0], rtol=1e-6, atol=1e-8)


def test_convergence_warning_when_max_iter_is_reached():
    rng = np.random.default_rng(2)
    X, y = _toy_data(rng, n_seq=30)
    with pytest.warns(ConvergenceWarning):
        crf = LinearChainCRF(max_iter=2, tol=0).fit(X, y)
    assert crf.n_iter_ == 2


def test_no_warning_when_converged():
    rng = np.random.default_rng(2)
    X, y = _toy_data(rng, n_seq=30)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        LinearChainCRF().fit(X, y)


def test_empty_sequences_and_length_one():
    rng = np.random.default_rng(4)
    X, y = _toy_data(rng, n_seq=30)
    F = X[0].shape[1]
    X = X + [np.zeros((0, F)), np.ones((1, F))]
    y = y + [[], ["L0"]]
    crf = LinearChainCRF().fit(X, y)
    pred = crf.predict([np.zeros((0, F)), np.ones((1, F))])
    assert pred[0] == [] and len(pred[1]) == 1
    m = crf.predict_marginals([np.zeros((0, F))])
    assert m[0].shape == (0, crf.classes_.size)


def test_single_class():
    X = [np.ones((3, 2)), np.ones((2, 2))]
    crf = LinearChainCRF().fit(X, [[7, 7, 7], [7, 7]])
    assert crf.predict(X) == [[7, 7, 7], [7, 7]]
    np.testing.assert_allclose(crf.predict_marginals(X)[0], 1.0)


def test_int_labels_come_back_as_given():
    rng = np.random.default_rng(4)
    X, y = _toy_data(rng, n_seq=30)
    yi = [[int(s[1:]) * 10 for s in seq] for seq in y]
    crf = LinearChainCRF().fit(X, yi)
    pred = crf.predict(X)
    assert {type(v) for seq in pred for v in seq} == {int}
    assert set(crf.classes_) <= {0, 10, 20}


def test_sequences_input_equals_list_input():
    rng = np.random.default_rng(4)
    X, y = _toy_data(rng, n_seq=30)
    a = LinearChainCRF().fit(X, y)
    b = LinearChainCRF().fit(Sequences.from_list(X), y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.predict(X) == b.predict(Sequences.from_list(X))


def test_fitted_attribute_shapes():
    rng = np.random.default_rng(4)
    X, y = _toy_data(rng, n_seq=30, L=3, F=8)
    crf = LinearChainCRF().fit(X, y)
    assert crf.classes_.shape == (3,)
    assert crf.coef_.shape == (3, 8)
    assert crf.transition_coef_.shape == (3, 3)
    assert crf.start_coef_.shape == crf.end_coef_.shape == (3,)
    assert crf.n_features_in_ == 8
    assert isinstance(crf.objective_, float)


def test_not_fitted_raises():
    with pytest.raises(NotFittedError):
        LinearChainCRF().predict([np.ones((2, 2))])


def test_warm_start_continues_from_previous_weights():
    rng = np.random.default_rng(4)
    X, y = _toy_data(rng, n_seq=50)
    full = LinearChainCRF(c2=0.2, tol=1e-8).fit(X, y)
    crf = LinearChainCRF(c2=0.2, tol=1e-8, warm_start=True)
    with pytest.warns(ConvergenceWarning):
        crf.set_params(max_iter=3).fit(X, y)
    crf.set_params(max_iter=1000).fit(X, y)
    assert crf.objective_ == pytest.approx(full.objective_, rel=1e-6)
    # a warm restart at the optimum stops at once
    crf.fit(X, y)
    assert crf.n_iter_ <= 12


def test_sample_weight_equals_repetition():
    rng = np.random.default_rng(8)
    X, y = _toy_data(rng, n_seq=20)
    w = np.ones(len(X))
    w[:5] = 2
    a = LinearChainCRF(c2=0.3, tol=1e-10).fit(X, y, sample_weight=w)
    b = LinearChainCRF(c2=0.3, tol=1e-10).fit(X + X[:5], y + y[:5])
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-4)
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-7)


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("decoding", ["viterbi", "marginal"])
def test_fit_loads_the_decoding_kernels(n_jobs, decoding, monkeypatch):
    # the first predict after fit must not pay the kernels' cache load: fit
    # runs the same drivers (serial, and threaded with n_jobs > 1) beforehand
    from skcrf._kernels import inference as kernels

    calls = []
    for name in ("viterbi", "marginals"):
        real = getattr(kernels, name)

        def spy(*args, _real=real, _name=name, **kw):
            bounds = args[3] if len(args) > 3 else kw.get("bounds")
            calls.append((_name, None if bounds is None else len(bounds) - 1))
            return _real(*args, **kw)
        monkeypatch.setattr(kernels, name, spy)
    X = [np.eye(3)[[0, 1, 2]], np.eye(3)[[2, 1]]]
    y = [["a", "b", "a"], ["b", "a"]]
    LinearChainCRF(max_iter=3, n_jobs=n_jobs, decoding=decoding).fit(X, y)
    name = "viterbi" if decoding == "viterbi" else "marginals"
    expected = [(name, 1)] + ([(name, 2)] if n_jobs > 1 else [])
    assert calls == expected


def test_fit_with_constraints_that_allow_no_one_token_path():
    # loading the kernels must not fail a fit whose constraints forbid every
    # one-token sequence; predict reports it for such inputs
    X = [np.eye(2)[[0, 1]]]
    y = [["B", "E"]]
    crf = LinearChainCRF(max_iter=3, constraints=[("<start>", "B"), ("B", "E"),
                                                 ("E", "<end>")]).fit(X, y)
    assert crf.predict(X) == [["B", "E"]]
    with pytest.raises(ValueError, match="no label sequence of length 1"):
        crf.predict([np.eye(2)[[0]]])


@pytest.mark.parametrize("gc_enabled", [True, False])
def test_split_labels_cuts_per_sequence_and_leaves_the_collector_as_it_was(gc_enabled):
    import gc

    from skcrf._arrays import split_labels

    classes = np.array(["B", "I", "O"])
    offsets = np.array([0, 2, 2, 5])          # an empty sequence in the middle
    was = gc.isenabled()
    (gc.enable if gc_enabled else gc.disable)()
    try:
        got = split_labels(classes, np.array([2, 0, 1, 1, 2]), offsets)
        assert gc.isenabled() == gc_enabled
    finally:
        (gc.enable if was else gc.disable)()
    assert got == [["O", "B"], [], ["I", "I", "O"]]
    assert all(type(s) is list and all(type(x) is str for x in s) for s in got)


@pytest.mark.parametrize("shape, dtype", [((5,), np.float64), ((3, 7, 17), np.float64),
                                          (10, np.int32), ((0, 4), np.float64)])
def test_aligned_zeros_start_on_a_cache_line(shape, dtype):
    from skcrf._arrays import aligned_copy, aligned_zeros

    for _ in range(4):    # (whatever the allocator hands out)
        a = aligned_zeros(shape, dtype)
        # (an empty array's data pointer is not looked at)
        assert (a.ctypes.data % 64 == 0 or a.size == 0) and a.flags.c_contiguous
        assert a.dtype == dtype
        assert a.shape == np.zeros(shape).shape and not a.any()
    b = np.arange(np.prod(np.shape(a)), dtype=dtype).reshape(np.shape(a))
    c = aligned_copy(b[..., ::-1] if b.ndim > 1 else b)
    assert (c.ctypes.data % 64 == 0 or c.size == 0) and c.flags.c_contiguous
    np.testing.assert_array_equal(c, b[..., ::-1] if b.ndim > 1 else b)


def test_aligned_rows_fill_whole_cache_lines():
    from skcrf._arrays import aligned_rows

    for width in (1, 4, 9, 12, 16, 17, 42):
        for rows in (0, 1, 7, 13, 100):
            r = aligned_rows(rows, width)
            assert rows <= r < rows + 8 and (r * width * 8) % 64 == 0


@pytest.mark.parametrize("sparse_coef", [False, True])
def test_fitted_and_unpickled_weights_start_on_a_cache_line(sparse_coef):
    import pickle

    rng = np.random.default_rng(0)
    X = [rng.random((4, 6)) for _ in range(6)]
    if sparse_coef:     # one-hot features: most weights no parameter, stored sparse
        X = [np.eye(40)[rng.integers(0, 40, 4)] for _ in range(6)]
    y = [list(rng.choice(list("abc"), 4)) for _ in range(6)]
    crf = LinearChainCRF(max_iter=5).fit(X, y)
    state = crf.__getstate__()
    assert state.get("_coef_is_sparse", False) == sparse_coef
    for model in (crf, pickle.loads(pickle.dumps(crf))):
        W = model.coef_.T
        assert W.flags.c_contiguous and W.ctypes.data % 64 == 0
        np.testing.assert_array_equal(model.coef_, crf.coef_)
        assert model.predict(X) == crf.predict(X)
