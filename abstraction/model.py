"""The card abstraction's model: what computes a bucket from the cards, and what a
strategy file carries; its checks and its hash.

A model is a small JSON/msgpack-able dict (format :data:`MODEL_FORMAT`, kind
:data:`MODEL_KIND`, the game's name and definition, the parameters, the river E[HS]
scale and per-street figures) plus the centroid and pair-map arrays
(:meth:`abstraction.card_abstraction.CardAbstraction.model` says which). Here:

* :func:`_check_model` validates a model and puts it in canonical form (:class:`_Model`):
  every per-street figure must be the one the game and the parameters give
  (:func:`abstraction.plan.plan_build`), and the arrays exactly those the streets need,
  of the right shapes; anything else is one ``ValueError`` line.
* :func:`_model_hash` identifies a model: ``sha256`` over the sorted-key JSON of its dict,
  then each array's name, dtype, shape and little-endian bytes; the same on every machine.
* A built directory (format :data:`FORMAT_VERSION`): :func:`_read_meta` reads its
  ``meta.json`` (:data:`META_FILE`), :func:`_model_from_dir` its model (centroids and pair
  maps from its files), :func:`_files_hash` the content hash of its files as they are now.

:class:`abstraction.card_abstraction.CardAbstraction` computes buckets from a model and
uses a directory's tables only if the directory's model hash is the model's;
:mod:`abstraction.build` records both hashes in the ``meta.json`` it writes last.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from poker.game import Game, parse_game

from . import features as F
from .plan import _METRICS, AbstractionParams, plan_build

__all__ = [
    "FORMAT_VERSION",
    "META_FILE",
    "MODEL_FORMAT",
    "MODEL_KIND",
]

FORMAT_VERSION = 1  # version of a built directory's meta.json
META_FILE = "meta.json"
MODEL_FORMAT = 1  # version of the model dict (CardAbstraction.model)
MODEL_KIND = "pokerbot card abstraction model"
_MODEL_KEYS = ("format", "kind", "game", "params", "scale", "streets")
_MODEL_OPTIONAL = ("model_hash", "content_hash")  # accepted by from_model, not hashed
_STREET_KEYS = (
    "street", "name", "kind", "grouping", "table_grouping", "canonical_hands", "table_hands", "buckets",
    "own_buckets",
)


def _load(path: Path, mmap: bool = True) -> np.ndarray:
    """An ``.npy`` file of a built directory, memory-mapped unless ``mmap`` is False."""
    arr = np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
    return np.asarray(arr)


class _Model(NamedTuple):
    """A validated model: its canonical dict and arrays, and what computing buckets needs."""

    game: Game
    params: AbstractionParams
    meta: dict[str, Any]  # canonical model dict (see CardAbstraction.model)
    arrays: dict[str, np.ndarray]  # canonical arrays, read-only
    centroids: list[np.ndarray | None]  # per street, float32 (None: lossless)
    pairs: list[np.ndarray | None]  # per street, int32 (None: street 0 or no history)


_PARAM_TYPES: dict[str, type] = {
    "history": bool, "seed": int, "bins": int, "metric": str, "history_weight": float, "max_iter": int,
    "tol": float, "sample_size": int,
}


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _model_params(d: Any, where: str) -> AbstractionParams:
    """Parameters from a model's ``params``, every field present and of its type."""
    if not isinstance(d, dict):
        raise ValueError(f"{where}: params is a {type(d).__name__}, not a mapping")
    fields = ("buckets", *_PARAM_TYPES)
    unknown = sorted(str(k) for k in d if k not in fields)
    missing = [k for k in fields if k not in d]
    if unknown or missing:
        what = f"unknown parameter {unknown[0]!r}" if unknown else f"parameter {missing[0]!r} is missing"
        raise ValueError(f"{where}: {what}")
    b = d["buckets"]
    if not isinstance(b, (list, tuple)) or not all(_is_int(x) for x in b):
        raise ValueError(f"{where}: parameter 'buckets' is not a list of integers")
    out: dict[str, Any] = {"buckets": tuple(int(x) for x in b)}
    for k, t in _PARAM_TYPES.items():
        v = d[k]
        if t is bool:
            ok = isinstance(v, (bool, np.bool_))
        elif t is int:
            ok = _is_int(v)
        elif t is float:
            ok = (_is_int(v) or isinstance(v, (float, np.floating))) and bool(np.isfinite(float(v)))
        else:
            ok = isinstance(v, str)
        if not ok:
            raise ValueError(f"{where}: parameter {k!r} = {v!r} is not a {t.__name__}")
        out[k] = t(v)
    return AbstractionParams(**out)


def _plain(v: Any) -> Any:
    """``v`` as plain JSON values (tuples as lists, numpy scalars as Python ones)."""
    return json.loads(json.dumps(v, default=lambda x: x.item() if isinstance(x, np.generic) else str(x)))


def _pair_dtype(buckets: int) -> np.dtype:
    """Canonical (smallest) dtype of a pair map whose values are below ``buckets``."""
    return np.dtype(np.uint8 if buckets <= 0x100 else "<u2" if buckets <= 0x10000 else "<i4")


def _check_model(meta: Any, arrays: Any, where: str = "model") -> _Model:
    """Validate a model (dict and arrays) and put it in canonical form.

    The dict must be exactly what :meth:`abstraction.card_abstraction.CardAbstraction.model`
    makes (plus, optionally, ``model_hash`` and ``content_hash``): its per-street figures
    must be those the game and parameters give, and the arrays exactly those the streets
    need, of the right shapes.
    Raises ``ValueError`` (one line, starting with ``where``) on anything else.
    """
    if not isinstance(meta, dict):
        raise ValueError(f"{where}: the model is a {type(meta).__name__}, not a mapping")
    if meta.get("kind") != MODEL_KIND:
        raise ValueError(f"{where}: kind {meta.get('kind')!r} is not {MODEL_KIND!r}")
    if meta.get("format") != MODEL_FORMAT or isinstance(meta.get("format"), bool):
        raise ValueError(f"{where}: model format {meta.get('format')!r}; this version reads {MODEL_FORMAT}")
    unknown = sorted(str(k) for k in meta if k not in _MODEL_KEYS and k not in _MODEL_OPTIONAL)
    missing = [k for k in _MODEL_KEYS if k not in meta]
    if unknown:
        raise ValueError(f"{where}: unknown field {unknown[0]!r}")
    if missing:
        raise ValueError(f"{where}: field {missing[0]!r} is missing")
    for k in _MODEL_OPTIONAL:
        if k in meta and not (meta[k] is None or isinstance(meta[k], str)):
            raise ValueError(f"{where}: field {k!r} is a {type(meta[k]).__name__}, not a text")
    g = meta["game"]
    if not isinstance(g, dict) or not isinstance(g.get("definition"), str) or not isinstance(g.get("name", ""), str):
        raise ValueError(f"{where}: game must be a mapping with a 'definition' text and a 'name'")
    if sorted(g) != ["definition", "name"]:
        raise ValueError(f"{where}: game must have exactly the fields 'name' and 'definition'")
    try:
        game = parse_game(g["definition"], source=f"{where} game", name=g["name"])
        params = _model_params(meta["params"], where)
        plan = plan_build(game, params)
    except ValueError as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(msg if msg.startswith(where) else f"{where}: {msg}") from None
    space = F.CardSpace.from_game(game)
    if not _is_int(meta["scale"]) or int(meta["scale"]) != space.scale:
        raise ValueError(f"{where}: scale {meta['scale']!r}, but the game's river E[HS] scale is {space.scale}")
    streets = meta["streets"]
    if not isinstance(streets, (list, tuple)) or len(streets) != space.num_streets:
        n = len(streets) if isinstance(streets, (list, tuple)) else "no list of"
        raise ValueError(f"{where}: {n} streets, the game has {space.num_streets}")
    canon_streets: list[dict[str, Any]] = []
    for s, (st, sp_) in enumerate(zip(streets, plan.streets)):
        label = f"street {s} ({sp_.name})"
        if not isinstance(st, dict):
            raise ValueError(f"{where}: {label} is not a mapping")
        extra = sorted(str(k) for k in st if k not in _STREET_KEYS)
        if extra:
            raise ValueError(f"{where}: {label} has unknown field {extra[0]!r}")
        want = {**sp_.to_json(), "table_grouping": space.grouping(s)}
        for k in _STREET_KEYS:
            if k not in st:
                raise ValueError(f"{where}: {label} has no {k!r}")
            if _plain(st[k]) != want[k] or isinstance(st[k], bool):
                raise ValueError(f"{where}: {label} has {k} {st[k]!r}, but the game and parameters give {want[k]!r}")
        canon_streets.append({k: want[k] for k in _STREET_KEYS})
    if not isinstance(arrays, dict):
        raise ValueError(f"{where}: the arrays are a {type(arrays).__name__}, not a mapping")
    need: list[str] = []
    for s, sp_ in enumerate(plan.streets):
        if sp_.kind != "lossless":
            need.append(f"centroids{s}")
        if params.history and s > 0:
            need.append(f"pairs{s}")
    extra_arrays = sorted(str(k) for k in arrays if k not in need)
    if extra_arrays:
        raise ValueError(f"{where}: unexpected array {extra_arrays[0]!r} (this model has {', '.join(need) or 'none'})")
    for name in need:
        if name not in arrays:
            raise ValueError(f"{where}: array {name!r} is missing")
    canon: dict[str, np.ndarray] = {}
    centroids: list[np.ndarray | None] = [None] * space.num_streets
    pairs: list[np.ndarray | None] = [None] * space.num_streets
    for s, sp_ in enumerate(plan.streets):
        label = f"street {s} ({sp_.name})"
        if sp_.kind != "lossless":
            name = f"centroids{s}"
            a = np.asarray(arrays[name])
            metric = F.METRIC_EHS if sp_.kind == "ehs" else _METRICS[sp_.kind]
            shape = (sp_.own_buckets, F.feature_dims(metric, params.bins))
            if a.dtype.kind != "f":
                raise ValueError(f"{where}: {name} has dtype {a.dtype}, not floats")
            if a.shape != shape:
                raise ValueError(
                    f"{where}: {name} has shape {a.shape}; {label} has {shape[0]} own buckets of "
                    f"{shape[1]} feature dims"
                )
            c = np.ascontiguousarray(a, dtype="<f4")
            if not np.isfinite(c).all():
                raise ValueError(f"{where}: {name} holds values that are not finite")
            c.setflags(write=False)
            canon[name] = centroids[s] = c
        if params.history and s > 0:
            name = f"pairs{s}"
            a = np.asarray(arrays[name])
            shape = (plan.streets[s - 1].buckets, sp_.own_buckets)
            if a.dtype.kind not in "iu":
                raise ValueError(f"{where}: {name} has dtype {a.dtype}, not integers")
            if a.shape != shape:
                raise ValueError(
                    f"{where}: {name} has shape {a.shape}; {label} pairs {shape[0]} previous buckets "
                    f"with {shape[1]} own buckets"
                )
            if a.size and (int(a.min()) < 0 or int(a.max()) >= sp_.buckets):
                raise ValueError(f"{where}: {name} holds buckets outside 0..{sp_.buckets - 1}")
            pm = np.ascontiguousarray(a, dtype=_pair_dtype(sp_.buckets))
            pm.setflags(write=False)
            canon[name] = pm
            pairs[s] = pm.astype(np.int32)
    canon_meta: dict[str, Any] = {
        "format": MODEL_FORMAT,
        "kind": MODEL_KIND,
        "game": {"name": game.name, "definition": game.to_text()},
        "params": params.to_json(),
        "scale": space.scale,
        "streets": canon_streets,
    }
    return _Model(game, params, canon_meta, canon, centroids, pairs)


def _model_hash(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> str:
    """``sha256:...`` over a canonical model: sorted-key compact JSON of the dict, then per
    array (by name) a JSON header ``[name, dtype, shape]`` and its C-order little-endian
    bytes, each part preceded by its length (8 bytes, little-endian)."""
    h = hashlib.sha256()

    def part(b: bytes) -> None:
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)

    part(json.dumps(meta, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode())
    for name in sorted(arrays):
        a = arrays[name]
        le = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))
        part(json.dumps([name, le.dtype.str, list(le.shape)], separators=(",", ":")).encode())
        part(le.tobytes())
    return "sha256:" + h.hexdigest()


def _model_from_dir(directory: Path, meta: dict[str, Any]) -> _Model:
    """The model of a built directory (its ``meta.json`` as ``meta``; centroids and pair maps
    read from its files). Raises ``ValueError`` on inconsistent metadata, ``OSError`` on
    unreadable files."""
    where = str(directory)
    try:
        streets = meta["streets"]
        candidate = {
            "format": MODEL_FORMAT,
            "kind": MODEL_KIND,
            "game": {"name": meta["game"]["name"], "definition": meta["game"]["definition"]},
            "params": meta["params"],
            "scale": meta["scale"],
            "streets": [{k: st[k] for k in _STREET_KEYS if k in st} for st in streets],
        }
        arrays: dict[str, np.ndarray] = {}
        for s, st in enumerate(streets):
            files = st["files"]
            for key in ("centroids", "pairs"):
                if key in files:
                    arrays[f"{key}{s}"] = _load(directory / files[key], mmap=False)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{directory / META_FILE}: field {exc} is missing or malformed") from None
    return _check_model(candidate, arrays, where)


def _read_meta(d: Path) -> dict[str, Any]:
    """``d/meta.json`` of a finished abstraction; ``ValueError`` (one line) otherwise."""
    try:
        meta = json.loads((d / META_FILE).read_text())
    except FileNotFoundError:
        raise ValueError(f"{d}: no {META_FILE}: not a card abstraction, or its build did not finish") from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{d / META_FILE}: unreadable ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT_VERSION:
        fmt = meta.get("format") if isinstance(meta, dict) else None
        raise ValueError(f"{d / META_FILE}: format {fmt!r}, this version reads {FORMAT_VERSION}")
    return meta


def _files_hash(d: Path, meta: dict[str, Any]) -> str:
    """The content hash of directory ``d``'s files as they are now (``meta``: its metadata)."""
    h = hashlib.sha256()
    game = parse_game(meta["game"]["definition"], source=str(d / META_FILE), name=meta["game"]["name"])
    params = AbstractionParams.from_json(meta["params"])
    h.update(json.dumps([FORMAT_VERSION, game.to_text(), params.to_json()], sort_keys=True).encode())
    for st in meta["streets"]:
        for name in sorted(st["files"].values()):
            h.update(name.encode())
            with open(d / name, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 24), b""):
                    h.update(block)
    return "sha256:" + h.hexdigest()
