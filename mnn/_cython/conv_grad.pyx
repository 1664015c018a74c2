# cython: language_level=3
"""Layout kernels of the convolution gradients (mnn/express/ops/nn_conv.py).

The weight and input gradients multiply by the output gradient ``dy`` with the images of
a chunk side by side: ``(O, images * P)`` instead of ``dy``'s ``(images, O, P)``. numpy's
transposed copy runs on one thread; this one splits the rows over the kernel threads.
"""
from cython.parallel cimport prange
from libc.string cimport memcpy

ctypedef fused real_t:
    float
    double


def images_side_by_side(const real_t[:, :, ::1] dy, real_t[:, ::1] out, int nthreads=1):
    """``out[o, i * P:(i + 1) * P] = dy[i, o, :]`` for every image ``i`` and channel ``o``.

    ``dy`` is ``(images, O, P)``, ``out`` ``(O, images * P)``, both C-contiguous and of
    one dtype.
    """
    cdef Py_ssize_t n = dy.shape[0], o = dy.shape[1], p = dy.shape[2]
    if out.shape[0] != o or out.shape[1] != n * p or nthreads < 1:
        raise ValueError(f"images_side_by_side kernel: dy ({n}, {o}, {p}) does not fit "
                         f"out ({out.shape[0]}, {out.shape[1]})")
    if n == 0 or o == 0 or p == 0:
        return
    cdef Py_ssize_t r, i
    for r in prange(o, nogil=True, num_threads=nthreads, schedule="static"):
        for i in range(n):
            memcpy(&out[r, i * p], &dy[i, r, 0], p * sizeof(real_t))
