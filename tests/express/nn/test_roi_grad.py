"""Gradients of roi_align, roi_pooling and crop_and_resize w.r.t. the feature map against
float64 central finite differences of the forward (which itself is checked against
onnxruntime / TensorFlow's definition in test_roi.py); torch autograd references of the
grad ops are in tests/opdb/samples_nn_roi.py. Also: boxes get no gradient, the linear
grad ops are adjoints of their forwards, bad boxes raise, nms's indices carry no
gradient and detection_post_process refuses one naming the op."""
import mnn.expr as F
import numpy as np
import pytest

from mnn.express.errors import OpError

RNG = np.random.default_rng(23)


def _fd_grad(fn, x, dy, eps=1e-6):
    """d <fn(x), dy> / dx by central differences (float64)."""
    g = np.zeros_like(x)
    flat, gflat = x.reshape(-1), g.reshape(-1)
    for k in range(flat.size):
        old = flat[k]
        flat[k] = old + eps
        up = np.sum(fn(x) * dy)
        flat[k] = old - eps
        down = np.sum(fn(x) * dy)
        flat[k] = old
        gflat[k] = (up - down) / (2 * eps)
    return g


def _check(build, x, out_shape):
    """F.grad of sum(build(x) * dy) against finite differences."""
    dy = RNG.standard_normal(out_shape)
    xv = F.placeholder(list(x.shape), dtype=np.float64)
    xv.write(x)
    y = build(xv)
    assert list(y.shape) == list(out_shape)
    got, = F.grad([y], [xv], [F.const(dy)])

    def fn(a):
        xv.write(a)
        return np.asarray(build(xv).read())

    want = _fd_grad(fn, x.copy(), dy)
    np.testing.assert_allclose(got.read(), want, rtol=1e-6, atol=1e-7)
    assert np.abs(want).max() > 0.1  # the case exercises a real gradient


def _rois(r, n, h, w):
    x1 = RNG.uniform(-3, w, r)
    y1 = RNG.uniform(-3, h, r)
    x2 = x1 + RNG.uniform(0.5, w, r)
    y2 = y1 + RNG.uniform(0.5, h, r)
    return np.stack([RNG.integers(0, n, r), x1, y1, x2, y2], 1)


@pytest.mark.parametrize("mode", [F.AVEPOOL, F.MAXPOOL])
@pytest.mark.parametrize("aligned", [True, False])
@pytest.mark.parametrize("ratio", [0, 2])
def test_roi_align_grad_matches_finite_differences(mode, aligned, ratio):
    x = RNG.standard_normal((2, 3, 6, 7))
    rois = F.const(_rois(5, 2, 6, 7))
    _check(lambda v: F.roi_align(v, rois, 2, 3, 0.8, ratio, aligned, mode), x, (5, 3, 2, 3))


def test_roi_pooling_grad_matches_finite_differences():
    x = RNG.standard_normal((2, 3, 8, 9))
    rois = F.const(np.round(_rois(6, 2, 16, 18)))
    _check(lambda v: F.roi_pooling(v, rois, 3, 2, 0.5), x, (6, 3, 3, 2))


@pytest.mark.parametrize("method", [F.BILINEAR, F.NEAREST])
@pytest.mark.parametrize("crop", [(3, 4), (1, 1)])
def test_crop_and_resize_grad_matches_finite_differences(method, crop):
    x = RNG.standard_normal((2, 2, 5, 6))
    boxes = F.const(np.array([[0.1, 0.2, 0.9, 0.7], [1.1, 0.8, -0.2, 0.05],
                              [0.3, 0.3, 0.35, 0.9]]))
    ind = F.const(np.array([1, 0, 1], np.int32))
    _check(lambda v: F.crop_and_resize(v, boxes, ind, crop, method, -1.5), x,
           (3, 2) + crop)


def test_boxes_get_no_gradient():
    x = F.const(RNG.standard_normal((1, 2, 5, 5)).astype(np.float32))
    roi = F.const(np.array([[0, 0.5, 0.5, 3.5, 4.0]], np.float32))
    y = F.roi_align(x, roi, 2, 2, 1.0, 2, True)
    gx, groi = F.grad([F.reduce_sum(y)], [x, roi])
    assert np.abs(gx.read()).sum() > 0
    np.testing.assert_array_equal(groi.read(), np.zeros((1, 5), np.float32))


def _dot(a, b):
    return float(np.sum(np.asarray(a.read(), np.float64) * np.asarray(b.read(), np.float64)))


def test_linear_grad_ops_are_adjoints_and_twice_differentiable():
    """<A u, v> == <u, A^T v> for avg RoIAlign and crop_and_resize, and the gradient of
    the grad op w.r.t. the output gradient is the forward again."""
    u = F.const(RNG.standard_normal((2, 2, 6, 7)))
    rois = F.const(_rois(4, 2, 6, 7))
    v = F.const(RNG.standard_normal((4, 2, 3, 2)))
    g = F.placeholder([4, 2, 3, 2], dtype=np.float64)
    g.write(np.asarray(v.read()))
    y = F.roi_align(u, rois, 3, 2, 1.0, 0, True)
    at_v, = F.grad([y], [u], [g])
    np.testing.assert_allclose(_dot(y, v), _dot(u, at_v), rtol=1e-12)
    gg, = F.grad([at_v], [g], [u])  # d<A^T g, u>/dg = A u
    np.testing.assert_allclose(gg.read(), y.read(), rtol=1e-12)

    boxes = F.const(np.array([[0.1, 0.2, 0.9, 0.7], [1.1, 0.8, -0.2, 0.05]]))
    ind = F.const(np.array([1, 0], np.int32))
    z = F.crop_and_resize(u, boxes, ind, (3, 4), F.BILINEAR, 0.0)
    w = F.const(RNG.standard_normal((2, 2, 3, 4)))
    at_w, = F.grad([z], [u], [w])
    np.testing.assert_allclose(_dot(z, w), _dot(u, at_w), rtol=1e-12)


def test_max_grad_ops_refuse_second_order():
    x = F.const(RNG.standard_normal((1, 1, 5, 5)))
    roi = F.const(np.array([[0, 0.5, 0.5, 3.5, 4.0]]))
    g = F.placeholder([1, 1, 2, 2], dtype=np.float64)
    g.write(np.ones((1, 1, 2, 2)))
    gx, = F.grad([F.roi_align(x, roi, 2, 2, 1.0, 2, True, F.MAXPOOL)], [x], [g])
    with pytest.raises(OpError, match="roi_align_grad"):
        F.grad([F.reduce_sum(gx)], [g])
    gx, = F.grad([F.roi_pooling(x, roi, 2, 2, 1.0)], [x], [g])
    with pytest.raises(OpError, match="roi_pooling_grad"):
        F.grad([F.reduce_sum(gx)], [g])


@pytest.mark.parametrize("box", [[np.nan, 0, 3, 3], [0, 0, np.inf, 3]])
def test_non_finite_boxes_raise(box):
    x = F.const(np.ones((1, 1, 4, 4), np.float32))
    roi = F.const(np.array([[0] + box], np.float32))
    with pytest.raises(OpError, match="roi_align.*not finite"):
        F.roi_align(x, roi, 2, 2, 1.0, 0, True).read()
    with pytest.raises(OpError, match="roi_pooling.*not finite"):
        F.roi_pooling(x, roi, 2, 2, 1.0).read()
    # crop_and_resize: non-finite sample positions are outside the image.
    y = F.crop_and_resize(x, F.const(np.array([box], np.float32)),
                          F.const(np.array([0], np.int32)), (2, 2), F.BILINEAR, 7.0)
    assert np.isin(np.asarray(y.read()), [1.0, 7.0]).all()
    gx, = F.grad([F.reduce_sum(y)], [x])
    assert np.isfinite(np.asarray(gx.read())).all()


def test_huge_and_outside_boxes_stay_in_bounds():
    x = F.const(np.ones((1, 2, 4, 4), np.float32))
    far = F.const(np.array([[0, 100, 100, 120, 130], [0, -50, -40, -30, -35]], np.float32))
    for y in (F.roi_align(x, far, 2, 2, 1.0, 2, False),
              F.roi_pooling(x, far, 2, 2, 1.0)):
        gx, = F.grad([F.reduce_sum(y)], [x])
        np.testing.assert_array_equal(gx.read(), np.zeros((1, 2, 4, 4), np.float32))
    huge = F.const(np.array([[0, 0, 0, 1e9, 1e9]], np.float32))
    with pytest.raises(OpError, match="roi_align: box 0 .*samples per bin"):
        F.roi_align(x, huge, 2, 2, 1.0, 0, True).read()


def test_batch_index_out_of_range_raises_in_gradient():
    x = F.const(np.ones((1, 1, 4, 4), np.float32))
    boxes = F.const(np.array([[0.1, 0.1, 0.8, 0.8]], np.float32))
    ind = F.placeholder([1], dtype=np.int32)
    ind.write(np.array([0], np.int32))
    gx, = F.grad([F.reduce_sum(F.crop_and_resize(x, boxes, ind, (2, 2)))], [x])
    gx.read()
    ind.write(np.array([3], np.int32))
    with pytest.raises(OpError, match="crop_and_resize.*batch index"):
        gx.read()


def test_nms_index_output_has_no_gradient_but_gathers_do():
    boxes = F.const(np.array([[0, 0, 1, 1], [0, 0, 1, 1.05], [2, 2, 3, 3]], np.float32))
    scores = F.const(np.array([0.9, 0.8, 0.7], np.float32))
    keep = F.nms(boxes, scores, 3, 0.5)
    kept = F.gather(scores, keep)
    gs, = F.grad([F.reduce_sum(kept)], [scores])
    np.testing.assert_array_equal(gs.read(), [1, 0, 1])
    # The int indices carry no gradient: a value computed from them alone has none.
    gz, = F.grad([F.reduce_sum(F.cast(keep, np.float32))], [scores])
    np.testing.assert_array_equal(gz.read(), np.zeros(3, np.float32))


def test_detection_post_process_refuses_gradient():
    anchors = F.const(np.array([[0.5, 0.5, 1, 1], [0.2, 0.2, 0.4, 0.4]], np.float32))
    enc = F.const(np.zeros((1, 2, 4), np.float32))
    cls = F.const(np.array([[[0.1, 0.9], [0.2, 0.8]]], np.float32))
    outs = F.detection_post_process(enc, cls, anchors, 1, 2, 2, 1, 0.1, 0.5, False,
                                    [10.0, 10.0, 5.0, 5.0])
    with pytest.raises(OpError, match="op detection_post_process has no gradient rule"):
        F.grad([F.reduce_sum(outs[0])], [enc])
