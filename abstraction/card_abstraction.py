"""Card abstraction: per street a number of buckets and a deterministic function
cards -> bucket, built once (features -> k-means) and stored as centroids plus tables.

**The abstraction is a function, tables are a cache.** A street's bucket is computed
from the cards alone: the hand's feature (:mod:`abstraction.features`: river E[HS], or
the histogram of river E[HS] over the run-outs) and the nearest stored centroid
(:func:`abstraction.kmeans.nearest`). The build also writes, per street, the bucket of
every canonical hand (indexed by :mod:`abstraction.indexer`) so that training looks
buckets up instead of computing them; :meth:`CardAbstraction.bucket` (from the cards) and
:meth:`CardAbstraction.lookup` (from the table) agree on every hand, which the tests
check on 100,000 random hands per street.

Two families:

* **Imperfect recall** (default): each street is clustered on its own cards (Waugh et
  al., "A practical use of imperfect recall", SARA 2009; Johanson, Burch, Valenzano &
  Bowling, "Evaluating state-space abstractions in extensive-form games", AAMAS 2013):
  lossless where the bucket count equals the canonical count (preflop: 169 classes on
  the full deck), river by E[HS], earlier streets by the E[HS] histogram (L2 on the CDF
  as the earth mover's proxy, ``metric="emd"``) or by (E[HS], E[HS^2])
  (``metric="moments"``, Gilpin & Sandholm's and Johanson's features).
* **History-carrying** (``history=True``): street ``s``'s bucket is a function of the
  previous street's (history) bucket of the same hole cards on the earlier board and of
  the street's own bucket: ``h_s = pairs_s[h_{s-1}, own_s]``. The pair map clusters the
  (previous, own) pairs that occur, weighted by how many real deals produce each, on the
  feature ``(sqrt(w) * profile_{s-1}(previous), own centroid / sqrt(d_s))``, where a
  profile is a history centroid (so the chain carries every earlier street, each further
  one discounted by ``w = history_weight``). This is the hierarchical, perfect-recall
  flavour of Gilpin, Sandholm & Sorensen ("Potential-aware automated abstraction of
  sequential games", AAAI 2007) made cheap: only own-street tables are stored, and the
  chain is followed at lookup time.

The build (:func:`build_abstraction`) runs in resumable stages (river E[HS]; features per
street; clustering per street; history pair maps; metadata). Each stage writes its files
atomically and then records itself, with a hash of everything it depends on, in
``cache/stages.json``; a rerun skips stages whose record matches, so an interrupted build
restarts at the stage it was in. Tables are ``.npy`` files (memory-mappable); ``meta.json``
(game, parameters, seeds, per-street figures, content hash, model hash) is written last.

**The model** (:meth:`CardAbstraction.model`) is what computes a bucket from the cards:
a small JSON/msgpack-able dict (game, parameters, per-street figures) plus the centroid
and pair-map arrays, identified by :attr:`CardAbstraction.model_hash`. A strategy file can
embed it; :meth:`CardAbstraction.from_model` rebuilds the abstraction from it alone and
uses a table directory only if that directory was built from the same model.
:func:`build_model_tables` writes such a directory from a model alone (the same feature
stages, then each canonical hand's nearest model centroid: no clustering), and
:mod:`abstraction.table_cache` keeps one per model hash.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from itertools import combinations
from math import comb, sqrt
from pathlib import Path
from typing import Any, NamedTuple

import numba
import numpy as np
from numba import njit, prange

from poker._atomic import atomic_write, atomic_write_bytes
from poker._sysinfo import available_memory_gib, peak_memory_gib
from poker.cards import DECK_SIZE
from poker.game import Game, load_game, parse_game

from . import features as F
from .indexer import HandIndexer, index_hand_njit, unindex_hand_njit
from .kmeans import kmeans, nearest

__all__ = [
    "FORMAT_VERSION",
    "MODEL_FORMAT",
    "MODEL_KIND",
    "AbstractionParams",
    "BuildPlan",
    "BuildReport",
    "CardAbstraction",
    "StreetPlan",
    "TablesPlan",
    "build_abstraction",
    "build_model_tables",
    "plan_build",
    "plan_tables",
]

FORMAT_VERSION = 1
META_FILE = "meta.json"
CACHE_DIR = "cache"
STAGES_FILE = "stages.json"
_METRICS = {"emd": F.METRIC_CDF, "moments": F.METRIC_MOMENTS}
_GIB = float(1 << 30)
_SERIAL_BELOW = 16  # on-the-fly batches up to this size run on the calling thread only
MODEL_FORMAT = 1  # version of the model dict (CardAbstraction.model)
MODEL_KIND = "pokerbot card abstraction model"
_MODEL_KEYS = ("format", "kind", "game", "params", "scale", "streets")
_MODEL_OPTIONAL = ("model_hash", "content_hash")  # accepted by from_model, not hashed
_STREET_KEYS = (
    "street", "name", "kind", "grouping", "table_grouping", "canonical_hands", "table_hands", "buckets",
    "own_buckets",
)
_MEMO_MAX = 1 << 14  # own-street buckets remembered per canonical hand (single-hand path)

# Stage progress: ``progress(stage, done, total)``; the CLI draws one bar per stage.
ProgressFn = Callable[[str, float, float], None]


def street_names(n: int) -> tuple[str, ...]:
    """Names of a game's streets: preflop, flop, turn, river (a prefix for shorter games)."""
    base = ("preflop", "flop", "turn", "river")
    return base[:n] if n <= 4 else tuple(f"round{r}" for r in range(n))


# ------------------------------------------------------------------ parameters and plan


@dataclass(frozen=True)
class AbstractionParams:
    """Everything that decides the buckets (recorded in the metadata and hashed).

    ``buckets``: per street. ``history``: history-carrying buckets. ``seed``: the k-means
    seeds of street s are ``SeedSequence([seed, s])`` (pair maps: ``[seed, s, 1]``).
    ``bins``: histogram bins. ``metric``: ``"emd"`` (L2 on the CDF) or ``"moments"``.
    ``history_weight``: weight of the previous street's profile in the pair feature.
    ``max_iter``/``tol``/``sample_size``: k-means (stop when at most ``tol * n`` points
    move; k-means++ on a sample of at most ``sample_size`` points).
    """

    buckets: tuple[int, ...]
    history: bool = False
    seed: int = 0
    bins: int = 32
    metric: str = "emd"
    history_weight: float = 0.5
    max_iter: int = 60
    tol: float = 1e-4
    sample_size: int = 200_000

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-able form."""
        d = asdict(self)
        d["buckets"] = list(self.buckets)
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> AbstractionParams:
        """Inverse of :meth:`to_json`."""
        d = dict(d)
        d["buckets"] = tuple(d["buckets"])
        return cls(**d)


@dataclass(frozen=True)
class StreetPlan:
    """What building one street involves, and what it is predicted to cost."""

    street: int
    name: str
    grouping: list[int]  # card groups the street's bucket function distinguishes
    canonical_hands: int  # the indexer's count for that grouping
    table_hands: int  # canonical hands of the own-street table (hole + board as a set)
    buckets: int
    own_buckets: int  # own-street buckets (== buckets unless history)
    kind: str  # "lossless", "ehs" (river), "emd" or "moments"
    seconds: float
    peak_gib: float

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-able form."""
        return asdict(self)


@dataclass(frozen=True)
class BuildPlan:
    """Per-street plans and the predicted totals of a build."""

    game: str
    params: AbstractionParams
    streets: list[StreetPlan]
    seconds: float
    peak_gib: float

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-able form."""
        return {
            "game": self.game,
            "params": self.params.to_json(),
            "streets": [s.to_json() for s in self.streets],
            "seconds": self.seconds,
            "peak_gib": self.peak_gib,
        }


# Cost model, calibrated on the full 52-card game on a shared 2-core machine (see
# bench/abstraction.py): nanoseconds of wall time per unit of work, and bytes held per
# item at a stage's peak.
_NS_RIVER = 160.0  # per (canonical board, hole combination): evaluate, sort, index, write
_NS_TOWER = 100.0  # per (canonical hand, added card combination): one index op
_NS_TOWER_BIN = 0.7  # ... plus this per histogram bin added (streets before the turn)
_NS_KD = 0.75  # per point x centre x dimension, over a whole k-means run (scans)
_NS_ITER = 170.0  # per point and k-means iteration (bounds, filters, update)
_NS_PAIR_HAND = 300.0  # history pair weights: per canonical hand (unindex)
_NS_PAIR_MASK = 60.0  # ... per earlier-street board subset indexed
_NS_PAIR_CHAIN = 10.0  # ... per ordering of the board followed through the pair maps
_BASE_GIB = 0.25  # interpreter, numpy, numba and compiled kernels
_NS_NEAREST = 0.19  # per point x centre x dimension of one nearest-centroid scan (model tables; full turn: 85 s)
_NEAREST_CHUNK = 1 << 18  # hands per chunk of feature vectors scanned for their nearest centroid


def _groups(k: int) -> int:
    return max(1, min(32, k // 10))


def _kmeans_cost(n: int, k: int, d: int, p: AbstractionParams) -> tuple[float, float]:
    """(seconds, bytes) of one k-means run on n points of d dims into k clusters."""
    seconds = (n * k * d * _NS_KD + n * p.max_iter * _NS_ITER + min(n, p.sample_size) * k * d * 0.3) * 1e-9
    nbytes = n * (4 * d + 4 * _groups(k) + 40) + (n + 0xFFFF) // 0x8000 * k * (d + 1) * 8
    return seconds, nbytes


def _board_classes(space: F.CardSpace, street: int) -> int:
    b = space.board_through[street]
    if b == 0:
        return 1
    return HandIndexer(rounds=[b], num_ranks=space.num_ranks, num_suits=space.num_suits).count()


def _splits(space: F.CardSpace, street: int) -> int:
    """Orderings of a street's board into the streets' groups (as sets)."""
    n, total, prev = space.board_through[street], 1, 0
    for b in space.board_through[: street + 1]:
        total *= comb(n - prev, b - prev)
        prev = b
    return total


def _features_cost(space: F.CardSpace, params: AbstractionParams, s: int) -> tuple[float, float]:
    """(seconds, bytes held) of street ``s``'s feature stage: the river E[HS] table on the
    last street, else the tower of histograms from the next street's features."""
    river_n = space.count(space.last)
    if s == space.last:
        secs = _board_classes(space, s) * comb(space.deck_size - space.board_through[s], space.hole)
        return secs * _NS_RIVER * 1e-9, river_n * 3.0
    add = space.board_through[s + 1] - space.board_through[s]
    left = space.deck_size - space.hole - space.board_through[s]
    per = _NS_TOWER + (_NS_TOWER_BIN * params.bins if s + 1 < space.last else 0.0)
    secs = space.count(s) * comb(left, add) * per * 1e-9
    nxt = river_n * 3.0 if s + 1 == space.last else space.count(s + 1) * (4 * params.bins + 17)
    return secs, nxt + space.count(s) * (4 * params.bins + 17)


def plan_build(game: Game, params: AbstractionParams) -> BuildPlan:
    """Validate ``params`` for ``game`` and predict each street's time and memory.

    Raises ``ValueError`` (one line) if the game is not two-player hold'em-like, the
    number of bucket counts is not the number of streets, or a count does not fit.
    """
    space = F.CardSpace.from_game(game)
    names = street_names(space.num_streets)
    b = tuple(int(x) for x in params.buckets)
    if len(b) != space.num_streets:
        raise ValueError(
            f"game {game.name or '?'} has {space.num_streets} streets "
            f"({', '.join(names)}); got {len(b)} bucket counts {list(b)}"
        )
    if params.metric not in _METRICS:
        raise ValueError(f"metric {params.metric!r} is not one of {', '.join(_METRICS)}")
    if not 2 <= params.bins <= 1024:
        raise ValueError(f"bins {params.bins} is not in 2..1024")
    if not 0 < params.history_weight <= 1e6 or params.max_iter < 1 or not 0 <= params.tol < 1:
        raise ValueError("history_weight must be > 0, max_iter >= 1 and 0 <= tol < 1")
    streets: list[StreetPlan] = []
    total_s = 0.0
    peak = 0.0
    river_n = space.count(space.last)
    for s in range(space.num_streets):
        table_n = space.count(s)
        grouping = space.split_grouping(s) if params.history else space.grouping(s)
        canon = (
            HandIndexer(rounds=grouping, num_ranks=space.num_ranks, num_suits=space.num_suits).count()
            if params.history
            else table_n
        )
        if b[s] < 1:
            raise ValueError(f"{names[s]}: {b[s]} buckets; need at least 1")
        if b[s] > canon:
            raise ValueError(
                f"{names[s]}: {b[s]} buckets but only {canon:,} canonical hands "
                f"(grouping {grouping}); use at most {canon:,}"
            )
        own = min(b[s], table_n)
        if own == table_n:
            kind = "lossless"
        elif s == space.last:
            kind = "ehs"
        else:
            kind = params.metric
        d = F.feature_dims(_METRICS[params.metric], params.bins)
        # features (river table, or tower from the next street)
        secs, mem = _features_cost(space, params, s)
        # own clustering
        if kind in ("emd", "moments"):
            ks, kb = _kmeans_cost(table_n, own, d, params)
            secs += ks
            # the integer features are mapped while the vectors are made, then let go
            mem = max(mem, kb, table_n * (4 * params.bins + 17 + 4 * d))
        elif kind == "ehs":
            secs += table_n * 40e-9  # weigh the E[HS] values, then map every hand
            mem = max(mem, river_n * 5.0)
        # history pair map
        if params.history and s > 0:
            masks = sum(comb(space.board_through[s], space.board_through[t]) for t in range(s))
            per = _NS_PAIR_HAND + _NS_PAIR_MASK * masks + _NS_PAIR_CHAIN * _splits(space, s)
            secs += table_n * per * 1e-9
            pairs = b[s - 1] * own
            dims = d * s + 1
            ks, kb = _kmeans_cost(pairs, b[s], dims, params)
            secs += ks
            mem = max(mem, kb + table_n * 7 + pairs * (8 * 9 + 4 * dims))
        gib = _BASE_GIB + mem / _GIB
        streets.append(
            StreetPlan(
                street=s, name=names[s], grouping=grouping, canonical_hands=canon, table_hands=table_n,
                buckets=b[s], own_buckets=own, kind=kind, seconds=round(secs, 2), peak_gib=round(gib, 3),
            )
        )
        total_s += secs
        peak = max(peak, gib)
    return BuildPlan(
        game=game.name or "", params=params, streets=streets, seconds=round(total_s, 2), peak_gib=round(peak, 3)
    )


@dataclass(frozen=True)
class TablesPlan:
    """What building a model's tables (:func:`build_model_tables`) is predicted to cost.

    ``disk_bytes``: the directory at its largest (tables, centroids and pair maps plus the
    stage cache of features); ``final_bytes``: what lookups need (the stage cache deleted).
    """

    seconds: float
    peak_gib: float
    disk_bytes: int
    final_bytes: int

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-able form."""
        return asdict(self)


def plan_tables(ab: CardAbstraction) -> TablesPlan:
    """Predict the time, memory and disk of building ``ab``'s tables from its model.

    The stages are those of :func:`build_abstraction` without clustering: river E[HS],
    the features of every street from the river down to the first clustered one, then
    one nearest-centroid scan per clustered street's canonical hands.
    """
    space, p = ab.space, ab.params
    plan = plan_build(ab.game, p)
    last = space.last
    clustered = [s for s in range(last) if plan.streets[s].kind in ("emd", "moments")]
    lowest = min(clustered) if clustered else last
    seconds, mem = _features_cost(space, p, last)
    disk = 3 * space.count(last)  # river values (uint16) and weights (uint8)
    for s in range(lowest, last):
        fs, fm = _features_cost(space, p, s)
        seconds, mem = seconds + fs, max(mem, fm)
        disk += space.count(s) * (4 * p.bins + 17)  # counts, s1, s2, weights
    final = 1 << 16  # metadata and .npy headers
    for s, st in enumerate(plan.streets):
        n = st.table_hands
        item = np.dtype(_table_dtype(st.own_buckets)).itemsize
        final += n * item
        if st.kind == "ehs":
            seconds += n * 5e-9  # map each hand's E[HS] value to its bucket
            mem = max(mem, n * (3.0 + item))
        elif st.kind != "lossless":
            d = F.feature_dims(_METRICS[st.kind], p.bins)
            seconds += n * st.own_buckets * d * _NS_NEAREST * 1e-9
            mem = max(mem, n * item + _NEAREST_CHUNK * (4 * p.bins + 24 + 4 * d))
        if st.kind != "lossless":
            final += st.own_buckets * F.feature_dims(
                F.METRIC_EHS if st.kind == "ehs" else _METRICS[st.kind], p.bins) * 4
        if p.history and s > 0:
            final += plan.streets[s - 1].buckets * st.own_buckets * 4
    return TablesPlan(
        seconds=round(seconds, 2), peak_gib=round(_BASE_GIB + mem / _GIB, 3), disk_bytes=int(disk + final),
        final_bytes=int(final),
    )


# ------------------------------------------------------------------ files


def _atomic_save_npy(path: Path, arr: np.ndarray) -> None:
    """Write ``arr`` as ``.npy`` atomically (temporary file, fsync, rename)."""
    data = np.ascontiguousarray(arr)
    atomic_write(path, lambda fh: np.save(fh, data, allow_pickle=False))


def _atomic_write_json(path: Path, obj: Any) -> None:
    atomic_write_bytes(path, (json.dumps(obj, indent=1, sort_keys=True) + "\n").encode())


def _load(path: Path, mmap: bool = True) -> np.ndarray:
    arr = np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
    return np.asarray(arr)


def _key(*parts: Any) -> str:
    """Hash of a stage's inputs (JSON of the parts)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:24]


class _Stages:
    """The record of completed stages: ``{stage: key}`` in ``cache/stages.json``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.done: dict[str, str] = json.loads(path.read_text())
        except (OSError, ValueError):
            self.done = {}

    def is_done(self, name: str, key: str, files: Sequence[Path]) -> bool:
        return self.done.get(name) == key and all(f.exists() for f in files)

    def mark(self, name: str, key: str) -> None:
        self.done[name] = key
        _atomic_write_json(self.path, self.done)


def _table_dtype(buckets: int) -> type:
    return np.uint16 if buckets <= 0xFFFF else np.int32


# ------------------------------------------------------------------ history pair weights


class _Chain(NamedTuple):
    """Earlier streets' lookups for :func:`_pair_weights`, packed flat (one array each).

    Street t's indexer table is ``idx_tabs[idx_off[t]:idx_off[t + 1]]`` (round
    ``idx_rnd[t]``), its own-bucket table starts at ``own_all[own_off[t]]`` and, for
    t >= 1, its pair map (``pm_cols[t]`` columns) at ``pm_all[pm_off[t]]``. ``masks[c, t]``:
    the board positions visible on street t in ordering c.
    """

    idx_tabs: np.ndarray
    idx_off: np.ndarray
    idx_rnd: np.ndarray
    own_all: np.ndarray
    own_off: np.ndarray
    pm_all: np.ndarray
    pm_off: np.ndarray
    pm_cols: np.ndarray
    masks: np.ndarray


@njit(cache=True, parallel=True)
def _pair_weights(tab, rnd, hole, b, lo, weights, own_s, chain, out):  # pragma: no cover - compiled
    """Weight of each (previous history bucket, own bucket) pair of one street.

    For canonical hands ``lo .. lo + len(weights)`` of the street (hole cards + board as
    a set), each ordering of the board into the earlier streets' groups gives a
    previous-street history bucket, followed through the pair maps from the first
    street's bucket; the pair (that bucket, ``own_s[i]``) gains the hand's weight.
    ``out[part]`` is owned by one slice of the hands; the sums are integers, so the
    result does not depend on the order of the parts.
    """
    idx_tabs, idx_off, idx_rnd = chain.idx_tabs, chain.idx_off, chain.idx_rnd  # unpack before prange
    own_all, own_off = chain.own_all, chain.own_off
    pm_all, pm_off, pm_cols, masks = chain.pm_all, chain.pm_off, chain.pm_cols, chain.masks
    n_hands = weights.shape[0]
    n_parts = out.shape[0]
    s = masks.shape[1]  # earlier streets 0..s-1
    n = hole + b
    for part in prange(n_parts):
        a = part * n_hands // n_parts
        z = (part + 1) * n_hands // n_parts
        cards = np.empty(n, np.uint8)
        sub = np.empty(n, np.uint8)
        memo = np.full(1 << b, -1, np.int64)
        for i in range(a, z):
            unindex_hand_njit(tab, lo + i, rnd, cards)
            memo[:] = -1
            own = own_s[i]
            w = np.int64(weights[i])
            for c in range(masks.shape[0]):
                h = np.int64(-1)
                for t in range(s):
                    mask = masks[c, t]
                    o = memo[mask]
                    if o < 0:
                        for j in range(hole):
                            sub[j] = cards[j]
                        q = hole
                        for j in range(b):
                            if (mask >> j) & 1:
                                sub[q] = cards[hole + j]
                                q += 1
                        k = index_hand_njit(idx_tabs[idx_off[t]: idx_off[t + 1]], sub, idx_rnd[t])
                        o = np.int64(own_all[own_off[t] + k])
                        memo[mask] = o
                    if t == 0:
                        h = o
                    else:
                        h = np.int64(pm_all[pm_off[t] + h * pm_cols[t] + o])
                out[part, h, own] += w


def _chains(space: F.CardSpace, street: int) -> np.ndarray:
    """Every ordering of ``street``'s board positions into the earlier streets' groups.

    Row: per earlier street t, the bit mask of the positions visible on street t.
    """
    bt = space.board_through
    rows: list[list[int]] = []

    def extend(prefix: list[int], used: int, t: int) -> None:
        if t == street:
            rows.append(prefix[:])
            return
        add = bt[t] - (bt[t - 1] if t else 0)
        free = [j for j in range(bt[street]) if not (used >> j) & 1]
        for combo in combinations(free, add):
            m = used
            for j in combo:
                m |= 1 << j
            prefix.append(m)
            extend(prefix, m, t + 1)
            prefix.pop()

    extend([], 0, 0)
    return np.array(rows, np.int64).reshape(len(rows), street)


# ------------------------------------------------------------------ the build


@dataclass
class BuildReport:
    """What :func:`build_abstraction` did: per stage its seconds and whether it was reused."""

    abstraction: CardAbstraction
    stages: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    peak_gib: float = 0.0


class _Builder:
    """One build: the stages in order, each skipped if already recorded as done.

    With ``model``, the build writes that model's tables instead of clustering
    (:func:`build_model_tables`): the same feature stages, then each clustered street's
    table by the nearest model centroid, and the model's own centroids and pair maps.
    """

    def __init__(self, game: Game, plan: BuildPlan, out: Path, progress: ProgressFn | None,
                 model: _Model | None = None) -> None:
        self.game = game
        self.model = model
        self.model_hash = _model_hash(model.meta, model.arrays) if model is not None else None
        self.p = plan.params
        self.plan = plan
        self.space = F.CardSpace.from_game(game)
        self.out = out
        self.cache = out / CACHE_DIR
        self.progress = progress
        self.stages = _Stages(self.cache / STAGES_FILE)
        self.report: list[dict[str, Any]] = []
        sp = self.space
        self.cards_key = [FORMAT_VERSION, sp.num_ranks, sp.num_suits, sp.hole, list(sp.board_through)]
        self.names = street_names(sp.num_streets)

    # -- helpers

    def _tick(self, stage: str) -> Callable[[float, float], None] | None:
        if self.progress is None:
            return None
        prog = self.progress
        return lambda done, total: prog(stage, done, total)

    def _run(self, name: str, key: str, files: list[Path], fn: Callable[[], None]) -> None:
        if self.stages.is_done(name, key, files):
            self.report.append({"stage": name, "seconds": 0.0, "reused": True})
            return
        t0 = time.perf_counter()
        if self.progress is not None:
            self.progress(name, 0, 1)
        fn()
        self.stages.mark(name, key)
        self.report.append({"stage": name, "seconds": round(time.perf_counter() - t0, 3), "reused": False})

    def _c(self, name: str) -> Path:
        return self.cache / name

    def _o(self, name: str) -> Path:
        return self.out / name

    # -- keys

    def feature_key(self, s: int) -> str:
        return _key("features", self.cards_key, self.p.bins if s < self.space.last else None)

    def own_key(self, s: int) -> str:
        sp, p = self.space, self.plan.streets[s]
        kind = p.kind
        if self.model is not None:
            return _key("own from model", self.feature_key(s), kind, p.own_buckets, s, self.model_hash)
        return _key("own", self.feature_key(s), kind, p.own_buckets, self.p.seed, s,
                    self.p.max_iter, self.p.tol, self.p.sample_size, self.p.bins if kind != "ehs" else None,
                    sp.last)

    def history_key(self, s: int) -> str:
        if self.model is not None:
            return _key("pairs from model", s, self.model_hash)
        parts = [self.own_key(t) for t in range(s + 1)]
        return _key("history", parts, list(self.p.buckets[: s + 1]), self.p.history_weight, self.p.seed,
                    self.p.metric)

    # -- stages

    def build(self) -> BuildReport:
        t0 = time.perf_counter()
        self.out.mkdir(parents=True, exist_ok=True)
        self.cache.mkdir(exist_ok=True)
        meta_path = self._o(META_FILE)
        if meta_path.exists():
            # a finished abstraction with other parameters: it stops being valid now
            try:
                old = json.loads(meta_path.read_text())
            except (OSError, ValueError):
                old = None
            if (
                not old
                or old.get("params") != self.p.to_json()
                or old.get("game", {}).get("definition") != self.game.to_text()
                or (self.model is not None and old.get("model_hash") != self.model_hash)
            ):
                meta_path.unlink()
        sp = self.space
        last = sp.last
        self._run("river E[HS]", self.feature_key(last), [self._c("river.values.npy"), self._c("river.weights.npy")],
                  self._river)
        # history clustering profiles every street (lossless ones by their features); a
        # model's tables need the features of clustered streets only
        profiles = self.p.history and self.model is None
        need_features = [s for s in range(last) if profiles or self.plan.streets[s].kind in ("emd", "moments")]
        lowest = min(need_features) if need_features else last
        for s in range(last - 1, lowest - 1, -1):
            files = [self._c(f"street{s}.{x}.npy") for x in ("counts", "s1", "s2", "weights")]
            self._run(f"{self.names[s]} features", self.feature_key(s), files, partial(self._features, s))
        for s in range(last, -1, -1):
            files = [self._o(f"street{s}.table.npy")]
            if self.plan.streets[s].kind != "lossless":
                files.append(self._o(f"street{s}.centroids.npy"))
            self._run(f"{self.names[s]} buckets", self.own_key(s), files, partial(self._own, s))
        if self.p.history:
            for s in range(1, last + 1):
                files = [self._o(f"street{s}.pairs.npy")]
                if self.model is None:
                    files += [self._c(f"street{s}.{x}.npy") for x in ("profile", "pairweights")]
                self._run(f"{self.names[s]} history", self.history_key(s), files, partial(self._history, s))
        seconds = time.perf_counter() - t0
        peak = peak_memory_gib()
        self._meta(seconds, peak)
        ab = CardAbstraction.load(self.out)
        return BuildReport(ab, self.report, round(seconds, 3), round(peak, 3))

    def _river(self) -> None:
        rt = F.river_table(self.space, self._tick("river E[HS]"))
        _atomic_save_npy(self._c("river.values.npy"), rt.values)
        _atomic_save_npy(self._c("river.weights.npy"), rt.weights)

    def _next_features(self, s: int) -> F.RiverTable | F.StreetFeatures:
        if s + 1 == self.space.last:
            return F.RiverTable(_load(self._c("river.values.npy")), _load(self._c("river.weights.npy")))
        return self._street_features(s + 1)

    def _street_features(self, s: int) -> F.StreetFeatures:
        return F.StreetFeatures(*(_load(self._c(f"street{s}.{x}.npy")) for x in ("counts", "s1", "s2", "weights")))

    def _features(self, s: int) -> None:
        f = F.tower_features(self.space, s, self._next_features(s), self.p.bins, self._tick(f"{self.names[s]} features"))
        for name, arr in zip(("counts", "s1", "s2", "weights"), f):
            _atomic_save_npy(self._c(f"street{s}.{name}.npy"), arr)

    def _seed(self, *key: int) -> np.random.SeedSequence:
        return np.random.SeedSequence([self.p.seed, *key])

    def _kmeans(self, stage: str, x: np.ndarray, k: int, w: np.ndarray, seed: np.random.SeedSequence, what: str):
        tick = self._tick(stage)
        try:
            return kmeans(
                x, k, weights=w, seed=seed, max_iter=self.p.max_iter, tol=self.p.tol,
                sample_size=self.p.sample_size,
                progress=(lambda it, mx, moved: tick(it, mx)) if tick else None,
            )
        except ValueError as exc:
            if "distinct" not in str(exc) and "need 1 <= k <= n" not in str(exc):
                raise
            pos = x[w > 0]
            distinct = int(np.unique(pos, axis=0).shape[0]) if pos.shape[0] <= 5_000_000 else None
            hint = f"only {distinct:,}" if distinct is not None else "fewer"
            raise ValueError(
                f"{stage}: {k:,} buckets but {hint} distinct {what}"
                + (f"; use at most {distinct:,}" if distinct is not None else "")
            ) from None

    def _own(self, s: int) -> None:
        sp, plan = self.space, self.plan.streets[s]
        stage = f"{self.names[s]} buckets"
        dtype = _table_dtype(plan.own_buckets)
        if plan.kind == "lossless":
            _atomic_save_npy(self._o(f"street{s}.table.npy"), np.arange(plan.table_hands, dtype=dtype))
            return
        if self.model is not None:
            self._own_from_model(s)
            return
        if plan.kind == "ehs":
            values = _load(self._c("river.values.npy"))
            weights = _load(self._c("river.weights.npy"))
            wv = np.zeros(sp.scale + 1)
            step = 1 << 24
            for lo in range(0, values.shape[0], step):
                wv += np.bincount(values[lo: lo + step], weights=weights[lo: lo + step], minlength=sp.scale + 1)
            feats = F.river_feature_table(sp.scale, self.p.bins)
            present = np.flatnonzero(wv > 0)
            res = self._kmeans(stage, feats[present], plan.own_buckets, wv[present], self._seed(s), "E[HS] values")
            label_of_v: np.ndarray = nearest(feats, res.centroids).astype(dtype)
            table: np.ndarray = np.empty(values.shape[0], dtype)
            for lo in range(0, values.shape[0], step):
                table[lo: lo + step] = label_of_v[values[lo: lo + step]]
        else:
            f = self._street_features(s)
            x = F.feature_vectors(f.counts, f.s1, f.s2, sp.scale, _METRICS[plan.kind])
            w = f.weights.astype(np.float64)
            del f
            res = self._kmeans(stage, x, plan.own_buckets, w, self._seed(s), "feature vectors")
            del x, w
            table = res.labels.astype(dtype)
        info = {
            "iterations": res.iterations, "inertia": res.inertia, "converged": res.converged,
            "reseeded": res.reseeded, "full_scans": round(res.full_scans, 3),
        }
        _atomic_write_json(self._c(f"street{s}.kmeans.json"), info)
        _atomic_save_npy(self._o(f"street{s}.centroids.npy"), res.centroids)
        _atomic_save_npy(self._o(f"street{s}.table.npy"), table)

    def _own_from_model(self, s: int) -> None:
        """Street ``s``'s table from the model: every canonical hand's nearest model centroid.

        The table follows the model, not a clustering. :func:`kmeans`'s labels are the
        nearest centres of its final centroids only up to float rounding in its
        accelerated bounds (a relative slack, not a proof), so a k-means build's table
        could in principle differ from ``nearest`` on a near-tie; the abstraction is the
        model (what :meth:`CardAbstraction.own_buckets` computes), so the cached table is
        ``nearest`` of the model's centroids, exactly as the river's ``"ehs"`` kind is
        built in either case.
        """
        assert self.model is not None
        sp, plan = self.space, self.plan.streets[s]
        centroids = self.model.centroids[s]
        assert centroids is not None  # a clustered street has centroids
        dtype = _table_dtype(plan.own_buckets)
        tick = self._tick(f"{self.names[s]} buckets")
        if plan.kind == "ehs":
            values = _load(self._c("river.values.npy"))
            label_of_v = nearest(F.river_feature_table(sp.scale, self.p.bins), centroids).astype(dtype)
            table: np.ndarray = np.empty(values.shape[0], dtype)
            step = 1 << 24
            for lo in range(0, values.shape[0], step):
                hi = min(values.shape[0], lo + step)
                table[lo:hi] = label_of_v[values[lo:hi]]
                if tick:
                    tick(hi, values.shape[0])
        else:
            f = self._street_features(s)  # memory-mapped; vectors are made a chunk at a time
            n = f.s1.shape[0]
            table = np.empty(n, dtype)
            for lo in range(0, n, _NEAREST_CHUNK):
                hi = min(n, lo + _NEAREST_CHUNK)
                x = F.feature_vectors(f.counts[lo:hi], f.s1[lo:hi], f.s2[lo:hi], sp.scale, _METRICS[plan.kind])
                table[lo:hi] = nearest(x, centroids)
                if tick:
                    tick(hi, n)
        _atomic_save_npy(self._o(f"street{s}.centroids.npy"), centroids)
        _atomic_save_npy(self._o(f"street{s}.table.npy"), table)

    def _own_profile(self, s: int) -> np.ndarray:
        """Own-street bucket profiles: centroids, or each class's feature if lossless."""
        plan = self.plan.streets[s]
        if plan.kind != "lossless":
            c = _load(self._o(f"street{s}.centroids.npy"), mmap=False)
        elif s == self.space.last:
            values = _load(self._c("river.values.npy"), mmap=False)
            c = F.river_feature_table(self.space.scale, self.p.bins)[values]
        else:
            f = self._street_features(s)
            c = F.feature_vectors(f.counts, f.s1, f.s2, self.space.scale, _METRICS[self.p.metric])
        return c.astype(np.float32) / np.float32(sqrt(c.shape[1]))

    def _chain(self, s: int) -> _Chain:
        """Street s's lookups of the earlier streets, for :func:`_pair_weights`."""
        sp = self.space
        tabs = [sp.indexer(t).tables for t in range(s)]
        owns = [_load(self._o(f"street{t}.table.npy")).astype(np.int32) for t in range(s)]
        pms = [np.zeros(0, np.int32)] + [
            _load(self._o(f"street{t}.pairs.npy")).astype(np.int32).ravel() for t in range(1, s)
        ]
        return _Chain(
            idx_tabs=np.concatenate(tabs),
            idx_off=np.cumsum([0] + [x.shape[0] for x in tabs]).astype(np.int64),
            idx_rnd=np.array([sp.indexer(t).num_rounds - 1 for t in range(s)], np.int64),
            own_all=np.concatenate(owns),
            own_off=np.cumsum([0] + [x.shape[0] for x in owns]).astype(np.int64),
            pm_all=np.concatenate(pms),
            pm_off=np.cumsum([0] + [x.shape[0] for x in pms]).astype(np.int64),
            pm_cols=np.array([0] + [self.plan.streets[t].own_buckets for t in range(1, s)], np.int64),
            masks=_chains(sp, s),
        )

    def _history(self, s: int) -> None:
        if self.model is not None:
            pairs = self.model.pairs[s]
            assert pairs is not None  # history streets after the first have pair maps
            _atomic_save_npy(self._o(f"street{s}.pairs.npy"), pairs.astype(np.int32))  # as the clustering writes it
            return
        sp = self.space
        stage = f"{self.names[s]} history"
        tick = self._tick(stage)
        prev = self._own_profile(0) if s == 1 else _load(self._c(f"street{s - 1}.profile.npy"), mmap=False)
        own_prof = self._own_profile(s)
        n_prev, k_own = prev.shape[0], own_prof.shape[0]
        # pair weights over every canonical hand of the street and ordering of its board
        ix = sp.indexer(s)
        if s == sp.last:
            weights = _load(self._c("river.weights.npy"))
        else:
            weights = _load(self._c(f"street{s}.weights.npy"))
        own_s = _load(self._o(f"street{s}.table.npy")).astype(np.int32)
        chain = self._chain(s)
        parts = 8
        total = np.zeros((n_prev, k_own), np.int64)
        step = 1 << 20
        n = weights.shape[0]
        b = sp.board_through[s]
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            out = np.zeros((parts, n_prev, k_own), np.int64)
            _pair_weights(ix.tables, ix.num_rounds - 1, sp.hole, b, lo, np.ascontiguousarray(weights[lo:hi]),
                          np.ascontiguousarray(own_s[lo:hi]), chain, out)
            total += out.sum(axis=0)
            if tick:
                tick(hi, n)
        _atomic_save_npy(self._c(f"street{s}.pairweights.npy"), total)
        pairs = np.argwhere(total > 0)
        feat_all = np.concatenate(
            [np.repeat(prev * np.float32(sqrt(self.p.history_weight)), k_own, axis=0),
             np.tile(own_prof, (n_prev, 1))], axis=1
        ).astype(np.float32)
        flat = pairs[:, 0] * k_own + pairs[:, 1]
        k = self.p.buckets[s]
        if flat.shape[0] < k:
            raise ValueError(
                f"{stage}: {k} buckets but only {flat.shape[0]} (previous, own) bucket pairs occur; "
                f"use at most {flat.shape[0]}"
            )
        res = self._kmeans(stage, feat_all[flat], k, total.ravel()[flat].astype(np.float64),
                           self._seed(s, 1), "(previous, own) pairs")
        pair_map = nearest(feat_all, res.centroids).reshape(n_prev, k_own).astype(np.int32)
        _atomic_save_npy(self._c(f"street{s}.profile.npy"), res.centroids)
        _atomic_save_npy(self._o(f"street{s}.pairs.npy"), pair_map)

    def _meta(self, seconds: float, peak: float) -> None:
        sp = self.space
        streets = []
        for s, plan in enumerate(self.plan.streets):
            files = {"table": f"street{s}.table.npy"}
            if plan.kind != "lossless":
                files["centroids"] = f"street{s}.centroids.npy"
            if self.p.history and s > 0:
                files["pairs"] = f"street{s}.pairs.npy"
            info: dict[str, Any] = {
                "street": s,
                "name": plan.name,
                "grouping": plan.grouping,
                "table_grouping": sp.grouping(s),
                "canonical_hands": plan.canonical_hands,
                "table_hands": plan.table_hands,
                "buckets": plan.buckets,
                "own_buckets": plan.own_buckets,
                "kind": plan.kind,
                "files": files,
                "seed": [self.p.seed, s],
            }
            km = self._c(f"street{s}.kmeans.json")
            if km.exists() and plan.kind != "lossless" and self.model is None:
                info["kmeans"] = json.loads(km.read_text())
            streets.append(info)
        h = hashlib.sha256()
        h.update(json.dumps([FORMAT_VERSION, self.game.to_text(), self.p.to_json()], sort_keys=True).encode())
        for st in streets:
            for name in sorted(st["files"].values()):
                h.update(name.encode())
                with open(self._o(name), "rb") as fh:
                    for block in iter(lambda: fh.read(1 << 24), b""):
                        h.update(block)
        meta = {
            "format": FORMAT_VERSION,
            "kind": "pokerbot card abstraction",
            "game": {"name": self.game.name, "definition": self.game.to_text()},
            "params": self.p.to_json(),
            "scale": sp.scale,
            "streets": streets,
            "content_hash": "sha256:" + h.hexdigest(),
            "build": {"seconds": round(seconds, 3), "peak_gib": round(peak, 3), "stages": self.report},
        }
        if self.model is not None:
            meta["build"]["tables_from_model"] = True
        m = _model_from_dir(self.out, meta)
        meta["model_hash"] = _model_hash(m.meta, m.arrays)
        if self.model is not None and meta["model_hash"] != self.model_hash:
            raise ValueError(f"{self.out}: the tables' model hashes to {meta['model_hash']}, not {self.model_hash}")
        _atomic_write_json(self._o(META_FILE), meta)


def _check_out_dir(out: Path) -> None:
    """Raise ``ValueError`` if ``out`` cannot be created or written."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".write-test.", dir=out)
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise ValueError(f"output directory {out} is not writable ({exc.strerror or exc})") from None


def build_abstraction(
    game: Game | str,
    params: AbstractionParams,
    out_dir: str | os.PathLike[str],
    *,
    progress: ProgressFn | None = None,
    memory_limit_gib: float | None = None,
) -> BuildReport:
    """Build (or finish building) the card abstraction of ``game`` into ``out_dir``.

    Stages already completed with the same inputs are reused. ``memory_limit_gib``
    (default: the machine's available memory) refuses a build predicted to need more.
    Raises ``ValueError`` with one line on bad input.
    """
    g = load_game(game) if isinstance(game, str) else game
    plan = plan_build(g, params)
    limit = available_memory_gib() if memory_limit_gib is None else memory_limit_gib
    if plan.peak_gib > limit:
        raise ValueError(
            f"predicted peak memory {plan.peak_gib:.2f} GiB exceeds the {limit:.2f} GiB available; "
            "use fewer buckets or a machine with more memory"
        )
    out = Path(out_dir)
    _check_out_dir(out)
    return _Builder(g, plan, out, progress).build()


def build_model_tables(
    ab: CardAbstraction,
    out_dir: str | os.PathLike[str],
    *,
    progress: ProgressFn | None = None,
    memory_limit_gib: float | None = None,
) -> BuildReport:
    """Build (or finish building) the table directory of ``ab``'s model into ``out_dir``.

    The directory is a complete abstraction, as :func:`build_abstraction` writes one, whose
    model is ``ab``'s (its ``model_hash`` is :attr:`CardAbstraction.model_hash`, so
    :meth:`CardAbstraction.attach_tables` accepts it): the same feature stages (river
    E[HS], histograms by towers; resumable through the stage cache, and reused from a
    build of the same game and parameters in the same directory), then every clustered
    street's table as the nearest model centroid of each canonical hand (what
    :meth:`CardAbstraction.own_buckets` computes), and the model's own centroids and pair
    maps: no k-means. Built from a build's model, the files equal that build's (same
    content hash) wherever its k-means labels are the nearest centroids.

    ``progress(stage, done, total)`` as for :func:`build_abstraction`. ``memory_limit_gib``
    (default: the machine's available memory) refuses a build predicted
    (:func:`plan_tables`) to need more. Returns the report; ``report.abstraction`` reads
    the new tables. Raises ``ValueError`` (one line) if the directory is not writable or
    memory does not suffice.
    """
    m = ab._model
    plan = plan_build(m.game, m.params)
    need = plan_tables(ab).peak_gib
    limit = available_memory_gib() if memory_limit_gib is None else memory_limit_gib
    if need > limit:
        raise ValueError(
            f"building the bucket tables is predicted to need {need:.2f} GiB of memory; "
            f"{limit:.2f} GiB is available"
        )
    out = Path(out_dir)
    _check_out_dir(out)
    return _Builder(m.game, plan, out, progress, model=m).build()


# ------------------------------------------------------------------ the model


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

    The dict must be exactly what :meth:`CardAbstraction.model` makes (plus, optionally,
    ``model_hash`` and ``content_hash``): its per-street figures must be those the game and
    parameters give, and the arrays exactly those the streets need, of the right shapes.
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



# ------------------------------------------------------------------ the abstraction


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


class CardAbstraction:
    """A card abstraction: per street a bucket count and a function cards -> bucket.

    Open a built directory with :meth:`load`, or rebuild one from its model alone with
    :meth:`from_model`. :meth:`bucket` / :meth:`bucket_batch` compute buckets from the
    cards alone (features and the model's centroids and pair maps); :meth:`lookup` /
    :meth:`lookup_batch` use the per-street tables (the cache) when tables are attached
    and compute from the cards otherwise, with the same answers. Hands are ACPC cards,
    hole cards first, then the board in the order it was dealt (the order matters only
    with history-carrying buckets).

    ``directory`` is the directory whose tables are in use (None for a model without
    tables); ``tables_used`` says whether tables are attached and ``tables_note`` why not.
    """

    directory: Path | None
    meta: dict[str, Any]  # meta.json of the directory in use, else the model dict
    tables_note: str

    def __init__(self, directory: Path, meta: dict[str, Any], *, mmap: bool = True) -> None:
        d = Path(directory)
        self._set_model(_model_from_dir(d, meta))
        self._use_tables(d, meta, mmap)

    def _set_model(self, m: _Model) -> None:
        self.game: Game = m.game
        self.params: AbstractionParams = m.params
        self.space = F.CardSpace.from_game(self.game)
        self._model = m
        self._model_hash: str | None = None
        self._streets: list[dict[str, Any]] = m.meta["streets"]
        self._centroids = m.centroids
        self._pairs = m.pairs
        self._memo: dict[tuple[int, int], int] = {}
        self._tables: list[np.ndarray] | None = None
        self._dir_meta: dict[str, Any] | None = None
        self._content_hash: str | None = None
        self.directory = None
        self.meta = copy.deepcopy(m.meta)
        self.tables_note = "no tables given"

    def _use_tables(self, d: Path, meta: dict[str, Any], mmap: bool) -> None:
        """Attach directory ``d``'s tables (``meta`` its metadata), already known to match."""
        try:
            tables = [_load(d / st["files"]["table"], mmap) for st in meta["streets"]]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{d / META_FILE}: field {exc} is missing or malformed") from None
        for s, t in enumerate(tables):
            n = self._streets[s]["table_hands"]
            if t.shape != (n,) or t.dtype.kind not in "iu":
                raise ValueError(f"{d}: street {s}'s table has shape {t.shape} and dtype {t.dtype}, not ({n},) integers")
        self._tables = tables
        self._dir_meta = meta
        self._content_hash = str(meta["content_hash"])
        self.directory = d
        self.meta = meta
        self.tables_note = ""

    @classmethod
    def load(cls, directory: str | os.PathLike[str], *, mmap: bool = True, verify: bool = False) -> CardAbstraction:
        """Open a built abstraction; ``verify`` re-hashes the files against the metadata.

        A directory built before model hashes were recorded gets its :attr:`model_hash`
        from its files, like any other. Raises ``ValueError`` if the directory holds no
        finished abstraction, an unknown format, or (with ``verify``) files that do not
        match their content hash or model hash.
        """
        d = Path(directory)
        meta = _read_meta(d)
        ab = cls(d, meta, mmap=mmap)
        if verify and ab.compute_hash() != meta["content_hash"]:
            raise ValueError(f"{d}: files do not match the content hash in {META_FILE}")
        if verify and "model_hash" in meta and meta["model_hash"] != ab.model_hash:
            raise ValueError(f"{d}: files do not match the model hash in {META_FILE}")
        return ab

    @classmethod
    def from_model(
        cls,
        meta: dict[str, Any],
        arrays: dict[str, np.ndarray],
        tables: str | os.PathLike[str] | None = None,
        *,
        mmap: bool = True,
        verify: bool = False,
    ) -> CardAbstraction:
        """The abstraction a model computes (``meta, arrays`` as :meth:`model` returns them).

        It buckets from the cards alone; :meth:`lookup` / :meth:`lookup_batch` compute from
        the cards too unless tables are attached. ``tables``: a built directory whose tables
        are attached (:meth:`attach_tables`) only if its model hash equals this model's;
        otherwise they are ignored without error, ``tables_used`` is False and
        ``tables_note`` says why. ``meta`` may also carry ``model_hash`` (checked against
        the contents) and ``content_hash`` (the build it came from, reported by
        :attr:`content_hash` while no tables are attached); neither is part of the model.

        Raises ``ValueError`` (one line) on an unknown format, a missing, unexpected or
        misshapen array, bucket counts that do not match the centroids or pair maps, or
        figures the game and parameters do not give.
        """
        ab = cls.__new__(cls)
        ab._set_model(_check_model(meta, arrays))
        recorded = meta.get("model_hash")
        if recorded is not None and recorded != ab.model_hash:
            raise ValueError(f"model: its contents hash to {ab.model_hash}, not to its recorded {recorded}")
        if meta.get("content_hash") is not None:
            ab._content_hash = str(meta["content_hash"])
        if tables is not None:
            ab.attach_tables(tables, mmap=mmap, verify=verify)
        return ab

    def attach_tables(self, directory: str | os.PathLike[str], *, mmap: bool = True, verify: bool = False) -> bool:
        """Use ``directory``'s tables for lookups if it was built from this model.

        The directory's model hash is computed from its files (and must equal the one its
        ``meta.json`` records, if any) and compared with :attr:`model_hash`. Returns True
        if the tables are now in use. Otherwise nothing changes but ``tables_note``, which
        says why (no abstraction there, model hash differs, ...); no exception is raised.
        ``verify`` also re-hashes the directory's files against its content hash.
        """
        d = Path(directory)
        try:
            meta = _read_meta(d)
        except ValueError as exc:
            return self._refuse(str(exc))
        recorded = meta.get("model_hash")
        if recorded is not None and recorded != self.model_hash:
            return self._refuse(f"model hash differs ({d} has {str(recorded)[:19]})")
        try:
            other = _model_from_dir(d, meta)
        except (ValueError, OSError) as exc:
            return self._refuse(f"{d}: unreadable model ({str(exc).splitlines()[0] if str(exc) else exc!r})")
        h = _model_hash(other.meta, other.arrays)
        if recorded is not None and recorded != h:
            return self._refuse(f"{d}: files do not match the model hash in {META_FILE}")
        if h != self.model_hash:
            return self._refuse(f"model hash differs ({d} has {h[:19]})")
        if verify:
            try:
                ok = _files_hash(d, meta) == meta.get("content_hash")
            except (OSError, KeyError, TypeError):
                ok = False
            if not ok:
                return self._refuse(f"{d}: files do not match the content hash in {META_FILE}")
        try:
            self._use_tables(d, meta, mmap)
        except (ValueError, OSError) as exc:
            return self._refuse(f"{d}: unreadable tables ({str(exc).splitlines()[0] if str(exc) else exc!r})")
        return True

    def _refuse(self, why: str) -> bool:
        self.tables_note = why
        return False

    def compute_hash(self) -> str:
        """The content hash of the directory's files as they are now (see :attr:`content_hash`).

        Raises ``ValueError`` without a directory (a model alone has no files to hash).
        """
        if self.directory is None or self._dir_meta is None:
            raise ValueError("no table directory: a model alone has no content hash (compare model_hash)")
        return _files_hash(self.directory, self._dir_meta)

    # -- the model

    def model(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The model: what computes a bucket from the cards, without tables or directories.

        Returns ``(meta, arrays)``. ``meta`` is a JSON/msgpack-able dict: ``format``
        (:data:`MODEL_FORMAT`), ``kind`` (:data:`MODEL_KIND`), ``game`` (name and
        definition text), ``params``, ``scale`` and per street ``street``, ``name``,
        ``kind``, ``grouping``, ``table_grouping``, ``buckets``, ``own_buckets``,
        ``canonical_hands``, ``table_hands``. ``arrays``: ``centroids{s}`` (``float32[own
        buckets, dims]``, clustered streets) and ``pairs{s}`` (``[previous buckets, own
        buckets]``, the smallest unsigned dtype that holds the street's buckets; history
        streets after the first), read-only, little-endian. :meth:`from_model` is the inverse.
        """
        return copy.deepcopy(self._model.meta), dict(self._model.arrays)

    @property
    def model_hash(self) -> str:
        """``sha256:...`` of the model (:meth:`model`): sorted-key JSON of its dict, then each
        array's name, dtype, shape and little-endian bytes. Same on every machine."""
        if self._model_hash is None:
            self._model_hash = _model_hash(self._model.meta, self._model.arrays)
        return self._model_hash

    @property
    def tables_used(self) -> bool:
        """True if lookups read tables (else they compute from the cards, same answers)."""
        return self._tables is not None

    # -- description

    @property
    def content_hash(self) -> str:
        """``sha256:...`` of the game, the parameters and every file of the build in use.

        Without tables: the ``content_hash`` the model was given with, if any; else raises
        ``ValueError`` (a model alone is identified by :attr:`model_hash`).
        """
        if self._content_hash is None:
            raise ValueError("no content hash: a model without tables is identified by its model hash")
        return self._content_hash

    @property
    def num_streets(self) -> int:
        """Number of streets."""
        return self.space.num_streets

    @property
    def history(self) -> bool:
        """True for history-carrying buckets."""
        return self.params.history

    def num_buckets(self, street: int) -> int:
        """Number of buckets of ``street``."""
        return int(self._streets[self._street(street)]["buckets"])

    @property
    def bucket_counts(self) -> list[int]:
        """Buckets per street."""
        return [int(st["buckets"]) for st in self._streets]

    def bucket_fn(self, street: int, hole: Sequence[int], board: Sequence[int]) -> int:
        """The table bucket of one hand, with :mod:`solver.chance`'s ``bucket_fn`` signature."""
        return self.lookup(hole, board, street)

    def indexer(self, street: int) -> HandIndexer:
        """The indexer of ``street``'s own table (hole cards + board as a set)."""
        return self.space.indexer(self._street(street))

    def table(self, street: int) -> np.ndarray:
        """Own-street bucket of every canonical hand of ``street`` (indexed by :meth:`indexer`).

        Without history this is the street's bucket; with history, combine through
        :meth:`pair_map`. Raises ``ValueError`` if no tables are attached.
        """
        s = self._street(street)
        if self._tables is None:
            raise ValueError(f"no tables attached ({self.tables_note}); bucket_batch computes from the cards")
        return self._tables[s]

    def pair_map(self, street: int) -> np.ndarray | None:
        """History: ``pairs[previous history bucket, own bucket]`` -> bucket (None on street 0)."""
        return self._pairs[self._street(street)]

    # -- buckets

    def _street(self, street: int) -> int:
        if isinstance(street, bool) or not isinstance(street, (int, np.integer)) or not 0 <= street < self.num_streets:
            raise ValueError(f"street {street!r} is not in 0..{self.num_streets - 1}")
        return int(street)

    def _hands(self, hands: np.ndarray | Sequence[Sequence[int]], street: int | None) -> tuple[np.ndarray, int]:
        arr = np.asarray(hands)
        if arr.ndim != 2:
            raise ValueError(f"hands must be a 2-d array (hands x cards), got shape {arr.shape}")
        sp = self.space
        nb = arr.shape[1] - sp.hole
        if street is None:
            cands = [s for s in range(sp.num_streets) if sp.board_through[s] == nb]
            if len(cands) != 1:
                sizes = sorted(set(sp.board_through))
                raise ValueError(
                    f"{nb} board cards is not one street of {self.game.name or 'the game'} "
                    f"(board sizes {sizes}); pass street="
                )
            street = cands[0]
        s = self._street(street)
        if nb != sp.board_through[s]:
            raise ValueError(f"street {s} hands have {sp.hole + sp.board_through[s]} cards, got {arr.shape[1]}")
        if arr.size and (not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0 or arr.max() >= DECK_SIZE):
            raise ValueError("cards must be integers in 0..51")
        arr = np.ascontiguousarray(arr, dtype=np.uint8)
        self.space.indexer(s).index_batch(arr)  # checks every card is in the deck, none repeats
        return arr, s

    def _own_cards(self, hands: np.ndarray, s: int, dedupe: bool = True) -> np.ndarray:
        """Own-street buckets from the cards: features, then the nearest centroid.

        Features do not change under a permutation of the suits, so with ``dedupe`` each
        suit-isomorphism class in the batch is computed once, on its first hand (the
        indexer only groups the hands; nothing is read from a table).
        """
        kind = self._streets[s]["kind"]
        ix = self.space.indexer(s)
        if kind == "lossless":
            return ix.index_batch(hands).astype(np.int32)
        inverse = None
        if dedupe and hands.shape[0] > 1:
            _, first, inverse = np.unique(ix.index_batch(hands), return_index=True, return_inverse=True)
            hands = hands[first]
        f = F.direct_features(self.space, hands, s, self.params.bins)
        metric = F.METRIC_EHS if kind == "ehs" else _METRICS[kind]
        x = F.feature_vectors(f.counts, f.s1, f.s2, self.space.scale, metric)
        centroids = self._centroids[s]
        assert centroids is not None  # a clustered street has centroids
        labels = nearest(x, centroids)
        return labels if inverse is None else labels[inverse.ravel()]

    def _own_memo(self, hands: np.ndarray, s: int) -> np.ndarray:
        """Own-street buckets of a few hands from the cards, remembered per canonical hand.

        An own-street bucket depends on the hand's suit-isomorphism class only, so a player
        that asks again (another decision on the street, or the next street of a history
        chain) gets it without computing the features again.
        """
        if self._streets[s]["kind"] == "lossless":
            return self._own_cards(hands, s)
        keys = self.space.indexer(s).index_batch(hands).tolist()
        memo = self._memo
        out = np.empty(len(keys), np.int32)
        todo: list[int] = []
        for i, k in enumerate(keys):
            v = memo.get((s, k))
            if v is None:
                todo.append(i)
            else:
                out[i] = v
        if todo:
            got = self._own_cards(np.ascontiguousarray(hands[todo]), s).tolist()
            if len(memo) + len(todo) > _MEMO_MAX:
                memo.clear()
            for i, v in zip(todo, got):
                out[i] = v
                memo[(s, keys[i])] = v
        return out

    def _own_table(self, hands: np.ndarray, s: int) -> np.ndarray:
        assert self._tables is not None
        return self._tables[s][self.space.indexer(s).index_batch(hands)].astype(np.int32)

    def _chain(self, hands: np.ndarray, s: int, own: Callable[[np.ndarray, int], np.ndarray]) -> np.ndarray:
        if not self.params.history:
            return own(hands, s)
        hole, bt = self.space.hole, self.space.board_through
        h = own(np.ascontiguousarray(hands[:, : hole + bt[0]]), 0)
        for t in range(1, s + 1):
            o = own(np.ascontiguousarray(hands[:, : hole + bt[t]]), t)
            pairs = self._pairs[t]
            assert pairs is not None  # history streets after the first have pair maps
            h = pairs[h, o]
        return h.astype(np.int32)

    def bucket_batch(self, hands: np.ndarray, street: int | None = None, *, dedupe: bool = True) -> np.ndarray:
        """Buckets of many hands computed from the cards alone (no table), ``int32[n]``.

        ``hands``: ``(n, hole + board)`` ACPC cards; ``street`` defaults to the street
        with that many board cards. ``dedupe=False`` computes every hand's features
        itself, even for suit-isomorphic repeats (same answers, more work; earlier
        streets of a history chain are still computed once per class). Raises
        ``ValueError`` on a card outside the deck, a repeated card, or a size that is not
        a street's.
        """
        arr, s = self._hands(hands, street)
        return self._computed(arr, s, dedupe)

    def _computed(self, arr: np.ndarray, s: int, dedupe: bool) -> np.ndarray:
        if arr.shape[0] > _SERIAL_BELOW:
            return self._chain(arr, s, lambda h, t: self._own_cards(h, t, dedupe or t < s))
        # a few hands (a player acting): own-street buckets are remembered per canonical
        # hand, and the work stays on this thread. Waking numba's other threads costs
        # nothing on an idle machine but up to a scheduler time slice (tens of ms) on a
        # busy one
        own: Callable[[np.ndarray, int], np.ndarray] = (
            lambda h, t: self._own_memo(h, t) if dedupe or t < s else self._own_cards(h, t, False)
        )
        threads = numba.get_num_threads()
        if threads == 1:
            return self._chain(arr, s, own)
        numba.set_num_threads(1)
        try:
            return self._chain(arr, s, own)
        finally:
            numba.set_num_threads(threads)

    def own_buckets(self, hands: np.ndarray, street: int) -> np.ndarray:
        """Own-street buckets of many hands computed from the cards (features, then the
        nearest centroid; the entries :meth:`table` holds for them), ``int32[n]``. With
        history, :meth:`pair_map` combines them with the previous street's bucket."""
        arr, s = self._hands(hands, street)
        return self._own_cards(arr, s).astype(np.int32)

    def lookup_batch(self, hands: np.ndarray, street: int | None = None) -> np.ndarray:
        """Buckets of many hands from the tables, ``int32[n]`` (same as :meth:`bucket_batch`);
        computed from the cards when no tables are attached."""
        arr, s = self._hands(hands, street)
        if self._tables is None:
            return self._computed(arr, s, True)
        return self._chain(arr, s, self._own_table)

    def bucket(self, hole: Sequence[int] | np.ndarray, board: Sequence[int] | np.ndarray = (),
               street: int | None = None) -> int:
        """Bucket of one hand from its cards alone (hole cards, board in dealing order)."""
        return int(self.bucket_batch(np.array([list(hole) + list(board)], np.int64), street)[0])

    def lookup(self, hole: Sequence[int] | np.ndarray, board: Sequence[int] | np.ndarray = (),
               street: int | None = None) -> int:
        """Bucket of one hand from the tables (from the cards when no tables are attached)."""
        return int(self.lookup_batch(np.array([list(hole) + list(board)], np.int64), street)[0])

    def __repr__(self) -> str:
        b = "/".join(str(st["buckets"]) for st in self._streets)
        where = f", tables {self.directory}" if self._tables is not None else ", no tables"
        return f"CardAbstraction({self.game.name or '?'}, buckets {b}{', history' if self.history else ''}{where})"
