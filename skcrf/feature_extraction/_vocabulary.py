"""The fitted vocabulary: everything a fitted :class:`SequenceFeaturizer` knows.

:class:`FittedVocabulary` is the one owner of the featurizer's fitted state:
the templates, the input kind, the feature keys in column order, and per
feature its count and what it read (its slot and codes into a table of
strings, so columns can be named). The featurizer fits one
(:meth:`FittedVocabulary.fit`), model files store and rebuild one
(:meth:`to_state` / :meth:`from_state`), and a cluster fit merges the ones
its partitions fit (:meth:`merge`, then :meth:`keep`): one code path for the
vocabulary step, wherever it runs.

NumPy only at import (the model files' runtime rebuilds vocabularies without
Numba); fitting and the compiled look-up load the kernels through
:func:`._templates._kernels`.
"""

import numpy as np

from ._template_set import TemplateSet
from ._templates import _NO_VALUE, _kernels, template_from_state
from ._units import MAX_OFFSET

__all__ = ["FittedVocabulary"]

#: the input kinds a vocabulary may be fitted on (see :mod:`._units`)
INPUT_KINDS = ("chars", "tokens")


class FittedVocabulary:
    """Feature keys in column order, with what each feature read.

    Parameters
    ----------
    templates : TemplateSet
    input_kind : {"chars", "tokens"}
    n_columns : int
        Columns per token (1 for characters).
    keys : ndarray of uint64, shape (n_features,)
        Feature keys, column order.
    counts : ndarray of int64, shape (n_features,)
        Occurrences of each feature in the training data.
    slots : ndarray of int32, shape (n_features,)
        The template slot of each feature.
    codes : ndarray of int32, shape (n_features, n_parts)
        What each feature read, as codes into ``strings`` (see
        :meth:`TemplateSet.unit_codes`).
    strings : list of str
    first : ndarray of int64, shape (n_features,), default=None
        Flat position ``token * n_slots + slot`` of each feature's first
        occurrence in the corpus (kept while partial vocabularies are merged;
        None in a vocabulary read from a model file).
    """

    def __init__(self, templates, input_kind, n_columns, keys, counts, slots, codes,
                 strings, first=None):
        self.templates = templates
        self.input_kind = input_kind
        self.n_columns = int(n_columns)
        self.keys = np.ascontiguousarray(keys, dtype=np.uint64)
        self.counts = np.asarray(counts, dtype=np.int64)
        self.slots = np.asarray(slots, dtype=np.int32)
        self.codes = np.asarray(codes, dtype=np.int32)
        self.strings = list(strings)
        self.first = first
        self._table = None

    @property
    def n_features(self):
        return int(self.keys.size)

    # ------------------------------------------------------------------ fit
    @classmethod
    def fit(cls, templates, units, min_freq=1):
        """The vocabulary of ``units`` under ``templates``, and the CSR rows
        of ``units`` in its columns: ``(vocabulary, indptr, indices)``.

        Columns are numbered in order of first occurrence; features seen
        fewer than ``min_freq`` times are dropped.
        """
        index = templates.index(units, fitting=True)
        if min_freq > 1:
            index = index.keep(index.counts >= min_freq)
        rows, slots = np.divmod(index.first, templates.n_slots)
        codes, strings = templates.unit_codes(units, rows, slots, keys=index.keys)
        vocab = cls(templates, units.kind, units.n_columns, index.keys, index.counts,
                    slots, codes, strings, first=index.first)
        return vocab, index.indptr, index.indices

    # ------------------------------------------------------------ transform
    def lookup_table(self):
        """The compiled hash table key -> column, built on first use (not
        pickled: rebuilding it is faster than storing it)."""
        if self._table is None:
            self._table = _kernels().vocabulary_table(self.keys)
        return self._table

    def transform(self, units):
        """CSR rows ``(indptr, indices)`` of ``units`` in this vocabulary's
        columns (features it does not have are ignored)."""
        return _kernels().keys_to_csr(self.templates.keys(units), self.lookup_table())

    def transform_numpy(self, units):
        """:meth:`transform` with NumPy alone (every template must have a
        NumPy version: ``self.templates.has_numpy``)."""
        from ._numpy_keys import SortedVocabulary

        if getattr(self, "_sorted", None) is None:
            self._sorted = SortedVocabulary(self.keys)
        return self._sorted.csr(self.templates.keys_numpy(units))

    def feature_names(self):
        """Readable name of every column (a Python loop per feature: on demand)."""
        return self.templates.names(self.slots, self.codes, self.strings)

    # --------------------------------------------------------- merge / keep
    def merge(self, other):
        """The vocabulary of this text followed by ``other``'s: counts summed,
        each feature's first occurrence (and what it read) from the text that
        saw it first, columns in order of first occurrence. Both must carry
        ``first`` positions in the same corpus (see :meth:`shifted`)."""
        if self.first is None or other.first is None:
            raise ValueError("merging needs the features' first positions.")
        if ([t.description() for t in self.templates.templates]
                != [t.description() for t in other.templates.templates]):
            raise ValueError("cannot merge vocabularies of different templates.")
        if (self.input_kind, self.n_columns) != (other.input_kind, other.n_columns):
            raise ValueError(
                f"cannot merge vocabularies of {self.input_kind} input with "
                f"{self.n_columns} column(s) and {other.input_kind} input with "
                f"{other.n_columns}.")
        keys = np.concatenate([self.keys, other.keys])
        first = np.concatenate([self.first, other.first])
        counts = np.concatenate([self.counts, other.counts])
        order = np.lexsort((first, keys))
        new = np.concatenate([[True], keys[order][1:] != keys[order][:-1]])
        total = np.bincount(np.cumsum(new) - 1, weights=counts[order]).astype(np.int64)
        winner = order[new]                       # the earliest occurrence of each key
        by_first = np.argsort(first[winner], kind="stable")
        winner, total = winner[by_first], total[by_first]
        offset = len(self.strings)
        other_codes = np.where(other.codes >= 0, other.codes + offset, other.codes)
        codes = np.concatenate([self.codes, other_codes])[winner]
        slots = np.concatenate([self.slots, other.slots])[winner]
        strings, codes = _compact_strings(self.strings + other.strings, codes)
        return FittedVocabulary(self.templates, self.input_kind, self.n_columns, keys[winner],
                                total, slots, codes, strings, first=first[winner])

    def shifted(self, n_tokens):
        """This vocabulary with its first positions moved ``n_tokens`` tokens on
        (a partition's positions made positions in the whole corpus)."""
        out = FittedVocabulary(self.templates, self.input_kind, self.n_columns, self.keys,
                               self.counts, self.slots, self.codes, self.strings,
                               first=self.first + n_tokens * self.templates.n_slots)
        return out

    def keep(self, mask):
        """Only the features where ``mask`` holds (column order kept)."""
        mask = np.asarray(mask, dtype=bool)
        strings, codes = _compact_strings(self.strings, self.codes[mask])
        return FittedVocabulary(self.templates, self.input_kind, self.n_columns,
                                self.keys[mask], self.counts[mask], self.slots[mask], codes,
                                strings, first=None if self.first is None else self.first[mask])

    # ---------------------------------------------------------- model files
    def to_state(self):
        """``(meta, arrays)``: plain JSON and arrays (model files; no pickle).

        ``meta``: ``input_kind``, ``n_columns``, ``n_features``, ``templates``
        (each template's state) and ``strings``; ``arrays``: ``vocab_keys``,
        ``feature_slots``, ``feature_codes``, ``feature_counts`` and
        ``template<i>.<name>`` for templates that carry tables.
        """
        templates, arrays = [], {}
        for i, t in enumerate(self.templates.templates):
            state, tarrays = t.to_state()
            templates.append(state)
            for name, arr in tarrays.items():
                arrays[f"template{i}.{name}"] = arr
        meta = {"input_kind": self.input_kind, "n_columns": self.n_columns,
                "n_features": self.n_features, "templates": templates,
                "strings": list(self.strings)}
        arrays.update(vocab_keys=self.keys, feature_slots=self.slots,
                      feature_codes=self.codes, feature_counts=self.counts)
        return meta, arrays

    @classmethod
    def from_state(cls, meta, arrays):
        """The vocabulary :meth:`to_state` described; ``ValueError`` naming
        the first entry that is malformed or inconsistent."""
        for key in ("input_kind", "n_columns", "n_features", "templates", "strings"):
            if key not in meta:
                raise ValueError(f"{key} is missing.")
        kind = meta["input_kind"]
        if kind not in INPUT_KINDS:
            raise ValueError(f"input_kind {kind!r} is not one of {INPUT_KINDS}.")
        n_columns, n_features = meta["n_columns"], meta["n_features"]
        for name, v in (("n_columns", n_columns), ("n_features", n_features)):
            if type(v) is not int or v < 0:
                raise ValueError(f"{name} must be a non-negative int, got {v!r}.")
        if n_columns < 1 or (kind == "chars" and n_columns != 1):
            raise ValueError(f"n_columns {n_columns} is impossible for {kind} input.")
        strings = meta["strings"]
        if not isinstance(strings, list) or not all(isinstance(s, str) for s in strings):
            raise ValueError("strings must be a list of str.")
        states = meta["templates"]
        if not isinstance(states, list):
            raise ValueError("templates must be a list.")
        templates = []
        for i, state in enumerate(states):
            prefix = f"template{i}."
            own = {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}
            try:
                templates.append(template_from_state(state, own))
            except KeyError as exc:
                raise ValueError(f"template{i}: {exc.args[0]} is missing.") from None
            except (TypeError, ValueError, IndexError) as exc:
                raise ValueError(f"template{i}: {exc}") from None
        tset = TemplateSet(templates)
        for t in templates:
            for src, _ in t.parts:
                if src[0] == "col" and src[1] >= n_columns:
                    raise ValueError(f"a template reads column {src[1]} of {n_columns}.")
        for name in ("vocab_keys", "feature_slots", "feature_codes", "feature_counts"):
            if name not in arrays:
                raise ValueError(f"{name} is missing.")
        keys = arrays["vocab_keys"]
        if isinstance(keys, np.ndarray) and keys.ndim == 1 and keys.size != n_features:
            raise ValueError(f"n_features is {n_features} but vocab_keys holds "
                             f"{keys.size} keys.")
        slots, codes, counts = (arrays["feature_slots"], arrays["feature_codes"],
                                arrays["feature_counts"])
        _check_array("vocab_keys", keys, np.uint64, (n_features,))
        _check_array("feature_slots", slots, np.int32, (n_features,))
        _check_array("feature_codes", codes, np.int32, (n_features, tset.n_parts))
        _check_array("feature_counts", counts, np.int64, (n_features,))
        if n_features and (slots.min() < 0 or slots.max() >= tset.n_slots):
            raise ValueError(f"feature_slots outside [0, {tset.n_slots}).")
        if codes.size and codes.max() >= len(strings):
            raise ValueError(f"feature_codes point past the {len(strings)} strings.")
        if codes.size and ((codes < -2 * MAX_OFFSET) & (codes != _NO_VALUE)).any():
            raise ValueError("feature_codes holds a code that is neither a string nor "
                             "padding.")
        if n_features and counts.min() < 0:
            raise ValueError("feature_counts has negative counts.")
        if n_features and (keys == 0).any():
            raise ValueError("vocab_keys holds the key 0 (no feature).")
        if np.unique(keys).size != keys.size:
            raise ValueError("vocab_keys holds a key twice.")
        return cls(tset, kind, n_columns, keys, counts, slots, codes, strings)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_table"] = None
        state.pop("_sorted", None)
        return state


def _check_array(name, a, dtype, shape):
    if not isinstance(a, np.ndarray) or a.dtype != dtype or a.shape != shape:
        got = (f"{a.dtype} {a.shape}" if isinstance(a, np.ndarray)
               else type(a).__name__)
        raise ValueError(f"{name} must be {np.dtype(dtype)} of shape {shape}, got {got}.")


def _compact_strings(strings, codes):
    """Only the strings that ``codes`` use, renumbered in order of first use."""
    used = codes[codes >= 0]
    if used.size == 0:
        return [], codes.copy()
    uniq, first = np.unique(used, return_index=True)
    uniq = uniq[np.argsort(first, kind="stable")]
    remap = np.full(len(strings), -1, dtype=np.int64)
    remap[uniq] = np.arange(uniq.size)
    out = codes.copy()
    pos = codes >= 0
    out[pos] = remap[codes[pos]]
    return [strings[i] for i in uniq.tolist()], out.astype(np.int32)
