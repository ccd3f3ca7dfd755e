"""Uniform rows of a stored strategy (``solver.play.rows``), the player's count of its
decisions on them, and the preflop order figure (``solver.evaluation.preflop``)."""

from __future__ import annotations

import json
from itertools import permutations
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from agent.cli import main
from agent.commands import inspect as insp
from poker.cards import parse_cards
from poker.game import load_game
from solver.evaluation.preflop import average_ranks, equity_vs_random, rank_correlation
from solver.play.rows import row_is_uniform, uniform_rows
from solver.strategy_io import dumps_policy
from solver.tree import DECISION, build_tree, table_offsets

LEDUC = load_game("leduc.nolimit.2p")
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "row, quantized, expected",
    [
        ([85, 85, 85], True, True),
        ([86, 85, 84], True, False),  # two steps apart
        ([128, 127], True, True),
        ([64, 64, 64, 63], True, True),
        ([255, 0], True, False),
        ([7], True, False),  # one action: nothing to choose
        ([1 / 3, 1 / 3, 1 / 3], False, True),
        ([0.34, 0.33, 0.33], False, False),  # 0.01 apart, more than a 255th
        ([2.0, 2.001], False, True),  # unnormalized: steps scale with the sum
        ([0.0, 0.0], False, True),  # never written: played uniformly
    ],
)
def test_row_is_uniform(row, quantized, expected):
    assert row_is_uniform(row, quantized) is expected


def _table(tree, offset, size, n_buckets, dtype, seed):
    """A random table (uint8 rows summing to 255, or float rows) with a third of its rows
    made uniform."""
    rng = np.random.default_rng(seed)
    table = np.zeros(size, dtype=dtype)
    for node in np.flatnonzero(tree.kind == DECISION):
        n = int(tree.n_child[node])
        for b in range(n_buckets[int(tree.street[node])]):
            o = int(offset[node]) + b * n
            if rng.random() < 1 / 3 and dtype == np.uint8:
                row = np.full(n, 255 // n)
                row[: 255 - (255 // n) * n] += 1  # the remainder, one unit each
            elif rng.random() < 1 / 3:
                row = np.full(n, 0.25)
            else:
                row = rng.dirichlet(np.full(n, 0.5))
                if dtype == np.uint8:
                    row = np.floor(row * 255)
                    row[0] += 255 - row.sum()
            table[o : o + n] = row
    return table


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_uniform_rows_match_brute_force(dtype):
    tree = build_tree(LEDUC, "0.5p,1p,a")
    n_buckets = [3, 15]
    offset, size = table_offsets(tree, n_buckets)
    table = _table(tree, offset, size, n_buckets, dtype, seed=4)
    counts = uniform_rows(tree, offset, table, n_buckets)
    rows, uniform = [0, 0], [0, 0]
    for node in range(tree.n_nodes):
        if tree.kind[node] != DECISION:
            continue
        n, s = int(tree.n_child[node]), int(tree.street[node])
        for b in range(n_buckets[s]):
            o = int(offset[node]) + b * n
            rows[s] += 1
            uniform[s] += row_is_uniform(table[o : o + n].tolist(), dtype == np.uint8)
    assert counts.rows == rows and counts.uniform == uniform
    assert 0 < uniform[0] < rows[0] and 0 < uniform[1] < rows[1]
    assert counts.shares == pytest.approx([u / r for u, r in zip(uniform, rows)])


@pytest.mark.parametrize("kind", ["uniform", "one-hot", "random"])
def test_player_counts_its_decisions_on_uniform_rows(kind, tmp_path, capsys):
    """A match reports, per strategy player, the decisions drawn from a uniform row:
    every decision the tree answers when every row is uniform, none when every row is
    one-hot or random (random rows are never within a 255th of equal)."""
    tree = build_tree(LEDUC, "0.5p,1p,a")
    n_buckets = [3, 15]
    offset, size = table_offsets(tree, n_buckets)
    policy = np.random.default_rng(2).random(size)
    if kind == "uniform":
        policy[:] = 1.0
    elif kind == "one-hot":
        for node in np.flatnonzero(tree.kind == DECISION):
            n, o = int(tree.n_child[node]), int(offset[node])
            k = n_buckets[int(tree.street[node])]
            block = np.zeros((k, n))
            block[:, -1] = 1.0
            policy[o : o + k * n] = block.ravel()
    path = tmp_path / "p.strategy"
    path.write_bytes(dumps_policy(LEDUC, "0.5p,1p,a", policy))
    argv = ["match", "leduc.nolimit.2p", "--players", f"strategy:{path}", "call", "--hands", "40",
            "--duplicate", "--seed", "4", "--quiet", "--json"]
    assert main(argv) == 0
    t = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["players"][0]["translation"]
    answered = t["decisions"] - t["fallback"]
    assert answered > 0
    assert t["uniform"] == (answered if kind == "uniform" else 0)


def test_average_ranks_and_rank_correlation_against_scipy():
    rng = np.random.default_rng(1)
    for _ in range(50):
        n = int(rng.integers(2, 30))
        x = rng.integers(0, 5, n).astype(float)  # many ties
        y = x + rng.normal(0, 2, n)
        assert average_ranks(x) == pytest.approx(scipy.stats.rankdata(x))
        if np.ptp(x) > 0:
            assert rank_correlation(x, y) == pytest.approx(scipy.stats.spearmanr(x, y).statistic)
    assert rank_correlation([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert rank_correlation([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert np.isnan(rank_correlation([1, 1, 1], [1, 2, 3]))
    with pytest.raises(ValueError):
        rank_correlation([1, 2], [1, 2, 3])


def test_rank_correlation_brute_force_without_ties():
    """Without ties rho = 1 - 6 sum d^2 / (n (n^2 - 1)), over every ordering of 5."""
    x = [1.0, 2.0, 3.0, 4.0, 5.0]
    for perm in permutations(x):
        d2 = sum((a - b) ** 2 for a, b in zip(x, perm))
        assert rank_correlation(x, perm) == pytest.approx(1 - 6 * d2 / (5 * 24))


def test_equity_vs_random_knows_the_extremes():
    """Preflop all-in equities against a random hand: AA 85.2%, KK 82.4%, 72o 34.6%
    (the classic tables), within sampling error of 1,000 boards."""
    game = load_game("holdem.nolimit.2p.reverse_blinds")
    aa, kk, seven_two = equity_vs_random(game, [parse_cards("AsAh"), parse_cards("KsKh"), parse_cards("7s2h")])
    assert aa == pytest.approx(0.852, abs=0.02)
    assert kk == pytest.approx(0.824, abs=0.02)
    assert seven_two == pytest.approx(0.346, abs=0.02)


def test_grid_order_is_one_for_a_strategy_that_opens_by_equity(monkeypatch):
    """A table whose raise probability grows with the class's equity correlates 1; one
    that grows against it, -1."""
    game = load_game("holdem.nolimit.2p.reverse_blinds")
    tree = build_tree(game, "1p,a;1p,a")
    offset, size = table_offsets(tree, [169, 1, 1, 1])
    classes = insp.grid_classes()
    monkeypatch.setattr(insp, "_class_equity", lambda g: np.linspace(0.3, 0.9, 169)[::-1])
    from abstraction.indexer import HandIndexer

    idx = HandIndexer(rounds=[2])
    n = int(tree.n_child[0])
    for sign in (1, -1):
        table = np.zeros(size)
        for k, (*_, cards) in enumerate(classes):
            b = idx.index(list(cards))
            raise_p = 0.05 + 0.9 * (168 - k) / 168 if sign == 1 else 0.05 + 0.9 * k / 168
            row = table[offset[0] + b * n : offset[0] + (b + 1) * n]
            row[:] = (1 - raise_p) / 2
            row[2:] = raise_p / (n - 2)
        doc = insp.preflop_grid(tree, offset, table, lambda s, h, bd: idx.index(list(h)), "")
        assert doc["order"]["raise_vs_equity"] == pytest.approx(sign * 1.0)
        assert [e["equity"] for e in doc["grid"]] == pytest.approx(np.linspace(0.3, 0.9, 169)[::-1], abs=1e-4)


@pytest.mark.parametrize("name", ["leduc.nolimit.2p.strategy", "leduc.limit.2p.strategy"])
def test_inspect_reports_uniform_rows(name, capsys):
    path = ROOT / "strategies" / name
    assert main(["inspect", str(path)]) == 0
    text = capsys.readouterr().out
    line = next(ln for ln in text.splitlines() if ln.startswith("rows"))
    assert main(["inspect", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    u = doc["uniform_rows"]
    assert len(u["rows"]) == 2 and all(0 <= a <= b for a, b in zip(u["uniform"], u["rows"]))
    assert f"({u['uniform'][1]:,}/{u['rows'][1]:,})" in line
