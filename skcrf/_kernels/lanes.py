"""Eight float64 lanes as one value in Numba kernels: SIMD across sequences.

The forward-backward recursion of one sequence is a chain of short
L-term dot products: each step waits for the one before, and a dot product
of 4 or 9 terms fills little of a vector register. Eight sequences of the
same length, though, can run the same recursion side by side, one per lane:
every operation then works on 8 independent values at once, with no
horizontal sums. LLVM would pack such code into vector instructions itself
(its SLP vectoriser), but Numba compiles with that pass switched off, and its
loop vectoriser does not handle a constant inner loop of 8 well. So this
module gives the kernels the vector directly: :data:`lanes` is a Numba type
whose LLVM representation is ``<8 x double>`` (two AVX2 registers, one
AVX-512 register; plain SSE or scalar code elsewhere, as LLVM lowers it), and
the intrinsics below are its operations.

Layout convention: a "lane array" is a flat, C-contiguous float64 array in
which element ``k * 8 + b`` is value ``k`` of lane ``b``; ``vload(a, k * 8)``
reads the 8 lanes of value ``k``. Offsets are not bounds-checked: the caller
guarantees ``0 <= off`` and ``off + 8 <= a.size``.

All arithmetic is IEEE (no fast-math flags): ``vfma`` is a fused
multiply-add (``llvm.fma``), so results may differ from ``a * b + c`` in the
last bit, as the scalar kernels' contracted multiply-adds do.
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic, models, register_model

from .intrinsics import _EXP_MIN, _LN2_HI, _LN2_LO, _LOG2E

__all__ = ["N_LANES", "lanes", "vload", "vstore", "vsplat", "vadd", "vsub", "vmul",
           "vdiv", "vfma", "vmax", "vmin", "vselect", "vsum", "vhmin", "vhmax", "vlane",
           "vexponent", "vmantissa", "vfloor", "vpow2", "vless", "vall", "vtake",
           "vexp_nonpositive",
           "N_QUAD",
           "quad", "qload", "qstore", "qsplat", "qzero", "qadd", "qfma", "qmake", "qget",
           "row_width"]

#: lanes per vector
N_LANES = 8

_VEC = ir.VectorType(ir.DoubleType(), N_LANES)
_I32 = ir.IntType(32)


class Lanes(types.Type):
    """Numba type of eight float64 lanes (LLVM ``<8 x double>``)."""

    def __init__(self):
        super().__init__(name="lanes8_float64")


#: the Numba type of a lane vector
lanes = Lanes()


@register_model(Lanes)
class _LanesModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _VEC)


def _is_flat_f64(a):
    return (isinstance(a, types.Array) and a.ndim == 1 and a.dtype == types.float64
            and a.layout == "C")


def _lane_pointer(context, builder, arytype, ary, off):
    """``<8 x double>*`` pointing at element ``off`` of a 1-D array."""
    data = context.make_array(arytype)(context, builder, ary).data
    return builder.bitcast(builder.gep(data, [off]), _VEC.as_pointer())


@intrinsic
def vload(typingctx, a, off):
    """Lanes ``a[off:off + 8]`` of a flat C-contiguous float64 array."""
    if not (_is_flat_f64(a) and isinstance(off, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        off = context.cast(builder, args[1], sig.args[1], types.intp)
        return builder.load(_lane_pointer(context, builder, sig.args[0], args[0], off),
                            align=8)

    return lanes(a, off), codegen


@intrinsic
def vstore(typingctx, a, off, v):
    """``a[off:off + 8] = v``."""
    if not (_is_flat_f64(a) and isinstance(off, types.Integer) and v == lanes):
        return None

    def codegen(context, builder, sig, args):
        off = context.cast(builder, args[1], sig.args[1], types.intp)
        builder.store(args[2], _lane_pointer(context, builder, sig.args[0], args[0], off),
                      align=8)
        return context.get_dummy_value()

    return types.void(a, off, v), codegen


@intrinsic
def vsplat(typingctx, x):
    """The scalar ``x`` in every lane."""
    if not isinstance(x, (types.Float, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        x = context.cast(builder, args[0], sig.args[0], types.float64)
        v = builder.insert_element(ir.Constant(_VEC, ir.Undefined), x, _I32(0))
        mask = ir.Constant(ir.VectorType(_I32, N_LANES), [0] * N_LANES)
        return builder.shuffle_vector(v, v, mask)

    return lanes(x), codegen


def _binary(emit, doc):
    @intrinsic
    def op(typingctx, a, b):
        if not (a == lanes and b == lanes):
            return None

        def codegen(context, builder, sig, args):
            return emit(builder, args[0], args[1])

        return lanes(a, b), codegen

    op.__doc__ = doc
    return op


vadd = _binary(lambda b, x, y: b.fadd(x, y), "Lane-wise ``a + b``.")
vsub = _binary(lambda b, x, y: b.fsub(x, y), "Lane-wise ``a - b``.")
vmul = _binary(lambda b, x, y: b.fmul(x, y), "Lane-wise ``a * b``.")
vdiv = _binary(lambda b, x, y: b.fdiv(x, y), "Lane-wise ``a / b``.")
vmax = _binary(lambda b, x, y: b.select(b.fcmp_ordered(">", y, x), y, x),
               "Lane-wise ``b if b > a else a`` (as the scalar running maximum).")
vmin = _binary(lambda b, x, y: b.select(b.fcmp_ordered("<", y, x), y, x),
               "Lane-wise ``b if b < a else a``.")


@intrinsic
def vfma(typingctx, a, b, c):
    """Lane-wise ``a * b + c``, fused (one rounding)."""
    if not (a == lanes and b == lanes and c == lanes):
        return None

    def codegen(context, builder, sig, args):
        fn = builder.module.declare_intrinsic(
            "llvm.fma.v8f64", fnty=ir.FunctionType(_VEC, [_VEC] * 3))
        return builder.call(fn, list(args))

    return lanes(a, b, c), codegen


@intrinsic
def vselect(typingctx, mask, a, b):
    """Lane-wise ``a if mask != 0 else b``."""
    if not (mask == lanes and a == lanes and b == lanes):
        return None

    def codegen(context, builder, sig, args):
        zero = ir.Constant(_VEC, [0.0] * N_LANES)
        return builder.select(builder.fcmp_unordered("!=", args[0], zero), args[1], args[2])

    return lanes(mask, a, b), codegen


_I64V = ir.VectorType(ir.IntType(64), N_LANES)


def _i64v(x):
    return ir.Constant(_I64V, [x] * N_LANES)


@intrinsic
def vexponent(typingctx, v):
    """Lane-wise binary exponent ``e`` of a positive normal ``v = m * 2**e``,
    ``1 <= m < 2``, as a float (read from the bits; meaningless for 0,
    subnormals, inf and NaN)."""
    if v != lanes:
        return None

    def codegen(context, builder, sig, args):
        bits = builder.bitcast(args[0], _I64V)
        e = builder.sub(builder.and_(builder.lshr(bits, _i64v(52)), _i64v(0x7FF)),
                        _i64v(1023))
        return builder.sitofp(e, _VEC)

    return lanes(v), codegen


@intrinsic
def vmantissa(typingctx, v):
    """Lane-wise ``m`` of a positive normal ``v = m * 2**e``, ``1 <= m < 2``
    (the exponent bits replaced by those of 1.0)."""
    if v != lanes:
        return None

    def codegen(context, builder, sig, args):
        bits = builder.bitcast(args[0], _I64V)
        m = builder.or_(builder.and_(bits, _i64v((1 << 52) - 1)), _i64v(1023 << 52))
        return builder.bitcast(m, _VEC)

    return lanes(v), codegen


@intrinsic
def vfloor(typingctx, v):
    """Lane-wise ``floor(v)``."""
    if v != lanes:
        return None

    def codegen(context, builder, sig, args):
        fn = builder.module.declare_intrinsic("llvm.floor.v8f64",
                                              fnty=ir.FunctionType(_VEC, [_VEC]))
        return builder.call(fn, [args[0]])

    return lanes(v), codegen


@intrinsic
def vpow2(typingctx, k):
    """Lane-wise ``2.0 ** k`` for integer-valued ``k`` in [-1022, 1023], built
    from the exponent bits (as ``skcrf._kernels.intrinsics._pow2``; meaningless
    outside that range)."""
    if k != lanes:
        return None

    def codegen(context, builder, sig, args):
        # no packed double -> int64 conversion before AVX-512 (LLVM would do
        # it lane by lane): k + 1.5 * 2**52 holds k in the low bits of its
        # mantissa, and only the low 12 bits of k + 1023 survive the shift
        magic = builder.fadd(args[0], ir.Constant(_VEC, [6755399441055744.0] * N_LANES))
        kk = builder.bitcast(magic, _I64V)
        bits = builder.shl(builder.add(kk, _i64v(1023)), _i64v(52))
        return builder.bitcast(bits, _VEC)

    return lanes(k), codegen


@intrinsic
def vless(typingctx, a, b):
    """Lane-wise ``1.0 if a < b else 0.0`` (0 where either is NaN)."""
    if not (a == lanes and b == lanes):
        return None

    def codegen(context, builder, sig, args):
        return builder.select(builder.fcmp_ordered("<", args[0], args[1]),
                              ir.Constant(_VEC, [1.0] * N_LANES),
                              ir.Constant(_VEC, [0.0] * N_LANES))

    return lanes(a, b), codegen


@intrinsic
def vall(typingctx, v):
    """Whether every lane is non-zero (NaN counts as non-zero): one vector
    compare and a test of its eight bits, where :func:`vhmin` would be a
    chain of seven scalar steps."""
    if v != lanes:
        return None

    def codegen(context, builder, sig, args):
        zero = ir.Constant(_VEC, [0.0] * N_LANES)
        bits = builder.bitcast(builder.fcmp_unordered("!=", args[0], zero),
                               ir.IntType(N_LANES))
        return builder.icmp_unsigned("==", bits, ir.Constant(ir.IntType(N_LANES),
                                                              (1 << N_LANES) - 1))

    return types.boolean(v), codegen


def _reduce(emit, doc):
    @intrinsic
    def op(typingctx, v):
        if v != lanes:
            return None

        def codegen(context, builder, sig, args):
            acc = builder.extract_element(args[0], _I32(0))
            for k in range(1, N_LANES):
                acc = emit(builder, acc, builder.extract_element(args[0], _I32(k)))
            return acc

        return types.float64(v), codegen

    op.__doc__ = doc
    return op


vsum = _reduce(lambda b, x, y: b.fadd(x, y), "Sum of the lanes (lane 0 first).")
vhmin = _reduce(lambda b, x, y: b.select(b.or_(b.fcmp_ordered("<", y, x),
                                                b.fcmp_unordered("uno", y, y)), y, x),
                "Smallest lane; NaN if a lane is NaN.")
vhmax = _reduce(lambda b, x, y: b.select(b.or_(b.fcmp_ordered(">", y, x),
                                                b.fcmp_unordered("uno", y, y)), y, x),
                "Largest lane; NaN if a lane is NaN.")


@intrinsic
def vlane(typingctx, v, k):
    """Lane ``k`` as a scalar."""
    if not (v == lanes and isinstance(k, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        k = context.cast(builder, args[1], sig.args[1], types.int32)
        return builder.extract_element(args[0], k)

    return types.float64(v, k), codegen


@intrinsic
def vtake(typingctx, a, base, idx):
    """Lane ``k`` = ``a[base + int(idx[k])]``: a gather from a flat float64
    array, the offsets integer values held as floats (labels). Not
    bounds-checked: the caller guarantees every offset is inside ``a``.

    Eight scalar loads into the vector (no ``llvm.masked.gather``, whose
    signature differs between the LLVM versions Numba ships with)."""
    if not (_is_flat_f64(a) and isinstance(base, types.Integer) and idx == lanes):
        return None

    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        base = context.cast(builder, args[1], sig.args[1], types.int64)
        offsets = builder.fptosi(args[2], _I64V)
        v = ir.Constant(_VEC, ir.Undefined)
        for k in range(N_LANES):
            p = builder.gep(data, [builder.add(base, builder.extract_element(offsets, _I32(k)))])
            v = builder.insert_element(v, builder.load(p, align=8), _I32(k))
        return v

    return lanes(a, base, idx), codegen


# --------------------------------------------------------------------------
# four float64 values as one: a short row of labels in registers
# --------------------------------------------------------------------------
# The sparse passes (emission scores, expected state counts) add one weight
# row of L labels per non-zero. With L known only at run time, a scalar loop
# keeps the token's row of sums in memory and vectorises poorly (L = 9 is two
# vectors and a remainder). Rows padded to a multiple of 4 and read as 1-4
# quads keep the sums in registers.

#: values per quad
N_QUAD = 4

_Q = ir.VectorType(ir.DoubleType(), N_QUAD)


class Quad(types.Type):
    """Numba type of four float64 values (LLVM ``<4 x double>``)."""

    def __init__(self):
        super().__init__(name="quad_float64")


#: the Numba type of a quad
quad = Quad()


@register_model(Quad)
class _QuadModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _Q)


def row_width(n_labels):
    """Columns of a kernel-side weight row for ``n_labels`` labels: padded
    to a multiple of :data:`N_QUAD` up to 16 labels (read as 1-4 quads),
    unpadded beyond (a scalar loop; the padding would be memory for little)."""
    n_labels = int(n_labels)
    return -(-n_labels // N_QUAD) * N_QUAD if n_labels <= 4 * N_QUAD else n_labels


@intrinsic
def qload(typingctx, a, off):
    """``a[off:off + 4]`` of a flat C-contiguous float64 array (unchecked)."""
    if not (_is_flat_f64(a) and isinstance(off, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        off = context.cast(builder, args[1], sig.args[1], types.intp)
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        return builder.load(builder.bitcast(builder.gep(data, [off]), _Q.as_pointer()),
                            align=8)

    return quad(a, off), codegen


@intrinsic
def qstore(typingctx, a, off, v):
    """``a[off:off + 4] = v`` (unchecked)."""
    if not (_is_flat_f64(a) and isinstance(off, types.Integer) and v == quad):
        return None

    def codegen(context, builder, sig, args):
        off = context.cast(builder, args[1], sig.args[1], types.intp)
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        builder.store(args[2], builder.bitcast(builder.gep(data, [off]), _Q.as_pointer()),
                      align=8)
        return context.get_dummy_value()

    return types.void(a, off, v), codegen


@intrinsic
def qsplat(typingctx, x):
    """The scalar ``x`` in all four places."""
    if not isinstance(x, (types.Float, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        x = context.cast(builder, args[0], sig.args[0], types.float64)
        v = builder.insert_element(ir.Constant(_Q, ir.Undefined), x, _I32(0))
        mask = ir.Constant(ir.VectorType(_I32, N_QUAD), [0] * N_QUAD)
        return builder.shuffle_vector(v, v, mask)

    return quad(x), codegen


@intrinsic
def qzero(typingctx):
    """Four zeros."""
    def codegen(context, builder, sig, args):
        return ir.Constant(_Q, [0.0] * N_QUAD)

    return quad(), codegen


@intrinsic
def qadd(typingctx, a, b):
    """``a + b``, element-wise."""
    if not (a == quad and b == quad):
        return None

    def codegen(context, builder, sig, args):
        return builder.fadd(args[0], args[1])

    return quad(a, b), codegen


@intrinsic
def qfma(typingctx, a, b, c):
    """``a * b + c``, element-wise, fused."""
    if not (a == quad and b == quad and c == quad):
        return None

    def codegen(context, builder, sig, args):
        fn = builder.module.declare_intrinsic(
            "llvm.fma.v4f64", fnty=ir.FunctionType(_Q, [_Q] * 3))
        return builder.call(fn, list(args))

    return quad(a, b, c), codegen


@intrinsic
def qmake(typingctx, x0, x1, x2, x3):
    """The quad ``(x0, x1, x2, x3)``."""
    if not all(isinstance(x, types.Float) for x in (x0, x1, x2, x3)):
        return None

    def codegen(context, builder, sig, args):
        v = ir.Constant(_Q, ir.Undefined)
        for k in range(N_QUAD):
            x = context.cast(builder, args[k], sig.args[k], types.float64)
            v = builder.insert_element(v, x, _I32(k))
        return v

    return quad(x0, x1, x2, x3), codegen


@intrinsic
def qget(typingctx, v, k):
    """Element ``k`` of a quad."""
    if not (v == quad and isinstance(k, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        k = context.cast(builder, args[1], sig.args[1], types.int32)
        return builder.extract_element(args[0], k)

    return types.float64(v, k), codegen


@njit(inline="always", fastmath={"contract"}, error_model="numpy")
def vexp_nonpositive(x):
    """Lane-wise :func:`skcrf._kernels.intrinsics.exp_nonpositive`: ``exp(x)`` for
    ``x <= 0`` (NaN stays NaN, -inf and x < -708 give 0), the same range
    reduction and polynomial on eight lanes at once (the scalar loop over a
    lane array did not vectorise: 2.1 ns per value, against 0.3 here)."""
    lo = vsplat(_EXP_MIN)
    xc = vmax(x, lo)
    k = vfloor(vfma(xc, vsplat(_LOG2E), vsplat(0.5)))
    k_nan_free = vselect(vless(k, vsplat(np.inf)), k, vsplat(0.0))   # (NaN lanes)
    r = vsub(vsub(xc, vmul(k_nan_free, vsplat(_LN2_HI))), vmul(k_nan_free, vsplat(_LN2_LO)))
    p = vsplat(1.0 / 6227020800.0)
    p = vfma(p, r, vsplat(1.0 / 479001600.0))
    p = vfma(p, r, vsplat(1.0 / 39916800.0))
    p = vfma(p, r, vsplat(1.0 / 3628800.0))
    p = vfma(p, r, vsplat(1.0 / 362880.0))
    p = vfma(p, r, vsplat(1.0 / 40320.0))
    p = vfma(p, r, vsplat(1.0 / 5040.0))
    p = vfma(p, r, vsplat(1.0 / 720.0))
    p = vfma(p, r, vsplat(1.0 / 120.0))
    p = vfma(p, r, vsplat(1.0 / 24.0))
    p = vfma(p, r, vsplat(1.0 / 6.0))
    p = vfma(p, r, vsplat(0.5))
    p = vfma(p, r, vsplat(1.0))
    p = vfma(p, r, vsplat(1.0))
    # (NaN lanes stay NaN through r and p; no select of x here: LLVM turns
    # that into a masked store, microcoded and slow on AMD)
    return vselect(vless(x, lo), vsplat(0.0), vmul(p, vpow2(k_nan_free)))
