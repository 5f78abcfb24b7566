"""State weights as records: the training objective's layout for a large
model with few parameters per feature.

A dense (features x labels) matrix of state weights costs one row of L
labels per non-zero in the objective's sparse passes, however few of them
are parameters; with many labels (POS tags, BIOES entity types) most
features co-occur with a handful. Here each feature that occurs has a record
in one flat float64 array ``R``, most frequent feature first::

    [n, label_0, weight_0, ..., label_n-1, weight_n-1]   (its n parameters)
    [-(1 + o)]                                           (a dense row at R[o:])

so that a non-zero costs its feature's record, mostly one cache line. The
few frequent features with parameters for many labels (the bias, word
shapes, suffixes: :func:`skcrf._training.loss._hot_features`) keep a dense
row, at the start of ``R``, added as vectors. The kernels read a copy of
the column indices turned into record offsets
(:func:`skcrf._kernels.emissions._emissions_records`), and every thread's
gradient is a copy of ``R`` whose value slots accumulate
(:func:`skcrf._kernels.state_counts._add_state_counts_records`): the
parameter vector is scattered into ``R`` and the gradient gathered from the
copies by position (:attr:`Records.positions`), as for the dense matrix.
"""

import numpy as np

from .._arrays import aligned_rows, aligned_zeros

__all__ = ["Records"]

#: records up to this size are addressed by int32 offsets (4 bytes per
#: non-zero); larger ones, by int64
_INT32_OFFSETS = 2**31 - 1


class Records:
    """The records of one shard's state weights (see the module docstring).

    Parameters
    ----------
    state_pos : ndarray of int64
        The layout's state parameters, ``feature * n_labels + label``, sorted.
    n_labels : int
    freq : ndarray of int64, shape (n_features,)
        Non-zeros of each feature in this shard.
    indices : ndarray of int32
        The shard's column indices.
    hot : ndarray of int
        The features that get a dense row, in the order of their rows.
    width : int
        Columns of a dense row (n_labels padded to whole vectors).

    Attributes
    ----------
    R : ndarray of float64
        The records, dense rows first, the weights' slots 0; also the
        template of each thread's gradient.
    positions : ndarray of int64, shape (n_state,)
        Where each state parameter's weight lives in ``R``: a record's value
        slot or a dense row's cell; for a feature no token of this shard has
        (another shard's), a cell that no record points to.
    offsets : ndarray of int32 (int64 for a huge R)
        For each non-zero, the offset of its feature's record.
    n_hot : int
    """

    def __init__(self, state_pos, n_labels, freq, indices, hot, width):
        L, F = int(n_labels), freq.size
        f, lab = np.divmod(state_pos, L)
        n = np.bincount(f, minlength=F)
        hot_row = np.full(F, -1, dtype=np.int64)
        hot_row[hot] = np.arange(hot.size)
        self.n_hot = int(hot.size)
        # R: the dense rows, a sink (the weights of features without a
        # record are written there; no record points to it), one empty
        # record [0] shared by the features with no parameter, the records
        head = self.n_hot * int(width)
        sink, empty = head, head + 1
        has_record = (freq > 0) & (n > 0)
        size = np.where(hot_row >= 0, 1, 1 + 2 * n)
        order = np.flatnonzero(has_record)
        order = order[np.argsort(-freq[order], kind="stable")]
        off = np.full(F, empty, dtype=np.int64)
        ends = np.cumsum(size[order])
        off[order] = head + 2 + ends - size[order]
        total = head + 2 + (int(ends[-1]) if ends.size else 0)
        # on a cache line, its size whole lines (so every thread's gradient
        # copy starts on one too; the slots past the last record are unused)
        self.R = aligned_zeros(aligned_rows(total, 1))
        self.R[off[order]] = np.where(hot_row[order] >= 0,
                                      -(1.0 + hot_row[order] * width), n[order])
        # each parameter: its rank among its feature's (sorted by label)
        first = np.concatenate([[0], np.cumsum(n)[:-1]])
        k_in = np.arange(state_pos.size) - first[f]
        self.positions = np.full(state_pos.size, sink, dtype=np.int64)
        cold = has_record[f] & (hot_row[f] < 0)
        slot = off[f[cold]] + 1 + 2 * k_in[cold]
        self.R[slot] = lab[cold]
        self.positions[cold] = slot + 1
        warm = has_record[f] & (hot_row[f] >= 0)
        self.positions[warm] = hot_row[f[warm]] * width + lab[warm]
        del f, lab, k_in, cold, slot, warm
        dtype = np.int32 if total <= _INT32_OFFSETS else np.int64
        self.offsets = off.astype(dtype)[indices]

    @staticmethod
    def size_bound(n_rows, n_state, hot_bytes):
        """An upper bound on the bytes of ``R`` (a thread's gradient copy) for
        ``n_rows`` features that occur and ``n_state`` parameters."""
        return (n_rows + 2 + 2 * n_state) * 8 + hot_bytes
