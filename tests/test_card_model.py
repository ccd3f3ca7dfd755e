"""The card abstraction's model (abstraction.model, abstraction.card_abstraction):
``model()``, ``model_hash``, ``from_model`` and table directories attached only when
built from the same model.

A model rebuilt from ``model()`` (also through msgpack, arrays as raw bytes) buckets every
hand as the directory it came from, with or without tables; its hash survives the round
trip and another process; tables of another model are ignored (and said so); a corrupted
model is refused with one line.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest

from abstraction.build import build_abstraction
from abstraction.card_abstraction import CardAbstraction
from abstraction.model import MODEL_FORMAT
from abstraction.plan import AbstractionParams
from poker.game import load_game

SHORT24 = "holdem.nolimit.2p.short24"
SHORT20 = "holdem.nolimit.2p.short20"
LEDUC = "leduc.limit.2p"
ROOT = Path(__file__).resolve().parents[1]

BUILDS = {
    "leduc": (LEDUC, (3, 3), False),
    "leduc_h": (LEDUC, (2, 3), True),
    "short20": (SHORT20, (10, 12, 12, 12), False),
    "short20_h": (SHORT20, (10, 12, 12, 12), True),
    "short24": (SHORT24, (36, 20, 20, 20), False),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CardAbstraction]:
    out = {}
    for key, (game, buckets, history) in BUILDS.items():
        d = tmp_path_factory.mktemp(key)
        out[key] = build_abstraction(game, AbstractionParams(buckets, history=history), d).abstraction
    return out


def _random_hands(ab: CardAbstraction, street: int, n: int, seed: int) -> np.ndarray:
    sp = ab.space
    k = sp.hole + sp.board_through[street]
    order = np.argsort(np.random.default_rng(seed).random((n, sp.deck_size)), axis=1)[:, :k]
    return sp.deck[order]


def _msgpack_round_trip(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> tuple[dict, dict]:
    raw = {k: {"dtype": a.dtype.str, "shape": list(a.shape), "data": a.tobytes()} for k, a in arrays.items()}
    doc = msgpack.unpackb(msgpack.packb({"model": meta, "arrays": raw}, use_bin_type=True), raw=False)
    back = {
        k: np.frombuffer(v["data"], dtype=np.dtype(v["dtype"])).reshape(v["shape"]) for k, v in doc["arrays"].items()
    }
    return doc["model"], back


@pytest.mark.parametrize("key", list(BUILDS))
def test_from_model_buckets_as_the_directory(built: dict[str, CardAbstraction], key: str) -> None:
    ab = built[key]
    meta, arrays = ab.model()
    bare = CardAbstraction.from_model(meta, arrays)
    cached = CardAbstraction.from_model(meta, arrays, tables=ab.directory)
    assert not bare.tables_used and bare.tables_note and bare.directory is None
    assert cached.tables_used and cached.tables_note == "" and cached.directory == ab.directory
    assert ab.model_hash == bare.model_hash == cached.model_hash
    assert cached.content_hash == ab.content_hash
    assert bare.bucket_counts == ab.bucket_counts and bare.history == ab.history
    for s in range(ab.num_streets):
        hands = _random_hands(ab, s, 4000, seed=100 + s)
        want = ab.lookup_batch(hands)
        np.testing.assert_array_equal(bare.bucket_batch(hands), want)
        np.testing.assert_array_equal(bare.lookup_batch(hands), want)  # falls back to the cards
        np.testing.assert_array_equal(cached.lookup_batch(hands), want)
        np.testing.assert_array_equal(cached.bucket_batch(hands), want)
        # one hand at a time (the player's path, own buckets remembered), twice
        for _ in range(2):
            for h, w in zip(hands[:12], want[:12]):
                hole, board = h[: ab.space.hole], h[ab.space.hole:]
                assert bare.bucket(hole, board) == bare.lookup(hole, board) == w
        np.testing.assert_array_equal(bare.bucket_batch(hands[:5], dedupe=False), want[:5])
    with pytest.raises(ValueError, match="no tables attached"):
        bare.table(0)
    with pytest.raises(ValueError, match="model hash"):
        bare.content_hash  # noqa: B018 - a model alone has no content hash


def test_model_is_plain_and_small(built: dict[str, CardAbstraction]) -> None:
    ab = built["short20_h"]
    meta, arrays = ab.model()
    assert json.loads(json.dumps(meta)) == meta  # JSON-able, nothing but plain values
    assert meta["format"] == MODEL_FORMAT and meta["params"] == ab.params.to_json()
    assert meta["game"] == {"name": ab.game.name, "definition": ab.game.to_text()}
    assert str(ab.directory) not in json.dumps(meta)  # nothing machine-specific
    assert all("files" not in st and "kmeans" not in st for st in meta["streets"])
    assert sorted(arrays) == ["centroids0", "centroids1", "centroids2", "centroids3", "pairs1", "pairs2", "pairs3"]
    assert arrays["centroids1"].dtype == np.dtype("<f4") and arrays["centroids1"].shape == (12, 31)
    assert arrays["pairs2"].dtype == np.uint8 and arrays["pairs2"].shape == (12, 12)
    np.testing.assert_array_equal(arrays["pairs2"], ab.pair_map(2))
    assert sum(a.nbytes for a in arrays.values()) < 10_000
    with pytest.raises(ValueError):
        arrays["centroids1"][0, 0] = 1.0  # read-only: the model cannot be changed under its hash
    meta["params"]["seed"] = 99  # a copy
    assert ab.model()[0]["params"]["seed"] == 0


@pytest.mark.parametrize("key", ["leduc_h", "short20", "short20_h"])
def test_hash_stable_under_msgpack_and_byte_order(built: dict[str, CardAbstraction], key: str) -> None:
    ab = built[key]
    meta, arrays = _msgpack_round_trip(*ab.model())
    again = CardAbstraction.from_model(meta, arrays)
    assert again.model_hash == ab.model_hash
    assert _msgpack_round_trip(*again.model())[0] == meta
    # big-endian or wider arrays are the same model
    swapped = {k: a.astype(a.dtype.newbyteorder(">")) for k, a in arrays.items()}
    swapped.update({k: a.astype(np.int64) for k, a in arrays.items() if k.startswith("pairs")})
    assert CardAbstraction.from_model(meta, swapped).model_hash == ab.model_hash
    # and a recorded model hash is checked
    assert CardAbstraction.from_model({**meta, "model_hash": ab.model_hash}, arrays).model_hash == ab.model_hash
    hands = _random_hands(ab, ab.space.last, 2000, seed=7)
    np.testing.assert_array_equal(again.bucket_batch(hands), ab.lookup_batch(hands))


def test_hash_same_in_another_process(built: dict[str, CardAbstraction]) -> None:
    ab = built["short20_h"]
    code = (
        "import sys; from abstraction.card_abstraction import CardAbstraction as C; "
        "print(C.load(sys.argv[1]).model_hash)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(ab.directory)], cwd=ROOT, capture_output=True,
                         text=True, check=True, env={"PYTHONHASHSEED": "12345", "PATH": ""})
    assert out.stdout.strip() == ab.model_hash


def test_hash_is_pinned() -> None:
    """The serialisation is part of the format: a fixed model has a fixed hash."""
    game = load_game(LEDUC)
    meta = {  # a hand-made Leduc model (nothing built), river by E[HS]
        "format": 1,
        "kind": "pokerbot card abstraction model",
        "game": {"name": game.name, "definition": game.to_text()},
        "params": AbstractionParams((3, 3)).to_json(),
        "scale": 8,
        "streets": [
            {"street": 0, "name": "preflop", "kind": "lossless", "grouping": [1], "table_grouping": [1],
             "canonical_hands": 3, "table_hands": 3, "buckets": 3, "own_buckets": 3},
            {"street": 1, "name": "flop", "kind": "ehs", "grouping": [1, 1], "table_grouping": [1, 1],
             "canonical_hands": 15, "table_hands": 15, "buckets": 3, "own_buckets": 3},
        ],
    }
    arrays = {"centroids1": np.array([[0.25], [0.5], [0.75]], np.float32)}
    ab = CardAbstraction.from_model(meta, arrays)
    assert ab.model()[0] == meta
    assert ab.model_hash == PINNED_LEDUC_HASH == _hash_by_hand(meta, arrays)
    assert [ab.bucket([c]) for c in ab.space.deck] == [0, 0, 1, 1, 2, 2]  # lossless: the rank
    np.testing.assert_array_equal(ab.lookup_batch(_random_hands(ab, 1, 500, 1)),
                                  ab.bucket_batch(_random_hands(ab, 1, 500, 1)))


PINNED_LEDUC_HASH = "sha256:983f4776d20be2b980c4d1d2067b256db993245775e9df623ca83e8935a8e59b"


def _hash_by_hand(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> str:
    """The documented serialisation: length-prefixed (8 bytes, little-endian) parts, the
    sorted-key compact JSON of the dict, then per array by name its JSON header
    ``[name, dtype, shape]`` and its little-endian C-order bytes."""
    h = hashlib.sha256()
    parts = [json.dumps(meta, sort_keys=True, separators=(",", ":")).encode()]
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name], arrays[name].dtype.newbyteorder("<"))
        parts += [json.dumps([name, a.dtype.str, list(a.shape)], separators=(",", ":")).encode(), a.tobytes()]
    for b in parts:
        h.update(len(b).to_bytes(8, "little") + b)
    return "sha256:" + h.hexdigest()


def test_tables_of_another_model_are_not_used(built: dict[str, CardAbstraction], tmp_path: Path) -> None:
    ab, other = built["short20"], built["short20_h"]
    meta, arrays = ab.model()
    mixed = CardAbstraction.from_model(meta, arrays, tables=other.directory)
    assert not mixed.tables_used and "model hash differs" in mixed.tables_note
    assert mixed.directory is None
    for s in range(ab.num_streets):
        hands = _random_hands(ab, s, 3000, seed=30 + s)
        np.testing.assert_array_equal(mixed.lookup_batch(hands), ab.lookup_batch(hands))
    # no directory there, or no finished build: ignored too
    for where in (tmp_path / "nothing", tmp_path):
        nothing = CardAbstraction.from_model(meta, arrays, tables=where)
        assert not nothing.tables_used and "meta.json" in nothing.tables_note
    # a directory whose centroids changed after its meta.json recorded the model hash
    bad = tmp_path / "tampered"
    shutil.copytree(ab.directory, bad)
    c = np.load(bad / "street1.centroids.npy")
    np.save(bad / "street1.centroids.npy", c[::-1].copy())
    tampered = CardAbstraction.from_model(meta, arrays, tables=bad)
    assert not tampered.tables_used and "do not match the model hash" in tampered.tables_note
    # attach later: True once the tables match; a failed attach changes nothing but the note
    late = CardAbstraction.from_model(meta, arrays)
    assert late.attach_tables(ab.directory, verify=True) and late.tables_used
    assert not late.attach_tables(other.directory) and late.tables_used and late.directory == ab.directory


def test_directory_built_before_model_hashes(built: dict[str, CardAbstraction], tmp_path: Path) -> None:
    ab = built["short20_h"]
    old = tmp_path / "old"
    shutil.copytree(ab.directory, old)
    meta = json.loads((old / "meta.json").read_text())
    assert meta["model_hash"] == ab.model_hash  # a new build records it
    del meta["model_hash"]
    (old / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    loaded = CardAbstraction.load(old, verify=True)
    assert loaded.model_hash == ab.model_hash and loaded.content_hash == ab.content_hash
    again = CardAbstraction.from_model(*ab.model(), tables=old)
    assert again.tables_used and again.directory == old
    # a recorded model hash that does not match the files fails verification
    meta["model_hash"] = "sha256:" + "0" * 64
    (old / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="model hash"):
        CardAbstraction.load(old, verify=True)


def _refused(meta: dict[str, Any], arrays: dict[str, np.ndarray], match: str) -> None:
    with pytest.raises(ValueError, match=match) as info:
        CardAbstraction.from_model(meta, arrays)
    assert len(str(info.value).splitlines()) == 1


def test_corrupted_model_is_refused(built: dict[str, CardAbstraction]) -> None:
    ab = built["short20_h"]
    meta, arrays = ab.model()
    _refused(meta, {**arrays, "centroids1": arrays["centroids1"][1:]}, "centroids1 has shape \\(11, 31\\)")
    _refused(meta, {k: v for k, v in arrays.items() if k != "pairs2"}, "array 'pairs2' is missing")
    _refused(meta, {**arrays, "extra": arrays["pairs1"]}, "unexpected array 'extra'")
    _refused(meta, {**arrays, "pairs3": arrays["pairs3"][:, :-1]}, "pairs3 has shape")
    _refused(meta, {**arrays, "pairs3": arrays["pairs3"] + 12}, "outside 0..11")
    _refused(meta, {**arrays, "centroids2": arrays["centroids2"].astype(np.int32)}, "not floats")
    nan = arrays["centroids3"].copy()
    nan[0] = np.nan
    _refused(meta, {**arrays, "centroids3": nan}, "not finite")
    _refused({**meta, "format": 99}, arrays, "model format 99")
    _refused({**meta, "kind": "something"}, arrays, "kind")
    _refused({**meta, "directory": "/tmp"}, arrays, "unknown field 'directory'")
    _refused({k: v for k, v in meta.items() if k != "scale"}, arrays, "'scale' is missing")
    _refused({**meta, "scale": 7}, arrays, "scale 7")
    _refused({**meta, "model_hash": "sha256:00"}, arrays, "not to its recorded sha256:00")
    # bucket counts that do not match the arrays: the parameters and the street figures
    more = json.loads(json.dumps(meta))
    more["params"]["buckets"] = [10, 13, 12, 12]
    _refused(more, arrays, "street 1 \\(flop\\) has buckets 12, but the game and parameters give 13")
    more["streets"][1]["buckets"] = more["streets"][1]["own_buckets"] = 13
    _refused(more, arrays, "centroids1 has shape \\(12, 31\\); street 1 \\(flop\\) has 13 own buckets")
    fewer = json.loads(json.dumps(meta))
    fewer["streets"][2]["table_hands"] = 5
    _refused(fewer, arrays, "table_hands 5")
    unknown = json.loads(json.dumps(meta))
    unknown["params"]["colour"] = "red"
    _refused(unknown, arrays, "unknown parameter 'colour'")
    bad_game = json.loads(json.dumps(meta))
    bad_game["game"]["definition"] = "GAMEDEF\nnonsense\nEND GAMEDEF\n"
    _refused(bad_game, arrays, "^model game: ")
    with pytest.raises(ValueError, match="not a mapping"):
        CardAbstraction.from_model(meta, list(arrays.values()))  # type: ignore[arg-type]


def test_new_build_records_model_hash(built: dict[str, CardAbstraction]) -> None:
    for ab in built.values():
        assert ab.directory is not None
        meta = json.loads((ab.directory / "meta.json").read_text())
        assert meta["model_hash"] == ab.model_hash == CardAbstraction.load(ab.directory, verify=True).model_hash
        assert meta["content_hash"] == ab.content_hash == ab.compute_hash()
    hashes = {ab.model_hash for ab in built.values()}
    assert len(hashes) == len(built)  # different models, different hashes
