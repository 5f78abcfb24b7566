r"""The training objective: a data term per shard of data, plus a penalty.

A fit minimises

.. math::

    f(\theta) = \sum_{k} \mathrm{loss}_k(\theta) + \mathrm{penalty}(\theta)

where each data term :class:`CRFLoss` is the weighted negative
log-likelihood of one shard of sequences (one shard locally; one per
partition on a cluster) and the penalty comes from :mod:`skcrf._training.penalty`.
:class:`Objective` is that sum, the function the optimiser calls.
"""

import ctypes
import sys

import numpy as np

from .._arrays import ONE, aligned_rows, aligned_zeros, all_ones
from .._kernels import compile_helper
from .._kernels.emissions import quad_rows
from .._kernels.inference import exp_transitions
from .._kernels.lanes import N_LANES, row_width
from .._kernels.objective import (
    _deferred_terms,
    _objective_chunk,
    _objective_owned,
    _objective_parallel,
)
from .._kernels.parallel import (
    chunk_bounds,
    element_bounds,
    numba_threads,
    order_by_length,
    run_chunks,
)
from .._kernels.state_counts import _row_splits, _sort_token_rows
from .._kernels.vector import _gradient_chunk, _gradient_parallel, _scatter_chunk, _scatter_parallel
from .layout import count_pairs
from .records import Records

__all__ = ["CRFLoss", "Objective"]


class CRFLoss:
    r"""Weighted negative log-likelihood of a set of sequences, and its gradient.

    .. math::

        \mathrm{loss}(\theta) = -\sum_i w_i \log p_\theta(y_i \mid x_i)
                 = \sum_i w_i \log Z_\theta(x_i) - \theta^\top \hat\phi

    where :math:`\hat\phi = \sum_i w_i \phi(x_i, y_i)` are the (weighted)
    empirical feature counts, computed once. The gradient is
    :math:`E_\theta[\phi] - \hat\phi`: expected minus empirical counts.

    The object owns its threads: every evaluation runs on ``n_threads``
    threads whatever Numba pool the caller has set.

    The kernels read the state weights from a dense (features used x
    labels) matrix or, for a large model whose parameters fill few of its
    cells (:func:`_use_compact`), from one record per feature
    (:mod:`skcrf._training.records`): memory then grows with the
    parameters, not with features x labels (``compact``).

    Parameters
    ----------
    arrays : KernelArrays
        The sequences (:meth:`Sequences.kernel_arrays`).
    y : ndarray of int32, shape (n_tokens,)
        Label index of every token.
    sample_weight : ndarray of shape (n_sequences,)
    layout : ParameterLayout
        Which weights are parameters (shared by every shard of a fit).
    counts : PairCounts, default=None
        This data's counts, if already computed (they give the empirical
        feature counts); computed here otherwise.
    n_threads : int, default=1
    """

    def __init__(self, arrays, y, sample_weight, layout, counts=None, n_threads=1):
        self.layout = layout
        F, L = layout.n_features, layout.n_labels
        indptr, indices, data, offsets = arrays
        if data.size > 1 and data.size == indices.size and all_ones(data):
            data = ONE   # binary features: the kernels skip the values
        self.weights = np.ascontiguousarray(sample_weight, dtype=np.float64)
        if counts is None:
            counts = count_pairs(arrays, y, self.weights, L, F)
        self.empirical = layout.empirical(counts)
        # the state weights as a dense matrix of the features that occur
        # (_dense_layout), or as records (_compact_layout) for a large model
        # with few parameters per feature
        self.n_threads = int(n_threads)
        self.bounds = chunk_bounds(offsets, indptr, L, self.n_threads)
        n_chunks = self.bounds.size - 1
        freq = feature_frequencies(indices, F)
        n_used = int(np.count_nonzero(freq))
        self._rows = n_used + 1
        self._width = row_width(L)
        self._owned = None
        self._released = False
        # the gradient buffers hold counts that their gather has not read (and
        # cleared) yet: an evaluation interrupted in between
        self._counts_pending = False
        self.compact = _use_compact(self._rows, self._width, L, layout.state_pos.size,
                                    n_chunks)
        if self.compact:
            self._compact_layout(layout, L, freq, indptr, indices, data, offsets)
            ranges = self.bounds
        else:
            self._dense_layout(layout, F, L, freq, indptr, indices, data, offsets,
                               n_chunks)
            ranges = self.bounds if self._owned is None else np.unique(self._owned.phase)
        del freq
        # either layout: the flat position of each state parameter in _W and
        # in each _gW[c] (self._pos); the parameter vector's state part, cut
        # for the threads that scatter it into _W and gather its gradient from
        # _gW, and each range's (theta . empirical, theta . theta) from that pass
        self._state_bounds = element_bounds(self._pos.size, self.n_threads)
        self._sums = np.zeros((self._state_bounds.size - 1, 2))
        # the order in which each chunk (or each thread's share of a block)
        # visits its sequences: by length within windows, so that sequences of
        # similar length run side by side in SIMD lanes (_lane_posteriors)
        self.order = order_by_length(offsets, ranges)
        # buffers reused by every evaluation: the state weights every thread
        # reads and their gradient
        self._W = self._gW = None
        self._buffers()
        self._gA = np.zeros((n_chunks, L, L))
        self._gS = np.zeros((n_chunks, L))
        self._gE = np.zeros((n_chunks, L))
        self.log_z = np.zeros(offsets.size - 1)
        # the sequences whose lane batch would underflow (set by the chunks)
        self._deferred = np.zeros(offsets.size - 1, dtype=np.bool_)
        self.n_evals = 0
        # the counting and sorting above freed more than the evaluations will
        # hold: give it back before the optimiser's history is allocated
        trim_heap()

    def _dense_layout(self, layout, F, L, freq, indptr, indices, data, offsets, n_chunks):
        """Kernel-side feature rows of the dense state weights: most frequent
        first, so the rows that nearly every token touches share a few cache
        lines and pages; and only the features that occur in these sequences
        get a row. The others (columns a hashing or pre-fitted vectorizer left
        empty, or another shard's features) all share one extra row that no
        token reads: their weights are written there and their expected counts
        read back as 0. Memory is then proportional to the features used, not
        to n_features. (On several threads with private gradients, when few
        features are unused, the features keep their numbers instead: see
        :func:`_keeps_indices`.)"""
        n_used = self._rows - 1
        # On several threads, each thread accumulates the state counts of its
        # sequences into a gradient buffer of its own (fastest) as long as these
        # extra buffers stay within _PRIVATE_GRADIENT_BYTES; beyond, one state
        # gradient is shared: each thread owns a range of feature rows and adds
        # the state counts of every token to them (_OwnedRows), so memory no
        # longer grows with the threads.
        extra = (n_chunks - 1) * self._rows * self._width * 8
        shared = n_chunks > 1 and extra > _PRIVATE_GRADIENT_BYTES
        # private buffers on several threads: the features may keep their own
        # numbers, and the kernels the caller's indices (no renumbered copy:
        # 4 bytes per non-zero, often more than a second gradient buffer adds)
        keep = (n_chunks > 1 and not shared
                and _keeps_indices(F, n_used, self._width, n_chunks, indices.size))
        row_bounds = None
        if keep:
            self._rows = F + 1
            rank = np.arange(F)
        else:
            rank = np.empty(F, dtype=np.int64)
            rank[np.argsort(-freq, kind="stable")] = np.arange(F)
            np.minimum(rank, n_used, out=rank)
            if shared:
                rank, row_bounds = _OwnedRows.deal_rows(rank, self._rows, n_chunks)
        # rows of the kernel-side weights and gradient padded to a multiple of
        # 4 columns (up to 16 labels), which the sparse passes read as quads
        f, lab = np.divmod(layout.state_pos, L)
        self._pos = rank[f] * self._width + lab   # flat index of (f, lab) in _W, _gW[c]
        # (an int32 table, so the copy of the indices is made in int32 directly,
        # without an int64 temporary of 8 bytes per non-zero)
        local_indices = indices if keep else rank.astype(np.int32)[indices]
        if row_bounds is not None:
            self._owned = _OwnedRows(indptr, local_indices, data, offsets, row_bounds, L)
            data = self._owned.data
        self.arrays = (indptr, local_indices, data, offsets)

    def _compact_layout(self, layout, L, freq, indptr, indices, data, offsets):
        """State weights as records (:class:`~skcrf._training.records.Records`),
        the kernels reading a copy of the indices turned into record offsets:
        one record, mostly one cache line, per non-zero, where a dense row
        of L labels is L / 8 lines. The hot features (:func:`_hot_features`:
        the most frequent of those with parameters for many labels, a few
        thousand at most) keep a dense row inside the records: a few
        features make most of the non-zeros, and a whole row added as
        vectors costs less than a scattered update per label."""
        f = layout.state_pos // L
        n_labels = np.bincount(f, minlength=freq.size)
        del f
        self._hot_width = hot_width(L)
        hot = _hot_features(freq, n_labels, self._hot_width, self.bounds.size - 1)
        records = Records(layout.state_pos, L, freq, indices, hot, self._hot_width)
        self._records, self._pos, self._n_hot = records.R, records.positions, records.n_hot
        self.arrays = (indptr, records.offsets, data, offsets)

    def release(self):
        """Free what the evaluations need (the fit is over) and return the
        freed memory to the operating system, so that the fitted weights are
        unpacked without these arrays still held: the weight and gradient
        buffers, the kernel-side copy of the indices, the compact layout and
        the empirical counts. The loss cannot be evaluated afterwards."""
        self._W = self._gW = self._records = self._pos = self._owned = None
        self.arrays = self.empirical = self.order = None
        self._released = True
        trim_heap()

    def _buffers(self):
        if self._released:
            raise RuntimeError("This CRFLoss was released (its fit is over); make a new one.")
        if self._W is None and self.compact:
            # the records, and a copy per chunk for its gradient (headers and
            # labels as in the weights' records, the value slots 0)
            self._W = self._records
            self._gW = aligned_zeros((self.bounds.size - 1, self._records.size))
            self._gW[:] = self._records
        elif self._W is None:
            n_buffers = 1 if self._owned is not None else self.bounds.size - 1
            # every buffer starting on a cache line (the rows past self._rows,
            # up to a whole line, are never read: no index points there)
            width = self._width
            rows = aligned_rows(self._rows, width)
            self._W = aligned_zeros((rows, width))
            self._gW = aligned_zeros((n_buffers, rows, width))
        return self._W, self._gW

    @property
    def parallel(self):
        return self.bounds.size > 2

    def loss_gradient(self, theta, c2=0.0):
        """Return ``(loss(theta), gradient)``; the gradient is a new array.

        ``c2``: the strength of an L2 term ``c2 ||theta||^2`` to include in
        both, its gradient added in the pass that assembles the state
        gradient (what :class:`Objective` asks of a single term) instead of
        one more pass over the vector.
        """
        lay = self.layout
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        W, gW = self._buffers()
        g = np.empty(lay.n_params)
        run_chunks(_scatter_chunk, _scatter_parallel, self._state_bounds, self.n_threads,
                   theta[lay.state], self._pos, W.reshape(-1))
        # the state counts add to the cells the last gather cleared; an
        # evaluation stopped before its gather left counts behind, in cells
        # that are read (the others never matter; the records' headers and
        # labels must stay)
        if self._counts_pending:
            gW.reshape(gW.shape[0], -1)[:, self._pos] = 0.0
        self._counts_pending = True
        A, start, end = lay.unpack_transitions(theta)
        expA, exp_start, exp_end, shifts = exp_transitions(A, start, end)
        common = (A, start, end, expA, exp_start, exp_end, shifts)
        sums = (self._gA, self._gS, self._gE, self.log_z)
        # (dense rows of up to 16 labels as quad rows: a type of their own, so
        # that the kernels compiled for them hold no loops for wider rows)
        Wk, gWk = (W, gW) if self.compact else (quad_rows(W), quad_rows(gW))
        if self._owned is None:
            run_chunks(_objective_chunk, _objective_parallel, self.bounds,
                       self.n_threads, self.order, *self.arrays, self.weights, Wk, *common,
                       gWk, *sums, self._deferred)
            if self._deferred.any() or compile_helper.RARE_PATHS:
                # (rare: their own kernel, compiled only by a problem that needs it)
                _deferred_terms(np.flatnonzero(self._deferred), *self.arrays, self.weights,
                                Wk, *common, gWk, *sums)
        else:
            o = self._owned
            with numba_threads(self.n_threads):
                _objective_owned(o.blocks, o.phase, self.order, o.row_bounds, o.split,
                                   *self.arrays, self.weights, Wk, *common, gWk[0], *sums,
                                   o.P)
        # g = expected counts - empirical counts, built in place
        g[lay.transition] = self._gA.sum(axis=0).reshape(-1)[lay.trans_pos]
        g[lay.start] = self._gS.sum(axis=0)[lay.start_pos]
        g[lay.end] = self._gE.sum(axis=0)[lay.end_pos]
        # the state part gathered from the buffers, the empirical counts
        # subtracted and the L2 gradient added in one pass, on the fit's threads
        sums = self._sums
        run_chunks(_gradient_chunk, _gradient_parallel, self._state_bounds,
                   self.n_threads, gW.reshape(gW.shape[0], -1), self._pos,
                   self.empirical[lay.state], theta[lay.state], float(c2),
                   g[lay.state], sums)
        # (the gather cleared the cells the next evaluation adds to)
        self._counts_pending = False
        # the few transition, start and end parameters
        rest = slice(lay.state.stop, None)
        g[rest] -= self.empirical[rest]
        g[rest] += 2.0 * c2 * theta[rest]
        te, tt = sums.sum(axis=0)
        theta_emp = float(te + np.dot(theta[rest], self.empirical[rest]))
        penalty = c2 * float(tt + np.dot(theta[rest], theta[rest]))
        loss = float(np.dot(self.weights, self.log_z) - theta_emp) + penalty
        self.n_evals += 1
        return loss, g

    __call__ = loss_gradient


def feature_frequencies(indices, n_features):
    """How many non-zeros each feature has: ``np.bincount(indices)``, counted
    in slices, because bincount copies its whole input to int64 first (8
    bytes per non-zero: it used to be a fit's peak memory)."""
    freq = np.zeros(n_features, dtype=np.int64)
    for lo in range(0, indices.size, _FREQUENCY_SLICE):
        freq += np.bincount(indices[lo:lo + _FREQUENCY_SLICE], minlength=n_features)
    return freq


#: non-zeros per slice of feature_frequencies (an 8 MB int64 copy at a time)
_FREQUENCY_SLICE = 2**20


def trim_heap():
    """Return the C heap's free memory to the operating system (glibc's
    ``malloc_trim``; nothing elsewhere). Arrays of up to 32 MB come from the
    heap once glibc has raised its mmap threshold, and their pages stay
    resident after they are freed: a fit's L-BFGS history and evaluation
    buffers would otherwise still count in RSS while the fitted weights are
    made."""
    global _MALLOC_TRIM
    if _MALLOC_TRIM is None:
        _MALLOC_TRIM = False
        if sys.platform.startswith("linux"):
            try:
                _MALLOC_TRIM = ctypes.CDLL(None).malloc_trim
                _MALLOC_TRIM.argtypes = [ctypes.c_size_t]
            except (OSError, AttributeError):    # not glibc (musl has none)
                _MALLOC_TRIM = False
    if _MALLOC_TRIM:
        _MALLOC_TRIM(0)


_MALLOC_TRIM = None


def _use_compact(rows, width, L, n_state, n_chunks):
    """Whether the objective keeps the state weights compact, as records
    (:meth:`CRFLoss._compact_layout`), rather than as a dense (rows, width)
    matrix and gradient: when that matrix would be larger than
    _COMPACT_MIN_BYTES and the parameters fill less than _COMPACT_MAX_FILL of
    it, and the threads' private copies of the records (their gradients)
    stay within _PRIVATE_GRADIENT_BYTES. Memory then grows with the
    parameters instead of features x labels. The choice is made for memory,
    not speed: which layout is faster depends on the label count and on how
    much of the dense matrix the processor's caches hold (the dense rows are
    faster below ~30 labels; docs/user_guide/performance.md)."""
    dense = rows * width * 8
    records = Records.size_bound(rows, n_state, _HOT_BYTES)
    return (dense > _COMPACT_MIN_BYTES and n_state < _COMPACT_MAX_FILL * rows * L
            and (n_chunks - 1) * records <= _PRIVATE_GRADIENT_BYTES)


def _hot_features(freq, n_labels, width, n_chunks=1):
    """The features a compact layout gives a dense row
    (:meth:`CRFLoss._compact_layout`), most frequent first: those whose
    parameters fill at least _HOT_MIN_FILL of a row of ``width`` columns
    (``n_labels[f]``: feature f's parameter count), as many as fit in
    _HOT_BYTES (per copy: the weights and each of the ``n_chunks`` threads'
    gradients; all the threads' copies within _PRIVATE_GRADIENT_BYTES, so
    that memory does not grow without bound with the threads). A dense row
    costs a vector add per 8 columns where the compact one costs a scattered
    scalar update per parameter, and its bytes stay in cache only if the
    feature is frequent: so the frequent features of many labels (word
    shape, suffixes, the bias), which make most of a corpus's non-zeros, not
    the rare ones."""
    n_rows = min(_HOT_BYTES, _PRIVATE_GRADIENT_BYTES // max(n_chunks, 1)) // (8 * width)
    cand = np.flatnonzero((n_labels >= max(_HOT_MIN_FILL * width, 1)) & (freq > 0))
    order = np.argsort(-freq[cand], kind="stable")[:n_rows]
    return cand[order]


def hot_width(n_labels):
    """Columns of a compact layout's dense rows: ``n_labels`` padded to whole
    vectors of N_LANES, which the kernels add as such."""
    return -(-int(n_labels) // N_LANES) * N_LANES


def _keeps_indices(n_features, n_used, width, n_chunks, nnz):
    """Whether a fit on ``n_chunks`` threads with private gradients reads
    the state weights by the features' own numbers instead of renumbering
    them (most frequent first) in a copy of the indices: when the rows of
    features that no token uses, which the weights and every gradient buffer
    then hold, cost less than that copy (4 bytes per non-zero). The
    renumbered rows are faster (the frequent rows share cache lines), so
    one thread, whose memory has no per-thread buffers, keeps the copy."""
    return (n_features - n_used) * width * 8 * (n_chunks + 1) < 4 * nnz


#: the dense state-weight matrix above which a sparse model is kept compact
_COMPACT_MIN_BYTES = 32 * 2**20
#: ... when its parameters fill less than this share of (features x labels)
_COMPACT_MAX_FILL = 0.15

#: a compact layout's dense rows (_hot_features): at most this many bytes per
#: copy (the weights', and each thread's gradient), for features whose
#: parameters fill at least this share of a row
_HOT_BYTES = 2**20
_HOT_MIN_FILL = 0.125

#: tokens x labels of a block of the shared-gradient pass (its marginals, 1 MB)
_BLOCK_ELEMENTS = 2**17
#: the most memory the threads beyond the first may add as private gradient
#: buffers; above it they share one (private buffers are faster while they
#: are small enough to stay mostly in cache).
_PRIVATE_GRADIENT_BYTES = 32 * 2**20


class _OwnedRows:
    """How several threads share one state gradient: who owns which feature
    rows, and in which blocks the sequences are processed.

    :meth:`deal_rows` renumbers the rows so that each thread owns one
    contiguous range: rows taken in order of frequency are dealt to the
    threads in groups of 8, so that every thread gets as many frequent (cheap,
    cached) rows as rare (a cache miss each) ones. Every token's non-zeros are
    sorted by row (in place, in the kernel-side copy of the indices; the
    values follow in a copy unless they are all 1), and ``split[t, k]`` says
    where thread ``k``'s rows start among token ``t``'s. The sequences are cut
    into blocks of about ``_BLOCK_ELEMENTS / L`` tokens; within a block,
    ``phase[b]`` splits the sequences into ranges of similar cost for the
    forward-backward pass, and ``P`` holds a block's node marginals (about
    1 MB).

    Per thread this costs 4 bytes per token (``split``) and the L x L
    transition counts; the gradient stays one buffer.
    """

    GROUP = 8

    @classmethod
    def deal_rows(cls, rank, rows, n_parts):
        """``(rank renumbered, row_bounds)``: thread k owns rows
        ``row_bounds[k]:row_bounds[k + 1]`` of the new numbering."""
        owner = (np.arange(rows) // cls.GROUP) % n_parts
        order = np.argsort(owner, kind="stable")
        new = np.empty(rows, dtype=np.int64)
        new[order] = np.arange(rows)
        row_bounds = np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=n_parts))])
        return new[rank], row_bounds.astype(np.int64)

    def __init__(self, indptr, indices, data, offsets, row_bounds, L):
        n_parts = row_bounds.size - 1
        self.row_bounds = row_bounds
        sort_data = not bool(np.all(data == 1.0))
        self.data = np.array(data, dtype=np.float64, copy=True) if sort_data else data
        _sort_token_rows(indptr, indices, self.data, sort_data)
        self.split = np.empty((indptr.size - 1, n_parts + 1), dtype=np.int32)
        _row_splits(indptr, indices, self.row_bounds, self.split)
        n_seq = offsets.size - 1
        block_tokens = max(1, _BLOCK_ELEMENTS // L)
        edges = np.searchsorted(offsets[1:], np.arange(block_tokens, offsets[-1],
                                                       block_tokens)) + 1
        self.blocks = np.unique(np.concatenate([[0], edges, [n_seq]])).astype(np.int64)
        cost = (indptr[offsets[1:]] - indptr[offsets[:-1]]) * L + \
            (offsets[1:] - offsets[:-1]) * L * L + 1
        cum_cost = np.concatenate([[0], np.cumsum(cost, dtype=np.float64)])
        self.phase = np.empty((self.blocks.size - 1, n_parts + 1), dtype=np.int64)
        for b in range(self.blocks.size - 1):
            lo, hi = self.blocks[b], self.blocks[b + 1]
            targets = cum_cost[lo] + (cum_cost[hi] - cum_cost[lo]) * \
                np.arange(1, n_parts) / n_parts
            inner = np.searchsorted(cum_cost[lo:hi + 1], targets) + lo
            self.phase[b] = np.concatenate([[lo], np.clip(inner, lo, hi), [hi]])
        longest = int(np.max(offsets[self.blocks[1:]] - offsets[self.blocks[:-1]],
                             initial=0))
        self.P = np.empty((longest, L))


class Objective:
    """Sum of data terms plus the smooth part of the penalty:
    ``f(theta) = sum_k loss_k(theta) + c2 ||theta||^2``; returns ``(f, gradient)``.

    The L1 part of an elastic net (``penalty.c1``) is left to the optimiser
    (:func:`skcrf._training.optimize.minimize_owlqn`). A single local
    :class:`CRFLoss` is handed ``c2`` and adds the L2 term in the pass that
    assembles its gradient (one pass over the vector fewer); several terms,
    or remote ones, are summed first and the penalty added apart.

    Parameters
    ----------
    terms : list of callables
        Each returns ``(loss, gradient)`` for a weight vector theta (a
        :class:`CRFLoss`, or a remote shard's evaluation).
    penalty : ElasticNet
    n_threads : int, default=1
        Threads of the penalty's pass over the vector (the fit's).
    """

    def __init__(self, terms, penalty, n_threads=1):
        self.terms = list(terms)
        self.penalty = penalty
        self.n_threads = int(n_threads)
        self.n_evals = 0

    def __call__(self, theta):
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        if len(self.terms) == 1 and isinstance(self.terms[0], CRFLoss):
            f, g = self.terms[0](theta, self.penalty.c2)
        else:
            f, g = self.terms[0](theta)
            for term in self.terms[1:]:
                fk, gk = term(theta)
                f += fk
                g += gk
            f += self.penalty.add_smooth(theta, g, self.n_threads)
        self.n_evals += 1
        return float(f), g
