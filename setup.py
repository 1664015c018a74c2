"""Build the Cython kernels in mnn/_cython.

Every ``mnn/_cython/*.pyx`` becomes an extension ``mnn._cython.<name>``, so adding a
kernel family needs no edit here.  Kernels are built with OpenMP and, unless
``MNN_PORTABLE=1``, for the building machine's CPU (``-march=native``): the package is
built from source where it runs, and AVX-512 is where our speed comes from.
``MNN_DEBUG_BOUNDS=1`` turns Cython's bounds and wraparound checks back on.
"""
import glob
import os
import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup


def _compile_args():
    args = ["-O3", "-fopenmp", "-ffp-contract=fast"]
    if os.environ.get("MNN_PORTABLE") != "1":
        args.append("-march=native")
    return args


# C headers shared by several kernel files (e.g. the SIMD exp).
_INCLUDE = os.path.join("mnn", "_cython", "include")


def _extensions():
    exts = []
    for path in sorted(glob.glob(os.path.join("mnn", "_cython", "*.pyx"))):
        name = "mnn._cython." + os.path.splitext(os.path.basename(path))[0]
        exts.append(
            Extension(
                name,
                [path],
                include_dirs=[np.get_include(), _INCLUDE],
                depends=sorted(glob.glob(os.path.join(_INCLUDE, "*.h"))),
                extra_compile_args=_compile_args(),
                extra_link_args=["-fopenmp"],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            )
        )
    return exts


_debug = os.environ.get("MNN_DEBUG_BOUNDS") == "1"
_directives = {
    "language_level": 3,
    "boundscheck": _debug,
    "wraparound": _debug,
    "cdivision": True,
    "initializedcheck": _debug,
    "nonecheck": False,
    "embedsignature": True,
}

setup(
    ext_modules=cythonize(
        _extensions(),
        compiler_directives=_directives,
        nthreads=int(os.environ.get("MNN_BUILD_JOBS", os.cpu_count() or 1)),
    ),
)
