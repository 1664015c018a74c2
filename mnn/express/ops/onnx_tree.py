"""``tree_ensemble``: ONNX-ML TreeEnsemble (opset 5) — regression trees over ``[N, F]``
features giving ``[N, n_targets]`` scores.

Interior nodes (the ``nodes_*`` tuples) compare feature ``featureids[i]`` with
``splits[i]`` by ``modes[i]`` (0 ``<=``, 1 ``<``, 2 ``>=``, 3 ``>``, 4 ``==``, 5 ``!=``,
6 membership in the i-th member set: ``membership_values`` lists the sets of the
membership nodes in index order, each ended by NaN). A NaN feature takes the true branch
where ``missing_tracks_true[i]`` is set, else the false one. A branch goes to node
``truenodeids[i]`` / ``falsenodeids[i]``, or, when ``trueleafs[i]`` / ``falseleafs[i]`` is
set, to that leaf, which adds ``leaf_weights[j]`` to target ``leaf_targetids[j]``. Each
tree (``tree_roots``) reaches one leaf per sample; per target the leaf values of all trees
are aggregated (0 average over trees, 1 sum, 2 min, 3 max; a target no leaf reaches
keeps the aggregation's start: 0, or the dtype's largest / lowest finite value), then ``post_transform`` applies (0 none, 1 softmax over the targets, 2
logistic, 3 softmax leaving zero scores at zero, 4 probit). Output in ``x``'s float dtype.
"""
import numpy as np

from ..errors import OpError
from ..graph import apply
from ..optable import OpDef, register
from ..var import to_var

__all__ = ["tree_ensemble"]

_FIELDS = ("featureids", "splits", "modes", "truenodeids", "falsenodeids", "trueleafs",
           "falseleafs")


def _check(attrs, n_features=None):
    n = len(attrs["modes"])
    for name in _FIELDS + ("missing_tracks_true",):
        values = attrs[name]
        if name == "missing_tracks_true" and not values:
            continue
        if len(values) != n:
            raise OpError(f"tree_ensemble: nodes_{name} has {len(values)} entries, "
                          f"nodes_modes {n}")
    leaves = len(attrs["leaf_weights"])
    if len(attrs["leaf_targetids"]) != leaves:
        raise OpError("tree_ensemble: leaf_targetids and leaf_weights differ in length")
    if any(not 0 <= t < attrs["n_targets"] for t in attrs["leaf_targetids"]):
        raise OpError(f"tree_ensemble: a leaf target is outside [0, {attrs['n_targets']})")
    if any(m not in range(7) for m in attrs["modes"]):
        raise OpError(f"tree_ensemble: node modes must be 0..6, got {sorted(set(attrs['modes']))}")
    for i in range(n):
        for ids, leaf, size in ((attrs["truenodeids"], attrs["trueleafs"], leaves),
                                (attrs["falsenodeids"], attrs["falseleafs"], leaves)):
            limit = size if leaf[i] else n
            if not 0 <= ids[i] < limit:
                raise OpError(f"tree_ensemble: node {i} branches to "
                              f"{'leaf' if leaf[i] else 'node'} {ids[i]}, outside [0, {limit})")
        if n_features is not None and not 0 <= attrs["featureids"][i] < n_features:
            raise OpError(f"tree_ensemble: node {i} reads feature {attrs['featureids'][i]} of "
                          f"{n_features}")
    if any(not 0 <= r < n for r in attrs["roots"]):
        raise OpError("tree_ensemble: a tree root is outside the nodes")
    if attrs["aggregate"] not in range(4) or attrs["post_transform"] not in range(5):
        raise OpError("tree_ensemble: aggregate_function must be 0..3, post_transform 0..4")
    sets, current = [], []
    for v in attrs["membership"]:
        if np.isnan(v):
            sets.append(set(current))
            current = []
        else:
            current.append(v)
    members = [i for i, m in enumerate(attrs["modes"]) if m == 6]
    if len(sets) != len(members):
        raise OpError(f"tree_ensemble: {len(members)} membership nodes, "
                      f"{len(sets)} member sets")
    return dict(zip(members, sets))


def _infer(metas, **attrs):
    x = metas[0]
    if x.dtype is not None and x.dtype.kind != "f":
        raise OpError(f"tree_ensemble: features must be float, got {x.dtype}")
    if x.shape is not None and len(x.shape) != 2:
        raise OpError(f"tree_ensemble: features must be [N, F], got {list(x.shape)}")
    _check(attrs, None if x.shape is None else x.shape[1])
    shape = None if x.shape is None else (x.shape[0], attrs["n_targets"])
    return [(shape, x.dtype)]


def _goes_true(mode, value, split, members):
    if mode == 0:
        return value <= split
    if mode == 1:
        return value < split
    if mode == 2:
        return value >= split
    if mode == 3:
        return value > split
    if mode == 4:
        return value == split
    if mode == 5:
        return value != split
    return value in members


def _compute(arrays, **attrs):
    x = arrays[0]
    sets = _check(attrs, x.shape[1])
    n_targets = attrs["n_targets"]
    tracks = attrs["missing_tracks_true"] or (0,) * len(attrs["modes"])
    agg = attrs["aggregate"]
    start = {2: np.finfo(x.dtype).max, 3: np.finfo(x.dtype).min}.get(agg, 0.0)
    out = np.full((x.shape[0], n_targets), start, np.float64)
    for r, row in enumerate(x.astype(np.float64)):
        values = [[] for _ in range(n_targets)]
        for root in attrs["roots"]:
            node, steps = root, 0
            while True:
                steps += 1
                if steps > len(attrs["modes"]):
                    raise OpError("tree_ensemble: a tree has a cycle")
                value = row[attrs["featureids"][node]]
                if np.isnan(value):
                    go = bool(tracks[node])
                else:
                    go = _goes_true(attrs["modes"][node], value, attrs["splits"][node],
                                    sets.get(node))
                nxt = attrs["truenodeids" if go else "falsenodeids"][node]
                if attrs["trueleafs" if go else "falseleafs"][node]:
                    values[attrs["leaf_targetids"][nxt]].append(attrs["leaf_weights"][nxt])
                    break
                node = nxt
        for t, vals in enumerate(values):
            if not vals:
                continue
            if agg == 0:
                out[r, t] = sum(vals) / len(attrs["roots"])
            elif agg == 1:
                out[r, t] = sum(vals)
            elif agg == 2:
                out[r, t] = min(min(vals), start)
            else:
                out[r, t] = max(max(vals), start)
    out = _post(out, attrs["post_transform"])
    return out.astype(x.dtype)


def _post(scores, kind):
    if kind == 2:
        return 1 / (1 + np.exp(-scores))
    if kind in (1, 3):
        keep = np.ones(scores.shape, bool) if kind == 1 else scores != 0
        shifted = np.where(keep, scores - scores.max(1, keepdims=True), -np.inf)
        e = np.where(keep, np.exp(shifted), 0.0)
        total = e.sum(1, keepdims=True)
        return np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    if kind == 4:
        from scipy.special import ndtri

        return ndtri(scores)
    return scores


register(OpDef("tree_ensemble", _infer, _compute))


def tree_ensemble(x, **attrs):
    """ONNX-ML TreeEnsemble of ``x`` ``[N, F]`` (see the module docstring). Keyword
    arguments: ``featureids, splits, modes, truenodeids, falsenodeids, trueleafs,
    falseleafs, missing_tracks_true, membership, leaf_targetids, leaf_weights, roots,
    n_targets, aggregate, post_transform``."""
    ints = ("featureids", "modes", "truenodeids", "falsenodeids", "trueleafs", "falseleafs",
            "missing_tracks_true", "leaf_targetids", "roots")
    floats = ("splits", "membership", "leaf_weights")
    def seq(k):
        value = attrs.get(k)
        return () if value is None else np.asarray(value).reshape(-1)

    clean = {k: tuple(int(v) for v in seq(k)) for k in ints}
    clean.update({k: tuple(float(v) for v in seq(k)) for k in floats})
    clean.update(n_targets=int(attrs["n_targets"]), aggregate=int(attrs["aggregate"]),
                 post_transform=int(attrs["post_transform"]))
    return apply("tree_ensemble", [to_var(x)], **clean)[0]
