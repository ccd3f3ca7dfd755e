"""Benchmark of successor tables (``abstraction/index_tables.py``) against the hand
indexer, where dealt training uses them: lossless classes of a small deck.

Per game (``holdem.nolimit.2p.short20`` and ``leduc.nolimit.2p``; ``--quick``: 20-card
hold'em only, fewer hands and iterations), in one process, on the same input:

* ``build_s``: building the tables (kernels already compiled) and ``entries``;
* ``index_ns``: one hand's index on every street, by the indexer (one call a street,
  as the kernel made them) and by the tables, over the same seeded random hands, and
  ``index_ratio`` (indexer / tables);
* ``es_it_per_cpu_s``: external sampling on ``--betting`` (float32, one thread, seed 1),
  dealing with and without the tables, ``--iterations`` each, alternated ``--repeats``
  times (median), and ``es_ratio``; ``bit_identical``: the two runs' tables are equal.

The last line of stdout is one JSON object.

Usage: ``python bench/index_tables.py [--quick] [--iterations N] [--repeats R]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GAMES = {"holdem.nolimit.2p.short20": "1p,cap1", "leduc.nolimit.2p": "1p,a"}


def _index_costs(game: str, hands: int) -> dict:
    import numpy as np
    from numba import njit

    from abstraction.index_tables import build_index_tables, index_rounds
    from abstraction.indexer import index_hand_njit
    from poker.cards import deck_cards
    from solver.chance import lossless_indexer
    from solver.problem import as_game

    @njit(cache=False)
    def by_indexer(tab, cards, n_rounds, out):  # type: ignore[no-untyped-def]
        for i in range(cards.shape[0]):
            for r in range(n_rounds):
                out[i, r] = index_hand_njit(tab, cards[i], r)

    g = as_game(game)
    ix, _ = lossless_indexer(g)
    build_index_tables(ix)  # compiled
    t0 = time.perf_counter()
    tables = build_index_tables(ix)
    build_s = time.perf_counter() - t0
    assert tables is not None
    deck = np.asarray(deck_cards(g.num_ranks, g.num_suits))
    rng = np.random.default_rng(1)
    cards = np.stack([rng.choice(deck, ix.num_cards(ix.num_rounds - 1), replace=False) for _ in range(hands)])
    cards = cards.astype(np.int64)
    tab = np.ascontiguousarray(ix.tables, np.int64)
    ref = np.empty((hands, ix.num_rounds), np.int64)
    by_indexer(tab, cards[:10], ix.num_rounds, ref[:10])
    index_rounds(tables, cards[:10])
    t_ix, t_tab = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        by_indexer(tab, cards, ix.num_rounds, ref)
        t_ix.append((time.perf_counter() - t0) / hands * 1e9)
        t0 = time.perf_counter()
        got = index_rounds(tables, cards)
        t_tab.append((time.perf_counter() - t0) / hands * 1e9)
    assert np.array_equal(got, ref)
    a, b = statistics.median(t_ix), statistics.median(t_tab)
    return {"entries": int(tables.table.size), "build_s": round(build_s, 3),
            "index_ns": {"indexer": round(a, 1), "tables": round(b, 1)}, "index_ratio": round(a / b, 2)}  # fmt: skip


def _es_speed(game: str, betting: str, iterations: int, repeats: int) -> dict:
    import numpy as np

    from solver.training.algorithms import make_training_solver
    from solver.training.dealt import make_dealt_problem
    from solver.training.sampled import SamplingOptions

    solvers = {}
    for tabled in (True, False):
        s = make_training_solver(make_dealt_problem(game, betting, index_tables=tabled), "es",
                                 SamplingOptions(seed=1, dtype="float32"))  # fmt: skip
        s.iterate(1000)  # compiled
        solvers[tabled] = s
    rates: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(repeats):
        for tabled, s in solvers.items():
            c0 = time.process_time()
            s.iterate(iterations)
            rates[tabled].append(iterations / (time.process_time() - c0))
    with_t, without = statistics.median(rates[True]), statistics.median(rates[False])
    same = all(np.array_equal(getattr(solvers[True], k), getattr(solvers[False], k)) for k in ("regrets", "avg_sums"))
    return {"betting": betting, "es_it_per_cpu_s": {"tables": round(with_t), "indexer": round(without)},
            "es_ratio": round(with_t / without, 3), "bit_identical": bool(same)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="20-card hold'em only, fewer hands and iterations")
    ap.add_argument("--iterations", type=int, default=None, help="iterations a timed run (default 5,000,000)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    import os

    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    games = ["holdem.nolimit.2p.short20"] if args.quick else list(GAMES)
    iterations = args.iterations or (1_000_000 if args.quick else 5_000_000)
    hands = 200_000 if args.quick else 1_000_000
    out = {"iterations": iterations, "repeats": args.repeats, "games": {}}
    for game in games:
        entry = _index_costs(game, hands)
        entry.update(_es_speed(game, GAMES[game], iterations, args.repeats))
        out["games"][game] = entry
        print(f"[index_tables] {game}: {entry}", file=sys.stderr, flush=True)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
