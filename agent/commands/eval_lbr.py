"""``pokerbot eval lbr``: local best response against a strategy file or a card-blind bot.

:func:`register_lbr` adds the ``lbr`` action to ``pokerbot eval``'s subcommands; see
:mod:`solver.evaluation.lbr` for what LBR does.
"""

from __future__ import annotations

import argparse
import json
import sys

from typing import TYPE_CHECKING

from poker._compile import COMPILING
from poker.game import load_game

from ..players import RESOLVE_PREFIX, PlayerSpec, open_for_play
from ..progress import Progress
from ..strategy_player import StrategyPlayer
from .options import UserError, add_resolve_options, resolve_spec
from .eval_png import add_png_option, check_png, write_png
from .strategy_tables import add_tables_option

if TYPE_CHECKING:
    from solver.evaluation.lbr import LocalBestResponse

_DEFAULT_GAME = "holdem.nolimit.2p.reverse_blinds"
_BOTS = ("fold", "call", "raise", "allin", "random")


def register_lbr(what: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``lbr`` to the ``eval`` subcommands ``what``."""
    p = what.add_parser(
        "lbr",
        help="local best response: a lower bound on exploitability, from play",
        description=(
            "Local best response (Lisy and Bowling 2017) against PLAYER, a strategy file "
            "or a card-blind bot (fold, call, raise, allin, random), for N seeded hands "
            "with the seats alternating on shared deals. At each decision LBR takes the "
            "action of its street's set with the highest value against the opponent's "
            "range (Bayes-updated from the strategy's action probabilities), assuming the "
            "hand is then checked down. Reports LBR's winnings in mbb/g with a 95% interval."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  pokerbot eval lbr strategies/holdem.nolimit.2p.short20.strategy --hands 2000\n"
            "  pokerbot eval lbr call --hands 1000 --json\n"
            "  pokerbot eval lbr strategies/leduc.nolimit.2p.strategy --actions fcpa\n"
            "  pokerbot eval lbr strategies/leduc.nolimit.2p.strategy --actions leaks --exact\n"
            "  pokerbot eval lbr resolve:strategies/holdem.nolimit.2p.short20.strategy --actions leaks "
            "--resolve-iterations 100\n"
            "--actions: one group per street separated by '/', tokens f (fold), c (call), "
            "a (all-in), m (minimum raise), p or <x>p (raise x pots); default: c on every "
            "street but the last two, fcpa there (hold'em: c/c/fcpa/fcpa). A shorter spec "
            "repeats its last group. 'leaks' derives a set from the strategy's own tree: "
            "fold, call, minimum raise, all-in, half its smallest size, a size between each "
            "two of its sizes and twice its largest, on every street (LBR also re-raises "
            "past the tree's cap, where the player can only check or call).\n"
            "--exact: every deal of a small game (no-limit Leduc: 120), the player's draws "
            "summed over: LBR's expected value, no sampling error (--hands is ignored).\n"
            "resolve:FILE: the re-solving player (with the --resolve-* options, iteration budgets "
            "only); its range is exact too, every re-solve of every action LBR weighs made as "
            "the player would make it, so each hand costs several re-solves."
        ),
    )
    p.add_argument("player", metavar="PLAYER",
                   help="a strategy file, resolve:FILE (re-solving), or fold/call/raise/allin/random")
    p.add_argument(
        "--game",
        help=f"the game (name or .game file); default: a strategy's own game, {_DEFAULT_GAME} for a bot",
    )
    p.add_argument("--hands", type=int, default=1000, metavar="N", help="hands to play (default 1000)")
    p.add_argument("--actions", metavar="SPEC", help="LBR's action set per street (see below)")
    p.add_argument("--seed", type=int, default=0, help="seed of the deals, samples and the player's draws")
    p.add_argument("--samples", type=int, default=1000, help="board run-outs sampled where not enumerated")
    p.add_argument("--exact", action="store_true",
                   help="LBR's exact expected value over every deal (small games, strategy players)")
    add_tables_option(p, "auto")
    add_png_option(p, "deals (each deal played in both seats)")
    add_resolve_options(p, flag=False)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Play LBR against the player and print the result."""
    from solver.evaluation.lbr import BlindOpponent, LocalBestResponse, Opponent, StrategyOpponent, kernels_cold

    check_png(args.png)
    if args.hands < 1:
        raise UserError("--hands must be at least 1")
    opponent: Opponent
    resolving = args.player.startswith(RESOLVE_PREFIX)
    resolve = resolve_spec(args) if resolving else None
    if resolve is not None and resolve.seconds is not None:
        raise UserError("--resolve-seconds makes the player depend on the clock, and its range with it: "
                        "LBR needs iteration budgets only")
    try:
        spec = PlayerSpec.parse(args.player, tables=args.tables, bots=_BOTS, bare_files=True, resolve=resolve)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if spec.bot is not None:
        game = load_game(args.game or _DEFAULT_GAME)
        opponent = BlindOpponent(spec.bot, seed=args.seed)
    else:
        try:
            player = open_for_play(spec, load_game(args.game) if args.game else None, quiet=args.json)
        except ValueError as exc:  # StrategyFileError, a table build that cannot run
            raise UserError(str(exc)) from None
        assert isinstance(player, StrategyPlayer)
        game = player.strategy.game
        if player.resolve is not None:
            from solver.resolve.opponent import ResolvingOpponent

            opponent = ResolvingOpponent(player.policy, player.resolve, seed=args.seed, name=str(args.player))
        else:
            opponent = StrategyOpponent(player.policy, seed=args.seed, name=str(args.player))
    if game.num_players != 2:
        raise UserError(f"LBR is heads-up; {game.name} has {game.num_players} players")
    try:
        lbr = LocalBestResponse(game, opponent, actions=args.actions, samples=args.samples, seed=args.seed)
    except ValueError as exc:  # an action set that cannot be read, 'leaks' against a bot
        raise UserError(str(exc)) from None
    if args.exact:
        return _exact(lbr, args)
    bar = Progress(args.hands, "lbr", unit=" hands", enabled=not (args.json or args.quiet))
    if kernels_cold():
        bar.phase(COMPILING)  # until the first hand is counted
    try:
        result = lbr.run(args.hands, progress=lambda n: bar.update(n))
    finally:
        bar.close()
    write_png(args.png, result.deal_mbb_values, title=f"LBR ({result.actions}) vs {result.player}",
              xlabel="deals", label="LBR's winnings")
    doc = result.to_dict()
    if args.json:
        print(json.dumps(doc))
        return 0
    lo, hi = result.ci95
    print(
        f"LBR ({result.actions}) vs {result.player} in {game.name}: {result.mbb_per_game:+.1f} mbb/g "
        f"(95% interval {lo:+.1f} .. {hi:+.1f}) over {result.hands:,} hands; "
        f"as position 0 {result.by_seat[0]:+.1f}, as position 1 {result.by_seat[1]:+.1f}"
    )
    if result.resolve is not None:
        r = result.resolve
        print(f"the player re-solved {int(r['resolves']):,} times ({int(r['limited']):,} to the street's end, "
              f"{int(r['too_big']):,} too big) and followed a solution {int(r['followed']):,} times")
    print(f"{result.seconds:.2f} s, {1000 * result.seconds_per_hand:.2f} ms per hand", file=sys.stdout)
    return 0


def _exact(lbr: LocalBestResponse, args: argparse.Namespace) -> int:
    """``--exact``: LBR's expected value over every deal, per seat and on average."""
    import time

    from solver.evaluation.lbr import kernels_cold

    if lbr.opponent.card_blind:
        raise UserError("--exact is for a strategy player (a card-blind bot's value needs no LBR)")
    t0 = time.perf_counter()
    try:
        deals = lbr.exact_deals()
    except ValueError as exc:  # too many deals
        raise UserError(f"{exc}; play sampled hands instead (without --exact)") from None
    # hands: every deal at each of LBR's seats
    bar = Progress(2 * deals, "lbr exact", unit=" hands", enabled=not (args.json or args.quiet))
    if kernels_cold():
        bar.phase(COMPILING)
    try:
        v0, v1 = lbr.exact_values(progress=lambda done, _total: bar.update(done))
    finally:
        bar.close()
    scale = 1000.0 / lbr.game.big_blind
    doc = {
        "player": lbr.opponent.name,
        "game": lbr.game.name,
        "exact": True,
        "actions": lbr.action_spec,
        "mbb_per_game": (v0 + v1) / 2 * scale,
        "mbb_per_game_by_lbr_seat": [v0 * scale, v1 * scale],
        "chips_per_game": (v0 + v1) / 2,
        "seconds": time.perf_counter() - t0,
    }
    if args.json:
        print(json.dumps(doc))
        return 0
    print(
        f"LBR ({lbr.action_spec}) vs {lbr.opponent.name} in {lbr.game.name}, exact over every deal: "
        f"{doc['mbb_per_game']:+.1f} mbb/g; as position 0 {v0 * scale:+.1f}, as position 1 {v1 * scale:+.1f} "
        f"({doc['seconds']:.2f} s)"
    )
    return 0
