"""The flat arrays the kernels take, and two helpers over sequence offsets.

NumPy only (no SciPy, no scikit-learn): the command line's prediction path
imports this, not :mod:`skcrf._sequences`.
"""

from typing import NamedTuple

import numpy as np

__all__ = ["KernelArrays", "boundary_masks", "sequence_of"]


class KernelArrays(NamedTuple):
    """A :class:`Sequences` as the flat arrays every kernel takes.

    ``indptr`` (int64, n_tokens + 1), ``indices`` (int32) and ``data``
    (float64) are the CSR rows of the tokens; sequence ``s`` owns rows
    ``offsets[s]:offsets[s + 1]`` (``offsets`` int64, n_sequences + 1).
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


def sequence_of(offsets, positions):
    """Index of the sequence that holds each token position (vectorised)."""
    return np.searchsorted(offsets, positions, side="right") - 1
