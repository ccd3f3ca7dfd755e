"""The memory a training run needs, from the tree, the bucket counts and file sizes alone.

:func:`estimate_training_memory` adds up what a run of one algorithm allocates, part by
part, without building the chance layer or reading a bucket table:

* **regrets** and **average**: one table each of ``table_offsets(tree, counts)[1]``
  entries (:func:`solver.tree.table_offsets`), ``dtype`` bytes per entry for the sampled
  algorithms (es, os, as, tcfr), float64 for vector CFR/CFR+, which also keeps the
  **current strategy** (a third table).
* **bucket tables**: a card abstraction's ``streetN.table.npy`` files (and history pair
  maps). A training run reads them whole into memory
  (:func:`solver.training.dealt.load_training_abstraction`), so they are counted whole.
  Lossless buckets have no tables.
* **hand indexers**: the suit-isomorphic indexers' lookup arrays (tens of KiB each), and
  where lossless dealing reads its classes from successor tables, those (at most 32 MiB;
  20-card hold'em: 0.5 MiB).
* **chance layer** (:mod:`solver.chance`): every board state and hand of the game, with
  its bucket and showdown order. Vector CFR/CFR+ need it; the sampled algorithms deal
  cards as they go (:mod:`solver.training.dealt`) and need it only on games small enough to list
  every deal (:data:`solver.training.sampled.LIST_DEALS_UP_TO`), where it is tiny.
* **tree**: the betting tree's arrays and table offsets.
* **per thread**: scratch space of one walk (a few KiB per level of the tree), times the
  threads.

:func:`check_fits` turns an estimate into a one-line refusal when it exceeds the memory
the machine has available (``pokerbot train`` refuses such a run).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from math import comb
from pathlib import Path

import numpy as np

from abstraction.betting import BettingAbstraction
from poker.game import Game, GameError, load_game, parse_game

from ..chance import lossless_bucket_counts, num_deals
from ..tree import Tree, build_tree, table_offsets

__all__ = [
    "ALGORITHMS",
    "SAMPLED",
    "MemoryEstimate",
    "chance_layer_bytes",
    "check_fits",
    "estimate_training_memory",
    "format_bytes",
    "sampled_run_deals",
]

#: Every training algorithm (as :data:`solver.training.algorithms.ALGORITHMS`, without its imports).
ALGORITHMS = ("cfr", "cfr+", "lcfr", "cs", "pcs", "es", "os", "as", "tcfr", "deep")
#: The sampled algorithms: tables of ``dtype``, cards dealt as they go.
SAMPLED = ("es", "os", "as", "tcfr")
DTYPES = {"float32": 4, "float64": 8}

_GIB = 1 << 30
_LINE = 64  # per-thread scratch arrays start on cache lines of their own
_NPY_HEADER = 128  # bytes of a .npy header (planned tables)

#: (field, label) of every part, in the order they are reported.
PARTS = (
    ("regrets", "regrets"),
    ("average", "average strategy"),
    ("current", "current strategy"),
    ("bucket_tables", "bucket tables"),
    ("indexers", "hand indexers"),
    ("chance_layer", "chance layer"),
    ("tree", "betting tree"),
    ("per_thread", "per thread"),
    ("deep_memories", "deep memories"),
)


def format_bytes(n: float) -> str:
    """``n`` bytes in binary units: ``'0 B'``, ``'12.3 KiB'``, ``'1.50 GiB'``, ``'1.51 TiB'``."""
    if n < 1024:
        return f"{int(n)} B"
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        n /= 1024
        if n < 1024 or unit == "PiB":
            return f"{n:.3g} {unit}" if n < 100 else f"{n:,.0f} {unit}"
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes a training run needs, part by part (see the module docstring).

    ``per_thread`` is one thread's scratch; :attr:`total` counts it ``threads`` times.
    ``dtype`` and ``threads`` are what the run uses (vector CFR/CFR+: float64, one
    thread). ``source`` says where the buckets come from ('lossless', 'abstraction DIR'
    or 'planned buckets'); ``dealt``: the run deals cards instead of listing them.
    """

    game: str
    betting: str
    algorithm: str
    dtype: str
    threads: int
    bucket_counts: tuple[int, ...]
    source: str
    dealt: bool
    entries: int
    regrets: int
    average: int
    current: int
    bucket_tables: int
    indexers: int
    chance_layer: int
    tree: int
    per_thread: int
    #: Deep CFR's reservoirs (both advantage memories and the strategy memory), full
    deep_memories: int = 0

    @property
    def total(self) -> int:
        """Every part, with the scratch of every thread."""
        return sum(self.part_bytes(name) for name, _ in PARTS)

    def part_bytes(self, name: str) -> int:
        """Bytes of part ``name`` (a field of :data:`PARTS`), all threads for 'per_thread'."""
        v = int(getattr(self, name))
        return v * self.threads if name == "per_thread" else v

    def biggest(self) -> tuple[str, int]:
        """The (label, bytes) of the largest part."""
        name, label = max(PARTS, key=lambda p: self.part_bytes(p[0]))
        return label, self.part_bytes(name)

    def to_dict(self) -> dict[str, object]:
        """Plain data (for ``--json``): the settings, every part in bytes and the total."""
        out: dict[str, object] = {
            "algorithm": self.algorithm,
            "dtype": self.dtype,
            "threads": self.threads,
            "buckets": list(self.bucket_counts),
            "source": self.source,
            "dealt": self.dealt,
            "entries": self.entries,
        }
        for name, _ in PARTS:
            out[f"{name}_bytes"] = int(getattr(self, name))
        out["total_bytes"] = self.total
        return out

    def lines(self) -> list[str]:
        """Readable lines: the settings, one line per part, the total."""
        how = "deals cards as it goes" if self.dealt else "lists every board and hand"
        threads = f"{self.threads} thread{'s' if self.threads != 1 else ''}"
        out = [
            f"training memory: {self.algorithm}, {self.dtype} tables, {threads}, "
            f"{self.source} buckets {list(self.bucket_counts)}; the run {how}"
        ]
        notes = {
            "regrets": f"{self.entries:,} entries",
            "average": f"{self.entries:,} entries",
            "current": "cfr/cfr+ only",
            "bucket_tables": {
                "lossless": "none: lossless buckets are computed from the cards",
                "planned": "when built: one entry per canonical hand, read into memory",
            }.get(self.source, "read whole into memory"),
            "chance_layer": "none: cards are dealt" if self.dealt else "every board state x hand",
            "per_thread": f"x {self.threads}" if self.threads != 1 else "",
            "deep_memories": "three reservoirs, full",
        }
        for name, label in PARTS:
            if name == "current" and self.algorithm in SAMPLED:
                continue
            if name == "deep_memories" and self.algorithm != "deep":
                continue
            note = notes.get(name, "")
            out.append(
                f"  {label:<17} {format_bytes(getattr(self, name)):>11}"
                + (f"  ({note})" if note else "")
            )
        out.append(f"  {'total':<17} {format_bytes(self.total):>11}")
        return out

    def describe(self) -> str:
        """:meth:`lines` as one text."""
        return "\n".join(self.lines())


def chance_layer_bytes(game: Game, *, sampled: bool = False) -> int:
    """Memory of the listed chance layer of ``game`` (:func:`solver.chance.build_chance`):
    the bucket map over every (board state, hand) (int32, plus a byte per pair while it
    is built), the last street's showdown order (int32) and strengths (int64), the board
    cards. ``sampled``: also what the sampled algorithms add to list deals (strength by
    hand, board masks and parents, and the list of every deal when there are few)."""
    d, k = game.deck_size, game.num_hole_cards
    hands = comb(d, k)
    boards, seen, states = 1, 0, 0
    for nb in game.num_board_cards:
        boards *= comb(d - seen, nb)
        seen += nb
        states += boards
    width = max(1, seen)
    total = states * hands * (4 + 1) + boards * hands * (4 + 8) + states * width * 4
    if sampled:
        from .sampled import LIST_DEALS_UP_TO  # imported late: it loads the kernels

        total += boards * hands * 8 + states * (4 + 8)
        deals = num_deals(game)
        if deals <= LIST_DEALS_UP_TO:
            total += deals * 3 * 4
    return total


def sampled_run_deals(game: Game) -> bool:
    """Whether a sampled run on ``game`` deals cards from the deck (no chance layer):
    :func:`solver.training.dealt.uses_dealing`'s rule."""
    from .dealt import uses_dealing  # imported late: it loads the kernels

    return uses_dealing(game, "es")


def _card_layout(game: Game) -> tuple[int, ...]:
    return (game.num_ranks, game.num_suits, game.num_hole_cards, *game.num_board_cards)


def _read_abstraction(directory: Path, game: Game) -> tuple[tuple[int, ...], int, list[list[int]]]:
    """Bucket counts, bucket-table bytes and per-street indexer groupings of the card
    abstraction in ``directory``, from its ``meta.json`` and its files' headers and
    sizes (no table is read). ``ValueError`` (one line) if it is not a finished
    abstraction of ``game``'s cards."""
    meta_path = directory / "meta.json"
    try:
        meta = json.loads(meta_path.read_text())
        streets = meta["streets"]
        built = parse_game(meta["game"]["definition"], source=str(meta_path), name=meta["game"]["name"])
    except FileNotFoundError:
        raise ValueError(
            f"{directory}: no meta.json: not a card abstraction, or its build did not finish"
        ) from None
    except (OSError, ValueError, KeyError, TypeError, GameError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else repr(exc)
        raise ValueError(f"{meta_path}: unreadable ({why})") from None
    if _card_layout(built) != _card_layout(game):
        raise ValueError(
            f"card abstraction {directory} was built for {built.name or 'another game'}, "
            f"whose cards differ from {game.name or 'this game'}'s"
        )
    counts = tuple(int(st["buckets"]) for st in streets)
    groupings = [list(st["table_grouping"]) for st in streets]
    tables: list[tuple[int, np.dtype, int]] = []  # (file bytes, dtype, entries)
    pairs = 0
    try:
        for st in streets:
            path = directory / st["files"]["table"]
            shape, dtype = _npy_header(path)
            tables.append((path.stat().st_size, dtype, int(np.prod(shape))))
            if "pairs" in st["files"]:
                p = directory / st["files"]["pairs"]
                shape, _ = _npy_header(p)
                # read into memory with the model, and copied to int32 for the kernel
                pairs += p.stat().st_size + 4 * int(np.prod(shape))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{directory}: unreadable bucket table ({exc})") from None
    return counts, _table_bytes(tables) + pairs, groupings


def _npy_header(path: Path) -> tuple[tuple[int, ...], np.dtype]:
    with open(path, "rb") as fh:
        version = np.lib.format.read_magic(fh)
        fmt = np.lib.format
        read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        shape, _, dtype = read(fh)
    return tuple(int(x) for x in shape), np.dtype(dtype)


def _table_bytes(tables: Sequence[tuple[int, np.dtype, int]]) -> int:
    """Resident bytes of the bucket tables (file bytes, dtype, entries per street) as a
    training run holds them: every file read whole into memory, and where a table does
    not fit 16 bits (the dealing kernel then takes int32 tables), an int32 copy of each
    narrower one besides."""
    wide = any(dt.itemsize > 2 or (dt.kind == "i" and dt.itemsize == 2) for _, dt, _ in tables)
    total = 0
    for size, dt, n in tables:
        total += size + (4 * n if wide and dt != np.dtype(np.int32) else 0)
    return total


def _board_through(game: Game) -> list[int]:
    return [int(x) for x in np.cumsum(game.num_board_cards)]


def _indexer_bytes(game: Game, groupings: Sequence[Sequence[int]]) -> int:
    """Bytes of the lookup arrays of one hand indexer per grouping (built: milliseconds)."""
    from abstraction.indexer import HandIndexer  # imported late: only this needs it

    total = 0
    for g in {tuple(x) for x in groupings}:
        ix = HandIndexer(rounds=g, num_ranks=game.num_ranks, num_suits=game.num_suits)
        total += int(ix.tables.nbytes)
    return total


def _successor_bytes(game: Game) -> int:
    """Bytes of the successor tables lossless dealing reads its classes from
    (:mod:`abstraction.index_tables`; 0 where the game's are too big to build)."""
    from abstraction.index_tables import table_bytes
    from abstraction.indexer import HandIndexer

    ix = HandIndexer(rounds=_lossless_grouping(game), num_ranks=game.num_ranks, num_suits=game.num_suits)
    return table_bytes(ix)


def _planned_tables(game: Game, counts: Sequence[int]) -> tuple[int, list[list[int]]]:
    """Bucket-table bytes and indexer groupings of an abstraction with ``counts`` buckets
    not built yet: one entry per canonical hand of each street (uint16 up to 65,535
    buckets, else int32), as ``pokerbot abstract`` writes them."""
    from abstraction.indexer import HandIndexer

    groupings, tables = [], []
    for s, b in enumerate(_board_through(game)):
        g = [game.num_hole_cards, b] if b else [game.num_hole_cards]
        n = HandIndexer(rounds=g, num_ranks=game.num_ranks, num_suits=game.num_suits).count()
        dt = np.dtype(np.uint16 if counts[s] <= 0xFFFF else np.int32)
        tables.append((_NPY_HEADER + n * dt.itemsize, dt, n))
        groupings.append(g)
    return _table_bytes(tables), groupings


def _lossless_grouping(game: Game) -> list[int]:
    """The one indexer lossless dealing uses: hole cards, then each street's new cards."""
    return [game.num_hole_cards] + [int(nb) for nb in game.num_board_cards if nb]


def _scratch_bytes(tree: Tree, game: Game, n_deals: int) -> int:
    """One thread's scratch of the sampled kernels (as :func:`solver.training.sampled._scratch`
    lays it out: each array on cache lines of its own)."""
    d, a, s = tree.max_depth + 2, tree.max_actions, tree.n_streets
    cards = game.num_hole_cards + sum(game.num_board_cards)
    sizes = [
        d * 3 * 8,  # frames
        d * a * 8,  # vals
        d * a * 8,  # sig
        (d + 1) * s * 8,  # rho
        d * 8,  # reach
        2 * s * 4,  # bk
        s * 8,  # path
        8,  # rng
        n_deals * 4,  # order of the listed deals
        8,  # cursor
        3 * (s + 2) * 8,  # ahead
        3 * 2 * s * 4,  # bk_ahead
        3 * 8,  # res_ahead
        3 * 8,  # mask_ahead
        3 * 2 * s * 8,  # ix_ahead
        2 * max(1, cards) * 8,  # pc
    ]
    return sum(-(-max(x, 1) // _LINE) * _LINE for x in sizes)


def _vector_buffers(tree: Tree, game: Game) -> int:
    """Vector CFR's walk buffers (:meth:`solver.problem.Problem.buffers`): value and reach
    vectors over every private hand, per level of the tree."""
    d = tree.max_depth + 2
    hands = comb(game.deck_size, game.num_hole_cards)
    return 8 * (d * tree.max_actions * hands + d * 3 * hands + game.deck_size + d * 3)


def _tree_bytes(tree: Tree, sampled: bool) -> int:
    """The tree's arrays, its table offsets and (sampled) the table layout's."""
    arrays = [tree.kind, tree.player, tree.street, tree.parent, tree.child, tree.n_child,
              tree.spent, tree.action, tree.amount]
    if tree.size is not None:
        arrays.append(tree.size)
    return sum(int(a.nbytes) for a in arrays) + tree.n_nodes * 8 * (3 if sampled else 1)


def estimate_training_memory(
    game: Game | str | Path,
    betting: BettingAbstraction | str | None = None,
    *,
    abstraction_dir: str | os.PathLike[str] | None = None,
    algorithm: str = "tcfr",
    dtype: str = "float32",
    threads: int = 1,
    buckets: Sequence[int] | None = None,
    tree: Tree | None = None,
    deep_memory: int = 0,
) -> MemoryEstimate:
    """What a training run of ``algorithm`` on ``game`` with ``betting`` needs, part by
    part (see the module docstring), without building the chance layer or reading tables.

    Buckets: the card abstraction in ``abstraction_dir`` (counts from its ``meta.json``,
    tables from its files' sizes), or ``buckets`` per street for an abstraction not built
    yet (its tables sized from the canonical hand counts), or else lossless
    (:func:`solver.chance.lossless_bucket_counts`). ``dtype`` and ``threads`` apply to
    the sampled algorithms; the vector ones (CFR, CFR+, Linear CFR, chance and public chance
    sampling) keep float64 tables on one thread. ``tree``:
    the betting tree of ``game`` and ``betting`` if already built. ``deep_memory``: the
    capacity of each of Deep CFR's three reservoirs (row, iteration and one value per
    action a sample).

    Raises ``ValueError`` (one line) on an unknown algorithm or dtype, fewer than one
    thread, bucket counts of the wrong length, or an abstraction directory that is not a
    finished abstraction of ``game``'s cards.
    """
    g = game if isinstance(game, Game) else load_game(game)
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm {algorithm!r} is not one of {', '.join(ALGORITHMS)}")
    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r} is not one of {', '.join(DTYPES)}")
    if isinstance(threads, bool) or int(threads) != threads or threads < 1:
        raise ValueError(f"threads {threads!r} must be a whole number of at least 1")
    if abstraction_dir is not None and buckets is not None:
        raise ValueError("give an abstraction directory or planned bucket counts, not both")
    sampled = algorithm in SAMPLED
    if not sampled:
        dtype, threads = "float64", 1
    if tree is None:
        tree = build_tree(g, betting)
    dealt = sampled and sampled_run_deals(g)
    if abstraction_dir is not None:
        d = Path(abstraction_dir)
        counts, tables, groupings = _read_abstraction(d, g)
        source = f"abstraction {d}"
    elif buckets is not None:
        counts = tuple(int(c) for c in buckets)
        if len(counts) != g.num_rounds or min(counts) < 1:
            raise ValueError(
                f"planned buckets {list(counts)}: one count of at least 1 per street ({g.num_rounds})"
            )
        tables, groupings = _planned_tables(g, counts)
        source = "planned"
    else:
        counts = tuple(int(c) for c in lossless_bucket_counts(g))
        tables, groupings = 0, [_lossless_grouping(g)]
        source = "lossless"
    _, entries = table_offsets(tree, counts)
    width = DTYPES[dtype]
    listed = not dealt
    if sampled:
        n_deals = num_deals(g) if listed else 0
        per_thread = _scratch_bytes(tree, g, n_deals)
    else:
        per_thread = _vector_buffers(tree, g)
    return MemoryEstimate(
        game=g.name or "game",
        betting=tree.betting_spec,
        algorithm=algorithm,
        dtype=dtype,
        threads=int(threads),
        bucket_counts=counts,
        source=source,
        dealt=dealt,
        entries=entries,
        regrets=entries * width,
        average=entries * width,
        current=0 if sampled else entries * width,
        bucket_tables=tables,
        indexers=_indexer_bytes(g, groupings) + (_successor_bytes(g) if dealt and source == "lossless" else 0),
        chance_layer=chance_layer_bytes(g, sampled=sampled) if listed else 0,
        tree=_tree_bytes(tree, sampled),
        per_thread=per_thread,
        deep_memories=3 * int(deep_memory) * (8 + 4 * tree.max_actions) if algorithm == "deep" else 0,
    )


def _advice(est: MemoryEstimate, part: str) -> str:
    """What to change when ``part`` (a label of :data:`PARTS`) is the biggest."""
    if part == "chance layer":
        return (
            "train with a sampled algorithm (es, os, as, tcfr), which deals cards instead of "
            "listing every board and hand"
        )
    if part == "bucket tables":
        return (
            "use a machine with more memory (the tables hold one entry per canonical hand "
            "whatever the bucket count; at most 65,535 buckets per street keeps them at 2 bytes)"
        )
    if part == "per thread":
        return "use fewer threads"
    if part == "deep memories":
        return "use a smaller --memory-size"
    if est.algorithm == "deep":
        return "deep lists every information set of the real game: train it on a smaller game"
    if part == "betting tree":
        return "use a smaller betting abstraction (fewer sizes or a raise cap)"
    fewer = (
        "a card abstraction with fewer buckets (pokerbot abstract)"
        if est.source == "lossless"
        else "fewer buckets"
    )
    if est.algorithm not in SAMPLED:
        last = "or a sampled algorithm (es, os, as, tcfr) with float32 tables"
    elif est.dtype == "float64":
        last = "or float32 tables (--dtype float32)"
    else:
        last = "or a machine with more memory"
    return f"use {fewer}, a smaller betting abstraction, {last}"


def check_fits(estimate: MemoryEstimate, available_gib: float | None = None) -> str | None:
    """None if ``estimate`` fits in ``available_gib`` (default: what the machine has
    available now, :func:`poker._sysinfo.available_memory_gib`); else one
    line naming the total, the memory available, the biggest part and what to change."""
    if available_gib is None:
        from poker._sysinfo import available_memory_gib

        available_gib = available_memory_gib()
    total = estimate.total
    if total <= available_gib * _GIB:
        return None
    label, size = estimate.biggest()
    return (
        f"training {estimate.game} with {estimate.algorithm} needs {format_bytes(total)} "
        f"but {format_bytes(available_gib * _GIB)} is available; the biggest part is the "
        f"{label} ({format_bytes(size)}): {_advice(estimate, label)}"
    )
