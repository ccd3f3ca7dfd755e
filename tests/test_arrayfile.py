"""Files of raw arrays (solver.arrayfile) and the training checkpoints written in them.

The layout is checked by an independent reader (struct, msgpack and hashlib, as the
module docstring describes it); the checkpoints' memory by tracemalloc, on the 20-card
game's lossless tables (9.6M entries a table): writing holds one piece of a table at a
time, reading maps the file, and the average strategy is the only table-sized array
the end of a run makes besides the quantized file, or, where it evaluates nothing, the
quantized table alone.
"""

from __future__ import annotations

import hashlib
import json
import struct
import tracemalloc
from pathlib import Path

import msgpack
import numpy as np
import pytest

from agent.cli import main
from poker._atomic import atomic_write
from solver.arrayfile import ALIGN, ArraySpec, encode_arrays, write_arrays
from solver.problem import make_problem
from solver.strategy_io import StrategyFileError, open_strategy, quantize, save_strategy
from solver.training.checkpoint import CheckpointError, load_checkpoint, restore_checkpoint, save_checkpoint
from solver.training.config import AlgorithmConfig, Budget, EvaluationConfig, TrainingConfig
from solver.training.dealt import make_dealt_problem
from solver.training.mccfr import ExternalSamplingSolver
from solver.training.run import TrainingProgress, run_training
from solver.training.sampled import SamplingOptions, TableLayout

PREAMBLE = struct.Struct("<8sIIQ32s")  # magic, version, flags, header length, sha256


def _parse(data: bytes) -> tuple[bytes, int, dict, dict[str, np.ndarray]]:
    """An independent reader of the layout: magic, version, header and arrays, with the
    checksum and the alignment checked."""
    magic, version, flags, head_len, digest = PREAMBLE.unpack_from(data, 0)
    assert flags == 0
    assert hashlib.sha256(data[PREAMBLE.size :]).digest() == digest
    head = msgpack.unpackb(data[PREAMBLE.size : PREAMBLE.size + head_len], raw=False)
    assert head["end"] == len(data)
    arrays = {}
    for name, a in head["arrays"].items():
        assert a["offset"] % ALIGN == 0 and a["offset"] >= PREAMBLE.size + head_len
        raw = data[a["offset"] : a["offset"] + a["nbytes"]]
        arrays[name] = np.frombuffer(raw, dtype=a["dtype"]).reshape(a["shape"])
    return magic, version, head, arrays


def test_arrays_written_in_pieces_read_back_whole() -> None:
    rng = np.random.default_rng(3)
    big = rng.standard_normal(1000).astype(np.float32)
    grid = rng.integers(0, 255, size=(7, 5), dtype=np.uint8)
    cuts = [0, 1, 250, 251, 999, 1000]  # uneven pieces, one empty
    specs = [
        ArraySpec("big", np.dtype("<f4"), (1000,), lambda: (big[a:b] for a, b in zip(cuts, cuts[1:]))),
        ArraySpec.of("grid", grid),
        ArraySpec.of("one", np.array([42], dtype=np.int64)),
    ]
    data = encode_arrays(b"TESTFILE", 7, {"format": "test", "version": 7, "note": "x"}, specs)
    magic, version, head, arrays = _parse(data)
    assert (magic, version, head["format"], head["note"]) == (b"TESTFILE", 7, "test", "x")
    np.testing.assert_array_equal(arrays["big"], big)
    np.testing.assert_array_equal(arrays["grid"], grid)
    assert arrays["one"].tolist() == [42]
    # the same arrays given whole give the same bytes
    whole = [ArraySpec.of("big", big), ArraySpec.of("grid", grid), ArraySpec.of("one", np.array([42]))]
    assert encode_arrays(b"TESTFILE", 7, {"format": "test", "version": 7, "note": "x"}, whole) == data


def test_pieces_that_do_not_make_the_array_leave_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"old")
    short = ArraySpec("a", np.dtype("<f8"), (10,), lambda: iter([np.zeros(9)]))
    with pytest.raises(ValueError, match="its pieces hold 72 bytes, not 80"):
        atomic_write(path, lambda fh: write_arrays(fh, b"TESTFILE", 1, {"format": "t", "version": 1}, [short]))
    assert path.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["f.bin"]


@pytest.mark.parametrize("piece", [1, 7, 1 << 22])
def test_canonical_pieces_tile_the_canonical_table(piece: int) -> None:
    problem = make_problem("leduc.nolimit.2p", "1p,a")
    layout = TableLayout.build(problem)
    table = np.random.default_rng(1).standard_normal(problem.size)
    pieces = list(layout.canonical_pieces(table, piece))
    np.testing.assert_array_equal(np.concatenate(pieces), layout.to_canonical(table))
    biggest_block = max(b.stop - b.start for _, b, _ in layout.node_blocks(table))
    assert all(p.shape[0] <= max(piece, biggest_block) for p in pieces)


def _v1_checkpoint(path: Path, solver: ExternalSamplingSolver) -> None:
    """A checkpoint as version 1 wrote it: one msgpack map, each array's bytes in it and a
    SHA-256 over them in name order."""
    arrays = {"regrets": solver.layout.to_canonical(solver.regrets),
              "avg_sums": solver.layout.to_canonical(solver.avg_sums), **solver.random_state()}  # fmt: skip
    packed = {k: {"dtype": v.dtype.str, "shape": list(v.shape), "data": v.tobytes()} for k, v in arrays.items()}
    digest = hashlib.sha256()
    for k in sorted(packed):
        digest.update(packed[k]["data"])
    p = solver.problem
    doc = {"format": "pokerbot-training-checkpoint", "version": 1, "game": p.game.to_text(),
           "game_name": p.game.name, "betting": p.tree.betting_spec, "cards": {"abstraction": "lossless",
           "numbering": "canonical", "buckets": [int(x) for x in p.chance.n_buckets]},
           "algorithm": solver.algorithm, "options": solver.options(), "iterations": solver.iterations,
           "nodes": solver.nodes, "seconds": 1.0, "seed": 5, "threads": 1, "table_size": p.size,
           "arrays": packed, "sha256": digest.hexdigest()}  # fmt: skip
    path.write_bytes(msgpack.packb(doc, use_bin_type=True))


def test_a_version_1_checkpoint_still_resumes(tmp_path: Path) -> None:
    leduc = make_problem("leduc.limit.2p")
    a = ExternalSamplingSolver(leduc, SamplingOptions(seed=5))
    a.iterate(300)
    _v1_checkpoint(tmp_path / "v1.ckpt", a)
    ckpt = load_checkpoint(tmp_path / "v1.ckpt")
    b = ExternalSamplingSolver(leduc, SamplingOptions(seed=5))
    restore_checkpoint(b, ckpt)
    a.iterate(200)
    b.iterate(200)
    np.testing.assert_array_equal(a.regrets, b.regrets)
    np.testing.assert_array_equal(a.avg_sums, b.avg_sums)
    # the version it writes now is the mapped layout, and reads back the same
    save_checkpoint(tmp_path / "v2.ckpt", b)
    magic, version, head, arrays = _parse((tmp_path / "v2.ckpt").read_bytes())
    assert (magic, version, head["version"], head["iterations"]) == (b"PKBCHKPT", 2, 2, 500)
    np.testing.assert_array_equal(arrays["regrets"], b.layout.to_canonical(b.regrets))
    data = bytearray((tmp_path / "v2.ckpt").read_bytes())
    data[8] = 3  # a version this reader does not know
    (tmp_path / "v3.ckpt").write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"v3.ckpt: format version 3 is not supported \(written by a newer"):
        load_checkpoint(tmp_path / "v3.ckpt")


def _peak(f) -> int:
    """Peak bytes allocated (tracemalloc) while ``f`` runs, above what was held before."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        f()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_checkpoints_and_the_average_hold_no_copy_of_the_tables(tmp_path: Path) -> None:
    problem = make_dealt_problem("holdem.nolimit.2p.short20", "1p,cap1")
    a = ExternalSamplingSolver(problem, SamplingOptions(seed=2, dtype="float32"))
    a.iterate(20_000)
    tables = a.regrets.nbytes + a.avg_sums.nbytes  # 77 MB
    path = tmp_path / "run.ckpt"
    assert _peak(lambda: save_checkpoint(path, a)) < tables / 2  # was 4 copies of both tables
    b = ExternalSamplingSolver(problem, SamplingOptions(seed=2, dtype="float32"))
    assert _peak(lambda: restore_checkpoint(b, load_checkpoint(path))) < tables / 20  # was 3 copies
    np.testing.assert_array_equal(a.regrets, b.regrets)
    np.testing.assert_array_equal(a.avg_sums, b.avg_sums)
    policy_bytes = 8 * problem.size
    assert _peak(lambda: a.average_policy("current")) < 1.1 * policy_bytes  # was 2.9 times
    assert _peak(a.unaveraged_rows) < tables / 20  # was a copy of both tables


def test_a_checkpoint_and_a_strategy_file_are_told_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    leduc = make_problem("leduc.limit.2p")
    s = ExternalSamplingSolver(leduc, SamplingOptions(seed=1))
    s.iterate(100)
    ckpt, strat = tmp_path / "run.ckpt", tmp_path / "run.strategy"
    save_checkpoint(ckpt, s)
    save_strategy(strat, s.average_strategy())
    with pytest.raises(StrategyFileError, match=r"run.ckpt: not a pokerbot strategy file: it is a training "
                                                r"checkpoint \(pokerbot train --resume continues it\)$"):
        open_strategy(ckpt)  # as play, match and eval open it
    with pytest.raises(CheckpointError, match=r"run.strategy: not a training checkpoint: it is a strategy file"):
        load_checkpoint(strat)
    # inspect says what the checkpoint holds, and why it shows no strategy
    assert main(["inspect", str(ckpt), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (doc["kind"], doc["algorithm"], doc["iterations"], doc["seed"]) == ("checkpoint", "es", 100, 1)
    assert doc["arrays"]["regrets"] == {"dtype": "<f8", "shape": [leduc.size]}
    assert main(["inspect", str(ckpt)]) == 0
    text = capsys.readouterr().out
    assert "pokerbot training checkpoint" in text and "es: 100 iterations" in text
    assert main(["inspect", str(ckpt), "--grid"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is a training checkpoint, which holds tables, not a strategy" in err[0]


def test_a_run_that_evaluates_nothing_writes_its_file_node_by_node(tmp_path: Path) -> None:
    """A sampled run that stores one byte per probability and evaluates nothing (as on
    the full deck) writes the bytes quantizing its average strategy would give, holding
    little beyond the uint8 table, and makes the float strategy only when asked."""
    config = TrainingConfig("holdem.nolimit.2p.short20", AlgorithmConfig("es"), Budget(iterations=30_000),
                            betting="1p,cap1", out=tmp_path / "s.strategy", dtype="float32",
                            evaluation=EvaluationConfig(enabled=False))  # fmt: skip
    held = {}

    def at(report: TrainingProgress) -> None:
        if report.stage == "batch":
            held["bytes"] = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()

    tracemalloc.start()
    try:
        run = run_training(config, progress=at)
        peak = tracemalloc.get_traced_memory()[1] - held["bytes"]
    finally:
        tracemalloc.stop()
    entries = run.problem.size
    assert peak < 3 * entries  # the float64 policy alone would be 8 bytes an entry
    p = run.strategy.problem
    want = quantize(run.strategy.policy, p.tree, p.offset, list(p.chance.n_buckets))
    np.testing.assert_array_equal(open_strategy(tmp_path / "s.strategy").table, want)
