"""``tfidf_vectorize``: ONNX TfIdfVectorizer over integer token ids.

Each row of ``x`` (``[C]`` or ``[N, C]`` ints) is scanned for the n-grams of a fixed pool:
``pool`` holds the 1-grams, then the 2-grams (two ids each) …, ``counts[k]`` being where the
(k+1)-grams start in it; ``indexes`` gives each pool n-gram's output column. An n-gram of
length ``n`` (``min_n <= n <= max_n``) at position ``i`` with skip ``s`` (``0 … max_skip``)
is ``x[i], x[i + s + 1], …, x[i + (n - 1)(s + 1)]``; 1-grams are counted once per position
(skips do not apply to them). Output ``[N, max(indexes) + 1]`` (``[max + 1]`` for a 1-d
input), float32: the counts (``TF``), ``weights`` where the count is nonzero (``IDF``), or
counts times weights (``TFIDF``); ``weights`` default to ones.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["tfidf_vectorize"]

_MODES = ("TF", "IDF", "TFIDF")


def _table(pool, counts, indexes, max_n):
    """{n-gram tuple: output column} from the pool layout; checks the layout."""
    if len(counts) < max_n:
        raise OpError(f"tfidf_vectorize: ngram_counts {list(counts)} has no entry for "
                      f"{max_n}-grams")
    table, k = {}, 0
    for n in range(1, len(counts) + 1):
        start = counts[n - 1]
        end = counts[n] if n < len(counts) else len(pool)
        if start > end or (end - start) % n:
            raise OpError(f"tfidf_vectorize: ngram_counts {list(counts)} do not split a pool "
                          f"of {len(pool)} ids into whole {n}-grams")
        for at in range(start, end, n):
            if k >= len(indexes):
                raise OpError(f"tfidf_vectorize: ngram_indexes has {len(indexes)} entries "
                              "for more pool n-grams")
            table[(n,) + tuple(pool[at:at + n])] = indexes[k]
            k += 1
    if k != len(indexes):
        raise OpError(f"tfidf_vectorize: {len(indexes)} ngram_indexes for {k} pool n-grams")
    return table


def _infer(metas, min_n, max_n, max_skip, mode, pool, counts, indexes, weights):
    x = metas[0]
    if mode not in _MODES:
        raise OpError(f"tfidf_vectorize: mode must be one of {_MODES}, got {mode!r}")
    if not 1 <= min_n <= max_n or max_skip < 0:
        raise OpError(f"tfidf_vectorize: gram lengths {min_n}..{max_n} / max_skip_count "
                      f"{max_skip} are invalid")
    if weights and len(weights) != len(indexes):
        raise OpError(f"tfidf_vectorize: {len(weights)} weights for {len(indexes)} n-grams")
    if not indexes or min(indexes) < 0:
        raise OpError("tfidf_vectorize: ngram_indexes must be non-empty and non-negative")
    _table(pool, counts, indexes, max_n)
    if x.dtype is not None and x.dtype.kind not in "iu":
        raise OpError(f"tfidf_vectorize: token ids must be integers, got {x.dtype}")
    width = max(indexes) + 1
    if x.shape is None:
        return [(None, np.dtype(np.float32))]
    if len(x.shape) not in (1, 2):
        raise OpError(f"tfidf_vectorize: input must be [C] or [N, C], got {list(x.shape)}")
    shape = (width,) if len(x.shape) == 1 else (x.shape[0], width)
    return [(shape, np.dtype(np.float32))]


def _compute(arrays, min_n, max_n, max_skip, mode, pool, counts, indexes, weights):
    x = arrays[0]
    table = _table(pool, counts, indexes, max_n)
    rows = x.reshape(1, -1) if x.ndim == 1 else x
    width = max(indexes) + 1
    out = np.zeros((rows.shape[0], width), np.float32)
    for r, row in enumerate(rows.tolist()):
        length = len(row)
        for n in range(min_n, max_n + 1):
            skips = range(1) if n == 1 else range(max_skip + 1)
            for s in skips:
                step = s + 1
                for i in range(length - (n - 1) * step):
                    col = table.get((n,) + tuple(row[i:i + (n - 1) * step + 1:step]))
                    if col is not None:
                        out[r, col] += 1
    w = np.asarray(weights if weights else [1.0] * len(indexes), np.float32)
    scale = np.zeros(width, np.float32)
    scale[list(indexes)] = w
    if mode == "IDF":
        out = np.where(out > 0, scale, np.float32(0))
    elif mode == "TFIDF":
        out = out * scale
    out = out.astype(np.float32)
    return out.reshape(width) if x.ndim == 1 else out


register(OpDef("tfidf_vectorize", _infer, _compute))


def tfidf_vectorize(x, min_n, max_n, max_skip, mode, pool, counts, indexes, weights=()):
    """ONNX TfIdfVectorizer over integer ids (see the module docstring)."""
    return apply("tfidf_vectorize", [to_var(x)], min_n=int(min_n), max_n=int(max_n),
                 max_skip=int(max_skip), mode=str(mode),
                 pool=tuple(int(v) for v in pool), counts=tuple(int(v) for v in counts),
                 indexes=tuple(int(v) for v in indexes),
                 weights=tuple(float(v) for v in weights))[0]
