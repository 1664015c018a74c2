"""Samples of ``image_decode`` (mnn/express/ops/onnx_image.py; reference: Pillow, as ONNX's
own reference decoder uses it)."""
import io

import numpy as np
from opdb_core import Sample, values
from PIL import Image


def _encoded(fmt, mode="RGB", size=(7, 5), seed=0):
    arr = values((size[1], size[0], 3), np.uint8, low=0, high=255, seed=seed)
    img = Image.fromarray(arr, "RGB").convert(mode)
    out = io.BytesIO()
    img.save(out, format=fmt)
    return np.frombuffer(out.getvalue(), np.uint8).copy()


def _ref(data, pixel_format):
    img = Image.open(io.BytesIO(data.tobytes()))
    if pixel_format == "Grayscale":
        return np.asarray(img.convert("L"))[..., None]
    rgb = np.asarray(img.convert("RGB"))
    return np.ascontiguousarray(rgb[..., ::-1] if pixel_format == "BGR" else rgb)


SAMPLES = {
    "image_decode": [
        Sample([_encoded("PNG")], {"pixel_format": "RGB"}, _ref, note="png"),
        Sample([_encoded("PNG", seed=1)], {"pixel_format": "BGR"}, _ref, note="png bgr"),
        Sample([_encoded("PNG", seed=2)], {"pixel_format": "Grayscale"}, _ref,
               note="png gray"),
        Sample([_encoded("JPEG", size=(16, 9), seed=3)], {"pixel_format": "Grayscale"},
               _ref, note="jpeg gray"),
        Sample([_encoded("BMP", "L", seed=4)], {"pixel_format": "RGB"}, _ref,
               note="gray bmp"),
    ],
}

REJECTS = {
    "image_decode": [Sample([np.arange(20, dtype=np.uint8)], {"pixel_format": "RGB"}),
                     Sample([_encoded("PNG")], {"pixel_format": "HSV"}),
                     Sample([np.zeros(0, np.uint8)], {"pixel_format": "RGB"})],
}
