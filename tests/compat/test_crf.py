"""skcrf.compat: sklearn-crfsuite's CRF, metrics and scorers, against sklearn-crfsuite."""

import inspect
import pickle

import numpy as np
import pytest

import skcrf.compat as compat
from skcrf import LinearChainCRF
from skcrf._training.layout import ParameterLayout
from skcrf._training.loss import CRFLoss, Objective
from skcrf._training.penalty import ElasticNet
from skcrf.compat import metrics, scorers
from tests.oracles.problems import synthetic_ner, token_features

sklearn_crfsuite = pytest.importorskip(
    "sklearn_crfsuite", reason="sklearn-crfsuite is part of the [test] extra")


@pytest.fixture(scope="module")
def ner():
    sents, tags = synthetic_ner(300, seed=0)
    feats = [[token_features(s, t) for t in range(len(s))] for s in sents]
    return feats, tags


def test_constructor_takes_sklearn_crfsuites_parameters():
    theirs = set(inspect.signature(sklearn_crfsuite.CRF).parameters)
    ours = set(inspect.signature(compat.CRF).parameters)
    assert theirs <= ours
    crf = compat.CRF(algorithm="lbfgs", c1=0.1, c2=0.1, max_iterations=100,
                     all_possible_transitions=True)
    assert "c1=0.1" in repr(crf)


@pytest.mark.parametrize("algorithm", ["l2sgd", "ap", "pa", "arow", "sgd"])
def test_other_algorithms_are_refused_with_what_is_supported(ner, algorithm):
    X, y = ner
    with pytest.raises(ValueError, match="L-BFGS only.*algorithm='lbfgs'"):
        compat.CRF(algorithm=algorithm).fit(X[:5], y[:5])
    with pytest.raises(ValueError, match="pa_type"):
        compat.CRF(pa_type=1).fit(X[:5], y[:5])
    with pytest.raises(ValueError, match="c1"):
        compat.CRF(c1=-1).fit(X[:5], y[:5])


def test_l1_objective_and_predictions_match_crfsuite(ner):
    """Same features, c1 = c2 = 0.1: CRFsuite's OWL-QN optimum is ours (1e-4),
    and our objective at CRFsuite's weights is CRFsuite's loss."""
    X, y = ner
    kw = dict(algorithm="lbfgs", c1=0.1, c2=0.1, max_iterations=3000, delta=1e-8,
              epsilon=1e-8, all_possible_transitions=True)
    ref = sklearn_crfsuite.CRF(**kw).fit(X, y)
    ours = compat.CRF(**kw).fit(X, y)
    ref_loss = ref.training_log_.last_iteration["loss"]
    assert ours.crf_.objective_ == pytest.approx(ref_loss, rel=1e-4)
    # every weight CRFsuite learnt has a parameter here; evaluate at its weights
    names = {str(n): j for j, n in enumerate(ours.vectorizer_.get_feature_names_out())}
    classes = ours.crf_.classes_
    L, F = classes.size, len(names)
    W = np.zeros((F, L))
    for (attr, lab), w in ref.state_features_.items():
        W[names[attr], classes.tolist().index(lab)] = w
    A = np.zeros((L, L))
    for (a, b), w in ref.transition_features_.items():
        A[classes.tolist().index(a), classes.tolist().index(b)] = w
    S = ours.vectorizer_.transform(X)
    index = {lab: i for i, lab in enumerate(classes.tolist())}
    y_idx = np.array([index[lab] for lab in np.concatenate(y)], dtype=np.int32)
    layout = ParameterLayout(F, L, np.arange(F * L), np.arange(L * L), False)
    penalty = ElasticNet(0.1, 0.1)
    obj = Objective([CRFLoss(S.kernel_arrays(), y_idx, np.ones(len(S)), layout)], penalty)
    theta = layout.pack(W, A, np.zeros(L), np.zeros(L))
    f_at_ref = obj(theta)[0] + penalty.c1 * np.abs(theta).sum()
    assert f_at_ref == pytest.approx(ref_loss, rel=1e-6)
    assert ours.crf_.objective_ <= f_at_ref * (1 + 1e-6)
    # L1 zeroes weights, as many as in CRFsuite
    assert ours.crf_.n_nonzero_ < 0.9 * ours.crf_.n_params_
    assert abs(ours.crf_.n_nonzero_ - len(ref.state_features_) - len(ref.transition_features_)) \
        <= 0.02 * ours.crf_.n_nonzero_
    agree = np.mean(np.concatenate(ours.predict(X)) == np.concatenate(ref.predict(X)))
    assert agree >= 0.995


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_what_sklearn_crfsuite_code_reads(ner):
    X, y = ner
    ref = sklearn_crfsuite.CRF(c1=0.1, c2=0.1, max_iterations=50).fit(X[:100], y[:100])
    crf = compat.CRF(c1=0.1, c2=0.1, max_iterations=50).fit(X[:100], y[:100])
    assert sorted(crf.classes_) == sorted(ref.classes_)
    # CRFsuite lists the attributes left in its L1-pruned model: all are ours too
    assert set(ref.attributes_) <= set(crf.attributes_)
    assert crf.num_attributes_ == len(crf.attributes_)
    assert set(crf.state_features_) <= {(a, c) for a in crf.attributes_ for c in crf.classes_}
    assert all(isinstance(k, tuple) and len(k) == 2 for k in crf.transition_features_)
    marg = crf.predict_marginals(X[:3])
    assert [len(m) for m in marg] == [len(x) for x in X[:3]]
    assert set(marg[0][0]) == set(crf.classes_)
    assert sum(marg[0][0].values()) == pytest.approx(1.0)
    assert crf.predict_single(X[0]) == list(crf.predict(X[:1])[0])
    # an object array of label lists, as sklearn-crfsuite returns it
    pred = crf.predict(X[:5])
    assert isinstance(pred, np.ndarray) and pred.dtype == object and len(pred) == 5
    assert crf.predict_marginals_single(X[0]) == marg[0]
    log = crf.training_log_
    assert set(ref.training_log_.last_iteration) <= set(log.last_iteration)
    assert log.last_iteration["num"] == len(log.iterations) <= 50
    assert crf.size_ > 0
    assert crf.score(X[100:120], y[100:120]) == metrics.flat_accuracy_score(
        y[100:120], crf.predict(X[100:120]))
    again = pickle.loads(pickle.dumps(crf))
    assert [list(p) for p in again.predict(X[:5])] == [list(p) for p in pred]
    dev = compat.CRF(max_iterations=5).fit(X[:50], y[:50], X_dev=X[50:80], y_dev=y[50:80])
    assert set(dev.training_log_.last_iteration["scores"]) == set(dev.classes_)


def test_flat_metrics_equal_sklearn_crfsuites(ner):
    _, y = ner
    rng = np.random.default_rng(0)
    labels = sorted({t for s in y for t in s})
    pred = [list(rng.choice(labels, size=len(s))) for s in y]
    from sklearn_crfsuite import metrics as theirs

    ours = metrics
    assert ours.flat_accuracy_score(y, pred) == theirs.flat_accuracy_score(y, pred)
    for fn in ("flat_f1_score", "flat_precision_score", "flat_recall_score"):
        a = getattr(ours, fn)(y, pred, average="weighted", labels=labels[1:])
        assert a == getattr(theirs, fn)(y, pred, average="weighted", labels=labels[1:])
    assert ours.flat_fbeta_score(y, pred, 2, average="macro") == \
        theirs.flat_fbeta_score(y, pred, 2, average="macro")
    assert ours.flat_classification_report(y, pred, labels=labels, digits=3) == \
        theirs.flat_classification_report(y, pred, labels=labels, digits=3)
    assert ours.sequence_accuracy_score(y, y) == 1.0
    with pytest.raises(ValueError, match="Sequence 0"):
        ours.flat_accuracy_score([["a", "b"]], [["a"]])


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_scorers_and_search(ner):
    from sklearn.model_selection import GridSearchCV

    X, y = ner
    search = GridSearchCV(compat.CRF(max_iterations=20), {"c2": [0.1, 1.0]},
                          scoring=scorers.flat_accuracy, cv=2).fit(X[:120], y[:120])
    assert search.best_params_["c2"] in (0.1, 1.0)
    assert 0.5 < search.best_score_ <= 1.0


def test_elastic_net_on_the_estimator_gives_exact_zeros_and_small_pickles():
    rng = np.random.default_rng(3)
    X = [rng.random((6, 3000)) * (rng.random((6, 3000)) < 0.01) for _ in range(150)]
    y = [list(rng.choice(["a", "b", "c"], 6)) for _ in range(150)]
    l2 = LinearChainCRF(c2=0.1).fit(X, y)
    l1 = LinearChainCRF(c1=1.0, c2=0.1).fit(X, y)
    assert l2.n_nonzero_ == l2.n_params_ and l1.n_nonzero_ < 0.7 * l1.n_params_
    assert l1.n_nonzero_ == np.count_nonzero(l1.coef_) + np.count_nonzero(
        l1.transition_coef_) + np.count_nonzero(l1.start_coef_) + np.count_nonzero(
        l1.end_coef_)
    # mostly-zero weights are pickled sparse: far smaller than the dense coef_
    assert 2 * len(pickle.dumps(l1)) < len(pickle.dumps(l1.coef_))
    for model in (l1, l2):
        again = pickle.loads(pickle.dumps(model))
        np.testing.assert_array_equal(again.coef_, model.coef_)
        assert again.predict(X[:5]) == model.predict(X[:5])


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_model_filename_is_a_crfsuite_file_both_ways(ner, tmp_path):
    """``model_filename``: ours written for sklearn-crfsuite to read, and
    sklearn-crfsuite's read here; labels in CRFsuite's order (first seen)."""
    X, y = ner
    mine, theirs_path = tmp_path / "ours.crfsuite", tmp_path / "theirs.crfsuite"
    ref = sklearn_crfsuite.CRF(c2=0.1, max_iterations=30, model_filename=str(theirs_path))
    ref.fit(X[:100], y[:100])
    crf = compat.CRF(c2=0.1, max_iterations=30, model_filename=str(mine)).fit(X[:100], y[:100])
    assert crf.classes_ == ref.classes_
    read_theirs = sklearn_crfsuite.CRF(model_filename=str(mine))
    assert read_theirs.classes_ == crf.classes_
    assert [list(p) for p in read_theirs.predict(X[100:140])] == \
        [list(p) for p in crf.predict(X[100:140])]
    read_ours = compat.CRF(model_filename=str(theirs_path))
    assert read_ours.classes_ == ref.classes_
    assert read_ours.attributes_ == ref.attributes_
    assert read_ours.state_features_ == pytest.approx(ref.state_features_)
    assert read_ours.transition_features_ == pytest.approx(ref.transition_features_)
    assert [list(p) for p in read_ours.predict(X[100:140])] == \
        [list(p) for p in ref.predict(X[100:140])]
    marg, ref_marg = read_ours.predict_marginals(X[100:105]), ref.predict_marginals(X[100:105])
    for a, b in zip(marg, ref_marg):
        for pa, pb in zip(a, b):
            assert pa == pytest.approx(pb, abs=1e-12)


def test_unfitted_attributes_and_dev_data_as_sklearn_crfsuite(ner):
    X, y = ner
    crf, ref = compat.CRF(), sklearn_crfsuite.CRF()
    for name in ("classes_", "size_", "num_attributes_", "attributes_",
                 "state_features_", "transition_features_", "tagger_"):
        assert getattr(crf, name) is None and getattr(ref, name) is None, name
    with pytest.raises(ValueError, match="X_dev.*y_dev"):
        compat.CRF(max_iterations=2).fit(X[:20], y[:20], X_dev=X[20:30])


def test_sequence_accuracy_as_sklearn_crfsuite():
    from sklearn_crfsuite import metrics as theirs

    cases = [([[1, 2], [3], [4]], [[1, 2], [4], [4]]), ([[1, 2], [3]], [[3], [1, 2]]),
             ([], []), ([["a"]], [["a"]])]
    for a, b in cases:
        assert metrics.sequence_accuracy_score(a, b) == theirs.sequence_accuracy_score(a, b)
    with pytest.raises(ValueError, match="2 sequences but y_pred has 1"):
        metrics.sequence_accuracy_score([[1], [2]], [[1]])


def test_no_convergence_warning_as_in_crfsuite():
    # CRFsuite stops at max_iterations silently; a search of many fits
    # written for it must not print a warning per fit
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compat.CRF(max_iterations=2).fit([[{"a": 1}, {"b": 1}]], [["x", "y"]])
