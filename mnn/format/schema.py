"""The .mnn file's tables and enums, in our own compact notation.

These are facts about MNN 3.x's FlatBuffer layout (table names, field order, field types,
defaults, enum numbers), written down as data for :mod:`mnn.format.flat`, which reads and
writes any table described here. Only the tables the engine and the JSON dump need are
listed; a union member without a description is kept as opaque bytes' position (reported,
not decoded).

Field notation, one field per whitespace-separated word, in slot order::

    name:type[=default][@Enum]

``type`` is a scalar (``bool i8 u8 i16 u16 i32 u32 i64 f32 f64``), ``str``, a table name,
or ``[t]`` for a vector of any of those. ``name:union@Union`` is a union field: it takes
two slots (the member's type number, then the member table) as FlatBuffers lays unions out.
"""

__all__ = [
    "ENUMS",
    "OP_TYPES",
    "OP_TYPE_NAMES",
    "SCALAR_FORMATS",
    "TABLES",
    "UNIONS",
    "Field",
    "field_specs",
]


def _names(text):
    """The whitespace-separated names in ``text`` (keeps long name lists compact)."""
    return text.split()


# struct format and size of each scalar type (little endian).
SCALAR_FORMATS = {
    "bool": ("<?", 1),
    "i8": ("<b", 1),
    "u8": ("<B", 1),
    "i16": ("<h", 2),
    "u16": ("<H", 2),
    "i32": ("<i", 4),
    "u32": ("<I", 4),
    "i64": ("<q", 8),
    "f32": ("<f", 4),
    "f64": ("<d", 8),
}

_TABLE_TEXT = {
    # Net and its parts (MNN.fbs)
    "Net": "bizCode:str extraTensorDescribe:[TensorDescribe] extraInfo:ExtraInfo oplists:[Op] "
    "outputName:[str] preferForwardType:i8=0@ForwardType sourceType:i8=0@NetSource "
    "tensorName:[str] tensorNumber:i32=0 usage:i8=0@Usage "
    "subgraphs:[SubGraphProto] mnn_uuid:str",
    "Op": "inputIndexes:[i32] main:union@OpParameter name:str outputIndexes:[i32] "
    "type:i32=0@OpType defaultDimentionFormat:i8=1@MNN_DATA_FORMAT externalPath:str",
    "View": "offset:i32 stride:[i32]",
    "Region": "src:View dst:View size:[i32] origin:i32",
    "TensorDescribe": "blob:Blob index:i32 name:str regions:[Region] quantInfo:TensorQuantInfo",
    "SubGraphProto": "name:str inputs:[i32] outputs:[i32] tensors:[str] nodes:[Op] "
    "extraTensorDescribe:[TensorDescribe]",
    "TensorQuantInfo": "scale:f32 zero:f32=0 min:f32=-128 max:f32=127 type:i32=0@DataType",
    "ExtraInfo": "buffer:[i8] name:str version:str",
    "Plugin": "type:str attr:[Attribute]",
    "Extra": "type:str engine:str info:[i8] attr:[Attribute] vector:bool",
    "StringVec": "data:[str]",
    "WhileParam": "cond_graph:str body_graph:str aliases_inputs:[StringVec] "
    "aliases_outputs:[str] aliases_updates:[StringVec]",
    "IfParam": "then_graph:str else_graph:str aliases_inputs:[StringVec] "
    "aliases_outputs:[StringVec]",
    "RegionCommand": "op:Op steps:[i32] size:[i32] indexes:[i32] view:[View] fuse:i32=-1 "
    "iterIndexes:[i32]",
    "LoopParam": "tensorNumber:i32 outputIndexes:[i32] inputIndexes:[i32] "
    "extraTensorInfos:[TensorDescribe] parallel:bool=1 loopNumber:i32 "
    "commands:[RegionCommand] initCommand:[RegionCommand]",
    "AttentionParam": "kv_cache:bool=1 kv_shared_layer:str layer_index:i32=-1 "
    "kv_shared_layer_index:i32=-1 mhq_quant:[TensorQuantInfo] "
    "output_c4:bool attnScale:f32",
    "ShapeParam": "hasStart:bool start:i32 hasEnd:bool end:i32",
    "StftParam": "n_fft:i32 hop_length:i32 abs:bool=1",
    # Tensor.fbs
    "Blob": "dims:[i32] dataFormat:i8=0@MNN_DATA_FORMAT dataType:i32=1@DataType uint8s:[u8] "
    "int8s:[i8] int32s:[i32] int64s:[i64] float32s:[f32] strings:[str] external:[i64]",
    "ListValue": "s:[str] i:[i32] f:[f32] b:[bool] type:[i32]",
    "Attribute": "s:str i:i32 b:bool key:str type:i32@DataType f:f32 tensor:Blob "
    "list:ListValue func:NamedAttrList",
    "NamedAttrList": "name:str attr:[Attribute]",
    # CaffeOp.fbs
    "Convolution2DCommon": "padX:i32 padY:i32 kernelX:i32=1 kernelY:i32=1 strideX:i32=1 "
    "strideY:i32=1 dilateX:i32=1 dilateY:i32=1 padMode:i8@PadMode "
    "group:i32=1 outputCount:i32 inputCount:i32 relu:bool relu6:bool "
    "pads:[i32] outPads:[i32] hasOutputShape:bool",
    "Convolution3DCommon": "dilates:[i32] strides:[i32] kernels:[i32] pads:[i32] "
    "padMode:i8@PadMode inputCount:i32 outputCount:i32 relu:bool "
    "relu6:bool group:i32=1 outPads:[i32] hasOutputShape:bool",
    "SparseCommon": "method:i8 args:[Attribute]",
    "IDSTQuan": "buffer:[i8] alpha:[f32] type:i32 useInt32:bool quantScale:f32 scaleIn:f32 "
    "scaleOut:f32 aMaxOrBits:i32 aMin:i32 readType:i32 has_scaleInt:bool "
    "shapeInt32:bool weightSize:u32 index:[u32] alphaFp16:[u16] scaleStorage:i8",
    "QuantizedFloatParam": "weight:[i8] bias:[i32] scale:[f32] tensorScale:[f32] method:i8 "
    "nbits:i32=8 zeroPoint:i8 outputZeroPoint:i8 clampMin:i8=-128 "
    "clampMax:i8=127 winogradAttr:[i32] outputDataType:i32=6@DataType "
    "floatzeros:[f32]",
    "Convolution2D": "common:Convolution2DCommon weight:[f32] bias:[f32] quanParameter:IDSTQuan "
    "symmetricQuan:QuantizedFloatParam sparseParameter:SparseCommon "
    "external:[i64]",
    "Convolution3D": "common:Convolution3DCommon weight:[f32] bias:[f32] external:[i64]",
    "InnerProduct": "outputCount:i32 biasTerm:i32 weightSize:i32 weight:[f32] bias:[f32] "
    "axis:i32 transpose:bool quanParameter:IDSTQuan",
    "Pool": "padX:i32 padY:i32 isGlobal:bool kernelX:i32 kernelY:i32 strideX:i32 strideY:i32 "
    "type:i8@PoolType padType:i8@PoolPadType dataType:i32=1@DataType ceilModel:bool=1 "
    "pads:[i32] countType:i8@AvgPoolCountType",
    "Pool3D": "strides:[i32] kernels:[i32] pads:[i32] type:i8@PoolType padType:i8@PoolPadType "
    "isGlobal:bool",
    "Relu": "slope:f32",
    "Relu6": "minValue:f32=0 maxValue:f32=6",
    "PRelu": "slopeCount:i32 slope:[f32]",
    "ELU": "alpha:f32",
    "LRN": "regionType:i32 localSize:i32 alpha:f32 beta:f32 bias:f32=1",
    "ArgMax": "outMaxVal:i32 topK:i32 axis:i32 softmaxThreshold:i32",
    "Axis": "axis:i32",
    "Input": "dims:[i32] dtype:i32=1@DataType dformat:i8=2@MNN_DATA_FORMAT",
    "Slice": "axis:i32 slicePoints:[i32] sourceType:i8=0@NetSource",
    "BatchNorm": "channels:i32 slopeData:[f32] meanData:[f32] varData:[f32] biasData:[f32] "
    "Adata:[f32] Bdata:[f32] epsilon:f32=0.001",
    "Scale": "channels:i32 scaleData:[f32] biasData:[f32] external:[i64]",
    "Eltwise": "type:i8@EltwiseType coeff:[f32]",
    "Flatten": "axis:i32 endAxis:i32",
    "Permute": "dims:[i32]",
    "Reshape": "dims:[i32] dimType:i8@MNN_DATA_FORMAT",
    "RoiParameters": "pooledWidth:i32 pooledHeight:i32 spatialScale:f32 samplingRatio:i32=-1 "
    "aligned:bool poolType:i8=1@PoolType outputGrad:bool",
    "Interp": "widthScale:f32 heightScale:f32 outputWidth:i32 outputHeight:i32 resizeType:i32 "
    "alignCorners:bool halfPixelCenters:bool widthOffset:f32 heightOffset:f32 "
    "cubicCoeffA:f32=-0.75 ctm:i8@CoordinateTransformationMode depthScale:f32 "
    "outputDepth:i32 depthOffset:f32",
    "Resize": "xScale:f32 yScale:f32",
    "Normalize": "acrossSpatial:i32 channelShared:i32 eps:f32 scale:[f32]",
    "CumSum": "exclusive:bool reverse:bool",
    # TensorflowOp.fbs
    "BinaryOp": "opType:i32@BinaryOpOperation T:i32=1@DataType activationType:i32",
    "PackParam": "dataType:i32@DataType axis:i32",
    "StridedSliceParam": "Index:i32@DataType T:i32@DataType beginMask:i32 endMask:i32 "
    "ellipsisMask:i32 newAxisMask:i32 shrinkAxisMask:i32 fromType:i32",
    "SqueezeParam": "squeezeDims:[i32]",
    "CastParam": "srcT:i32@DataType dstT:i32@DataType",
    "ReductionParam": "operation:i8@ReductionType dim:[i32] coeff:f32 keepDims:bool "
    "dType:i32=1@DataType",
    "Gather": "Tindices:i32@DataType Tparams:i32@DataType validateIndices:bool axis:i32",
    "ExpandDims": "T:i32@DataType Tdim:i32@DataType axis:i32",
    "Selu": "scale:f32 alpha:f32",
    "UnaryOp": "opType:i32@UnaryOpOperation T:i32@DataType tableInt8:[i8]",
    "TopKV2": "T:i32=1@DataType sorted:bool largest:bool=1",
    "CropAndResize": "extrapolationValue:f32 method:i8",
    "Fill": "",
    "GatherV2": "Taxis:i32@DataType Tindices:i32@DataType Tparams:i32@DataType",
    "NonMaxSuppressionV2": "",
    "Range": "Tidx:i32@DataType",
    "Rank": "",
    "Size": "outputDataType:i32@DataType",
    "Transpose": "Tperm:i32@DataType",
    "SliceTf": "T:i32@DataType",
    "QuantizeMaxMin": "T:i32@DataType",
    "Crop": "axis:i32=2 offset:[i32]",
    "SpaceBatch": "blockShape:Blob padding:Blob",
    "MatMul": "T:i32@DataType transposeA:bool transposeB:bool weight:[f32] bias:[f32]",
    "MomentsParam": "dim:[i32] keepDims:bool=1 dType:i32=1@DataType",
    "BatchMatMulParam": "adjX:bool adjY:bool",
    "DepthSpaceParam": "blockSize:i32 mode:i8",
    "ReverseSequenceParam": "batchDim:i32 seqDim:i32",
    "OneHotParam": "dType:i32=1@DataType axis:i32=-1",
    "PadParam": "mode:i8@PadValueMode",
    "LayerNorm": "axis:[i32] epsilon:f32 gamma:[f32] beta:[f32] group:i32=1 external:[i64] "
    "useRMSNorm:bool",
    "GroupNorm": "axis:i32 epsilon:f32 gamma:[f32] beta:[f32] group:i32=1 bSwish:i32 "
    "external:[i64]",
    "RandomUniform": "seed:i32 seed2:i32 type:i32=1@DataType low:f32=0 high:f32=1",
    "LSTMBlockCell": "cell_clip:f32=3 forget_bias:f32=1 use_peephole:bool",
    "LSTM": "outputCount:i32 weightSize:i32 clippingThreshold:f32 weightI:Blob weightH:Blob "
    "bias:Blob weightIQ:Blob weightIA:Blob quantScale:f32",
    # UserDefine.fbs
    "TensorConvertInfo": "source:i8@MNN_DATA_FORMAT dest:i8@MNN_DATA_FORMAT",
    "GridSample": "mode:i8 paddingMode:i8 alignCorners:bool backward:bool",
}

# Members of the OpParameter union, in order (type number = position + 1; 0 is NONE).
_OP_PARAMETER = _names(
    "QuantizedAdd ArgMax AsString Axis BatchNorm BinaryOp Blob CastParam Convolution2D Crop "
    "CropAndResize Dequantize DetectionOutput Eltwise ExpandDims Fill Flatten Gather GatherV2 "
    "InnerProduct Input Interp LRN LSTM MatMul NonMaxSuppressionV2 Normalize PackParam Permute "
    "Plugin Pool PRelu PriorBox Proposal QuantizedAvgPool QuantizedBiasAdd QuantizedConcat "
    "QuantizedLogistic QuantizedMatMul QuantizedMaxPool QuantizedRelu QuantizedRelu6 "
    "QuantizedReshape QuantizedSoftmax QuantizeMaxMin QuantizeV2 Range Rank ReduceJoin "
    "ReductionParam Relu Relu6 RequantizationRange Requantize Reshape Resize RoiParameters Scale "
    "Selu Size Slice SliceTf SpaceBatch SqueezeParam StridedSliceParam TensorConvertInfo "
    "TfQuantizedConv2D TopKV2 Transpose UnaryOp MomentsParam RNNParam BatchMatMulParam "
    "QuantizedFloatParam DepthSpaceParam EltwiseInt8 ReverseSequenceParam Extra Pool3D "
    "Convolution3D ELU DetectionPostProcessParam OneHotParam PadParam WhileParam IfParam "
    "RandomUniform LayerNorm TensorArray LSTMBlockCell GridSample LoopParam ImageProcessParam "
    "CumSum GroupNorm FmhaV2Param FmhcaParam AttentionParam StftParam LinearAttentionParam "
    "ShapeParam RoPEParam FusedLinearParam"
)

UNIONS = {"OpParameter": ["NONE"] + _OP_PARAMETER}

# OpType numbers. Consecutive runs start at the number given with their first name.
_OP_TYPE_RUNS = [
    (
        0,
        (
            "AbsVal QuantizedAdd ArgMax AsString InstanceNorm BatchToSpaceND Copy BinaryOp Bnll "
            "Cast Concat Const Convolution ConvolutionDepthwise Crop CropAndResize ImageProcess "
            "Deconvolution DeconvolutionDepthwise Dequantize DetectionOutput Dropout Eltwise ELU "
            "Unique Exp ExpandDims Fill Flatten Im2Col Gather GatherV2 Im2Seq InnerProduct Input "
            "Interp Log LRN LSTM MatMul MoE NonMaxSuppression NonMaxSuppressionV2 Normalize Pack "
            "Padding Permute Pooling Power PReLU PriorBox Proposal QuantizedAvgPool "
            "QuantizedBiasAdd QuantizedConcat QuantizedDepthwiseConv2D QuantizedLogistic "
            "RasterAndInterpolate QuantizedMaxPool Texture RasterDiff QuantizedReshape "
            "QuantizedSoftmax QuantizeMaxMin QuantizeV2 Range Rank ReduceJoin Reduction ReLU ReLU6 "
            "RequantizationRange Requantize Reshape Resize RNN ROIPooling Scale Selu Seq2Out Shape "
            "Sigmoid Size Slice SliceTf Softmax SpaceToBatchND SpatialProduct Col2Im Segment "
            "Squeeze StridedSlice CastLike StringSplit StringToNumber TanH TfQuantizedConv2D "
            "Threshold Tile TopKV2 Transpose UnaryOp Unpack Where Moments RNNSequenceGRU "
            "BatchMatMul Unsqueeze CosineSimilarity DepthToSpace SpaceToDepth ReverseSequence "
            "Pooling3D Convolution3D MatrixBandPart GatherND DetectionPostProcess UnravelIndex "
            "ScatterNd OneHot BroadcastTo Dilation2D Interp3D"
        ),
    ),
    (
        128,
        (
            "Raster ConvertTensor ArgMin LinSpace RandomUniform TensorArray TensorArraySize "
            "TensorArrayRead TensorArrayWrite TensorArrayGather TensorArrayScatter "
            "TensorArraySplit TensorArrayConcat LSTMBlockCell Reverse ROIAlign RandomNormal "
            "TensorArrayInsert TensorArrayErase EyeLike CumSum Det CumProd ScatterElements "
            "GatherElements Svd Histogram DynamicQuant Stft"
        ),
    ),
    (
        256,
        (
            "Plugin Select ZerosLike Broastcast SetDiff1D ReluGrad Identity PoolGrad SoftmaxGrad "
            "Conv2DBackPropFilter TrainableParam BatchNorm ConvTranspose3D ZeroGrad"
        ),
    ),
    (
        299,
        (
            "Attention FmhaV2 Fmhca SeqLen2Spatial SplitGeLU GroupNorm LinearAttention RoPE "
            "FusedLinear GatedRMSNorm"
        ),
    ),
    (512, ("Extra ConvInt8 Int8ToFloat DepthwiseConvInt8")),
    (517, ("FloatToInt8 EltwiseInt8")),
    (600, ("While If")),
    (603, ("LayerNorm GridSample")),
]


def _op_types():
    table = {}
    for start, names in _OP_TYPE_RUNS:
        for offset, name in enumerate(names.split()):
            table[name] = start + offset
    return table


OP_TYPES = _op_types()  # name -> number
OP_TYPE_NAMES = {v: k for k, v in OP_TYPES.items()}

ENUMS = {
    "OpType": OP_TYPE_NAMES,
    "ForwardType": dict(enumerate(_names("CPU METAL CUDA OPENCL AUTO NNAPI OPENGLES VULKAN"))),
    "Usage": dict(enumerate(_names("INFERENCE TRAIN INFERENCE_STATIC"))),
    "NetSource": dict(enumerate(_names("CAFFE TENSORFLOW TFLITE ONNX TORCH"))),
    "MNN_DATA_FORMAT": dict(enumerate(_names("NCHW NHWC NC4HW4 NHWC4 UNKNOWN"))),
    "DataType": dict(
        enumerate(
            _names(
                "DT_INVALID DT_FLOAT DT_DOUBLE DT_INT32 DT_UINT8 DT_INT16 DT_INT8 DT_STRING "
                "DT_COMPLEX64 DT_INT64 DT_BOOL DT_QINT8 DT_QUINT8 DT_QINT32 DT_BFLOAT16 DT_QINT16 "
                "DT_QUINT16 DT_UINT16 DT_COMPLEX128 DT_HALF DT_RESOURCE DT_VARIANT"
            )
        )
    ),
    "PadMode": dict(enumerate(_names("CAFFE VALID SAME"))),
    "PoolType": dict(enumerate(_names("MAXPOOL AVEPOOL"))),
    "PoolPadType": dict(enumerate(_names("CAFFE VALID SAME"))),
    "AvgPoolCountType": dict(enumerate(_names("DEFAULT INCLUDE_PADDING EXCLUDE_PADDING"))),
    "EltwiseType": dict(enumerate(_names("PROD SUM MAXIMUM SUB"))),
    "CoordinateTransformationMode": dict(
        enumerate(
            _names(
                "NotSet AlignCorners HalfPixels PytorchHalfPixels Asymmetric TensorflowHalfPixels "
                "TensorflowCropAndResize"
            )
        )
    ),
    "BinaryOpOperation": {
        0: "ADD",
        1: "SUB",
        2: "MUL",
        3: "DIV",
        4: "MAX_TEMP",
        5: "MIN_TEMP",
        6: "POW",
        7: "REALDIV",
        8: "MINIMUM",
        9: "MAXIMUM",
        10: "GREATER",
        11: "GREATER_EQUAL",
        12: "LESS",
        13: "FLOORDIV",
        14: "SquaredDifference",
        15: "EQUAL",
        16: "LESS_EQUAL",
        17: "FLOORMOD",
        19: "MOD",
        20: "ATAN2",
        21: "LOGICALOR",
        22: "NOTEQUAL",
        23: "BITWISE_AND",
        24: "BITWISE_OR",
        25: "BITWISE_XOR",
        26: "LOGICALXOR",
        27: "LEFTSHIFT",
        28: "RIGHTSHIFT",
        29: "MUL_SILU",
    },
    "ReductionType": dict(enumerate(_names("SUM ASUM SUMSQ MEAN MAXIMUM MINIMUM PROD ANY ALL"))),
    "UnaryOpOperation": dict(
        enumerate(
            _names(
                "ABS NEG FLOOR CEIL SQUARE SQRT RSQRT EXP LOG SIN COS TAN ASIN ACOS ATAN "
                "RECIPROCAL LOG1P BNLL ACOSH SINH ASINH ATANH SIGN ROUND COSH ERF ERFC ERFINV "
                "EXPM1 SIGMOID TANH HARDSWISH GELU GELU_STANDARD SILU"
            )
        )
    ),
    "PadValueMode": dict(enumerate(_names("CONSTANT REFLECT SYMMETRIC EDGE"))),
}


class Field:
    """One field of a table: its slot, name, type and default."""

    __slots__ = ("default", "elem", "enum", "kind", "name", "slot")

    def __init__(self, slot, name, kind, elem, default, enum):
        self.slot = slot  # vtable slot (a union's member table is at slot + 1)
        self.name = name
        self.kind = kind  # "scalar", "str", "table", "vector", "union"
        self.elem = elem  # scalar type, table name, union name, or vector element type
        self.default = default
        self.enum = enum

    def __repr__(self):
        return f"Field({self.name}:{self.kind}:{self.elem}@{self.slot})"


def _parse_value(text, scalar):
    if scalar == "bool":
        return bool(int(text))
    if scalar.startswith("f"):
        return float(text)
    return int(text)


def _parse_table(text):
    fields, slot = [], 0
    for word in text.split():
        name, rest = word.split(":", 1)
        enum = None
        if "@" in rest:
            rest, enum = rest.split("@", 1)
        default = None
        if "=" in rest:
            rest, default = rest.split("=", 1)
        if rest == "union":
            fields.append(Field(slot, name, "union", enum, None, None))
            slot += 2
            continue
        if rest.startswith("["):
            kind, elem = "vector", rest[1:-1]
        elif rest in SCALAR_FORMATS:
            kind, elem = "scalar", rest
            default = (
                _parse_value(default, rest)
                if default is not None
                else (False if rest == "bool" else (0.0 if rest.startswith("f") else 0))
            )
        elif rest == "str":
            kind, elem = "str", "str"
        else:
            kind, elem = "table", rest
        fields.append(Field(slot, name, kind, elem, default, enum))
        slot += 1
    return fields


TABLES = {name: _parse_table(text) for name, text in _TABLE_TEXT.items()}


def field_specs(table):
    """The :class:`Field` list of ``table`` (KeyError naming it when unknown)."""
    try:
        return TABLES[table]
    except KeyError:
        raise KeyError(f"mnn.format: no description of table {table!r}") from None


def _check():
    for name, fields in TABLES.items():
        for f in fields:
            target = f.elem if f.kind in ("table", "vector") else None
            if target and target not in TABLES and target not in SCALAR_FORMATS and target != "str":
                raise RuntimeError(f"schema: {name}.{f.name} refers to unknown {target}")


_check()
