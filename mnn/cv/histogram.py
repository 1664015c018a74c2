"""calcHist (cv2's name and arguments; uniform bins)."""
import numpy as np

from ._image import as_array

__all__ = ["calcHist"]


def calcHist(images, channels, mask, histSize, ranges, hist=None, accumulate=False):
    """Histogram of the selected channels (``cv2.calcHist``).

    Parameters
    ----------
    images : list of ndarray or Var
        Images of equal size; channels are numbered across the list.
    channels : list of int
        One channel index per histogram dimension.
    mask : ndarray or None
        Only pixels where it is non-zero are counted.
    histSize : list of int
        Bins per dimension.
    ranges : list of float
        ``[lo0, hi0, lo1, hi1, ...]``: uniform bins over [lo, hi); values outside are
        ignored.
    hist : ndarray, optional
        Added to when ``accumulate`` is True.

    Returns
    -------
    ndarray
        float32 histogram of shape ``histSize`` (1-D for one channel, as OpenCV 5).
    """
    arrays = [np.asarray(as_array(im, "calcHist", "images")) for im in images]
    planes = []
    for a in arrays:
        a = a[..., None] if a.ndim == 2 else a
        planes.extend(a[..., c] for c in range(a.shape[2]))
    if len({p.shape for p in planes}) != 1:
        raise ValueError("mnn.cv.calcHist: images differ in size")
    channels = [int(c) for c in channels]
    sizes = [int(s) for s in histSize]
    rng = [float(r) for r in np.asarray(ranges, dtype=np.float64).reshape(-1)]
    if len(sizes) != len(channels) or len(rng) != 2 * len(channels):
        raise ValueError(f"mnn.cv.calcHist: {len(channels)} channels need as many histSize "
                         f"entries and 2 range values each (got {sizes}, {rng})")
    if any(c < 0 or c >= len(planes) for c in channels):
        raise ValueError(f"mnn.cv.calcHist: channel out of range: {channels} "
                         f"({len(planes)} available)")
    valid = np.ones(planes[0].shape, dtype=bool)
    if mask is not None:
        m = np.asarray(as_array(mask, "calcHist", "mask"))
        if m.shape != valid.shape:
            raise ValueError(f"mnn.cv.calcHist: mask shape {m.shape} differs from the "
                             f"images' {valid.shape}")
        valid &= m != 0
    flat_index = np.zeros(planes[0].shape, dtype=np.int64)
    for dim, (c, n) in enumerate(zip(channels, sizes)):
        lo, hi = rng[2 * dim], rng[2 * dim + 1]
        v = planes[c].astype(np.float64)
        # OpenCV's uniform binning: floor(v * a + b) with a = n / (hi - lo), b = -a lo
        # (this rounding order decides values on bin edges), in [lo, hi) only.
        a = n / (hi - lo)
        idx = np.floor(v * a + (-a * lo)).astype(np.int64)
        valid &= (v >= lo) & (v < hi) & (idx >= 0) & (idx < n)
        flat_index = flat_index * n + np.clip(idx, 0, n - 1)
    counts = np.bincount(flat_index[valid], minlength=int(np.prod(sizes)))
    out = counts.astype(np.float32).reshape(sizes)
    if accumulate and hist is not None:
        out = out + np.asarray(hist, dtype=np.float32).reshape(out.shape)
    return out
