"""Objective parity with CRFsuite (sklearn-crfsuite) on identical features.

The objective is convex, so two correct implementations reach the same
optimum. CRFsuite is the oracle: we check that (1) our objective evaluated at
CRFsuite's weights equals the loss CRFsuite reports (same objective), and (2)
our fitted objective equals it too (same optimum), with predictions agreeing.
"""

import numpy as np
import pytest
from sklearn.feature_extraction import DictVectorizer

from skcrf import LinearChainCRF, Sequences
from skcrf._training.layout import ParameterLayout
from skcrf._training.loss import CRFLoss, Objective
from skcrf._training.penalty import ElasticNet
from tests.oracles.problems import synthetic_ner, token_features

sklearn_crfsuite = pytest.importorskip(
    "sklearn_crfsuite", reason="sklearn-crfsuite is part of the [test] extra")


@pytest.fixture(scope="module")
def problem():
    sents, tags = synthetic_ner(300, seed=0)
    feats = [[token_features(s, t) for t in range(len(s))] for s in sents]
    dv = DictVectorizer()
    M = dv.fit_transform([f for seq in feats for f in seq]).tocsr()
    seqs = Sequences(M, [len(s) for s in sents])
    return feats, tags, seqs, dv


@pytest.mark.parametrize("all_trans", [False, True])
def test_same_objective_and_predictions_as_crfsuite(problem, all_trans):
    feats, tags, seqs, dv = problem
    c2 = 1.0
    ref = sklearn_crfsuite.CRF(algorithm="lbfgs", c1=0.0, c2=c2, max_iterations=2000,
                               delta=1e-8, all_possible_transitions=all_trans)
    ref.fit(feats, tags)
    ref_loss = ref.training_log_.last_iteration["loss"]

    crf = LinearChainCRF(c2=c2, tol=1e-8, all_possible_transitions=all_trans,
                         start_end_transitions=False).fit(seqs, tags)
    assert crf.objective_ == pytest.approx(ref_loss, rel=1e-4)

    # our objective at CRFsuite's weights is CRFsuite's loss: same objective
    classes = crf.classes_
    col = dv.vocabulary_
    W = np.zeros((seqs.n_features, classes.size))
    for (attr, lab), w in ref.state_features_.items():
        W[col[attr], np.searchsorted(classes, lab)] = w
    A = np.zeros((classes.size, classes.size))
    for (a, b), w in ref.transition_features_.items():
        A[np.searchsorted(classes, a), np.searchsorted(classes, b)] = w
    y_idx = np.searchsorted(classes, np.concatenate(tags)).astype(np.int32)
    # CRFsuite's parameter space, built here from the data: (attribute,
    # label) pairs that occur; label pairs that occur unless all_trans
    L = classes.size
    onehot = np.eye(L)[y_idx]
    seen = ((seqs.X != 0).T @ onehot) > 0
    first = np.concatenate([[0], np.cumsum([len(t) for t in tags])[:-1]])
    inner = np.ones(y_idx.size, bool)
    inner[first] = False
    pairs = np.unique(y_idx[:-1][inner[1:]].astype(np.int64) * L + y_idx[1:][inner[1:]])
    layout = ParameterLayout(seqs.n_features, L, np.flatnonzero(seen.reshape(-1)),
                             np.arange(L * L) if all_trans else pairs, False)
    obj = Objective([CRFLoss(seqs.kernel_arrays(), y_idx, np.ones(len(seqs)), layout)],
                    ElasticNet(0.0, c2))
    theta = layout.pack(W, A, np.zeros(classes.size), np.zeros(classes.size))
    # every CRFsuite weight has a parameter in our layout
    assert np.count_nonzero(theta) == np.count_nonzero(W) + np.count_nonzero(A)
    f_at_ref, _ = obj(theta)
    assert f_at_ref == pytest.approx(ref_loss, rel=1e-6)
    assert crf.objective_ <= f_at_ref * (1 + 1e-5)

    ours = np.concatenate([np.asarray(p) for p in crf.predict(seqs)])
    theirs = np.concatenate([np.asarray(p) for p in ref.predict(feats)])
    assert np.mean(ours == theirs) >= 0.995
