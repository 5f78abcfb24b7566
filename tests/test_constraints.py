"""Transition constraints, marginal decoding and sequence log-probabilities."""

import numpy as np
import pytest

from skcrf import LinearChainCRF, allowed_transitions
from skcrf._constraints import constraint_masks
from tests.oracles import naive
from tests.oracles.problems import log_partition, model_from_weights, random_problem

BIO = ["B-LOC", "B-PER", "I-LOC", "I-PER", "O"]  # sorted: the classes_ order


def test_allowed_transitions_bio():
    pairs = set(allowed_transitions("BIO", BIO))
    assert ("O", "I-PER") not in pairs and ("B-PER", "I-LOC") not in pairs
    assert ("B-PER", "I-PER") in pairs and ("I-PER", "I-PER") in pairs
    assert ("I-PER", "B-LOC") in pairs and ("I-PER", "O") in pairs
    assert ("<start>", "I-PER") not in pairs and ("<start>", "O") in pairs
    assert ("I-PER", "<end>") in pairs


def test_allowed_transitions_bioes_and_bmes():
    labels = ["B-X", "I-X", "E-X", "S-X", "O"]
    pairs = set(allowed_transitions("BIOES", labels))
    assert ("B-X", "O") not in pairs and ("B-X", "<end>") not in pairs
    assert ("E-X", "S-X") in pairs and ("S-X", "I-X") not in pairs
    assert ("B-X", "E-X") in pairs and ("I-X", "E-X") in pairs
    ul = set(allowed_transitions("BIOUL", ["B-X", "I-X", "L-X", "U-X", "O"]))
    assert ("U-X", "L-X") not in ul and ("B-X", "L-X") in ul
    bmes = set(allowed_transitions("BMES", list("BMES")))
    assert bmes == {("B", "M"), ("B", "E"), ("M", "M"), ("M", "E"), ("E", "B"),
                    ("E", "S"), ("S", "B"), ("S", "S"), ("<start>", "B"),
                    ("<start>", "S"), ("E", "<end>"), ("S", "<end>")}


def test_labels_outside_the_scheme_are_refused():
    with pytest.raises(ValueError, match="X-FOO"):
        allowed_transitions("BIO", ["B-PER", "X-FOO", "O"])
    with pytest.raises(ValueError, match="scheme"):
        allowed_transitions("BIOX", ["O"])
    X = [np.eye(3)]
    with pytest.raises(ValueError, match="X-FOO"):
        LinearChainCRF(constraints="BIO").fit(X, [["O", "X-FOO", "O"]])


def _constrained(rng, labels, scheme, scale=1.5):
    L = len(labels)
    X, _, W, A, start, end = random_problem(rng, n_seq=5, max_len=5, n_labels=L,
                                            scale=scale, min_len=1)
    trans, s_ok, e_ok = constraint_masks(scheme, np.array(labels))
    A = np.where(trans, A, -np.inf)
    start = np.where(s_ok, start, -np.inf)
    end = np.where(e_ok, end, -np.inf)
    return X, W, A, start, end


def _valid(path, labels, scheme):
    pairs = set(allowed_transitions(scheme, labels))
    tags = [labels[k] for k in path]
    ok = ("<start>", tags[0]) in pairs and (tags[-1], "<end>") in pairs
    return ok and all((a, b) in pairs for a, b in zip(tags, tags[1:]))


@pytest.mark.parametrize("scheme,labels", [
    ("BIO", ["B-A", "I-A", "O"]),
    ("BIOES", ["B-A", "E-A", "I-A", "O", "S-A"]),
    ("BMES", ["B", "E", "M", "S"]),
])
@pytest.mark.parametrize("seed", range(3))
def test_constrained_log_z_marginals_viterbi_match_enumeration(scheme, labels, seed):
    rng = np.random.default_rng(seed)
    X, W, A, start, end = _constrained(rng, labels, scheme)
    crf = model_from_weights(W, A, start, end, labels)
    logz = log_partition(crf, X)
    for x, p, m, lz in zip(X, crf.predict(X), crf.predict_marginals(X), logz):
        paths, scores = naive.scores(x, W, A, start, end)
        # enumeration over valid sequences only (invalid ones score -inf)
        valid = np.array([_valid(q, labels, scheme) for q in paths])
        assert np.isneginf(scores[~valid]).all()
        assert lz == pytest.approx(np.logaddexp.reduce(scores[valid]), rel=1e-10)
        node, _ = naive.marginals(x, W, A, start, end)
        np.testing.assert_allclose(m, node, rtol=1e-8, atol=1e-12)
        assert _valid([labels.index(t) for t in p], labels, scheme)
        assert [labels.index(t) for t in p] == naive.viterbi(x, W, A, start, end).tolist()


@pytest.mark.parametrize("seed", range(4))
def test_marginal_decoding_is_per_token_argmax_of_marginals(seed):
    rng = np.random.default_rng(seed)
    labels = ["B-A", "I-A", "O"]
    X, W, A, start, end = _constrained(rng, labels, "BIO", scale=2.0)
    crf = model_from_weights(W, A, start, end, labels, decoding="marginal")
    for x, p in zip(X, crf.predict(X)):
        node, _ = naive.marginals(x, W, A, start, end)
        assert p == [labels[k] for k in node.argmax(axis=1)]


def test_predict_log_proba_sequences_matches_enumeration():
    rng = np.random.default_rng(5)
    labels = ["B-A", "I-A", "O"]
    X, W, A, start, end = _constrained(rng, labels, "BIO")
    crf = model_from_weights(W, A, start, end, labels)
    ys = [list(rng.choice(labels, size=len(x))) for x in X]
    got = crf.predict_log_proba_sequences(X, ys)
    for x, y, g in zip(X, ys, got):
        want = naive.log_prob(x, W, A, start, end, [labels.index(t) for t in y])
        if np.isneginf(want):
            assert np.isneginf(g)
        else:
            assert g == pytest.approx(want, rel=1e-9, abs=1e-9)
    # the probabilities of all sequences of one input sum to 1
    x = X[0]
    paths = naive.all_paths(len(x), len(labels))
    lp = crf.predict_log_proba_sequences([x] * len(paths),
                                         [[labels[k] for k in q] for q in paths])
    assert np.exp(lp).sum() == pytest.approx(1.0, rel=1e-9)
    with pytest.raises(ValueError, match="not one of the fitted classes"):
        crf.predict_log_proba_sequences([x], [["Z"] * len(x)])


def _toy_bio(rng, n=80):
    X, y = [], []
    for _ in range(n):
        T = int(rng.integers(2, 9))
        tags, t = [], 0
        while t < T:
            if rng.random() < 0.3 and t + 1 < T:
                typ = rng.choice(["PER", "LOC"])
                tags += [f"B-{typ}", f"I-{typ}"]
                t += 2
            else:
                tags.append("O")
                t += 1
        tags = tags[:T]
        code = {"O": 0, "B-PER": 1, "I-PER": 2, "B-LOC": 3, "I-LOC": 4}
        x = np.eye(5)[[code[g] for g in tags]] + rng.normal(scale=1.2, size=(len(tags), 5))
        X.append(x)
        y.append(tags)
    return X, y


def test_training_with_constraints_gives_valid_predictions_only():
    rng = np.random.default_rng(0)
    X, y = _toy_bio(rng)
    crf = LinearChainCRF(constraints="BIO", c2=0.1).fit(X, y)
    labels = crf.classes_.tolist()
    i_o, i_iper = labels.index("O"), labels.index("I-PER")
    assert np.isneginf(crf.transition_coef_[i_o, i_iper])
    assert np.isneginf(crf.start_coef_[i_iper])
    pairs = set(allowed_transitions("BIO", labels))
    noisy = [x + rng.normal(scale=3, size=x.shape) for x in X]
    for p in crf.predict(noisy):
        assert ("<start>", p[0]) in pairs
        assert all((a, b) in pairs for a, b in zip(p, p[1:]))
    # the constrained objective is a distribution over valid sequences only
    lp = crf.predict_log_proba_sequences(X[:1], [["O"] + ["I-PER"] * (len(X[0]) - 1)])
    assert np.isneginf(lp[0])


def test_training_data_violating_the_constraints_is_refused():
    X = [np.eye(3), np.eye(3)]
    with pytest.raises(ValueError, match=r"y\[1\] position 1: 'O' -> 'I-PER'"):
        LinearChainCRF(constraints="BIO").fit(X, [["B-PER", "I-PER", "O"],
                                                 ["O", "I-PER", "O"]])
    with pytest.raises(ValueError, match=r"y\[0\] position 0: a sequence may not start"):
        LinearChainCRF(constraints="BIO").fit(X, [["I-PER", "I-PER", "O"],
                                                 ["O", "O", "O"]])
    with pytest.raises(ValueError, match=r"may not end with 'B'"):
        LinearChainCRF(constraints="BMES").fit(X, [["B", "E", "B"], ["S", "S", "S"]])


def test_explicit_pairs_and_boundaries():
    X = [np.eye(2), np.eye(2)[[1, 0]]]
    y = [["a", "b"], ["b", "a"]]
    crf = LinearChainCRF(constraints=[("a", "b"), ("b", "a"), ("<start>", "a"),
                                      ("<start>", "b")]).fit(X, y)
    assert np.isneginf(crf.transition_coef_[0, 0]) and np.isneginf(crf.transition_coef_[1, 1])
    assert np.isfinite(crf.end_coef_).all()  # no (x, "<end>") pair listed: ends are free


def test_pairs_naming_unseen_labels_do_not_apply():
    # a cross-validation fold may lack a label that the constraints name
    X = [np.eye(2), np.eye(2)[[1, 0]]]
    y = [["a", "b"], ["b", "a"]]
    pairs = [("a", "b"), ("b", "a"), ("a", "z"), ("z", "a"), ("<start>", "z")]
    crf = LinearChainCRF(constraints=pairs).fit(X, y)
    assert crf.classes_.tolist() == ["a", "b"]
    assert np.isneginf(crf.transition_coef_[0, 0]) and np.isfinite(crf.transition_coef_[0, 1])
    assert np.isfinite(crf.start_coef_).all()  # ("<start>", "z") names no class: ends free
    with pytest.raises(ValueError, match="not a"):
        LinearChainCRF(constraints=[("a", "b", "c")]).fit(X, y)


def test_no_allowed_path_is_an_error_naming_the_sequence():
    # BIOES labels without S or O: a one-token sequence has no valid path
    labels = ["B-X", "E-X"]
    W = np.zeros((2, 2))
    trans, s_ok, e_ok = constraint_masks("BIOES", np.array(labels))
    crf = model_from_weights(W, np.where(trans, 0.0, -np.inf), np.where(s_ok, 0.0, -np.inf),
                             np.where(e_ok, 0.0, -np.inf), labels)
    X = [np.ones((2, 2)), np.ones((1, 2))]
    assert crf.predict(X[:1]) == [["B-X", "E-X"]]
    for call in (crf.predict, crf.predict_marginals, crf.predict_topk,
                 lambda X: crf.predict_log_proba_sequences(X, [["B-X", "E-X"], ["B-X"]])):
        with pytest.raises(ValueError, match=r"X\[1\]: no label sequence of length 1"):
            call(X)
    crf.decoding = "marginal"
    with pytest.raises(ValueError, match=r"X\[1\]"):
        crf.predict(X)


@pytest.mark.parametrize("constrained", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_topk_equals_the_k_best_enumerated_sequences(seed, constrained):
    rng = np.random.default_rng(seed)
    labels = ["B-A", "I-A", "O"]
    if constrained:
        X, W, A, start, end = _constrained(rng, labels, "BIO")
    else:
        X, _, W, A, start, end = random_problem(rng, n_seq=5, max_len=5, n_labels=3,
                                                min_len=0)
    crf = model_from_weights(W, A, start, end, labels)
    k = 7
    logz = log_partition(crf, X)
    for x, top, lz in zip(X, crf.predict_topk(X, k=k), logz):
        if not len(x):
            assert top == [([], 0.0)]
            continue
        paths, scores = naive.scores(x, W, A, start, end)
        order = np.argsort(-scores, kind="stable")
        finite = [o for o in order if np.isfinite(scores[o])][:k]
        assert len(top) == len(finite)
        for (lab, lp), o in zip(top, finite):
            assert lp == pytest.approx(scores[o] - lz, rel=1e-9, abs=1e-9)
            assert [labels.index(t) for t in lab] == paths[o].tolist()
        lps = [lp for _, lp in top]
        assert lps == sorted(lps, reverse=True)
    # the best of the k is the Viterbi path
    assert [t[0][0] for t in crf.predict_topk(X, k=1)] == crf.predict(X)


def test_topk_ties_follow_the_documented_order():
    # all weights zero: every sequence ties; the documented order compares
    # labels in classes_ order from the last token backwards
    crf = model_from_weights(np.zeros((2, 2)), np.zeros((2, 2)), np.zeros(2), np.zeros(2),
                             ["a", "b"])
    top = crf.predict_topk([np.ones((3, 2))], k=8)[0]
    want = sorted(([x, y, z] for x in "ab" for y in "ab" for z in "ab"),
                  key=lambda p: p[::-1])
    assert [p for p, _ in top] == want
    np.testing.assert_allclose([lp for _, lp in top], np.log(1 / 8))


def test_topk_k_is_validated_and_capped():
    crf = model_from_weights(np.zeros((2, 2)), np.zeros((2, 2)), np.zeros(2), np.zeros(2),
                             ["a", "b"])
    # more than the 2 ** 3 sequences that exist: all of them, no huge allocation
    assert len(crf.predict_topk([np.ones((3, 2))], k=10**9)[0]) == 8
    with pytest.raises(ValueError, match="GiB"):
        crf.predict_topk([np.ones((60, 2))], k=10**9)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="positive int"):
            crf.predict_topk([np.ones((3, 2))], k=bad)


def test_warm_start_after_dropping_constraints():
    rng = np.random.default_rng(1)
    X, y = _toy_bio(rng, n=30)
    crf = LinearChainCRF(constraints="BIO", warm_start=True).fit(X, y)
    assert np.isneginf(crf.transition_coef_).any()
    crf.set_params(constraints=None).fit(X, y)
    assert np.isfinite(crf.transition_coef_).all() and np.isfinite(crf.objective_)
