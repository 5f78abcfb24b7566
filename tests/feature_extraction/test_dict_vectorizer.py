"""SequenceDictVectorizer: sklearn-crfsuite's feature dicts, against DictVectorizer."""

import numpy as np
import pytest
from sklearn.feature_extraction import DictVectorizer

from skcrf import LinearChainCRF, SequenceDictVectorizer, Sequences


def tutorial_like(rng, n_seq=40):
    words = ["Madrid", "es", "la", "capital", "de", "España", "EFE", "12", "y"]
    X, y = [], []
    for _ in range(n_seq):
        T = int(rng.integers(1, 8))
        seq = []
        for t in range(T):
            w = words[int(rng.integers(len(words)))]
            f = {"bias": 1.0, "word.lower()": w.lower(), "word[-3:]": w[-3:],
                 "word.istitle()": w.istitle(), "word.isdigit()": w.isdigit(),
                 "len": len(w) / 3}
            if t == 0:
                f["BOS"] = True
            seq.append(f)
        X.append(seq)
        y.append(list(rng.choice(["O", "B-LOC", "I-LOC"], size=T)))
    return X, y


def test_same_matrix_as_dictvectorizer_up_to_column_order():
    rng = np.random.default_rng(0)
    X, _ = tutorial_like(rng)
    ours = SequenceDictVectorizer().fit(X)
    S = ours.transform(X)
    dv = DictVectorizer()
    M = dv.fit_transform([d for seq in X for d in seq]).tocsr()
    M.eliminate_zeros()   # DictVectorizer keeps False as explicit 0
    names = list(ours.get_feature_names_out())
    cols = [dv.vocabulary_[n] for n in names]
    np.testing.assert_allclose(S.X.toarray(), M[:, cols].toarray())
    assert set(names) == {n for n, j in dv.vocabulary_.items() if M[:, j].nnz}
    assert S.lengths.tolist() == [len(s) for s in X]


def test_values_lists_min_freq_and_unseen_features():
    X = [[{"w": "a", "tags": ["x", "y"], "n": 2, "flag": False, "f": np.float32(0.5)},
          {"w": "b", "tags": ("x",), "n": np.int64(3)}]]
    v = SequenceDictVectorizer(separator=":")
    S = v.fit_transform(X)
    names = list(v.get_feature_names_out())
    assert names == ["w:a", "tags:x", "tags:y", "n", "f", "w:b"]
    np.testing.assert_allclose(S[0].toarray(), [[1, 1, 1, 2, 0.5, 0], [0, 1, 0, 3, 0, 1]])
    assert v.feature_counts_.tolist() == [1, 2, 1, 2, 1, 1]
    v2 = SequenceDictVectorizer(min_freq=2).fit(X)
    assert list(v2.get_feature_names_out()) == ["tags=x", "n"]
    Z = v2.transform([[{"w": "zzz", "n": 1.0, "new": "q"}]])
    assert Z.n_features == 2 and Z[0].toarray().tolist() == [[0.0, 1.0]]


@pytest.mark.parametrize("bad,match", [
    ({"w": None}, r"X\[0\]\[0\]\['w'\] = None"),
    ({"w": {"nested": "dict"}}, "nested dicts"),
    ({"w": ["ok", 3]}, r"X\[0\]\[0\]\['w'\]"),
    ({3: "x"}, "feature names must be str"),
])
def test_unsupported_values_name_the_token_and_key(bad, match):
    with pytest.raises(TypeError, match=match):
        SequenceDictVectorizer().fit([[bad]])


def test_bad_shapes_and_non_finite_values():
    v = SequenceDictVectorizer()
    for bad in ({"a": 1}, "abc", [{"a": 1}]):
        with pytest.raises(TypeError):
            v.fit(bad)
    with pytest.raises(TypeError, match=r"X\[0\]\[1\] is a str"):
        v.fit([[{"a": 1}, "token"]])
    with pytest.raises(ValueError, match=r"X\[1\]\[0\] has a non-finite"):
        v.fit([[{"a": 1.0}], [{"a": float("nan")}]])
    with pytest.raises(ValueError, match="empty"):
        v.fit([])


def test_pipeline_from_dicts_equals_fit_on_vectorised_input():
    from sklearn.pipeline import make_pipeline

    rng = np.random.default_rng(1)
    X, y = tutorial_like(rng)
    pipe = make_pipeline(SequenceDictVectorizer(), LinearChainCRF(c2=0.5)).fit(X, y)
    S = SequenceDictVectorizer().fit_transform(X)
    assert isinstance(S, Sequences)
    direct = LinearChainCRF(c2=0.5).fit(S, y)
    assert pipe[-1].objective_ == pytest.approx(direct.objective_, rel=1e-12)
    assert pipe.predict(X) == direct.predict(S)


def test_a_feature_new_twice_in_one_sequence_gets_one_column():
    X = [[{"pos": "NC", "f": False}, {"pos": "NC", "f": True}, {"pos": "VM", "f": False}],
         [{"pos": "NC", "f": True}]]
    v = SequenceDictVectorizer()
    S = v.fit_transform(X)
    assert list(v.get_feature_names_out()) == ["pos=NC", "f", "pos=VM"]
    assert v.feature_counts_.tolist() == [3, 2, 1]
    np.testing.assert_array_equal(S.X.toarray(), [[1, 0, 0], [1, 1, 0], [0, 0, 1], [1, 1, 0]])
