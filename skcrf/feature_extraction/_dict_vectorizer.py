"""SequenceDictVectorizer: sklearn-crfsuite's feature dicts -> Sequences."""

from array import array
from bisect import bisect_right
from itertools import accumulate, chain, repeat
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._persistence import VersionedPickleMixin
from .._sequences import Sequences, sequence_of
from .._sklearn_compat import Interval, _fit_context

__all__ = ["SequenceDictVectorizer"]


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
    lists of indices: a feature's key is the dict item ``(name, value)``
    itself, so the items of many tokens are looked up in one C-level pass.

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
    feature_counts_ : ndarray of shape (n_features,)
        Occurrences (non-zero values) of each feature in the training data.
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
        keys, counts, scanned = _count_items(X)
        keep_col, new_col = self._set_vocabulary(keys, counts)
        if not keep:
            return None
        remap = np.append(np.where(keep_col, new_col, _DROP), _DROP).astype(np.int32)
        return scanned.to_sequences(self.n_features_out_, remap)

    def _set_vocabulary(self, keys, counts):
        """The fitted state from the features' keys and counts (in order of
        first occurrence): the ones seen ``min_freq`` times or more, renumbered.
        Returns ``(kept, new column of each key)``."""
        counts = np.asarray(counts, dtype=np.int64)
        keep_col = counts >= self.min_freq
        new_col = np.cumsum(keep_col) - 1
        self.vocabulary_ = {k: int(new_col[j]) for j, k in enumerate(keys) if keep_col[j]}
        self.feature_counts_ = counts[keep_col]
        self.n_features_out_ = len(self.vocabulary_)
        self.__dict__.pop("_lookup_table", None)
        return keep_col, new_col

    def transform(self, X):
        """Features of ``X`` as a :class:`Sequences`; unseen features are ignored."""
        check_is_fitted(self)
        X = _check_input(X)
        lookup = self.__dict__.get("_lookup_table")
        if lookup is None:
            lookup = self.__dict__["_lookup_table"] = _Vocabulary.lookup_of(self.vocabulary_)
        # a copy per call: the unseen features of this call are cached in it
        return _scan(X, _Vocabulary(dict(lookup), grow=False)).to_sequences(
            self.n_features_out_)

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_lookup_table", None)
        return state

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


# --------------------------------------------------------------- vocabulary
_DROP = -1              # the column of a 0 value or of an unseen feature: dropped
_MISS = -2              # what the look-up gives for an item it does not know
_NUMBERS = (float, int, bool)


class _Vocabulary:
    """Feature keys -> columns, with the look-ups a token dict's items need.

    ``lookup`` maps a one-hot feature's item ``(name, value)`` to its column,
    a numeric feature's ``name`` to its column, and also ``(name, 1)`` to it
    (``True`` and ``1.0`` hash and compare equal to 1) and ``(name, 0)`` to
    ``_DROP``, so that flags and biases are found item by item like one-hot
    features. With ``grow``, unseen features get the next column (``keys``
    lists them in column order); otherwise they map to ``_DROP``.
    """

    def __init__(self, lookup, grow):
        self.lookup = lookup
        self.grow = grow
        self.keys = []

    @staticmethod
    def lookup_of(vocabulary):
        lookup = dict(vocabulary)
        for key, j in vocabulary.items():
            if not isinstance(key, tuple):
                lookup[(key, 1)] = j
                lookup[(key, 0)] = _DROP
        return lookup

    def drop(self, key):
        """An unseen feature at transform: dropped, and cached as such."""
        self.lookup[key] = _DROP
        return _DROP

    def new(self, key):
        j = len(self.keys)
        self.keys.append(key)
        self.lookup[key] = j
        if not isinstance(key, tuple):     # numeric: its 1 / 0 look-ups
            self.lookup[(key, 1)], self.lookup[(key, 0)] = j, _DROP
        return j

    def column(self, name, v, where):
        """``(column, value)`` of an item the look-up missed; ``where()`` gives
        ``(sequence, token)`` for an error message."""
        if name.__class__ is not str:
            s, t = where()
            raise TypeError(f"X[{s}][{t}] has the key {name!r} ({type(name).__name__}); "
                            "feature names must be str.")
        cls = v.__class__
        if cls is str:
            key, x = (name, v), 1.0
        elif cls in _NUMBERS or (isinstance(v, Real) and not isinstance(v, np.ndarray)):
            key, x = name, float(v)
        else:
            s, t = where()
            _bad_value(s, t, name, v)
        j = self.lookup.get(key)
        if j is None:
            # an unseen feature: a new column, or dropped (at once next time)
            j = self.new(key) if self.grow else self.drop((name, v))
        return (_DROP, 0.0) if x == 0 else (j, x)


def _bad_value(s, t, name, v):
    raise TypeError(
        f"X[{s}][{t}][{name!r}] = {v!r} ({type(v).__name__}): a feature value must be "
        "a str, a number, a bool, or a list of str (nested dicts and None are not "
        "supported)."
    )


# -------------------------------------------------------------------- scans
class _Scanned:
    """Columns of every item (``_DROP`` for dropped ones), token boundaries,
    and the values that are not 1."""

    def __init__(self, lengths, ends, indices, special_pos, special_val, duplicates):
        self.lengths = lengths
        self.ends = ends
        self.indices = indices
        self.special_pos = special_pos
        self.special_val = special_val
        self.duplicates = duplicates
        val = np.frombuffer(special_val, dtype=np.float64)
        if val.size and not np.isfinite(val).all():
            bad = int(np.flatnonzero(~np.isfinite(val))[0])
            s, t = _where(lengths, bisect_right(ends, special_pos[bad]))
            raise ValueError(f"X[{s}][{t}] has a non-finite feature value ({val[bad]}).")

    def to_sequences(self, n_features, remap=None):
        ind = self.indices if remap is None else remap[self.indices]
        val = None
        if len(self.special_pos):
            val = np.ones(ind.size)
            val[np.frombuffer(self.special_pos, dtype=np.int64)] = \
                np.frombuffer(self.special_val)
        ptr = np.concatenate([[0], np.asarray(self.ends, dtype=np.int64)])
        keep = ind >= 0
        if not keep.all():
            ptr -= np.searchsorted(np.flatnonzero(~keep), ptr)
            ind = ind[keep]
            val = None if val is None else val[keep]
        del keep
        lengths = np.asarray(self.lengths, dtype=np.int64)
        if val is None and not self.duplicates:   # every value 1: the indices only
            return Sequences._from_binary_csr(ptr, ind, n_features, lengths)
        X = sp.csr_matrix((np.ones(ind.size) if val is None else val, ind, ptr),
                          shape=(ptr.size - 1, n_features))
        if self.duplicates:
            return Sequences(X, lengths)   # sums a column repeated in a row
        return Sequences._from_unique_csr(X, lengths)


def _count_items(X):
    """``(keys, counts, scanned)``: the features of ``X`` in order of first
    occurrence and how often each occurs."""
    vocab = _Vocabulary({}, grow=True)
    scanned = _scan(X, vocab)
    counts = np.bincount(scanned.indices + 1, minlength=len(vocab.keys) + 1)[1:]  # _DROP: bin 0
    return vocab.keys, counts, scanned


def count_items(X):
    """``(keys, counts)`` of the features of ``X`` (a cluster partition's
    share of :meth:`SequenceDictVectorizer.fit`; see :func:`merge_item_counts`)."""
    keys, counts, _ = _count_items(_check_input(X))
    return keys, counts


def merge_item_counts(a, b):
    """The ``(keys, counts)`` of two texts, ``a``'s first (keys in order of
    first occurrence, counts summed)."""
    counts = dict(zip(a[0], a[1].tolist()))
    keys = list(a[0])
    for k, c in zip(b[0], b[1].tolist()):
        if k in counts:
            counts[k] += c
        else:
            counts[k] = c
            keys.append(k)
    return keys, np.array([counts[k] for k in keys], dtype=np.int64)


def _check_input(X):
    if isinstance(X, (str, bytes, dict)) or not hasattr(X, "__len__"):
        raise TypeError("X must be a list of sequences, each a list of feature dicts "
                        f"(one per token), got {type(X).__name__}.")
    X = list(X)
    for i, seq in enumerate(X):
        if isinstance(seq, (str, bytes, dict)) or not hasattr(seq, "__len__"):
            raise TypeError(f"X[{i}] is a {type(seq).__name__}; a sequence is a list "
                            "of feature dicts, one per token.")
    return X


def _scan(X, vocab):
    """The column of every item of every token dict.

    The items of a block of tokens are looked up in one C-level ``map``, then
    the misses (unseen features, numbers other than 0 / 1, bad values) are
    resolved one by one. Blocks grow from 1,024 tokens, so that a fit learns
    most of its vocabulary on the first blocks and later ones mostly hit.
    Data with unhashable values (lists) goes token by token instead.
    """
    flat = list(chain.from_iterable(X))
    lengths = list(map(len, X))
    if set(map(type, flat)) - {dict}:
        _raise_bad_token(X)
    ends = list(accumulate(map(len, flat)))         # item position after each token
    get, items = vocab.lookup.get, dict.items
    cols = array("i")           # C ints: no Python list of millions of references
    special_pos, special_val = array("q"), array("d")
    a, block = 0, 1024
    while a < len(flat):
        b = min(len(flat), a + block)
        base = len(cols)
        try:
            cols.extend(map(get, chain.from_iterable(map(items, flat[a:b])),
                            repeat(_MISS)))
        except TypeError:                           # a list value: token by token
            return _scan_tokens(X, flat, lengths, ends, vocab)
        misses = []
        pos = _find(cols, _MISS, base)
        while pos >= 0:
            misses.append(pos)
            pos = _find(cols, _MISS, pos + 1)
        if len(misses) * 20 > len(cols) - base:
            # many misses (the first blocks of a fit): index the block's items
            block_items = list(chain.from_iterable(map(items, flat[a:b])))
            item_at = lambda p: block_items[p - base]  # noqa: E731
        else:
            item_at = _TokenItems(flat, ends, a).item
        for pos in misses:
            item = item_at(pos)
            if item[1].__class__ is str and item[0].__class__ is str:   # one-hot
                j = get(item)               # added earlier in this block?
                if j is None:
                    j = vocab.new(item) if vocab.grow else vocab.drop(item)
            else:
                j, x = vocab.column(*item, lambda: _where(lengths, bisect_right(ends, pos)))
                if x != 1.0 and j != _DROP:
                    special_pos.append(pos)
                    special_val.append(x)
            cols[pos] = j
        a, block = b, min(2 * block, 1 << 16)
    return _Scanned(lengths, ends, np.frombuffer(cols, dtype=np.int32), special_pos,
                    special_val, False)


class _TokenItems:
    """The item at an item position, materialising one token's items at a time
    (positions must come in increasing order)."""

    def __init__(self, flat, ends, first_token):
        self.flat, self.ends = flat, ends
        self.tok, self.items, self.start = first_token - 1, None, 0
        self.first = first_token

    def item(self, pos):
        if self.tok < self.first or pos >= self.ends[self.tok]:
            self.tok = bisect_right(self.ends, pos, lo=self.tok + 1)
            self.items = list(self.flat[self.tok].items())
            self.start = self.ends[self.tok] - len(self.items)
        return self.items[pos - self.start]


def _find(arr, value, start):
    """Position of ``value`` in ``arr`` from ``start`` on, or -1 (a C-level scan)."""
    try:
        return arr.index(value, start)
    except ValueError:
        return -1


def _scan_tokens(X, flat, lengths, ends, vocab):
    """Item by item, lists of strings included (one feature per item)."""
    cols = []
    special_pos, special_val = array("q"), array("d")
    new_ends = []
    duplicates = False
    for tok, d in enumerate(flat):
        for name, v in d.items():
            if v.__class__ in (list, tuple, set, frozenset):
                duplicates = True
                for item in v:
                    if item.__class__ is not str:
                        _bad_value(*_where(lengths, tok), name, v)
                    j, _ = vocab.column(name, item, lambda: _where(lengths, tok))
                    cols.append(j)
                continue
            j = vocab.lookup.get((name, v)) if v.__class__ is str else None
            x = 1.0
            if j is None:
                j, x = vocab.column(name, v, lambda: _where(lengths, tok))
            if x != 1.0 and j != _DROP:
                special_pos.append(len(cols))
                special_val.append(x)
            cols.append(j)
        new_ends.append(len(cols))
    return _Scanned(lengths, new_ends, np.array(cols, dtype=np.int32), special_pos,
                    special_val, duplicates)


def _where(lengths, tok):
    """``(sequence, position)`` of the ``tok``-th token."""
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    s = int(sequence_of(offsets, tok))
    return s, tok - int(offsets[s])


def _raise_bad_token(X):
    for i, seq in enumerate(X):
        for t, tok in enumerate(seq):
            if not isinstance(tok, dict):
                raise TypeError(f"X[{i}][{t}] is a {type(tok).__name__}, not a dict "
                                "of features.")
