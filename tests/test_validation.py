"""Bad input is refused with an error naming what and where; edge cases work."""

import numpy as np
import pytest
import scipy.sparse as sp

from skcrf import LinearChainCRF, SequenceFeaturizer, Sequences
from tests.oracles.problems import log_partition, model_from_weights


def X3():
    return [np.eye(3), np.ones((2, 3)), np.eye(3)[:1]]


Y3 = [["a", "b", "c"], ["a", "b"], ["c"]]


def test_x_and_y_lengths_differ():
    with pytest.raises(ValueError, match="3 sequences but y has 2"):
        LinearChainCRF().fit(X3(), Y3[:2])


def test_label_sequence_length_differs():
    with pytest.raises(ValueError, match=r"y\[1\] has 3 labels but sequence 1 has 2"):
        LinearChainCRF().fit(X3(), [Y3[0], ["a", "b", "c"], Y3[2]])


def test_flat_label_list():
    with pytest.raises(TypeError, match=r"y\[0\] is a single label"):
        LinearChainCRF().fit([np.eye(3)], ["a", "b", "c"])


def test_mixed_label_types():
    with pytest.raises(TypeError, match=r"y\[1\]\[0\]"):
        LinearChainCRF().fit(X3(), [["a", "b", "c"], [1, 2], ["c"]])
    with pytest.raises(TypeError, match=r"y\[2\]\[0\] = 1.5"):
        LinearChainCRF().fit(X3(), [[1, 2, 3], [1, 2], [1.5]])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_features(bad):
    X = X3()
    X[1][1, 2] = bad
    with pytest.raises(ValueError, match="sequence 1, position 1"):
        LinearChainCRF().fit(X, Y3)


@pytest.mark.parametrize("bad_index", [-1, 3, 99])
def test_column_index_out_of_range(bad_index):
    m = sp.csr_matrix(np.eye(3))
    m.indices[2] = bad_index
    with pytest.raises(ValueError, match="sequence 1, position 2 has column index"):
        LinearChainCRF().fit([sp.csr_matrix(np.eye(3)), m], [["a"] * 3, ["b"] * 3])


def test_feature_count_differs_at_predict():
    crf = LinearChainCRF().fit(X3(), Y3)
    with pytest.raises(ValueError, match="has 4 features, but the model was fitted with 3"):
        crf.predict([np.ones((2, 4))])
    with pytest.raises(ValueError, match="Sequence 1 has 2 features"):
        crf.predict([np.ones((2, 3)), np.ones((1, 2))])


@pytest.mark.parametrize("params", [dict(c2=-1.0), dict(max_iter=0), dict(tol=-1),
                                    dict(n_jobs="all"), dict(all_possible_states="yes")])
def test_unknown_parameter_values(params):
    with pytest.raises(ValueError):
        LinearChainCRF(**params).fit(X3(), Y3)


def test_featurizer_rejects_none_and_non_str_units():
    with pytest.raises(TypeError, match=r"X\[0\]\[1\]"):
        SequenceFeaturizer().fit([["a", None]])
    with pytest.raises(TypeError, match=r"X\[1\] is a NoneType"):
        SequenceFeaturizer().fit(["ab", None])
    with pytest.raises(TypeError, match=r"X\[0\]\[0\] is 3"):
        SequenceFeaturizer().fit([[3, "a"]])


def test_empty_training_set():
    with pytest.raises(ValueError, match="empty"):
        LinearChainCRF().fit([], [])
    with pytest.raises(ValueError, match="empty"):
        LinearChainCRF().fit(Sequences.from_list([], n_features=3), [])


def test_every_training_sequence_empty():
    with pytest.raises(ValueError, match="Every training sequence is empty"):
        LinearChainCRF().fit([np.zeros((0, 3))] * 2, [[], []])


def test_raw_text_given_to_the_crf():
    with pytest.raises(TypeError, match="SequenceFeaturizer"):
        LinearChainCRF().fit(["abc"], [["a", "b", "c"]])


def test_sample_weight_checks():
    with pytest.raises(ValueError, match="one weight per sequence"):
        LinearChainCRF().fit(X3(), Y3, sample_weight=[1, 2])
    with pytest.raises(ValueError, match=r"sample_weight\[1\]"):
        LinearChainCRF().fit(X3(), Y3, sample_weight=[1, -2, 1])


def test_label_seen_once_and_length_one_sequences():
    X = [np.eye(4)[[0, 1]], np.eye(4)[[2]], np.eye(4)[[3]]]
    crf = LinearChainCRF(c2=0.01).fit(X, [["a", "b"], ["c"], ["once"]])
    assert crf.predict([np.eye(4)[[3]]]) == [["once"]]


def test_extreme_feature_values_give_finite_marginals():
    rng = np.random.default_rng(0)
    X = [rng.normal(size=(6, 3)) for _ in range(10)]
    y = [list(rng.choice(["a", "b", "c"], size=6)) for _ in range(10)]
    crf = LinearChainCRF(c2=1e-3).fit(X, y)
    big = [np.full((5, 3), 1e6), -np.full((4, 3), 1e6)]
    for m in crf.predict_marginals(big):
        assert np.isfinite(m).all()
        np.testing.assert_allclose(m.sum(axis=1), 1.0)
    assert [len(p) for p in crf.predict(big)] == [5, 4]


def test_very_long_sequence_matches_log_space_reference():
    # 100k tokens: the scaled recursion must neither overflow nor underflow

    from tests.oracles.logspace import log_forward_backward

    rng = np.random.default_rng(1)
    T, L, F = 100_000, 3, 4
    X = sp.csr_matrix(rng.normal(size=(T, F)) * (rng.random((T, F)) < 0.5))
    W = rng.normal(size=(F, L)) * 2
    A = rng.normal(size=(L, L)) * 2
    start, end = rng.normal(size=L), rng.normal(size=L)
    crf = model_from_weights(W, A, start, end)
    P = crf.predict_marginals([X])[0]
    want_P, want_logz = log_forward_backward(X @ W, A, start, end)
    # the log-space reference accumulates rounding over 100k additions of
    # numbers ~1e5 (about 1e-7 here); an underflow would be off by O(1)
    np.testing.assert_allclose(P, want_P, atol=1e-6)
    logz = log_partition(crf, [X])
    assert logz[0] == pytest.approx(want_logz, rel=1e-9)
    np.testing.assert_allclose(want_P.sum(axis=1), 1.0, rtol=1e-5)  # reference sanity
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)  # ours stays normalised


def test_featurizer_unicode_outside_bmp_and_empty():
    f = SequenceFeaturizer()
    X = f.fit_transform(["😀上海𠀋", ""])
    assert X.lengths.tolist() == [4, 0]


def test_keyboard_interrupt_leaves_the_estimator_as_it_was(monkeypatch):
    import skcrf._training.loss as objective

    rng = np.random.default_rng(0)
    X = [rng.random((5, 3)) for _ in range(20)]
    y = [list(rng.choice(["a", "b"], size=5)) for _ in range(20)]
    calls = {"n": 0}
    original = objective.CRFLoss.__call__

    def interrupted(self, theta, *args):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return original(self, theta, *args)

    monkeypatch.setattr(objective.CRFLoss, "__call__", interrupted)
    crf = LinearChainCRF()
    with pytest.raises(KeyboardInterrupt):
        crf.fit(X, y)
    assert not hasattr(crf, "coef_") and not hasattr(crf, "classes_")

    monkeypatch.setattr(objective.CRFLoss, "__call__", original)
    crf.fit(X, y)
    before = {k: np.copy(v) if isinstance(v, np.ndarray) else v
              for k, v in vars(crf).items() if k.endswith("_")}
    calls["n"] = 0
    monkeypatch.setattr(objective.CRFLoss, "__call__", interrupted)
    y2 = [["c" if v == "a" else v for v in seq] for seq in y]
    with pytest.raises(KeyboardInterrupt):
        crf.fit(X, y2)
    for k, v in before.items():
        got = getattr(crf, k)
        if isinstance(v, np.ndarray):
            np.testing.assert_array_equal(got, v)
        else:
            assert got == v, k


# ---------------------------------------------------------------- label arrays
def test_label_arrays_take_the_fast_path_with_the_same_result():
    from skcrf._validation import check_labels

    lengths = np.array([3, 1, 2])
    as_lists = [[0, 2, 1], [1], [2, 0]]
    as_arrays = [np.array(s, dtype=np.int32) for s in as_lists]
    np.testing.assert_array_equal(check_labels(as_arrays, lengths),
                                  check_labels(as_lists, lengths))
    strs = [np.array(["B", "I", "O"]), np.array(["O"]), np.array(["B", "O"])]
    assert check_labels(strs, lengths).tolist() == ["B", "I", "O", "O", "B", "O"]


def test_label_arrays_of_the_wrong_length_or_mixed_kinds_are_refused():
    from skcrf._validation import check_labels

    with pytest.raises(ValueError, match=r"y\[1\] has 2 labels but sequence 1 has 1"):
        check_labels([np.array([0, 1, 2]), np.array([1, 1])], np.array([3, 1]))
    with pytest.raises(TypeError):
        check_labels([np.array([0, 1, 2]), np.array(["a"])], np.array([3, 1]))


def test_fit_on_label_arrays_equals_fit_on_lists():
    rng = np.random.default_rng(0)
    X = [sp.random(int(n), 6, density=0.5, format="csr", random_state=rng)
         for n in rng.integers(1, 6, size=20)]
    y = [rng.integers(0, 3, size=x.shape[0]) for x in X]
    a = LinearChainCRF(max_iter=50).fit(X, y)
    b = LinearChainCRF(max_iter=50).fit(X, [s.tolist() for s in y])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12, atol=1e-12)
    assert a.classes_.tolist() == b.classes_.tolist()


def test_mappings_and_sets_are_not_sequence_lists():
    for bad in ({"a": 1}, {"ab", "cd"}, "abc"):
        with pytest.raises(TypeError, match="list of sequences"):
            SequenceFeaturizer().fit(bad)


def test_all_zero_sample_weights_are_refused():
    with pytest.raises(ValueError, match="sample_weight is 0 for every"):
        LinearChainCRF().fit(X3(), Y3, sample_weight=[0, 0, 0])
    # weight only on an empty sequence: still nothing to learn from
    X = X3() + [np.zeros((0, 3))]
    with pytest.raises(ValueError, match="sample_weight is 0 for every"):
        LinearChainCRF().fit(X, Y3 + [[]], sample_weight=[0, 0, 0, 1])


def test_top_features_k_is_validated():
    crf = LinearChainCRF(c2=0.1).fit(X3(), Y3)
    everything = crf.top_features(k=None)
    assert sum(map(len, everything.values())) == int((crf.coef_ > 0).sum())
    assert all(len(v) <= 1 for v in crf.top_features(k=1).values())
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="positive int"):
            crf.top_features(k=bad)


@pytest.mark.parametrize("weights, says", [
    (["a", "b"], "must hold numbers"),
    ([1.0, 1e300], r"sample_weight\[1\] = 1e\+300 is too large"),
    ([1.0, {"x": 1}], "must hold numbers"),
])
def test_bad_sample_weights_say_what_is_wrong(weights, says):
    from skcrf import LinearChainCRF

    X = [np.eye(2)[[0, 1]], np.eye(2)[[1, 0]]]
    with pytest.raises(ValueError, match=says):
        LinearChainCRF().fit(X, [["a", "b"], ["b", "a"]], sample_weight=weights)


def test_predict_checks_its_input_as_fit_does():
    """predict validates and converts its rows in one pass
    (``checked_kernel_arrays``): the same errors as fit, and the same labels
    for every index dtype and for values that are all ones."""
    rng = np.random.default_rng(0)
    mats = [sp.csr_matrix((rng.random((n, 6)) < 0.4).astype(float)) for n in (3, 4, 2)]
    y = [list("abc"), list("abca"), list("ba")]
    crf = LinearChainCRF(max_iter=20).fit(mats, y)
    expected = crf.predict(mats)
    wide = []
    for m in mats:
        m = m.copy()
        m.indices = m.indices.astype(np.int64)
        m.indptr = m.indptr.astype(np.int64)
        wide.append(m)
    assert crf.predict(Sequences(sp.vstack(wide, format="csr"), [3, 4, 2])) == expected
    assert crf.predict(mats) == expected
    bad = [m.copy() for m in mats]
    bad[2].indices[0] = 6
    with pytest.raises(ValueError, match="sequence 2, position 0 has column index 6"):
        crf.predict(bad)
    bad = [m.copy() for m in mats]
    bad[1].data[0] = np.nan
    with pytest.raises(ValueError, match="sequence 1, position 0 has a non-finite"):
        crf.predict(bad)
    seqs = Sequences(sp.vstack(mats, format="csr"), [3, 4, 2])
    seqs.X.indptr[2] = seqs.X.indptr[3] + 1    # rows that overlap
    with pytest.raises(ValueError, match="malformed"):
        crf.predict(seqs)
