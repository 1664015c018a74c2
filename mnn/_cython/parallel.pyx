# cython: language_level=3
"""Thread control shared by all kernels: OpenMP's pool size follows
``mnn.express.set_thread_number``."""
cimport openmp


def openmp_max_threads():
    """OpenMP's maximum thread count in this process."""
    return openmp.omp_get_max_threads()


def set_openmp_threads(int n):
    """Set the thread count of OpenMP parallel regions started from now on."""
    openmp.omp_set_num_threads(n)
