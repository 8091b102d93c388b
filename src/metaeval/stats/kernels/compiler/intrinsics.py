"""The LLVM intrinsics of the compiled loops (numba's ``intrinsic``): :func:`fma`, the lanes' table reads, and
:func:`borrowed` / :func:`keep_alive` (views without reference counting, for serial loops), and :func:`next_task` (the
tasks of a serial loop shared by several threads, taken in turn).

:func:`fma` is ``a * b + c`` rounded once (LLVM's ``llvm.fma.f64``), for the SPA null's standardized masked sums
(:mod:`metaeval.stats.mt._compiled`).

The table reads of :mod:`metaeval.stats.kernels.kendall.lanes_compiled` as 16-lane vector code:
A resample reads one row of every block table (the packed counts of the 16 lanes, one metric pair each) and sums
them. numba leaves a loop over 16 lanes scalar (its loop vectoriser wants more iterations than that), so each table
cost a load and an add per lane and the reads cost more than building the tables. The two functions here are
written as LLVM vector instructions through numba's ``intrinsic``: one vector load and add per table, then, for
8-bit fields, the four counts unpacked side by side and the weights of ``T(X')`` and ``T(Y')`` looked up per lane.
The arithmetic and its order are those of the scalar loops they replace (integer adds that wrap like the packed
counts; ``out += S(X') w[T(X')] - S(Y') w[T(Y')]`` in float64, no fused multiply-add), so the results are the same
bits. Every array is C-contiguous with :data:`LANES` values in its last axis; no bounds are checked (the caller's
indices are table entries and counts of at most ``n (n - 1) / 2``, as in the loops). numba's disk cache of the
caller is keyed by the caller's file only: a change here must come with a change of ``kendall/lanes_compiled.py`` and ``mt/_compiled.py`` (an
installation writes both, so users never meet a stale entry).
"""
from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

__all__ = ["LANES", "borrowed", "fma", "keep_alive", "lane_weighted_sum", "lane_word", "next_task"]

LANES = 16
"""Metric pairs held side by side (16 int32 counts are one 512-bit vector)."""

_I32, _I64, _F64 = ir.IntType(32), ir.IntType(64), ir.DoubleType()


@intrinsic
def fma(typingctx, a, b, c):
    """``a * b + c`` rounded once (LLVM's ``llvm.fma.f64``)."""
    def codegen(context, builder, signature, args):
        d = ir.DoubleType()
        return builder.call(cgutils.get_or_insert_function(builder.module, ir.FunctionType(d, [d, d, d]),
                                                           "llvm.fma.f64"), args)

    return types.float64(types.float64, types.float64, types.float64), codegen


def _contiguous(ty, ndim, dtypes) -> bool:
    return isinstance(ty, types.Array) and ty.ndim == ndim and ty.layout == "C" and ty.dtype in dtypes


def _splat(builder, value, vector):
    lane0 = builder.insert_element(ir.Constant(vector, None), value, ir.Constant(_I32, 0))
    return builder.shuffle_vector(lane0, ir.Constant(vector, None), ir.Constant(ir.VectorType(_I32, LANES),
                                                                                [0] * LANES))


def _row_sum(context, builder, signature, args):
    """``bias + sum_t table[rows[t, r]]`` of the 16 lanes, a vector of the table's integer type."""
    table_t, rows_t = signature.args[:2]
    table = context.make_array(table_t)(context, builder, args[0])
    rows = context.make_array(rows_t)(context, builder, args[1])
    r, bias = (context.cast(builder, args[u], signature.args[u], types.int64) for u in (2, 3))
    element = context.get_value_type(table_t.dtype)
    vector = ir.VectorType(element, LANES)
    n_tables, k = cgutils.unpack_tuple(builder, rows.shape, 2)
    total = cgutils.alloca_once_value(builder, _splat(builder, builder.trunc(bias, element)
                                                      if element.width < 64 else bias, vector))
    with cgutils.for_range(builder, n_tables) as loop:
        entry = builder.load(builder.gep(rows.data, [builder.add(builder.mul(loop.index, k), r)]))
        start = builder.mul(builder.zext(entry, _I64), ir.Constant(_I64, LANES))
        row = builder.load(builder.bitcast(builder.gep(table.data, [start]), vector.as_pointer()),
                           align=element.width // 8)
        builder.store(builder.add(builder.load(total), row), total)
    return builder.load(total), vector


@intrinsic
def lane_word(typingctx, table, rows, r, bias, word):
    """``word[q] = bias + sum_t table[rows[t, r], q]`` for the 16 lanes ``q`` (integer adds in the table's type,
    wrapping). ``table`` (entries, 16) int32 or int64, ``rows`` (tables, k) of unsigned entries, ``word`` (16,) of
    the table's type."""
    if not (_contiguous(table, 2, (types.int32, types.int64)) and _contiguous(rows, 2, (types.uint16, types.uint32))
            and _contiguous(word, 1, (table.dtype,)) and isinstance(r, types.Integer)
            and isinstance(bias, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        total, vector = _row_sum(context, builder, signature, args)
        out = context.make_array(signature.args[4])(context, builder, args[4])
        builder.store(total, builder.bitcast(out.data, vector.as_pointer()), align=vector.element.width // 8)
        return context.get_dummy_value()

    return types.void(table, rows, r, bias, word), codegen


@intrinsic
def lane_weighted_sum(typingctx, table, rows, r, bias, weights, out):
    """``out[r, q] += S_x w[T_x] - S_y w[T_y]`` of the word ``v = bias + sum_t table[rows[t, r], q]`` of 8-bit fields
    (``S_x = (v & 255) - 128``, ``S_y = (v >> 8 & 255) - 128``, ``T_x = v >> 16 & 255``, ``T_y = v >> 24 & 255``)
    for the 16 lanes ``q``. ``table`` (entries, 16) int32 (or int64), ``weights`` (float64, indexed by a count of
    tied pairs), ``out`` (k, 16) float64."""
    if not (_contiguous(table, 2, (types.int32, types.int64)) and _contiguous(rows, 2, (types.uint16, types.uint32))
            and _contiguous(weights, 1, (types.float64,)) and _contiguous(out, 2, (types.float64,))
            and isinstance(r, types.Integer) and isinstance(bias, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        word, vector = _row_sum(context, builder, signature, args)
        w = context.make_array(signature.args[4])(context, builder, args[4])
        o = context.make_array(signature.args[5])(context, builder, args[5])
        floats = ir.VectorType(_F64, LANES)

        def const(value):
            return ir.Constant(vector, [value] * LANES)

        def looked_up(counts):  # one scalar load per lane: as fast as a vector gather here, and portable
            got = ir.Constant(floats, None)
            for q in range(LANES):
                at = builder.zext(builder.extract_element(counts, ir.Constant(_I32, q)), _I64)
                got = builder.insert_element(got, builder.load(builder.gep(w.data, [at])), ir.Constant(_I32, q))
            return got

        s_x = builder.sitofp(builder.sub(builder.and_(word, const(255)), const(128)), floats)
        s_y = builder.sitofp(builder.sub(builder.and_(builder.lshr(word, const(8)), const(255)), const(128)), floats)
        w_x = looked_up(builder.and_(builder.lshr(word, const(16)), const(255)))
        w_y = looked_up(builder.and_(builder.lshr(word, const(24)), const(255)))
        r = context.cast(builder, args[2], signature.args[2], types.int64)
        at = builder.bitcast(builder.gep(o.data, [builder.mul(r, ir.Constant(_I64, LANES))]),
                             floats.as_pointer())
        total = builder.fadd(builder.load(at, align=8), builder.fsub(builder.fmul(s_x, w_x), builder.fmul(s_y, w_y)))
        builder.store(total, at, align=8)
        return context.get_dummy_value()

    return types.void(table, rows, r, bias, weights, out), codegen


@intrinsic
def borrowed(typingctx, array):
    """``array`` without its owner (the same data, shape and strides; no meminfo, no parent): the views taken
    of it in a loop are not reference-counted.

    numba counts a reference for every view (``row = table[i]``) with two atomic operations on the owner's
    meminfo, which a serial loop taking a view per value pays in full (27% of ``tied_sweep_counts``' time built
    serially, 1.7x its parallel build's; a ``prange`` body does not pay it). The caller keeps the owner alive
    while the borrowed array is used: an argument of the compiled function is (the caller holds it), a local
    array must be passed to :func:`keep_alive` after its last borrowed use (numba frees a local at its last use).
    """
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        owned = context.make_array(array)(context, builder, args[0])
        out = context.make_array(array)(context, builder)
        for name in ("nitems", "itemsize", "data", "shape", "strides"):
            setattr(out, name, getattr(owned, name))
        out.meminfo = cgutils.get_null_value(out.meminfo.type)
        out.parent = cgutils.get_null_value(out.parent.type)
        return out._getvalue()

    return array(array), codegen


@intrinsic
def keep_alive(typingctx, owners):
    """No code: a use of ``owners`` (a tuple of arrays) at this point, so that numba frees none of them before it
    (the owners of :func:`borrowed` arrays)."""
    if not isinstance(owners, types.BaseTuple):
        return None

    def codegen(context, builder, signature, args):
        return context.get_dummy_value()

    return types.void(owners), codegen


@intrinsic
def next_task(typingctx, counter):
    """The next task of a loop run on several threads at once: ``counter[0]`` before adding 1 to it, atomically
    (LLVM ``atomicrmw add``, sequentially consistent). Each thread takes tasks until the count is reached, so a
    thread that starts late or draws small tasks takes more of them; which thread computes a task never changes
    its numbers. ``counter``: a C-contiguous int64 array of one element, 0 at the start."""
    if not _contiguous(counter, 1, (types.int64,)):
        return None

    def codegen(context, builder, signature, args):
        shared = context.make_array(counter)(context, builder, args[0])
        return builder.atomic_rmw("add", shared.data, ir.Constant(_I64, 1), "seq_cst")

    return types.int64(counter), codegen
