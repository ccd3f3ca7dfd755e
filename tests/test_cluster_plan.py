"""``solver.training.cluster_plan`` and ``pokerbot tree --workers``: a cluster run's memory
and traffic per round, checked against figures worked out by hand on Leduc."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agent.cli import main
from solver.training import cluster, cluster_deltas
from solver.training.cluster_plan import (
    DELTA_BYTES,
    SYNC_SECONDS,
    cluster_estimate,
    format_seconds,
)
from solver.training.memory import estimate_training_memory

#: Table entries of leduc.limit.2p, lossless buckets (``pokerbot tree leduc.limit.2p``).
LEDUC_ENTRIES = 1092


def _leduc(algorithm: str = "es", dtype: str = "float32", threads: int = 1):
    return estimate_training_memory("leduc.limit.2p", algorithm=algorithm, dtype=dtype, threads=threads)


def test_leduc_by_hand():
    mem = _leduc()
    assert mem.entries == LEDUC_ENTRIES
    c = cluster_estimate(mem, workers=2)
    assert c.sync_seconds == SYNC_SECONDS == 5.0
    assert c.single_machine == mem.total
    # a worker: both float32 tables in, both deltas out (float32); encoding them needs no scratch
    assert c.incoming_tables == 2 * 1092 * 4 == 8736
    assert c.outgoing_deltas == 2 * 1092 * 4 == 8736
    assert c.worker_total == mem.total + 2 * 8736
    # the driver: one put copy, both workers' deltas
    assert c.put_tables == 8736 and c.gathered_deltas == 2 * 8736
    assert c.driver_total == mem.total + 3 * 8736
    # a round: the tables to 2 nodes, 2 dense deltas back
    assert c.bytes_out == c.bytes_in == 17472
    assert c.bytes_per_round == 34944
    assert c.bytes_per_second == pytest.approx(34944 / 5)
    assert c.megabytes_per_second == pytest.approx(0.0069888)
    assert c.gigabits_per_second == pytest.approx(34944 * 8 / 5e9)
    assert c.transfer_seconds(1) == pytest.approx(279.552e-6)
    assert c.transfer_seconds(10) == pytest.approx(27.9552e-6)


def test_float64_tables_and_more_workers():
    mem = _leduc("tcfr", "float64", threads=3)
    c = cluster_estimate(mem, workers=5, sync_seconds=0.5)
    assert c.single_machine == mem.total and mem.threads == 3
    assert c.incoming_tables == c.put_tables == 2 * 1092 * 8 == 17472
    assert c.outgoing_deltas == 2 * 1092 * 4  # deltas travel as float32 whatever the tables
    assert c.gathered_deltas == 5 * 8736
    assert c.bytes_out == 5 * 17472 and c.bytes_in == 5 * 8736
    assert c.bytes_per_second == pytest.approx(5 * (17472 + 8736) / 0.5)
    doc = c.to_dict()
    assert doc["worker"]["total_bytes"] == mem.total + 17472 + 8736
    assert doc["driver"]["total_bytes"] == mem.total + 17472 + 5 * 8736
    assert doc["transfer_seconds"]["10"] == pytest.approx(5 * 26208 * 8 / 10e9)
    json.dumps(doc)


def test_hot_syncs_by_hand():
    """Leduc's hot rows are its first street's 42 entries (14 actions at its six decision
    nodes x 3 private cards); 4 exchanges a round, 3 workers, float64 tables."""
    mem = _leduc("es", "float64")
    cold = cluster_estimate(mem, workers=3)
    assert cold.hot_worker == cold.hot_actor == cold.hot_bytes_per_round == 0
    c = cluster_estimate(mem, workers=3, hot_syncs=4, hot_entries=42)
    # a worker: the step's start in float64, its deltas and the sum in float32
    assert c.hot_worker == 2 * 42 * (8 + 4 + 4) == 1344
    assert c.worker_total == cold.worker_total + 1344 and c.driver_total == cold.driver_total
    # the actor: three workers' deltas and their sum
    assert c.hot_actor == 4 * 2 * 42 * 4 == 1344
    # each exchange: every worker's 2 x 42 float32 in and the sum out
    assert c.hot_bytes_per_round == 4 * 3 * 2 * 2 * 42 * 4 == 8064
    assert c.bytes_per_round == cold.bytes_per_round  # the driver's link carries none of it
    assert c.hot_transfer_seconds(1) == pytest.approx(8064 * 8 / 1e9)
    doc = c.to_dict()
    assert (doc["hot_syncs"], doc["hot_entries"], doc["hot_bytes_per_round"]) == (4, 42, 8064)
    assert doc["worker"]["hot_rows_bytes"] == 1344 and doc["hot_actor_bytes"] == 1344
    with pytest.raises(ValueError, match="hot syncs must be a whole number"):
        cluster_estimate(mem, workers=3, hot_syncs=-1)


def test_tree_counts_the_solvers_hot_rows(capsys):
    """``pokerbot tree --hot-syncs`` counts the hot rows the workers exchange: the same
    entries as the solver's table layout (short20's preflop and flop)."""
    from solver.training.dealt import make_dealt_problem
    from solver.training.sampled import TableLayout

    layout = TableLayout.build(make_dealt_problem("holdem.nolimit.2p.short20", "1p,cap1"), "bucket")
    hot = cluster_deltas.hot_entries(layout)
    argv = ["tree", "holdem.nolimit.2p.short20", "--betting", "1p,cap1", "--algo", "es", "--workers", "2"]
    assert main([*argv, "--hot-syncs", "10", "--json"]) == 0
    c = json.loads(capsys.readouterr().out)["cluster"]
    assert c["hot_entries"] == hot.stop - hot.start > 0 and c["hot_syncs"] == 10
    assert c["hot_bytes_per_round"] == 10 * 2 * 2 * 2 * c["hot_entries"] * 4
    assert main([*argv, "--hot-syncs", "10"]) == 0
    text = capsys.readouterr().out
    assert f"({c['hot_entries']:,} entries: a step's start, deltas and sum)" in text
    assert "(10 exchanges, in and out through the actor's link)" in text


def test_matches_the_cluster_module():
    """The plan's constants are the cluster's: its default round, and a dense delta's
    4 bytes an entry (a sparse one is smaller)."""
    assert SYNC_SECONDS == cluster.SYNC_SECONDS
    old = np.zeros(LEDUC_ENTRIES, np.float64)
    dense = cluster_deltas.encode_delta(old + 1.0, old)
    assert dense[0] == "dense" and cluster_deltas.delta_bytes(dense) == LEDUC_ENTRIES * DELTA_BYTES
    new = old.copy()
    new[: LEDUC_ENTRIES // 2 - 1] = 1.0
    sparse = cluster_deltas.encode_delta(new, old)
    assert sparse[0] == "sparse" and cluster_deltas.delta_bytes(sparse) < LEDUC_ENTRIES * DELTA_BYTES


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"workers": 0}, "workers"),
        ({"workers": 2.0}, "workers"),
        ({"workers": True}, "workers"),
        ({"workers": 2, "sync_seconds": 0}, "sync seconds"),
        ({"workers": 2, "sync_seconds": float("inf")}, "sync seconds"),
    ],
)
def test_estimate_refuses(kwargs, message):
    with pytest.raises(ValueError, match=message):
        cluster_estimate(_leduc(), **kwargs)


def test_estimate_refuses_vector_algorithms():
    with pytest.raises(ValueError, match="sampled"):
        cluster_estimate(_leduc("cfr+"), workers=2)


def test_format_seconds():
    assert [format_seconds(s) for s in (27.9552e-6, 0.0042, 1.354, 150, 11160)] == [
        "28 µs", "4.2 ms", "1.35 s", "2.5 min", "3.1 h",
    ]


def test_tree_cli_text(capsys):
    argv = ["tree", "leduc.limit.2p", "--algo", "es", "--workers", "2"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("cluster:"))
    text = lines[start:]
    assert text[0] == (
        "cluster: 2 workers x 1 thread, rounds of 5 s; worst case: dense deltas, one node per worker"
    )
    labels = [line.split("  ")[1].strip() for line in text[1:]]
    assert labels == [
        "worker: as one machine", "worker: tables in", "worker: deltas out",
        "worker total", "driver total", "round out", "round in", "network",
        "a round at 1 Gbit/s", "a round at 10 Gbit/s",
    ]
    body = "\n".join(text)
    assert "8.53 KiB  (both tables, in its node's object store)" in body  # 8,736 B
    assert "17.1 KiB  (both tables to each of 2 worker nodes)" in body  # 17,472 B
    assert "34.1 KiB  (a round: 0.00699 MB/s = 5.59e-05 Gbit/s" in body  # 34,944 B / 5 s
    assert "280 µs  (0.0056% of a 5 s round)" in body
    assert "28 µs  (0.00056% of a 5 s round)" in body


def test_tree_cli_json(capsys):
    argv = ["tree", "leduc.limit.2p", "--algo", "os", "--threads", "2", "--dtype", "float64"]
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cluster"] is None
    assert main([*argv, "--workers", "3", "--sync-seconds", "0.25", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    c = doc["cluster"]
    assert (c["workers"], c["threads"], c["algorithm"], c["dtype"]) == (3, 2, "os", "float64")
    assert c["entries"] == LEDUC_ENTRIES and c["sync_seconds"] == 0.25
    assert c["worker"]["single_machine_bytes"] == doc["training_memory"]["total_bytes"]
    assert c["bytes_out_per_round"] == 3 * 2 * 1092 * 8
    assert c["bytes_in_per_round"] == 3 * 2 * 1092 * 4
    assert c["bytes_per_second"] == pytest.approx(3 * 26208 / 0.25)


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--algo", "cfr+", "--workers", "2"], "--workers applies to the sampled algorithms"),
        (["--algo", "deep", "--workers", "2"], "deep trains on one machine"),
        (["--algo", "es", "--workers", "0"], "--workers 0: at least 1"),
        (["--algo", "es", "--workers", "2", "--sync-seconds", "0"], "--sync-seconds 0"),
        (["--algo", "es", "--workers", "2", "--sync-seconds", "-1"], "--sync-seconds -1"),
        (["--algo", "es", "--sync-seconds", "3"], "--sync-seconds applies with --workers"),
        (["--algo", "es", "--hot-syncs", "3"], "--hot-syncs applies with --workers"),
        (["--algo", "es", "--workers", "2", "--hot-syncs", "-1"], "--hot-syncs -1: at least 0"),
    ],
)
def test_tree_cli_refuses(extra, message, capsys):
    assert main(["tree", "leduc.limit.2p", *extra]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pokerbot tree: error:") and message in err[0]
    assert captured.out == ""
