import pickle

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import KFold, train_test_split

from skcrf import Sequences


def _binary(mats, reverse=True):
    """Binary sequences (the indices only, as SequenceFeaturizer makes them)
    of the 0/1 matrices ``mats``, each row's columns in reverse order (rows
    need not be sorted) unless not ``reverse``."""
    X = sp.vstack(mats, format="csr")
    step = -1 if reverse else 1
    indices = np.concatenate([X.indices[a:b][::step] for a, b in zip(X.indptr[:-1],
                                                                      X.indptr[1:])]
                             + [np.zeros(0, np.int32)])
    return Sequences._from_binary_csr(X.indptr, indices, X.shape[1],
                                      [m.shape[0] for m in mats])


@pytest.fixture(params=["values", "binary"])
def seqs(request):
    mats = [sp.random(n, 6, density=0.5, random_state=i, format="csr")
            for i, n in enumerate([3, 0, 2, 5, 1])]
    if request.param == "values":
        return mats, Sequences.from_list(mats)
    mats = [(m != 0).astype(np.float64) for m in mats]
    return mats, _binary(mats)


def test_len_iter_index(seqs):
    mats, s = seqs
    assert len(s) == 5 and s.n_tokens == 11 and s.n_features == 6
    for a, b in zip(mats, s):
        assert (a != b).nnz == 0 and a.shape == b.shape
    assert (s[3] != mats[3]).nnz == 0
    assert (s[-1] != mats[4]).nnz == 0
    assert s[1].shape == (0, 6)
    with pytest.raises(IndexError):
        s[5]


@pytest.mark.parametrize("key", [slice(1, 4), slice(None, None, -2), [4, 0, 0], np.array([2]),
                                 np.array([True, False, True, False, True]), []])
def test_subsets(seqs, key):
    mats, s = seqs
    sub = s[key]
    idx = np.arange(5)[key] if not isinstance(key, list) or key else []
    idx = np.asarray(idx, dtype=int)
    assert isinstance(sub, Sequences) and len(sub) == len(idx)
    for i, m in zip(idx, sub):
        assert m.shape == mats[i].shape and (m != mats[i]).nnz == 0


def test_sklearn_style_indexing(seqs):
    _, s = seqs
    sub = s[np.array([0, 2]), ...]
    assert len(sub) == 2 and sub.n_tokens == 5


def test_concatenate_and_add(seqs):
    mats, s = seqs
    both = Sequences.concatenate([s[:2], s[2:]])
    assert both == s
    assert s[:2] + s[2:] == s
    with pytest.raises(ValueError, match="features"):
        Sequences.concatenate([s, Sequences.from_list([np.ones((1, 3))])])


def test_pickle_and_joblib(seqs, tmp_path):
    _, s = seqs
    assert pickle.loads(pickle.dumps(s)) == s
    joblib.dump(s, tmp_path / "s.joblib")
    assert joblib.load(tmp_path / "s.joblib") == s


def test_splitters(seqs):
    _, s = seqs
    for train, test in KFold(n_splits=2).split(s):
        assert len(s[train]) + len(s[test]) == len(s)
    a, b = train_test_split(s, test_size=2, random_state=0)
    assert isinstance(a, Sequences) and len(a) == 3 and len(b) == 2


def test_from_list_validates():
    with pytest.raises(ValueError, match="Sequence 1 has 2 features"):
        Sequences.from_list([np.ones((2, 3)), np.ones((1, 2))])
    with pytest.raises(ValueError, match="Sequence 0"):
        Sequences.from_list([np.ones(3)])
    with pytest.raises(ValueError, match="lengths sum"):
        Sequences(np.ones((3, 2)), [1, 1])
    with pytest.raises(ValueError, match="negative"):
        Sequences(np.ones((3, 2)), [4, -1])


def test_dense_and_sparse_inputs_agree():
    dense = [np.eye(3), np.ones((2, 3))]
    a = Sequences.from_list(dense)
    b = Sequences.from_list([sp.csr_matrix(d) for d in dense])
    assert a == b
    assert a.X.dtype == np.float64


def test_binary_sequences_keep_only_the_indices():
    """Binary sequences stay binary (no value array built) through indexing,
    iteration, subsets, concatenation, pickling, validation and the kernels'
    arrays; X, when asked for, is the matrix of ones."""
    from skcrf._arrays import ONE
    from skcrf._validation import check_sequences

    rng = np.random.default_rng(0)
    mats = [sp.csr_matrix((rng.random((n, 7)) < 0.4).astype(np.float64))
            for n in [4, 0, 3, 6, 2]]
    s = _binary(mats)
    assert s.binary and s.nnz == sum(m.nnz for m in mats)
    assert repr(s).endswith(f"nnz={s.nnz})")
    for m, got in zip(mats, s):
        assert (got != m).nnz == 0
    assert (s[3] != mats[3]).nnz == 0
    parts = [s[[4, 0, 2]], s[1:4], s[np.array([True, False, True, False, True])],
             Sequences.concatenate([s[:2], s[2:]]), pickle.loads(pickle.dumps(s))]
    for part in parts:
        assert part.binary
    assert len(pickle.dumps(s)) < len(pickle.dumps(Sequences.from_list(mats)))
    arrays = check_sequences(s).kernel_arrays()
    assert arrays.data is ONE and arrays.indices.size == s.nnz
    assert all(p._X is None for p in [s] + parts)     # no value array built so far
    assert Sequences.concatenate([s[:2], s[2:]]) == s
    assert pickle.loads(pickle.dumps(s)) == Sequences.from_list(mats)
    # mixed with sequences that have values: concatenated through X
    mixed = Sequences.concatenate([s, Sequences.from_list(mats)])
    assert not mixed.binary and mixed.n_tokens == 2 * s.n_tokens
    assert (s.X != sp.vstack(mats)).nnz == 0 and s.X.data.tolist() == [1.0] * s.nnz


def test_binary_sequences_are_checked():
    from skcrf._validation import check_sequences

    s = Sequences._from_binary_csr(np.array([0, 1, 2]), np.array([0, 9]), 5, [2])
    with pytest.raises(ValueError, match="column index 9, outside"):
        check_sequences(s)
    s = Sequences._from_binary_csr(np.array([0, 2, 1]), np.array([0, 1]), 5, [2])
    with pytest.raises(ValueError, match="malformed"):
        check_sequences(s)


def test_binary_sequences_fit_and_predict_as_their_matrix_of_ones():
    """The kernels read one value 1.0 for every non-zero of binary sequences:
    the same arithmetic as a value array of ones, so the same fit, bit for bit."""
    from skcrf import LinearChainCRF

    rng = np.random.default_rng(3)
    mats = [sp.csr_matrix((rng.random((n, 12)) < 0.3).astype(np.float64))
            for n in rng.integers(1, 9, size=30)]
    y = [[("a", "b", "c")[int(k)] for k in rng.integers(0, 3, size=m.shape[0])]
         for m in mats]
    binary, values = _binary(mats, reverse=False), Sequences.from_list(mats)
    for n_jobs in (1, 2):
        a = LinearChainCRF(max_iter=30, n_jobs=n_jobs).fit(binary, y)
        b = LinearChainCRF(max_iter=30, n_jobs=n_jobs).fit(values, y)
        assert a.objective_ == b.objective_
        np.testing.assert_array_equal(a.coef_, b.coef_)
        assert a.predict(binary) == b.predict(values)
        np.testing.assert_array_equal(a.predict_log_proba_sequences(binary, y),
                                      b.predict_log_proba_sequences(values, y))
        for p, q in zip(a.predict_marginals(binary), b.predict_marginals(values)):
            np.testing.assert_array_equal(p, q)
