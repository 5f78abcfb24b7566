"""Parameter vector <-> kernel-side weights, gradient assembly, L2.

Serial: they run in a few ms (NumPy's fancy indexing, with its temporaries,
was a noticeable serial step of every evaluation).
"""

from numba import njit

from ._jit import _JIT


@njit(**_JIT)
def _scatter(values, positions, flat):
    """flat[positions[k]] = values[k]."""
    for k in range(positions.size):
        flat[positions[k]] = values[k]


@njit(**_JIT)
def _gather_sum(flat, positions, out):
    """out[k] = sum over chunks c of flat[c, positions[k]]."""
    for k in range(positions.size):
        acc = 0.0
        for c in range(flat.shape[0]):
            acc += flat[c, positions[k]]
        out[k] = acc


@njit(**_JIT)
def _subtract_empirical(theta, empirical, g):
    """g -= empirical in place; returns theta . empirical."""
    te = 0.0
    for k in range(theta.size):
        g[k] -= empirical[k]
        te += theta[k] * empirical[k]
    return te


@njit(**_JIT)
def _add_l2(theta, c2, g):
    """g += 2 c2 theta in place; returns theta . theta."""
    tt = 0.0
    for k in range(theta.size):
        t = theta[k]
        g[k] += 2.0 * c2 * t
        tt += t * t
    return tt
