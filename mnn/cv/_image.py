"""Shared argument handling for mnn.cv: images in, images out, clear errors.

Every public function turns its image argument into a numpy array with :func:`as_image`
and hands its result back through :func:`wrap`, so the Var-in/Var-out and
array-in/array-out rule lives in one place.
"""
import numpy as np

from ..express import runtime
from ..express.var import Var, const

_IMAGE_DTYPES = (np.uint8, np.int8, np.uint16, np.int16, np.int32, np.float32, np.float64)


def is_var(x):
    """True for an mnn Var."""
    return isinstance(x, Var)


def as_array(x, func, name="src"):
    """A numpy view of ``x`` (Var, ndarray or nested list) for reading."""
    if isinstance(x, Var):
        return np.asarray(x)
    if isinstance(x, np.ndarray):
        return x
    try:
        return np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"mnn.cv.{func}: {name} must be an image (ndarray or Var), "
                        f"got {type(x).__name__}") from exc


def as_image(x, func, name="src", dtypes=_IMAGE_DTYPES, min_ndim=2):
    """Validate an image argument and return ``(array, batch)``.

    ``array`` is HW or HWC; ``batch`` is True when the input was 1HWC (the batch axis is
    put back by :func:`wrap`).
    """
    arr = as_array(x, func, name)
    batch = False
    if arr.ndim == 4:
        if arr.shape[0] != 1:
            raise ValueError(f"mnn.cv.{func}: {name} with 4 dimensions must be 1HWC, "
                             f"got shape {tuple(arr.shape)}")
        arr = arr[0]
        batch = True
    if arr.ndim < min_ndim or arr.ndim > 3:
        raise ValueError(f"mnn.cv.{func}: {name} must be HW, HWC or 1HWC, "
                         f"got shape {tuple(arr.shape)}")
    if arr.dtype == np.bool_:
        arr = arr.view(np.uint8)
    if arr.dtype.type not in dtypes:
        allowed = ", ".join(np.dtype(d).name for d in dtypes)
        raise TypeError(f"mnn.cv.{func}: {name} dtype {arr.dtype} is not supported "
                        f"(expected one of {allowed})")
    if arr.size == 0:
        raise ValueError(f"mnn.cv.{func}: {name} is empty (shape {tuple(arr.shape)})")
    return arr, batch


def wrap(result, like, batch=False):
    """Return ``result`` as a Var when ``like`` was a Var, else as a numpy array.

    As cv2 does, a single-channel HW1 numpy image comes back HW (cv2 returns every
    one-channel image as a 2-D array); Var images keep their layout.
    """
    if batch:
        result = result[np.newaxis]
    elif (isinstance(like, np.ndarray) and like.ndim == 3 and like.shape[2] == 1
            and isinstance(result, np.ndarray) and result.ndim == 3 and result.shape[2] == 1):
        result = result[:, :, 0]
    if isinstance(like, Var):
        return const(np.ascontiguousarray(result))
    return result


# Below this much work (output values times taps, roughly 1 ns each) a kernel runs on one
# thread: a job of under about a millisecond gains little from a second thread, and on a
# loaded machine an OpenMP region can wait tens of milliseconds for a descheduled thread.
_PARALLEL_MIN_WORK = 1 << 20


def threads(work=None):
    """Thread count for a kernel producing ``work`` values (``mnn.expr.set_thread_number``,
    or 1 for small jobs)."""
    if work is not None and work < _PARALLEL_MIN_WORK:
        return 1
    return runtime.get_thread_number()


def channels(arr):
    """Channel count of an HW or HWC array."""
    return 1 if arr.ndim == 2 else arr.shape[2]


def as_hwc(arr):
    """A contiguous HWC view (HW gets a channel axis of 1)."""
    if arr.ndim == 2:
        arr = arr[:, :, np.newaxis]
    return np.ascontiguousarray(arr)


def saturate(values, dtype):
    """Round to nearest-even and clip to ``dtype``'s range, as cv::saturate_cast does."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return values.astype(dtype, copy=False)
    info = np.iinfo(dtype)
    return np.clip(np.rint(values), info.min, info.max).astype(dtype)


def check_int(value, func, name, minimum=None):
    """An int parameter, optionally bounded below."""
    try:
        ivalue = int(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"mnn.cv.{func}: {name} must be an int, got {value!r}") from exc
    if ivalue != value:
        raise TypeError(f"mnn.cv.{func}: {name} must be an int, got {value!r}")
    if minimum is not None and ivalue < minimum:
        raise ValueError(f"mnn.cv.{func}: {name} must be >= {minimum}, got {ivalue}")
    return ivalue


def size_pair(size, func, name="dsize"):
    """A (width, height) pair of non-negative ints."""
    try:
        w, h = size
        w, h = int(w), int(h)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"mnn.cv.{func}: {name} must be a (width, height) pair, "
                        f"got {size!r}") from exc
    if w < 0 or h < 0:
        raise ValueError(f"mnn.cv.{func}: {name} must not be negative, got {size!r}")
    return w, h


def scalar4(value, func, name="borderValue"):
    """A cv::Scalar-like 4-tuple of floats from a number or a sequence."""
    if value is None:
        return (0.0, 0.0, 0.0, 0.0)
    if np.isscalar(value):
        return (float(value), 0.0, 0.0, 0.0)
    vals = [float(v) for v in np.asarray(value, dtype=np.float64).ravel()]
    if len(vals) > 4:
        raise ValueError(f"mnn.cv.{func}: {name} has more than 4 values: {value!r}")
    return tuple(vals + [0.0] * (4 - len(vals)))
