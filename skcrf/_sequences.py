"""Sequences: many feature sequences stored as one CSR matrix plus offsets."""

import numbers

import numpy as np
import scipy.sparse as sp

from ._arrays import ONE, KernelArrays, all_ones, boundary_masks, sequence_of

__all__ = ["Sequences", "KernelArrays", "boundary_masks", "sequence_of"]


class Sequences:
    """A list of featurised sequences backed by one sparse matrix.

    All tokens of all sequences are the rows of one CSR matrix of shape
    ``(n_tokens, n_features)``; sequence ``i`` owns rows
    ``offsets[i]:offsets[i + 1]``. This is the layout the CRF kernels work on,
    and it behaves like a list of sequences for everything else: ``len()``,
    iteration, indexing by int (one sequence, a CSR matrix of shape
    ``(length, n_features)``), by slice, integer array or boolean mask (a new
    ``Sequences``). scikit-learn's cross-validation splitters, ``clone``,
    ``joblib`` and ``pickle`` work on it.

    Parameters
    ----------
    X : sparse matrix or ndarray of shape (n_tokens, n_features)
        Token features, stacked over all sequences. Converted to CSR with
        float64 values.
    lengths : array-like of int, shape (n_sequences,)
        Length of each sequence; must sum to ``n_tokens``.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix of shape (n_tokens, n_features)
        For the binary features of a :class:`~skcrf.SequenceFeaturizer` (every
        value 1), built on first access: until then the sequences hold the
        column indices only (4 bytes per non-zero instead of 12), and that is
        what the kernels read.
    lengths : ndarray of shape (n_sequences,)
    offsets : ndarray of shape (n_sequences + 1,)
    shape : tuple ``(n_sequences,)``
        Present so that scikit-learn indexes a ``Sequences`` like an array
        (``X[indices, ...]``) rather than element by element.

    Examples
    --------
    >>> import numpy as np
    >>> from skcrf import Sequences
    >>> seqs = Sequences.from_list([np.eye(3), np.ones((2, 3))])
    >>> len(seqs), seqs.n_tokens, seqs.n_features
    (2, 5, 3)
    >>> seqs[1].toarray()
    array([[1., 1., 1.],
           [1., 1., 1.]])
    """

    def __init__(self, X, lengths):
        self._set(_as_float_csr(X, "X"), lengths)

    @classmethod
    def _from_unique_csr(cls, X, lengths):
        """Wrap a float64 CSR matrix known to hold no duplicate entries
        (rows need not be sorted) without re-checking it."""
        obj = cls.__new__(cls)
        obj._set(X, lengths)
        return obj

    @classmethod
    def _from_binary_csr(cls, indptr, indices, n_features, lengths):
        """Binary features (every value 1) as CSR rows without their values
        (column indices unique within a row, not necessarily sorted)."""
        obj = cls.__new__(cls)
        indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        indices = np.ascontiguousarray(indices, dtype=np.int32)
        obj._X = None
        obj._binary = (indptr, indices, int(n_features))
        obj._set_lengths(lengths, indptr.size - 1)
        return obj

    @property
    def X(self):
        if self._X is None:
            indptr, indices, n_features = self._binary
            self._X = sp.csr_matrix((np.ones(indices.size), indices, indptr),
                                    shape=(indptr.size - 1, n_features))
        return self._X

    @property
    def binary(self):
        """True when every feature value is 1 and only the indices are stored."""
        return self._binary is not None

    @property
    def nnz(self):
        """Number of non-zero feature values."""
        return self._binary[1].size if self._binary is not None else self._X.nnz

    def _set(self, X, lengths):
        self._X = X
        self._binary = None
        self._set_lengths(lengths, X.shape[0])

    def _set_lengths(self, lengths, n_tokens):
        lengths = np.asarray(lengths)
        if lengths.ndim != 1:
            raise ValueError(f"lengths must be 1-D, got shape {lengths.shape}.")
        if lengths.size and not np.issubdtype(lengths.dtype, np.integer):
            if not np.all(np.equal(np.mod(lengths, 1), 0)):
                raise ValueError("lengths must be integers.")
        lengths = lengths.astype(np.int64)
        if lengths.size and lengths.min() < 0:
            i = int(np.argmax(lengths < 0))
            raise ValueError(f"lengths[{i}] = {lengths[i]} is negative.")
        if int(lengths.sum()) != n_tokens:
            raise ValueError(
                f"lengths sum to {int(lengths.sum())} but X has {n_tokens} rows."
            )
        self.lengths = lengths
        self.offsets = np.zeros(lengths.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=self.offsets[1:])

    # ------------------------------------------------------------------ build
    @classmethod
    def from_list(cls, sequences, n_features=None):
        """Stack per-sequence 2-D arrays or sparse matrices.

        Parameters
        ----------
        sequences : list of array-like or sparse matrix, each (length, n_features)
            One matrix per sequence; all must have the same number of columns.
            A sequence of length 0 is a ``(0, n_features)`` matrix.
        n_features : int, default=None
            Required only when ``sequences`` is empty.

        Returns
        -------
        Sequences
        """
        if isinstance(sequences, Sequences):
            return sequences
        if isinstance(sequences, (str, bytes)) or not hasattr(sequences, "__len__"):
            raise TypeError(
                "Expected a list of per-sequence 2-D arrays or sparse matrices, "
                f"got {type(sequences).__name__}."
            )
        blocks = []
        for i, seq in enumerate(sequences):
            if sp.issparse(seq):
                block = seq
            else:
                try:
                    block = np.asarray(seq, dtype=np.float64)
                except (TypeError, ValueError) as exc:
                    raise TypeError(
                        f"Sequence {i}: cannot convert to a float array ({exc})."
                    ) from None
            if block.ndim != 2:
                raise ValueError(
                    f"Sequence {i}: expected a 2-D (length, n_features) matrix, "
                    f"got {block.ndim}-D with shape {block.shape}."
                )
            if n_features is None:
                n_features = block.shape[1]
            elif block.shape[1] != n_features:
                raise ValueError(
                    f"Sequence {i} has {block.shape[1]} features, expected "
                    f"{n_features} like the sequences before it."
                )
            blocks.append(block)
        if n_features is None:
            raise ValueError("Cannot infer n_features from an empty list of sequences.")
        lengths = np.array([b.shape[0] for b in blocks], dtype=np.int64)
        if blocks:
            X = sp.vstack([sp.csr_matrix(b, dtype=np.float64) for b in blocks], format="csr")
        else:
            X = sp.csr_matrix((0, n_features), dtype=np.float64)
        return cls(X, lengths)

    @classmethod
    def concatenate(cls, parts):
        """Concatenate several ``Sequences`` with the same number of features."""
        parts = list(parts)
        if not parts:
            raise ValueError("Need at least one Sequences to concatenate.")
        n_features = parts[0].n_features
        for i, p in enumerate(parts):
            if not isinstance(p, Sequences):
                raise TypeError(f"parts[{i}] is a {type(p).__name__}, not Sequences.")
            if p.n_features != n_features:
                raise ValueError(
                    f"parts[{i}] has {p.n_features} features, expected {n_features}."
                )
        lengths = np.concatenate([p.lengths for p in parts])
        if all(p.binary for p in parts):
            ptrs = [parts[0]._binary[0]]
            for p in parts[1:]:
                ptrs.append(p._binary[0][1:] + ptrs[-1][-1])
            return cls._from_binary_csr(np.concatenate(ptrs),
                                        np.concatenate([p._binary[1] for p in parts]),
                                        n_features, lengths)
        X = sp.vstack([p.X for p in parts], format="csr")
        return cls(X, lengths)

    def __add__(self, other):
        if not isinstance(other, Sequences):
            return NotImplemented
        return Sequences.concatenate([self, other])

    def kernel_arrays(self):
        """The flat arrays the kernels take (no copy when the dtypes match)."""
        if self._binary is not None:
            indptr, indices, _ = self._binary
            return KernelArrays(indptr, indices, ONE, self.offsets)
        X = self.X
        # values that are all 1 are binary features: the kernels then read
        # no values (no multiply, no stream of values to read)
        data = ONE if X.data.size and all_ones(X.data) else \
            np.ascontiguousarray(X.data, dtype=np.float64)
        return KernelArrays(np.ascontiguousarray(X.indptr, dtype=np.int64),
                            np.ascontiguousarray(X.indices, dtype=np.int32),
                            data, self.offsets)

    # ----------------------------------------------------------- properties
    @property
    def n_features(self):
        return self._binary[2] if self._binary is not None else self._X.shape[1]

    @property
    def n_tokens(self):
        return int(self.offsets[-1])

    @property
    def shape(self):
        return (self.lengths.size,)

    def __len__(self):
        return self.lengths.size

    def __iter__(self):
        for i in range(len(self)):
            yield self._rows(self.offsets[i], self.offsets[i + 1])

    def _rows(self, a, b):
        """Token rows a..b-1 as a CSR matrix (for binary features, without
        building the whole ``X``)."""
        if self._binary is None or self._X is not None:
            return self.X[a:b]
        indptr, indices, n_features = self._binary
        p0, p1 = indptr[a], indptr[b]
        return sp.csr_matrix((np.ones(p1 - p0), indices[p0:p1].copy(), indptr[a:b + 1] - p0),
                             shape=(b - a, n_features))

    def __repr__(self):
        return (
            f"Sequences(n_sequences={len(self)}, n_tokens={self.n_tokens}, "
            f"n_features={self.n_features}, nnz={self.nnz})"
        )

    def __eq__(self, other):
        if not isinstance(other, Sequences):
            return NotImplemented
        return (
            np.array_equal(self.lengths, other.lengths)
            and self.X.shape == other.X.shape
            and (self.X != other.X).nnz == 0
        )

    __hash__ = None

    # ------------------------------------------------------------- indexing
    def __getitem__(self, key):
        if isinstance(key, tuple):
            # scikit-learn indexes array-likes as X[key, ...]
            rest = key[1:]
            if len(key) == 0 or any(k is not Ellipsis for k in rest):
                raise IndexError("Sequences supports only indexing by sequence.")
            key = key[0]
        n = len(self)
        if isinstance(key, numbers.Integral) and not isinstance(key, (bool, np.bool_)):
            i = int(key)
            if i < -n or i >= n:
                raise IndexError(f"sequence index {i} out of range for {n} sequences.")
            i %= n
            return self._rows(self.offsets[i], self.offsets[i + 1])
        if isinstance(key, slice):
            idx = np.arange(n)[key]
        else:
            idx = np.asarray(key)
            if idx.dtype == bool:
                if idx.shape != (n,):
                    raise IndexError(
                        f"boolean index of shape {idx.shape} does not match "
                        f"{n} sequences."
                    )
                idx = np.flatnonzero(idx)
            elif idx.size == 0:
                idx = idx.astype(np.int64)
            elif not np.issubdtype(idx.dtype, np.integer):
                raise IndexError(
                    f"Sequences can be indexed by int, slice, integer or boolean "
                    f"arrays, got {idx.dtype}."
                )
            if idx.ndim != 1:
                raise IndexError("index arrays must be 1-D.")
            if idx.size and (idx.min() < -n or idx.max() >= n):
                raise IndexError(f"sequence index out of range for {n} sequences.")
            idx = idx % n if n else idx
        return self._take(idx)

    def _take(self, idx):
        idx = np.asarray(idx, dtype=np.int64)
        lengths = self.lengths[idx]
        if idx.size and np.all(np.diff(idx) == 1):
            rows = slice(self.offsets[idx[0]], self.offsets[idx[-1] + 1])
        else:
            starts = self.offsets[idx]
            # token rows of the chosen sequences, in order, without a Python loop
            total = int(lengths.sum())
            seq_of_row = np.repeat(np.arange(idx.size), lengths)
            within = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
            rows = starts[seq_of_row] + within
        if self._binary is None:
            return Sequences(self.X[rows], lengths)
        indptr, indices, n_features = self._binary
        if isinstance(rows, slice):
            a, b = rows.start, rows.stop
            return Sequences._from_binary_csr(indptr[a:b + 1] - indptr[a],
                                              indices[indptr[a]:indptr[b]].copy(),
                                              n_features, lengths)
        counts = indptr[rows + 1] - indptr[rows]
        new_ptr = np.zeros(rows.size + 1, dtype=np.int64)
        np.cumsum(counts, out=new_ptr[1:])
        src = np.repeat(indptr[rows] - new_ptr[:-1], counts) + np.arange(new_ptr[-1])
        return Sequences._from_binary_csr(new_ptr, indices[src], n_features, lengths)

    # -------------------------------------------------------------- pickling
    def __getstate__(self):
        if self._binary is not None:
            indptr, indices, n_features = self._binary
            return {"indptr": indptr, "indices": indices, "n_features": n_features,
                    "lengths": self.lengths}
        return {"X": self.X, "lengths": self.lengths}

    def __setstate__(self, state):
        if "X" in state:
            self._set(state["X"], state["lengths"])
        else:
            self._X = None
            self._binary = (state["indptr"], state["indices"], int(state["n_features"]))
            self._set_lengths(state["lengths"], state["indptr"].size - 1)


def _as_float_csr(X, name):
    """Return X as a canonical float64 CSR matrix (sorted, no duplicates)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64, copy=False)
    else:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"{name} must be 2-D, got shape {X.shape}.")
        X = sp.csr_matrix(X)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    if X.nnz and not X.data.all():
        # explicit zeros carry no information; dropping them saves kernel work
        X = X.copy()
        X.eliminate_zeros()
    return X
