"""What building a card abstraction costs, predicted before anything runs.

:class:`AbstractionParams` is everything that decides the buckets (recorded in a build's
metadata and in the model, and hashed). :func:`plan_build` validates the parameters for a
game and predicts, per street (:class:`StreetPlan`), what the build
(:func:`abstraction.build.build_abstraction`) involves: the card groups its bucket
function distinguishes, the canonical hands, the own-street and history bucket counts,
the kind of bucketing (lossless, river E[HS], E[HS] histograms or moments), and the
seconds and peak memory of its stages (river E[HS], features, k-means, history pair
maps). ``pokerbot abstract --dry-run`` prints that plan (:class:`BuildPlan`), and a build
predicted to need more memory than the machine has is refused before it starts.
:func:`plan_tables` predicts the time, memory and disk of writing a model's tables
without clustering (:func:`abstraction.build.build_model_tables`,
:class:`TablesPlan`), which :mod:`abstraction.table_cache` checks before it builds.

The cost model is a handful of constants (nanoseconds of wall time per unit of work,
bytes held per item at a stage's peak), calibrated on the full 52-card game on a shared
2-core machine with ``bench/abstraction.py``, plus the first run's compiling: the seconds
numba takes to compile each group of the build's kernels (:func:`compile_kernels`),
counted only for the groups whose kernels are not in numba's cache
(:func:`poker._compile.cold`), at the first stage that calls them (``compile_seconds``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from math import comb
from typing import Any, Protocol

import numpy as np

from poker._compile import cold
from poker._stop import Stop, run_stoppable
from poker.game import Game

from . import features as F
from . import history as H
from . import indexer as I
from . import kmeans as K
from .indexer import HandIndexer

__all__ = [
    "METRICS",
    "AbstractionParams",
    "BuildPlan",
    "StreetPlan",
    "TablesPlan",
    "compile_kernels",
    "plan_build",
    "plan_tables",
    "stage_groups",
    "street_names",
]

_METRICS = {"emd": F.METRIC_CDF, "moments": F.METRIC_MOMENTS}
#: The feature metrics a build may use (:attr:`AbstractionParams.metric`).
METRICS = tuple(_METRICS)
_GIB = float(1 << 30)


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
    seconds: float  # compile_seconds included
    peak_gib: float
    compile_seconds: float = 0.0  # compiling kernels not in numba's cache (first run only)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-able form."""
        return asdict(self)


@dataclass(frozen=True)
class BuildPlan:
    """Per-street plans and the predicted totals of a build (``seconds`` includes
    ``compile_seconds``, the first run's compiling of kernels numba has not cached)."""

    game: str
    params: AbstractionParams
    streets: list[StreetPlan]
    seconds: float
    peak_gib: float
    compile_seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-able form."""
        return {
            "game": self.game,
            "params": self.params.to_json(),
            "streets": [s.to_json() for s in self.streets],
            "seconds": self.seconds,
            "compile_seconds": self.compile_seconds,
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


# Compiling, the first run's cost: numba compiles a kernel on its first call and caches it
# on disk (poker._compile). Seconds per compile group, counted where the group's kernels
# are not cached (poker._compile.cold), at the first stage of the build that calls them.
# Measured on the 2-vCPU development machine, 2026-12-07: each group's first call, in the
# build's order, in a fresh process with NUMBA_CACHE_DIR pointing at an empty directory,
# minus the same calls in a second process that found them cached (20-card hold'em: the
# river table, the turn's towers, its feature vectors, k-means into 60 clusters, the
# nearest centroids; then a --history build for the pair weights). The figures are the
# mean of two such pairs of runs while the machine was quiet (load about 1); with other
# jobs on it (load 4 to 7) the same calls took 1.3 to 2.5 times as long. The river
# group's figure includes the hand indexer's and the evaluator's kernels, which it
# compiles first. A whole first build of the 20-card game (25/60/60/60 or the shipped
# 25/255/115/66) took 27 s there, a second one 1.3 s.
_COMPILE_S = {
    "river": 8.0,  # river E[HS]: the sweep per board (8.5 and 7.7 s measured)
    "tower": 4.5,  # the histogram towers (4.5 and 4.5)
    "vectors": 1.6,  # feature vectors from the integer features (1.5 and 1.7)
    "kmeans": 11.0,  # k-means++, the full and the Yinyang assignment, the means (10.7 and 11.1)
    "nearest": 1.4,  # nearest centroid of every hand (1.4 and 1.4)
    "pairs": 3.4,  # history pair weights (3.2 and 3.5)
}


def compile_kernels(group: str) -> tuple[Any, ...]:
    """The ``@njit`` kernels of a compile group (a key of the compile table)."""
    if group == "river":
        return (F._river_scatter, I._unindex_batch_kernel)
    if group == "tower":
        return (F._tower,)
    if group == "vectors":
        return (F._vectors,)
    if group == "kmeans":
        return (K._pp_seed, K._full_assign, K._yinyang_assign, K._partial_sums, K._centre_gaps, K._inertia)
    if group == "nearest":
        return (K._nearest_kernel,)
    if group == "pairs":
        return (H._pair_weights,)
    raise ValueError(f"unknown compile group {group!r}")


def stage_groups(what: str, kind: str, *, from_model: bool = False) -> tuple[str, ...]:
    """Compile groups a build stage calls: ``what`` is ``"river"`` (river E[HS]),
    ``"features"``, ``"buckets"`` (of a street of ``kind``) or ``"history"``;
    ``from_model``: the tables of a model (nearest centroids, no k-means)."""
    if what == "river":
        return ("river",)
    if what == "features":
        return ("tower",)
    if what == "buckets":
        if kind == "lossless":
            return ()
        return ("vectors", "nearest") if from_model else ("vectors", "kmeans", "nearest")
    if what == "history":
        return () if from_model else ("vectors", "pairs", "kmeans", "nearest")
    raise ValueError(f"unknown build stage {what!r}")


def _compile_seconds(space: F.CardSpace, kinds: Sequence[str], *, history: bool, from_model: bool) -> list[float]:
    """Per street, the seconds of compiling the cold groups whose first call is in one of
    its stages, following the build's order (river E[HS], features from the river down,
    buckets from the river down, history from the flop up)."""
    last = space.last
    need = [s for s in range(last) if (history and not from_model) or kinds[s] in ("emd", "moments")]
    lowest = min(need) if need else last
    order: list[tuple[int, tuple[str, ...]]] = [(last, stage_groups("river", "", from_model=from_model))]
    order += [(s, stage_groups("features", "", from_model=from_model)) for s in range(last - 1, lowest - 1, -1)]
    order += [(s, stage_groups("buckets", kinds[s], from_model=from_model)) for s in range(last, -1, -1)]
    if history:
        order += [(s, stage_groups("history", "", from_model=from_model)) for s in range(1, last + 1)]
    first: dict[str, int] = {}
    for s, groups in order:
        for g in groups:
            first.setdefault(g, s)
    # asked off the main thread: numba may set its compiler up to answer, and a signal
    # handled in the main thread must not interrupt that
    cold_groups = run_stoppable(lambda: [g for g in first if cold(*compile_kernels(g))], Stop())
    out = [0.0] * space.num_streets
    for g in cold_groups:
        out[first[g]] += _COMPILE_S[g]
    return out


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
            # E[HS] counts wins and half ties against every opponent hand, so it takes at
            # most 2 n + 1 values; k-means cannot make more buckets than values
            opp = comb(space.num_ranks * space.num_suits - space.board_through[s] - space.hole, space.hole)
            if own > 2 * opp + 1:
                raise ValueError(
                    f"{names[s]}: {own:,} buckets but the river's E[HS] (wins and half ties against "
                    f"{opp:,} opponent hands) takes at most {2 * opp + 1:,} distinct values; use fewer"
                )
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
    compiling = _compile_seconds(space, [st.kind for st in streets], history=params.history, from_model=False)
    streets = [
        replace(st, seconds=round(st.seconds + c, 2), compile_seconds=round(c, 2)) for st, c in zip(streets, compiling)
    ]
    return BuildPlan(
        game=game.name or "", params=params, streets=streets, seconds=round(total_s + sum(compiling), 2),
        peak_gib=round(peak, 3), compile_seconds=round(sum(compiling), 2),
    )


class _Abstraction(Protocol):
    """What :func:`plan_tables` reads of an abstraction
    (:class:`abstraction.card_abstraction.CardAbstraction`, which this module cannot
    import: that module imports this one)."""

    @property
    def game(self) -> Game: ...

    @property
    def params(self) -> AbstractionParams: ...

    @property
    def space(self) -> F.CardSpace: ...


@dataclass(frozen=True)
class TablesPlan:
    """What building a model's tables (:func:`abstraction.build.build_model_tables`) is
    predicted to cost.

    ``disk_bytes``: the directory at its largest (tables, centroids and pair maps plus the
    stage cache of features); ``final_bytes``: what lookups need (the stage cache deleted).
    """

    seconds: float  # compile_seconds included
    peak_gib: float
    disk_bytes: int
    final_bytes: int
    compile_seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-able form."""
        return asdict(self)


def plan_tables(ab: _Abstraction) -> TablesPlan:
    """Predict the time, memory and disk of building ``ab``'s tables from its model.

    ``ab``: a :class:`abstraction.card_abstraction.CardAbstraction` (its game, parameters
    and card space are all this reads). The stages are those of
    :func:`abstraction.build.build_abstraction` without clustering: river E[HS], the
    features of every street from the river down to the first clustered one, then one
    nearest-centroid scan per clustered street's canonical hands.
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
    compiling = sum(_compile_seconds(space, [st.kind for st in plan.streets], history=p.history, from_model=True))
    return TablesPlan(
        seconds=round(seconds + compiling, 2), peak_gib=round(_BASE_GIB + mem / _GIB, 3), disk_bytes=int(disk + final),
        final_bytes=int(final), compile_seconds=round(compiling, 2),
    )


def _table_dtype(buckets: int) -> type:
    """Dtype of a street's own-bucket table (what the build writes, what the plans count)."""
    return np.uint16 if buckets <= 0xFFFF else np.int32
