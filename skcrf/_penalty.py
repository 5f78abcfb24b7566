r"""Penalties on the weights, applied apart from the data terms.

A penalty also decides what the optimiser's variables ``z`` are:

* :class:`L2` (``c1 = 0``): ``z`` is the weight vector :math:`\theta` itself;
* :class:`ElasticNet` (``c1 > 0``): :math:`\theta = z^+ - z^-` with
  :math:`z^\pm \ge 0` (L-BFGS-B's bounds), so that the non-smooth
  :math:`c_1 \lVert\theta\rVert_1 = c_1 \sum (z^+ + z^-)` becomes linear and
  weights can be exactly 0.

Its interface: ``n_variables(n)``, ``bounds(n)``, ``to_theta(z)``,
``from_theta(theta)`` and ``finish(z, theta, loss, g) -> (f, g_z)``, which
adds the penalty to the summed data terms ``(loss, g)`` (``g`` is the
gradient with respect to :math:`\theta`) and returns the objective and its
gradient with respect to ``z``. :class:`skcrf._objective.Objective` composes
``sum of data terms + penalty`` this way, whether the data terms are
evaluated here or on a cluster.
"""

import numpy as np

from . import _kernels as K

__all__ = ["L2", "ElasticNet", "make_penalty"]


class L2:
    r"""``c2 * ||theta||^2`` (CRFsuite's ``c2``), gradient ``2 c2 theta``."""

    def __init__(self, c2):
        self.c2 = float(c2)

    def n_variables(self, n_params):
        return n_params

    def bounds(self, n_params):
        return None

    def to_theta(self, z):
        return z

    def from_theta(self, theta):
        return np.array(theta, dtype=np.float64, copy=True)

    def finish(self, z, theta, loss, g):
        if self.c2 == 0.0:
            return float(loss), g
        return float(loss + self.c2 * K._add_l2(theta, self.c2, g)), g

    def __repr__(self):
        return f"L2(c2={self.c2!r})"


class ElasticNet:
    r"""``c1 * ||theta||_1 + c2 * ||theta||^2`` (CRFsuite's ``c1`` and ``c2``).

    The optimiser sees ``z = [z+, z-]`` (twice the parameters, all >= 0),
    ``theta = z+ - z-``; at the optimum one of each pair is 0.
    """

    def __init__(self, c1, c2):
        self.c1 = float(c1)
        self.c2 = float(c2)

    def n_variables(self, n_params):
        return 2 * n_params

    def bounds(self, n_params):
        from scipy.optimize import Bounds

        return Bounds(np.zeros(2 * n_params), np.full(2 * n_params, np.inf))

    def to_theta(self, z):
        n = z.size // 2
        return z[:n] - z[n:]

    def from_theta(self, theta):
        return np.concatenate([np.maximum(theta, 0.0), np.maximum(-theta, 0.0)])

    def finish(self, z, theta, loss, g):
        tt = K._add_l2(theta, self.c2, g) if self.c2 else 0.0
        f = loss + self.c2 * tt + self.c1 * float(z.sum())
        gz = np.empty(z.size)
        n = theta.size
        np.add(g, self.c1, out=gz[:n])
        np.subtract(self.c1, g, out=gz[n:])
        return float(f), gz

    def __repr__(self):
        return f"ElasticNet(c1={self.c1!r}, c2={self.c2!r})"


def make_penalty(c1, c2):
    """The penalty of a fit: :class:`L2` when ``c1 == 0``, else :class:`ElasticNet`."""
    return ElasticNet(c1, c2) if c1 > 0 else L2(c2)
