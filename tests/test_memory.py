"""Training memory (solver.training.memory): the estimate against what the solvers really allocate
and the files on disk, the one-line refusal, and ``pokerbot tree``'s report of it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from abstraction.build import build_abstraction
from abstraction.card_abstraction import CardAbstraction
from abstraction.plan import AbstractionParams
from agent.cli import main
from solver.training.algorithms import make_training_solver
from solver.training.memory import (
    MemoryEstimate,
    check_fits,
    estimate_training_memory,
    format_bytes,
)
from solver.problem import make_problem
from solver.training.sampled import SamplingOptions

LEDUC = "leduc.limit.2p"
SHORT20 = "holdem.nolimit.2p.short20"
FULL = "holdem.nolimit.2p.reverse_blinds"


@pytest.fixture(scope="module")
def abstractions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CardAbstraction]:
    """Small abstractions (each builds in about a second)."""
    specs = {
        "leduc": (LEDUC, AbstractionParams((3, 3))),
        "leduc_history": (LEDUC, AbstractionParams((2, 3), history=True)),
        "short20": (SHORT20, AbstractionParams((6, 12, 12, 12), seed=2)),
    }
    return {
        name: build_abstraction(game, params, tmp_path_factory.mktemp(name)).abstraction
        for name, (game, params) in specs.items()
    }


#: (abstraction, betting) of the problems the real solvers are built on.
CASES = {"leduc": None, "short20": "1p,cap1"}


@pytest.fixture(scope="module")
def problems(abstractions):
    """The listed problem of each case (short20's chance layer takes a few seconds)."""
    return {
        name: make_problem(abstractions[name].game, betting, abstraction=abstractions[name])
        for name, betting in CASES.items()
    }


def _table_files(ab: CardAbstraction) -> int:
    return sum(p.stat().st_size for p in Path(ab.directory).glob("street*.table.npy"))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("algorithm", ["es", "os", "tcfr"])
@pytest.mark.parametrize("case", list(CASES))
def test_sampled_tables_equal_the_real_allocation(case, algorithm, dtype, abstractions, problems):
    ab, problem = abstractions[case], problems[case]
    est = estimate_training_memory(
        ab.game, CASES[case], abstraction_dir=ab.directory, algorithm=algorithm, dtype=dtype
    )
    solver = make_training_solver(problem, algorithm, SamplingOptions(dtype=dtype))
    assert est.entries == problem.size
    assert est.regrets == solver.regrets.nbytes
    assert est.average == solver.avg_sums.nbytes
    assert est.regrets + est.average == solver.regrets.nbytes + solver.avg_sums.nbytes
    assert est.current == 0 and est.dtype == dtype
    assert est.bucket_counts == tuple(ab.bucket_counts)
    assert est.bucket_tables == _table_files(ab)


@pytest.mark.parametrize("case", list(CASES))
def test_vector_cfr_tables_buffers_and_chance_layer(case, abstractions, problems):
    ab, problem = abstractions[case], problems[case]
    # dtype and threads do not apply: vector CFR keeps float64 tables on one thread
    est = estimate_training_memory(
        ab.game, CASES[case], abstraction_dir=ab.directory, algorithm="cfr+", dtype="float32", threads=4
    )
    solver = make_training_solver(problem, "cfr+")
    assert (est.dtype, est.threads, est.dealt) == ("float64", 1, False)
    assert est.regrets == solver.regrets.nbytes
    assert est.average == solver.avg_sums.nbytes
    assert est.current == solver._strat.nbytes
    buffers = problem.buffers()
    assert est.per_thread == sum(getattr(buffers, f).nbytes for f in ("vals", "rbuf", "cs", "frames"))
    kc = problem.kchance
    listed = kc.bucket.nbytes + kc.sd_order.nbytes + kc.sd_key.nbytes + problem.chance.board_cards.nbytes
    # plus one byte per (board state, hand) while the map is built
    assert est.chance_layer == listed + kc.bucket.size


def test_sampled_runs_deal_on_big_games_and_list_small_ones(abstractions):
    big = estimate_training_memory(SHORT20, "1p,cap1", abstraction_dir=abstractions["short20"].directory)
    assert big.dealt and big.chance_layer == 0 and big.algorithm == "tcfr" and big.dtype == "float32"
    d = abstractions["short20"].directory
    cfr = estimate_training_memory(SHORT20, "1p,cap1", abstraction_dir=d, algorithm="cfr")
    assert not cfr.dealt and cfr.chance_layer > 0
    small = estimate_training_memory(LEDUC, abstraction_dir=abstractions["leduc"].directory)
    assert not small.dealt and small.chance_layer > 0  # few deals: listed, without replacement


def test_history_pair_maps_count_with_the_tables(abstractions):
    ab = abstractions["leduc_history"]
    est = estimate_training_memory(LEDUC, abstraction_dir=ab.directory, algorithm="es")
    pairs = sum(
        p.stat().st_size + 4 * int(np.load(p).size) for p in Path(ab.directory).glob("street*.pairs.npy")
    )
    assert pairs > 0
    assert est.bucket_tables == _table_files(ab) + pairs


def test_threads_multiply_the_scratch_only(abstractions):
    d = abstractions["short20"].directory
    one = estimate_training_memory(SHORT20, "1p,cap1", abstraction_dir=d, threads=1)
    four = estimate_training_memory(SHORT20, "1p,cap1", abstraction_dir=d, threads=4)
    assert four.total - one.total == 3 * one.per_thread
    assert 0 < one.per_thread < 64 * 1024


def test_lossless_full_deck_is_estimated_without_enumerating():
    est = estimate_training_memory(FULL, "1p,cap1")
    assert est.source == "lossless" and est.dealt
    assert est.bucket_tables == 0 and est.chance_layer == 0 and est.indexers > 0
    assert est.regrets == 4 * est.entries and est.total > 2 * est.regrets
    cfr = estimate_training_memory(FULL, "1p,cap1", algorithm="cfr")
    assert cfr.chance_layer > 1 << 40  # every board and hand: over a TiB
    assert cfr.regrets == 8 * est.entries and cfr.current == cfr.regrets


def test_planned_buckets_size_the_tables_from_canonical_hands():
    est = estimate_training_memory(FULL, "1p,cap1", buckets=(169, 1000, 1000, 1000))
    assert est.bucket_counts == (169, 1000, 1000, 1000) and est.source == "planned"
    canonical = 169 + 1_286_792 + 13_960_050 + 123_156_254
    assert est.bucket_tables == 2 * canonical + 4 * 128  # uint16 entries and .npy headers


def test_check_fits_refuses_in_one_line(abstractions):
    est = estimate_training_memory(SHORT20, "1p,cap1", abstraction_dir=abstractions["short20"].directory)
    assert check_fits(est, available_gib=1e6) is None
    msg = check_fits(est, available_gib=1e-6)
    assert msg is not None and "\n" not in msg
    label, size = est.biggest()
    assert format_bytes(est.total) in msg and "available" in msg
    assert label in msg and format_bytes(size) in msg
    lossless = estimate_training_memory(FULL, "1p,cap1", dtype="float64")
    msg = check_fits(lossless, available_gib=16)
    assert msg is not None and "\n" not in msg
    assert "regrets" in msg and "fewer buckets" in msg and "betting" in msg and "float32" in msg
    ref = check_fits(estimate_training_memory(FULL, "1p,cap1", algorithm="cfr"), available_gib=16)
    assert ref is not None and "sampled algorithm" in ref


def test_check_fits_uses_the_machine_by_default():
    est = estimate_training_memory(LEDUC)
    assert check_fits(est) is None  # a few KiB fit anywhere


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"algorithm": "xyz"}, "algorithm"),
        ({"dtype": "float16"}, "dtype"),
        ({"threads": 0}, "threads"),
        ({"buckets": (3,)}, "planned buckets"),
    ],
)
def test_estimate_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        estimate_training_memory(LEDUC, **kwargs)


def test_abstraction_of_other_cards_is_refused(abstractions, tmp_path):
    with pytest.raises(ValueError, match="built for leduc"):
        estimate_training_memory(SHORT20, "1p,cap1", abstraction_dir=abstractions["leduc"].directory)
    with pytest.raises(ValueError, match="no meta.json"):
        estimate_training_memory(LEDUC, abstraction_dir=tmp_path)


def test_estimate_text_and_dict(abstractions):
    est = estimate_training_memory(SHORT20, "1p,cap1", abstraction_dir=abstractions["short20"].directory)
    assert isinstance(est, MemoryEstimate)
    text = est.describe()
    assert text.splitlines() == est.lines()
    labels = ("regrets", "average strategy", "bucket tables", "hand indexers", "chance layer")
    for label in (*labels, "per thread", "total"):
        assert label in text
    assert "current strategy" not in text  # sampled: two tables
    doc = est.to_dict()
    assert doc["total_bytes"] == est.total and doc["regrets_bytes"] == est.regrets
    json.dumps(doc)


# ------------------------------------------------------------------ pokerbot tree


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_tree_full_deck_reports_what_a_sampled_run_needs(capsys):
    assert main(["tree", FULL, "--betting", "1p,cap1"]) == 0
    text = capsys.readouterr().out
    assert "361 nodes" in text  # what it printed before stays
    assert "chance tables" in text and "cfr/cfr+ only: es/os/tcfr deal cards instead" in text
    assert "training memory: tcfr, float32 tables, 1 thread, lossless" in text
    assert "deals cards as it goes" in text
    est = estimate_training_memory(FULL, "1p,cap1")
    assert f"  {'total':<17} {format_bytes(est.total):>11}" in text
    fits = check_fits(est) is None
    assert ("  fits this machine:" if fits else "  does not fit this machine: training") in text
    assert "other choices: tcfr float64" in text
    assert main(["tree", FULL, "--betting", "1p,cap1", "--json"]) == 0
    doc = _json(capsys)
    tm = doc["training_memory"]
    assert tm["total_bytes"] == est.total and tm["dealt"] and tm["chance_layer_bytes"] == 0
    assert tm["regrets_bytes"] == 4 * doc["entries"] and tm["algorithm"] == "tcfr"
    assert tm["fits"] == (tm["refusal"] is None)
    assert doc["memory"]["sampled_float32_bytes"] == 8 * doc["entries"]


def test_tree_with_an_abstraction(abstractions, capsys):
    ab = abstractions["short20"]
    argv = ["tree", SHORT20, "--betting", "1p,cap1", "--abstraction", str(ab.directory)]
    assert main([*argv, "--json", "--algo", "es", "--dtype", "float64", "--threads", "2"]) == 0
    doc = _json(capsys)
    tm = doc["training_memory"]
    assert doc["buckets"] == [6, 12, 12, 12] and not doc["lossless"]
    assert doc["abstraction"] == str(ab.directory)
    assert (tm["algorithm"], tm["dtype"], tm["threads"]) == ("es", "float64", 2)
    assert tm["bucket_tables_bytes"] == _table_files(ab)
    assert tm["regrets_bytes"] == 8 * doc["entries"] and tm["fits"] and tm["refusal"] is None
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "bucket tables" in text and "read whole into memory" in text
    assert "fits this machine" in text


@pytest.mark.parametrize(
    "argv,message",
    [
        (["tree", LEDUC, "--buckets", "3,3", "--abstraction", "x"], "not both"),
        (["tree", LEDUC, "--algo", "cfr", "--threads", "2"], "--threads"),
        (["tree", LEDUC, "--algo", "cfr+", "--dtype", "float32"], "--dtype"),
        (["tree", LEDUC, "--threads", "0"], "--threads"),
        (["tree", LEDUC, "--abstraction", "/nonexistent/abs"], "no meta.json"),
    ],
)
def test_tree_memory_errors(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pokerbot tree: error:") and message in err[0]


def test_tree_refuses_abstraction_of_other_cards(abstractions, capsys):
    other = str(abstractions["leduc"].directory)
    argv = ["tree", SHORT20, "--betting", "1p,cap1", "--abstraction", other]
    assert main(argv) == 2
    assert "built for leduc" in capsys.readouterr().err
