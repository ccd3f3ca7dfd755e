"""Strategy files (solver.strategy_io): quantization, round trips, refusals, old versions,
the card model inside the file, and the command line's refusal of a bad file.

Format 3 is a 56-byte preamble (magic, version, flags, header length, sha256 of everything
after the preamble), a msgpack header and 64-byte aligned raw arrays mapped on open. Every
refusal is a :class:`StrategyFileError` of one line naming the file and the reason.
"""

from __future__ import annotations

import copy
import hashlib
import math
import mmap
import os
import re
import shutil
import struct
from pathlib import Path
from typing import Any, Callable

import msgpack
import numpy as np
import pytest

from abstraction.build import build_abstraction
from abstraction.card_abstraction import CardAbstraction
from abstraction.plan import AbstractionParams
from agent.cli import main
from poker.game import load_game
from solver.training.algorithms import solve
from solver.evaluation.best_response import abstract_and_real_exploitability
from solver.training.cfr import CFRPlusSolver
from solver.play.player import bucket_fn, open_playable
from solver.problem import Problem, make_problem
from solver.strategy import Strategy
from solver.arrayfile import ALIGN
from solver.strategy_io import (
    MAGIC,
    MAX_ARRAYS,
    MAX_FILE_BYTES,
    MAX_HEADER_BYTES,
    StrategyFile,
    StrategyFileError,
    dequantize,
    dumps,
    dumps_policy,
    load_strategy,
    loads,
    loads_file,
    open_strategy,
    quantize,
    save_policy,
    save_strategy,
)

LEDUC = "leduc.limit.2p"
LEDUC_NL = "leduc.nolimit.2p"
NL_BETTING = "1p,a"
DATA = Path(__file__).parent / "data" / "strategies"
V1_FILE = DATA / "kuhn.cfr+.v1.strategy"
V2_FILE = DATA / "leduc.nolimit.1p-a.cfr+.v2.strategy"
PREAMBLE = struct.Struct("<8sIIQ32s")  # magic, version, flags, header length, sha256
TRAINING = {"seconds": 1.25, "seed": 7, "recipe": "tests/test_strategy_file.py"}
EVALUATION = {"exploitability": 0.125, "mbb_per_game": 125.0, "note": "measured on the stored policy"}


# ------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CardAbstraction]:
    """Leduc card abstractions (each builds in well under a second): the one strategies
    are trained over, and two other builds (another seed, other bucket counts)."""
    specs = {
        "a": AbstractionParams((3, 3)),
        "seed1": AbstractionParams((3, 3), seed=1),
        "b23": AbstractionParams((2, 3)),
    }
    out = {}
    for name, params in specs.items():
        out[name] = build_abstraction(LEDUC, params, tmp_path_factory.mktemp(f"ab_{name}")).abstraction
    assert len({ab.model_hash for ab in out.values()}) == 3  # three different models
    return out


@pytest.fixture(scope="module")
def strategies(builds: dict[str, CardAbstraction]) -> dict[str, Strategy]:
    """Trained strategies: Leduc limit and no-limit (lossless), and Leduc over a card abstraction."""
    card = CFRPlusSolver(make_problem(LEDUC, abstraction=builds["a"]))
    card.iterate(40)
    return {
        "limit": solve(LEDUC, "cfr+", iterations=30),
        "nolimit": solve(LEDUC_NL, "cfr+", iterations=20, betting=NL_BETTING),
        "card": card.average_strategy(),
    }


@pytest.fixture(scope="module")
def kuhn_bytes() -> bytes:
    return dumps(solve("kuhn.limit.2p", "cfr+", iterations=5))


@pytest.fixture
def limit_file(strategies: dict[str, Strategy], tmp_path: Path) -> Path:
    path = tmp_path / "leduc.limit.strategy"
    save_strategy(path, strategies["limit"])
    return path


# ------------------------------------------------------------------ helpers


def _preamble(data: bytes) -> tuple[bytes, int, int, int, bytes]:
    return PREAMBLE.unpack_from(data, 0)


def _header(data: bytes) -> dict[str, Any]:
    head_len = _preamble(data)[3]
    return msgpack.unpackb(data[PREAMBLE.size : PREAMBLE.size + head_len], raw=False)


def _with_preamble(data: bytes, **changes: Any) -> bytes:
    """``data`` with preamble fields replaced (the checksum does not cover the preamble)."""
    fields = dict(zip(("magic", "version", "flags", "head_len", "digest"), _preamble(data)))
    fields.update(changes)
    return PREAMBLE.pack(*fields.values()) + data[PREAMBLE.size :]


def _rewrite(data: bytes, mutate: Callable[[dict[str, Any]], None]) -> bytes:
    """``data`` with its header changed by ``mutate`` and a valid checksum: the arrays move
    by a multiple of 64 bytes if the new header needs the room (offsets and ``end`` are
    shifted before ``mutate`` sees them), so only the check aimed at can refuse the file."""
    doc = _header(data)
    first = min(a["offset"] for a in doc["arrays"].values())
    body = data[first:]
    shift = 0
    while True:
        new = copy.deepcopy(doc)
        for a in new["arrays"].values():
            a["offset"] += shift
        new["end"] += shift
        mutate(new)
        head = msgpack.packb(new, use_bin_type=True)
        if PREAMBLE.size + len(head) <= first + shift:
            break
        shift += ALIGN
    rest = head + bytes(first + shift - PREAMBLE.size - len(head)) + body
    return PREAMBLE.pack(MAGIC, 3, 0, len(head), hashlib.sha256(rest).digest()) + rest


def _refusal(call: Callable[[], Any], source: str | Path, reason: str, sep: str = ": ") -> str:
    """Assert ``call`` raises StrategyFileError with one line: ``source: ...reason...``
    (``source ...reason...`` with ``sep=" "``, as the card record checks word theirs)."""
    with pytest.raises(StrategyFileError) as exc:
        call()
    msg = str(exc.value)
    assert "\n" not in msg, msg
    assert msg.startswith(f"{source}{sep}"), msg
    assert re.search(reason, msg), (reason, msg)
    return msg


def _rows(problem: Problem) -> list[tuple[int, int]]:
    """(first entry, number of actions) of every information set's row."""
    tree = problem.tree
    out = []
    for n in tree.decision_nodes():
        k = int(tree.n_child[n])
        for b in range(int(problem.chance.n_buckets[tree.street[n]])):
            out.append((problem.entry(int(n), b, 0), k))
    return out


def _reference_row(values: list[float]) -> list[int]:
    """Largest-remainder rounding in plain Python: negative entries count as zero, a row
    with no mass is uniform; floor each share of 255, then the units left go one each to
    the largest remainders, ties to the lower action index."""
    k = len(values)
    pos = [v if v > 0.0 else 0.0 for v in values]
    total = 0.0
    for v in pos:
        total += v
    shares = [v / total for v in pos] if total > 0.0 else [1.0 / k] * k
    x = [p * 255.0 for p in shares]
    floors = [math.floor(t) for t in x]
    rem = [t - f for t, f in zip(x, floors)]
    left = 255 - sum(floors)
    assert 0 <= left <= k
    for a in sorted(range(k), key=lambda a: (-rem[a], a))[:left]:
        floors[a] += 1
    return floors


def _normalized(policy: np.ndarray, rows: list[tuple[int, int]]) -> np.ndarray:
    out = np.empty_like(policy, dtype=np.float64)
    for o, k in rows:
        r = np.maximum(policy[o : o + k], 0.0)
        out[o : o + k] = r / r.sum() if r.sum() > 0 else 1.0 / k
    return out


def _quantize(s: Strategy) -> np.ndarray:
    p = s.problem
    return quantize(s.policy, p.tree, p.offset, list(p.chance.n_buckets))


def _random_policy(problem: Problem, rng: np.random.Generator) -> np.ndarray:
    """Random rows, some with no mass, some with negative entries, one action or equal entries."""
    pol = rng.random(problem.size)
    for o, k in _rows(problem):
        kind = rng.integers(6)
        if kind == 0:
            pol[o : o + k] = 0.0
        elif kind == 1:
            pol[o : o + k] -= 0.5
        elif kind == 2:
            pol[o : o + k] = 0.0
            pol[o + rng.integers(k)] = rng.random() + 1e-3
        elif kind == 3:
            pol[o : o + k] = rng.integers(0, 3, k).astype(float)
    return pol


def _problem(name: str) -> Problem:
    return make_problem(LEDUC) if name == "limit" else make_problem(LEDUC_NL, NL_BETTING)


def _leduc_pairs(ab: CardAbstraction) -> list[tuple[int, tuple[int, ...], tuple[int, ...]]]:
    """Every Leduc (street, hole, board): 6 holes preflop, 30 (hole, board) pairs on the flop."""
    deck = [int(c) for c in ab.space.deck]
    assert len(deck) == 6
    return [(0, (h,), ()) for h in deck] + [(1, (h,), (b,)) for h in deck for b in deck if b != h]


def _mapped(a: np.ndarray) -> bool:
    """True if ``a``'s memory belongs to an mmap (following the chain of bases)."""
    base: Any = a
    while base is not None:
        if isinstance(base, mmap.mmap):
            return True
        base = base.obj if isinstance(base, memoryview) else getattr(base, "base", None)
    return False


# ------------------------------------------------------------------ 1. quantization


@pytest.mark.parametrize("game", ["limit", "nolimit"])
def test_quantized_rows_sum_to_255_and_match_the_reference(game: str) -> None:
    problem = _problem(game)
    rows = _rows(problem)
    assert sum(k for _, k in rows) == problem.size  # the rows cover the table once
    rng = np.random.default_rng(11 if game == "limit" else 12)
    for _ in range(2):
        pol = _random_policy(problem, rng)
        q = quantize(pol, problem.tree, problem.offset, list(problem.chance.n_buckets))
        assert q.dtype == np.uint8 and q.shape == (problem.size,)
        assert int(q.astype(np.int64).sum()) == 255 * len(rows)
        p = _normalized(pol, rows)
        for o, k in rows:
            row = [int(v) for v in q[o : o + k]]
            assert sum(row) == 255, (o, row)
            assert row == _reference_row([float(v) for v in pol[o : o + k]]), (o, pol[o : o + k], row)
            if not (pol[o : o + k] > 0).any():  # no mass: uniform
                assert max(row) - min(row) <= 1
        # within one unit of the float policy, per entry
        assert np.all(np.abs(dequantize(q) - p) < 1 / 255)


def test_quantization_ties_go_to_the_lower_action() -> None:
    """Rows with equal remainders, against literal answers (and the reference)."""
    problem = _problem("nolimit")
    rows = _rows(problem)
    cases = {
        2: [([1.0, 1.0], [128, 127]), ([0.0, 0.0], [128, 127]), ([3.0, 1.0], [191, 64]),
            ([0.0, -1.0], [128, 127]), ([0.0, 5.0], [0, 255])],
        3: [([1.0, 1.0, 0.0], [128, 127, 0]), ([0.0, 1.0, 1.0], [0, 128, 127]),
            ([1.0, 0.0, 1.0], [128, 0, 127]), ([2.0, 1.0, 1.0], [127, 64, 64]),
            ([0.0, 0.0, 0.0], [85, 85, 85]), ([1.0, 1.0, 1.0], [85, 85, 85])],
        4: [([0.0, 0.0, 0.0, 0.0], [64, 64, 64, 63]), ([1.0, 1.0, 1.0, 1.0], [64, 64, 64, 63]),
            ([0.0, 1.0, 1.0, 2.0], [0, 64, 64, 127]), ([1.0, 1.0, 1.0, 0.0], [85, 85, 85, 0])],
    }
    pol = np.full(problem.size, 0.25)
    want: dict[int, list[int]] = {}
    by_k: dict[int, list[int]] = {}
    for o, k in rows:
        by_k.setdefault(k, []).append(o)
    for k, items in cases.items():
        assert len(by_k.get(k, [])) >= len(items), f"no rows of {k} actions in {LEDUC_NL} {NL_BETTING}"
        for o, (values, expected) in zip(by_k[k], items):
            assert _reference_row(values) == expected
            pol[o : o + k] = values
            want[o] = expected
    q = quantize(pol, problem.tree, problem.offset, list(problem.chance.n_buckets))
    for o, expected in want.items():
        assert [int(v) for v in q[o : o + len(expected)]] == expected


@pytest.mark.parametrize("name", ["limit", "nolimit", "card"])
def test_trained_policy_quantized_within_one_unit(strategies: dict[str, Strategy], name: str) -> None:
    s = strategies[name]
    rows = _rows(s.problem)
    q = _quantize(s)
    sums = np.add.reduceat(q.astype(np.int64), [o for o, _ in sorted(rows)])
    assert np.all(sums == 255)
    assert np.all(np.abs(dequantize(q) - _normalized(s.policy, rows)) < 1 / 255)
    for o, k in rows[::7]:
        assert [int(v) for v in q[o : o + k]] == _reference_row([float(v) for v in s.policy[o : o + k]])


# ------------------------------------------------------------------ 2. round trips


@pytest.mark.parametrize("precision", ["u8", "f32"])
@pytest.mark.parametrize("name", ["limit", "nolimit", "card"])
def test_round_trip(strategies: dict[str, Strategy], builds, tmp_path: Path, name: str, precision: str) -> None:
    s = strategies[name]
    path = tmp_path / f"{name}.strategy"
    save_strategy(path, s, precision, training=TRAINING, evaluation=EVALUATION)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left
    data = path.read_bytes()
    sf = open_strategy(path)
    assert isinstance(sf, StrategyFile)
    assert (sf.version, sf.precision, sf.source, sf.file_bytes) == (3, precision, str(path), len(data))
    assert sf.game.to_text() == s.game.to_text() and sf.game.name == s.game.name
    assert sf.betting == s.problem.tree.betting_spec == (NL_BETTING if name == "nolimit" else "")
    assert sf.training == {"algorithm": "cfr+", "iterations": s.iterations, **TRAINING}
    assert sf.evaluation == EVALUATION
    assert sf.bucket_counts == [int(b) for b in s.problem.chance.n_buckets]
    assert sf.tree.n_nodes == s.problem.tree.n_nodes
    np.testing.assert_array_equal(sf.offset, s.problem.offset)

    # the policy, exactly as stored
    if precision == "u8":
        assert sf.table.dtype == np.uint8
        np.testing.assert_array_equal(sf.table, _quantize(s))
        assert np.all(np.abs(sf.policy() - s.policy) < 1 / 255)
    else:
        assert sf.table.dtype == np.dtype("<f4")
        np.testing.assert_array_equal(sf.table, s.policy.astype(np.float32))
    back = sf.to_strategy()
    assert (back.iterations, back.algorithm, back.problem.size) == (s.iterations, "cfr+", s.problem.size)
    np.testing.assert_array_equal(back.policy, dequantize(np.asarray(sf.table)))
    assert load_strategy(path).policy.tolist() == back.policy.tolist()
    assert loads(data).policy.tolist() == back.policy.tolist()

    # the cards
    if name == "card":
        ab = builds["a"]
        assert sf.cards["abstraction"] == "card" and sf.cards["model_hash"] == ab.model_hash
        assert sf.cards["content_hash"] == ab.content_hash and sf.cards["buckets"] == [3, 3]
        assert sf.abstraction is not None and sf.abstraction.model_hash == ab.model_hash
        assert back.problem.abstraction is sf.abstraction
    else:
        assert sf.cards["abstraction"] == "lossless" and sf.abstraction is None

    # the layout: aligned arrays inside the file, the file as long as the header says
    magic, version, flags, head_len, digest = _preamble(data)
    assert (magic, version, flags) == (MAGIC, 3, 0)
    assert digest == hashlib.sha256(data[PREAMBLE.size :]).digest()
    head = _header(data)
    assert head == sf.header and head["end"] == len(data) == os.path.getsize(path)
    want_arrays = {"policy"}
    if name == "card":
        want_arrays |= {f"model.{k}" for k in builds["a"].model()[1]}
    assert set(head["arrays"]) == want_arrays
    spans = []
    for a in head["arrays"].values():
        assert a["offset"] % ALIGN == 0 and a["offset"] >= PREAMBLE.size + head_len
        assert a["offset"] + a["nbytes"] <= head["end"]
        spans.append((a["offset"], a["offset"] + a["nbytes"]))
    spans.sort()
    assert all(e <= b for (_, e), (b, _) in zip(spans, spans[1:]))  # no overlap
    pol = head["arrays"]["policy"]
    assert pol["nbytes"] == s.problem.size * (1 if precision == "u8" else 4)
    assert data[pol["offset"] : pol["offset"] + pol["nbytes"]] == np.asarray(sf.table).tobytes()

    # mapped, not copied: read-only memory of an mmap that follows the file
    assert not sf.table.flags.writeable and _mapped(sf.table)
    with pytest.raises(ValueError):
        sf.table[0] = 1
    first = bytes(np.asarray(sf.table[:1]).tobytes())
    other = bytes(b ^ 0xFF for b in first)
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, other, pol["offset"])
    finally:
        os.close(fd)
    assert np.asarray(sf.table[:1]).tobytes() == other  # the file's change shows through the map


@pytest.mark.parametrize("name", ["nolimit", "card"])
@pytest.mark.parametrize("precision", ["u8", "f32"])
def test_dumps_policy_writes_the_same_file(strategies, builds, tmp_path: Path, name: str, precision: str) -> None:
    """A file from the policy table alone (no chance layer) is the file of the strategy."""
    s = strategies[name]
    ab = builds["a"] if name == "card" else None
    betting = s.problem.tree.betting_spec or None
    training = {"algorithm": s.algorithm, "iterations": s.iterations}
    want = dumps(s, precision)
    assert dumps_policy(s.game, betting, s.policy, abstraction=ab, precision=precision, training=training) == want
    if precision == "u8":  # already quantized rows pass through
        assert dumps_policy(s.game, betting, _quantize(s), abstraction=ab, training=training) == want
    path = tmp_path / "p.strategy"
    save_policy(path, s.game, betting, s.policy, abstraction=ab, precision=precision, training=training)
    assert path.read_bytes() == want
    with pytest.raises(ValueError, match="shape"):
        dumps_policy(s.game, betting, s.policy[:-1], abstraction=ab)


# ------------------------------------------------------------------ 3. refusals


def test_truncated_files_are_refused(limit_file: Path, tmp_path: Path) -> None:
    data = limit_file.read_bytes()
    head_len = _preamble(data)[3]
    pol = _header(data)["arrays"]["policy"]
    cuts = {
        0: r"not a strategy file",
        5: r"not a strategy file",  # inside the magic: not recognisable as format 3
        8: r"truncated: 8 bytes, less than the 56-byte preamble",
        30: r"truncated: 30 bytes, less than the 56-byte preamble",
        PREAMBLE.size - 1: r"truncated: 55 bytes, less than the 56-byte preamble",
        PREAMBLE.size: rf"header length {head_len} does not fit the file \(56 bytes\)",
        PREAMBLE.size + head_len // 2: rf"header length {head_len} does not fit the file",
        PREAMBLE.size + head_len: rf"truncated: {PREAMBLE.size + head_len} bytes, the header declares {len(data)}",
        pol["offset"] + pol["nbytes"] // 2: rf"truncated: {pol['offset'] + pol['nbytes'] // 2} bytes, the header "
                                            rf"declares {len(data)}",
        len(data) - 1: rf"truncated: {len(data) - 1} bytes, the header declares {len(data)}",
    }
    for cut, reason in cuts.items():
        bad = tmp_path / f"cut{cut}.strategy"
        bad.write_bytes(data[:cut])
        _refusal(lambda: open_strategy(bad), bad, reason)
        _refusal(lambda: loads_file(data[:cut], "mem"), "mem", reason)


@pytest.mark.parametrize("extra", [b"\0", b"x" * 64, bytes(4096)], ids=["1-byte", "64-bytes", "4096-zeros"])
def test_appended_bytes_are_refused(limit_file: Path, extra: bytes) -> None:
    data = limit_file.read_bytes()
    limit_file.write_bytes(data + extra)
    _refusal(lambda: open_strategy(limit_file), limit_file, rf"{len(extra)} bytes after the declared end {len(data)}")


def test_every_bit_flipped_is_refused(kuhn_bytes: bytes) -> None:
    """A small Kuhn file: flipping any one bit of any byte never loads."""
    assert loads_file(kuhn_bytes, "<flip>").version == 3  # the intact file loads
    assert len(kuhn_bytes) <= 1024
    loaded, other = [], []
    buf = bytearray(kuhn_bytes)
    for pos in range(len(buf)):
        for bit in range(8):
            buf[pos] ^= 1 << bit
            try:
                loads_file(bytes(buf), "<flip>")
                loaded.append((pos, bit))
            except StrategyFileError as exc:
                msg = str(exc)
                if "\n" in msg or not msg.startswith("<flip>: "):
                    other.append((pos, bit, msg))
            except Exception as exc:  # noqa: BLE001 - anything but a StrategyFileError is a failure
                other.append((pos, bit, repr(exc)))
            buf[pos] ^= 1 << bit
    assert not loaded, f"{len(loaded)} flipped bits loaded, first {loaded[:5]}"
    assert not other, other[:5]


def test_sampled_bit_flips_of_a_card_file_are_refused(strategies: dict[str, Strategy]) -> None:
    """2,000 seeded bit positions of a card abstraction file (model arrays inside)."""
    data = dumps(strategies["card"])
    rng = np.random.default_rng(2024)
    positions = rng.choice(len(data) * 8, size=2000, replace=False)
    buf = bytearray(data)
    for bitpos in positions:
        pos, bit = divmod(int(bitpos), 8)
        buf[pos] ^= 1 << bit
        with pytest.raises(StrategyFileError):
            loads_file(bytes(buf), "<flip>")
        buf[pos] ^= 1 << bit
    assert bytes(buf) == data and loads_file(data).abstraction is not None


@pytest.mark.parametrize(
    "change,reason",
    [
        ({"magic": b"PKBSTRAX"}, r"not a strategy file"),
        ({"magic": b"\x93PKBSTRA"}, r"not a strategy file"),
        ({"version": 4}, r"format version 4 is not supported \(written by a newer pokerbot\); "
                         r"this reader knows 1, 2, 3"),
        ({"version": 0}, r"format version 0 is not supported; this reader knows"),
        ({"version": 2}, r"format version 2 is not supported"),  # old versions have no preamble
        ({"flags": 1}, r"unknown flags 0x1$"),
        ({"flags": 0x80000000}, r"unknown flags 0x80000000"),
        ({"head_len": 1 << 20}, rf"header length {1 << 20} does not fit the file"),
        ({"head_len": MAX_HEADER_BYTES + 1}, rf"header length {MAX_HEADER_BYTES + 1} does not fit"),
        ({"head_len": 2**64 - 1}, r"header length \d+ does not fit the file"),
        ({"digest": bytes(32)}, r"checksum mismatch"),
    ],
    ids=["magic", "magic-msgpack", "version4", "version0", "version2", "flags1", "flags-high",
         "head-len-1MiB", "head-len-cap", "head-len-max", "digest"],
)
def test_bad_preambles_are_refused(limit_file: Path, change: dict[str, Any], reason: str) -> None:
    data = limit_file.read_bytes()
    limit_file.write_bytes(_with_preamble(data, **change))
    _refusal(lambda: open_strategy(limit_file), limit_file, reason)


def test_header_rewrite_without_change_loads(limit_file: Path, strategies: dict[str, Strategy]) -> None:
    """The control for the header refusals: a rewritten header with nothing changed, and
    one that moves the arrays, load the same policy."""
    data = limit_file.read_bytes()
    want = _quantize(strategies["limit"])
    same = _rewrite(data, lambda h: None)
    assert same == data
    moved = _rewrite(data, lambda h: h["training"].update(padding="x" * 300))
    assert len(moved) > len(data)
    for d in (same, moved):
        sf = loads_file(d, "rewritten")
        np.testing.assert_array_equal(sf.table, want)
    # exactly the cap of arrays is accepted (extra names viewing the policy's bytes)

    def arrays_at_cap(h: dict[str, Any]) -> None:
        for i in range(MAX_ARRAYS - 1):
            h["arrays"][f"extra{i}"] = dict(h["arrays"]["policy"])

    np.testing.assert_array_equal(loads_file(_rewrite(data, arrays_at_cap), "cap").table, want)


def _set_array(name: str, **fields: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(h: dict[str, Any]) -> None:
        a = h["arrays"][name]
        for k, v in fields.items():
            a[k] = v(a, h) if callable(v) else v

    return mutate


def _set(key: str, value: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], None]:
    def mutate(h: dict[str, Any]) -> None:
        h[key] = value(h)

    return mutate


def _many_arrays(h: dict[str, Any]) -> None:
    for i in range(MAX_ARRAYS):
        h["arrays"][f"extra{i}"] = dict(h["arrays"]["policy"])


@pytest.mark.parametrize(
    "mutate,reason",
    [
        # an array beyond the file
        (_set_array("policy", offset=lambda a, h: h["end"]), r"array 'policy' declares \d+ bytes at \d+, beyond"),
        (_set_array("policy", shape=lambda a, h: [a["shape"][0] * 64], nbytes=lambda a, h: a["nbytes"] * 64),
         r"array 'policy' declares \d+ bytes at \d+, beyond the file's"),
        (_set_array("policy", offset=lambda a, h: 1 << 40), r"array 'policy' declares \d+ bytes at 1099511627776"),
        # an offset not aligned, or inside the preamble and header
        (_set_array("policy", offset=lambda a, h: a["offset"] + 1), r"array 'policy' has offset \d+$"),
        (_set_array("policy", offset=lambda a, h: a["offset"] - 60), r"array 'policy' has offset \d+$"),
        (_set_array("policy", offset=0), r"array 'policy' has offset 0$"),
        (_set_array("policy", offset=-64), r"array 'policy' has offset -64$"),
        # sizes that do not agree, dtypes and shapes not allowed
        (_set_array("policy", nbytes=lambda a, h: a["nbytes"] - 1), r"array 'policy' declares"),
        (_set_array("policy", dtype="|O"), r"array 'policy' has dtype '\|O'"),
        (_set_array("policy", shape=[-1]), r"array 'policy' has shape \[-1\]"),
        # the declared end: beyond the cap, beyond the file, short of the file
        (_set("end", lambda h: MAX_FILE_BYTES + ALIGN), rf"declared size {MAX_FILE_BYTES + ALIGN} is beyond the cap"),
        (_set("end", lambda h: 1 << 62), r"declared size \d+ is beyond the cap"),
        (_set("end", lambda h: h["end"] + ALIGN), r"truncated: \d+ bytes, the header declares \d+"),
        (_set("end", lambda h: h["end"] - ALIGN), rf"{ALIGN} bytes after the declared end"),
        (_set("end", lambda h: "big"), r"declared size 'big' is beyond the cap"),
        # more arrays than the cap
        (_many_arrays, rf"{MAX_ARRAYS + 1} arrays is more than the cap {MAX_ARRAYS}"),
        # a header that does not describe a format-3 file
        (_set("version", lambda h: 4), r"header format 'pokerbot-strategy' version 4 does not match"),
        (_set("format", lambda h: "other"), r"header format 'other'"),
        (_set("precision", lambda h: "f16"), r"precision 'f16' is not one of u8, f32"),
        (_set("precision", lambda h: "f32"), r"policy dtype \|u1 does not match precision f32"),
        (_set("game", lambda h: "GAMEDEF\nnonsense\nEND GAMEDEF\n"), r"game definition"),
        (_set("betting", lambda h: "1x"), r"betting abstraction"),
        (_set("cards", lambda h: {"abstraction": "psychic", "buckets": [6, 30]}), r"'psychic' is not supported"),
        (_set("cards", lambda h: {"abstraction": "lossless", "buckets": [6]}), r"do not give one per street"),
    ],
    ids=["array-at-end", "array-longer", "array-far", "offset-plus-1", "offset-minus-60", "offset-0",
         "offset-negative", "nbytes-short", "dtype-object", "shape-negative", "end-over-cap", "end-huge",
         "end-past-file", "end-short", "end-not-int", "arrays-over-cap", "header-version", "header-format",
         "precision-unknown", "precision-mismatch", "game", "betting", "cards-kind", "cards-streets"],
)
def test_bad_headers_are_refused(limit_file: Path, mutate, reason: str) -> None:
    """Headers rewritten with msgpack and a recomputed checksum: the size and sanity
    checks themselves refuse them."""
    limit_file.write_bytes(_rewrite(limit_file.read_bytes(), mutate))
    _refusal(lambda: open_strategy(limit_file), limit_file, reason)


def test_header_length_beyond_the_file_after_a_valid_rewrite(limit_file: Path) -> None:
    data = _rewrite(limit_file.read_bytes(), lambda h: None)
    limit_file.write_bytes(_with_preamble(data, head_len=len(data) - PREAMBLE.size + 1))
    _refusal(lambda: open_strategy(limit_file), limit_file, rf"header length {len(data) - 55} does not fit the file "
                                                           rf"\({len(data)} bytes\)")
    # a header length inside the file but past the header: the padding is not msgpack
    limit_file.write_bytes(_with_preamble(data, head_len=_preamble(data)[3] + 1))
    _refusal(lambda: open_strategy(limit_file), limit_file, r"the header is not valid msgpack")


def test_caps_are_applied(limit_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file-size and header-size caps, lowered to this file's sizes: at the cap the
    file opens, one byte under it is refused."""
    from solver import strategy_io

    size = limit_file.stat().st_size
    head_len = _preamble(limit_file.read_bytes())[3]
    monkeypatch.setattr(strategy_io, "MAX_FILE_BYTES", size)
    monkeypatch.setattr(strategy_io, "MAX_HEADER_BYTES", head_len)
    assert open_strategy(limit_file).file_bytes == size
    monkeypatch.setattr(strategy_io, "MAX_FILE_BYTES", size - 1)
    _refusal(lambda: open_strategy(limit_file), limit_file, rf"{size} bytes is more than the cap {size - 1}")
    _refusal(lambda: loads_file(limit_file.read_bytes(), "mem"), "mem",
             rf"declared size {size} is beyond the cap {size - 1}")
    monkeypatch.setattr(strategy_io, "MAX_FILE_BYTES", size)
    monkeypatch.setattr(strategy_io, "MAX_HEADER_BYTES", head_len - 1)
    _refusal(lambda: open_strategy(limit_file), limit_file, rf"header length {head_len} does not fit")


def test_a_file_for_another_game_is_refused(limit_file: Path, strategies, tmp_path: Path) -> None:
    assert open_strategy(limit_file, game=load_game(LEDUC)).game.name == LEDUC
    _refusal(lambda: open_strategy(limit_file, game=load_game(LEDUC_NL)), limit_file,
             rf"the strategy is for {LEDUC}, not {LEDUC_NL}")
    _refusal(lambda: open_strategy(limit_file, game=load_game("kuhn.limit.2p")), limit_file,
             rf"the strategy is for {LEDUC}, not kuhn.limit.2p")
    nl = tmp_path / "nl.strategy"
    save_strategy(nl, strategies["nolimit"], "f32")
    _refusal(lambda: open_strategy(nl, game=load_game(LEDUC)), nl, rf"the strategy is for {LEDUC_NL}, not {LEDUC}")
    # the same name, another definition: the line that differs is named
    import dataclasses

    short = dataclasses.replace(load_game(LEDUC_NL), stack=(6, 6))
    _refusal(lambda: open_strategy(nl, game=short), nl,
             rf"another definition of {LEDUC_NL}: its 'stack = 20 20' where the game has 'stack = 6 6'")


def test_missing_and_unreadable_files_are_refused(tmp_path: Path) -> None:
    missing = tmp_path / "missing.strategy"
    _refusal(lambda: open_strategy(missing), missing, r"cannot read \(No such file or directory\)")
    _refusal(lambda: open_strategy(tmp_path), tmp_path, r"cannot read")
    empty = tmp_path / "empty.strategy"
    empty.write_bytes(b"")
    _refusal(lambda: open_strategy(empty), empty, r"not a strategy file")


# ------------------------------------------------------------------ 4. versions 1 and 2


def _legacy_doc(path: Path) -> dict[str, Any]:
    return msgpack.unpackb(path.read_bytes(), raw=False)


def _legacy_policy(doc: dict[str, Any]) -> np.ndarray:
    pol = doc["arrays"]["policy"]
    return np.frombuffer(pol["data"], dtype=pol["dtype"]).astype(np.float64)


def test_version_1_loads() -> None:
    doc = _legacy_doc(V1_FILE)
    assert doc["version"] == 1
    sf = open_strategy(V1_FILE)
    assert (sf.version, sf.game.name, sf.betting, sf.cards["abstraction"]) == (1, "kuhn.limit.2p", "", "lossless")
    assert sf.training == {"algorithm": "cfr+", "iterations": 10}
    np.testing.assert_array_equal(sf.policy(), _legacy_policy(doc))
    s = load_strategy(V1_FILE)
    assert (s.algorithm, s.iterations, s.problem.size) == ("cfr+", 10, 24)
    np.testing.assert_array_equal(s.policy, _legacy_policy(doc))
    _refusal(lambda: open_strategy(V1_FILE, game=load_game(LEDUC)), V1_FILE, r"the strategy is for kuhn.limit.2p")


def test_version_2_loads_as_before(tmp_path: Path) -> None:
    doc = _legacy_doc(V2_FILE)
    assert doc["version"] == 2
    want = _legacy_policy(doc)
    sf = open_strategy(V2_FILE, game=load_game(LEDUC_NL))
    assert (sf.version, sf.game.name, sf.betting, sf.precision) == (2, LEDUC_NL, NL_BETTING, "f64")
    assert sf.training == {"algorithm": "cfr+", "iterations": 50}
    np.testing.assert_array_equal(sf.policy(), want)
    s = load_strategy(V2_FILE)
    np.testing.assert_array_equal(s.policy, want)
    assert s.problem.tree.betting_spec == NL_BETTING and s.problem.size == 2832
    np.testing.assert_array_equal(loads(V2_FILE.read_bytes()).policy, want)
    # rewritten as format 3: the same policy (to float32, or to the quantized rows)
    v3 = tmp_path / "v3.strategy"
    save_strategy(v3, s, "f32")
    np.testing.assert_array_equal(open_strategy(v3).table, want.astype(np.float32))
    save_strategy(v3, s, "u8")
    np.testing.assert_array_equal(open_strategy(v3).table, _quantize(s))
    _refusal(lambda: open_strategy(V2_FILE, game=load_game(LEDUC)), V2_FILE, rf"the strategy is for {LEDUC_NL}")
    # a damaged policy is still caught by the version 2 checksum
    raw = bytearray(doc["arrays"]["policy"]["data"])
    raw[100] ^= 4
    doc["arrays"]["policy"]["data"] = bytes(raw)
    bad = tmp_path / "bad.v2.strategy"
    bad.write_bytes(msgpack.packb(doc, use_bin_type=True))
    _refusal(lambda: open_strategy(bad), bad, r"checksum mismatch")


@pytest.mark.parametrize("which", ["v1", "v2", "u8", "f32"])
def test_policy_is_a_copy(which: str, strategies: dict[str, Strategy]) -> None:
    """``StrategyFile.policy()`` is documented to return a copy: changing it changes
    nothing the file's player reads."""
    if which == "v1":
        sf = open_strategy(V1_FILE)
    elif which == "v2":
        sf = open_strategy(V2_FILE)
    else:
        sf = loads_file(dumps(strategies["limit"], which))
    before = np.array(sf.table, dtype=np.float64)
    p = sf.policy()
    p[:] = -1.0
    np.testing.assert_array_equal(np.asarray(sf.table, dtype=np.float64), before)
    assert sf.policy().min() >= 0.0


def _v2_card_file(s: Strategy) -> bytes:
    """A version-2 file over a card abstraction, laid out as version 2 wrote them: one
    msgpack map with the float policy as bytes and the abstraction's record (no model)."""
    p = s.problem
    ab = p.abstraction
    raw = np.ascontiguousarray(s.policy, dtype="<f8").tobytes()
    doc = {
        "format": "pokerbot-solver-strategy",
        "version": 2,
        "game": p.game.to_text(),
        "game_name": p.game.name,
        "betting": p.tree.betting_spec,
        "cards": {
            "abstraction": "card",
            "buckets": [int(b) for b in p.chance.n_buckets],
            "content_hash": ab.content_hash,
            "game": ab.game.name,
            "params": ab.params.to_json(),
            "directory": str(ab.directory),
        },
        "algorithm": s.algorithm,
        "iterations": s.iterations,
        "tree": {"nodes": p.tree.n_nodes, "table_size": p.size},
        "arrays": {"policy": {"dtype": "<f8", "shape": [p.size], "data": raw}},
        "sha256": hashlib.sha256(raw).hexdigest(),
    }
    return msgpack.packb(doc, use_bin_type=True)


def test_version_2_card_file_needs_its_abstraction(strategies, builds, tmp_path: Path) -> None:
    s = strategies["card"]
    path = tmp_path / "card.v2.strategy"
    path.write_bytes(_v2_card_file(s))
    _refusal(lambda: open_strategy(path), path, r"was trained over card abstraction .*give that abstraction",
             sep=" ")
    _refusal(lambda: load_strategy(path), path, r"give that abstraction", sep=" ")
    ab = builds["a"]
    sf = open_strategy(path, abstraction=ab)
    assert sf.version == 2 and sf.abstraction is ab
    np.testing.assert_array_equal(sf.policy(), s.policy)
    back = load_strategy(path, abstraction=ab)
    np.testing.assert_array_equal(back.policy, s.policy)
    assert back.problem.abstraction is ab
    # a fresh load of the same directory is the same abstraction
    np.testing.assert_array_equal(open_strategy(path, abstraction=CardAbstraction.load(ab.directory)).policy(),
                                  s.policy)
    _refusal(lambda: open_strategy(path, abstraction=builds["seed1"]), path,
             rf"was trained over card abstraction {ab.content_hash}, but .* is sha256:", sep=" ")
    _refusal(lambda: open_strategy(path, abstraction=builds["b23"]), path, r"but .* is sha256:", sep=" ")


# ------------------------------------------------------------------ 5. the card model in the file


@pytest.fixture(scope="module")
def card_file(strategies: dict[str, Strategy], tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("card") / "leduc.card.strategy"
    save_strategy(path, strategies["card"], "u8", training=TRAINING)
    return path


def test_card_file_opens_without_the_directory(card_file: Path, builds, strategies) -> None:
    ab = builds["a"]
    directory = ab.directory
    assert directory is not None
    away = directory.with_name(directory.name + ".away")
    directory.rename(away)  # nothing of the build is reachable while the file opens and buckets
    try:
        sf = open_strategy(card_file)
        alone = sf.abstraction
        assert alone is not None and not alone.tables_used and alone.directory is None
        assert alone.model_hash == ab.model_hash and alone.bucket_counts == [3, 3]
        assert sf.cards["directory"] == str(directory)  # recorded, not needed
        bucket = bucket_fn(sf)
        got = [bucket(st, hole, board) for st, hole, board in _leduc_pairs(ab)]
    finally:
        away.rename(directory)
    want = [ab.lookup(hole, board, st) for st, hole, board in _leduc_pairs(ab)]
    assert got == want
    assert len(set(want[:6])) == 3 and len(set(want[6:])) == 3  # every bucket is used
    # and it plays as the strategy it was written from: the same exploitability
    s = strategies["card"]
    stored = Strategy(s.problem, dequantize(_quantize(s)), s.iterations, s.algorithm)
    a_file, r_file = abstract_and_real_exploitability(sf.to_strategy())
    a_want, r_want = abstract_and_real_exploitability(stored)
    assert a_file.exploitability == pytest.approx(a_want.exploitability, abs=1e-12)
    assert r_file.exploitability == pytest.approx(r_want.exploitability, abs=1e-12)
    assert r_file.exploitability > a_file.exploitability  # the buckets do lose information


def test_card_file_with_the_same_build_uses_its_tables(card_file: Path, builds) -> None:
    ab = builds["a"]
    sf = open_playable(card_file, tables=ab.directory)
    assert sf.abstraction is not None and sf.abstraction.tables_used
    assert sf.abstraction.directory == ab.directory and sf.abstraction.tables_note == ""
    bucket = bucket_fn(sf)
    assert [bucket(st, h, b) for st, h, b in _leduc_pairs(ab)] == [ab.lookup(h, b, st) for st, h, b in _leduc_pairs(ab)]
    # a copy of the same build elsewhere is the same model: its tables are used too
    copy_dir = ab.directory.with_name(ab.directory.name + ".copy")
    shutil.copytree(ab.directory, copy_dir)
    try:
        again = open_playable(card_file, tables=copy_dir)
        assert again.abstraction is not None and again.abstraction.tables_used
    finally:
        shutil.rmtree(copy_dir)


@pytest.mark.parametrize("other", ["seed1", "b23"])
def test_card_file_ignores_tables_of_another_build(card_file: Path, builds, other: str) -> None:
    ab, wrong = builds["a"], builds[other]
    sf = open_playable(card_file, tables=wrong.directory)
    assert sf.abstraction is not None and not sf.abstraction.tables_used
    assert "model hash differs" in sf.abstraction.tables_note
    bucket = bucket_fn(sf)
    pairs = _leduc_pairs(ab)
    got = [bucket(st, h, b) for st, h, b in pairs]
    assert got == [ab.lookup(h, b, st) for st, h, b in pairs]  # the file's model, not the other tables
    assert got != [wrong.lookup(h, b, st) for st, h, b in pairs]  # which would bucket otherwise
    # tables that are not a build at all are ignored the same way
    assert not open_playable(card_file, tables=card_file.parent).abstraction.tables_used


def test_card_file_with_a_damaged_model_is_refused(card_file: Path, tmp_path: Path) -> None:
    """A model array changed under a valid checksum: the recorded model hash catches it."""
    data = card_file.read_bytes()
    head = _header(data)
    name = next(k for k in head["arrays"] if k.startswith("model.centroids"))
    a = head["arrays"][name]
    buf = bytearray(data)
    buf[a["offset"]] ^= 0x40
    buf[24:56] = hashlib.sha256(bytes(buf[PREAMBLE.size :])).digest()
    bad = tmp_path / "model.strategy"
    bad.write_bytes(bytes(buf))
    _refusal(lambda: open_strategy(bad), bad, r"card abstraction model")


# ------------------------------------------------------------------ 6. the command line


def _bad_files(tmp_path: Path, strategies: dict[str, Strategy]) -> dict[str, tuple[Path, str]]:
    """Files `pokerbot play/match` must refuse for leduc.limit.2p, with the reason they give."""
    good = tmp_path / "good.strategy"
    save_strategy(good, strategies["limit"])
    data = good.read_bytes()
    truncated = tmp_path / "truncated.strategy"
    truncated.write_bytes(data[: len(data) - 100])
    other = tmp_path / "other-game.strategy"
    save_strategy(other, strategies["nolimit"])
    return {
        "missing": (tmp_path / "missing.strategy", "cannot read"),
        "truncated": (truncated, rf"truncated: {len(data) - 100} bytes, the header declares {len(data)}"),
        "other-game": (other, rf"the strategy is for {LEDUC_NL}, not {LEDUC}"),
    }


def _error_line(capsys) -> str:
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize("bad", ["missing", "truncated", "other-game"])
def test_play_refuses_a_bad_file(tmp_path: Path, strategies, capsys, bad: str) -> None:
    path, reason = _bad_files(tmp_path, strategies)[bad]
    assert main(["play", "--strategy", str(path), "--port", "1", "--game", LEDUC]) == 2
    line = _error_line(capsys)
    assert line.startswith(f"pokerbot play: error: {path}: "), line
    assert re.search(reason, line), line
    assert main(["play", "--bot", f"strategy:{path}", "--port", "1", "--game", LEDUC]) == 2
    assert _error_line(capsys).startswith(f"pokerbot play: error: {path}: ")


def test_play_accepts_a_good_file(tmp_path: Path, strategies, capsys) -> None:
    """The control: a good file passes the check and play fails later, on the connection."""
    good = tmp_path / "good.strategy"
    save_strategy(good, strategies["limit"])
    status = main(["play", "--strategy", str(good), "--port", "1", "--game", LEDUC, "--spin-us", "0"])
    line = _error_line(capsys)
    assert status == 1 and str(good) not in line, line


@pytest.mark.parametrize("bad", ["missing", "truncated", "other-game"])
def test_match_refuses_a_bad_file(tmp_path: Path, strategies, capsys, bad: str) -> None:
    path, reason = _bad_files(tmp_path, strategies)[bad]
    assert main(["match", LEDUC, "--players", f"strategy:{path}", "call", "--hands", "5"]) == 2
    line = _error_line(capsys)
    assert line.startswith(f"pokerbot match: error: {path}: "), line
    assert re.search(reason, line), line


@pytest.mark.parametrize(
    "data, says",
    [
        (bytes(range(7, 250)) * 10, "it starts with neither PKBSTRAT"),
        (b"hello\n", "it starts with neither PKBSTRAT"),
        (msgpack.packb([1, 2, 3]), "it starts with neither PKBSTRAT"),
        (msgpack.packb({"format": 1}) + b"junk", "is not one whole msgpack map"),
    ],
)
def test_a_file_that_is_not_a_strategy_gets_one_plain_line(tmp_path: Path, capsys, data: bytes, says: str) -> None:
    path = tmp_path / "odd.strategy"
    path.write_bytes(data)
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"pokerbot inspect: error: {path}: not a strategy file: ")
    assert says in err[0] and "unpack" not in err[0] and "codec" not in err[0], err
