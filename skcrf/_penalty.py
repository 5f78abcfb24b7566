"""Penalties on the parameter vector, applied apart from the data terms.

A penalty has ``add_to(theta, g) -> value``: it adds its gradient at
``theta`` to ``g`` in place and returns its value, so that a fit's objective
is ``sum of data terms + penalty`` (:class:`skcrf._objective.Objective`)
whether the data terms are evaluated here or on a cluster.
"""

from . import _kernels as K

__all__ = ["L2"]


class L2:
    r"""``c2 * ||theta||^2`` (CRFsuite's ``c2``), gradient ``2 c2 theta``."""

    def __init__(self, c2):
        self.c2 = float(c2)

    def add_to(self, theta, g):
        if self.c2 == 0.0:
            return 0.0
        return self.c2 * K._add_l2(theta, self.c2, g)

    def __repr__(self):
        return f"L2(c2={self.c2!r})"
