"""mnn.Tensor: layouts, constructors and errors (MNN's rules for dimension types)."""
import mnn.expr as F
import numpy as np
import pytest

import mnn
from mnn.express.errors import MnnError

f32 = np.float32


def test_tensor_layouts_and_errors():
    nhwc = np.arange(24, dtype=f32).reshape(1, 2, 3, 4)
    t = mnn.Tensor((1, 2, 3, 4), mnn.Halide_Type_Float, nhwc,
                   mnn.Tensor_DimensionType_Tensorflow)
    caffe = mnn.Tensor(t, mnn.Tensor_DimensionType_Caffe)
    assert caffe.getShape() == (1, 4, 2, 3)
    assert caffe.copyFrom(t)
    np.testing.assert_array_equal(caffe.getNumpyData(), nhwc.transpose(0, 3, 1, 2))
    back = mnn.Tensor(caffe, mnn.Tensor_DimensionType_Tensorflow)
    caffe.copyToHostTensor(back)
    np.testing.assert_array_equal(back.getNumpyData(), nhwc)
    v = mnn.Tensor(F.const(np.ones((2, 2), np.int32)))
    assert v.getDataType() is mnn.Halide_Type_Int and v.getData() == (1, 1, 1, 1)
    with pytest.raises(MnnError, match="does not fit"):
        caffe.copyFrom(np.zeros(5, f32))
    with pytest.raises(MnnError, match="4 values for shape"):
        mnn.Tensor((2, 3), mnn.Halide_Type_Float, [1, 2, 3, 4], 1)
    with pytest.raises(MnnError, match="dimension type 7"):
        mnn.Tensor((2, 3), mnn.Halide_Type_Float, 7)
