"""``pokerbot tree``: the abstract game's betting tree, information sets and the memory a
training run needs."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from poker._sysinfo import available_memory_gib
from poker.game import Game, load_game
from solver.chance import lossless_bucket_counts
from solver.training.cluster_plan import SYNC_SECONDS, cluster_estimate, hot_streets
from solver.training.memory import (
    ALGORITHMS,
    DTYPES,
    SAMPLED,
    MemoryEstimate,
    chance_layer_bytes,
    check_fits,
    estimate_training_memory,
    format_bytes,
    sampled_run_deals,
)
from solver.tree import KIND_NAMES, Tree, build_tree, tree_report

from .options import UserError

GIB = 1 << 30


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``tree`` subcommand."""
    p = sub.add_parser(
        "tree",
        help="size of the betting tree: nodes, information sets, training memory",
        description=(
            "Build the public betting tree of GAME (with a bet-size abstraction for no-limit "
            "games) and report nodes per street and kind, decision nodes and information "
            "sets per street and player (decision nodes x buckets), table entries, and the "
            "memory a training run needs, part by part, and whether it fits this machine: "
            "vector CFR/CFR+ keep regrets, average and current strategy in float64 and list "
            "every board and hand (the chance layer); the sampled solvers (es, os, tcfr) "
            "keep regrets and average in float32 or float64 and deal cards as they go, "
            "reading buckets from the card abstraction's tables (read whole into "
            "memory). With --workers N (es, os, as, tcfr), also what a cluster run "
            "('pokerbot train --cluster') holds and moves each round, worst case: a "
            "worker's memory (a single-machine run plus the round's incoming tables, "
            "outgoing float32 deltas and their encoding), the driver's, the bytes in and "
            "out per round, the network rate over rounds of --sync-seconds and a round's "
            "transfer time at 1 and 10 Gbit/s; with --hot-syncs S, also the hot rows' "
            "exchanges (the preflop and the flop of hold'em, S times a round). Nothing is "
            "enumerated: a full-deck game reports in a second."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  pokerbot tree leduc.limit.2p\n"
            "  pokerbot tree holdem.nolimit.2p.short20 --betting 1p,cap1 --json\n"
            "  pokerbot tree holdem.nolimit.2p.reverse_blinds --betting 1p,cap1 --abstraction abs/holdem\n"
            "  pokerbot tree holdem.nolimit.2p.reverse_blinds --betting '0.5p,1p,a' --buckets 169,5000,5000,5000 --threads 2\n"
            "  pokerbot tree holdem.nolimit.2p.short20 --betting 1p,cap1 --algo es --workers 8 --threads 4"
        ),
    )
    p.add_argument("game", help="a shipped game name or a .game file")
    p.add_argument(
        "--betting",
        metavar="SPEC",
        help="bet-size abstraction for no-limit games, e.g. '1p,a' (see abstraction.betting)",
    )
    p.add_argument(
        "--buckets",
        metavar="N,N,...",
        help="card buckets per street of an abstraction not built yet (default: lossless)",
    )
    p.add_argument(
        "--abstraction",
        type=Path,
        metavar="DIR",
        help="card abstraction built by 'pokerbot abstract': its buckets and table files",
    )
    p.add_argument(
        "--algo",
        choices=ALGORITHMS,
        default="tcfr",
        help="the algorithm whose training memory to report (default tcfr)",
    )
    p.add_argument("--threads", type=int, metavar="N", help="Hogwild threads of es/os/tcfr (default 1)")
    p.add_argument(
        "--dtype",
        choices=tuple(DTYPES),
        help="table precision of es/os/tcfr (default float32; cfr/cfr+ use float64)",
    )
    p.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="also report a cluster run of N workers of --threads threads each (es, os, as, tcfr)",
    )
    p.add_argument(
        "--sync-seconds",
        type=float,
        metavar="S",
        help=f"--workers: the length of a round, in seconds (default {SYNC_SECONDS:g})",
    )
    p.add_argument(
        "--hot-syncs",
        type=int,
        metavar="S",
        help="--workers: the hot rows' exchanges a round, as 'pokerbot train --hot-syncs' (default 0)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _buckets(text: str | None, game: Game) -> tuple[list[int], bool]:
    if text is None or text == "lossless":
        return list(lossless_bucket_counts(game)), True
    try:
        counts = [int(x) for x in text.split(",")]
    except ValueError:
        raise UserError(f"--buckets {text!r} is not a comma-separated list of integers") from None
    if len(counts) != game.num_rounds:
        raise UserError(
            f"--buckets has {len(counts)} counts, {game.name} has {game.num_rounds} streets"
        )
    if min(counts) < 1:
        raise UserError(f"--buckets {text!r}: every count must be at least 1")
    return counts, False


def _estimate(args: argparse.Namespace, game: Game, tree: Tree, **settings: Any) -> MemoryEstimate:
    """The training memory of ``args``' buckets, with ``settings`` (algorithm, dtype,
    threads) overriding the command line's."""
    opts: dict[str, Any] = {
        "algorithm": args.algo,
        "dtype": args.dtype or "float32",
        "threads": args.threads or 1,
        **settings,
    }
    planned = None if args.buckets in (None, "lossless") else _buckets(args.buckets, game)[0]
    try:
        return estimate_training_memory(
            game, tree=tree, abstraction_dir=args.abstraction, buckets=planned, **opts
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    """Print the tree report and the training memory."""
    if args.abstraction is not None and args.buckets is not None:
        raise UserError("give --abstraction or --buckets, not both")
    if args.algo not in SAMPLED:
        for flag, value in (("--threads", args.threads), ("--dtype", args.dtype)):
            if value is not None:
                raise UserError(
                    f"{flag} applies to es, os and tcfr; {args.algo} runs float64 on one thread"
                )
    if args.threads is not None and args.threads < 1:
        raise UserError(f"--threads {args.threads}: at least 1")
    if args.workers is None:
        for flag, value in (("--sync-seconds", args.sync_seconds), ("--hot-syncs", args.hot_syncs)):
            if value is not None:
                raise UserError(f"{flag} applies with --workers N")
    elif args.algo not in SAMPLED:
        raise UserError(
            f"--workers applies to the sampled algorithms ({', '.join(SAMPLED)}); "
            f"{args.algo} trains on one machine"
        )
    elif args.workers < 1:
        raise UserError(f"--workers {args.workers}: at least 1")
    if args.sync_seconds is not None and not 0 < args.sync_seconds < math.inf:
        raise UserError(f"--sync-seconds {args.sync_seconds:g}: a positive number of seconds")
    if args.hot_syncs is not None and args.hot_syncs < 0:
        raise UserError(f"--hot-syncs {args.hot_syncs}: at least 0")
    game = load_game(args.game)
    tree = build_tree(game, args.betting)
    est = _estimate(args, game, tree)
    if args.abstraction is not None:
        counts, lossless = list(est.bucket_counts), False
    else:
        counts, lossless = _buckets(args.buckets, game)
    report = tree_report(tree, counts)
    entries = report.total_entries
    chance = chance_layer_bytes(game)
    memory = {
        "cfr_bytes": 24 * entries,
        "sampled_float64_bytes": 16 * entries,
        "sampled_float32_bytes": 8 * entries,
        "strategy_file_float64_bytes": 8 * entries,
        "chance_bytes": chance,
    }
    cluster = None
    if args.workers is not None:
        sync = SYNC_SECONDS if args.sync_seconds is None else args.sync_seconds
        hot = sum(report.entries[: hot_streets(tree.n_streets)])
        cluster = cluster_estimate(est, args.workers, sync, args.hot_syncs or 0, hot)
    available = available_memory_gib()
    refusal = check_fits(est, available)
    training = {
        **est.to_dict(),
        "available_bytes": int(available * GIB) if math.isfinite(available) else None,
        "fits": refusal is None,
        "refusal": refusal,
    }
    doc = {
        "game": game.name,
        "betting": tree.betting_spec,
        "buckets": counts,
        "lossless": lossless,
        "abstraction": str(args.abstraction) if args.abstraction is not None else None,
        **report.to_dict(),
        "memory": memory,
        "training_memory": training,
        "cluster": cluster.to_dict() if cluster is not None else None,
    }
    if args.json:
        print(json.dumps(doc))
        return 0
    gib = GIB
    source = " (lossless)" if lossless else f" ({est.source})" if args.abstraction else ""
    print(f"{game.name}  betting {tree.betting_spec or '(limit)'}  buckets {counts}{source}")
    print(
        f"{report.n_nodes:,} nodes, max depth {tree.max_depth}, at most {tree.max_actions} actions"
    )
    kinds = list(KIND_NAMES.values())
    print(
        f"{'street':>6} "
        + " ".join(f"{k:>9}" for k in kinds)
        + f" {'dec P0':>8} {'dec P1':>8} {'infosets P0':>13} {'infosets P1':>13} {'entries':>15}"
    )
    for s in range(tree.n_streets):
        print(
            f"{s:>6} "
            + " ".join(f"{report.nodes[s][k]:>9,}" for k in kinds)
            + f" {report.decisions[s][0]:>8,} {report.decisions[s][1]:>8,}"
            + f" {report.infosets[s][0]:>13,} {report.infosets[s][1]:>13,} {report.entries[s]:>15,}"
        )
    print(f"information sets {report.total_infosets:,}, table entries {entries:,}")
    print(
        f"memory: vector cfr/cfr+ {24 * entries / gib:.3f} GiB; es/os/tcfr "
        f"{16 * entries / gib:.3f} GiB (float64) or {8 * entries / gib:.3f} GiB (float32)"
    )
    dealt = sampled_run_deals(game)
    print(
        f"        chance tables {chance / gib:.3f} GiB"
        + (" (cfr/cfr+ only: es/os/tcfr deal cards instead)" if dealt else "")
    )
    for line in est.lines():
        print(line)
    if refusal is None:
        print(f"  fits this machine: {format_bytes(available * GIB)} available now")
    else:
        print(f"  does not fit this machine: {refusal}")
    if est.algorithm in SAMPLED:
        flip = "float64" if est.dtype == "float32" else "float32"
        choices = [(f"{est.algorithm} {flip}", {"dtype": flip}), ("cfr/cfr+", {"algorithm": "cfr"})]
    else:
        choices = [(f"es/os/tcfr {d}", {"algorithm": "tcfr", "dtype": d}) for d in DTYPES]
    others = [f"{label} {format_bytes(_estimate(args, game, tree, **o).total)}" for label, o in choices]
    if others:
        print(f"  other choices: {'; '.join(others)}")
    if cluster is not None:
        for line in cluster.lines():
            print(line)
    return 0
