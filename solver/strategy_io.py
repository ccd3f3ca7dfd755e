"""Reading and writing solver strategies (the average strategy of a CFR run).

A strategy file is one msgpack map (never pickle), written atomically::

    {
      "format": "pokerbot-solver-strategy",
      "version": 1,
      "game": <ACPC .game text>,          # poker.game.Game.to_text()
      "game_name": <str>,
      "betting": <betting spec, '' for limit games>,
      "cards": {"abstraction": "lossless", "buckets": [per-street bucket counts]},
      "algorithm": <'cfr' | 'cfr+' | ''>,
      "iterations": <int>,
      "tree": {"nodes": <int>, "table_size": <int>},
      "arrays": {"policy": {"dtype": "<f8" | "<f4", "shape": [table_size], "data": <bytes>}},
      "sha256": <hex digest of every array's data, in key order>
    }

``policy`` is the normalised average strategy addressed as
``offset[node] + bucket * n_actions[node] + action`` over the tree that ``game`` and
``betting`` rebuild (:func:`solver.problem.make_problem`); the header's node count and
table size must match the rebuilt tree. Arrays are raw little-endian bytes.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import numpy as np

from poker._atomic import atomic_write_bytes
from poker.game import parse_game

from .cfr import Strategy
from .problem import make_problem

__all__ = [
    "FORMAT",
    "VERSION",
    "StrategyFileError",
    "dumps",
    "load_strategy",
    "loads",
    "save_strategy",
]

FORMAT = "pokerbot-solver-strategy"
VERSION = 1
#: Largest file :func:`load_strategy` reads (bytes).
MAX_FILE_BYTES = 1 << 31
_DTYPES = {"float64": "<f8", "float32": "<f4"}


class StrategyFileError(ValueError):
    """A strategy file that cannot be read; the message names the file and the problem."""


def dumps(strategy: Strategy, dtype: str = "float64") -> bytes:
    """The msgpack bytes of ``strategy`` (``dtype``: 'float64' or 'float32' for the policy)."""
    if dtype not in _DTYPES:
        raise ValueError(f"dtype {dtype!r} is not one of {sorted(_DTYPES)}")
    p = strategy.problem
    if not p.chance.lossless:
        raise ValueError("only strategies over lossless card buckets can be saved for now")
    policy = np.ascontiguousarray(strategy.policy, dtype=_DTYPES[dtype])
    data = policy.tobytes()
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "game": p.game.to_text(),
        "game_name": p.game.name,
        "betting": p.tree.betting_spec,
        "cards": {"abstraction": "lossless", "buckets": list(p.chance.n_buckets)},
        "algorithm": strategy.algorithm,
        "iterations": int(strategy.iterations),
        "tree": {"nodes": p.tree.n_nodes, "table_size": p.size},
        "arrays": {"policy": {"dtype": _DTYPES[dtype], "shape": [p.size], "data": data}},
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    return bytes(msgpack.packb(doc, use_bin_type=True))


def save_strategy(path: str | Path, strategy: Strategy, dtype: str = "float64") -> None:
    """Write ``strategy`` to ``path`` atomically (temporary file, fsync, rename)."""
    atomic_write_bytes(Path(path), dumps(strategy, dtype))


def _get(doc: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in doc:
        raise StrategyFileError(f"{where}: missing field {key!r}")
    value = doc[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise StrategyFileError(f"{where}: field {key!r} has type {type(value).__name__}")
    return value


def loads(data: bytes, source: str = "<bytes>") -> Strategy:
    """Read a strategy from msgpack bytes; rebuilds the tree and checks it matches."""
    if len(data) > MAX_FILE_BYTES:
        raise StrategyFileError(
            f"{source}: {len(data)} bytes is more than the limit {MAX_FILE_BYTES}"
        )
    try:
        doc = msgpack.unpackb(
            data,
            raw=False,
            strict_map_key=True,
            max_bin_len=len(data),
            max_str_len=min(len(data), 1 << 20),
            max_array_len=1 << 16,
            max_map_len=1 << 10,
            max_ext_len=0,
        )
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise StrategyFileError(f"{source}: not a msgpack strategy file ({exc})") from None
    if not isinstance(doc, dict):
        raise StrategyFileError(f"{source}: top level is not a map")
    if doc.get("format") != FORMAT:
        raise StrategyFileError(f"{source}: format is {doc.get('format')!r}, expected {FORMAT!r}")
    version = _get(doc, "version", int, source)
    if version != VERSION:
        raise StrategyFileError(
            f"{source}: version {version} is not supported (this reader knows {VERSION})"
        )
    game = parse_game(
        _get(doc, "game", str, source), source=f"{source}:game", name=doc.get("game_name", "") or ""
    )
    betting = _get(doc, "betting", str, source)
    cards = _get(doc, "cards", dict, source)
    if cards.get("abstraction") != "lossless":
        raise StrategyFileError(
            f"{source}: card abstraction {cards.get('abstraction')!r} is not supported"
        )
    problem = make_problem(game, betting or None)
    tree_info = _get(doc, "tree", dict, source)
    if (
        tree_info.get("nodes") != problem.tree.n_nodes
        or tree_info.get("table_size") != problem.size
    ):
        raise StrategyFileError(
            f"{source}: header says {tree_info.get('nodes')} nodes / table {tree_info.get('table_size')}, "
            f"the rebuilt tree has {problem.tree.n_nodes} / {problem.size}"
        )
    arrays = _get(doc, "arrays", dict, source)
    pol = arrays.get("policy")
    if not isinstance(pol, dict):
        raise StrategyFileError(f"{source}: no policy array")
    dt = pol.get("dtype")
    if dt not in _DTYPES.values():
        raise StrategyFileError(
            f"{source}: policy dtype {dt!r} is not one of {sorted(_DTYPES.values())}"
        )
    raw = pol.get("data")
    if not isinstance(raw, bytes):
        raise StrategyFileError(f"{source}: policy data is not bytes")
    if pol.get("shape") != [problem.size] or len(raw) != problem.size * np.dtype(dt).itemsize:
        raise StrategyFileError(
            f"{source}: policy shape {pol.get('shape')} with {len(raw)} bytes does not match table size {problem.size}"
        )
    if hashlib.sha256(raw).hexdigest() != doc.get("sha256"):
        raise StrategyFileError(f"{source}: checksum mismatch (the file is damaged)")
    policy = np.frombuffer(raw, dtype=dt).astype(np.float64)
    return Strategy(
        problem=problem,
        policy=policy,
        iterations=int(_get(doc, "iterations", int, source)),
        algorithm=str(_get(doc, "algorithm", str, source)),
    )


def load_strategy(path: str | Path) -> Strategy:
    """Read a strategy file written by :func:`save_strategy`."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise StrategyFileError(f"{p}: {size} bytes is more than the limit {MAX_FILE_BYTES}")
        data = p.read_bytes()
    except OSError as exc:
        raise StrategyFileError(f"{p}: cannot read ({exc.strerror})") from None
    return loads(data, source=str(p))
