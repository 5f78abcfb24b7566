"""Low-level helpers for the Numba kernels that Numba itself does not offer.

``exp_nonpositive(x)`` is ``exp`` for ``x <= 0`` written as plain arithmetic
(range reduction, a degree-13 polynomial, exponent bits), so that LLVM can
vectorise the loops that call it; the libm ``exp`` it replaces is a scalar
call. Within 1.1 ulp of the true value (tested against a long-double
reference: 1.09 ulp at most, 1.00 with fused multiply-adds, as the kernels
compile it; NumPy's exp: 1.00), 0 below -708.

``prefetch_row(M, i)`` asks the CPU to start loading row ``i`` of the
C-contiguous 2-D array ``M`` into cache, and returns at once. The kernels
call it for the feature row they will need a few dozen non-zeros later: the
rows of rare features are scattered through memory, and without a hint each
of them costs a full cache-miss latency that the out-of-order core cannot
hide. It is only a hint: it never faults, never changes
a result, and compiles to nothing on a target without prefetch instructions.
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

__all__ = ["prefetch_row", "prefetch_at", "flat_view", "exp_nonpositive"]

_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01   # ln 2 split so that k * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_EXP_MIN = -708.0                      # exp(-708) is the last normal-range value we build


@intrinsic
def _pow2(typingctx, k):
    """``2.0 ** k`` for an integer-valued float ``k`` in [-1022, 1023], built
    directly from the exponent bits."""
    if not isinstance(k, types.Float):
        return None
    sig = types.float64(types.float64)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        kk = builder.fptosi(args[0], i64)
        bits = builder.shl(builder.add(kk, i64(1023)), i64(52))
        return builder.bitcast(bits, ir.DoubleType())

    return sig, codegen


@njit(inline="always", fastmath=False, error_model="numpy")
def exp_nonpositive(x):
    """``exp(x)`` for ``x <= 0`` (NaN stays NaN, -inf and x < -708 give 0)."""
    xc = max(x, _EXP_MIN)
    k = np.floor(xc * _LOG2E + 0.5)          # x = k ln2 + r, |r| <= ln2 / 2
    r = (xc - k * _LN2_HI) - k * _LN2_LO
    # Taylor series of exp(r) to r**13: truncation error < 1e-17 for |r| <= ln2/2
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    y = p * _pow2(k)
    if x < _EXP_MIN:
        y = 0.0
    if x != x:
        y = x
    return y


def _prefetch_pointer(builder, ptr):
    """Emit a prefetch of the cache line at ``ptr``: read (0), high temporal
    locality (3), data cache (1)."""
    i8p = ir.IntType(8).as_pointer()
    i32 = ir.IntType(32)
    fn = builder.module.declare_intrinsic(
        "llvm.prefetch", fnty=ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]))
    builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])


@intrinsic
def prefetch_row(typingctx, matrix, row):
    """Prefetch the first and the last element of ``matrix[row]`` for reading.

    A row of a few labels spans at most two cache lines, so two hints cover it.
    ``row`` must be a valid row index (the address is computed, not checked).
    ``matrix`` may also be the (rows, 1, width) view of
    :func:`skcrf._kernels.emissions.quad_rows`.
    """
    if not (isinstance(matrix, types.Array) and matrix.ndim in (2, 3)
            and isinstance(row, types.Integer)):
        return None
    sig = types.void(matrix, row)

    def codegen(context, builder, signature, args):
        mtype = signature.args[0]
        arr = context.make_array(mtype)(context, builder, args[0])
        idx = context.cast(builder, args[1], signature.args[1], types.intp)
        nd = mtype.ndim
        n_cols = cgutils.unpack_tuple(builder, arr.shape, nd)[nd - 1]
        zero = context.get_constant(types.intp, 0)
        one = context.get_constant(types.intp, 1)
        last = builder.sub(n_cols, one)
        for col in (zero, last):
            at = [idx, col] if nd == 2 else [idx, zero, col]
            _prefetch_pointer(builder, cgutils.get_item_pointer(context, builder, mtype, arr,
                                                                at, wraparound=False))
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def prefetch_at(typingctx, a, off):
    """Prefetch the cache line holding ``a[off]`` of a 1-D array for reading.

    For rows wider than two cache lines (the sparse passes' blocks of up to
    32 columns): :func:`prefetch_row`'s two hints, at a row's first and last
    element, leave the lines in between to demand misses, which the
    out-of-order core then waits for. ``off`` must lie within ``a`` (the
    address is computed, not checked)."""
    if not (isinstance(a, types.Array) and a.ndim == 1 and isinstance(off, types.Integer)):
        return None
    sig = types.void(a, off)

    def codegen(context, builder, signature, args):
        atype = signature.args[0]
        arr = context.make_array(atype)(context, builder, args[0])
        idx = context.cast(builder, args[1], signature.args[1], types.intp)
        _prefetch_pointer(builder, cgutils.get_item_pointer(context, builder, atype, arr,
                                                            [idx], wraparound=False))
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def flat_view(typingctx, a):
    """The C-contiguous array ``a``, of any shape, as a 1-D view of its
    elements (``a.reshape(-1)`` without the general reshape).

    The sparse passes read their weight and gradient rows flat and are
    called once per sequence: Numba's ``reshape`` goes through its general
    no-copy reshape at every call, a fixed cost of the order of a short
    sequence's own work (``benchmarks/results/flat_view_1208.txt``); this
    only fills in a view. Only a C-contiguous array is accepted (any other
    is a typing error, not a wrong view)."""
    if not (isinstance(a, types.Array) and a.layout == "C"):
        return None
    ret = types.Array(a.dtype, 1, "C")
    sig = ret(a)

    def codegen(context, builder, signature, args):
        src = make_array(signature.args[0])(context, builder, args[0])
        dst = make_array(ret)(context, builder)
        populate_array(dst, data=src.data, shape=cgutils.pack_array(builder, [src.nitems]),
                       strides=cgutils.pack_array(builder, [src.itemsize]),
                       itemsize=src.itemsize, meminfo=src.meminfo, parent=src.parent)
        return impl_ret_borrowed(context, builder, ret, dst._getvalue())

    return sig, codegen
