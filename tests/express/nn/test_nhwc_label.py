"""NN ops given a Var labelled NHWC read it as channels-last data and answer in NHWC,
equal to the NCHW computation transposed (never an NHWC image read as NCHW)."""
import mnn.expr as F
import numpy as np
import pytest

RNG = np.random.default_rng(4)
X = RNG.standard_normal((2, 3, 6, 5))  # NCHW
W = RNG.standard_normal((4, 3, 3, 3))

OPS = [
    ("conv2d", lambda v: F.conv2d(v, F.const(W), None, padding=(1, 1))),
    ("conv2d_transpose", lambda v: F.conv2d_transpose(v, F.const(W[:3].copy()), None, (2, 2))),
    ("max_pool", lambda v: F.max_pool(v, (2, 2), (2, 2))),
    ("avg_pool", lambda v: F.avg_pool(v, (3, 2), (1, 2), pads=(1, 1))),
    ("global_avg_pool", F.global_avg_pool),
    ("adaptive_max_pool", lambda v: F.adaptive_max_pool(v, (2, 3))),
    ("interpolate", lambda v: F.interpolate(v, (9, 4), mode="bilinear")),
    ("resize", lambda v: F.resize(v, 2.0, 1.5)),
    ("batch_norm", lambda v: F.batch_norm(v, [0.1, 0.2, 0.3], [1.0, 2.0, 0.5])),
    ("instance_norm", F.instance_norm),
    ("group_norm", lambda v: F.group_norm(v, 3)),
    ("normalize", lambda v: F.normalize(v, 0, 0, 1e-6, [1.0, 2.0, 3.0])),
    ("lrn", lambda v: F.lrn(v, 3)),
    ("channel_shuffle", lambda v: F.channel_shuffle(v, 3)),
    ("prelu", lambda v: F.prelu(v, [0.1, 0.2, 0.3])),
]


@pytest.mark.parametrize("name,fn", OPS, ids=[o[0] for o in OPS])
def test_nhwc_labelled_input_matches_nchw_transposed(name, fn):
    ref = np.asarray(fn(F.const(X)).read())
    nhwc = F.const(np.ascontiguousarray(X.transpose(0, 2, 3, 1)), data_format=F.NHWC)
    y = fn(nhwc)
    assert y.data_format == F.NHWC
    np.testing.assert_allclose(y.read(), ref.transpose(0, 2, 3, 1), rtol=1e-12, atol=1e-12)


def test_crop_and_resize_takes_nhwc_like_the_wheel():
    boxes = F.const(np.array([[0.1, 0.2, 0.9, 0.8]]))
    ind = F.const(np.array([1], np.int32))
    ref = np.asarray(F.crop_and_resize(F.const(X), boxes, ind, (3, 4)).read())
    nhwc = F.const(np.ascontiguousarray(X.transpose(0, 2, 3, 1)), data_format=F.NHWC)
    y = F.crop_and_resize(nhwc, boxes, ind, (3, 4))
    np.testing.assert_allclose(y.read(), ref.transpose(0, 2, 3, 1), rtol=1e-12)
