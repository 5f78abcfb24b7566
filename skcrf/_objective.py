"""The training objective of LinearChainCRF and the L-BFGS call that minimises it."""

import time
import warnings

import numba
import numpy as np
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

from . import _kernels as K

__all__ = ["CRFObjective", "minimize_lbfgs", "ParameterLayout", "chunk_bounds"]


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

    @property
    def start_end(self):
        return self.start_pos.size + self.end_pos.size > 0

    def unpack(self, theta):
        """Dense ``(W, A, start, end)`` from a parameter vector; W is (n_features, n_labels)."""
        L = self.n_labels
        W = np.zeros((self.n_features, L))
        W.reshape(-1)[self.state_pos] = theta[self.state]
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


def chunk_bounds(offsets, indptr, n_labels, n_chunks):
    """Split sequences into ``n_chunks`` contiguous ranges of similar cost.

    The cost of a sequence is its number of non-zeros times the number of
    labels (emissions and state gradient) plus its length times the number of
    labels squared (the recursions).
    """
    n_seq = offsets.size - 1
    n_chunks = max(1, min(int(n_chunks), n_seq))
    cost = (indptr[offsets[1:]] - indptr[offsets[:-1]]) * n_labels + \
        (offsets[1:] - offsets[:-1]) * n_labels * n_labels + 1
    cum = np.concatenate([[0], np.cumsum(cost, dtype=np.float64)])
    targets = cum[-1] * np.arange(1, n_chunks) / n_chunks
    inner = np.searchsorted(cum, targets)
    bounds = np.unique(np.concatenate([[0], inner, [n_seq]])).astype(np.int64)
    return bounds


def transform_exp(A, start, end):
    """Shifted exponentials of the transition, start and end weights.

    Returns ``expA, exp_start, exp_end, shifts`` with
    ``shifts = (start_shift, end_shift, transition_shift)`` the maxima that were
    subtracted before ``exp`` (so large weights cannot overflow).
    """
    def shifted(a):
        finite = a[np.isfinite(a)]
        m = float(finite.max()) if finite.size else 0.0
        return np.exp(a - m), m  # exp(-inf) = 0: a forbidden transition

    expA, sa = shifted(A)
    exp_start, ss = shifted(start)
    exp_end, se = shifted(end)
    return expA, exp_start, exp_end, np.array([ss, se, sa])


class CRFObjective:
    r"""Negative penalised log-likelihood of a linear-chain CRF and its gradient.

    .. math::

        f(\theta) = -\sum_i w_i \log p_\theta(y_i \mid x_i) + c_2 \lVert\theta\rVert^2
                  = \sum_i w_i \log Z_\theta(x_i) - \theta^\top \hat\phi
                    + c_2 \lVert\theta\rVert^2

    where :math:`\hat\phi = \sum_i w_i \phi(x_i, y_i)` are the (weighted)
    empirical feature counts, computed once. The gradient is
    :math:`E_\theta[\phi] - \hat\phi + 2 c_2 \theta`: expected minus empirical
    counts plus the penalty term.

    Parameters
    ----------
    seqs : Sequences
    y : ndarray of int32, shape (n_tokens,)
        Label index of every token.
    layout : ParameterLayout
    c2 : float
    sample_weight : ndarray of shape (n_sequences,)
    n_threads : int
    """

    def __init__(self, seqs, y, layout, c2, sample_weight, n_threads=1):
        self.layout = layout
        self.c2 = float(c2)
        X = seqs.X
        F, L = layout.n_features, layout.n_labels
        self.indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
        indices = np.ascontiguousarray(X.indices, dtype=np.int32)
        self.data = np.ascontiguousarray(X.data, dtype=np.float64)
        self.offsets = np.ascontiguousarray(seqs.offsets, dtype=np.int64)
        self.weights = np.ascontiguousarray(sample_weight, dtype=np.float64)
        self.empirical = self._empirical_counts(indices, y)
        # Kernel-side feature order: most frequent first, so the rows that
        # nearly every token touches share a few cache lines and pages.
        freq = np.bincount(indices, minlength=F)
        rank = np.empty(F, dtype=np.int64)
        rank[np.argsort(-freq, kind="stable")] = np.arange(F)
        self.indices = rank[indices].astype(np.int32)
        f, lab = np.divmod(layout.state_pos, L)
        self._pos = rank[f] * L + lab   # flat index of (f, lab) in _W and _gW[c]
        self.n_threads = int(n_threads)
        self.bounds = chunk_bounds(self.offsets, self.indptr, L, self.n_threads)
        n_chunks = self.bounds.size - 1
        self.parallel = n_chunks > 1
        # buffers reused by every evaluation: the state weights every chunk
        # reads, and one expected-count buffer per chunk (no atomics)
        self._W = np.zeros((F, L))
        self._gW = np.zeros((n_chunks, F, L))
        self._gA = np.zeros((n_chunks, L, L))
        self._gS = np.zeros((n_chunks, L))
        self._gE = np.zeros((n_chunks, L))
        self._logz = np.zeros(self.offsets.size - 1)
        self.n_evals = 0

    def _empirical_counts(self, indices, y):
        lay = self.layout
        L = lay.n_labels
        counts = np.zeros((lay.n_features, L))
        seen = np.zeros((lay.n_features, L), dtype=np.bool_)
        K._state_counts(self.indptr, indices, self.data, self.offsets, y,
                        self.weights, L, counts, seen)
        token_w = np.repeat(self.weights, np.diff(self.offsets))
        A = np.zeros((L, L))
        S = np.zeros(L)
        Eend = np.zeros(L)
        lengths = np.diff(self.offsets)
        nonempty = lengths > 0
        if y.size:
            last = np.zeros(y.size, dtype=bool)
            last[self.offsets[1:][nonempty] - 1] = True
            first = np.zeros(y.size, dtype=bool)
            first[self.offsets[:-1][nonempty]] = True
            prev, nxt = y[:-1][~last[:-1]], y[1:][~first[1:]]
            wpair = token_w[1:][~first[1:]]
            np.add.at(A, (prev, nxt), wpair)
            np.add.at(S, y[first], token_w[first])
            np.add.at(Eend, y[last], token_w[last])
        return lay.pack(counts, A, S, Eend)

    def __call__(self, theta):
        """Return ``(f(theta), gradient)``."""
        lay = self.layout
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        K._scatter(theta[lay.state], self._pos, self._W.reshape(-1))
        A, start, end = lay.unpack_transitions(theta)
        expA, exp_start, exp_end, shifts = transform_exp(A, start, end)
        kernel = K._objective_parallel if self.parallel else K._objective_serial
        kernel(self.bounds, self.indptr, self.indices, self.data, self.offsets,
               self.weights, self._W, A, start, end, expA, exp_start, exp_end,
               shifts, self._gW, self._gA, self._gS, self._gE, self._logz)
        # g = expected counts - empirical counts + 2 c2 theta, built in place
        g = np.empty(lay.n_params)
        K._gather_sum(self._gW.reshape(self._gW.shape[0], -1), self._pos, g[lay.state])
        g[lay.transition] = self._gA.sum(axis=0).reshape(-1)[lay.trans_pos]
        g[lay.start] = self._gS.sum(axis=0)[lay.start_pos]
        g[lay.end] = self._gE.sum(axis=0)[lay.end_pos]
        theta_emp, theta_sq = K._penalise(theta, self.empirical, self.c2, g)
        f = float(np.sum(self.weights * self._logz) - theta_emp + self.c2 * theta_sq)
        self.n_evals += 1
        return f, g


def minimize_lbfgs(fun, theta0, *, max_iter, tol, period=10, verbose=0):
    """Minimise ``fun`` (returning value and gradient) with scipy's L-BFGS-B.

    Stopping rule (CRFsuite's): stop when the objective improved by less than
    ``tol`` relative over the last ``period`` iterations,
    ``(f[k - period] - f[k]) / max(|f[k]|, 1) < tol``, or when L-BFGS-B itself
    finds no further decrease (gradient ~0, or no descent possible in
    floating point), or after ``max_iter`` iterations (with a
    ``ConvergenceWarning``).

    Returns
    -------
    theta : ndarray
    history : list of float
        Objective after each iteration.
    n_iter : int
    """
    history = []
    t_start = time.perf_counter()
    last = {}

    def f_and_g(theta):
        f, g = fun(theta)
        last["f"], last["g"] = f, g
        return f, g

    def callback(intermediate_result):
        f = float(intermediate_result.fun)
        history.append(f)
        if verbose:
            gnorm = float(np.linalg.norm(last["g"])) if "g" in last else float("nan")
            print(f"iter {len(history):4d}  objective {f:.6f}  "
                  f"|grad| {gnorm:.4e}  {time.perf_counter() - t_start:.2f}s",
                  flush=True)
        if len(history) > period:
            old = history[-1 - period]
            if (old - f) / max(abs(f), 1.0) < tol:
                raise StopIteration

    # scipy's L-BFGS-B does its vector algebra with (threaded) BLAS; its idle
    # threads spin and would steal the cores from the Numba kernels
    with threadpool_limits(limits=1, user_api="blas"):
        res = _minimize(f_and_g, theta0, callback, max_iter)
    if res.status == 1 and len(history) >= max_iter:
        warnings.warn(
            f"L-BFGS did not converge within max_iter={max_iter} iterations; "
            "increase max_iter or loosen tol.",
            ConvergenceWarning, stacklevel=3,
        )
    return res.x, history, int(res.nit)


def _minimize(f_and_g, theta0, callback, max_iter):
    return minimize(
        f_and_g, theta0, jac=True, method="L-BFGS-B", callback=callback,
        options=dict(maxiter=max_iter, maxfun=max(15000, 2 * max_iter),
                     ftol=1e-15, gtol=1e-10, maxcor=10),
    )


def resolve_n_threads(n_jobs):
    """Threads for the kernels: None -> 1, -1 -> all cores Numba may use."""
    from joblib import effective_n_jobs

    n = effective_n_jobs(n_jobs) if n_jobs is not None else 1
    return max(1, min(int(n), numba.config.NUMBA_NUM_THREADS))
