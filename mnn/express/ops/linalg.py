"""Matrix products: ``matmul`` (batched, broadcasting, transposeA/B)."""
import math

import numpy as np

from ..._cython import activation as _act_k
from ..._cython import gemm as _gemm_k
from ..._cython import matmul as _mm_k
from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var
from . import nn_common as nc
from .pack_cache import PACKED

__all__ = ["matmul"]


def _matmul_shape(a, b, ta, tb):
    if len(a) < 1 or len(b) < 1:
        raise OpError("inputs must be at least 1-d")
    a1, b1 = len(a) == 1, len(b) == 1
    a2 = (1,) + tuple(a) if a1 else tuple(a)
    b2 = tuple(b) + (1,) if b1 else tuple(b)
    if ta and not a1:
        a2 = a2[:-2] + (a2[-1], a2[-2])
    if tb and not b1:
        b2 = b2[:-2] + (b2[-1], b2[-2])
    if a2[-1] != b2[-2]:
        raise OpError(f"inner dimensions differ: {a2[-1]} vs {b2[-2]}")
    batch = a2[:-2]
    if batch != b2[:-2]:  # equal batch dims (plain matrices too) need no broadcasting
        try:
            batch = np.broadcast_shapes(a2[:-2], b2[:-2])
        except ValueError:
            raise OpError("batch dimensions cannot be broadcast") from None
    out = tuple(batch) + ((a2[-2],) if not a1 else ()) + ((b2[-1],) if not b1 else ())
    return out


def _matmul_infer(metas, transpose_a, transpose_b):
    a, b = metas
    # Equal dtypes (the usual case) promote to themselves; result_type costs more than
    # the rest of the inference.
    dtype = a.dtype if a.dtype == b.dtype else np.result_type(a.dtype, b.dtype)
    if dtype == np.bool_:
        raise OpError("matmul of bool tensors is not defined")
    return [(_matmul_shape(a.shape, b.shape, transpose_a, transpose_b), dtype)]


def _t(x, flag):
    return np.swapaxes(x, -1, -2) if flag and x.ndim >= 2 else x


def _matmul_compute(arrays, transpose_a, transpose_b):
    a, b = arrays
    dtype = a.dtype if a.dtype == b.dtype else np.result_type(a, b)
    if dtype in (np.float32, np.float64):
        return _matmul_gemm(a.astype(dtype, copy=False), b.astype(dtype, copy=False),
                            transpose_a, transpose_b)
    return np.matmul(_t(a, transpose_a).astype(dtype, copy=False),
                     _t(b, transpose_b).astype(dtype, copy=False))


def _gemm_operand(x, flag):
    """``(3-D C-contiguous stack, transposed flag)`` for a >= 2-D operand.

    A swapped-axes view whose base layout is C-contiguous is passed untransposed with
    the flag flipped, so BLAS reads it in place (no copy)."""
    lead = x.shape[:-2]
    rows, cols = x.shape[-2:]
    count = math.prod(lead)  # shapes are ints: no array round trip per call
    if not x.flags.c_contiguous:
        xt = np.swapaxes(x, -1, -2)
        if xt.flags.c_contiguous:
            return xt.reshape((count, cols, rows)), not flag, lead
        x = np.ascontiguousarray(x)
    return x.reshape((count, rows, cols)), flag, lead


def _matrix_operand(x, flag):
    """``(C-contiguous matrix, transposed flag)`` for a 2-D operand (a transposed view
    is read in place with the flag flipped, as in :func:`_gemm_operand`)."""
    if x.flags.c_contiguous:
        return x, flag
    if x.T.flags.c_contiguous:
        return x.T, not flag
    return np.ascontiguousarray(x), flag


def _matmul_2d(a, b, transpose_a, transpose_b):
    # Two matrices (dense layers and their gradients): one product without the batch
    # bookkeeping of the general path, which costs more than a small layer's GEMM.
    a, ta = _matrix_operand(a, transpose_a)
    b, tb = _matrix_operand(b, transpose_b)
    m, k = (a.shape[1], a.shape[0]) if ta else a.shape
    kb, n = (b.shape[1], b.shape[0]) if tb else b.shape
    if k != kb:
        raise OpError(f"inner dimensions differ: {k} vs {kb}")
    # An empty inner dimension sums nothing: zeros (BLAS may leave C unwritten).
    c = (np.zeros if k == 0 else np.empty)((m, n), a.dtype)
    _product_into(a, b, ta, tb, c)
    return c


# float32 products on which matmul.pyx's kernel (B packed once, A read in place) beats
# scipy's OpenBLAS, measured on the Zen 4 machine at 1 and 2 threads: 0.63-0.92x BLAS's
# time from 32 x 512 x 512 to 1024 x 256 x 256 and on an MLP's layers and gradients
# (64 x 784 x 128, 784 x 64 x 128, 64 x 128 x 784), level with onnxruntime's MLAS;
# batched, 0.71-0.89x for attention's (128 x 64) @ (64 x 128) and alike. But 2.6x for
# one row (BLAS's gemv), 1.2-1.3x with under 64 columns and 1.03-1.06x with 100 (the
# last 32-column strip mostly padding), and level on products too small for the packing
# to pay.
_MM_MIN_ROWS = 2
_MM_MIN_COLS = 64
_MM_MAX_PADDING = 0.25  # of the columns, in the last strip
_MM_MIN_WORK = 1 << 15


def _kernel_pays(dtype, m, n, k):
    """Whether matmul.pyx's kernel is the faster one for an ``m x k @ k x n`` product."""
    return dtype == np.float32 and _mm_k.fast() and m >= _MM_MIN_ROWS and \
        n >= _MM_MIN_COLS and (-n % _mm_k.STRIP) <= _MM_MAX_PADDING * n and \
        m * n * k >= _MM_MIN_WORK


def _product_into(a, b, ta, tb, c):
    """``c = op(a) @ op(b)`` for C-contiguous matrices (``op`` transposes where the flag
    says): matmul.pyx's kernel for float32 where it is faster, else BLAS."""
    m, n = c.shape
    k = a.shape[0] if ta else a.shape[1]
    if c.dtype == a.dtype == b.dtype and _kernel_pays(c.dtype, m, n, k):
        # A constant right operand (a weight) is packed once (cached by identity, as
        # conv weights are); others are packed per product.
        nt = nc.threads(m * n * k)
        packed = PACKED.get(("matmul_b", tb), b, lambda w: _mm_k.pack_b(w, tb, nt))
        _mm_k.gemm(a, packed, c, ta, nt)
        return
    nc.blas_single_thread()
    _gemm_k.gemm_split(a, b, c, ta, tb, nthreads=nc.threads(m * n * k))


def _matmul_gemm(a, b, transpose_a, transpose_b):
    # float32/float64 through gemm.pyx: BLAS at one thread, products (or column blocks
    # of one product) split over our OpenMP threads, so more threads never lose to
    # numpy's BLAS spinning its own pool against ours.
    if a.ndim == 2 and b.ndim == 2:
        return _matmul_2d(a, b, transpose_a, transpose_b)
    out_shape = _matmul_shape(a.shape, b.shape, transpose_a, transpose_b)
    a1, b1 = a.ndim == 1, b.ndim == 1
    a2 = a.reshape(1, -1) if a1 else a
    b2 = b.reshape(-1, 1) if b1 else b
    ta = transpose_a and not a1
    tb = transpose_b and not b1
    a3, ta, a_lead = _gemm_operand(a2, ta)
    b3, tb, b_lead = _gemm_operand(b2, tb)
    m = a3.shape[2] if ta else a3.shape[1]
    k = a3.shape[1] if ta else a3.shape[2]
    n = b3.shape[1] if tb else b3.shape[2]
    batch = a_lead if a_lead == b_lead else np.broadcast_shapes(a_lead, b_lead)
    count = math.prod(batch)
    if a3.shape[0] == count and b3.shape[0] == 1 and not ta and count > 1:
        # A stack of matrices times one matrix: a single product on the stacked rows.
        a3 = a3.reshape(1, count * m, k)
        m_all, count_all = count * m, 1
    else:
        m_all, count_all = m, count
    # An empty inner dimension sums nothing: zeros (BLAS may leave C unwritten).
    c = (np.zeros if k == 0 else np.empty)((count_all, m_all, n), a.dtype)
    ia = _batch_index(a_lead, batch, count_all)
    ib = _batch_index(b_lead, batch, count_all)
    if count_all == 1:
        # One product (a stack of rows times a matrix, as a linear layer on a batch of
        # sequences): a 2-D right operand is passed as the array itself, so that a
        # weight's packed form is found again on the next run.
        bm = b if b.ndim == 2 and b.flags.c_contiguous and tb == transpose_b else b3[ib[0]]
        _product_into(a3[ia[0]], bm, ta, tb, c[0])
        return c.reshape(out_shape)
    nthreads = nc.threads(m_all * n * k * count_all)
    if c.dtype == a3.dtype == b3.dtype and _kernel_pays(c.dtype, m, n, k):
        _mm_k.gemm_batch(a3, b3, c, ia, ib, ta, tb, nthreads)
    else:
        nc.blas_single_thread()
        _gemm_k.gemm_indexed(a3, b3, c, ia, ib, ta, tb, nthreads)
    return c.reshape(out_shape)


def _batch_index(lead, batch, count):
    """Which matrix of an operand with batch dims ``lead`` each of the ``count`` products
    reads (numpy broadcasting of ``lead`` against ``batch``)."""
    if count == 1:
        return np.zeros(1, np.int64)
    own = math.prod(lead)
    idx = np.arange(own, dtype=np.int64).reshape(lead) if lead else np.zeros((), np.int64)
    return np.ascontiguousarray(np.broadcast_to(idx, batch).reshape(-1))


def _matmul_grad(inputs, outputs, grads, transpose_a, transpose_b):
    from .elementwise import _unbroadcast
    from .movement import reshape

    a, b = inputs
    g = grads[0]
    a_shape, b_shape = a.shape, b.shape
    # Promote 1-d operands to matrices so one rule covers every case.
    a2 = reshape(a, [1] + a_shape, zero_copies=False) if len(a_shape) == 1 else a
    b2 = reshape(b, b_shape + [1], zero_copies=False) if len(b_shape) == 1 else b
    g2 = g
    if len(a_shape) == 1 or len(b_shape) == 1:
        # A 1-d operand dropped an axis from the output: put it back (only then, so
        # the gradient graph carries no identity reshapes).
        g2 = reshape(g, _matmul_shape(a2.shape, b2.shape, transpose_a, transpose_b),
                     zero_copies=False)
    if transpose_a:
        ga = matmul(b2, g2, transposeA=transpose_b, transposeB=True)
    else:
        ga = matmul(g2, b2, transposeB=not transpose_b)
    if transpose_b:
        gb = matmul(g2, a2, transposeA=True, transposeB=transpose_a)
    else:
        gb = matmul(a2, g2, transposeA=not transpose_a)
    ga = _unbroadcast(ga, a2.shape)
    gb = _unbroadcast(gb, b2.shape)
    if len(a_shape) == 1:
        ga = reshape(ga, a_shape, zero_copies=False)
    if len(b_shape) == 1:
        gb = reshape(gb, b_shape, zero_copies=False)
    return [ga, gb]


register(OpDef("matmul", _matmul_infer, _matmul_compute, _matmul_grad))


def _matmul_bias_infer(metas, transpose_a, transpose_b, bias_first, relu):
    a, b, bias = metas
    (shape, dtype), = _matmul_infer([a, b], transpose_a, transpose_b)
    if bias.dtype != dtype:
        raise OpError(f"bias dtype {bias.dtype} differs from the product's {dtype}")
    try:
        fits = np.broadcast_shapes(shape, tuple(bias.shape)) == shape
    except ValueError:
        fits = False
    if not fits:
        raise OpError(f"bias of shape {list(bias.shape)} does not broadcast to the "
                      f"product's {list(shape)}")
    return [(shape, dtype)]


def _matmul_bias_compute(arrays, transpose_a, transpose_b, bias_first, relu):
    a, b, bias = arrays
    out = _matmul_compute([a, b], transpose_a, transpose_b)
    # ``out`` is the product's own fresh array: the add and the relu run in place, each
    # element rounded exactly as the separate add op rounds it.
    if bias_first:
        np.add(bias, out, out=out)
    else:
        np.add(out, bias, out=out)
    if relu:
        # relu's own kernel, in place: the same values as the separate relu op
        flat = out.reshape(-1)
        _act_k.relu(flat, flat, 0.0, nc.threads(flat.size))
    return out


# ``relu(matmul(a, b) + bias)`` (``relu`` optional) as one step. Not in the op table:
# only compiled training plans use it, in place of a dense layer's three steps
# (mnn/optim/step_fusion.py); graphs keep their separate ops.
MATMUL_BIAS = OpDef("matmul_bias", _matmul_bias_infer, _matmul_bias_compute)


def matmul(a, b, transposeA=False, transposeB=False):
    """Matrix product of ``a`` and ``b`` (numpy's ``matmul`` rules; MNN's transpose flags
    swap the last two axes of an operand first).

    Parameters
    ----------
    a, b : Var or array_like
    transposeA, transposeB : bool
    """
    return apply("matmul", [to_var(a), to_var(b)], transpose_a=bool(transposeA),
                 transpose_b=bool(transposeB))[0]
