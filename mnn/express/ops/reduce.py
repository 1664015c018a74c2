"""Reductions: MNN's ``reduce_{sum,mean,max,min,prod,any,all}``.

``axis=[]`` (MNN's default) or ``None`` reduces over every axis. Negative axes count from
the end. Sums of integers keep the integer dtype (MNN), unlike numpy's widening to int64.
"""
import numpy as np

from ..._cython import elementwise as _ew_kernels
from ..._cython import pool as _pool_kernels
from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..runtime import get_thread_number
from ..var import to_var

__all__ = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
           "reduce_any", "reduce_all", "normalize_axes"]


def normalize_axes(axis, ndim, opname="reduce"):
    """Axes as a sorted tuple of non-negative ints; ``None``/``[]`` means all axes.

    Raises
    ------
    OpError
        If an axis is out of range or repeated.
    """
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = [int(axis)]
    axis = [int(a) for a in axis]
    if not axis:
        return tuple(range(ndim))
    out = []
    for a in axis:
        if not -ndim <= a < max(ndim, 1):
            raise OpError(f"axis {a} is out of range for a {ndim}-d input")
        a = a % ndim if ndim else 0
        if a in out:
            raise OpError(f"axis {a} is repeated in {axis}")
        out.append(a)
    return tuple(sorted(out))


# The ufunc whose reduce the numpy function runs (same result for float arrays).
_UFUNCS = {"reduce_sum": np.add, "reduce_max": np.maximum, "reduce_min": np.minimum,
           "reduce_prod": np.multiply}


def _reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _reduce_op(name, fn, out_dtype, grad=None, needs_elements=False):
    def infer(metas, axes, keepdims):
        (m,) = metas
        axes = normalize_axes(axes, len(m.shape))
        if needs_elements and any(m.shape[a] == 0 for a in axes):
            raise OpError(f"zero-size axis has no {name[7:]}")
        return [(_reduced_shape(m.shape, axes, keepdims), out_dtype(m.dtype))]

    def compute(arrays, axes, keepdims):
        x = arrays[0]
        axes = normalize_axes(axes, x.ndim)
        if name in ("reduce_sum", "reduce_mean") and len(axes) == x.ndim:
            total = _compiled_sum(x)
            if total is not None:
                if name == "reduce_mean":
                    total /= x.size
                shape = (1,) * x.ndim if keepdims else ()
                return np.asarray(total, dtype=x.dtype).reshape(shape)
        if name == "reduce_mean":
            out = _trailing_mean(x, axes, keepdims)
            if out is not None:
                return out
        if ufunc is not None and x.dtype.kind == "f" and type(x) is np.ndarray:
            # What np.sum/max/min/prod call for a float array, without their dispatch
            # layer (a third of a small reduction's time; bias gradients are small).
            out = ufunc.reduce(x, axis=axes, keepdims=keepdims)
        else:
            out = fn(x, axis=axes, keepdims=keepdims)
        return np.asarray(out, dtype=out_dtype(x.dtype))

    ufunc = _UFUNCS.get(name)
    register(OpDef(name, infer, compute, grad))

    def public(x, axis=[], keepdims=False):  # noqa: B006 - MNN's default, never mutated
        x = to_var(x)
        try:
            axes = normalize_axes(axis, x.ndim) if x.expr.metas[x.index].shape is not None \
                else (None if axis is None else tuple(np.atleast_1d(axis).tolist()))
        except OpError as exc:
            raise OpError(f"{name}: {exc} (input shape {x.shape})") from None
        return apply(name, [x], axes=axes, keepdims=bool(keepdims))[0]

    public.__name__ = name
    public.__qualname__ = name
    public.__doc__ = (f"``{name}`` of ``x`` over ``axis`` (all axes when empty).\n\n"
                      "Parameters\n----------\nx : Var or array_like\n"
                      "axis : int or sequence of int\nkeepdims : bool\n\n"
                      "Returns\n-------\nVar\n")
    return public


# Below this many elements numpy's own sum is as fast; above it the compiled one (SIMD
# lanes, all kernel threads) is faster.
COMPILED_MIN_SIZE = 1 << 14
# Threads only pay off on larger arrays.
PARALLEL_MIN_SIZE = 1 << 17


def _compiled_sum(x):
    """Sum of a large contiguous float array with the compiled kernel (block sums added
    in float64), or None when that does not apply."""
    if x.size < COMPILED_MIN_SIZE or x.dtype.kind != "f" or not x.flags.c_contiguous:
        return None
    nthreads = get_thread_number() if x.size >= PARALLEL_MIN_SIZE else 1
    return _ew_kernels.sum_all(x.reshape(-1), nthreads)


# Mean over trailing axes (a CNN's global average pool: 7x7 planes) by the pooling
# kernel's plane reduction: the op took 33 us on a (1, 1280, 7, 7) array with numpy's
# mean over two axes, 15 with the kernel (6 since it sums float32 planes with AVX-512
# vectors). Each of its 16 lanes (32 for float32 with AVX-512) sums its share of a plane
# in order, so the planes are bounded to keep the float32 error at numpy's pairwise
# level; planes under 16 values are added in order, as numpy does.
TRAILING_MEAN_MAX_PLANE = 4096


def _trailing_mean(x, axes, keepdims):
    """Mean over ``axes`` when they are the last axes of a C-contiguous float32/float64
    array with planes of 1 .. TRAILING_MEAN_MAX_PLANE elements, else None."""
    ndim = x.ndim
    if type(x) is not np.ndarray or x.dtype not in _POOLED or not x.flags.c_contiguous or \
            not axes or len(axes) == ndim or axes != tuple(range(ndim - len(axes), ndim)):
        return None
    rows, plane = 1, 1
    for d in x.shape[:ndim - len(axes)]:
        rows *= d
    for d in x.shape[ndim - len(axes):]:
        plane *= d
    if not 0 < plane <= TRAILING_MEAN_MAX_PLANE:
        return None
    out = np.empty(rows, x.dtype)
    _pool_kernels.global_forward(x.reshape(rows, plane), out, False,
                                get_thread_number() if x.size >= PARALLEL_MIN_SIZE else 1)
    return out.reshape(_reduced_shape(x.shape, axes, keepdims))


_POOLED = (np.dtype(np.float32), np.dtype(np.float64))


def _same(dt):
    return dt


def _sum_dtype(dt):
    return np.dtype(np.int32) if dt == np.bool_ else dt


def _mean_dtype(dt):
    return dt if dt.kind == "f" else np.dtype(np.float64) if dt.kind != "b" \
        else np.dtype(np.float64)


def _bool(dt):
    return np.dtype(np.bool_)


def _expand_back(g, x_shape, axes, keepdims):
    """Reshape a reduced gradient so it broadcasts against the input again."""
    from .movement import reshape

    if keepdims:
        return g
    return reshape(g, [1 if i in axes else d for i, d in enumerate(x_shape)], zero_copies=False)


def _sum_grad(inputs, outputs, grads, axes, keepdims):
    from .movement import broadcast_to

    x = inputs[0]
    axes = normalize_axes(axes, x.ndim)
    return [broadcast_to(_expand_back(grads[0], x.shape, axes, keepdims), x.shape)]


def _mean_grad(inputs, outputs, grads, axes, keepdims):
    x = inputs[0]
    axes = normalize_axes(axes, x.ndim)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    (g,) = _sum_grad(inputs, outputs, grads, axes, keepdims)
    return [g * (1.0 / max(count, 1))]


def _extreme_grad(inputs, outputs, grads, axes, keepdims):
    # Gradient goes to every position equal to the extreme, split evenly among ties
    # (torch's amax/amin rule).
    from .elementwise import cast, equal
    from .movement import broadcast_to

    x = inputs[0]
    axes = normalize_axes(axes, x.ndim)
    y = _expand_back(outputs[0], x.shape, axes, keepdims)
    g = _expand_back(grads[0], x.shape, axes, keepdims)
    mask = cast(equal(x, y), x.dtype)
    count = reduce_sum(mask, list(axes), keepdims=True)
    return [broadcast_to(g, x.shape) * mask / count]


def _prod_grad(inputs, outputs, grads, axes, keepdims):
    # d prod / d x_i = prod / x_i; written for nonzero inputs (zeros give inf/nan as in
    # the plain formula; torch special-cases them, a documented difference).
    from .movement import broadcast_to

    x = inputs[0]
    axes = normalize_axes(axes, x.ndim)
    y = _expand_back(outputs[0], x.shape, axes, keepdims)
    g = _expand_back(grads[0], x.shape, axes, keepdims)
    return [broadcast_to(g * y, x.shape) / x]


reduce_sum = _reduce_op("reduce_sum", np.sum, _sum_dtype, _sum_grad)
reduce_mean = _reduce_op("reduce_mean", np.mean, _mean_dtype, _mean_grad)
reduce_max = _reduce_op("reduce_max", np.max, _same, _extreme_grad, needs_elements=True)
reduce_min = _reduce_op("reduce_min", np.min, _same, _extreme_grad, needs_elements=True)
reduce_prod = _reduce_op("reduce_prod", np.prod, _sum_dtype, _prod_grad)
reduce_any = _reduce_op("reduce_any", np.any, _bool)
reduce_all = _reduce_op("reduce_all", np.all, _bool)
