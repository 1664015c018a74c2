"""Command-line tools of the runtime: ``mnn-bench`` (:mod:`mnn.tools.bench`)."""
