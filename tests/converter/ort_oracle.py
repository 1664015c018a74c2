"""onnxruntime as the oracle for converter tests (a module of its own: a name shared by
several folders' conftest.py cannot be imported reliably)."""


def run_ort(model, feeds):
    """Run ``model`` (a ModelProto) in onnxruntime; returns {output name: array}."""
    import onnxruntime as ort

    sess = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, feeds)))
