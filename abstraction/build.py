"""Building a card abstraction: the staged build that writes a table directory.

:func:`build_abstraction` buckets a game's hands (the bucket families and their features
are described in :mod:`abstraction.card_abstraction`) in resumable stages: river E[HS];
features per street (E[HS] histograms by towers, from the river down); clustering per
street (:func:`abstraction.kmeans.kmeans`); history pair maps, whose weights count every
real deal through the earlier streets' buckets (:func:`_pair_weights`, one numba kernel
over the canonical hands and every ordering of their board, :func:`_chains`);
metadata. Each stage writes its files atomically and then records itself, with a hash of
everything it depends on, in ``cache/stages.json``; a rerun skips stages whose record
matches, so an interrupted build restarts at the stage it was in. Tables are ``.npy``
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
from itertools import combinations
from math import sqrt
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numba import njit, prange

from poker._atomic import atomic_write, atomic_write_bytes
from poker._sysinfo import available_memory_gib, peak_memory_gib
from poker.game import Game, load_game

from . import features as F
from .cluster import FeatureCluster
from .card_abstraction import CardAbstraction
from .indexer import index_hand_njit, unindex_hand_njit
from .kmeans import kmeans, nearest
from .model import FORMAT_VERSION, META_FILE, _load, _Model, _model_from_dir, _model_hash
from .plan import (
    _METRICS,
    _NEAREST_CHUNK,
    AbstractionParams,
    BuildPlan,
    _table_dtype,
    plan_build,
    plan_tables,
    street_names,
)

__all__ = [
    "CACHE_DIR",
    "BuildReport",
    "ProgressFn",
    "build_abstraction",
    "build_model_tables",
]

CACHE_DIR = "cache"
STAGES_FILE = "stages.json"

# Stage progress: ``progress(stage, done, total)``; the CLI draws one bar per stage.
ProgressFn = Callable[[str, float, float], None]


# ------------------------------------------------------------------ files


def _atomic_save_npy(path: Path, arr: np.ndarray) -> None:
    """Write ``arr`` as ``.npy`` atomically (temporary file, fsync, rename)."""
    data = np.ascontiguousarray(arr)
    atomic_write(path, lambda fh: np.save(fh, data, allow_pickle=False))


def _atomic_write_json(path: Path, obj: Any) -> None:
    atomic_write_bytes(path, (json.dumps(obj, indent=1, sort_keys=True) + "\n").encode())


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
                 model: _Model | None = None, cluster: FeatureCluster | None = None) -> None:
        self.game = game
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
        tick = self._tick("river E[HS]")
        if self.cluster is not None:
            rt = self.cluster.river_table(self.game, tick)
        else:
            rt = F.river_table(self.space, tick)
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
            f = F.tower_features(self.space, s, nxt, self.p.bins, tick)
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
                assignment=None if self.cluster is None else self.cluster.assignment,
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
    cluster: FeatureCluster | None = None,
) -> BuildReport:
    """Build (or finish building) the card abstraction of ``game`` into ``out_dir``.

    Stages already completed with the same inputs are reused. ``memory_limit_gib``
    (default: the machine's available memory) refuses a build predicted to need more.
    ``cluster``: run the feature stages and k-means's assignment steps on a Ray cluster
    (:class:`abstraction.cluster.FeatureCluster`; the same files, byte for byte).
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
    return _Builder(g, plan, out, progress, cluster=cluster).build()


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
