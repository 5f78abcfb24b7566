"""Parameter vector <-> kernel-side weights, gradient assembly, L2, steps.

Each pass is a chunk kernel over a range of the vector's elements (see
:func:`skcrf._kernels.parallel.element_bounds`) with a ``prange`` driver, so
that it runs on the fit's threads: these passes touch every parameter once
or twice per evaluation, in the kernels' (frequency) row order rather than
the vector's, and a model can have millions of parameters; left on one
thread they would be the serial part of a multi-threaded evaluation. They
are loops rather than NumPy's fancy indexing, which makes temporaries.
"""

from numba import njit, prange

from ._jit import _JIT


@njit(**_JIT)
def _scatter_chunk(c, bounds, values, positions, flat):
    """``flat[positions[k]] = values[k]`` for ``k`` in ``bounds[c]:bounds[c + 1]``."""
    for k in range(bounds[c], bounds[c + 1]):
        flat[positions[k]] = values[k]


@njit(parallel=True, **_JIT)
def _scatter_parallel(bounds, *args):
    for c in prange(bounds.size - 1): _scatter_chunk(c, bounds, *args)  # noqa: E701


@njit(**_JIT)
def _gradient_chunk(c, bounds, flat, positions, empirical, theta, c2, out, partial):
    """For ``k`` in ``bounds[c]:bounds[c + 1]``: ``out[k]`` = (sum over buffers
    ``b`` of ``flat[b, positions[k]]``) - ``empirical[k]`` + ``2 c2 theta[k]``:
    the gradient of the data term (expected minus empirical counts) and of
    an L2 term; ``partial[c]`` = the range's ``(theta . empirical, theta .
    theta)`` (the score of the training labels, and the L2 term's norm).

    Clears each buffer cell it reads: the next evaluation's state counts then
    add to zeros there without a pass that clears the whole buffers (tens of
    MB for a large model, at every evaluation). Cells at no parameter's
    position (padding, labels a feature was never seen with) are never read,
    so what accumulates there does not matter."""
    te = 0.0
    tt = 0.0
    for k in range(bounds[c], bounds[c + 1]):
        acc = 0.0
        p = positions[k]
        for b in range(flat.shape[0]):
            acc += flat[b, p]
            flat[b, p] = 0.0
        e = empirical[k]
        t = theta[k]
        out[k] = (acc - e) + 2.0 * c2 * t
        te += t * e
        tt += t * t
    partial[c, 0] = te
    partial[c, 1] = tt


@njit(parallel=True, **_JIT)
def _gradient_parallel(bounds, *args):
    for c in prange(bounds.size - 1): _gradient_chunk(c, bounds, *args)  # noqa: E701


@njit(**_JIT)
def _l2_chunk(c, bounds, theta, c2, g, partial):
    """``g += 2 c2 theta`` in place over ``bounds[c]:bounds[c + 1]``;
    ``partial[c]`` = the range's ``theta . theta``."""
    tt = 0.0
    for k in range(bounds[c], bounds[c + 1]):
        t = theta[k]
        g[k] += 2.0 * c2 * t
        tt += t * t
    partial[c] = tt


@njit(parallel=True, **_JIT)
def _l2_parallel(bounds, *args):
    for c in prange(bounds.size - 1): _l2_chunk(c, bounds, *args)  # noqa: E701


@njit(**_JIT)
def _step_chunk(c, bounds, x, d, a, out):
    """``out = x + a d`` over ``bounds[c]:bounds[c + 1]`` (a line search's trial
    point; one pass, where NumPy's ``d * a + x`` makes two)."""
    for k in range(bounds[c], bounds[c + 1]):
        out[k] = x[k] + a * d[k]


@njit(parallel=True, **_JIT)
def _step_parallel(bounds, *args):
    for c in prange(bounds.size - 1): _step_chunk(c, bounds, *args)  # noqa: E701
