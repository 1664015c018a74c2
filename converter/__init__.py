"""The offline converter: ONNX models to express graphs to ``.mnn`` files.

``converter.onnx`` reads an ONNX ``ModelProto`` into an express graph (the IR shared with
the runtime and the file writer), ``converter.passes`` rewrites that graph, and
``converter.cli`` is the ``mnnconvert`` command. The runtime (``mnn``) never imports this
package.
"""
