# cython: language_level=3
"""The checks of a batched matrix product whose broadcast batch dimensions are index
maps (``c[i] = op(a[ia[i]]) @ op(b[ib[i]])``), shared by gemm.pyx (BLAS) and matmul.pyx
(our kernel): inline, so each kernel file compiles its own copy."""


cdef inline int check_batched_product(str who, Py_ssize_t na, Py_ssize_t nb,
                                      Py_ssize_t batch, Py_ssize_t m, Py_ssize_t k,
                                      Py_ssize_t kb, Py_ssize_t n, Py_ssize_t cm,
                                      Py_ssize_t cn, const long[::1] ia,
                                      const long[::1] ib) except -1:
    """Raise ValueError unless ``op(a)`` (``m x k``) and ``op(b)`` (``kb x n``) multiply
    into ``c``'s ``cm x cn`` products, the index maps have one entry per product, and
    every index lies inside its operand's batch (``na``, ``nb``): checked before any
    product runs, as the kernels index without bounds checks."""
    cdef Py_ssize_t i
    if k != kb or cm != m or cn != n or ia.shape[0] != batch or ib.shape[0] != batch:
        raise ValueError(f"{who}: op(a) is ({m}, {k}), op(b) is ({kb}, {n}), c is "
                         f"({batch}, {cm}, {cn}), index maps of {ia.shape[0]} and "
                         f"{ib.shape[0]}: shapes do not match")
    for i in range(batch):
        if not (0 <= ia[i] < na and 0 <= ib[i] < nb):
            raise ValueError(f"{who}: batch index {ia[i]}/{ib[i]} outside {na}/{nb}")
    return 0
