"""Compact state weights (records, skcrf._training.records) against
enumeration and against the dense layout, and when a fit chooses them."""

import warnings

import numpy as np
import pytest

import skcrf._training.loss as objective_module
from skcrf import LinearChainCRF, Sequences
from skcrf._training.layout import ParameterLayout
from skcrf._training.loss import CRFLoss, Objective, _hot_features, _use_compact, hot_width
from skcrf._training.penalty import ElasticNet
from skcrf._training.records import Records
from tests.oracles import naive
from tests.oracles.problems import random_problem


def _force(monkeypatch, compact, hot_rows=None, L=None):
    """Make every objective of the test compact (or dense) whatever its size;
    a compact one with dense rows for ``hot_rows`` of its features with a
    parameter (the most frequent; None: the defaults)."""
    monkeypatch.setattr(objective_module, "_COMPACT_MIN_BYTES", -1 if compact else 1 << 60)
    monkeypatch.setattr(objective_module, "_COMPACT_MAX_FILL", 2.0)
    monkeypatch.setattr(objective_module, "_PRIVATE_GRADIENT_BYTES", 1 << 60)
    if hot_rows is not None:
        monkeypatch.setattr(objective_module, "_HOT_BYTES", hot_rows * 8 * hot_width(L))
        monkeypatch.setattr(objective_module, "_HOT_MIN_FILL", 0.0)


def _problem(seed, L, float_values, n_seq=30, max_len=6):
    """A random problem whose features have all, some, one or no labels as
    parameters (the others stay 0), with empty sequences, a token with no
    non-zero and sequences of weight 0."""
    rng = np.random.default_rng(seed)
    X, y, W, A, start, end = random_problem(rng, n_seq=n_seq, max_len=max_len, n_labels=L,
                                            n_features=9, density=0.4,
                                            float_values=float_values)
    X[1] = X[1][:0]
    y[1] = y[1][:0]
    X[2] = np.zeros((3, 9))
    X[2][1, 4] = 1.0
    y[2] = rng.integers(0, L, 3)
    keep = rng.random((9, L)) < 0.4
    keep[0] = True
    keep[1] = False
    keep[2, :] = False
    keep[2, L - 1] = True
    W = np.where(keep, W, 0.0)
    seqs = Sequences.from_list(X, n_features=9)
    layout = ParameterLayout(9, L, np.flatnonzero(keep.reshape(-1)), np.arange(L * L), True)
    flat = np.concatenate(y).astype(np.int32)
    weights = rng.uniform(0.5, 2.0, len(X))
    weights[::5] = 0.0
    return X, seqs, layout, flat, weights, (W, A, start, end)


@pytest.mark.parametrize("float_values", [True, False])
@pytest.mark.parametrize("L", [3, 22])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_compact_objective_matches_enumeration_and_the_dense_one(float_values, L, n_threads,
                                                                 monkeypatch):
    # (sequences of up to 3 tokens at 22 labels: 22**3 paths to enumerate)
    X, seqs, layout, flat, weights, (W, A, start, end) = _problem(
        L, L, float_values, max_len=6 if L < 10 else 3)
    theta = layout.pack(W, A, start, end)
    results = {}
    # compact without dense rows, with two (and the others compact), with
    # a dense row for every feature that has a parameter; and dense
    for name, compact, hot_rows in (("compact", True, 0), ("two hot", True, 2),
                                    ("all hot", True, 100), ("dense", False, None)):
        _force(monkeypatch, compact, hot_rows, L)
        loss = CRFLoss(seqs.kernel_arrays(), flat, weights, layout, n_threads=n_threads)
        assert loss.compact == compact
        assert loss.parallel == (n_threads > 1)
        if compact:
            with_params = np.unique(layout.state_pos // L).size
            assert loss._n_hot == min(hot_rows, with_params)
        f, g = Objective([loss], ElasticNet(0.0, 0.5))(theta)
        results[name] = f, g, loss.log_z.copy()
        # the weights and every thread's gradient start on a cache line
        assert all(b.ctypes.data % 64 == 0 for b in (loss._W, *loss._gW))
    f, g, log_z = results["compact"]
    want = [naive.log_z(x, W, A, start, end) if len(x) else 0.0 for x in X]
    np.testing.assert_allclose(log_z, want, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(f, results["dense"][0], rtol=1e-12)
    np.testing.assert_allclose(g, results["dense"][1], rtol=1e-10, atol=1e-12)
    # the dense rows add each column's terms in the same order as the
    # compact ones: the same bits
    for name in ("two hot", "all hot"):
        assert results[name][0] == f
        np.testing.assert_array_equal(results[name][1], g)
        np.testing.assert_array_equal(results[name][2], log_z)
    # and the gradient is the derivative of the objective
    rng = np.random.default_rng(1)
    step = 1e-6 * rng.normal(size=theta.size)
    _force(monkeypatch, True, 2, L)
    obj = Objective([CRFLoss(seqs.kernel_arrays(), flat, weights, layout,
                             n_threads=n_threads)], ElasticNet(0.0, 0.5))
    numeric = (obj(theta + step)[0] - obj(theta - step)[0]) / 2
    np.testing.assert_allclose(numeric, g @ step, rtol=1e-5)


@pytest.mark.parametrize("L", [1, 8, 41])
@pytest.mark.parametrize("n_threads", [1, 3])
def test_hot_rows_at_any_width(L, n_threads, monkeypatch):
    """Dense rows of one vector (1 and 8 labels) and of several with padding
    (41 labels: 48 columns), on one and three threads: the same bits as the
    compact rows alone, and the dense layout's results up to rounding."""
    X, seqs, layout, flat, weights, (W, A, start, end) = _problem(
        L + 100, L, True, n_seq=40, max_len=5)
    theta = layout.pack(W, A, start, end)
    results = {}
    for name, compact, hot_rows in (("compact", True, 0), ("three hot", True, 3),
                                    ("all hot", True, 100), ("dense", False, None)):
        _force(monkeypatch, compact, hot_rows, L)
        loss = CRFLoss(seqs.kernel_arrays(), flat, weights, layout, n_threads=n_threads)
        results[name] = Objective([loss], ElasticNet(0.0, 0.5))(theta)
    f, g = results["compact"]
    for name in ("three hot", "all hot"):
        assert results[name][0] == f
        np.testing.assert_array_equal(results[name][1], g)
    np.testing.assert_allclose(f, results["dense"][0], rtol=1e-12)
    np.testing.assert_allclose(g, results["dense"][1], rtol=1e-10, atol=1e-12)


def test_records_hold_each_features_parameters():
    """Decoding the record of every non-zero gives its feature's parameters
    (label -> weight): three in a record, two in a dense row, none for a
    feature without parameters; the weights of a feature that no token of
    the shard has go where no record reads them."""
    L = 5
    # feature 0: labels 1, 3, 4; 1: none; 2: label 0, but no token; 3: labels 0, 2 (hot)
    state_pos = np.array([0 * L + 1, 0 * L + 3, 0 * L + 4, 2 * L + 0, 3 * L + 0, 3 * L + 2])
    indices = np.array([0, 1, 3, 0, 3, 3, 1], dtype=np.int32)
    freq = np.bincount(indices, minlength=4)
    rec = Records(state_pos, L, freq, indices, hot=np.array([3]), width=8)
    assert rec.n_hot == 1 and rec.offsets.dtype == np.int32
    assert np.unique(rec.positions).size == state_pos.size
    R = rec.R.copy()
    R[rec.positions] = np.arange(1.0, 7.0)

    def decode(o):
        if R[o] < 0:
            base = int(-R[o]) - 1
            return {j: R[base + j] for j in range(L) if R[base + j] != 0.0}
        return {int(R[o + 1 + 2 * i]): R[o + 2 + 2 * i] for i in range(int(R[o]))}

    want = {0: {1: 1.0, 3: 2.0, 4: 3.0}, 1: {}, 3: {0: 5.0, 2: 6.0}}
    assert [decode(o) for o in rec.offsets] == [want[f] for f in indices]
    # the most frequent feature's record comes first after the dense rows
    assert rec.offsets[indices == 3][0] < rec.offsets[indices == 0][0]


def test_records_beyond_int32_offsets_give_the_same_objective(monkeypatch):
    """Records too large for int32 offsets are read through int64 ones (forced
    here on a small problem): the same objective and gradient to the bit."""
    import skcrf._training.records as records_module

    _, seqs, layout, flat, weights, (W, A, start, end) = _problem(3, 5, True)
    theta = layout.pack(W, A, start, end)
    _force(monkeypatch, True, 2, 5)
    results = []
    for limit in (2**31 - 1, 10):
        monkeypatch.setattr(records_module, "_INT32_OFFSETS", limit)
        loss = CRFLoss(seqs.kernel_arrays(), flat, weights, layout)
        assert loss.arrays[1].dtype == (np.int32 if limit > 10 else np.int64)
        results.append(Objective([loss], ElasticNet(0.0, 0.5))(theta))
    assert results[0][0] == results[1][0]
    np.testing.assert_array_equal(results[0][1], results[1][1])


@pytest.mark.parametrize("compact", [True, False])
def test_shards_missing_features_sum_to_the_whole(compact, monkeypatch):
    """Two shards of one fit (one layout), one without any token of feature 3
    (its weights are written where no record reads them): their summed
    objective and gradient are the whole data's, as a distributed fit sums
    them."""
    X, seqs, layout, flat, weights, (W, A, start, end) = _problem(5, 4, True, n_seq=40)
    theta = layout.pack(W, A, start, end)
    _force(monkeypatch, compact, 1, 4)
    ends = np.cumsum([len(x) for x in X])
    y = np.split(flat, ends[:-1])
    has3 = np.array([len(x) > 0 and bool(np.any(x[:, 3] != 0)) for x in X])
    assert has3.any() and not has3.all()
    terms = []
    for part in (np.flatnonzero(has3), np.flatnonzero(~has3)):
        shard = Sequences.from_list([X[i] for i in part], n_features=9)
        terms.append(CRFLoss(shard.kernel_arrays(), np.concatenate([y[i] for i in part]),
                             weights[part], layout))
    whole = Objective([CRFLoss(seqs.kernel_arrays(), flat, weights, layout)],
                      ElasticNet(0.0, 0.5))(theta)
    summed = Objective(terms, ElasticNet(0.0, 0.5))(theta)
    np.testing.assert_allclose(summed[0], whole[0], rtol=1e-12)
    np.testing.assert_allclose(summed[1], whole[1], rtol=1e-10, atol=1e-12)


def test_hot_features_are_the_most_frequent_of_many_labels(monkeypatch):
    monkeypatch.setattr(objective_module, "_HOT_BYTES", 3 * 8 * 16)   # 3 rows of 16
    monkeypatch.setattr(objective_module, "_HOT_MIN_FILL", 0.25)       # >= 4 labels
    freq = np.array([50, 900, 3, 700, 0, 800, 60, 1000])
    n_labels = np.array([16, 2, 4, 5, 9, 4, 3, 0])
    # candidates 0, 2, 3, 5 (4 has no non-zero, 7 no parameter); by frequency
    assert _hot_features(freq, n_labels, 16).tolist() == [5, 3, 0]
    # many threads: all their gradients' rows within the private budget
    monkeypatch.setattr(objective_module, "_PRIVATE_GRADIENT_BYTES", 4 * 8 * 16)
    assert _hot_features(freq, n_labels, 16, n_chunks=2).tolist() == [5, 3]
    assert _hot_features(freq, n_labels, 16, n_chunks=5).size == 0
    monkeypatch.setattr(objective_module, "_HOT_BYTES", 0)
    assert _hot_features(freq, n_labels, 16).size == 0


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_fit_with_compact_weights_reaches_the_dense_fit(n_jobs, monkeypatch):
    rng = np.random.default_rng(7)
    X = [(rng.random((int(rng.integers(1, 9)), 40)) < 0.1).astype(float) for _ in range(120)]
    y = [[f"L{int(v)}" for v in rng.integers(0, 6, len(x))] for x in X]
    fitted = {}
    for compact in (True, False):
        _force(monkeypatch, compact)
        fitted[compact] = LinearChainCRF(c2=0.1, n_jobs=n_jobs, tol=1e-9).fit(X, y)
    a, b = fitted[True], fitted[False]
    np.testing.assert_allclose(a.objective_, b.objective_, rtol=1e-9)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-5)
    np.testing.assert_allclose(a.transition_coef_, b.transition_coef_, atol=1e-5)
    assert a.predict(X) == b.predict(X)


def test_released_loss_refuses_to_evaluate(monkeypatch):
    _, seqs, layout, flat, weights, _ = _problem(0, 3, False)
    for compact in (True, False):
        _force(monkeypatch, compact)
        loss = CRFLoss(seqs.kernel_arrays(), flat, weights, layout)
        theta = np.zeros(layout.n_params)
        f0, _ = loss(theta)
        loss.release()
        with pytest.raises(RuntimeError, match="released"):
            loss(theta)


def test_which_problems_are_kept_compact():
    # (rows, padded width, labels, parameters, threads) of the fits measured in
    # benchmarks/results/memory.txt
    synthetic22 = (231_340, 22, 22, 515_331)      # 10 % of (used feature, label) pairs
    sxu = (1_369_421, 8, 6, 1_642_478)            # WordSegmenter(): 20 %
    conll = (76_685, 12, 9, 96_080)               # 5.5 MB dense
    assert _use_compact(*synthetic22, 1) and _use_compact(*synthetic22, 2)
    assert not _use_compact(*sxu, 1)
    assert not _use_compact(*conll, 1)
    # threads' private compact gradients beyond the budget: the dense layout
    # (whose threads then share one gradient)
    assert not _use_compact(*synthetic22, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not _use_compact(10, 4, 4, 1, 1)
