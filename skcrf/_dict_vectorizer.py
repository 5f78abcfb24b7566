"""SequenceDictVectorizer: sklearn-crfsuite's feature dicts -> Sequences."""

from array import array
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ._persistence import VersionedPickleMixin
from ._sequences import Sequences, sequence_of
from ._sklearn_compat import Interval, _fit_context

__all__ = ["SequenceDictVectorizer"]

_NUMBERS = (float, int, bool)


class SequenceDictVectorizer(VersionedPickleMixin, TransformerMixin, BaseEstimator,
                             auto_wrap_output_keys=None):
    """Turn sequences of feature dicts (sklearn-crfsuite's input) into :class:`Sequences`.

    Each token is a dict from feature name (``str``) to a value:

    * ``str``: a one-hot feature ``name<separator>value`` with value 1
      (``{"word.lower()": "madrid"}`` -> ``word.lower()=madrid``);
    * a number (``int``, ``float``, NumPy scalar): feature ``name`` with that
      value; ``bool``: 1 or 0 (a 0 carries no information and is dropped);
    * a list, tuple or set of ``str``: one one-hot feature per item.

    Other values (``None``, nested dicts, ...) are refused with an error
    naming the sequence, token and key. This is what ``DictVectorizer`` does
    token by token, without its per-occurrence string formatting and Python
    lists: the vocabulary is keyed by ``(name, value)`` pairs and indices are
    collected in compact arrays.

    Parameters
    ----------
    separator : str, default="="
        Between the name and the value of a one-hot feature, in
        ``get_feature_names_out`` (CRFsuite writes ``:``).
    min_freq : int, default=1
        Drop features that occur fewer than ``min_freq`` times in ``fit``.
        Features unseen in ``fit`` are ignored by ``transform``.

    Attributes
    ----------
    vocabulary_ : dict
        ``(name, value)`` (one-hot) or ``name`` (numeric) -> column.
    feature_counts_ : ndarray of shape (n_features_out_,)
        Occurrences of each feature in the training data.
    n_features_out_ : int

    Examples
    --------
    >>> from skcrf import SequenceDictVectorizer
    >>> v = SequenceDictVectorizer()
    >>> X = v.fit_transform([[{"w": "Madrid", "title": True}, {"w": "es", "len": 2}]])
    >>> list(v.get_feature_names_out())
    ['w=Madrid', 'title', 'w=es', 'len']
    >>> X[0].toarray()
    array([[1., 1., 0., 0.],
           [0., 0., 1., 2.]])
    """

    _parameter_constraints = {
        "separator": [str],
        "min_freq": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, *, separator="=", min_freq=1):
        self.separator = separator
        self.min_freq = min_freq

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Learn the feature vocabulary of ``X``."""
        self._fit(X)
        return self

    def fit_transform(self, X, y=None):
        """Learn the vocabulary and return the features of ``X``."""
        self._validate_params()
        return self._fit(X, keep=True)

    def _fit(self, X, keep=False):
        X = _check_input(X)
        if not X:
            raise ValueError("X is empty: need at least one sequence to fit.")
        index = {}
        lengths, indptr, indices, values, duplicates = _scan(X, index, grow=True)
        n_seen = len(index)
        counts = np.bincount(np.frombuffer(indices, dtype=np.int32), minlength=n_seen)
        keep_col = counts >= self.min_freq
        new_col = np.cumsum(keep_col) - 1
        vocab = {k: int(new_col[j]) for k, j in index.items() if keep_col[j]}
        self.vocabulary_ = vocab
        self.feature_counts_ = counts[keep_col].astype(np.int64)
        self.n_features_out_ = len(vocab)
        if not keep:
            return None
        remap = np.where(keep_col, new_col, -1).astype(np.int32)
        return _to_sequences(lengths, indptr, indices, values, self.n_features_out_,
                             duplicates, remap)

    def transform(self, X):
        """Features of ``X`` as a :class:`Sequences`; unseen features are ignored."""
        check_is_fitted(self)
        X = _check_input(X)
        lengths, indptr, indices, values, duplicates = _scan(X, self.vocabulary_,
                                                             grow=False)
        return _to_sequences(lengths, indptr, indices, values, self.n_features_out_,
                             duplicates)

    def get_feature_names_out(self, input_features=None):
        """``name=value`` for one-hot features, ``name`` for numeric ones, in column order."""
        check_is_fitted(self)
        names = np.empty(self.n_features_out_, dtype=object)
        sep = self.separator
        for key, j in self.vocabulary_.items():
            names[j] = f"{key[0]}{sep}{key[1]}" if isinstance(key, tuple) else key
        return names

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.dict = True
        tags.requires_fit = True
        return tags


def _check_input(X):
    if isinstance(X, (str, bytes, dict)) or not hasattr(X, "__len__"):
        raise TypeError("X must be a list of sequences, each a list of feature dicts "
                        f"(one per token), got {type(X).__name__}.")
    return list(X)


def _scan(X, index, grow):
    """One pass over every token dict: column indices and values in compact arrays.

    With ``grow``, unseen keys get the next column; otherwise they are skipped.
    Returns ``(lengths, indptr, indices, values, duplicates)``; ``duplicates``
    is True when a row may hold a column twice (list values).
    """
    lengths = array("q")
    indptr = array("q", [0])
    indices = array("i")
    values = array("d")
    get = index.get
    add_index, add_value, add_row = indices.append, values.append, indptr.append
    duplicates = False
    for i, seq in enumerate(X):
        if isinstance(seq, (str, bytes, dict)) or not hasattr(seq, "__len__"):
            raise TypeError(f"X[{i}] is a {type(seq).__name__}; a sequence is a list "
                            "of feature dicts, one per token.")
        lengths.append(len(seq))
        for t, tok in enumerate(seq):
            if tok.__class__ is not dict and not isinstance(tok, dict):
                raise TypeError(f"X[{i}][{t}] is a {type(tok).__name__}, not a dict "
                                "of features.")
            for name, v in tok.items():
                cls = v.__class__
                if cls is str:
                    key, x = (name, v), 1.0
                elif cls in _NUMBERS:
                    if not v:
                        continue
                    key, x = name, float(v)
                elif cls is list or cls is tuple or cls is set or cls is frozenset:
                    duplicates = True
                    for item in v:
                        if item.__class__ is not str:
                            _bad_value(i, t, name, v)
                        j = get((name, item))
                        if j is None:
                            if not grow:
                                continue
                            j = index[(name, item)] = len(index)
                        add_index(j)
                        add_value(1.0)
                    continue
                elif isinstance(v, Real) and not isinstance(v, np.ndarray):
                    if not v:
                        continue
                    key, x = name, float(v)
                else:
                    _bad_value(i, t, name, v)
                j = get(key)
                if j is None:
                    if not grow:
                        continue
                    if name.__class__ is not str:
                        raise TypeError(f"X[{i}][{t}] has the key {name!r} "
                                        f"({type(name).__name__}); feature names must "
                                        "be str.")
                    j = index[key] = len(index)
                add_index(j)
                add_value(x)
            add_row(len(indices))
    val = np.frombuffer(values, dtype=np.float64)
    if val.size and not np.isfinite(val).all():
        k = int(np.flatnonzero(~np.isfinite(val))[0])
        row = int(np.searchsorted(np.frombuffer(indptr, dtype=np.int64), k, side="right")) - 1
        offsets = np.concatenate([[0], np.cumsum(np.frombuffer(lengths, dtype=np.int64))])
        s = int(sequence_of(offsets, row))
        raise ValueError(f"X[{s}][{row - offsets[s]}] has a non-finite feature value "
                         f"({val[k]}).")
    return lengths, indptr, indices, values, duplicates


def _bad_value(i, t, name, v):
    raise TypeError(
        f"X[{i}][{t}][{name!r}] = {v!r} ({type(v).__name__}): a feature value must be "
        "a str, a number, a bool, or a list of str (nested dicts and None are not "
        "supported)."
    )


def _to_sequences(lengths, indptr, indices, values, n_features, duplicates, remap=None):
    ptr = np.frombuffer(indptr, dtype=np.int64)
    ind = np.frombuffer(indices, dtype=np.int32)
    val = np.frombuffer(values, dtype=np.float64)
    if remap is not None:
        ind = remap[ind]
        kept = ind >= 0
        if not kept.all():
            row_kept = np.concatenate([[0], np.cumsum(kept)])
            ptr = row_kept[ptr]
            ind, val = ind[kept], val[kept]
    X = sp.csr_matrix((val, ind, ptr), shape=(ptr.size - 1, n_features))
    lengths = np.frombuffer(lengths, dtype=np.int64)
    if duplicates:
        return Sequences(X, lengths)   # sums repeated columns
    return Sequences._from_unique_csr(X, lengths)
