"""Bucket tables built from a model (abstraction.card_abstraction.build_model_tables).

Tables built from a build's model alone equal that build's files (same content hash);
attaching them works and lookups equal the buckets computed from the model; another
model's directory is refused; a stopped build resumes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from abstraction.card_abstraction import (
    AbstractionParams,
    CardAbstraction,
    build_abstraction,
    build_model_tables,
)

ROOT = Path(__file__).resolve().parents[1]
SHORT20 = "holdem.nolimit.2p.short20"
LEDUC = "leduc.limit.2p"

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
