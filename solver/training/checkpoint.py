"""Training checkpoints: a run's state, enough to continue it exactly (one thread) or
statistically.

:func:`save_checkpoint` writes any training solver's tables and iteration count (in
vector CFR's layout), and for the sampled solvers (:mod:`solver.training.sampled`) their RNG
states and options, to one msgpack map with a SHA-256 of its arrays;
:func:`load_checkpoint` reads it back (:meth:`Checkpoint.sampling_options` rebuilds a
sampled run's :class:`~solver.training.sampled.SamplingOptions`) and
:func:`restore_checkpoint` loads it into a solver built for the same run. The card buckets are recorded as a strategy file records
them (:mod:`solver.strategy_io`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgpack  # type: ignore[import-untyped]
import numpy as np

from poker._atomic import atomic_write_bytes
from poker.game import parse_game

from ..problem import Problem, make_problem
from .sampled import SampledCFRSolver, SamplingOptions
from ..strategy_io import StrategyFileError, cards_record, check_cards, describe_cards

if TYPE_CHECKING:
    from abstraction.card_abstraction import CardAbstraction

__all__ = [
    "CHECKPOINT_FORMAT",
    "CHECKPOINT_VERSION",
    "Checkpoint",
    "CheckpointError",
    "load_checkpoint",
    "restore_checkpoint",
    "save_checkpoint",
]


CHECKPOINT_FORMAT = "pokerbot-training-checkpoint"
CHECKPOINT_VERSION = 1
_NP = {"<f8": np.float64, "<f4": np.float32, "<u8": np.uint64, "<i4": np.int32, "<i8": np.int64}


class CheckpointError(ValueError):
    """A checkpoint that cannot be read or does not fit the run; the message says why."""


@dataclass
class Checkpoint:
    """A training run's state: enough to continue it exactly (one thread) or statistically."""

    game_text: str
    game_name: str
    betting: str
    algorithm: str
    options: dict[str, Any]
    iterations: int
    nodes: int
    seconds: float
    seed: int
    threads: int
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    #: The card buckets, as a strategy file's ``cards`` field records them (checkpoints
    #: written before card abstractions have none: lossless).
    cards: dict[str, Any] = field(default_factory=lambda: {"abstraction": "lossless"})

    def sampling_options(self, layout: str = "bucket") -> SamplingOptions:
        """The :class:`~solver.training.sampled.SamplingOptions` of the sampled run the
        checkpoint records (its options, seed and threads; the table ``layout`` is not
        recorded: any gives the same run). ``CheckpointError`` for a vector CFR one."""
        if "dtype" not in self.options:  # vector CFR records its delay only
            raise CheckpointError(f"the checkpoint is of a {self.algorithm} run, which samples nothing")
        try:
            return SamplingOptions.from_record(
                self.options, seed=self.seed, threads=self.threads, layout=layout
            )
        except ValueError as exc:
            raise CheckpointError(f"the checkpoint's options {self.options}: {exc}") from None

    def problem(self, abstraction: CardAbstraction | None = None) -> Problem:
        """Rebuild the problem the checkpoint was made for (``abstraction``: the card
        abstraction it records, if any; another one is refused)."""
        try:
            check_cards(self.cards, abstraction, "the checkpoint")
        except StrategyFileError as exc:
            raise CheckpointError(str(exc)) from None
        game = parse_game(self.game_text, source="<checkpoint>", name=self.game_name)
        return make_problem(game, self.betting or None, abstraction=abstraction)


def _pack_array(a: np.ndarray) -> dict[str, Any]:
    a = np.ascontiguousarray(a)
    dt = a.dtype.newbyteorder("<").str
    return {"dtype": dt, "shape": list(a.shape), "data": a.astype(dt, copy=False).tobytes()}


def save_checkpoint(path: str | Path, solver: Any, *, seconds: float = 0.0) -> None:
    """Write ``solver``'s state (regrets, average sums, iteration count and, for sampled
    solvers, RNG states and options; Deep CFR's memories, counts and networks instead of
    tables) to ``path`` atomically, as one msgpack map; its
    ``cards`` field records the card abstraction as a strategy file does
    (:func:`solver.strategy_io.cards_record`)."""
    p = solver.problem
    cards = cards_record(p)
    if solver.algorithm == "deep":  # its memories, counts and networks
        arrays = solver.state_arrays()
        algorithm, options = "deep", solver.options()
        seed, threads, nodes = solver.opts.seed, 1, solver.nodes
    elif isinstance(solver, SampledCFRSolver):  # stored in vector CFR's layout
        arrays = {"regrets": solver.layout.to_canonical(solver.regrets),
                  "avg_sums": solver.layout.to_canonical(solver.avg_sums)}
        algorithm = solver.algorithm
        options = solver.options()
        arrays.update(solver.random_state())
        seed, threads, nodes = solver.sampling.seed, solver.sampling.threads, solver.nodes
    else:
        arrays = {"regrets": solver.regrets, "avg_sums": solver.avg_sums}
        algorithm = solver.algorithm.value
        options = {"delay": solver.delay}
        # chance and public chance sampling draw from a stream keyed by their seed
        seed, threads, nodes = getattr(solver, "seed", 0), 1, 0
    packed = {k: _pack_array(v) for k, v in arrays.items()}
    digest = hashlib.sha256()
    for k in sorted(packed):
        digest.update(packed[k]["data"])
    doc = {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "game": p.game.to_text(),
        "game_name": p.game.name,
        "betting": p.tree.betting_spec,
        "cards": cards,
        "algorithm": algorithm,
        "options": options,
        "iterations": int(solver.iterations),
        "nodes": int(nodes),
        "seconds": float(seconds),
        "seed": int(seed),
        "threads": int(threads),
        "table_size": int(p.size),
        "arrays": packed,
        "sha256": digest.hexdigest(),
    }
    atomic_write_bytes(Path(path), bytes(msgpack.packb(doc, use_bin_type=True)))


def load_checkpoint(path: str | Path) -> Checkpoint:
    """Read a checkpoint written by :func:`save_checkpoint` (checksum verified)."""
    src = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CheckpointError(f"{src}: cannot read ({exc.strerror})") from None
    try:
        doc = msgpack.unpackb(data, raw=False, max_bin_len=len(data), max_ext_len=0)
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise CheckpointError(f"{src}: not a msgpack checkpoint ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{src}: not a {CHECKPOINT_FORMAT} file")
    if doc.get("version") != CHECKPOINT_VERSION:
        raise CheckpointError(f"{src}: version {doc.get('version')} is not {CHECKPOINT_VERSION}")
    try:
        packed = doc["arrays"]
        digest = hashlib.sha256()
        for k in sorted(packed):
            digest.update(packed[k]["data"])
        if digest.hexdigest() != doc["sha256"]:
            raise CheckpointError(f"{src}: checksum mismatch (the file is damaged)")
        arrays = {}
        for k, v in packed.items():
            if v["dtype"] not in _NP:
                raise CheckpointError(f"{src}: array {k} has dtype {v['dtype']!r}")
            arrays[k] = np.frombuffer(v["data"], dtype=v["dtype"]).reshape(v["shape"]).copy()
        return Checkpoint(
            game_text=str(doc["game"]),
            game_name=str(doc.get("game_name", "")),
            betting=str(doc["betting"]),
            algorithm=str(doc["algorithm"]),
            options=dict(doc["options"]),
            iterations=int(doc["iterations"]),
            nodes=int(doc["nodes"]),
            seconds=float(doc["seconds"]),
            seed=int(doc["seed"]),
            threads=int(doc["threads"]),
            arrays=arrays,
            cards=dict(doc.get("cards") or {"abstraction": "lossless"}),
        )
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, CheckpointError):
            raise
        raise CheckpointError(f"{src}: malformed checkpoint ({exc!r})") from None


def restore_checkpoint(solver: Any, ckpt: Checkpoint) -> None:
    """Load ``ckpt``'s tables, counts and RNG states into a solver built for the same run."""
    p = solver.problem
    if ckpt.game_text != p.game.to_text() or ckpt.betting != p.tree.betting_spec:
        raise CheckpointError("the checkpoint was made for a different game or betting abstraction")
    have = cards_record(p)
    lossless = have["abstraction"] == ckpt.cards.get("abstraction") == "lossless"
    if lossless and ckpt.cards.get("numbering", "raw") != have.get("numbering"):
        # the same table size can hold another numbering of the hands (one-suit games)
        raise CheckpointError(
            f"the checkpoint numbers its lossless buckets {ckpt.cards.get('numbering', 'raw')}, "
            f"this run {have.get('numbering')}; train again without --resume"
        )
    if (ckpt.cards.get("abstraction"), ckpt.cards.get("content_hash")) != (
        have["abstraction"],
        have.get("content_hash"),
    ):
        raise CheckpointError(
            f"the checkpoint was trained over {describe_cards(ckpt.cards)}, "
            f"this run uses {describe_cards(have)}; resume with the same --abstraction"
        )
    algorithm = solver.algorithm if isinstance(solver.algorithm, str) else solver.algorithm.value
    if ckpt.algorithm != algorithm:
        raise CheckpointError(f"the checkpoint is of a {ckpt.algorithm} run, not {algorithm}")
    if algorithm == "deep":
        if ckpt.seed != solver.opts.seed:
            raise CheckpointError(f"the checkpoint ran with seed {ckpt.seed}; resume with the same --seed")
        if ckpt.options != solver.options():
            raise CheckpointError(f"the checkpoint's options {ckpt.options} differ from {solver.options()}")
        try:
            solver.restore_arrays(ckpt.arrays, ckpt.iterations)
        except ValueError as exc:
            raise CheckpointError(f"the checkpoint does not fit this run: {exc}") from None
        return
    for name in ("regrets", "avg_sums"):
        a = ckpt.arrays.get(name)
        if a is None or a.shape != (p.size,):
            raise CheckpointError(f"checkpoint array {name} does not fit a table of {p.size}")
    if isinstance(solver, SampledCFRSolver):
        if (ckpt.threads, ckpt.seed) != (solver.sampling.threads, solver.sampling.seed):
            raise CheckpointError(
                f"the checkpoint ran {ckpt.threads} thread(s) with seed {ckpt.seed}; "
                f"resume with the same --threads and --seed"
            )
        if ckpt.options != solver.options():
            raise CheckpointError(
                f"the checkpoint's options {ckpt.options} differ from {solver.options()}"
            )
        try:
            solver.set_random_state(ckpt.arrays["rng"], ckpt.arrays["order"], ckpt.arrays["cursor"])
        except (KeyError, ValueError) as exc:
            raise CheckpointError(f"checkpoint random state: {exc}") from None
        solver.nodes = ckpt.nodes
    if not isinstance(solver, SampledCFRSolver) and ckpt.seed != getattr(solver, "seed", 0):
        raise CheckpointError(f"the checkpoint ran with seed {ckpt.seed}; resume with the same --seed")
    if isinstance(solver, SampledCFRSolver):
        solver.layout.from_canonical(ckpt.arrays["regrets"], solver.regrets)
        solver.layout.from_canonical(ckpt.arrays["avg_sums"], solver.avg_sums)
    else:
        solver.regrets[:] = ckpt.arrays["regrets"]
        solver.avg_sums[:] = ckpt.arrays["avg_sums"]
    solver.iterations = ckpt.iterations
