"""``pokerbot tree``: the abstract game's betting tree, information sets and the memory a
training run needs."""

from __future__ import annotations

import argparse
import json
from math import comb

from poker.game import Game, load_game
from solver.chance import lossless_bucket_counts
from solver.tree import KIND_NAMES, build_tree, tree_report

from ..cli import UserError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``tree`` subcommand."""
    p = sub.add_parser(
        "tree",
        help="size of the betting tree: nodes, information sets, training memory",
        description=(
            "Build the public betting tree of GAME (with a bet-size abstraction for no-limit "
            "games) and report nodes per street and kind, decision nodes and information "
            "sets per street and player (decision nodes x buckets), table entries, and the "
            "memory a training run needs: vector CFR/CFR+ keep regrets, average and current "
            "strategy in float64; the sampled solvers (es, os, tcfr) keep regrets and "
            "average in float64 or float32, plus the deal tables."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  pokerbot tree leduc.limit.2p\n"
            "  pokerbot tree holdem.nolimit.2p.short20 --betting 1p,cap1 --json\n"
            "  pokerbot tree holdem.nolimit.2p.reverse_blinds --betting '0.5p,1p,a' --buckets 169,5000,5000,5000"
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
        help="card buckets per street (default: lossless, every hand on every board)",
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


def chance_bytes(game: Game) -> int:
    """Memory of the lossless chance layer: bucket map over every board state and hand
    (int32) and the showdown tables of the last street (int32 order, int64 strength and,
    for the sampled solvers, int64 strength by hand)."""
    d, k = game.deck_size, game.num_hole_cards
    hands = comb(d, k)
    boards, seen, total_boards = 1, 0, 0
    for nb in game.num_board_cards:
        boards *= comb(d - seen, nb)
        seen += nb
        total_boards += boards
    return total_boards * hands * 4 + boards * hands * (4 + 8 + 8)


def run(args: argparse.Namespace) -> int:
    """Print the tree report."""
    game = load_game(args.game)
    tree = build_tree(game, args.betting)
    counts, lossless = _buckets(args.buckets, game)
    report = tree_report(tree, counts)
    entries = report.total_entries
    chance = chance_bytes(game) if lossless else None
    memory = {
        "cfr_bytes": 24 * entries,
        "sampled_float64_bytes": 16 * entries,
        "sampled_float32_bytes": 8 * entries,
        "strategy_file_float64_bytes": 8 * entries,
        "chance_bytes": chance,
    }
    doc = {
        "game": game.name,
        "betting": tree.betting_spec,
        "buckets": counts,
        "lossless": lossless,
        **report.to_dict(),
        "memory": memory,
    }
    if args.json:
        print(json.dumps(doc))
        return 0
    gib = 1 << 30
    print(
        f"{game.name}  betting {tree.betting_spec or '(limit)'}  buckets {counts}"
        f"{' (lossless)' if lossless else ''}"
    )
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
    if chance is not None:
        print(f"        chance tables {chance / gib:.3f} GiB")
    return 0
