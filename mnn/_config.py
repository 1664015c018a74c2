"""What ``mnn.show_config()`` reports."""
import importlib
import pkgutil

from ._version import __version__


def compiled_kernels():
    """Names of the compiled kernel modules in ``mnn._cython`` that import."""
    from . import _cython

    names = []
    for info in pkgutil.iter_modules(_cython.__path__):
        importlib.import_module(f"{_cython.__name__}.{info.name}")
        names.append(info.name)
    return sorted(names)


def config_lines():
    """The lines ``show_config`` prints."""
    import numpy
    import scipy

    from .express.runtime import get_thread_number

    lines = [f"mnn {__version__}",
             f"numpy {numpy.__version__}, scipy {scipy.__version__}",
             f"threads: {get_thread_number()}"]
    kernels = compiled_kernels()
    lines.append("compiled kernels: " + (", ".join(kernels) if kernels else "none"))
    if "sgemm" in kernels and "matmul" in kernels:
        from ._cython import matmul, sgemm

        isa, mr, nr = sgemm.info()[:3]
        lines.append(f"GEMM tile: {isa} {mr}x{nr}; float32 matmul: "
                     + ("own kernel (AVX-512)" if matmul.fast() else "BLAS"))
    try:
        from ._cython import parallel

        lines.append(f"OpenMP: {parallel.openmp_max_threads()} threads available")
    except ImportError:
        lines.append("OpenMP: kernel module 'parallel' not built")
    from threadpoolctl import threadpool_info

    blas = [f"{i['internal_api']} {i.get('version')} ({i.get('architecture')})"
            for i in threadpool_info() if i.get("user_api") == "blas"]
    lines.append("BLAS: " + (", ".join(blas) if blas else "none loaded yet"))
    return lines
