"""Strategy files: a trained strategy with everything needed to play it, in one file.

Format version 3 (written here) is laid out for large files: a fixed preamble, a small
msgpack header, then raw little-endian arrays at 64-byte aligned offsets, which the
reader maps (:class:`numpy.memmap` semantics through :mod:`mmap`) instead of copying::

    offset 0   b"PKBSTRAT"              magic
           8   uint32 version (3), uint32 flags (0), uint64 header length
          24   sha256 of every byte from offset 56 to the end of the file
          56   header (msgpack map)
               arrays, each at a multiple of 64

The header::

    {
      "format": "pokerbot-strategy", "version": 3,
      "game": <ACPC .game text>, "game_name": <str>,
      "betting": <betting spec, '' for limit games>,
      "cards": <the buckets, below>,
      "tree": {"nodes": <int>, "table_size": <int>, "sha256": <hex of the tree's arrays>},
      "precision": "u8" | "f32",
      "training": {"algorithm", "iterations", "seconds", "seed", "recipe", ...},
      "evaluation": {...},                 # optional: figures measured on this very file
      "arrays": {<name>: {"dtype", "shape", "offset", "nbytes"}},
      "end": <file size in bytes>
    }

``cards`` is ``{"abstraction": "lossless", "numbering": "canonical", "buckets": [...]}`` (no
card abstraction: a bucket is a suit-isomorphism class of the hand and the board,
:func:`solver.chance.lossless_bucket`) or ``{"abstraction": "card", "buckets":
[...], "model": <the card abstraction's model>, "model_hash": "sha256:...",
"content_hash": <the built abstraction it was trained over>, "params": {...}}``: the
model (parameters, centroids, pair maps; arrays ``model.<name>``) computes every bucket
from the cards, so the file plays with nothing beside it
(:meth:`abstraction.card_abstraction.CardAbstraction.from_model`). Bucket tables are an
optional cache that the player attaches (:mod:`solver.play.player`).

``policy`` (array) is the average strategy addressed as ``offset[node] + bucket *
n_actions[node] + action`` over the tree ``game`` and ``betting`` rebuild
(:func:`solver.tree.build_tree`; its node count, table size and arrays' hash must match
the header). With precision ``u8`` it is quantized to one byte per probability, each
information set's row summing to exactly 255 (largest-remainder rounding,
:func:`quantize`), as competition bots ship theirs; ``f32`` keeps float32.

The reader refuses, with one line naming the file and the reason: a truncated file, any
changed byte (the checksum), appended bytes, an unknown or future version, a header that
declares sizes beyond the file or beyond a cap, and a file for another game than the
one asked for. Versions 1 and 2 (one msgpack map holding a float policy; version 1
lossless only) are still read.

A lossless record without ``numbering`` was written before canonical classes: its
buckets are the raw (board state, hand) pairs (:func:`solver.chance.raw_lossless_bucket`,
counts :func:`solver.chance.raw_lossless_bucket_counts`). Such files are still read and
played, in their own numbering (:attr:`StrategyFile.numbering`); a strategy or checkpoint
saved from one keeps it.
"""

from __future__ import annotations

import hashlib
import mmap
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgpack  # type: ignore[import-untyped]
import numpy as np
from numba import njit

from abstraction.betting import parse_betting
from poker._atomic import atomic_write
from poker.game import Game, parse_game

from .arrayfile import KINDS, STRATEGY_MAGIC, ArrayEntry, ArrayFileRules, ArraySpec, array_view, encode_arrays, read_arrays, write_arrays
from .chance import NUMBERINGS, build_chance, lossless_bucket_counts, raw_lossless_bucket_counts
from .problem import Problem, make_problem
from .strategy import Strategy
from .tree import DECISION, Tree, build_tree, table_offsets

if TYPE_CHECKING:
    from abstraction.card_abstraction import CardAbstraction

__all__ = [
    "FORMAT", "PRECISIONS", "VERSION", "StrategyFile", "StrategyFileError", "cards_record",
    "check_cards", "describe_cards", "dumps", "dumps_policy", "load_strategy", "loads",
    "lossless_numbering", "open_strategy", "quantize", "save_policy", "save_strategy", "tree_hash",
]

FORMAT = "pokerbot-strategy"
#: Format name of versions 1 and 2.
LEGACY_FORMAT = "pokerbot-solver-strategy"
VERSION = 3
#: Versions the reader knows (1 and 2: one msgpack map; 3: header and mapped arrays).
READS_VERSIONS = (1, 2, 3)
MAGIC = STRATEGY_MAGIC
#: Caps on what a header may declare.
MAX_FILE_BYTES = 1 << 36
MAX_HEADER_BYTES = 1 << 24
MAX_ARRAYS = 256
#: Largest version 1/2 file read (they are read whole).
MAX_LEGACY_BYTES = 1 << 31
PRECISIONS = ("u8", "f32")
_ARRAY_DTYPES = {"|u1", "|i1", "<u2", "<i2", "<i4", "<u4", "<i8", "<f4", "<f8"}
_LEGACY_DTYPES = {"float64": "<f8", "float32": "<f4"}


class StrategyFileError(ValueError):
    """A strategy file that cannot be read; the message names the file and the problem."""


# ------------------------------------------------------------------ quantization


@njit(cache=True, inline="always")
def _quantize_row(policy, o, k, out, do, floor, rem):  # pragma: no cover - compiled
    """Largest-remainder rounding of ``policy[o:o + k]`` (its positive parts over their
    sum; uniform without any) to integers summing to 255, into ``out[do:do + k]``."""
    total = 0.0
    for a in range(k):
        v = policy[o + a]
        total += v if v > 0.0 else 0.0
    given = 0
    for a in range(k):
        v = policy[o + a]
        p = (v if v > 0.0 else 0.0) / total if total > 0.0 else 1.0 / k
        x = p * 255.0
        f = np.int64(np.floor(x))
        floor[a] = f
        rem[a] = x - f
        given += f
    # hand the missing units to the largest remainders (ties: the first action)
    for _ in range(255 - given):
        best = 0
        for a in range(1, k):
            if rem[a] > rem[best]:
                best = a
        floor[best] += 1
        rem[best] = -1.0
    for a in range(k):
        out[do + a] = floor[a]


@njit(cache=True)
def _quantize_rows(policy, kind, street, n_child, offset, n_buckets, out):  # pragma: no cover - compiled
    """Largest-remainder rounding of every row to integers summing to 255."""
    for node in range(kind.shape[0]):
        if kind[node] != DECISION:
            continue
        k = n_child[node]
        base = offset[node]
        floor = np.empty(k, np.int64)
        rem = np.empty(k)
        for b in range(n_buckets[street[node]]):
            _quantize_row(policy, base + b * k, k, out, base + b * k, floor, rem)


@njit(cache=True)
def quantize_sums(sums, fallback, use_fallback, out):  # pragma: no cover - compiled
    """``out`` (uint8 [rows, actions]) = the rows of ``sums`` (average-strategy sums,
    [rows, actions], any float dtype and strides) normalised as the solvers normalise
    them (positive parts over their sum, in float64) and then rounded as :func:`quantize`
    rounds them: the same bytes as quantizing the normalised float64 policy, without
    making it. A row whose sums are all zero takes, with ``use_fallback``, the
    normalised row of ``fallback`` (regrets: regret matching) instead of uniform."""
    k = sums.shape[1]
    row = np.empty(k)
    floor = np.empty(k, np.int64)
    rem = np.empty(k)
    flat = out.reshape(-1)
    for r in range(sums.shape[0]):
        src = sums
        if use_fallback:
            empty = True
            for a in range(k):
                if sums[r, a] != 0.0:
                    empty = False
            if empty:
                src = fallback
        total = 0.0
        for a in range(k):
            v = np.float64(src[r, a])
            if v > 0.0:
                total += v
        for a in range(k):
            v = np.float64(src[r, a])
            if total > 0.0:
                row[a] = v / total if v > 0.0 else 0.0
            else:
                row[a] = 1.0 / k
        _quantize_row(row, 0, k, flat, r * k, floor, rem)


def quantize(policy: np.ndarray, tree: Tree, offset: np.ndarray, n_buckets: list[int]) -> np.ndarray:
    """``policy`` as one byte per probability: each information set's row sums to
    exactly 255 (largest-remainder rounding; a row with no mass becomes uniform)."""
    out = np.zeros(policy.shape[0], dtype=np.uint8)
    _quantize_rows(np.ascontiguousarray(policy, dtype=np.float64), tree.kind, tree.street, tree.n_child,
                   np.ascontiguousarray(offset, dtype=np.int64), np.asarray(n_buckets, dtype=np.int64), out)
    return out


def dequantize(table: np.ndarray) -> np.ndarray:
    """A stored policy as float64 probabilities (u8 rows divided by 255)."""
    if table.dtype == np.uint8:
        return table.astype(np.float64) / 255.0
    return np.asarray(table, dtype=np.float64)


def tree_hash(tree: Tree) -> str:
    """sha256 (hex) of the tree's shape: the arrays a policy's addressing depends on."""
    h = hashlib.sha256()
    for a in (tree.kind, tree.player, tree.street, tree.child, tree.n_child, tree.spent,
              tree.action, tree.amount):
        h.update(np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes())
    return h.hexdigest()


# ------------------------------------------------------------------ the cards record


def cards_record(p: Problem, *, model: bool = False) -> dict[str, Any]:
    """The ``cards`` field of a file over ``p`` (see the module docstring; training
    checkpoints record the same, without the model). With ``model`` the card
    abstraction's model is included (format 3).

    Raises ``ValueError`` for buckets given as a bare function: nothing would let a
    reader rebuild them.
    """
    buckets = [int(b) for b in p.chance.n_buckets]
    if p.abstraction is None and not p.chance.lossless:
        raise ValueError(
            "the strategy's buckets come from a bare bucket function, not a card abstraction: "
            "a file could not say how to rebuild them"
        )
    return _card_fields(p.abstraction, buckets, model, p.chance.numbering)


def lossless_numbering(cards: dict[str, Any], source: str = "the file") -> str:
    """The numbering of a lossless ``cards`` record: ``"canonical"`` (suit-isomorphism
    classes) or ``"raw"`` (no ``numbering`` field: a record written before canonical
    classes, every (board, hand) pair its own bucket). Raises
    :class:`StrategyFileError` for a numbering this version does not know."""
    numbering = cards.get("numbering", "raw")
    if numbering not in NUMBERINGS:
        raise StrategyFileError(
            f"{source}: lossless bucket numbering {numbering!r} is not one of {', '.join(NUMBERINGS)}"
        )
    return str(numbering)


def describe_cards(cards: dict[str, Any]) -> str:
    """Short text naming a ``cards`` record, for messages."""
    if cards.get("abstraction") != "card":
        if cards.get("abstraction") == "lossless" and "numbering" not in cards:
            return "lossless buckets (raw (board, hand) numbering, before suit classes)"
        return "lossless buckets"
    where = f", built at {cards['directory']}" if cards.get("directory") else ""
    b = cards.get("buckets")
    counts = "/".join(str(x) for x in b) if isinstance(b, list) else "?"
    return f"card abstraction {cards.get('content_hash')} (buckets {counts}{where})"


def check_cards(
    cards: dict[str, Any], abstraction: CardAbstraction | None, source: str, *, raw_ok: bool = False
) -> None:
    """Raise :class:`StrategyFileError` (one line, starting with ``source``) unless
    ``abstraction`` is the one the ``cards`` record names (None for lossless buckets).

    A record that carries the model (format 3) also accepts an abstraction with the
    same model hash. Lossless buckets in the raw numbering of older files
    (:func:`lossless_numbering`) are refused unless ``raw_ok`` (the reader of strategy
    files plays them; training cannot resume them: the message says to retrain).
    """
    kind = cards.get("abstraction")
    if kind == "lossless":
        if abstraction is not None:
            raise StrategyFileError(
                f"{source} was trained without a card abstraction (lossless buckets), "
                f"but card abstraction {abstraction.directory} was given"
            )
        if lossless_numbering(cards, source) == "raw" and not raw_ok:
            raise StrategyFileError(
                f"{source} numbers its lossless buckets per (board, hand) pair, as before "
                "suit-isomorphism classes, and cannot be continued: train again without "
                "--resume (pokerbot train GAME --algo ALGO ... --out FILE)"
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
    same_model = cards.get("model_hash") is not None and cards.get("model_hash") == abstraction.model_hash
    if abstraction.content_hash != want and not same_model:
        raise StrategyFileError(
            f"{source} was trained over card abstraction {want}, but "
            f"{abstraction.directory} is {abstraction.content_hash}"
        )
    if cards.get("buckets") != abstraction.bucket_counts:
        raise StrategyFileError(
            f"{source}: bucket counts {cards.get('buckets')} differ from the abstraction's "
            f"{abstraction.bucket_counts}"
        )


# ------------------------------------------------------------------ writing


def _card_fields(
    abstraction: CardAbstraction | None, buckets: list[int], model: bool, numbering: str = "canonical"
) -> dict[str, Any]:
    """The ``cards`` record of ``abstraction`` (None: lossless buckets ``buckets`` in
    ``numbering``; the raw numbering is recorded as older files did, without the field)."""
    if abstraction is None:
        if numbering == "raw":
            return {"abstraction": "lossless", "buckets": buckets}
        return {"abstraction": "lossless", "numbering": numbering, "buckets": buckets}
    ab = abstraction
    try:
        content = ab.content_hash
    except ValueError:  # a model with no tables and no record of the build it came from
        content = ""
    rec: dict[str, Any] = {"abstraction": "card", "buckets": buckets, "content_hash": content,
                           "game": ab.game.name, "params": ab.params.to_json(),
                           "directory": str(ab.directory) if ab.directory is not None else ""}
    if model:
        meta, _ = ab.model()
        rec["model"] = meta
        rec["model_hash"] = ab.model_hash
    return rec


def dumps(
    strategy: Strategy,
    precision: str = "u8",
    *,
    training: dict[str, Any] | None = None,
    evaluation: dict[str, Any] | None = None,
) -> bytes:
    """The bytes of a format-3 file holding ``strategy`` (see the module docstring).

    ``precision``: 'u8' (one byte per probability) or 'f32'. ``training``: how it was
    made (algorithm and iterations are taken from ``strategy`` when absent);
    ``evaluation``: figures measured on the stored (quantized) policy. As in
    :func:`dumps_policy`, ``strategy.policy`` may be rows already quantized (uint8 summing
    to 255: :func:`quantize`, or a sampled solver's ``quantized_average``).
    """
    return encode_arrays(MAGIC, VERSION, *_strategy_contents(strategy, precision, training, evaluation))


def _strategy_contents(
    strategy: Strategy, precision: str, training: dict[str, Any] | None, evaluation: dict[str, Any] | None
) -> tuple[dict[str, Any], list[ArraySpec]]:
    p = strategy.problem
    cards = cards_record(p, model=True)
    train = {"algorithm": strategy.algorithm, "iterations": int(strategy.iterations)}
    train.update(training or {})
    return _contents(p.tree, p.offset, cards, p.abstraction, strategy.policy, precision, train, evaluation)


def dumps_policy(
    game: Game,
    betting: str | None,
    policy: np.ndarray,
    *,
    abstraction: CardAbstraction | None = None,
    precision: str = "u8",
    training: dict[str, Any] | None = None,
    evaluation: dict[str, Any] | None = None,
) -> bytes:
    """A format-3 file from a policy table alone, without a :class:`Problem`: for games
    whose chance layer cannot be listed (the full deck). ``policy`` is addressed over
    ``build_tree(game, betting)`` with the abstraction's bucket counts (lossless counts
    without one): probabilities (float) or already quantized rows (uint8 summing to 255).
    """
    return encode_arrays(MAGIC, VERSION, *_policy_contents(game, betting, policy, abstraction, precision,
                                                           training, evaluation))  # fmt: skip


def _policy_contents(game: Game, betting: str | None, policy: np.ndarray, abstraction: CardAbstraction | None = None,
                     precision: str = "u8", training: dict[str, Any] | None = None,
                     evaluation: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[ArraySpec]]:  # fmt: skip
    tree = build_tree(game, betting)
    counts = abstraction.bucket_counts if abstraction is not None else list(lossless_bucket_counts(game))
    offset, size = table_offsets(tree, counts)
    if policy.shape != (size,):
        raise ValueError(f"policy has shape {policy.shape}, the table has {size} entries")
    cards = _card_fields(abstraction, [int(c) for c in counts], model=True)
    return _contents(tree, offset, cards, abstraction, policy, precision, dict(training or {}), evaluation)


def save_policy(path: str | Path, game: Game, betting: str | None, policy: np.ndarray, **kwargs: Any) -> None:
    """Write :func:`dumps_policy` ``(game, betting, policy, **kwargs)`` to ``path`` atomically,
    array by array (no copy of the file in memory)."""
    header, specs = _policy_contents(game, betting, policy, **kwargs)
    atomic_write(Path(path), lambda fh: write_arrays(fh, MAGIC, VERSION, header, specs))


def _contents(
    tree: Tree,
    offset: np.ndarray,
    cards: dict[str, Any],
    abstraction: CardAbstraction | None,
    policy: np.ndarray,
    precision: str,
    training: dict[str, Any],
    evaluation: dict[str, Any] | None,
) -> tuple[dict[str, Any], list[ArraySpec]]:
    """A format-3 file's header (without its arrays' places) and arrays."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    size = int(policy.shape[0])
    if precision == "u8":
        table = policy if policy.dtype == np.uint8 else quantize(policy, tree, offset, cards["buckets"])
    else:
        table = np.ascontiguousarray(dequantize(policy), dtype="<f4")
    arrays = {"policy": table}
    if abstraction is not None:
        _, model = abstraction.model()
        arrays.update({f"model.{k}": v for k, v in model.items()})
    game = tree.game
    header: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "game": game.to_text(),
        "game_name": game.name,
        "betting": tree.betting_spec,
        "cards": cards,
        "tree": {"nodes": tree.n_nodes, "table_size": size, "sha256": tree_hash(tree)},
        "precision": precision,
        "training": training,
        "evaluation": evaluation or {},
    }
    return header, [ArraySpec.of(name, a) for name, a in arrays.items()]


def save_strategy(
    path: str | Path,
    strategy: Strategy,
    precision: str = "u8",
    *,
    training: dict[str, Any] | None = None,
    evaluation: dict[str, Any] | None = None,
) -> None:
    """Write ``strategy`` to ``path`` in format 3, atomically (temporary file, fsync,
    rename), array by array (no copy of the file in memory); arguments as :func:`dumps`."""
    header, specs = _strategy_contents(strategy, precision, training, evaluation)
    atomic_write(Path(path), lambda fh: write_arrays(fh, MAGIC, VERSION, header, specs))


# ------------------------------------------------------------------ reading


@dataclass(eq=False)
class StrategyFile:
    """An opened strategy file: what playing and inspecting need, read lazily.

    ``table`` is the stored policy as it is in the file (uint8 rows summing to 255, or
    float), mapped, not copied; :attr:`tree` is rebuilt from the game and betting on
    first use and checked against the header; :attr:`abstraction` is the card
    abstraction built from the file's model (None for lossless buckets), without bucket
    tables until the player attaches some (:mod:`solver.play.player` also makes the
    bucket functions and the translated policy of a file).
    """

    source: str
    version: int
    game: Game
    betting: str
    cards: dict[str, Any]
    precision: str
    training: dict[str, Any]
    evaluation: dict[str, Any]
    table: np.ndarray
    header: dict[str, Any]
    file_bytes: int
    abstraction: CardAbstraction | None = None
    _tree: Tree | None = field(default=None, repr=False)
    _offset: np.ndarray | None = field(default=None, repr=False)
    _strategy: Strategy | None = field(default=None, repr=False)

    @property
    def tree(self) -> Tree:
        """The abstract betting tree (rebuilt once, checked against the header)."""
        if self._tree is None:
            tree = build_tree(self.game, self.betting or None)
            info = self.header.get("tree", {})
            offset, size = table_offsets(tree, self.cards["buckets"])
            if info.get("nodes") != tree.n_nodes or info.get("table_size") != size:
                raise StrategyFileError(
                    f"{self.source}: header says {info.get('nodes')} nodes / table "
                    f"{info.get('table_size')}, the rebuilt tree has {tree.n_nodes} / {size}"
                )
            if "sha256" in info and info["sha256"] != tree_hash(tree):
                raise StrategyFileError(
                    f"{self.source}: the betting tree this version builds differs from the one "
                    "the strategy was trained on"
                )
            self._tree, self._offset = tree, offset
        return self._tree

    @property
    def offset(self) -> np.ndarray:
        """Each decision node's first table entry."""
        if self._offset is None:
            _ = self.tree
        assert self._offset is not None
        return self._offset

    @property
    def bucket_counts(self) -> list[int]:
        """Buckets per street."""
        return [int(b) for b in self.cards["buckets"]]

    @property
    def numbering(self) -> str | None:
        """The lossless buckets' numbering (:func:`lossless_numbering`: ``"canonical"``,
        or ``"raw"`` in a file older than suit classes); None over a card abstraction."""
        if self.cards.get("abstraction") != "lossless":
            return None
        return lossless_numbering(self.cards, self.source)

    def policy(self) -> np.ndarray:
        """The stored policy as float64 probabilities (a copy)."""
        out = dequantize(self.table)  # the table itself when it is float64 (versions 1 and 2)
        return out.copy() if out is self.table else out

    def to_strategy(self) -> Strategy:
        """A :class:`Strategy` over a full :class:`Problem` (tree and chance layer), for
        exact evaluation; small games only (the chance layer lists every board and hand)."""
        if self._strategy is None:
            problem = _make_problem(self.game, self.betting or None, self.abstraction, self.numbering)
            if problem.size != self.table.shape[0]:
                raise StrategyFileError(
                    f"{self.source}: the policy has {self.table.shape[0]} entries, the game's "
                    f"table {problem.size}"
                )
            self._strategy = Strategy(
                problem=problem,
                policy=self.policy(),
                iterations=int(self.training.get("iterations", 0)),
                algorithm=str(self.training.get("algorithm", "")),
            )
        return self._strategy

    def describe(self) -> dict[str, Any]:
        """Metadata for ``pokerbot inspect``: version, game, betting, buckets, sizes, training."""
        arrays = self.header.get("arrays", {})
        return {
            "file": self.source,
            "version": self.version,
            "file_bytes": self.file_bytes,
            "game": self.game.name,
            "betting": self.betting,
            "cards": {k: v for k, v in self.cards.items() if k != "model"},
            "precision": self.precision,
            "table_entries": int(self.table.shape[0]),
            "tree_nodes": self.header.get("tree", {}).get("nodes"),
            "arrays": {k: {"dtype": v.get("dtype"), "shape": v.get("shape"), "bytes": v.get("nbytes")}
                       for k, v in arrays.items()} if isinstance(arrays, dict) else {},
            "training": self.training,
            "evaluation": self.evaluation,
        }


def _fail(source: str, why: str) -> StrategyFileError:
    return StrategyFileError(f"{source}: {why}")


def _make_problem(
    game: Game, betting: str | None, abstraction: CardAbstraction | None, numbering: str | None
) -> Problem:
    """:func:`solver.problem.make_problem`, or for an older file's raw lossless numbering
    the same problem over a chance layer numbered that way."""
    if abstraction is not None or numbering != "raw":
        return make_problem(game, betting, abstraction=abstraction)
    tree = build_tree(game, betting)
    chance = build_chance(game, numbering="raw")
    offset, size = table_offsets(tree, chance.n_buckets)
    return Problem(tree=tree, chance=chance, offset=offset, size=size, ktree=tree.kernel(offset))


def _check_lossless_counts(g: Game, cards: dict[str, Any], source: str) -> None:
    """A lossless record's bucket counts must be those of its numbering for ``g``."""
    numbering = lossless_numbering(cards, source)
    try:
        want = lossless_bucket_counts(g) if numbering == "canonical" else raw_lossless_bucket_counts(g)
    except ValueError as exc:
        raise _fail(source, f"lossless buckets: {exc}") from None
    if cards.get("buckets") != list(want):
        raise _fail(source, f"bucket counts {cards.get('buckets')} are not the {numbering} lossless "
                            f"counts {list(want)} of {g.name or 'the game'}")


def _get(doc: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in doc:
        raise StrategyFileError(f"{where}: missing field {key!r}")
    value = doc[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise StrategyFileError(f"{where}: field {key!r} has type {type(value).__name__}")
    return value


def _rules() -> ArrayFileRules:
    """What :func:`solver.arrayfile.read_arrays` accepts as a format-3 file (the caps as
    the module holds them now)."""
    return ArrayFileRules(
        magic=MAGIC, what="pokerbot strategy file", format=FORMAT, versions=(3,), known=READS_VERSIONS,
        latest=VERSION, dtypes=frozenset(_ARRAY_DTYPES), max_file_bytes=MAX_FILE_BYTES,
        max_header_bytes=MAX_HEADER_BYTES, max_arrays=MAX_ARRAYS,
    )  # fmt: skip


def _parse_v3(buf: Any, source: str, file_bytes: int) -> tuple[dict[str, Any], dict[str, ArrayEntry]]:
    """Check preamble, checksum and header of a format-3 file in ``buf``; the header and
    where each array lies."""
    _, doc, out = read_arrays(buf, file_bytes, _rules(), lambda why: _fail(source, why))
    if "policy" not in out or len(out["policy"].shape) != 1:
        raise _fail(source, "no one-dimensional policy array")
    return doc, out


def _from_v3(buf: Any, source: str, file_bytes: int, game: Game | None,
             abstraction: CardAbstraction | None) -> StrategyFile:
    doc, arrays = _parse_v3(buf, source, file_bytes)

    def array(name: str) -> np.ndarray:
        return array_view(buf, arrays[name])

    g = _read_game(doc, source)
    _check_game(g, game, source)
    cards = _get(doc, "cards", dict, source)
    precision = _get(doc, "precision", str, source)
    if precision not in PRECISIONS:
        raise _fail(source, f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    table = array("policy")
    want = np.dtype("<u1") if precision == "u8" else np.dtype("<f4")
    if table.dtype != want:
        raise _fail(source, f"policy dtype {table.dtype.str} does not match precision {precision}")
    ab = None
    if cards.get("abstraction") == "card":
        ab = _model_abstraction(cards, {k[len("model."):]: array(k) for k in arrays if k.startswith("model.")},
                                source, abstraction)
    elif cards.get("abstraction") != "lossless":
        raise _fail(source, f"card abstraction {cards.get('abstraction')!r} is not supported")
    else:
        check_cards(cards, abstraction, source, raw_ok=True)
    buckets = cards.get("buckets")
    if not isinstance(buckets, list) or len(buckets) != g.num_rounds:
        raise _fail(source, f"bucket counts {buckets!r} do not give one per street")
    if ab is None:
        _check_lossless_counts(g, cards, source)
    betting = _get(doc, "betting", str, source)
    _check_betting(betting, source)
    return StrategyFile(
        source=source,
        version=3,
        game=g,
        betting=betting,
        cards=cards,
        precision=precision,
        training=doc.get("training") if isinstance(doc.get("training"), dict) else {},
        evaluation=doc.get("evaluation") if isinstance(doc.get("evaluation"), dict) else {},
        table=table,
        header=doc,
        file_bytes=file_bytes,
        abstraction=ab,
    )


def _model_abstraction(cards: dict[str, Any], arrays: dict[str, np.ndarray], source: str,
                       given: CardAbstraction | None) -> CardAbstraction:
    """The card abstraction the file's model computes, checked against the record (or
    ``given``, checked the same way); no bucket tables attached."""
    from abstraction.card_abstraction import CardAbstraction  # the evaluator and features load lazily

    meta = cards.get("model")
    if not isinstance(meta, dict):
        raise _fail(source, "the card abstraction record holds no model")
    try:
        model = dict(meta, content_hash=cards.get("content_hash")) if cards.get("content_hash") else meta
        ab = CardAbstraction.from_model(model, {k: np.array(v) for k, v in arrays.items()})
    except ValueError as exc:
        raise _fail(source, f"card abstraction model: {exc}") from None
    if ab.model_hash != cards.get("model_hash"):
        raise _fail(source, "the card abstraction model does not match its recorded hash")
    if ab.bucket_counts != cards.get("buckets"):
        raise _fail(source, f"bucket counts {cards.get('buckets')} differ from the model's {ab.bucket_counts}")
    if given is not None:
        check_cards(cards, given, source)
        return given
    return ab


def _read_game(doc: dict[str, Any], source: str) -> Game:
    try:
        return parse_game(_get(doc, "game", str, source), source=f"{source}:game",
                          name=doc.get("game_name", "") or "")
    except StrategyFileError:
        raise
    except ValueError as exc:
        raise _fail(source, f"game definition: {exc}") from None


def _check_game(g: Game, want: Game | None, source: str) -> None:
    if want is not None and g.to_text() != want.to_text():
        if g.name and g.name != want.name:
            raise _fail(source, f"the strategy is for {g.name}, not {want.name or 'this game'}")
        # the same name (or none): say which line of the definitions differs
        ours, theirs = g.to_text().splitlines(), want.to_text().splitlines()
        diff = next(((a, b) for a, b in zip(ours, theirs) if a != b), None)
        detail = f": its '{diff[0].strip()}' where the game has '{diff[1].strip()}'" if diff else ""
        raise _fail(source, f"the strategy is for another definition of {g.name or 'this game'}{detail}")


def _check_betting(betting: str, source: str) -> None:
    if betting:
        try:
            parse_betting(betting)
        except ValueError as exc:
            raise _fail(source, f"betting abstraction: {exc}") from None


def _from_legacy(data: bytes, source: str, game: Game | None, abstraction: CardAbstraction | None) -> StrategyFile:
    s, version = _loads_legacy(data, source, abstraction)
    _check_game(s.game, game, source)
    p = s.problem
    cards = cards_record(p)
    return StrategyFile(
        source=source,
        version=version,
        game=p.game,
        betting=p.tree.betting_spec,
        cards=cards,
        precision="f64",
        training={"algorithm": s.algorithm, "iterations": s.iterations},
        evaluation={},
        table=s.policy,
        header={"tree": {"nodes": p.tree.n_nodes, "table_size": p.size}},
        file_bytes=len(data),
        abstraction=p.abstraction,
        _tree=p.tree,
        _offset=p.offset,
        _strategy=s,
    )


def _loads_legacy(data: bytes, source: str, abstraction: CardAbstraction | None) -> tuple[Strategy, int]:
    """Versions 1 and 2: one msgpack map holding the float policy; the strategy and the
    file's version."""
    if len(data) > MAX_LEGACY_BYTES:
        raise _fail(source, f"{len(data)} bytes is more than the limit {MAX_LEGACY_BYTES}")
    not_ours = (f"not a strategy file: it starts with neither {MAGIC.decode()} (a pokerbot strategy "
                "file) nor a msgpack map (the old format)")
    # a msgpack map starts with a fixmap, map 16 or map 32 marker
    if not data or not (0x80 <= data[0] <= 0x8F or data[0] in (0xDE, 0xDF)):
        raise _fail(source, not_ours)
    try:
        doc = msgpack.unpackb(data, raw=False, strict_map_key=True, max_bin_len=len(data),
                              max_str_len=min(len(data), 1 << 20), max_array_len=1 << 16,
                              max_map_len=1 << 10, max_ext_len=0)  # fmt: skip
    except (ValueError, TypeError, msgpack.UnpackException):
        raise _fail(source, "not a strategy file: it starts like an old-format (msgpack) strategy, "
                            "but is not one whole msgpack map (truncated, or other data)") from None
    if not isinstance(doc, dict):
        raise _fail(source, not_ours)
    if doc.get("format") != LEGACY_FORMAT:
        raise _fail(source, f"format is {doc.get('format')!r}, expected {FORMAT!r}")
    version = _get(doc, "version", int, source)
    if version not in (1, 2):
        raise _fail(source, f"version {version} is not supported (this reader knows "
                            f"{', '.join(str(v) for v in READS_VERSIONS)})")
    game = _read_game(doc, source)
    betting = _get(doc, "betting", str, source)
    cards = _get(doc, "cards", dict, source)
    if version == 1 and cards.get("abstraction") != "lossless":
        raise _fail(source, "version 1 files hold lossless buckets only")
    check_cards(cards, abstraction, source, raw_ok=True)
    numbering = lossless_numbering(cards, source) if cards.get("abstraction") == "lossless" else None
    problem = _make_problem(game, betting or None, abstraction, numbering)
    tree_info = _get(doc, "tree", dict, source)
    if tree_info.get("nodes") != problem.tree.n_nodes or tree_info.get("table_size") != problem.size:
        raise _fail(source, f"header says {tree_info.get('nodes')} nodes / table {tree_info.get('table_size')}, "
                            f"the rebuilt tree has {problem.tree.n_nodes} / {problem.size}")
    arrays = _get(doc, "arrays", dict, source)
    pol = arrays.get("policy")
    if not isinstance(pol, dict):
        raise _fail(source, "no policy array")
    dt = pol.get("dtype")
    if dt not in _LEGACY_DTYPES.values():
        raise _fail(source, f"policy dtype {dt!r} is not one of {sorted(_LEGACY_DTYPES.values())}")
    raw = pol.get("data")
    if not isinstance(raw, bytes):
        raise _fail(source, "policy data is not bytes")
    if pol.get("shape") != [problem.size] or len(raw) != problem.size * np.dtype(dt).itemsize:
        raise _fail(source, f"policy shape {pol.get('shape')} with {len(raw)} bytes does not match "
                            f"table size {problem.size}")
    if hashlib.sha256(raw).hexdigest() != doc.get("sha256"):
        raise _fail(source, "checksum mismatch (the file is damaged)")
    strategy = Strategy(
        problem=problem,
        policy=np.frombuffer(raw, dtype=dt).astype(np.float64),
        iterations=int(_get(doc, "iterations", int, source)),
        algorithm=str(_get(doc, "algorithm", str, source)),
    )
    return strategy, version


def loads_file(
    data: bytes,
    source: str = "<bytes>",
    *,
    game: Game | None = None,
    abstraction: CardAbstraction | None = None,
) -> StrategyFile:
    """Open a strategy held in ``data`` (any version); see :func:`open_strategy`."""
    if data[: len(MAGIC)] in KINDS:  # format 3, or a file of another kind in its layout
        return _from_v3(data, source, len(data), game, abstraction)
    return _from_legacy(data, source, game, abstraction)


def open_strategy(
    path: str | Path,
    *,
    game: Game | None = None,
    abstraction: CardAbstraction | None = None,
) -> StrategyFile:
    """Open a strategy file for playing or inspecting: maps its arrays, verifies the
    checksum, rebuilds nothing yet (the tree is built on first use). A file over a card
    abstraction computes every bucket from its model until bucket tables are attached
    (:func:`solver.play.player.open_playable`).

    ``game``: refuse a file trained for another game. ``abstraction``: for version 2
    files over a card abstraction, which do not carry its model.

    Raises :class:`StrategyFileError` with one line on a bad file.
    """
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            size = p.stat().st_size
            if size >= len(MAGIC) and fh.read(len(MAGIC)) in KINDS:
                if size > MAX_FILE_BYTES:
                    raise _fail(str(p), f"{size} bytes is more than the cap {MAX_FILE_BYTES}")
                buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
                return _from_v3(buf, str(p), size, game, abstraction)
            if size > MAX_LEGACY_BYTES:
                raise _fail(str(p), f"{size} bytes is more than the limit {MAX_LEGACY_BYTES}")
            fh.seek(0)
            data = fh.read()
    except OSError as exc:
        raise StrategyFileError(f"{p}: cannot read ({exc.strerror or exc})") from None
    return _from_legacy(data, str(p), game, abstraction)


def loads(data: bytes, source: str = "<bytes>", abstraction: CardAbstraction | None = None) -> Strategy:
    """Read a strategy (any version) from bytes as a :class:`Strategy` with its full
    problem (see :meth:`StrategyFile.to_strategy`); ``abstraction`` as in
    :func:`open_strategy`."""
    return loads_file(data, source, abstraction=abstraction).to_strategy()


def load_strategy(path: str | Path, abstraction: CardAbstraction | None = None) -> Strategy:
    """Read a strategy file as a :class:`Strategy` with its full problem, for exact
    evaluation (small games: the problem lists every board and hand)."""
    return open_strategy(path, abstraction=abstraction).to_strategy()
