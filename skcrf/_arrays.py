"""The flat arrays the kernels take, and two helpers over sequence offsets.

NumPy only (no SciPy, no scikit-learn): the command line's prediction path
imports this, not :mod:`skcrf._sequences`.
"""

import gc
from typing import NamedTuple

import numpy as np

__all__ = ["ONE", "all_ones", "aligned_zeros", "aligned_copy", "aligned_rows", "KernelArrays",
           "Weights", "boundary_masks", "sequence_of", "token_positions", "raise_if_no_path"]

#: the ``data`` of binary features: one value, 1.0, for every non-zero
#: (left writeable: Numba compiles read-only arrays as another type; nothing
#: writes it)
ONE = np.ones(1)


#: bytes of a cache line, and of the widest vector the kernels load (8 float64)
LINE_BYTES = 64


def aligned_zeros(shape, dtype=np.float64):
    """``np.zeros(shape, dtype)`` whose data start on a cache line (64 bytes).

    NumPy guarantees 16 bytes only, and where a large array starts within
    its first line depends on the allocator's history. The weight rows that
    the sparse passes read and add to are a few cache lines each: starting
    16 or 48 bytes into a line, a row of 16 float64 spans three lines
    instead of two and every vector of it straddles two, so how fast those
    passes ran would depend on the allocation (the cost is measured by
    ``benchmarks/dev/buffer_alignment.py``)."""
    dtype = np.dtype(dtype)
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    buf = np.zeros(nbytes + LINE_BYTES, dtype=np.uint8)
    start = -buf.ctypes.data % LINE_BYTES
    return buf[start:start + nbytes].view(dtype).reshape(shape)


def aligned_copy(a):
    """A C-contiguous copy of ``a`` starting on a cache line
    (:func:`aligned_zeros`): e.g. a loaded model's state weights, which
    the decoding kernels read row by row."""
    out = aligned_zeros(np.shape(a), np.asarray(a).dtype)
    out[...] = a
    return out


def aligned_rows(rows, width, itemsize=8):
    """``rows`` rounded up so that ``rows * width`` items of ``itemsize``
    bytes fill whole cache lines: a stack of such matrices (one per thread)
    has every matrix start on a line, as :func:`aligned_zeros` does the first."""
    per_line = LINE_BYTES // itemsize
    step = per_line // np.gcd(int(width), per_line)
    return int(-(-int(rows) // step) * step)


def all_ones(data, slice_size=2**20):
    """Whether every value of ``data`` is 1.0 (binary features), checked a
    slice at a time (no temporary the size of ``data``)."""
    return all(bool(np.all(data[lo:lo + slice_size] == 1.0))
               for lo in range(0, data.size, slice_size))


class KernelArrays(NamedTuple):
    """A :class:`Sequences` as the flat arrays every kernel takes.

    ``indptr`` (int64, n_tokens + 1), ``indices`` (int32) and ``data``
    (float64) are the CSR rows of the tokens; sequence ``s`` owns rows
    ``offsets[s]:offsets[s + 1]`` (``offsets`` int64, n_sequences + 1).
    Binary features (every value 1) have ``data`` = :data:`ONE`, one element,
    instead of a value per non-zero (see :mod:`skcrf._kernels`).
    """

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    offsets: np.ndarray

    @property
    def n_sequences(self):
        return self.offsets.size - 1

    @property
    def n_tokens(self):
        return self.indptr.size - 1


def boundary_masks(offsets):
    """Boolean masks ``(first, last)`` over tokens: the first / last token of
    each non-empty sequence."""
    n_tokens = int(offsets[-1])
    starts, ends = offsets[:-1], offsets[1:]
    nonempty = ends > starts
    first = np.zeros(n_tokens, dtype=bool)
    first[starts[nonempty]] = True
    last = np.zeros(n_tokens, dtype=bool)
    last[ends[nonempty] - 1] = True
    return first, last


def token_positions(offsets):
    """Sequence index, length and position within it of every token."""
    lengths = np.diff(offsets)
    seq = np.repeat(np.arange(lengths.size), lengths)
    pos = np.arange(int(offsets[-1]), dtype=np.int64) - offsets[:-1][seq]
    return seq, lengths[seq], pos


def sequence_of(offsets, positions):
    """Index of the sequence that holds each token position (vectorised)."""
    return np.searchsorted(offsets, positions, side="right") - 1


def split_at(flat, offsets):
    """Per-sequence pieces of a per-token list or array, cut at ``offsets``."""
    bounds = offsets.tolist()
    return [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def split_labels(classes, indices, offsets):
    """Per-sequence lists of labels: ``classes[indices]`` cut at ``offsets``
    (what ``predict`` returns).

    The lists are built with the cyclic garbage collector paused: building
    one new list per sequence would otherwise start collections that walk
    the young objects (the lists made so far) once every few hundred lists,
    a large part of the time this takes, for lists that hold only labels.
    """
    # an object array's take shares the label objects (no new str per token)
    flat = np.asarray(classes, dtype=object)[indices].tolist()
    enabled = gc.isenabled()
    gc.disable()
    try:
        return split_at(flat, offsets)
    finally:
        if enabled:
            gc.enable()


class Weights(NamedTuple):
    """The weights of a linear-chain CRF, as the kernels take them.

    ``W`` (n_features, n_labels), feature-major and C-contiguous; ``A``
    (n_labels, n_labels) indexed ``[from, to]``; ``start`` and ``end``
    (n_labels,). -inf forbids a transition (or a first / last label).
    """

    W: np.ndarray
    A: np.ndarray
    start: np.ndarray
    end: np.ndarray

    @classmethod
    def from_arrays(cls, W, A, start, end):
        as64 = lambda a: np.ascontiguousarray(a, dtype=np.float64)  # noqa: E731
        return cls(as64(W), as64(A), as64(start), as64(end))

    @property
    def n_labels(self):
        return self.A.shape[0]


def raise_if_no_path(invalid, offsets):
    """ValueError naming the first sequence flagged in ``invalid``: one whose
    every label path the transition constraints forbid."""
    if invalid.any():
        s = int(np.flatnonzero(invalid)[0])
        T = int(offsets[s + 1] - offsets[s])
        raise ValueError(
            f"X[{s}]: no label sequence of length {T} is allowed by the model's "
            "transition constraints, so it has no prediction or probability "
            f"({int(invalid.sum())} such sequence(s) in X)."
        )
