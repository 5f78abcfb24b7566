"""Which weights are parameters: the layout of the optimiser's vector.

A fit first counts, in one pass over the training data, which (feature,
label) pairs, label transitions and first / last labels occur
(:func:`count_pairs`). The counts of several shards of the data add up
(``counts_1 + counts_2``), so a distributed fit counts each shard where it
lives and sums. :func:`build_layout` turns the summed counts into a
:class:`ParameterLayout`, and :meth:`ParameterLayout.empirical` gives the
empirical feature counts of a shard in the layout's order.
"""

import numpy as np

from .._arrays import aligned_zeros, boundary_masks
from .._kernels.pair_counts import _mask_keys, _mask_row_sizes, _pair_counts, _seen_label_masks
from .._kernels.vector import _scatter_chunk

__all__ = ["PairCounts", "count_pairs", "ParameterLayout", "build_layout"]


class PairCounts:
    """Weighted occurrence counts of a training set (or one shard of it).

    Attributes
    ----------
    n_features, n_labels : int
    state_keys : ndarray of int64, sorted
        ``feature * n_labels + label`` of every (feature, label) pair that
        occurs in a sequence of positive weight.
    state_counts : ndarray of float64
        ``sum_i w_i sum_t x_tf [y_t = label]`` for each key: the empirical
        count of that state feature.
    trans_counts : ndarray of shape (n_labels, n_labels)
        Weighted counts of label pairs ``(y_{t-1}, y_t)``.
    start_counts, end_counts : ndarray of shape (n_labels,)
        Weighted counts of first / last labels.
    trans_seen : ndarray of bool, shape (n_labels, n_labels)
        Label pairs that occur in a sequence of positive weight.
    """

    def __init__(self, n_features, n_labels, state_keys, state_counts, trans_counts,
                 start_counts, end_counts, trans_seen):
        self.n_features = int(n_features)
        self.n_labels = int(n_labels)
        self.state_keys = state_keys
        self.state_counts = state_counts
        self.trans_counts = trans_counts
        self.start_counts = start_counts
        self.end_counts = end_counts
        self.trans_seen = trans_seen

    def __add__(self, other):
        if (self.n_features, self.n_labels) != (other.n_features, other.n_labels):
            raise ValueError("Cannot add the counts of data with different features "
                             "or labels.")
        keys, inv = np.unique(np.concatenate([self.state_keys, other.state_keys]),
                              return_inverse=True)
        counts = np.bincount(inv.reshape(-1), minlength=keys.size,
                             weights=np.concatenate([self.state_counts,
                                                     other.state_counts]))
        return PairCounts(self.n_features, self.n_labels, keys, counts,
                          self.trans_counts + other.trans_counts,
                          self.start_counts + other.start_counts,
                          self.end_counts + other.end_counts,
                          self.trans_seen | other.trans_seen)


def count_pairs(arrays, y, sample_weight, n_labels, n_features):
    """Count what occurs in the training data (one pass, no dense matrix).

    Parameters
    ----------
    arrays : KernelArrays
    y : ndarray of int32, shape (n_tokens,)
        Label index of every token.
    sample_weight : ndarray of shape (n_sequences,)
    n_labels, n_features : int

    Returns
    -------
    PairCounts
    """
    L, F = int(n_labels), int(n_features)
    indptr, indices, data, offsets = arrays
    weights = np.ascontiguousarray(sample_weight, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int32)
    # one bit per (feature, label): F * ceil(L / 64) words
    masks = np.zeros((F, (L + 63) // 64), dtype=np.uint64)
    _seen_label_masks(indptr, indices, offsets, y, weights, masks)
    sizes = np.zeros(F, dtype=np.int64)
    _mask_row_sizes(masks, sizes)
    ptr = np.zeros(F + 1, dtype=np.int64)
    np.cumsum(sizes, out=ptr[1:])
    keys = np.empty(int(ptr[-1]), dtype=np.int64)
    _mask_keys(masks, ptr, L, keys)
    counts = np.zeros(keys.size)
    _pair_counts(indptr, indices, data, offsets, y, weights, masks, ptr, counts)

    token_w = np.repeat(weights, np.diff(offsets))
    first, last = boundary_masks(offsets)
    trans = np.zeros((L, L))
    seen = np.zeros((L, L), dtype=bool)
    start = np.zeros(L)
    end = np.zeros(L)
    if y.size:
        inner = ~first[1:]
        prev, nxt, w = y[:-1][inner], y[1:][inner], token_w[1:][inner]
        np.add.at(trans, (prev, nxt), w)
        seen[prev[w > 0], nxt[w > 0]] = True
        np.add.at(start, y[first], token_w[first])
        np.add.at(end, y[last], token_w[last])
    return PairCounts(F, L, keys, counts, trans, start, end, seen)


class ParameterLayout:
    """Where each entry of the optimiser's parameter vector lives.

    The vector is ``[state | transition | start | end]``:

    * ``state``: one weight per allowed (feature, label) pair, stored at
      ``state_pos`` (flat indices ``feature * n_labels + label``) of the dense
      feature-major matrix ``W`` of shape ``(n_features, n_labels)``;
    * ``transition``: one weight per (from, to) pair in ``trans_pos`` (flat
      indices ``from * n_labels + to``) of ``A``;
    * ``start`` / ``end``: one weight per label in ``start_pos`` / ``end_pos``.

    Every other weight is fixed: at 0, or at -inf where a constraint forbids
    the transition (``A_fixed``, ``start_fixed``, ``end_fixed``).
    """

    def __init__(self, n_features, n_labels, state_pos, trans_pos, start_end,
                 A_fixed=None, start_fixed=None, end_fixed=None):
        self.n_features = int(n_features)
        self.n_labels = int(n_labels)
        L = self.n_labels
        self.state_pos = np.ascontiguousarray(state_pos, dtype=np.int64)
        self.trans_pos = np.ascontiguousarray(trans_pos, dtype=np.int64)
        self.A_fixed = (np.zeros((L, L)) if A_fixed is None
                        else np.ascontiguousarray(A_fixed, dtype=np.float64))
        self.start_fixed = np.zeros(L) if start_fixed is None else np.asarray(start_fixed, float)
        self.end_fixed = np.zeros(L) if end_fixed is None else np.asarray(end_fixed, float)
        if start_end:
            self.start_pos = np.flatnonzero(np.isfinite(self.start_fixed))
            self.end_pos = np.flatnonzero(np.isfinite(self.end_fixed))
        else:
            self.start_pos = self.end_pos = np.zeros(0, dtype=np.int64)
        sizes = np.cumsum([0, self.state_pos.size, self.trans_pos.size,
                           self.start_pos.size, self.end_pos.size])
        self.n_params = int(sizes[-1])
        self.state, self.transition, self.start, self.end = (
            slice(int(sizes[i]), int(sizes[i + 1])) for i in range(4))

    def unpack(self, theta):
        """Dense ``(W, A, start, end)`` from a parameter vector; W is (n_features, n_labels)."""
        # (on a cache line, as the decoding kernels read its rows best)
        W = aligned_zeros((self.n_features, self.n_labels))
        # (the objective's scatter, on the whole vector: one compiled kernel for both)
        _scatter_chunk(0, np.array([0, self.state_pos.size], dtype=np.int64),
                       np.ascontiguousarray(theta[self.state]), self.state_pos, W.reshape(-1))
        A, start, end = self.unpack_transitions(theta)
        return W, A, start, end

    def unpack_transitions(self, theta):
        A = self.A_fixed.copy()
        A.reshape(-1)[self.trans_pos] = theta[self.transition]
        start = self.start_fixed.copy()
        start[self.start_pos] = theta[self.start]
        end = self.end_fixed.copy()
        end[self.end_pos] = theta[self.end]
        return A, start, end

    def pack(self, W, A, start, end):
        """Parameter vector from dense weights (entries without a parameter are dropped)."""
        theta = np.empty(self.n_params)
        theta[self.state] = W.reshape(-1)[self.state_pos]
        theta[self.transition] = A.reshape(-1)[self.trans_pos]
        theta[self.start] = np.asarray(start)[self.start_pos]
        theta[self.end] = np.asarray(end)[self.end_pos]
        return theta

    def empirical(self, counts):
        """The empirical feature counts of ``counts`` (a :class:`PairCounts`), in
        the order of the parameter vector."""
        out = np.zeros(self.n_params)
        # the state keys of a shard are a subset of the layout's state positions
        # (or of any pairs, with all_possible_states); others count 0
        where = np.searchsorted(self.state_pos, counts.state_keys)
        where = np.minimum(where, max(self.state_pos.size - 1, 0))
        hit = (self.state_pos[where] == counts.state_keys) if self.state_pos.size else \
            np.zeros(counts.state_keys.size, dtype=bool)
        out[self.state][where[hit]] = counts.state_counts[hit]
        out[self.transition] = counts.trans_counts.reshape(-1)[self.trans_pos]
        out[self.start] = counts.start_counts[self.start_pos]
        out[self.end] = counts.end_counts[self.end_pos]
        return out


def build_layout(counts, *, all_possible_states=False, all_possible_transitions=True,
                 start_end=True, masks=None, min_state_count=0.0):
    """The parameter layout of a fit from its (summed) :class:`PairCounts`.

    Parameters
    ----------
    counts : PairCounts
    all_possible_states : bool
        Every (feature, label) pair is a parameter; else only the pairs that
        occur in a sequence of positive weight.
    all_possible_transitions : bool
        Every label pair is a parameter; else only those that occur.
    start_end : bool
        Learn first / last label weights.
    masks : (allowed[from, to], allowed_start, allowed_end) or None
        Constraints: forbidden transitions are fixed at -inf.
    min_state_count : float, default=0
        Without ``all_possible_states``, keep only the (feature, label) pairs
        whose empirical count reaches it (CRFsuite's ``feature.minfreq``).
    """
    F, L = counts.n_features, counts.n_labels
    if all_possible_states:
        state_pos = np.arange(F * L, dtype=np.int64)
    elif min_state_count > 0:
        state_pos = counts.state_keys[counts.state_counts >= min_state_count]
    else:
        state_pos = counts.state_keys
    if all_possible_transitions:
        trans_pos = np.arange(L * L, dtype=np.int64)
    else:
        trans_pos = np.flatnonzero(counts.trans_seen.reshape(-1))
    if masks is None:
        return ParameterLayout(F, L, state_pos, trans_pos, start_end)
    trans_ok, start_ok, end_ok = masks
    trans_pos = trans_pos[trans_ok.reshape(-1)[trans_pos]]
    return ParameterLayout(F, L, state_pos, trans_pos, start_end,
                           A_fixed=np.where(trans_ok, 0.0, -np.inf),
                           start_fixed=np.where(start_ok, 0.0, -np.inf),
                           end_fixed=np.where(end_ok, 0.0, -np.inf))
