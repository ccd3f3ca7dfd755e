"""Training on Ray workers against Hogwild threads on one machine, full deck.

``pokerbot train --cluster`` (:mod:`solver.training.cluster`) runs two single-threaded
Ray workers (``--cluster local --workers 2``: a Ray instance of this machine) against the
same run with two Hogwild threads, external sampling, seed 1, the same wall time
(``--seconds``, default 300) each, over the full deck's 169/1000/1000/1000 abstraction
(:data:`bench._fulldeck.FULL_DECK_PARAMS`, built once into the bench cache), for each
betting of ``--bettings``: ``1p,cap1`` (313,521 table entries) and the shipped
blueprint's (33,008,731). Per betting:

* ``hogwild`` and ``cluster``: deals, deals/s, and for the cluster its rounds, bytes a
  round and a second, the workers' share of the rounds' wall time in the kernel;
  ``deals_ratio`` = cluster / Hogwild deals per second (the goal: at least 0.8);
* ``h2h``: the exact head-to-head of the cluster's strategy against Hogwild's
  (:func:`solver.evaluation.head_to_head.head_to_head`), ``--boards`` boards (300)
  sampled with seed 1, in mbb/g with its 95% interval (the goal: a half-width of at most
  30 and an interval containing zero or above it);
* ``hogwild_equal_deals`` and ``h2h_cluster_minus_hogwild_equal_deals``: Hogwild again,
  stopped at the cluster's deal count, and the cluster's strategy against it: what the
  merge of the workers' deltas costs apart from the deals the cluster did not make (far
  from convergence, deals decide it: two Hogwild threads stopped at 90 s lost 399 mbb/g
  to the same run at 180 s on the shipped betting).

``--round-seconds S`` sets the cluster runs' rounds (5 s), ``--hot-syncs S`` gives them S
exchanges of the hot rows a round (:func:`solver.training.cluster_deltas.hot_entries`),
``--hot-async`` makes those not wait for the other worker, and ``--deals N`` stops the
runs at N deals instead of ``--seconds`` (so that settings compare at one deal count).
Each cluster run reports where its rounds' time went: ``kernel_share`` and the seconds,
summed over the workers, of copying the round's tables in (``copy_seconds``), encoding
their deltas (``encode_seconds``) and the hot rows' exchanges (``exchange_seconds``), and
the driver's ``put_seconds`` and ``merge_seconds``, while the workers wait.

Then ``sync``: the cluster on ``1p,cap1`` for ``--sweep-seconds`` (60) at each of
``--sync`` round lengths (1, 5 and 20 s): deals/s and bytes/s against the round.

Last, ``model``: the scaling model, from what was measured on the shipped betting (or
the last betting run): a worker's deals/s (the cluster's over its workers), its bytes a
round each way (both float32 tables out; its deltas in, as measured), the driver's merge
rate (bytes of deltas added a second), and for 8, 32 and 128 workers on a 10 Gbit/s
link through the driver, rounds of 5 s: a round's transfer and merge time (rounds are
synchronous, so the workers wait through both), the predicted speedup over one worker
(``workers x 5 / (5 + transfer + merge)``) and the worker count where the waiting equals
the solving (beyond it, more workers add little); and the largest table a 24 GiB worker
holds (:mod:`solver.training.cluster_plan`'s bytes per entry: its own tables, a round's
incoming copy and its deltas).

Prints one JSON object as its last line (and writes it to ``--out``). Seconds on the
2-vCPU VM: about 8 minutes for the abstraction the first time, then for the defaults
4 x 300 s of training, Hogwild to the cluster's deals twice, 2 x 3 x 60 s of sweep and
the four head-to-heads (about a second a
board on the shipped betting). ``--quick``: 30 s a side, ``1p,cap1`` only, 30 boards,
rounds of 1 and 5 s for 20 s.

Usage: ``python bench/cluster.py [--quick] [--seconds T] [--bettings B ...] [--boards N]
[--sync S ...] [--sweep-seconds T] [--round-seconds S] [--hot-syncs S] [--hot-async] [--deals N] [--abstraction DIR] [--out FILE]``
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._fulldeck import FULL_DECK_GAME, FULL_DECK_PARAMS, cached_abstraction, log  # noqa: E402

SHIPPED_BETTING = "0.5p,1p,2p,a/1p,a,cap3;0.5p,1p,a/1p,a,cap2"
BETTINGS = {"1p,cap1": "1p,cap1", "shipped": SHIPPED_BETTING}


def train(ab_dir: Path, betting: str, seconds: float | None, out: Path, *, cluster: bool, sync: float = 5.0,
          iterations: int | None = None, hot_syncs: int = 0, hot_async: bool = False, threads: int = 2,
          seed: int = 1) -> dict[str, Any]:  # fmt: skip
    """One run of ``seconds`` or ``iterations`` deals (``threads`` Hogwild threads, or two
    Ray workers of one thread, ``hot_syncs`` exchanges of the hot rows a round, not
    waiting for each other with ``hot_async``)."""
    from solver.training.cluster import ClusterOptions
    from solver.training.config import AlgorithmConfig, Budget, EvaluationConfig, TrainingConfig
    from solver.training.run import run_training

    config = TrainingConfig(
        game=FULL_DECK_GAME,
        betting=betting,
        abstraction=ab_dir,
        algorithm=AlgorithmConfig("es"),
        budget=Budget(seconds=seconds, iterations=iterations),
        seed=seed,
        threads=1 if cluster else threads,
        out=out,
        evaluation=EvaluationConfig(enabled=False),
        cluster=ClusterOptions("local", 2, sync_seconds=sync, hot_syncs=hot_syncs, hot_async=hot_async) if cluster else None,
    )
    t0 = time.perf_counter()
    run = run_training(config, say=lambda line: log(f"  {line}"))
    doc: dict[str, Any] = {
        "deals": run.iterations,
        "seconds": round(run.seconds, 2),
        "deals_per_s": round(run.iterations / run.seconds) if run.seconds > 0 else None,
        "wall_s": round(time.perf_counter() - t0, 1),
        "entries": run.problem.size,
    }
    if run.cluster is not None:
        c = run.cluster
        doc.update(
            sync_seconds=sync,
            hot_syncs=hot_syncs,
            hot_async=hot_async,
            rounds=c["rounds"],
            bytes_in=c["bytes_in"],
            bytes_per_round=round(c["bytes_per_round"] or 0),
            bytes_per_s=round(c["bytes_per_s"] or 0),
            kernel_share=c["kernel_share"],
            merge_seconds=c["merge_seconds"],
            put_seconds=c["put_seconds"],
            copy_seconds=c["copy_seconds"],
            encode_seconds=c["encode_seconds"],
            exchange_seconds=c["exchange_seconds"],
            rounds_wall_seconds=c["round_seconds"],
        )
    return doc


def h2h(ab_dir: Path, a: Path, b: Path, boards: int) -> dict[str, Any]:
    """A's exact value against B over ``boards`` sampled boards, mbb/g with its 95% interval."""
    from poker.game import load_game
    from solver.evaluation.head_to_head import head_to_head
    from solver.play.player import open_playable, translated

    game = load_game(FULL_DECK_GAME)
    pa = translated(open_playable(a, game=game, tables=ab_dir))
    pb = translated(open_playable(b, game=game, tables=ab_dir))
    r = head_to_head(pa, pb, game, boards=boards, seed=1, jobs=2).to_dict()
    lo, hi = r["ci95"]
    half = (hi - lo) / 2 if math.isfinite(lo) and math.isfinite(hi) else None
    return {
        "boards": r["boards"],
        "mbb_per_game": round(r["mbb_per_game"], 2),
        "ci95": [round(lo, 2), round(hi, 2)],
        "ci_halfwidth": round(half, 2) if half is not None else None,
        "seconds": round(r["seconds"], 1),
        "goal_met": half is not None and half <= 30 and hi >= 0,
    }


def scaling_model(measured: dict[str, Any], workers_measured: int, sync: float = 5.0, gbit: float = 10.0) -> dict[str, Any]:
    """Predicted speedups of a cluster run from one measured run (see the docstring)."""
    from solver.training.cluster_plan import DELTA_BYTES

    entries = measured["entries"]
    rounds = max(1, measured["rounds"])
    per_worker_deals = measured["deals_per_s"] / workers_measured
    out_bytes = 2 * entries * 4  # both float32 tables to a worker's node
    in_bytes = measured["bytes_in"] / rounds / workers_measured  # one worker's deltas, as measured
    merge_rate = measured["bytes_in"] / max(measured["merge_seconds"], 1e-9)
    link = gbit * 1e9 / 8
    rows = []
    for n in (8, 32, 128):
        transfer = n * (out_bytes + in_bytes) / link
        merge = n * in_bytes / merge_rate
        rows.append({
            "workers": n,
            "transfer_s": round(transfer, 3),
            "merge_s": round(merge, 3),
            "speedup": round(n * sync / (sync + transfer + merge), 2),
            "deals_per_s": round(n * per_worker_deals * sync / (sync + transfer + merge)),
        })
    knee = sync / ((out_bytes + in_bytes) / link + in_bytes / merge_rate)
    per_entry = 2 * 4 + 2 * 4 + 2 * DELTA_BYTES  # own tables, the incoming copy, deltas
    return {
        "inputs": {
            "deals_per_s_per_worker": round(per_worker_deals),
            "table_entries": entries,
            "bytes_out_per_worker_round": out_bytes,
            "bytes_in_per_worker_round": round(in_bytes),
            "merge_bytes_per_s": round(merge_rate),
            "link_gbit": gbit,
            "sync_seconds": sync,
        },
        "predicted": rows,
        "workers_where_waiting_equals_solving": round(knee, 1),
        "largest_table_entries_24gib_worker": int(24 * (1 << 30) / per_entry),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seconds", type=float, default=300.0, help="training seconds a side")
    ap.add_argument("--bettings", nargs="+", choices=sorted(BETTINGS), default=["1p,cap1", "shipped"])
    ap.add_argument("--boards", type=int, default=300)
    ap.add_argument("--sync", type=float, nargs="+", default=[1.0, 5.0, 20.0], help="the sweep's round lengths")
    ap.add_argument("--round-seconds", type=float, default=5.0, help="the round length of the runs compared with Hogwild")
    ap.add_argument("--sweep-seconds", type=float, default=60.0)
    ap.add_argument("--hot-syncs", type=int, default=0, help="the cluster runs' exchanges of the hot rows a round")
    ap.add_argument("--hot-async", action="store_true", help="the hot rows' exchanges do not wait for the other worker")
    ap.add_argument("--deals", type=int, help="stop the cluster runs at this many deals instead of --seconds")
    ap.add_argument("--abstraction", metavar="DIR", help="a built 169/1000/1000/1000 abstraction (default: the bench cache's)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if not args.round_seconds > 0 or not all(x > 0 for x in args.sync):
        ap.error("--round-seconds and --sync take positive seconds")
    if args.quick:
        args.seconds, args.bettings, args.boards = 30.0, ["1p,cap1"], 30
        args.sync, args.sweep_seconds = [1.0, 5.0], 20.0

    from solver.training.dealt import load_training_abstraction
    from poker.game import load_game

    if args.abstraction:
        ab = load_training_abstraction(args.abstraction)
        ab_info: dict[str, Any] = {"directory": args.abstraction}
    else:
        ab, ab_info = cached_abstraction(load_game(FULL_DECK_GAME), FULL_DECK_PARAMS, training=True)
    ab_dir = Path(str(ab.directory))
    doc: dict[str, Any] = {
        "game": FULL_DECK_GAME,
        "abstraction": {**ab_info, "buckets": ab.bucket_counts},
        "algorithm": "es",
        "seconds_a_side": args.seconds,
        "bettings": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.bettings:
            betting = BETTINGS[name]
            log(f"{name}: Hogwild, 2 threads, {args.seconds:g} s")
            hog = train(ab_dir, betting, args.seconds, Path(tmp) / f"hog.{name}.strategy", cluster=False)
            log(f"{name}: Ray, 2 workers of 1 thread, " + (f"{args.deals:,} deals" if args.deals else f"{args.seconds:g} s"))
            ray_ = train(ab_dir, betting, None if args.deals else args.seconds, Path(tmp) / f"ray.{name}.strategy",
                         cluster=True, sync=args.round_seconds, iterations=args.deals, hot_syncs=args.hot_syncs,
                         hot_async=args.hot_async)  # fmt: skip
            ratio = ray_["deals_per_s"] / hog["deals_per_s"] if hog["deals_per_s"] else None
            log(f"{name}: head-to-head over {args.boards} boards")
            match = h2h(ab_dir, Path(tmp) / f"ray.{name}.strategy", Path(tmp) / f"hog.{name}.strategy", args.boards)
            log(f"{name}: Hogwild, 2 threads, to the cluster's {ray_['deals']:,} deals")
            even = train(ab_dir, betting, None, Path(tmp) / f"even.{name}.strategy", cluster=False,
                         iterations=ray_["deals"])  # fmt: skip
            log(f"{name}: head-to-head at equal deals over {args.boards} boards")
            match_even = h2h(ab_dir, Path(tmp) / f"ray.{name}.strategy", Path(tmp) / f"even.{name}.strategy", args.boards)
            doc["bettings"][name] = {
                "betting": betting,
                "hogwild": hog,
                "cluster": ray_,
                "deals_ratio": round(ratio, 3) if ratio is not None else None,
                "deals_goal_met": ratio is not None and ratio >= 0.8,
                "h2h_cluster_minus_hogwild": match,
                "hogwild_equal_deals": even,
                "h2h_cluster_minus_hogwild_equal_deals": match_even,
            }
            log(f"{name}: deals ratio {ratio:.3f}, h2h {match['mbb_per_game']} {match['ci95']}, "
                f"at equal deals {match_even['mbb_per_game']} {match_even['ci95']}")
        sweep = []
        for sync in args.sync:
            log(f"sync {sync:g} s: Ray on 1p,cap1, {args.sweep_seconds:g} s")
            r = train(ab_dir, "1p,cap1", args.sweep_seconds, Path(tmp) / f"sweep.{sync}.strategy", cluster=True, sync=sync,
                      hot_syncs=args.hot_syncs, hot_async=args.hot_async)
            sweep.append(r)
        doc["sync"] = sweep
    last = doc["bettings"].get("shipped") or next(iter(doc["bettings"].values()))
    doc["model"] = scaling_model(last["cluster"], workers_measured=2)
    text = json.dumps(doc)
    if args.out is not None:
        args.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
