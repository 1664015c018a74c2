"""Samples of ``onnx_dft``/``onnx_stft`` (mnn/express/ops/onnx_fourier.py; reference:
torch.fft and torch.stft) and ``bitcast`` (onnx_bitcast.py; reference: numpy views, with
ml_dtypes for bfloat16)."""
import ml_dtypes
import numpy as np
import torch
from opdb_core import Sample, values


def _to_complex(x):
    t = torch.from_numpy(x.astype(np.float64))
    return t[..., 0] if x.shape[-1] == 1 else torch.complex(t[..., 0], t[..., 1])


def _pairs(z, dtype):
    return torch.stack([z.real, z.imag], -1).numpy().astype(dtype)


def _dft_ref(x, axis, length, inverse, onesided):
    z = _to_complex(x)
    a = axis % x.ndim
    n = (2 * (x.shape[a] - 1) if inverse and onesided else x.shape[a]) if length == -1 \
        else length
    if inverse and onesided:
        return torch.fft.irfft(z, n=n, dim=a).numpy()[..., None].astype(x.dtype)
    if inverse:
        return _pairs(torch.fft.ifft(z, n=n, dim=a), x.dtype)
    out = torch.fft.fft(z, n=n, dim=a)
    if onesided:
        out = out.narrow(a, 0, n // 2 + 1)
    return _pairs(out, x.dtype)


def _stft_ref(x, *window, step, length, onesided):
    z = _to_complex(x)
    w = torch.from_numpy(window[0].astype(np.float64)) if window else \
        torch.ones(length, dtype=torch.float64)
    out = torch.stft(z, n_fft=length, hop_length=step, win_length=length, window=w,
                     center=False, onesided=onesided and x.shape[-1] == 1,
                     return_complex=True)
    out = out.transpose(1, 2)  # torch: [batch, bins, frames]
    if onesided and x.shape[-1] == 2:
        out = out[..., :length // 2 + 1]
    return _pairs(out, x.dtype)


def _bitcast_ref(x, src, dst):
    narrow = {"bfloat16": ml_dtypes.bfloat16}
    storage = {"float16": np.float32, "bfloat16": np.float32, "int16": np.int32,
               "uint16": np.int32, "uint32": np.int64, "uint64": np.int64}
    s = narrow.get(src, src)
    d = narrow.get(dst, dst)
    viewed = x.astype(s).view(d)
    return viewed.astype(storage.get(dst, dst))


_REAL = values((2, 6, 5, 1), np.float32, seed=1)
_CPLX = values((2, 6, 5, 2), np.float64, seed=2)
_SIG = values((2, 40, 1), np.float32, seed=3)
_CSIG = values((1, 33, 2), np.float64, seed=4)
_WIN = np.hanning(8).astype(np.float32)

SAMPLES = {
    "onnx_dft": [
        Sample([_REAL], dict(axis=1, length=-1, inverse=False, onesided=False), _dft_ref,
               rtol=1e-4, atol=1e-4),
        Sample([_REAL], dict(axis=-2, length=8, inverse=False, onesided=True), _dft_ref,
               rtol=1e-4, atol=1e-4, note="padded onesided"),
        Sample([_CPLX], dict(axis=2, length=3, inverse=False, onesided=False), _dft_ref,
               note="cut"),
        Sample([_CPLX], dict(axis=1, length=-1, inverse=True, onesided=False), _dft_ref,
               note="inverse"),
        Sample([_CPLX], dict(axis=2, length=-1, inverse=True, onesided=True), _dft_ref,
               note="irfft"),
    ],
    "onnx_stft": [
        Sample([_SIG], dict(step=4, length=8, onesided=True), _stft_ref, rtol=1e-4,
               atol=1e-4),
        Sample([_SIG, _WIN], dict(step=3, length=8, onesided=False), _stft_ref, rtol=1e-4,
               atol=1e-4, note="window"),
        Sample([_CSIG, np.hanning(6)], dict(step=5, length=6, onesided=False), _stft_ref,
               note="complex"),
    ],
    "bitcast": [
        Sample([values((3, 4), np.float32, seed=5)], dict(src="float32", dst="int32"),
               _bitcast_ref),
        Sample([np.array([1, -1, 2 ** 31 - 1], np.int32)], dict(src="int32", dst="float32"),
               _bitcast_ref, rtol=0, atol=0),
        Sample([values((5,), np.float64, seed=6)], dict(src="float64", dst="int64"),
               _bitcast_ref),
        Sample([np.array([0, 1, 40000, 65535], np.int32)], dict(src="uint16", dst="int16"),
               _bitcast_ref),
        Sample([np.array([-1, 5], np.int32)], dict(src="int16", dst="float16"),
               _bitcast_ref, rtol=0, atol=0),
        Sample([np.array([1.5, -2.0, 3.0], np.float32)], dict(src="bfloat16", dst="int16"),
               _bitcast_ref),
        Sample([np.array([16320, -16384], np.int32)], dict(src="int16", dst="bfloat16"),
               _bitcast_ref, rtol=0, atol=0),
        Sample([np.array([3, 4294967295], np.int64)], dict(src="uint32", dst="int32"),
               _bitcast_ref),
        Sample([np.array([True, False])], dict(src="bool", dst="uint8"), _bitcast_ref),
        Sample([np.array([-1, 7], np.int8)], dict(src="int8", dst="uint8"), _bitcast_ref),
        Sample([np.array(2.0, np.float32)], dict(src="float32", dst="uint32"), _bitcast_ref,
               note="scalar"),
    ],
}

REJECTS = {
    "onnx_dft": [Sample([_REAL], dict(axis=3, length=-1, inverse=False, onesided=False)),
                 Sample([values((3, 4), np.float32)],
                        dict(axis=0, length=-1, inverse=False, onesided=False)),
                 Sample([np.ones((2, 3, 1), np.int32)],
                        dict(axis=1, length=-1, inverse=False, onesided=False))],
    "onnx_stft": [Sample([_SIG], dict(step=0, length=8, onesided=True)),
                  Sample([_SIG], dict(step=1, length=41, onesided=True)),
                  Sample([_SIG, np.ones(3, np.float32)], dict(step=1, length=8,
                                                              onesided=True))],
    "bitcast": [Sample([np.ones(2, np.float32)], dict(src="float32", dst="int64")),
                Sample([np.ones(2, np.int32)], dict(src="float32", dst="int32")),
                Sample([np.ones(2, np.float32)], dict(src="float32", dst="complex64"))],
}
