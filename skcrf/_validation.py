"""Input checks at the API boundary: every message names the offending sequence."""

import numbers

import numpy as np
import scipy.sparse as sp

from ._arrays import ONE, KernelArrays
from ._kernels.csr_check import BAD_INDEX, BAD_INDPTR, NOT_FINITE, check_csr
from ._sequences import Sequences, sequence_of


def check_sequences(X, n_features=None, what="X"):
    """Return ``X`` as a validated :class:`Sequences`.

    Accepts a ``Sequences`` or a list of per-sequence 2-D arrays / sparse
    matrices. Checks that values are finite and, when ``n_features`` is
    given, that the number of columns matches it.
    """
    seqs = _as_sequences(X, n_features, what)
    _checked_rows(seqs, what)
    return _checked_n_features(seqs, n_features, what)


def checked_kernel_arrays(X, n_features=None, what="X"):
    """``check_sequences(X, n_features, what).kernel_arrays()``, the check and
    the arrays from the same pass (:func:`skcrf._kernels.csr_check.check_csr`)."""
    seqs = _as_sequences(X, n_features, what)
    arrays = _checked_rows(seqs, what)
    _checked_n_features(seqs, n_features, what)
    return arrays


def _as_sequences(X, n_features, what):
    """``X`` as a :class:`Sequences` (not yet checked), or a clear error."""
    if isinstance(X, Sequences):
        seqs = X
    elif isinstance(X, (list, tuple)):
        if len(X) == 0:
            if n_features is None:
                raise ValueError(f"{what} is empty: need at least one sequence.")
            return Sequences.from_list([], n_features=n_features)
        for i, seq in enumerate(X):
            if isinstance(seq, (str, bytes)) or not (
                sp.issparse(seq) or hasattr(seq, "__len__")
            ):
                raise TypeError(
                    f"{what}[{i}] is a {type(seq).__name__}; LinearChainCRF expects "
                    "featurised sequences (2-D arrays / sparse matrices, or a "
                    "Sequences). Put a SequenceFeaturizer in front of it to "
                    "learn from raw text or tokens."
                )
        seqs = Sequences.from_list(X)
    elif sp.issparse(X) or isinstance(X, np.ndarray):
        raise TypeError(
            f"{what} is a single {'sparse matrix' if sp.issparse(X) else 'array'}; "
            "pass a list with one 2-D matrix per sequence, or "
            "Sequences(X, lengths)."
        )
    else:
        raise TypeError(
            f"{what} must be a Sequences or a list of per-sequence 2-D arrays, "
            f"got {type(X).__name__}."
        )
    return seqs


def _checked_rows(seqs, what):
    """Check the CSR rows of ``seqs`` (column indices in range, ``indptr``
    well formed, values finite) and return them as the kernels' arrays
    (what :meth:`Sequences.kernel_arrays` returns, built by the same pass)."""
    if seqs.binary:
        indptr, ind, data, _ = seqs.kernel_arrays()   # (stored as the kernels take them)
    else:
        indptr, ind, data = seqs.X.indptr, seqs.X.indices, seqs.X.data
        data = np.ascontiguousarray(data, dtype=np.float64)
        if data.size != ind.size:
            raise ValueError(f"{what}: malformed sparse matrix ({data.size} values for "
                             f"{ind.size} column indices).")
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    if indptr.size != seqs.n_tokens + 1:
        raise ValueError(f"{what}: malformed sparse rows (indptr of {indptr.size} "
                         f"entries for {seqs.n_tokens} rows).")
    # the kernels take int32 indices: other dtypes are copied by the check
    copy = ind.dtype != np.int32
    ind = np.ascontiguousarray(ind, dtype=np.int64 if copy else np.int32)
    out = np.empty(ind.size if copy else 0, dtype=np.int32)
    code, where, ones = check_csr(indptr, ind, data, seqs.n_features, out)
    if code == BAD_INDEX:
        raise ValueError(f"{what}: {_position(seqs, indptr, where)} has column index "
                         f"{ind[where]}, outside [0, {seqs.n_features}).")
    if code == BAD_INDPTR:
        raise ValueError(f"{what}: malformed sparse rows (indptr decreases, or does not "
                         f"start at 0 and end at the number of non-zeros: row {where}).")
    if code == NOT_FINITE:
        raise ValueError(f"{what}: {_position(seqs, indptr, where)} has a non-finite "
                         f"feature value ({data[where]}) in column {ind[where]}.")
    # values that are all 1 are binary features: the kernels then read none
    return KernelArrays(indptr, out if copy else ind, ONE if ones else data, seqs.offsets)


def _position(seqs, indptr, p):
    """'sequence s, position t': where non-zero ``p`` is."""
    row = int(np.searchsorted(indptr, p, side="right") - 1)
    seq = int(sequence_of(seqs.offsets, row))
    return f"sequence {seq}, position {row - seqs.offsets[seq]}"


def _checked_n_features(seqs, n_features, what):
    if n_features is not None and seqs.n_features != n_features:
        raise ValueError(
            f"{what} has {seqs.n_features} features, but the model was fitted "
            f"with {n_features} features."
        )
    return seqs


def check_labels(y, lengths, what="y"):
    """Flatten a list of label sequences; check it against sequence lengths.

    Returns
    -------
    flat : ndarray of shape (n_tokens,)
        All labels, concatenated (object-free dtype: str or int).
    """
    if isinstance(y, (str, bytes)) or not hasattr(y, "__len__"):
        raise TypeError(
            f"{what} must be a list of label sequences, got {type(y).__name__}."
        )
    for i, seq in enumerate(y):
        if isinstance(seq, (str, bytes, numbers.Number, np.generic)) or seq is None:
            raise TypeError(
                f"{what}[{i}] is a single label ({seq!r}); {what} must be a list "
                "of label sequences, one list per sequence."
            )
    if len(y) != len(lengths):
        raise ValueError(
            f"X has {len(lengths)} sequences but {what} has {len(y)} label sequences."
        )
    fast = _concatenate_label_arrays(y, lengths)
    if fast is not None:
        return fast
    flat = []
    kinds = set()
    for i, seq in enumerate(y):
        if isinstance(seq, (str, bytes, numbers.Number, np.generic)) or seq is None:
            raise TypeError(
                f"{what}[{i}] is a single label ({seq!r}); {what} must be a list "
                "of label sequences, one list per sequence."
            )
        seq = seq.tolist() if isinstance(seq, np.ndarray) else list(seq)
        if len(seq) != lengths[i]:
            raise ValueError(
                f"{what}[{i}] has {len(seq)} labels but sequence {i} has "
                f"{lengths[i]} tokens."
            )
        # type() of every label, in C; the Python scan runs only to report errors
        kinds.update(_label_kind(tp) for tp in set(map(type, seq)))
        if None in kinds or len(kinds) > 1:
            _raise_bad_label(y, what)
        flat.extend(seq)
    if kinds == {"str"}:
        return np.asarray(flat, dtype=str)
    return np.asarray(flat, dtype=np.int64)


def _concatenate_label_arrays(y, lengths):
    """Fast path for label sequences that are all 1-D integer (or all 1-D str)
    NumPy arrays of the right lengths: one concatenation, no Python objects.
    Returns None when ``y`` is anything else (the general path then checks it)."""
    if len(y) == 0:
        return None
    kinds = set()
    for seq in y:
        if not (isinstance(seq, np.ndarray) and seq.ndim == 1):
            return None
        kinds.add("int" if seq.dtype.kind in "iu" else
                  "str" if seq.dtype.kind == "U" else "other")
    if len(kinds) != 1 or "other" in kinds:
        return None
    if not np.array_equal([seq.size for seq in y], lengths):
        return None  # the general path reports which sequence is off
    flat = np.concatenate(y)
    if kinds == {"int"}:
        if flat.dtype.kind == "u" and flat.size and flat.max() > np.iinfo(np.int64).max:
            return None
        return flat.astype(np.int64, copy=False)
    return flat


def _raise_bad_label(y, what):
    first = None
    for i, seq in enumerate(y):
        for t, lab in enumerate(seq):
            k = _label_kind(type(lab))
            if k is None:
                raise TypeError(
                    f"{what}[{i}][{t}] = {lab!r} ({type(lab).__name__}): labels "
                    "must be str or int."
                )
            if first is None:
                first = k
            elif k != first:
                raise TypeError(
                    f"{what}[{i}][{t}] = {lab!r} is a {k} label but earlier labels "
                    f"are {first}s; use one type for all labels."
                )


def _label_kind(tp):
    if issubclass(tp, str):
        return "str"
    if issubclass(tp, (bool, np.bool_)):
        return None
    if issubclass(tp, (numbers.Integral, np.integer)):
        return "int"
    return None


def check_sample_weight(sample_weight, n_sequences):
    """One finite, non-negative weight per sequence (ones when None).

    Weights above :data:`MAX_SAMPLE_WEIGHT` are refused: the weighted
    likelihood would overflow (only the weights' scale relative to the
    penalty matters, so scale them down)."""
    if sample_weight is None:
        return np.ones(n_sequences)
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"sample_weight must hold numbers, one per sequence ({exc}).") from None
    if w.shape != (n_sequences,):
        raise ValueError(
            f"sample_weight must have one weight per sequence, shape "
            f"({n_sequences},), got {w.shape}."
        )
    if not np.isfinite(w).all() or (w < 0).any():
        i = int(np.flatnonzero(~np.isfinite(w) | (w < 0))[0])
        raise ValueError(
            f"sample_weight[{i}] = {w[i]}: weights must be finite and >= 0."
        )
    if (w > MAX_SAMPLE_WEIGHT).any():
        i = int(np.argmax(w))
        raise ValueError(
            f"sample_weight[{i}] = {w[i]:g} is too large: the weighted likelihood would "
            f"overflow; scale the weights down (they act relative to c1 / c2), below "
            f"{MAX_SAMPLE_WEIGHT:g}."
        )
    return w


#: larger sequence weights would overflow the objective (log Z of a long
#: sequence times the weight, summed over sequences)
MAX_SAMPLE_WEIGHT = 1e100
