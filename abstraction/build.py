"""Building a card abstraction: the staged build that writes a table directory.

:func:`build_abstraction` buckets a game's hands (the bucket families and their features
are described in :mod:`abstraction.card_abstraction`) in resumable stages: river E[HS];
features per street (E[HS] histograms by towers, from the river down); clustering per
street (:func:`abstraction.kmeans.kmeans`); history pair maps, whose weights count every
real deal through the earlier streets' buckets (:func:`abstraction.history._pair_weights`,
one numba kernel over the canonical hands and every ordering of their board);
metadata. Each stage writes its files atomically and then records itself, with a hash of
everything it depends on, in ``cache/stages.json``; a rerun skips stages whose record
matches, so an interrupted build restarts at the stage it was in. Every stage's kernels
read one stop flag (:mod:`poker._stop`), so SIGINT or SIGTERM ends a build within about a
second, and report progress within the stage (plus, while they compile or k-means seeds,
a phase). Tables are ``.npy``
files (memory-mappable); ``meta.json`` (game, parameters, seeds, per-street figures,
content hash, model hash; :mod:`abstraction.model` reads it) is written last. A build
predicted (:func:`abstraction.plan.plan_build`) to need more memory than is available is
refused before it starts.

:func:`build_model_tables` writes such a directory from a model alone: the same feature
stages, then each clustered street's table as every canonical hand's nearest model
centroid (no clustering), and the model's own centroids and pair maps;
:mod:`abstraction.table_cache` keeps one per model hash. Both return a
:class:`BuildReport`: per stage its seconds and whether it was reused, and the
abstraction that reads the new tables.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from math import sqrt
from pathlib import Path
from typing import Any

import numpy as np

from poker._atomic import atomic_write, atomic_write_bytes
from poker._compile import COMPILING, cold
from poker._stop import Stop, counter, run_stoppable, stoppable
from poker._sysinfo import available_memory_gib, peak_memory_gib
from poker.game import Game, load_game

from . import features as F
from .cluster import FeatureCluster
from .card_abstraction import CardAbstraction
from .history import _Chain, _chains, _pair_weights
from .kmeans import KMeansProgress, kmeans, nearest
from .model import FORMAT_VERSION, META_FILE, _load, _Model, _model_from_dir, _model_hash
from .plan import (
    _METRICS,
    _NEAREST_CHUNK,
    AbstractionParams,
    BuildPlan,
    _table_dtype,
    compile_kernels,
    plan_build,
    plan_tables,
    stage_groups,
    street_names,
)

__all__ = [
    "CACHE_DIR",
    "BuildReport",
    "PhaseFn",
    "ProgressFn",
    "build_abstraction",
    "build_model_tables",
]

CACHE_DIR = "cache"
STAGES_FILE = "stages.json"

# Stage progress: ``progress(stage, done, total)``; the CLI draws one bar per stage.
ProgressFn = Callable[[str, float, float], None]
# What a stage waits on before it counts work (``phase(stage, text)``, None: nothing):
# ``poker._compile.COMPILING`` while its kernels compile, k-means's seeding and first
# assignment; the CLI shows it on the stage's bar.
PhaseFn = Callable[[str, str | None], None]


# ------------------------------------------------------------------ files


def _atomic_save_npy(path: Path, arr: np.ndarray) -> None:
    """Write ``arr`` as ``.npy`` atomically (temporary file, fsync, rename)."""
    data = np.ascontiguousarray(arr)
    atomic_write(path, lambda fh: np.save(fh, data, allow_pickle=False))


def _atomic_write_json(path: Path, obj: Any) -> None:
    atomic_write_bytes(path, (json.dumps(obj, indent=1, sort_keys=True) + "\n").encode())


# The steps of a clustering stage shown as its phase (see _Builder._tell): name, unit.
_STEPS = {
    "seeding": ("k-means++ seeding", "centres"),
    "assigning": ("first assignment", "points"),
    "pairs": ("pair weights", "hands"),
}


def _clock(seconds: float) -> str:
    """``m:ss`` or ``h:mm:ss``."""
    m, s = divmod(max(0, int(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


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
                 model: _Model | None = None, cluster: FeatureCluster | None = None,
                 phase: PhaseFn | None = None) -> None:
        self.game = game
        self.phase = phase
        self.stop = Stop()  # registered for signals while build() runs
        # a k-means phase's first counted item: ((stage, step), time, count)
        self._since: tuple[tuple[str, str], float, float] = (("", ""), 0.0, 0.0)
        self.cluster = cluster
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

    def _run(self, name: str, key: str, files: list[Path], fn: Callable[[], None], groups: Sequence[str] = ()) -> None:
        """Run stage ``name`` unless recorded done with ``key`` and its ``files`` on disk.

        A stage stopped by a signal raises :class:`poker._stop.Interrupted` before it is
        recorded: its files are written atomically and only once computed in full, and the
        next run starts over at this stage. ``groups``: the stage's compile groups
        (:func:`abstraction.plan.compile_kernels`), shown as compiling while cold.
        """
        if self.stages.is_done(name, key, files):
            self.report.append({"stage": name, "seconds": 0.0, "reused": True})
            return
        t0 = time.perf_counter()
        if self.progress is not None:
            self.progress(name, 0, 1)
        if self.phase is not None and groups and self._cold(*(k for g in groups for k in compile_kernels(g))):
            self.phase(name, COMPILING)
        fn()
        self.stop.check()
        self.stages.mark(name, key)
        self.report.append({"stage": name, "seconds": round(time.perf_counter() - t0, 3), "reused": False})

    def _cold(self, *kernels: Any) -> bool:
        """:func:`poker._compile.cold`, asked off the main thread: numba may set its compiler
        up to answer, and a signal handled in the main thread must not interrupt that."""
        return run_stoppable(lambda: cold(*kernels), self.stop)

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
        with stoppable(self.stop):
            return self._build()

    def _build(self) -> BuildReport:
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
                  self._river, stage_groups("river", "", from_model=self.model is not None))
        # history clustering profiles every street (lossless ones by their features); a
        # model's tables need the features of clustered streets only
        profiles = self.p.history and self.model is None
        need_features = [s for s in range(last) if profiles or self.plan.streets[s].kind in ("emd", "moments")]
        lowest = min(need_features) if need_features else last
        for s in range(last - 1, lowest - 1, -1):
            files = [self._c(f"street{s}.{x}.npy") for x in ("counts", "s1", "s2", "weights")]
            self._run(f"{self.names[s]} features", self.feature_key(s), files, partial(self._features, s),
                      stage_groups("features", "", from_model=self.model is not None))
        for s in range(last, -1, -1):
            files = [self._o(f"street{s}.table.npy")]
            if self.plan.streets[s].kind != "lossless":
                files.append(self._o(f"street{s}.centroids.npy"))
            self._run(f"{self.names[s]} buckets", self.own_key(s), files, partial(self._own, s),
                      stage_groups("buckets", self.plan.streets[s].kind, from_model=self.model is not None))
        if self.p.history:
            for s in range(1, last + 1):
                files = [self._o(f"street{s}.pairs.npy")]
                if self.model is None:
                    files += [self._c(f"street{s}.{x}.npy") for x in ("profile", "pairweights")]
                self._run(f"{self.names[s]} history", self.history_key(s), files, partial(self._history, s),
                          stage_groups("history", "", from_model=self.model is not None))
        seconds = time.perf_counter() - t0
        peak = peak_memory_gib()
        self._meta(seconds, peak)
        ab = CardAbstraction.load(self.out)
        return BuildReport(ab, self.report, round(seconds, 3), round(peak, 3))

    def _river(self) -> None:
        tick = self._tick("river E[HS]")
        if self.cluster is not None:
            rt = self.cluster.river_table(self.game, tick)
        else:
            rt = F.river_table(self.space, tick, stop=self.stop)
        _atomic_save_npy(self._c("river.values.npy"), rt.values)
        _atomic_save_npy(self._c("river.weights.npy"), rt.weights)

    def _next_features(self, s: int) -> F.RiverTable | F.StreetFeatures:
        if s + 1 == self.space.last:
            return F.RiverTable(_load(self._c("river.values.npy")), _load(self._c("river.weights.npy")))
        return self._street_features(s + 1)

    def _street_features(self, s: int) -> F.StreetFeatures:
        return F.StreetFeatures(*(_load(self._c(f"street{s}.{x}.npy")) for x in ("counts", "s1", "s2", "weights")))

    def _features(self, s: int) -> None:
        nxt, tick = self._next_features(s), self._tick(f"{self.names[s]} features")
        if self.cluster is not None:
            f = self.cluster.tower_features(self.game, s, nxt, self.p.bins, tick)
        else:
            f = F.tower_features(self.space, s, nxt, self.p.bins, tick, stop=self.stop)
        for name, arr in zip(("counts", "s1", "s2", "weights"), f):
            _atomic_save_npy(self._c(f"street{s}.{name}.npy"), arr)

    def _seed(self, *key: int) -> np.random.SeedSequence:
        return np.random.SeedSequence([self.p.seed, *key])

    def _watch(self, stage: str, at: KMeansProgress) -> None:
        """A k-means run's position on the stage's bar: its updates are the counted work;
        the seeding and the first full assignment, each costing as much as many updates,
        are phases (:meth:`_tell`), so that the bar's rate is the updates'."""
        if at.step == "iterating" and not at.compiling:
            if self.progress is not None:
                self.progress(stage, at.done, at.total)
        elif at.compiling:
            if self.phase is not None:
                self.phase(stage, COMPILING)
            if self.progress is not None:
                self.progress(stage, 0, self.p.max_iter)
        else:
            self._tell(stage, at.step, at.done, at.total)

    def _tell(self, stage: str, step: str, done: float, total: float) -> None:
        """Show ``step`` of a k-means stage (its seeding, its first assignment, a history
        stage's pair weights) as the stage's phase: the count, and the time left at the
        rate measured from the step's first counted item. The bar's counted work, k-means's
        updates, is still 0 of ``max_iter`` (reported after the phase, which a bar draws at
        once, so that the bar does not draw the count again with the phase's last text)."""
        if self.phase is None:
            if self.progress is not None:
                self.progress(stage, 0, self.p.max_iter)
            return
        what, unit = _STEPS[step]
        now = time.monotonic()
        if self._since[0] != (stage, step) or done <= 0:
            self._since = ((stage, step), now, done)
        _, t0, d0 = self._since
        left = ""
        if done > d0 and now > t0:
            left = f", {_clock((total - done) * (now - t0) / (done - d0))} left"
        self.phase(stage, f"{what} {done:,.0f}/{total:,.0f} {unit}{left}")
        if self.progress is not None:
            self.progress(stage, 0, self.p.max_iter)

    def _nearest(self, stage: str, points: np.ndarray, centroids: np.ndarray) -> np.ndarray:
        """:func:`nearest` after a stage's k-means, the bar saying so while it compiles."""
        compiling = self.phase is not None and self._cold(*compile_kernels("nearest"))
        if compiling:
            self.phase(stage, COMPILING)
        labels = nearest(points, centroids, stop=self.stop)
        if compiling:
            self.phase(stage, None)
        return labels

    def _kmeans(self, stage: str, x: np.ndarray, k: int, w: np.ndarray, seed: np.random.SeedSequence, what: str):
        watch = partial(self._watch, stage) if self.progress is not None or self.phase is not None else None
        try:
            res = kmeans(
                x, k, weights=w, seed=seed, max_iter=self.p.max_iter, tol=self.p.tol,
                sample_size=self.p.sample_size,
                assignment=None if self.cluster is None else self.cluster.assignment,
                stop=self.stop, watch=watch,
            )
            if self.progress is not None:
                # the updates it took are all there was: the bar ends full, not at an
                # estimate of the max_iter updates a run that converged never made
                self.progress(stage, res.iterations, res.iterations)
            return res
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
            feats = F.river_feature_table(sp.scale, self.p.bins, stop=self.stop)
            present = np.flatnonzero(wv > 0)
            res = self._kmeans(stage, feats[present], plan.own_buckets, wv[present], self._seed(s), "E[HS] values")
            label_of_v: np.ndarray = self._nearest(stage, feats, res.centroids).astype(dtype)
            table: np.ndarray = np.empty(values.shape[0], dtype)
            for lo in range(0, values.shape[0], step):
                table[lo: lo + step] = label_of_v[values[lo: lo + step]]
        else:
            f = self._street_features(s)
            x = F.feature_vectors(f.counts, f.s1, f.s2, sp.scale, _METRICS[plan.kind], stop=self.stop)
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
            feats = F.river_feature_table(sp.scale, self.p.bins, stop=self.stop)
            label_of_v = nearest(feats, centroids, stop=self.stop).astype(dtype)
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
                x = F.feature_vectors(f.counts[lo:hi], f.s1[lo:hi], f.s2[lo:hi], sp.scale, _METRICS[plan.kind],
                                      stop=self.stop)
                table[lo:hi] = nearest(x, centroids, stop=self.stop)
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
            c = F.river_feature_table(self.space.scale, self.p.bins, stop=self.stop)[values]
        else:
            f = self._street_features(s)
            c = F.feature_vectors(f.counts, f.s1, f.s2, self.space.scale, _METRICS[self.p.metric], stop=self.stop)
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
        done = counter(parts)  # hands of the call under way, per part
        base = [0]  # hands of the calls before it

        def work() -> None:
            for lo in range(0, n, step):
                hi = min(n, lo + step)
                out = np.zeros((parts, n_prev, k_own), np.int64)
                _pair_weights(ix.tables, ix.num_rounds - 1, sp.hole, b, lo, np.ascontiguousarray(weights[lo:hi]),
                              np.ascontiguousarray(own_s[lo:hi]), chain, out, self.stop.flag, done)
                if self.stop:
                    return
                total[:] += out.sum(axis=0)
                done[:] = 0  # before base moves on: a reader may count short, never twice
                base[0] = hi

        compiling = self._cold(_pair_weights)

        def poll() -> None:
            hands = base[0] + int(done.sum())
            if hands == 0 and compiling:
                if self.phase is not None:
                    self.phase(stage, COMPILING)
            else:
                self._tell(stage, "pairs", hands, n)

        run_stoppable(work, self.stop, on_poll=poll)
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
        pair_map = self._nearest(stage, feat_all, res.centroids).reshape(n_prev, k_own).astype(np.int32)
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
    cluster: FeatureCluster | None = None,
    phase: PhaseFn | None = None,
) -> BuildReport:
    """Build (or finish building) the card abstraction of ``game`` into ``out_dir``.

    Stages already completed with the same inputs are reused. ``memory_limit_gib``
    (default: the machine's available memory) refuses a build predicted to need more.
    ``cluster``: run the feature stages and k-means's assignment steps on a Ray cluster
    (:class:`abstraction.cluster.FeatureCluster`; the same files, byte for byte).
    ``progress(stage, done, total)`` is called about every 0.1 s while a stage's kernels
    run (from this thread when it is the main one), ``phase(stage, text)`` when a stage
    waits on something it does not count (:data:`PhaseFn`).

    The kernels read a stop flag registered for signals (:mod:`poker._stop`): SIGINT or
    SIGTERM under :func:`poker._stop.signals_stop_kernels` (the command line), or Ctrl-C
    in the main thread, ends the build within about a second with
    :class:`poker._stop.Interrupted`; the stages finished stay recorded, the one under way
    leaves no file, and the same call later resumes at it.
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
    return _Builder(g, plan, out, progress, cluster=cluster, phase=phase).build()


def build_model_tables(
    ab: CardAbstraction,
    out_dir: str | os.PathLike[str],
    *,
    progress: ProgressFn | None = None,
    memory_limit_gib: float | None = None,
    phase: PhaseFn | None = None,
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

    ``progress(stage, done, total)``, ``phase`` and stopping as for
    :func:`build_abstraction`. ``memory_limit_gib``
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
    return _Builder(m.game, plan, out, progress, model=m, phase=phase).build()
