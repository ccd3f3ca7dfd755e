"""Benchmark of strategy files (solver.strategy_io, format 3): what one byte per
probability costs, and how fast files open.

1. **Quantization**, per game, in one process on one trained strategy:

   * ``leduc``: ``leduc.limit.2p`` (lossless buckets) solved by CFR+ (20,000 iterations;
     ``--quick`` 2,000);
   * ``short20``: ``holdem.nolimit.2p.short20`` with betting ``1p,cap1`` over a card
     abstraction of 10/20/20/20 buckets built in a temporary directory, trained by
     external-sampling MCCFR, seeded, for a fixed number of iterations (5,000,000;
     ``--quick`` 500,000). (``1p,a`` is not used: the abstract best response walks the
     whole tree once per level of the responder's decisions, several minutes per
     evaluation on this machine.)

   Both are trained as ``pokerbot train`` trains them
   (:func:`solver.training.run.run_training`: the sampled tables float32, dealing from
   the deck where the game's deals are too many to list).

   For each: exploitability (chips per game, and mbb/game) of the float policy as
   trained (``float``), and of the policy read back from the ``u8`` and ``f32`` files
   (:meth:`StrategyFile.to_strategy`), in the abstract game and in the real game
   (:func:`solver.evaluation.best_response.abstract_and_real_exploitability`); the largest
   probability change of the stored policy (``max_abs_dp``); file sizes (``bytes``);
   and open times (``open_s``: :func:`open_playable` and the first access of ``.tree``,
   median of 5).

2. **A ~140 MB file** (``large``): a random uint8 policy over the lossless buckets
   (suit classes) of ``holdem.nolimit.2p.short20`` with betting
   ``0.5p,1p,a;1p,a;1p,a;a`` (141,380,545 table entries),
   written by :func:`solver.strategy_io.save_policy` (no chance layer is built). With the
   file in the page cache (read once first): ``open_s_median``, 5 opens with the sha256
   verification (target <= 0.2 s), and ``sha256_s_median``, hashing the file alone (the
   floor of an open); ``first_decision_s``: in a fresh process with numba's cache warm,
   open + build the player (the tree is rebuilt) + answer one dealer line (parse, act,
   format the response), median of 3 (target <= 1 s), with the process's import time
   beside it; ``cold_first_decision_s``: the same with an empty ``NUMBA_CACHE_DIR``
   (every kernel it needs compiled).

The machine may be shared: ``machine`` records the load average before and after.
Progress goes to stderr; the last line of stdout is one JSON object.

Usage: ``python bench/strategy_file.py [--quick] [--seed S]``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LARGE_GAME = "holdem.nolimit.2p.short20"
LARGE_BETTING = "0.5p,1p,a;1p,a;1p,a;a"


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------- quantization


def figures(strategy: Any) -> dict[str, Any]:
    from solver.evaluation.best_response import abstract_and_real_exploitability

    t = time.perf_counter()
    a, r = abstract_and_real_exploitability(strategy)
    return {
        "abstract": a.exploitability, "real": r.exploitability,
        "abstract_mbb": a.mbb_per_game, "real_mbb": r.mbb_per_game,
        "eval_s": round(time.perf_counter() - t, 2),
    }


def median_open(path: Path, tables: Path | None, n: int = 5) -> tuple[float, list[float]]:
    from solver.play.player import open_playable

    times = []
    for _ in range(n):
        t = time.perf_counter()
        sf = open_playable(path, tables=tables)
        _ = sf.tree
        times.append(time.perf_counter() - t)
    return statistics.median(times), times


def compare(strategy: Any, name: str, work: Path, tables: Path | None) -> dict[str, Any]:
    """Exploitability of the float policy and of the u8 and f32 files' policies."""
    import numpy as np

    from solver.play.player import open_playable
    from solver.strategy_io import save_strategy

    out: dict[str, Any] = {"iterations": int(strategy.iterations), "algorithm": strategy.algorithm,
                           "table_entries": int(strategy.policy.shape[0])}
    log(f"{name}: evaluating the float policy")
    out["float"] = figures(strategy)
    log(f"{name}: float {out['float']}")
    out["bytes"], out["open_s"], out["open_s_all"] = {}, {}, {}
    for prec in ("u8", "f32"):
        path = work / f"{name}.{prec}.strategy"
        save_strategy(path, strategy, prec)
        out["bytes"][prec] = path.stat().st_size
        med, all_ = median_open(path, tables)
        out["open_s"][prec] = med
        out["open_s_all"][prec] = [round(x, 5) for x in all_]
        stored = open_playable(path, tables=tables).to_strategy()
        f = figures(stored)
        f["max_abs_dp"] = float(np.max(np.abs(stored.policy - strategy.policy)))
        out[prec] = f
        log(f"{name}: {prec} {f} ({out['bytes'][prec]:,} bytes, open {med:.4f} s)")
    for k in ("abstract", "real"):
        base = out["float"][k]
        out[f"u8_minus_float_{k}_mbb"] = out["u8"][f"{k}_mbb"] - out["float"][f"{k}_mbb"]
        out[f"u8_over_float_{k}"] = out["u8"][k] / base if base else None
    return out


def _train(game: str, algorithm: str, iterations: int, **kw: Any) -> Any:
    """The run as ``pokerbot train`` makes it (:func:`solver.training.run.run_training`),
    without its evaluation: :func:`compare` evaluates the strategy itself."""
    from solver.training.config import AlgorithmConfig, Budget, EvaluationConfig, TrainingConfig
    from solver.training.run import run_training

    config = TrainingConfig(
        game,
        AlgorithmConfig(algorithm),
        Budget(iterations=iterations),
        evaluation=EvaluationConfig(enabled=False),
        **kw,
    )
    return run_training(config)


def run_leduc(quick: bool, work: Path) -> dict[str, Any]:
    iters = 2_000 if quick else 20_000
    log(f"leduc: CFR+ {iters:,} iterations")
    t = time.perf_counter()
    run = _train("leduc.limit.2p", "cfr+", iters)
    res = compare(run.strategy, "leduc", work, None)
    res["train_s"] = round(time.perf_counter() - t, 2)
    return res


def run_short20(quick: bool, seed: int, work: Path) -> dict[str, Any]:
    from abstraction.build import build_abstraction
    from abstraction.plan import AbstractionParams
    from poker.game import load_game

    game = load_game("holdem.nolimit.2p.short20")
    params = AbstractionParams(buckets=(10, 20, 20, 20), seed=seed)
    ab_dir = work / "short20.abstraction"
    t = time.perf_counter()
    build_abstraction(game, params, ab_dir)
    build_s = time.perf_counter() - t
    betting = "1p,cap1"
    iters = 500_000 if quick else 5_000_000
    log(f"short20: abstraction built in {build_s:.1f} s; ES {iters:,} iterations, seed {seed}")
    run = _train(game.name, "es", iters, betting=betting, abstraction=ab_dir, seed=seed)
    res = compare(run.listed_strategy(), "short20", work, ab_dir)
    res.update({"betting": betting, "buckets": list(params.buckets), "abstraction_build_s": round(build_s, 2),
                "train_s": round(run.seconds, 2)})
    return res


# --------------------------------------------------------------------- the large file


def run_large(quick: bool, seed: int, work: Path) -> dict[str, Any]:
    from bench._fulldeck import child, first_line, random_table
    from poker.game import load_game
    from solver.chance import lossless_bucket_counts
    from solver.strategy_io import open_strategy, save_policy
    from solver.tree import build_tree

    game = load_game(LARGE_GAME)
    t = time.perf_counter()
    tree = build_tree(game, LARGE_BETTING)
    counts = [int(c) for c in lossless_bucket_counts(game)]
    table, _, size = random_table(tree, counts, seed)
    path = work / "large.u8.strategy"
    save_policy(path, game, LARGE_BETTING, table, training={"algorithm": "random", "seed": seed})
    del table
    log(f"large: {size:,} entries written to {path} ({path.stat().st_size:,} bytes) in "
        f"{time.perf_counter() - t:.1f} s")
    # Into the page cache: read it once.
    with open(path, "rb") as fh:
        while fh.read(1 << 24):
            pass
    sha = []
    for _ in range(5):
        t = time.perf_counter()
        with open(path, "rb") as fh:
            h = hashlib.sha256()
            while chunk := fh.read(1 << 24):
                h.update(chunk)
        sha.append(time.perf_counter() - t)
    opens = []
    for _ in range(5):
        t = time.perf_counter()
        sf = open_strategy(path, game=game)
        opens.append(time.perf_counter() - t)
        del sf
    trees = []
    for _ in range(3):
        sf = open_strategy(path, game=game)
        t = time.perf_counter()
        _ = sf.tree
        trees.append(time.perf_counter() - t)
        del sf
    log(f"large: open {statistics.median(opens):.3f} s (sha256 alone {statistics.median(sha):.3f} s), "
        f"tree {statistics.median(trees):.3f} s")
    line = first_line(game, seed)
    log(f"large: first decision on {line!r}")
    child(path, line, LARGE_GAME)  # numba's cache warm for what the player needs
    warm = [child(path, line, LARGE_GAME) for _ in range(3)]
    warm.sort(key=lambda r: r["first_decision_s"])
    mid = warm[len(warm) // 2]
    log(f"large: warm first decision {mid['first_decision_s']:.3f} s "
        f"(open {mid['open_s']:.3f}, player {mid['player_s']:.3f}, act {mid['act_s']:.3f}; "
        f"imports {mid['imports_s']:.2f} s before)")
    cold = child(path, line, LARGE_GAME, cold=True)
    log(f"large: cold first decision {cold['first_decision_s']:.3f} s")
    return {
        "game": LARGE_GAME, "betting": LARGE_BETTING, "table_entries": size, "bytes": path.stat().st_size,
        "open_s_median": statistics.median(opens), "open_s_all": [round(x, 4) for x in opens],
        "sha256_s_median": statistics.median(sha), "tree_s_median": statistics.median(trees),
        "first_decision_s": mid["first_decision_s"],
        "first_decision_parts": {k: mid[k] for k in ("open_s", "player_s", "act_s")},
        "first_decision_s_all": [round(r["first_decision_s"], 4) for r in warm],
        "imports_s": mid["imports_s"], "process_wall_s": mid["process_wall_s"],
        "cold_first_decision_s": cold["first_decision_s"],
        "cold_first_decision_parts": {k: cold[k] for k in ("open_s", "player_s", "act_s")},
        "cold_imports_s": cold["imports_s"], "cold_process_wall_s": cold["process_wall_s"],
        "line": line, "response": mid["response"],
        "targets": {"open_s_median": 0.2, "first_decision_s": 1.0},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer iterations")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", nargs="*", choices=("leduc", "short20", "large"), default=None)
    args = ap.parse_args()
    parts = args.only or ["leduc", "short20", "large"]
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-strategy-file-") as tmp:
        work = Path(tmp)
        if "leduc" in parts:
            out["leduc"] = run_leduc(args.quick, work)
        if "short20" in parts:
            out["short20"] = run_short20(args.quick, args.seed, work)
        if "large" in parts:
            out["large"] = run_large(args.quick, args.seed, work)
    out["quick"] = args.quick
    out["seconds"] = round(time.perf_counter() - t0, 1)
    out["machine"] = {"cpus": os.cpu_count(), "python": platform.python_version(),
                      "loadavg_before": list(load0), "loadavg_after": list(os.getloadavg())}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
