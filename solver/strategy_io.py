"""Reading and writing solver strategies (the average strategy of a CFR run).

A strategy file is one msgpack map (never pickle), written atomically::

    {
      "format": "pokerbot-solver-strategy",
      "version": 2,
      "game": <ACPC .game text>,          # poker.game.Game.to_text()
      "game_name": <str>,
      "betting": <betting spec, '' for limit games>,
      "cards": <the card buckets, below>,
      "algorithm": <'cfr' | 'cfr+' | 'es' | 'os' | 'tcfr' | ''>,
      "iterations": <int>,
      "tree": {"nodes": <int>, "table_size": <int>},
      "arrays": {"policy": {"dtype": "<f8" | "<f4", "shape": [table_size], "data": <bytes>}},
      "sha256": <hex digest of every array's data, in key order>
    }

``cards`` says which buckets the information sets use:

* ``{"abstraction": "lossless", "buckets": [per-street counts]}``: every (board, hand)
  pair its own bucket (:mod:`solver.chance`);
* ``{"abstraction": "card", "buckets": [per-street counts], "content_hash": "sha256:...",
  "game": <name of the game it was built for>, "params": <its AbstractionParams as
  JSON>, "directory": <where it was when the strategy was written>}``: the buckets of a
  card abstraction (:class:`abstraction.card_abstraction.CardAbstraction`), identified by
  its content hash (game, parameters and every table). The tables are not copied into
  the file: reading it needs the same abstraction, and one with another hash or other
  bucket counts is refused; ``game``, ``params`` and ``directory`` are there to say
  which one that is.

``policy`` is the normalised average strategy addressed as
``offset[node] + bucket * n_actions[node] + action`` over the tree that ``game``,
``betting`` and ``cards`` rebuild (:func:`solver.problem.make_problem`); the header's node
count and table size must match the rebuilt tree. Arrays are raw little-endian bytes.

Version 1 files (lossless buckets only, the same fields otherwise) are still read.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgpack  # type: ignore[import-untyped]
import numpy as np

from poker._atomic import atomic_write_bytes
from poker.game import parse_game

from .strategy import Strategy
from .problem import Problem, make_problem

if TYPE_CHECKING:
    from abstraction.card_abstraction import CardAbstraction

__all__ = [
    "FORMAT",
    "VERSION",
    "StrategyFileError",
    "cards_record",
    "check_cards",
    "describe_cards",
    "dumps",
    "load_strategy",
    "loads",
    "save_strategy",
]

FORMAT = "pokerbot-solver-strategy"
VERSION = 2
#: Versions :func:`loads` reads (1: lossless buckets only).
READS_VERSIONS = (1, 2)
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
    cards = cards_record(p)
    policy = np.ascontiguousarray(strategy.policy, dtype=_DTYPES[dtype])
    data = policy.tobytes()
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "game": p.game.to_text(),
        "game_name": p.game.name,
        "betting": p.tree.betting_spec,
        "cards": cards,
        "algorithm": strategy.algorithm,
        "iterations": int(strategy.iterations),
        "tree": {"nodes": p.tree.n_nodes, "table_size": p.size},
        "arrays": {"policy": {"dtype": _DTYPES[dtype], "shape": [p.size], "data": data}},
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    return bytes(msgpack.packb(doc, use_bin_type=True))


def cards_record(p: Problem) -> dict[str, Any]:
    """The ``cards`` field of a file over ``p`` (see the module docstring; training
    checkpoints record the same).

    Raises ``ValueError`` for buckets given as a bare function: nothing would let a
    reader rebuild them.
    """
    buckets = [int(b) for b in p.chance.n_buckets]
    ab = p.abstraction
    if ab is not None:
        return {
            "abstraction": "card",
            "buckets": buckets,
            "content_hash": ab.content_hash,
            "game": ab.game.name,
            "params": ab.params.to_json(),
            "directory": str(ab.directory),
        }
    if not p.chance.lossless:
        raise ValueError(
            "the strategy's buckets come from a bare bucket function, not a card abstraction: "
            "a file could not say how to rebuild them"
        )
    return {"abstraction": "lossless", "buckets": buckets}


def describe_cards(cards: dict[str, Any]) -> str:
    """Short text naming a ``cards`` record, for messages."""
    if cards.get("abstraction") != "card":
        return "lossless buckets"
    where = f", built at {cards['directory']}" if cards.get("directory") else ""
    b = cards.get("buckets")
    counts = "/".join(str(x) for x in b) if isinstance(b, list) else "?"
    return f"card abstraction {cards.get('content_hash')} (buckets {counts}{where})"


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


def check_cards(cards: dict[str, Any], abstraction: CardAbstraction | None, source: str) -> None:
    """Raise :class:`StrategyFileError` (one line, starting with ``source``) unless
    ``abstraction`` is the one the ``cards`` record names (None for lossless buckets)."""
    kind = cards.get("abstraction")
    if kind == "lossless":
        if abstraction is not None:
            raise StrategyFileError(
                f"{source} was trained without a card abstraction (lossless buckets), "
                f"but card abstraction {abstraction.directory} was given"
            )
        return
    if kind != "card":
        raise StrategyFileError(f"{source}: card abstraction {kind!r} is not supported")
    want = cards.get("content_hash")
    if not isinstance(want, str):
        raise StrategyFileError(f"{source}: the card abstraction record has no content hash")
    if abstraction is None:
        raise StrategyFileError(
            f"{source} was trained over {describe_cards(cards)}: give that abstraction "
            "(--abstraction DIR)"
        )
    if abstraction.content_hash != want:
        raise StrategyFileError(
            f"{source} was trained over card abstraction {want}, but "
            f"{abstraction.directory} is {abstraction.content_hash}"
        )
    if cards.get("buckets") != abstraction.bucket_counts:
        raise StrategyFileError(
            f"{source}: bucket counts {cards.get('buckets')} differ from the abstraction's "
            f"{abstraction.bucket_counts}"
        )


def loads(
    data: bytes, source: str = "<bytes>", abstraction: CardAbstraction | None = None
) -> Strategy:
    """Read a strategy from msgpack bytes; rebuilds the tree and checks it matches.

    ``abstraction``: the card abstraction the file records (required for such files,
    refused for lossless ones). Raises :class:`StrategyFileError` (one line) on a damaged
    file, an unknown version, or the wrong abstraction, and ``ValueError`` if the
    abstraction was not built for the file's game.
    """
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
    if version not in READS_VERSIONS:
        raise StrategyFileError(
            f"{source}: version {version} is not supported (this reader knows "
            f"{', '.join(str(v) for v in READS_VERSIONS)})"
        )
    game = parse_game(
        _get(doc, "game", str, source), source=f"{source}:game", name=doc.get("game_name", "") or ""
    )
    betting = _get(doc, "betting", str, source)
    cards = _get(doc, "cards", dict, source)
    if version == 1 and cards.get("abstraction") != "lossless":
        raise StrategyFileError(f"{source}: version 1 files hold lossless buckets only")
    check_cards(cards, abstraction, source)
    problem = make_problem(game, betting or None, abstraction=abstraction)
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


def load_strategy(path: str | Path, abstraction: CardAbstraction | None = None) -> Strategy:
    """Read a strategy file written by :func:`save_strategy` (see :func:`loads` for
    ``abstraction``)."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise StrategyFileError(f"{p}: {size} bytes is more than the limit {MAX_FILE_BYTES}")
        data = p.read_bytes()
    except OSError as exc:
        raise StrategyFileError(f"{p}: cannot read ({exc.strerror})") from None
    return loads(data, source=str(p), abstraction=abstraction)
