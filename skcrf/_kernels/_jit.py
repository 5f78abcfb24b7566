"""Numba compilation options shared by every kernel (one place, so that a
kernel's ``fastmath`` choice is explicit and reviewed).

The kernels use ``fastmath=False``: -inf weights (forbidden transitions) and
their ``exp`` of 0 must keep IEEE semantics. Two exceptions, each allowing
only what cannot change inf / NaN handling, are named below.
"""

from numba import njit

_JIT = dict(cache=True, nogil=True, fastmath=False, error_model="numpy")

# The recursions may reassociate sums and fuse multiply-adds, so that their
# L-term dot products vectorise (1.3x at 9 labels, 2x at 20). These flags
# assume nothing about inf or NaN, so the IEEE semantics the -inf weights
# rely on are kept; the results differ from strict order in the last bits.
_JIT_RECURSION = dict(_JIT, fastmath={"reassoc", "contract"})

# exp's polynomial with fused multiply-adds (as accurate: tested within 1.25 ulp
# of the true value); no reassociation, which would change its range reduction
_JIT_EXP = dict(_JIT, fastmath={"contract"})


@njit(inline="always", **_JIT)
def any_layout(a):
    """A view of the 2-D array ``a`` that Numba types with layout 'A'
    (any strides), whether ``a`` is contiguous or strided.

    Numba compiles a function once per layout of its array arguments: the
    lane kernels pass their emission and score matrices as strided views
    (one lane of an interleaved array), the one-sequence kernels contiguous
    matrices, so every loop they share would be compiled twice, each copy
    adding to a cold first fit. Callers hand the shared loops this view
    instead. The loops it serves touch each element of it a few times per
    token and read a weight row per non-zero: the run-time stride is not
    where their time goes."""
    return a[:, :a.shape[1]]
