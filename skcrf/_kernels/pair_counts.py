"""Fit-time bookkeeping: which (feature, label) pairs occur in the training
data, and their weighted counts (the empirical counts of the objective).

One bit per (feature, label) pair, so the pass needs n_features *
ceil(n_labels / 64) words, not a dense matrix.
"""

import numpy as np
from numba import njit

from ._jit import _JIT
from .emissions import _value_mask


@njit(**_JIT)
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(**_JIT)
def _seen_label_masks(indptr, indices, offsets, y, weights, masks):
    """Bit ``y_t`` of ``masks[f]`` is set for every non-zero (t, f) of a
    sequence of positive weight: one bit per (feature, label) pair, so the
    pass needs n_features * ceil(n_labels / 64) words, not a dense matrix."""
    for s in range(offsets.size - 1):
        if not weights[s] > 0.0:
            continue
        for t in range(offsets[s], offsets[s + 1]):
            word = y[t] >> 6
            bit = np.uint64(1) << np.uint64(y[t] & 63)
            for p in range(indptr[t], indptr[t + 1]):
                masks[indices[p], word] |= bit


@njit(**_JIT)
def _mask_row_sizes(masks, sizes):
    for f in range(masks.shape[0]):
        n = 0
        for w in range(masks.shape[1]):
            n += _popcount(masks[f, w])
        sizes[f] = n


@njit(**_JIT)
def _mask_keys(masks, ptr, n_labels, keys):
    """The set bits as sorted flat keys ``feature * n_labels + label``."""
    for f in range(masks.shape[0]):
        k = ptr[f]
        for w in range(masks.shape[1]):
            m = masks[f, w]
            b = 0
            while m != np.uint64(0):
                if m & np.uint64(1):
                    keys[k] = f * n_labels + w * 64 + b
                    k += 1
                m >>= np.uint64(1)
                b += 1


@njit(**_JIT)
def _pair_counts(indptr, indices, data, offsets, y, weights, masks, ptr, counts):
    """counts[k] += w_s * x_tf for the pair (f, y_t) stored at position k =
    ptr[f] + (rank of y_t among the labels set in masks[f])."""
    dm = _value_mask(data, indices)
    for s in range(offsets.size - 1):
        w = weights[s]
        if not w > 0.0:
            continue
        for t in range(offsets[s], offsets[s + 1]):
            word = y[t] >> 6
            below = (np.uint64(1) << np.uint64(y[t] & 63)) - np.uint64(1)
            for p in range(indptr[t], indptr[t + 1]):
                f = indices[p]
                k = ptr[f]
                for v in range(word):
                    k += _popcount(masks[f, v])
                k += _popcount(masks[f, word] & below)
                counts[k] += w * data[p & dm]
