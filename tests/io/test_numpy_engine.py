"""The NumPy tagging path gives exactly what the Numba kernels give.

``skcrf._numpy_tagger`` exists so that a short ``skcrf tag`` never loads
Numba; it must agree with the kernels bit for bit: the same feature keys, the
same columns, the same best paths (ties included) and the same scores.
"""

import re

import numpy as np
import pytest

import skcrf.io._model as runtime
from skcrf import _inference as inference
from skcrf._arrays import KernelArrays, Weights
from skcrf._kernels.decode_pruned import PRUNE_MIN_LABELS
from skcrf._numpy_inference import marginals, viterbi
from skcrf.feature_extraction import _hashing as H
from skcrf.feature_extraction._numpy_keys import SortedVocabulary, splitmix
from skcrf.feature_extraction._template_set import TemplateSet
from skcrf.feature_extraction._templates import Window
from skcrf.feature_extraction._units import ABSENT, MAX_OFFSET, read_units


def test_splitmix_matches_the_kernel():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.integers(0, 2**63, size=200, dtype=np.uint64) * np.uint64(2)
                        + np.uint64(1), np.array([0, 1, 2**64 - 1], dtype=np.uint64)])
    want = np.array([H._splitmix(v) for v in x], dtype=np.uint64)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(splitmix(x), want)


def _random_tokens(rng, n_seq, vocab=12):
    words = [f"w{i}" for i in range(vocab)]
    return [[(words[int(a)], words[int(b)])
             for a, b in rng.integers(0, vocab, size=(int(rng.integers(0, 9)), 2))]
            for _ in range(n_seq)]


@pytest.mark.parametrize("seed", range(4))
def test_window_keys_match_the_kernel(seed):
    rng = np.random.default_rng(seed)
    X = _random_tokens(rng, 30) + [[]]
    units = read_units(X)
    templates = [Window([], ["bias"])]
    for n_parts in (1, 2, 3, 4):
        for _ in range(3):
            parts = [(("col", int(rng.integers(0, 2))), int(rng.integers(-3, 4)))
                     for _ in range(n_parts)]
            templates.append(Window(parts, ["x"]))
    templates.append(Window([(("type",), MAX_OFFSET)], ["far"]))
    templates.append(Window([(("attr", "suffix2"), -1), (("flag", "is_title"), 0)], ["a"]))
    ts = TemplateSet(templates)
    assert ts.has_numpy
    np.testing.assert_array_equal(ts.keys_numpy(units), ts.keys(units))


def test_absent_units_give_no_key():
    # flags read ABSENT (0) where false: the template must give key 0 there
    X = [[("Ab",), ("cd",), ("Ef",)]]
    ts = TemplateSet([Window([(("flag", "is_title"), 0), (("col", 0), 1)], ["t"])])
    keys = ts.keys_numpy(read_units(X))
    np.testing.assert_array_equal(keys, ts.keys(read_units(X)))
    assert keys[1, 0] == 0 and keys[0, 0] != 0 and keys[2, 0] != 0
    assert ABSENT == 0


def test_vocabulary_lookup_matches_the_hash_table():
    rng = np.random.default_rng(1)
    vocab = np.unique(rng.integers(1, 2**63, size=300, dtype=np.uint64))
    rng.shuffle(vocab)
    keys = rng.choice(np.concatenate([vocab, rng.integers(1, 2**63, size=100,
                                                          dtype=np.uint64)]), size=(50, 7))
    keys[rng.random(keys.shape) < 0.2] = 0
    keys[3] = 0                                   # a row with no feature
    want = H.keys_to_csr(keys, H.vocabulary_table(vocab))
    got = SortedVocabulary(vocab).csr(keys)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    empty = SortedVocabulary(np.zeros(0, dtype=np.uint64)).csr(keys)
    assert empty[1].size == 0 and empty[0].shape == (51,)


def _random_problem(rng, L, lengths, integer=False, constrained=False, binary=False):
    n_feat = 40
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    n_tok = int(offsets[-1])
    per = rng.integers(0, 6, size=n_tok)               # 0 to 5 features per token
    indptr = np.concatenate([[0], np.cumsum(per)]).astype(np.int64)
    indices = np.concatenate([rng.choice(n_feat, size=k, replace=False) for k in per]
                             + [np.zeros(0, int)]).astype(np.int32)
    draw = (lambda *s: rng.integers(-2, 3, size=s).astype(float)) if integer else \
        (lambda *s: rng.normal(size=s))
    W, A, start, end = draw(n_feat, L), draw(L, L), draw(L), draw(L)
    if constrained:
        A[rng.random((L, L)) < 0.3] = -np.inf
        A[np.diag_indices(L)] = 0.0                    # label 1 all along stays allowed
        start[0] = end[0] = -np.inf
    # values of 1 given one per non-zero, or as binary features (one value)
    data = np.ones(1) if binary else np.ones(indices.size)
    arrays = KernelArrays(indptr, indices, data, offsets)
    return arrays, Weights.from_arrays(W, A, start, end)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("L", [1, 2, 4, 5, 9, 17, 40, 70])
@pytest.mark.parametrize("binary", [False, True])
def test_viterbi_matches_the_kernel(seed, L, binary):
    # the kernel sums the emission scores in an order that depends on the
    # width (quads for 4-16 labels, the last one overlapping for 5 and 9) and
    # on whether the features are binary: the NumPy scores must be the same bits;
    # from decode_pruned.PRUNE_MIN_LABELS on (the 70 labels here) the kernel
    # prunes previous labels (decode_pruned._lane_kept; one sequence at a time,
    # _pruned_step, on vectors of 8 and a tail of 6)
    assert L < 70 or L >= PRUNE_MIN_LABELS
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 12, size=25)
    lengths[0] = 0                                    # empty sequences among them
    # integer weights make many ties: the first maximum must win, as in the kernel
    arrays, weights = _random_problem(rng, L, lengths, integer=seed % 2 == 0,
                                      constrained=seed >= 4 and L > 1, binary=binary)
    try:
        want = inference.viterbi(arrays, weights)
    except ValueError as exc:
        with pytest.raises(ValueError, match=re.escape(str(exc))):
            viterbi(arrays, weights)
        return
    got = viterbi(arrays, weights)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])    # bit-identical scores


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("L", [1, 2, 5])
def test_marginals_match_the_kernel(seed, L):
    rng = np.random.default_rng(100 + seed)
    lengths = rng.integers(0, 12, size=25)
    lengths[3] = 0
    arrays, weights = _random_problem(rng, L, lengths, integer=seed % 2 == 0,
                                      constrained=seed >= 3 and L > 1)
    if seed == 5:                                     # large scores: log space must hold
        weights = weights._replace(W=weights.W * 300.0)
    P_want, z_want = inference.marginals(arrays, weights)
    P, z = marginals(arrays, weights)
    np.testing.assert_allclose(z, z_want, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(P, P_want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-10)


def test_viterbi_no_allowed_path_names_the_sequence():
    rng = np.random.default_rng(3)
    arrays, weights = _random_problem(rng, 3, np.array([1, 3]))
    weights = weights._replace(A=np.full((3, 3), -np.inf))   # no transition at all
    for f in (viterbi, marginals):
        with pytest.raises(ValueError, match=r"X\[1\]: no label sequence of length 3"):
            f(arrays, weights)


@pytest.fixture(scope="module")
def tagger(tmp_path_factory):
    """A small CRF++-template tagger, its model file read back, and test input."""
    from sklearn.pipeline import make_pipeline

    from skcrf import LinearChainCRF, SequenceFeaturizer
    from skcrf.io._estimators import save_model

    rng = np.random.default_rng(5)
    X = _random_tokens(rng, 120, vocab=30)
    X = [s for s in X if s]
    y = [["A" if a < "w15" else ("B" if b < "w2" else "C") for a, b in s] for s in X]
    template = "U00:%x[0,0]\nU01:%x[-1,0]/%x[0,1]\nU02:%x[2,1]\nU03:c\nB\n"
    pipe = make_pipeline(SequenceFeaturizer(template=template),
                         LinearChainCRF(max_iter=30)).fit(X[:80], y[:80])
    path = save_model(pipe, tmp_path_factory.mktemp("tagger") / "m.skcrf")
    return pipe, path, X[80:] + [[("unseen", "words")], []]


def test_model_engines_agree(tagger):
    from skcrf.io._model import read_model

    pipe, path, Xt = tagger
    model = read_model(path)
    got = model.predict(Xt, engine="numpy")
    assert got == model.predict(Xt, engine="numba")
    assert got == [list(p) for p in pipe.predict(Xt)]
    with pytest.raises(ValueError, match="engine"):
        model.predict(Xt, engine="fast")
    # sequence probabilities and marginals (skcrf tag -v1 / -v2)
    a = model.predict_with_probabilities(Xt, engine="numpy")
    b = model.predict_with_probabilities(Xt, engine="numba")
    for (la, pa, Pa), (lb, pb, Pb) in zip(a, b, strict=True):
        assert la == lb
        assert pa == pytest.approx(pb, rel=1e-10, abs=1e-12)
        np.testing.assert_allclose(Pa, Pb, rtol=1e-9, atol=1e-12)


def test_auto_engine_hands_over_to_the_kernels_past_max_tokens(tagger, monkeypatch):
    from skcrf.io._model import read_model

    pipe, path, Xt = tagger
    model = read_model(path)
    n = sum(map(len, Xt[:5]))
    monkeypatch.setattr(runtime, "MAX_TOKENS", n + 1)
    want = model.predict(Xt, engine="numba")
    assert model.predict(Xt[:5]) == want[:5]          # NumPy: n tokens so far
    assert model._numpy_tokens == n
    assert model.predict(Xt[5:10]) == want[5:10]      # would pass the limit: kernels
    assert model._numpy_tokens > runtime.MAX_TOKENS
    assert model.predict(Xt[10:11]) == want[10:11]    # and kernels from then on
    assert model._numpy_tokens > runtime.MAX_TOKENS
