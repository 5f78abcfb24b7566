import pickle

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import KFold, train_test_split

from skcrf import Sequences


@pytest.fixture
def seqs():
    mats = [sp.random(n, 6, density=0.5, random_state=i, format="csr")
            for i, n in enumerate([3, 0, 2, 5, 1])]
    return mats, Sequences.from_list(mats)


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
