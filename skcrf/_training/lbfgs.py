r"""The L-BFGS correction history, kept compact, and the direction it gives.

L-BFGS approximates the inverse Hessian from the last ``m`` steps
:math:`s_i = x_{i+1} - x_i` and gradient changes :math:`y_i = g_{i+1} - g_i`.
The textbook two-loop recursion computes the direction :math:`d = -H v` with
``2m`` passes over those ``2m`` vectors: at a million parameters that is most
of the optimiser's time (``benchmarks/dev/optimizer_overhead.py`` measures
scipy's L-BFGS-B, compact form, Fortran, one thread, against this).

:class:`History` runs the same recursion on the *dot products* of the stored
vectors instead (the "vector-free" form of Chen et al., NIPS 2014): every
vector the recursion touches is a combination of the basis
:math:`b = (s_1..s_m, y_1..y_m, v)`, so the recursion only needs the Gram
matrix :math:`b_j^\top b_k` and yields the coefficients :math:`\delta` of
:math:`d = \sum_j \delta_j b_j`. Per iteration that is two streaming passes
over the history, in compiled code and on the fit's threads:

* :meth:`History.update` writes the new pair and, in the same pass, takes its
  dot products and those of the new ``v`` with every stored vector;
* :meth:`History.direction` forms :math:`d` from the coefficients.

The pairs are stored in ``float32`` by default (the Gram matrix is of the
stored vectors, so the recursion is exactly that of the rounded pairs; the
caller's curvature test uses the exact values): 8 bytes per parameter and pair
instead of 16. The direction only steers the line search, which evaluates
the objective exactly, so the optimum is unchanged.

References
----------
Nocedal & Wright (2006), *Numerical Optimization*, algorithm 7.4.
W. Chen, Z. Wang, J. Zhou (2014), "Large-scale L-BFGS using MapReduce", NIPS.
"""

import numpy as np
from numba import njit, prange

from .._kernels.parallel import element_bounds, run_chunks

__all__ = ["History"]

# The passes are dot products and scaled sums over millions of entries: they
# may reassociate (so that the sums vectorise; a strict left-to-right sum is
# one add latency per element) and fuse multiply-adds. The results differ from
# a strict-order sum in the last bits, which only perturbs the direction.
_JIT = dict(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc", "contract"})
# Elements per block inside a chunk: the block's new pair and vector stay in
# L1/L2 while every stored row streams past once.
_BLOCK = 2048


@njit(**_JIT)
def _dot3x2(a, b, c, r, q, out, col_r, col_q):
    """Add ``(a.r, b.r, c.r)`` to ``out[0:3, col_r]`` and ``(a.q, b.q, c.q)`` to
    ``out[0:3, col_q]``: float64 ``a, b, c`` against the stored rows ``r`` and
    ``q`` of one slot, read once."""
    ar = 0.0
    br = 0.0
    cr = 0.0
    aq = 0.0
    bq = 0.0
    cq = 0.0
    for j in range(r.size):
        rj = np.float64(r[j])
        qj = np.float64(q[j])
        ar += a[j] * rj
        br += b[j] * rj
        cr += c[j] * rj
        aq += a[j] * qj
        bq += b[j] * qj
        cq += c[j] * qj
    out[0, col_r] += ar
    out[1, col_r] += br
    out[2, col_r] += cr
    out[0, col_q] += aq
    out[1, col_q] += bq
    out[2, col_q] += cq


@njit(inline="always", **_JIT)   # (inlined: one compilation fewer per value type)
def _dot(a, r):
    s = 0.0
    for j in range(r.size):
        s += a[j] * np.float64(r[j])
    return s


@njit(**_JIT)
def _update_chunk(c, bounds, x_new, x, g_new, g, v, S, Y, slot, store, used, partial):
    """For elements ``bounds[c]:bounds[c + 1]``: write ``s = x_new - x`` and
    ``y = g_new - g`` into row ``slot`` of ``S`` / ``Y`` (when ``store``), and
    add to ``partial[c]`` the dot products of the stored ``s``, ``y`` and of
    ``v`` with every row in ``used`` (columns ``r`` for ``S[r]``,
    ``n_slots + r`` for ``Y[r]``), plus ``v.v`` (row 2, last column)."""
    n_slots = S.shape[0]
    out = partial[c]
    lo, hi = bounds[c], bounds[c + 1]
    sb = np.empty(_BLOCK)
    yb = np.empty(_BLOCK)
    for b0 in range(lo, hi, _BLOCK):
        b1 = min(b0 + _BLOCK, hi)
        vb = v[b0:b1]
        if store:
            s_row, y_row = S[slot, b0:b1], Y[slot, b0:b1]
            for j in range(b1 - b0):
                s_row[j] = x_new[b0 + j] - x[b0 + j]
                y_row[j] = g_new[b0 + j] - g[b0 + j]
                # what the recursion sees: the stored (rounded) values
                sb[j] = s_row[j]
                yb[j] = y_row[j]
        out[2, 2 * n_slots] += _dot(vb, vb)
        for k in range(used.size):
            r = used[k]
            if store:
                _dot3x2(sb, yb, vb, S[r, b0:b1], Y[r, b0:b1], out, r, n_slots + r)
            else:
                out[2, r] += _dot(vb, S[r, b0:b1])
                out[2, n_slots + r] += _dot(vb, Y[r, b0:b1])


@njit(parallel=True, **_JIT)
def _update_parallel(bounds, *args):
    for c in prange(bounds.size - 1): _update_chunk(c, bounds, *args)  # noqa: E701


@njit(**_JIT)
def _axpy2(out, a, r, b, q):
    """``out += a r + b q`` for stored rows ``r``, ``q``."""
    for j in range(out.size):
        out[j] += a * np.float64(r[j]) + b * np.float64(q[j])


@njit(**_JIT)
def _combine_chunk(c, bounds, coef_s, coef_y, coef_v, v, S, Y, used, out):
    """``out = coef_v * v + sum_r coef_s[r] S[r] + coef_y[r] Y[r]`` over the
    rows in ``used``, for elements ``bounds[c]:bounds[c + 1]``."""
    lo, hi = bounds[c], bounds[c + 1]
    for b0 in range(lo, hi, _BLOCK):
        b1 = min(b0 + _BLOCK, hi)
        ob = out[b0:b1]
        for j in range(b1 - b0):
            ob[j] = coef_v * v[b0 + j]
        for k in range(used.size):
            r = used[k]
            _axpy2(ob, coef_s[r], S[r, b0:b1], coef_y[r], Y[r, b0:b1])


@njit(parallel=True, **_JIT)
def _combine_parallel(bounds, *args):
    for c in prange(bounds.size - 1): _combine_chunk(c, bounds, *args)  # noqa: E701


class History:
    """The last ``m`` correction pairs of L-BFGS and the direction they give.

    Parameters
    ----------
    n : int
        Number of parameters.
    m : int
        Number of pairs kept.
    n_threads : int, default=1
        Threads of the two passes (the fit's ``n_jobs``).
    dtype : {np.float32, np.float64}, default=np.float32
        Storage of the pairs.

    Notes
    -----
    Call :meth:`update` after every step with the new point and gradient and
    the vector ``v`` the next direction is computed from (the gradient; for
    OWL-QN the pseudo-gradient), then :meth:`direction` with the same ``v``.
    """

    def __init__(self, n, m, n_threads=1, dtype=np.float32):
        self.n, self.m = int(n), int(m)
        self.n_threads = int(n_threads)
        k = self.m
        self.S = np.zeros((k, self.n), dtype=dtype)
        self.Y = np.zeros((k, self.n), dtype=dtype)
        self.gram = np.zeros((2 * k, 2 * k))   # [s_0..s_m-1, y_0..y_m-1] x same
        self.vdot = np.zeros(2 * k)            # v . [s.., y..]
        self.vv = 0.0
        self.order = []                        # slots in use, oldest first
        self.bounds = element_bounds(self.n, self.n_threads, _BLOCK)
        self._partial = np.zeros((self.bounds.size - 1, 3, 2 * k + 1))

    @property
    def n_pairs(self):
        return len(self.order)

    def reset(self):
        """Forget every pair (after a failed line search)."""
        self.order = []

    def _next_slot(self):
        """The slot a new pair goes to: a free one, or the oldest pair's."""
        if len(self.order) == self.m:
            return self.order[0]
        return next(r for r in range(self.m) if r not in self.order)

    def update(self, x_new, x, g_new, g, v, store=True):
        """Store the pair ``(x_new - x, g_new - g)`` (when ``store``; the caller
        tests its curvature), dropping the oldest when full, and take the dot
        products the next :meth:`direction` from ``v`` needs, in one pass."""
        k = self.m
        if store:
            slot = self._next_slot()
            if slot in self.order:
                self.order.remove(slot)      # the oldest pair makes room
            used = np.array(self.order + [slot], dtype=np.int64)
        else:
            slot, used = 0, np.array(self.order, dtype=np.int64)
        partial = self._partial
        partial[:] = 0.0
        run_chunks(_update_chunk, _update_parallel, self.bounds, self.n_threads,
                   x_new, x, g_new, g, v, self.S, self.Y, slot, bool(store), used, partial)
        dots = partial.sum(axis=0)
        self.vv = dots[2, 2 * k]
        self.vdot[:] = dots[2, :2 * k]
        if store:
            for row, col in ((0, slot), (1, k + slot)):
                self.gram[col, :] = dots[row, :2 * k]
                self.gram[:, col] = dots[row, :2 * k]
            self.order.append(slot)

    def refresh(self, v):
        """Take the dot products of a new ``v`` with the stored pairs (when ``v``
        changed without a new pair: after :meth:`reset` nothing is read)."""
        if not self.order:
            self.vv = float(np.dot(v, v))
            return
        k = self.m
        used = np.array(self.order, dtype=np.int64)
        partial = self._partial
        partial[:] = 0.0
        run_chunks(_update_chunk, _update_parallel, self.bounds, self.n_threads,
                   v, v, v, v, v, self.S, self.Y, 0, False, used, partial)
        dots = partial.sum(axis=0)
        self.vv = dots[2, 2 * k]
        self.vdot[:] = dots[2, :2 * k]

    def direction(self, v, out):
        """Write ``d = -H v`` into ``out``; return ``(v.d, |d|)``.

        ``H`` is the L-BFGS inverse-Hessian approximation of the stored pairs
        with initial scaling ``s.y / y.y`` of the newest; ``-v`` when there is
        none. ``v`` must be the vector of the last :meth:`update` or
        :meth:`refresh`.
        """
        k = self.m
        if not self.order:
            np.negative(v, out=out)
            return -self.vv, np.sqrt(self.vv)
        # the basis: s_r -> r, y_r -> k + r, v -> 2k
        B = np.zeros((2 * k + 1, 2 * k + 1))
        B[:2 * k, :2 * k] = self.gram
        B[2 * k, :2 * k] = B[:2 * k, 2 * k] = self.vdot
        B[2 * k, 2 * k] = self.vv
        delta = np.zeros(2 * k + 1)
        delta[2 * k] = -1.0
        rho = {r: 1.0 / self.gram[r, k + r] for r in self.order}
        alpha = {}
        for r in reversed(self.order):          # newest first
            alpha[r] = rho[r] * B[r].dot(delta)
            delta[k + r] -= alpha[r]
        newest = self.order[-1]
        delta *= self.gram[newest, k + newest] / self.gram[k + newest, k + newest]
        for r in self.order:                    # oldest first
            beta = rho[r] * B[k + r].dot(delta)
            delta[r] += alpha[r] - beta
        run_chunks(_combine_chunk, _combine_parallel, self.bounds, self.n_threads,
                   delta[:k].copy(), delta[k:2 * k].copy(), float(delta[2 * k]), v,
                   self.S, self.Y, np.array(self.order, dtype=np.int64), out)
        return float(B[2 * k].dot(delta)), float(np.sqrt(max(delta.dot(B.dot(delta)), 0.0)))
