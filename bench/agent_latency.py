"""Benchmark of the blueprint player's decision time, from the dealer's line to the answer.

Per game, the strategy player (:class:`agent.strategy_player.StrategyPlayer`) plays the
``random`` bot (:class:`agent.bots.RandomBot`: the reference example_player, raise-to
uniform over the legal range, so most of its bets are off the abstract tree) in this
process, through the project's dealer and clients without sockets
(:func:`bench._fulldeck.match_decisions`: :class:`agent.protocol.dealer_state.DealerMatch` deals from a
seed and writes every line as the dealer would; each seat's
:class:`agent.protocol.client_state.ClientConnection` reads it). A decision is timed from the bytes
of the line the player must answer to the bytes of its answer: reading the line into a
MatchState, ``player.act`` (following the real betting through the abstract tree,
translating the opponent's bets, bucketing the cards, reading the policy, sizing the
real bet) and formatting the response. At least 10,000 decisions per game (``--quick``:
1,000), after a warm-up match of other deals; p50, p99 and max in ms of wall time, and
of this thread's CPU time (``cpu_*``: without what the machine's other load took).

Games:

* ``leduc.nolimit.2p``: lossless buckets, betting ``0.5p,1p,a``, CFR+ for a few seconds;
* ``holdem.nolimit.2p.short20``: a 10/20/20/20 card abstraction built in a temporary
  directory, betting ``1p,a``, external-sampling MCCFR, seeded; played with the
  abstraction's tables and without (buckets computed from the model in the file);
* both trained and written as ``pokerbot train`` does it
  (:func:`solver.training.run.run_training`: the sampled tables float32, dealing from
  the deck where the game's deals are too many to list);
* ``holdem.nolimit.2p.reverse_blinds`` (full deck): a random uint8 policy over a
  169/1000/1000/1000 card abstraction fitted by the project's own build
  (:data:`bench._fulldeck.FULL_DECK_PARAMS`, cached under ``/tmp/pokerbot-bench``, about
  8 minutes the first time) and betting ``0.5p,1p,a;1p,a`` (26,973 nodes), written by
  :func:`solver.strategy_io.save_policy`; played with the bucket tables
  (``open_playable(..., tables=DIR)``) and without (every bucket computed from the
  cards: E[HS] histogram features and the nearest of 1000 centroids). For the full deck
  also the first decision of a fresh process (open, player, one answer) with numba's
  cache warm and with an empty cache.

``open_s``: :func:`open_playable` (checksum, model, tables); ``player_s``: building the player
(the betting tree is rebuilt from the game and betting). Targets: p50 <= 1 ms, p99 <= 20 ms.

The machine may be shared: ``machine`` records the load average before and after.
Progress goes to stderr; the last line of stdout is one JSON object.

Usage: ``python bench/agent_latency.py [--quick] [--seed S] [--decisions N]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench._fulldeck import (  # noqa: E402
    FULL_DECK_BETTING,
    FULL_DECK_GAME,
    FULL_DECK_PARAMS,
    cached_abstraction,
    child,
    first_line,
    log,
    match_decisions,
    random_table,
)

TARGET_P50_MS = 1.0
TARGET_P99_MS = 20.0


def summary(samples: list[float]) -> dict[str, float]:
    ms = np.asarray(samples) * 1000.0
    return {
        "p50_ms": float(np.percentile(ms, 50)),
        "p90_ms": float(np.percentile(ms, 90)),
        "p99_ms": float(np.percentile(ms, 99)),
        "max_ms": float(ms.max()),
        "mean_ms": float(ms.mean()),
    }


def measure(path: Path, game: Any, *, tables: Path | None, decisions: int, seed: int) -> dict[str, Any]:
    """Open ``path``, build the player and time ``decisions`` decisions against the random bot."""
    from agent.bots import RandomBot
    from agent.strategy_player import StrategyPlayer
    from solver.play.player import open_playable

    t = time.perf_counter()
    sf = open_playable(path, game=game, tables=tables)
    open_s = time.perf_counter() - t
    t = time.perf_counter()
    player = StrategyPlayer(sf, seed=seed)
    player_s = time.perf_counter() - t
    tables_used = bool(getattr(sf.abstraction, "tables_used", False)) if sf.abstraction is not None else None
    if tables is not None and not tables_used:
        raise SystemExit(f"{path}: tables at {tables} were not attached ({sf.abstraction.tables_note})")
    # Warm-up on other deals (kernels loaded, caches of the parse path filled).
    warm = match_decisions(game, player, RandomBot(random.Random(seed + 1)), decisions=200, seed=seed + 1000)
    first_ms = warm["wall"][0] * 1000.0
    player = StrategyPlayer(sf, seed=seed)  # fresh hand state and counts for the timed match
    t = time.perf_counter()
    res = match_decisions(game, player, RandomBot(random.Random(seed)), decisions=decisions, seed=seed)
    elapsed = time.perf_counter() - t
    wall, cpu = res["wall"], res["cpu"]
    # Which street each timed decision was on: the betting field's '/' count.
    streets = [line.split(":")[3].count("/") for line in res["lines"]]
    by_street = {}
    for s in sorted(set(streets)):
        sel = [w for w, st in zip(wall, streets) if st == s]
        by_street[str(s)] = {"decisions": len(sel), **{k: v for k, v in summary(sel).items() if k != "mean_ms"}}
    out: dict[str, Any] = {
        "decisions": len(wall),
        **summary(wall),
        **{f"cpu_{k}": v for k, v in summary(cpu).items()},
        "over_20ms": int(sum(1 for w in wall if w > 0.020)),
        "by_street": by_street,
        "open_s": open_s,
        "player_s": player_s,
        "first_in_process_ms": first_ms,
        "seconds": round(elapsed, 2),
        "file_bytes": path.stat().st_size,
        "tables": tables_used,
        "translation": player.counts.to_dict(),
    }
    ok = out["p50_ms"] <= TARGET_P50_MS and out["p99_ms"] <= TARGET_P99_MS
    out["meets_targets"] = ok
    log(f"  {len(wall):,} decisions in {elapsed:.1f} s: p50 {out['p50_ms']:.3f} ms, p99 {out['p99_ms']:.3f} ms, "
        f"max {out['max_ms']:.1f} ms (cpu p99 {out['cpu_p99_ms']:.3f} ms); open {open_s:.3f} s, "
        f"player {player_s:.3f} s")
    return out


def _train(config: Any) -> int:
    """Train and write the strategy file as ``pokerbot train`` does (nothing evaluated:
    only the player's speed is measured here); the iterations done."""
    from solver.training.run import run_training

    return run_training(config).iterations


def leduc(work: Path, quick: bool, seed: int, decisions: int) -> dict[str, Any]:
    from poker.game import load_game
    from solver.training.config import AlgorithmConfig, Budget, EvaluationConfig, TrainingConfig

    name, betting = "leduc.nolimit.2p", "0.5p,1p,a"
    game = load_game(name)
    path = work / "leduc.nolimit.u8.strategy"
    config = TrainingConfig(
        name,
        AlgorithmConfig("cfr+"),
        Budget(seconds=1.0 if quick else 5.0),
        out=path,
        betting=betting,
        evaluation=EvaluationConfig(enabled=False),
    )
    iterations = _train(config)
    log(f"{name}: CFR+ {iterations:,} iterations, betting {betting}")
    res = measure(path, game, tables=None, decisions=decisions, seed=seed)
    res.update({"betting": betting, "training": {"algorithm": "cfr+", "iterations": iterations}})
    return {name: res}


def short20(work: Path, quick: bool, seed: int, decisions: int) -> dict[str, Any]:
    from abstraction.build import build_abstraction
    from abstraction.plan import AbstractionParams
    from poker.game import load_game
    from solver.training.config import AlgorithmConfig, Budget, EvaluationConfig, TrainingConfig

    name, betting = "holdem.nolimit.2p.short20", "1p,a"
    game = load_game(name)
    ab_dir = work / "short20.abstraction"
    build_abstraction(game, AbstractionParams(buckets=(10, 20, 20, 20), seed=seed), ab_dir)
    iters = 200_000 if quick else 2_000_000
    path = work / "short20.u8.strategy"
    config = TrainingConfig(
        name,
        AlgorithmConfig("es"),
        Budget(iterations=iters),
        out=path,
        betting=betting,
        abstraction=ab_dir,
        seed=seed,
        evaluation=EvaluationConfig(enabled=False),
    )
    _train(config)
    log(f"{name}: ES {iters:,} iterations over buckets 10/20/20/20, betting {betting}; with tables")
    out = {}
    info = {"betting": betting, "buckets": [10, 20, 20, 20], "training": {"algorithm": "es", "iterations": iters}}
    out[name] = {**measure(path, game, tables=ab_dir, decisions=decisions, seed=seed), **info}
    log(f"{name}: without tables (buckets from the model)")
    out[f"{name}.no_tables"] = {**measure(path, game, tables=None, decisions=decisions, seed=seed), **info}
    return out


def full_deck(work: Path, quick: bool, seed: int, decisions: int) -> dict[str, Any]:
    from poker.game import load_game
    from solver.strategy_io import save_policy
    from solver.tree import build_tree

    game = load_game(FULL_DECK_GAME)
    ab, info = cached_abstraction(game, FULL_DECK_PARAMS)
    t = time.perf_counter()
    tree = build_tree(game, FULL_DECK_BETTING)
    table, _, size = random_table(tree, ab.bucket_counts, seed)
    path = work / "fulldeck.u8.strategy"
    # The file carries the model only: tables are attached at open time, or not.
    save_policy(path, game, FULL_DECK_BETTING, table, abstraction=ab, precision="u8",
                training={"algorithm": "random", "seed": seed})
    log(f"{FULL_DECK_GAME}: random policy, {tree.n_nodes:,} nodes, {size:,} entries, "
        f"{path.stat().st_size:,} bytes, written in {time.perf_counter() - t:.1f} s")
    common = {"betting": FULL_DECK_BETTING, "tree_nodes": tree.n_nodes, "table_entries": size,
              "abstraction": info}
    out: dict[str, Any] = {}
    tables = Path(info["directory"])
    log(f"{FULL_DECK_GAME}: with tables")
    out[f"{FULL_DECK_GAME}.tables"] = {**measure(path, game, tables=tables, decisions=decisions, seed=seed), **common}
    log(f"{FULL_DECK_GAME}: without tables (buckets from the model in the file)")
    out[f"{FULL_DECK_GAME}.no_tables"] = {**measure(path, game, tables=None, decisions=decisions, seed=seed),
                                          **common}
    # A fresh process's first decision (the first line of a match): numba cache warm / empty.
    line = first_line(game, seed)
    for key, tab in (("tables", tables), ("no_tables", None)):
        child(path, line, FULL_DECK_GAME, tables=tab)  # the cache warm for this path
        warm = sorted((child(path, line, FULL_DECK_GAME, tables=tab) for _ in range(3)),
                      key=lambda r: r["first_decision_s"])[1]
        cold = child(path, line, FULL_DECK_GAME, tables=tab, cold=True)
        rec = out[f"{FULL_DECK_GAME}.{key}"]
        rec["fresh_process"] = {
            "line": line,
            "first_decision_s": warm["first_decision_s"],
            "parts": {k: warm[k] for k in ("open_s", "player_s", "act_s")},
            "imports_s": warm["imports_s"],
            "cold_first_decision_s": cold["first_decision_s"],
            "cold_parts": {k: cold[k] for k in ("open_s", "player_s", "act_s")},
            "cold_imports_s": cold["imports_s"],
        }
        log(f"  fresh process ({key}): first decision {warm['first_decision_s']:.3f} s warm, "
            f"{cold['first_decision_s']:.3f} s with an empty numba cache")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1,000 decisions per game, shorter training")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--decisions", type=int, default=None, help="decisions per game (default 10,000)")
    ap.add_argument("--games", nargs="*", choices=("leduc", "short20", "full"), default=None)
    args = ap.parse_args()
    decisions = args.decisions or (1_000 if args.quick else 10_000)
    games = args.games or ["leduc", "short20", "full"]
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-agent-latency-") as tmp:
        work = Path(tmp)
        if "leduc" in games:
            results.update(leduc(work, args.quick, args.seed, decisions))
        if "short20" in games:
            results.update(short20(work, args.quick, args.seed, decisions))
        if "full" in games:
            results.update(full_deck(work, args.quick, args.seed, decisions))
    short = {k: v for k, v in results.items() if not v["meets_targets"]}
    out = {
        "games": results,
        "targets": {"p50_ms": TARGET_P50_MS, "p99_ms": TARGET_P99_MS},
        "short_of_targets": sorted(short),
        "quick": args.quick,
        "seconds": round(time.perf_counter() - t0, 1),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "loadavg_before": list(load0), "loadavg_after": list(os.getloadavg()),
                    "note": "wall-clock figures include time other processes took; cpu_* do not"},
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
