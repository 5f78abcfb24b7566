"""scikit-learn citizenship: checks, Pipeline, GridSearchCV, scorers, persistence."""

import os
import pickle
import pickletools
import subprocess
import sys
import warnings

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.utils import estimator_checks as ec
from sklearn.utils.estimator_checks import parametrize_with_checks

import skcrf
from skcrf import LinearChainCRF, SequenceDictVectorizer, SequenceFeaturizer, WordSegmenter
from skcrf.compat import CRF
from skcrf.datasets import load_sample_cws
from skcrf.exceptions import SkcrfVersionWarning
from skcrf.metrics import (
    make_span_f1_scorer,
    segmentation_f1_scorer,
    sequence_accuracy_scorer,
    span_f1_score,
    token_accuracy_scorer,
)
from skcrf.segmentation import words_to_tags

ESTIMATORS = [LinearChainCRF(), SequenceFeaturizer(), SequenceDictVectorizer(), WordSegmenter(),
              CRF()]
# scikit-learn's checks feed 2-D numeric arrays; a sequence estimator takes
# lists of sequences (tags.input_tags.two_d_array = False), so
# parametrize_with_checks yields only what applies to it (that it clones),
# and the checks that need no fit are called by name below. No check is
# expected to fail.
FIT_FREE_CHECKS = [
    ec.check_no_attributes_set_in_init,
    ec.check_parameters_default_constructible,
    ec.check_get_params_invariance,
    ec.check_set_params,
    ec.check_estimator_repr,
    ec.check_mixin_order,
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("check", FIT_FREE_CHECKS, ids=lambda c: c.__name__)
def test_fit_free_estimator_checks(est, check):
    check(type(est).__name__, clone(est))


@pytest.mark.parametrize("est", [LinearChainCRF(), CRF()], ids=lambda e: type(e).__name__)
def test_estimators_unfitted_check(est):
    ec.check_estimators_unfitted(type(est).__name__, est)


def test_not_fitted_errors():
    crf, feat = LinearChainCRF(), SequenceFeaturizer()
    for call in (lambda: crf.predict([np.ones((1, 2))]),
                 lambda: crf.predict_marginals([np.ones((1, 2))]),
                 lambda: crf.top_features(),
                 lambda: crf.transitions_,
                 lambda: feat.transform(["ab"]),
                 lambda: feat.get_feature_names_out()):
        with pytest.raises(NotFittedError):
            call()


def test_repr_and_params():
    assert repr(LinearChainCRF(c2=0.5)) == "LinearChainCRF(c2=0.5)"
    assert "min_freq=2" in repr(SequenceFeaturizer(min_freq=2))
    with pytest.raises(ValueError, match="c2"):
        LinearChainCRF(c2=-1).fit([np.ones((1, 1))], [["a"]])
    with pytest.raises(ValueError, match="min_freq"):
        SequenceFeaturizer(min_freq=0).fit(["ab"])
    with pytest.raises(TypeError):
        LinearChainCRF(1.0)  # keyword-only


@pytest.fixture(scope="module")
def cws():
    sents = load_sample_cws()[:240]
    X = ["".join(s) for s in sents]
    y = [words_to_tags(s) for s in sents]
    return X, y


def _pipe(**crf):
    return make_pipeline(SequenceFeaturizer(char_type_offsets=(0,)), LinearChainCRF(**crf))


def test_grid_search_over_c2_on_raw_sentences_in_parallel(cws):
    X, y = cws
    search = GridSearchCV(_pipe(), {"linearchaincrf__c2": [0.1, 1.0, 10.0]},
                          scoring=segmentation_f1_scorer, cv=KFold(3), n_jobs=2)
    search.fit(X, y)
    scores = search.cv_results_["mean_test_score"]
    assert scores.shape == (3,) and np.all((scores > 0.5) & (scores <= 1))
    assert search.best_params_["linearchaincrf__c2"] in (0.1, 1.0, 10.0)
    pred = search.predict(X[:3])
    assert [len(p) for p in pred] == [len(x) for x in X[:3]]


def test_search_over_featurizer_parameters(cws):
    X, y = cws
    search = GridSearchCV(_pipe(), {"sequencefeaturizer__min_freq": [1, 2],
                                    "sequencefeaturizer__ngram_offsets": [(), ((-1, 0),)]},
                          scoring=token_accuracy_scorer, cv=2)
    search.fit(X[:120], y[:120])
    assert len(search.cv_results_["params"]) == 4


def test_cross_val_score_and_cross_validate(cws):
    X, y = cws
    s = cross_val_score(_pipe(), X[:150], y[:150], cv=3,
                        scoring=make_span_f1_scorer("BMES"))
    assert s.shape == (3,) and (s > 0.5).all()
    r = cross_validate(_pipe(), X[:150], y[:150], cv=3,
                       scoring={"tok": token_accuracy_scorer, "seq": sequence_accuracy_scorer})
    assert (r["test_tok"] > r["test_seq"]).all()


def test_span_scorer_matches_metric(cws):
    X, y = cws
    pipe = _pipe().fit(X[:150], y[:150])
    want = span_f1_score(y[150:], pipe.predict(X[150:]), scheme="BMES")
    assert make_span_f1_scorer("BMES")(pipe, X[150:], y[150:]) == pytest.approx(want)


class _ThreadRecordingCRF(LinearChainCRF):
    """Records how many threads its kernels would use inside a search worker."""

    def fit(self, X, y, sample_weight=None):
        import numba

        from skcrf._kernels.parallel import resolve_n_threads

        super().fit(X, y, sample_weight=sample_weight)
        self.threads_seen_ = (resolve_n_threads(self.n_jobs), numba.config.NUMBA_NUM_THREADS,
                              os.getpid())
        return self


def test_no_thread_oversubscription_under_parallel_search(cws):
    # 2 worker processes; joblib caps each worker's Numba pool at cores // 2
    # (NUMBA_NUM_THREADS), so even n_jobs=-1 in the CRF keeps the busy
    # threads at the number of cores
    X, y = cws
    out = cross_validate(make_pipeline(SequenceFeaturizer(), _ThreadRecordingCRF(n_jobs=-1)),
                         X[:60], y[:60], cv=2, n_jobs=2, return_estimator=True,
                         scoring=token_accuracy_scorer)
    cores = os.cpu_count()
    records = [est[-1].threads_seen_ for est in out["estimator"]]
    assert len({pid for _, _, pid in records}) == 2  # really two processes
    for n_threads, pool, pid in records:
        assert pid != os.getpid()
        assert pool == max(cores // 2, 1)
        assert n_threads * 2 <= max(cores, 2)


def test_sample_weight_through_pipeline_and_search(cws):
    X, y = cws
    X, y = X[:80], y[:80]
    w = np.ones(len(X))
    w[40:] = 0.0
    a = _pipe(c2=0.5).fit(X, y, linearchaincrf__sample_weight=w)
    b = _pipe(c2=0.5).fit(X[:40], y[:40])
    # zero-weight sequences still add features to the vocabulary, so compare
    # the objective and predictions rather than raw weight matrices
    assert a[-1].objective_ == pytest.approx(b[-1].objective_, rel=1e-5)
    assert a.predict(X[:40]) == b.predict(X[:40])
    # shuffled folds: a fold of zero-weight sequences only is refused
    search = GridSearchCV(_pipe(), {"linearchaincrf__c2": [0.5]},
                          cv=KFold(2, shuffle=True, random_state=0),
                          scoring=token_accuracy_scorer, error_score="raise")
    search.fit(X, y, linearchaincrf__sample_weight=w)
    assert search.best_estimator_[-1].objective_ == pytest.approx(a[-1].objective_, rel=1e-5)


def test_clone_is_unfitted_copy(cws):
    X, y = cws
    pipe = _pipe(c2=0.3).fit(X[:50], y[:50])
    c = clone(pipe)
    assert c.get_params()["linearchaincrf__c2"] == 0.3
    with pytest.raises(NotFittedError):
        c.predict(X[:1])


def test_warm_start_refuses_other_classes():
    X = [np.eye(2), np.eye(2)]
    crf = LinearChainCRF(warm_start=True).fit(X, [["a", "b"], ["b", "a"]])
    with pytest.raises(ValueError, match="warm_start"):
        crf.fit(X, [["a", "c"], ["c", "a"]])
    # without warm_start a refit with other labels starts afresh
    crf.set_params(warm_start=False).fit(X, [["a", "c"], ["c", "a"]])
    assert crf.classes_.tolist() == ["a", "c"]


def test_persistence_in_a_new_process(cws, tmp_path):
    X, y = cws
    pipe = _pipe().fit(X[:100], y[:100])
    path = tmp_path / "model.joblib"
    joblib.dump(pipe, path)
    want = pipe.predict(X[100:120])
    code = (
        "import joblib, json, sys\n"
        f"pipe = joblib.load({str(path)!r})\n"
        f"X = json.loads(sys.stdin.read())\n"
        "print(json.dumps(pipe.predict(X)))\n"
    )
    import json

    out = subprocess.run([sys.executable, "-c", code], input=json.dumps(X[100:120]),
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == want
    pickled = pickle.dumps(pipe)
    assert pickle.loads(pickled).predict(X[100:120]) == want
    # only arrays and small metadata: no Numba dispatcher or compiled code inside
    modules = {arg.split()[0] for op, arg, _ in pickletools.genops(pickled)
               if op.name in ("GLOBAL", "STACK_GLOBAL") and isinstance(arg, str)}
    text = repr([a for _, a, _ in pickletools.genops(pickled) if isinstance(a, str)])
    assert "numba" not in text and "llvm" not in text.lower()
    assert not any(m.startswith("numba") for m in modules)


def test_version_mismatch_warns(cws):
    X, y = cws
    crf = LinearChainCRF().fit([np.eye(2)], [["a", "b"]])
    state = crf.__getstate__()
    assert state["_skcrf_version"] == skcrf.__version__
    state["_skcrf_version"] = "0.0.1"
    other = LinearChainCRF.__new__(LinearChainCRF)
    with pytest.warns(SkcrfVersionWarning, match="0.0.1"):
        other.__setstate__(state)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SkcrfVersionWarning)
        pickle.loads(pickle.dumps(crf))


def test_top_features_and_transition_table(cws):
    X, y = cws
    pipe = _pipe().fit(X[:100], y[:100])
    names = pipe[0].get_feature_names_out()
    top = pipe[-1].top_features(names, k=5)
    assert set(top) == {"B", "E", "M", "S"}
    for rows in top.values():
        ws = [w for _, w in rows]
        assert len(rows) == 5 and ws == sorted(ws, reverse=True) and ws[0] > 0
        assert all(isinstance(n, str) for n, _ in rows)
    low = pipe[-1].top_features(names, k=3, negative=True)
    assert all(w < 0 for rows in low.values() for _, w in rows)
    table = pipe[-1].transitions_
    crf = pipe[-1]
    i, j = list(crf.classes_).index("B"), list(crf.classes_).index("E")
    assert table["B"]["E"] == crf.transition_coef_[i, j]
    assert table["B"]["E"] > table["B"]["B"]  # B is followed by E or M, never B
    assert set(table["<start>"]) == {"B", "E", "M", "S"}
    assert table["E"]["<end>"] == crf.end_coef_[j]


def test_pipeline_works_with_pandas_transform_output(cws):
    import sklearn  # pandas itself comes with the [test] extra

    X, y = cws
    with sklearn.config_context(transform_output="pandas"):
        pipe = _pipe().fit(X[:60], y[:60])
        pred = pipe.predict(X[60:70])
        assert isinstance(pipe[0].transform(X[:2]), skcrf.Sequences)
    assert pred == _pipe().fit(X[:60], y[:60]).predict(X[60:70])


def test_pickling_leaves_the_estimator_untouched(cws):
    X, y = cws
    pipe = _pipe(c1=0.05).fit(X[:60], y[:60])
    crf = pipe[-1]
    before = {k: v for k, v in vars(crf).items()}
    want = pipe.predict(X[60:70])
    pickle.dumps(pipe)
    assert vars(crf).keys() == before.keys()
    assert isinstance(crf.coef_, np.ndarray) and pipe.predict(X[60:70]) == want
    assert pipe[0]._vocabulary_._table is not None   # the featurizer keeps its live table
