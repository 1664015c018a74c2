"""mnn.cv against cv2 and Pillow on a 1920x1080 BGR image, at 1 and 2 threads.

Run: ``python benchmarks/bench_cv.py [--repeat N]``. Prints the median time of each
implementation and the ratios ours/cv2 and ours/Pillow (below 1 means mnn is faster).
All peers run in this process on the same image, interleaved call by call; the machine
is noisy, so medians of repeated runs are compared.
"""
import argparse
import os
import statistics
import sys
import time

import cv2
import numpy as np

# The repository root, for an uninstalled checkout.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

import mnn.cv as mcv  # noqa: E402
import mnn.expr as F  # noqa: E402

try:
    from PIL import Image, ImageFilter
except ImportError:  # Pillow is optional for this script: its columns are then empty
    Image = None


def photo(h=1080, w=1920, seed=0):
    """A photo-like BGR image: gradients, blobs, edges and noise."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    planes = []
    for c in range(3):
        base = 127 + 90 * np.sin(2 * np.pi * (xx / w * (1 + c) + 0.3 * c)) * \
            np.cos(2 * np.pi * yy / h * (2 - 0.5 * c))
        base += rng.normal(0, 8, size=(h, w)).astype(np.float32)
        planes.append(base)
    return np.clip(np.stack(planes, axis=2), 0, 255).astype(np.uint8)


def median_ms(fns, repeat):
    """Median time of each function in ``fns`` (None entries give NaN), in ms.

    The functions run interleaved, one call each per round and in turn first, so a burst
    of load on the shared machine, or a cache emptied by the previous call, hits all
    peers alike.
    """
    live = [fn for fn in fns if fn is not None]
    for fn in live:
        fn()  # warm-up (table caches, page faults)
    times = {id(fn): [] for fn in live}
    for r in range(repeat):
        for fn in live[r % len(live):] + live[:r % len(live)]:
            t0 = time.perf_counter()
            fn()
            times[id(fn)].append(time.perf_counter() - t0)
    return [statistics.median(times[id(fn)]) * 1e3 if fn is not None else float("nan")
            for fn in fns]


def cases(img):
    h, w = img.shape[:2]
    imgf = img.astype(np.float32)
    small = cv2.resize(img, (224, 224))
    smallf = small.astype(np.float32)
    pil_small = Image.fromarray(small[..., ::-1].copy()) if Image is not None else None
    rot = cv2.getRotationMatrix2D((w / 2, h / 2), 15, 1.0)
    pil = Image.fromarray(img[..., ::-1].copy()) if Image is not None else None
    inv = cv2.invertAffineTransform(rot)
    mean = np.float32([103.94, 116.78, 123.68])
    scale = np.float32([0.017, 0.017, 0.017])

    proc = mcv.ImageProcess(sourceFormat=mcv.CV_ImageFormat_BGR,
                            destFormat=mcv.CV_ImageFormat_RGB,
                            filterType=mcv.CV_Filter_BILINEAL,
                            mean=tuple(mean[::-1]), normal=tuple(scale))
    matrix = mcv.Matrix()
    matrix.setScale(w / 224, h / 224)
    proc.setMatrix(matrix)
    out_nchw = np.zeros((1, 224, 224, 3), np.float32)

    def cv2_preprocess():
        small = cv2.resize(img, (224, 224))
        rgb = cv2.cvtColor(small, cv2.COLOR_BGR2RGB).astype(np.float32)
        return ((rgb - mean[::-1]) * scale).transpose(2, 0, 1)[np.newaxis]

    def pil_preprocess():
        small = pil.resize((224, 224), Image.BILINEAR)
        rgb = np.asarray(small, dtype=np.float32)
        return ((rgb - mean[::-1]) * scale).transpose(2, 0, 1)[np.newaxis]

    return [
        ("resize to 224 (linear)",
         lambda: mcv.resize(img, (224, 224)),
         lambda: cv2.resize(img, (224, 224)),
         (lambda: pil.resize((224, 224), Image.BILINEAR)) if pil else None),
        ("resize to 224 float32",
         lambda: mcv.resize(imgf, (224, 224)),
         lambda: cv2.resize(imgf, (224, 224)),
         None),  # Pillow has no 3-channel float images
        ("resize 224 -> 1920x1080",
         lambda: mcv.resize(small, (w, h)),
         lambda: cv2.resize(small, (w, h)),
         (lambda: pil_small.resize((w, h), Image.BILINEAR)) if pil_small else None),
        ("resize 224 -> 1920x1080 f32",
         lambda: mcv.resize(smallf, (w, h)),
         lambda: cv2.resize(smallf, (w, h)),
         None),
        ("BGR -> gray",
         lambda: mcv.cvtColor(img, mcv.COLOR_BGR2GRAY),
         lambda: cv2.cvtColor(img, cv2.COLOR_BGR2GRAY),
         (lambda: pil.convert("L")) if pil else None),
        ("BGR -> RGB",
         lambda: mcv.cvtColor(img, mcv.COLOR_BGR2RGB),
         lambda: cv2.cvtColor(img, cv2.COLOR_BGR2RGB),
         (lambda: Image.merge("RGB", pil.split()[::-1])) if pil else None),
        ("warpAffine 15 deg (linear)",
         lambda: mcv.warpAffine(img, rot, (w, h)),
         lambda: cv2.warpAffine(img, rot, (w, h)),
         (lambda: pil.transform((w, h), Image.AFFINE, tuple(inv.reshape(-1)),
                                Image.BILINEAR)) if pil else None),
        ("GaussianBlur 5x5",
         lambda: mcv.GaussianBlur(img, (5, 5), 0),
         lambda: cv2.GaussianBlur(img, (5, 5), 0),
         (lambda: pil.filter(ImageFilter.GaussianBlur(1.1))) if pil else None),
        ("ImageProcess preprocessing",
         lambda: proc.convert(img, w, h, 0, out_nchw),
         cv2_preprocess,
         pil_preprocess if pil else None),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    img = photo()
    print(f"image 1920x1080x3 uint8, median of {args.repeat} runs, times in ms")
    header = f"{'case':30s} {'thr':>3s} {'mnn':>8s} {'cv2':>8s} {'Pillow':>8s} " \
             f"{'mnn/cv2':>8s} {'mnn/PIL':>8s}"
    print(header)
    for n in (1, 2):
        F.set_thread_number(n)
        cv2.setNumThreads(n)
        for name, ours, theirs, pil in cases(img):
            # Pillow is 10-100x slower and sweeps the caches: timed on its own.
            t_ours, t_cv2 = median_ms([ours, theirs], args.repeat)
            t_pil, = median_ms([pil], max(3, args.repeat // 3)) if pil else (float("nan"),)
            print(f"{name:30s} {n:3d} {t_ours:8.2f} {t_cv2:8.2f} {t_pil:8.2f} "
                  f"{t_ours / t_cv2:8.2f} {t_ours / t_pil:8.2f}")


if __name__ == "__main__":
    main()
