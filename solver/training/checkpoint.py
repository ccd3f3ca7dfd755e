"""Training checkpoints: a run's state, enough to continue it exactly (one thread) or
statistically.

:func:`save_checkpoint` writes any training solver's tables and iteration count (in
vector CFR's layout), and for the sampled solvers (:mod:`solver.training.sampled`) their
RNG states and options, in the layout of :mod:`solver.arrayfile` (version 2: magic
``PKBCHKPT``, a msgpack header, the raw arrays, a SHA-256 over both), converting and
writing the tables piece by piece so that a checkpoint never holds a copy of them;
:func:`load_checkpoint` maps it back (or reads a version-1 file, one msgpack map, whole;
:meth:`Checkpoint.sampling_options` rebuilds a sampled run's
:class:`~solver.training.sampled.SamplingOptions`) and :func:`restore_checkpoint` copies
it into a solver built for the same run. The card buckets are recorded as a strategy
file records them (:mod:`solver.strategy_io`).
"""

from __future__ import annotations

import hashlib
import mmap
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgpack  # type: ignore[import-untyped]
import numpy as np

from poker._atomic import atomic_write
from poker.game import parse_game

from ..arrayfile import CHECKPOINT_MAGIC, KINDS, ArrayFileRules, ArraySpec, array_view, read_arrays, write_arrays
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
    "is_checkpoint",
    "load_checkpoint",
    "restore_checkpoint",
    "save_checkpoint",
]


CHECKPOINT_FORMAT = "pokerbot-training-checkpoint"
CHECKPOINT_VERSION = 2
#: The first bytes of a version-2 checkpoint (version 1 is a bare msgpack map).
MAGIC = CHECKPOINT_MAGIC
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
    #: Read from a file, read-only: views of the mapped file (version 2) or of its bytes.
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


def _canonical(solver: SampledCFRSolver, name: str) -> ArraySpec:
    """A sampled solver's table ``name`` in vector CFR's layout, converted piece by piece
    as it is written (never copied whole)."""
    table = getattr(solver, name)
    dt = table.dtype.newbyteorder("<")
    return ArraySpec(name, dt, (int(table.shape[0]),),
                     lambda: solver.layout.canonical_pieces(table))  # fmt: skip


def save_checkpoint(path: str | Path, solver: Any, *, seconds: float = 0.0) -> None:
    """Write ``solver``'s state (regrets, average sums, iteration count and, for sampled
    solvers, RNG states and options; Deep CFR's memories, counts and networks instead of
    tables) to ``path`` atomically, in the layout of :mod:`solver.arrayfile` (version 2):
    the tables go out piece by piece, so writing holds no copy of them. Its ``cards``
    field records the card abstraction as a strategy file does
    (:func:`solver.strategy_io.cards_record`)."""
    p = solver.problem
    cards = cards_record(p)
    specs: list[ArraySpec]
    if solver.algorithm == "deep":  # its memories, counts and networks
        specs = [ArraySpec.of(k, v) for k, v in solver.state_arrays().items()]
        algorithm, options = "deep", solver.options()
        seed, threads, nodes = solver.opts.seed, 1, solver.nodes
    elif isinstance(solver, SampledCFRSolver):  # stored in vector CFR's layout
        specs = [_canonical(solver, "regrets"), _canonical(solver, "avg_sums")]
        specs += [ArraySpec.of(k, v) for k, v in solver.random_state().items()]
        algorithm = solver.algorithm
        options = solver.options()
        seed, threads, nodes = solver.sampling.seed, solver.sampling.threads, solver.nodes
    else:
        specs = [ArraySpec.of("regrets", solver.regrets), ArraySpec.of("avg_sums", solver.avg_sums)]
        algorithm = solver.algorithm.value
        options = {"delay": solver.delay}
        # chance and public chance sampling draw from a stream keyed by their seed
        seed, threads, nodes = getattr(solver, "seed", 0), 1, 0
    header = {
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
    }
    atomic_write(Path(path), lambda fh: write_arrays(fh, MAGIC, CHECKPOINT_VERSION, header, specs))


def _rules() -> ArrayFileRules:
    """What :func:`solver.arrayfile.read_arrays` accepts as a version-2 checkpoint."""
    return ArrayFileRules(
        magic=MAGIC, what="training checkpoint", format=CHECKPOINT_FORMAT, versions=(CHECKPOINT_VERSION,),
        known=(1, CHECKPOINT_VERSION), latest=CHECKPOINT_VERSION, dtypes=frozenset(_NP), max_file_bytes=1 << 42,
        max_header_bytes=1 << 24, max_arrays=256,
    )  # fmt: skip


def is_checkpoint(path: str | Path) -> bool:
    """Whether ``path`` begins as a version-2 checkpoint does (False if it cannot be read)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def load_checkpoint(path: str | Path) -> Checkpoint:
    """Read a checkpoint written by :func:`save_checkpoint` (checksum verified). A
    version-2 file is mapped: its arrays are read-only views of the file, read when
    used (a resumed run copies its tables straight into its own)."""
    src = str(path)
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if fh.read(len(MAGIC)) not in KINDS:  # a version-2 checkpoint, or another file in its layout
                fh.seek(0)
                return _load_v1(fh.read(), src)
            buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise CheckpointError(f"{src}: cannot read ({exc.strerror})") from None
    _, doc, entries = read_arrays(buf, size, _rules(), lambda why: CheckpointError(f"{src}: {why}"))
    return _checkpoint(doc, {k: array_view(buf, e) for k, e in entries.items()}, src)


def _checkpoint(doc: dict[str, Any], arrays: dict[str, np.ndarray], src: str) -> Checkpoint:
    """The :class:`Checkpoint` of a header ``doc`` and its ``arrays``."""
    try:
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
        raise CheckpointError(f"{src}: malformed checkpoint ({exc!r})") from None


def _load_v1(data: bytes, src: str) -> Checkpoint:
    """A version-1 checkpoint: one msgpack map holding its arrays (read whole)."""
    try:
        doc = msgpack.unpackb(data, raw=False, max_bin_len=len(data), max_ext_len=0)
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise CheckpointError(f"{src}: not a msgpack checkpoint ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{src}: not a {CHECKPOINT_FORMAT} file")
    if doc.get("version") != 1:
        raise CheckpointError(f"{src}: version {doc.get('version')} is not 1 or {CHECKPOINT_VERSION}")
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
            arrays[k] = np.frombuffer(v["data"], dtype=v["dtype"]).reshape(v["shape"])
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, CheckpointError):
            raise
        raise CheckpointError(f"{src}: malformed checkpoint ({exc!r})") from None
    return _checkpoint(doc, arrays, src)


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
