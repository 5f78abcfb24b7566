"""Numba compilation options shared by every kernel (one place, so that a
kernel's ``fastmath`` choice is explicit and reviewed).

The kernels use ``fastmath=False``: -inf weights (forbidden transitions) and
their ``exp`` of 0 must keep IEEE semantics. Two exceptions, each allowing
only what cannot change inf / NaN handling, are named below.
"""


_JIT = dict(cache=True, nogil=True, fastmath=False, error_model="numpy")

# The recursions may reassociate sums and fuse multiply-adds, so that their
# L-term dot products vectorise (1.3x at 9 labels, 2x at 20). These flags
# assume nothing about inf or NaN, so the IEEE semantics the -inf weights
# rely on are kept; the results differ from strict order in the last bits.
_JIT_RECURSION = dict(_JIT, fastmath={"reassoc", "contract"})

# exp's polynomial with fused multiply-adds (as accurate: tested within 1.25 ulp
# of the true value); no reassociation, which would change its range reduction
_JIT_EXP = dict(_JIT, fastmath={"contract"})
