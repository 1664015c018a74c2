"""Compiled kernels only. Python validates shapes, dtypes and contiguity before calling
any function here; kernels trust their arguments and run without the GIL."""
