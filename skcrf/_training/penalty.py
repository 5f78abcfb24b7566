r"""The penalty on the weights, applied apart from the data terms.

:class:`ElasticNet` is :math:`c_1 \lVert\theta\rVert_1 + c_2 \lVert\theta\rVert^2`
(CRFsuite's ``c1`` and ``c2``; ``c1 = 0`` is plain L2). Its smooth part is
added to the summed data terms by :class:`skcrf._training.loss.Objective`
(``add_smooth``); the L1 part is not differentiable at 0, so the optimiser
handles it: :func:`skcrf._training.optimize.minimize_owlqn` (orthant-wise L-BFGS, as
CRFsuite does) whenever ``c1 > 0``, :func:`~skcrf._training.optimize.minimize_lbfgs`
otherwise. The same
composition, ``sum of data terms + penalty``, serves a fit whose data terms
are evaluated on a cluster.
"""

import numpy as np

from .._kernels import vector as K
from .._kernels.parallel import element_bounds, run_chunks

__all__ = ["ElasticNet", "add_l2"]


def add_l2(theta, c2, g, n_threads=1):
    """Add ``2 c2 theta`` to ``g`` in place, on ``n_threads`` threads; return
    ``c2 ||theta||^2``."""
    bounds = element_bounds(theta.size, n_threads)
    partial = np.zeros(bounds.size - 1)
    run_chunks(K._l2_chunk, K._l2_parallel, bounds, n_threads, theta, c2, g, partial)
    return c2 * float(partial.sum())


class ElasticNet:
    r"""``c1 * ||theta||_1 + c2 * ||theta||^2``."""

    def __init__(self, c1=0.0, c2=1.0):
        self.c1 = float(c1)
        self.c2 = float(c2)

    def add_smooth(self, theta, g, n_threads=1):
        """Add the gradient of ``c2 ||theta||^2`` to ``g`` in place; return its
        value. ``n_threads``: threads of the pass (the fit's)."""
        if self.c2 == 0.0:
            return 0.0
        return add_l2(theta, self.c2, g, n_threads)

    def value(self, theta):
        """The whole penalty at ``theta``."""
        theta = np.asarray(theta, dtype=np.float64)
        return self.c1 * float(np.abs(theta).sum()) + self.c2 * float(theta.dot(theta))

    def __repr__(self):
        return f"ElasticNet(c1={self.c1!r}, c2={self.c2!r})"
