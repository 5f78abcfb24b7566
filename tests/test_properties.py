"""Property-based tests (hypothesis): random tiny problems against enumeration."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.oracles import naive
from tests.oracles.problems import log_partition, model_from_weights

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def problems(draw):
    L = draw(st.integers(1, 4))
    F = draw(st.integers(1, 4))
    n_seq = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    scale = draw(st.sampled_from([0.1, 1.0, 5.0]))
    start_end = draw(st.booleans())
    rng = np.random.default_rng(seed)
    X = []
    for _ in range(n_seq):
        T = int(rng.integers(0, 7))
        x = (rng.random((T, F)) < 0.5) * rng.normal(size=(T, F)) * scale
        X.append(x)
    W = rng.normal(size=(F, L)) * scale
    A = rng.normal(size=(L, L)) * scale
    start = rng.normal(size=L) * scale if start_end else np.zeros(L)
    end = rng.normal(size=L) * scale if start_end else np.zeros(L)
    if draw(st.booleans()):
        # random constraints (forbidden = -inf) that leave the path 0, 0, ... valid
        trans = rng.random((L, L)) < 0.6
        np.fill_diagonal(trans, True)
        s_ok, e_ok = rng.random(L) < 0.6, rng.random(L) < 0.6
        s_ok[0] = e_ok[0] = True
        A = np.where(trans, A, -np.inf)
        start = np.where(s_ok, start, -np.inf)
        end = np.where(e_ok, end, -np.inf)
    return X, W, A, start, end


@SETTINGS
@given(problems())
def test_log_z_marginals_and_viterbi_agree_with_enumeration(problem):
    X, W, A, start, end = problem
    crf = model_from_weights(W, A, start, end)
    pred = crf.predict(X)
    marg = crf.predict_marginals(X)
    logz = log_partition(crf, X)
    for x, p, m, lz in zip(X, pred, marg, logz):
        assert len(p) == len(x)
        assert m.shape == (len(x), W.shape[1])
        if not len(x):
            assert lz == 0.0
            continue
        np.testing.assert_allclose(m.sum(axis=1), 1.0, rtol=1e-12)
        node, _ = naive.marginals(x, W, A, start, end)
        np.testing.assert_allclose(m, node, rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(lz, naive.log_z(x, W, A, start, end), rtol=1e-10,
                                   atol=1e-10)
        # the predicted path has the maximal score (ties: any maximiser)
        _, scores = naive.scores(x, W, A, start, end)
        got = naive.path_score(x, W, A, start, end, np.asarray(p))
        assert np.isfinite(got)  # never a forbidden path
        np.testing.assert_allclose(got, scores.max(), rtol=1e-12, atol=1e-12)
