"""Bucket tables built from a model (abstraction.build.build_model_tables) and
cached by model hash (abstraction.table_cache), and ``open_playable(tables="auto")``.

Tables built from a build's model alone equal that build's files (same content hash);
attaching them works and lookups equal the buckets computed from the model; another
model's directory is refused; a stopped build resumes. The cache builds once, finds its
tables again without building, ignores a partial or damaged directory, gives each model
its own directory and refuses a build the disk cannot hold.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import abstraction.table_cache as tc
from abstraction.build import build_abstraction, build_model_tables
from abstraction.card_abstraction import CardAbstraction
from abstraction.plan import AbstractionParams, plan_tables
from solver.play.player import TABLES_AUTO, TABLES_CACHED, open_playable
from solver.strategy_io import open_strategy

ROOT = Path(__file__).resolve().parents[1]
SHORT20 = "holdem.nolimit.2p.short20"
LEDUC = "leduc.limit.2p"
SHORT20_FILE = ROOT / "strategies" / "holdem.nolimit.2p.short20.strategy"
FULL_FILE = ROOT / "strategies" / "holdem.nolimit.2p.reverse_blinds.strategy"

BUILDS = {
    "short20": (SHORT20, (10, 30, 30, 30), False),  # every street clustered (preflop too)
    "short20_h": (SHORT20, (25, 30, 30, 30), True),  # lossless preflop, pair maps
    "leduc_h": (LEDUC, (2, 3), True),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CardAbstraction]:
    out = {}
    for key, (game, buckets, history) in BUILDS.items():
        d = tmp_path_factory.mktemp(key)
        out[key] = build_abstraction(game, AbstractionParams(buckets, history=history), d).abstraction
    return out


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv(tc.CACHE_ENV, str(root))
    return root


def _model_only(ab: CardAbstraction) -> CardAbstraction:
    return CardAbstraction.from_model(*ab.model())


def _random_hands(ab: CardAbstraction, street: int, n: int, seed: int) -> np.ndarray:
    sp = ab.space
    k = sp.hole + sp.board_through[street]
    order = np.argsort(np.random.default_rng(seed).random((n, sp.deck_size)), axis=1)[:, :k]
    return sp.deck[order]


def _other_model(ab: CardAbstraction) -> CardAbstraction:
    """The same abstraction with one centroid nudged: another model, another hash."""
    meta, arrays = ab.model()
    arrays = {k: np.array(v) for k, v in arrays.items()}
    name = sorted(k for k in arrays if k.startswith("centroids"))[-1]
    arrays[name][0, 0] += np.float32(1e-3)
    return CardAbstraction.from_model(meta, arrays)


@pytest.mark.parametrize("key", sorted(BUILDS))
def test_tables_from_the_model_equal_the_build(built: dict[str, CardAbstraction], key: str, tmp_path: Path) -> None:
    ab = built[key]
    alone = _model_only(ab)
    stages: set[str] = set()
    report = build_model_tables(alone, tmp_path / "t", progress=lambda stage, done, total: stages.add(stage))
    got = report.abstraction
    assert got.model_hash == ab.model_hash
    # the same files (tables, centroids, pair maps) as the k-means build, byte for byte
    assert got.content_hash == ab.content_hash == got.compute_hash()
    for s in range(ab.num_streets):
        assert got.table(s).dtype == ab.table(s).dtype
        np.testing.assert_array_equal(got.table(s), ab.table(s))
    assert "river E[HS]" in stages
    assert not any(k.endswith("kmeans") for st in got.meta["streets"] for k in st)
    assert got.meta["build"]["tables_from_model"] is True
    # attached to the model alone, lookups read them and agree with the model
    assert alone.attach_tables(tmp_path / "t") and alone.tables_used
    fresh = _model_only(ab)
    for s in range(ab.num_streets):
        hands = _random_hands(ab, s, 5_000, seed=s)
        np.testing.assert_array_equal(alone.lookup_batch(hands), fresh.bucket_batch(hands))
        np.testing.assert_array_equal(alone.own_buckets(hands, s), got.table(s)[ab.indexer(s).index_batch(hands)])


def test_directory_of_another_model_is_refused(built: dict[str, CardAbstraction], tmp_path: Path) -> None:
    ab = built["short20"]
    other = _other_model(ab)
    assert other.model_hash != ab.model_hash
    build_model_tables(other, tmp_path / "other")
    alone = _model_only(ab)
    assert not alone.attach_tables(tmp_path / "other")
    assert "model hash differs" in alone.tables_note and not alone.tables_used
    # the directory now rebuilt for this model is accepted: the old metadata is dropped
    build_model_tables(alone, tmp_path / "other")
    assert alone.attach_tables(tmp_path / "other")


def test_stopped_build_resumes(built: dict[str, CardAbstraction], tmp_path: Path) -> None:
    alone = _model_only(built["short20_h"])

    def stop(stage: str, done: float, total: float) -> None:
        if stage == "turn buckets":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_model_tables(alone, tmp_path / "t", progress=stop)
    assert not (tmp_path / "t" / "meta.json").exists()
    report = build_model_tables(alone, tmp_path / "t")
    reused = {st["stage"] for st in report.stages if st["reused"]}
    assert {"river E[HS]", "turn features", "river buckets"} <= reused and "turn buckets" not in reused
    assert report.abstraction.content_hash == built["short20_h"].content_hash


def test_cache_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(tc.CACHE_ENV, str(tmp_path / "a"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert tc.cache_root() == tmp_path / "a"
    monkeypatch.delenv(tc.CACHE_ENV)
    assert tc.cache_root() == tmp_path / "x" / "pokerbot"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert tc.cache_root() == tmp_path / "home" / ".cache" / "pokerbot"


def test_cache_builds_once_then_finds(built: dict[str, CardAbstraction], cache: Path) -> None:
    ab = _model_only(built["short20"])
    assert tc.cached_tables(ab, build=False) is None
    assert not tc.attach_cached_tables(ab, build=False) and "no cached tables" in ab.tables_note
    calls: list[str] = []
    d = tc.cached_tables(ab, build=True, progress=lambda stage, done, total: calls.append(stage))
    assert d == tc.tables_dir(ab) == cache / "tables" / ab.model_hash.split(":")[1]
    assert calls and not ab.tables_used  # cached_tables leaves the abstraction as it was
    assert not (d / "cache").exists() and not d.with_name(d.name + ".partial").exists()
    assert json.loads((d / "meta.json").read_text())["model_hash"] == ab.model_hash
    calls.clear()
    assert tc.cached_tables(ab, build=True, progress=lambda stage, done, total: calls.append(stage)) == d
    assert calls == []  # found, not built
    again = _model_only(built["short20"])
    assert tc.attach_cached_tables(again, build=False) and again.directory == d
    # another model gets its own directory
    other = _other_model(ab)
    assert tc.cached_tables(other, build=False) is None
    d2 = tc.cached_tables(other, build=True)
    assert d2 is not None and d2 != d and d2.parent == d.parent
    assert tc.cached_tables(ab, build=False) == d


def test_partial_or_damaged_directory_is_not_used(built: dict[str, CardAbstraction], cache: Path) -> None:
    ab = _model_only(built["short20_h"])
    final = tc.tables_dir(ab)
    partial = final.with_name(final.name + ".partial")

    def stop(stage: str, done: float, total: float) -> None:
        if stage == "flop buckets":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tc.cached_tables(ab, build=True, progress=stop)
    assert partial.is_dir() and not final.exists()
    assert tc.cached_tables(ab, build=False) is None  # a stopped build is not used
    # a partial directory renamed by hand is not complete either
    partial.rename(final)
    assert tc.cached_tables(ab, build=False) is None
    final.rename(partial)
    calls: list[str] = []
    d = tc.cached_tables(ab, build=True, progress=lambda stage, done, total: calls.append(stage))
    assert d == final and not partial.exists()
    assert "river E[HS]" not in calls and "flop buckets" in calls  # resumed where it stopped
    # damaged: a truncated table, then metadata that is not JSON
    table = final / "street3.table.npy"
    data = table.read_bytes()
    table.write_bytes(data[: len(data) // 2])
    assert tc.cached_tables(ab, build=False) is None
    assert tc.cached_tables(ab, build=True) == final  # rebuilt
    assert table.read_bytes() == data
    (final / "meta.json").write_text("{not json")
    assert tc.cached_tables(ab, build=False) is None
    # tables of another model under this model's name are refused too
    build_model_tables(_other_model(ab), cache / "elsewhere")
    shutil.rmtree(final)
    shutil.copytree(cache / "elsewhere", final)
    assert tc.cached_tables(ab, build=False) is None
    # content damage with the right shape is found with verify
    assert tc.cached_tables(ab, build=True) == final
    t = np.load(final / "street2.table.npy")
    t[0] = (int(t[0]) + 1) % 30
    np.save(final / "street2.table.npy", t)
    assert tc.cached_tables(ab, build=False) == final
    assert tc.cached_tables(ab, build=False, verify=True) is None


def test_disk_space_is_checked_first(built: dict[str, CardAbstraction], cache: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    ab = _model_only(built["short20"])
    plan = plan_tables(ab)
    assert plan.disk_bytes > plan.final_bytes > 0
    monkeypatch.setattr(tc.shutil, "disk_usage", lambda path: _Usage(1000))
    with pytest.raises(ValueError, match=r"needs about .* GB free under .*; free some space or set POKERBOT_CACHE"):
        tc.cached_tables(ab, build=True)
    assert not tc.tables_dir(ab).with_name(tc.tables_dir(ab).name + ".partial").exists()


class _Usage:
    def __init__(self, free: int) -> None:
        self.total = self.used = 0
        self.free = free


def test_needs_tables(built: dict[str, CardAbstraction]) -> None:
    assert not tc.needs_tables(built["short20"]) and not tc.needs_tables(built["leduc_h"])
    full = open_strategy(FULL_FILE).abstraction
    assert full is not None and tc.needs_tables(full)
    plan = plan_tables(full)
    assert 2e8 < plan.final_bytes < 4e8 and plan.disk_bytes > plan.final_bytes


def test_open_strategy_tables_modes(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = open_strategy(SHORT20_FILE)
    assert plain.abstraction is not None and not plain.abstraction.tables_used
    # a model that needs no tables: "auto" computes from the model, builds nothing
    auto = open_playable(SHORT20_FILE, tables=TABLES_AUTO)
    assert auto.abstraction is not None and not auto.abstraction.tables_used
    assert not (cache / "tables").exists() or not any((cache / "tables").iterdir())
    assert not open_playable(SHORT20_FILE, tables=TABLES_CACHED).abstraction.tables_used
    # as if it needed them: "auto" builds (with progress), then anyone finds them
    monkeypatch.setattr(tc, "COMPUTE_MAX_HANDS", 0)
    stages: list[str] = []
    built = open_playable(SHORT20_FILE, tables=TABLES_AUTO, progress=lambda s, d, t: stages.append(s))
    ab = built.abstraction
    assert ab is not None and ab.tables_used and ab.directory == tc.tables_dir(ab) and stages
    cached = open_playable(SHORT20_FILE, tables=TABLES_CACHED).abstraction
    assert cached is not None and cached.tables_used and cached.directory == ab.directory
    # the file's recorded build is the one the tables reproduce
    assert cached.content_hash == built.cards["content_hash"]
    hands = _random_hands(ab, 3, 5_000, seed=7)
    np.testing.assert_array_equal(cached.lookup_batch(hands), plain.abstraction.bucket_batch(hands))
    # a directory is still a directory (a Path named "auto" too)
    by_dir = open_playable(SHORT20_FILE, tables=ab.directory).abstraction
    assert by_dir is not None and by_dir.tables_used
    assert not open_playable(SHORT20_FILE, tables=Path(TABLES_AUTO)).abstraction.tables_used
