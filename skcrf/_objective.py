r"""The training objective: a data term per shard of data, plus a penalty.

A fit minimises

.. math::

    f(\theta) = \sum_{k} \mathrm{loss}_k(\theta) + \mathrm{penalty}(\theta)

where each data term :class:`CRFLoss` is the weighted negative
log-likelihood of one shard of sequences (one shard locally; one per
partition on a cluster) and the penalty comes from :mod:`skcrf._penalty`.
:class:`Objective` is that sum, the function the optimiser calls.
"""

import numpy as np

from . import _kernels as K
from ._inference import exp_transitions
from ._layout import count_pairs
from ._parallel import chunk_bounds, run_chunks

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
        self.weights = np.ascontiguousarray(sample_weight, dtype=np.float64)
        if counts is None:
            counts = count_pairs(arrays, y, self.weights, L, F)
        self.empirical = layout.empirical(counts)
        # Kernel-side feature rows: most frequent first, so the rows that
        # nearly every token touches share a few cache lines and pages; and
        # only the features that occur in these sequences get a row. The
        # others (columns a hashing or pre-fitted vectorizer left empty, or
        # another shard's features) all share one extra row that no token
        # reads: their weights are written there and their expected counts
        # read back as 0. Memory is then proportional to the features used,
        # not to n_features.
        freq = np.bincount(indices, minlength=F)
        n_used = int(np.count_nonzero(freq))
        rank = np.empty(F, dtype=np.int64)
        rank[np.argsort(-freq, kind="stable")] = np.arange(F)
        np.minimum(rank, n_used, out=rank)
        f, lab = np.divmod(layout.state_pos, L)
        self._pos = rank[f] * L + lab   # flat index of (f, lab) in _W and _gW[c]
        # (an int32 table, so the copy of the indices is made in int32 directly,
        # without an int64 temporary of 8 bytes per non-zero)
        self.arrays = (indptr, rank.astype(np.int32)[indices], data, offsets)
        self.n_threads = int(n_threads)
        self.bounds = chunk_bounds(offsets, indptr, L, self.n_threads)
        n_chunks = self.bounds.size - 1
        # buffers reused by every evaluation: the state weights every chunk
        # reads, and one expected-count buffer per chunk (no atomics)
        self._rows = n_used + 1
        self._W = self._gW = None
        self._buffers()
        self._gA = np.zeros((n_chunks, L, L))
        self._gS = np.zeros((n_chunks, L))
        self._gE = np.zeros((n_chunks, L))
        self.log_z = np.zeros(offsets.size - 1)
        self.n_evals = 0

    def release(self):
        """Free the evaluation buffers (the fit is over): the fitted weights are
        then unpacked without these buffers still held. Evaluating again
        re-allocates them."""
        self._W = self._gW = None

    def _buffers(self):
        if self._W is None:
            n_chunks = self.bounds.size - 1
            rows, L = self._rows, self.layout.n_labels
            self._W = np.zeros((rows, L))
            self._gW = np.zeros((n_chunks, rows, L))
        return self._W, self._gW

    @property
    def parallel(self):
        return self.bounds.size > 2

    def loss_gradient(self, theta):
        """Return ``(loss(theta), gradient)``; the gradient is a new array."""
        lay = self.layout
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        W, gW = self._buffers()
        K._scatter(theta[lay.state], self._pos, W.reshape(-1))
        A, start, end = lay.unpack_transitions(theta)
        expA, exp_start, exp_end, shifts = exp_transitions(A, start, end)
        run_chunks(K._objective_chunk, K._objective_parallel, self.bounds,
                   self.n_threads, *self.arrays, self.weights, W, A, start,
                   end, expA, exp_start, exp_end, shifts, gW, self._gA,
                   self._gS, self._gE, self.log_z)
        # g = expected counts - empirical counts, built in place
        g = np.empty(lay.n_params)
        K._gather_sum(gW.reshape(gW.shape[0], -1), self._pos, g[lay.state])
        g[lay.transition] = self._gA.sum(axis=0).reshape(-1)[lay.trans_pos]
        g[lay.start] = self._gS.sum(axis=0)[lay.start_pos]
        g[lay.end] = self._gE.sum(axis=0)[lay.end_pos]
        theta_emp = K._subtract_empirical(theta, self.empirical, g)
        loss = float(np.dot(self.weights, self.log_z) - theta_emp)
        self.n_evals += 1
        return loss, g

    __call__ = loss_gradient


class Objective:
    """Sum of data terms plus the smooth part of the penalty:
    ``f(theta) = sum_k loss_k(theta) + c2 ||theta||^2``; returns ``(f, gradient)``.

    The L1 part of an elastic net (``penalty.c1``) is left to the optimiser
    (:func:`skcrf._optimize.minimize_owlqn`).

    Parameters
    ----------
    terms : list of callables
        Each returns ``(loss, gradient)`` for a weight vector theta (a
        :class:`CRFLoss`, or a remote shard's evaluation).
    penalty : ElasticNet
    """

    def __init__(self, terms, penalty):
        self.terms = list(terms)
        self.penalty = penalty
        self.n_evals = 0

    def __call__(self, theta):
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        f, g = self.terms[0](theta)
        for term in self.terms[1:]:
            fk, gk = term(theta)
            f += fk
            g += gk
        f += self.penalty.add_smooth(theta, g)
        self.n_evals += 1
        return float(f), g
