"""Early stopping on held-out sequences, verbose output and the training history."""

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline

from skcrf import LinearChainCRF, SequenceFeaturizer
from skcrf.datasets import load_sample_cws
from skcrf.metrics import make_span_f1_scorer, token_accuracy
from skcrf.segmentation import words_to_tags


@pytest.fixture(scope="module")
def cws():
    sents = load_sample_cws()[:200]
    X = ["".join(s) for s in sents]
    return SequenceFeaturizer(char_type_offsets=(0,)).fit_transform(X), \
        [words_to_tags(s) for s in sents]


def test_stops_after_n_iter_no_change_and_keeps_the_best_weights(cws):
    X, y = cws
    crf = LinearChainCRF(c2=0.01, early_stopping=True, n_iter_no_change=3,
                         validation_fraction=0.2, random_state=0).fit(X, y)
    scores = crf.validation_scores_
    assert len(scores) == crf.n_iter_ == len(crf.history_)
    assert crf.stop_reason_ in ("monitor", "tol", "converged")
    best = int(np.argmax(scores)) + 1
    assert crf.best_iteration_ == best
    if crf.stop_reason_ == "monitor":
        assert crf.n_iter_ - best == 3
        assert max(scores[best:]) <= scores[best - 1]
    # the weights kept are those of the best iteration: re-score the held-out part
    perm = np.random.RandomState(0).permutation(len(X))
    val = np.sort(perm[:40])
    got = token_accuracy([y[i] for i in val], crf.predict(X[val]))
    assert got == pytest.approx(scores[best - 1], abs=1e-12)
    assert crf.objective_ == pytest.approx(crf.loss_curve_[best - 1])


def test_span_scorer_and_sequence_accuracy(cws):
    X, y = cws
    a = LinearChainCRF(early_stopping=True, scoring=make_span_f1_scorer("BMES"),
                       random_state=1, n_iter_no_change=2).fit(X, y)
    assert 0.3 < max(a.validation_scores_) <= 1.0
    b = LinearChainCRF(early_stopping=True, scoring="sequence_accuracy",
                       random_state=1, n_iter_no_change=2).fit(X, y)
    assert 0.0 <= max(b.validation_scores_) < max(a.validation_scores_)


def test_in_a_pipeline_and_a_grid_search_without_fit_arguments():
    sents = load_sample_cws()[:150]
    X = ["".join(s) for s in sents]
    y = [words_to_tags(s) for s in sents]
    pipe = make_pipeline(SequenceFeaturizer(char_type_offsets=()),
                         LinearChainCRF(early_stopping=True, n_iter_no_change=3,
                                        random_state=0))
    search = GridSearchCV(pipe, {"linearchaincrf__c2": [0.1, 1.0]}, cv=KFold(2)).fit(X, y)
    assert search.best_estimator_[-1].validation_scores_


def test_bad_validation_fraction_and_scoring():
    X, y = [np.eye(2)], [["a", "b"]]
    with pytest.raises(ValueError, match="needs at least one of each"):
        LinearChainCRF(early_stopping=True).fit(X, y)
    with pytest.raises(ValueError, match="validation_fraction"):
        LinearChainCRF(early_stopping=True, validation_fraction=1.5).fit(X * 5, y * 5)
    with pytest.raises(ValueError, match="scoring"):
        LinearChainCRF(early_stopping=True, scoring="f1").fit(X * 5, y * 5)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_verbose_prints_a_line_per_iteration_with_the_held_out_score(cws, capsys):
    X, y = cws
    crf = LinearChainCRF(verbose=1, early_stopping=True, max_iter=5, tol=0,
                         random_state=0).fit(X, y)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("iter")]
    assert len(lines) == crf.n_iter_ == 5
    for ln in lines:
        for word in ("objective", "|grad|", "active", "step", "held_out"):
            assert word in ln
    h = crf.history_[-1]
    assert h["iteration"] == 5 and h["objective"] == crf.loss_curve_[-1]
    assert h["n_active"] == crf.n_nonzero_ or crf.best_iteration_ != 5
