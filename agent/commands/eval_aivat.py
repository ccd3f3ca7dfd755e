"""``pokerbot eval aivat``: AIVAT variance reduction for a logged match.

:func:`register_aivat` adds the ``aivat`` action to ``pokerbot eval``'s subcommands; see
:mod:`solver.evaluation.aivat` for the method.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from abstraction.translation import MAPPINGS

from ..players import PlayerSpec, open_for_play
from ..progress import Progress
from ..strategy_player import StrategyPlayer
from .options import UserError, add_resolve_options, resolve_spec
from .eval_png import add_png_option, check_png, write_png
from .strategy_tables import add_tables_option


def register_aivat(what: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``aivat`` to the ``eval`` subcommands ``what``."""
    p = what.add_parser(
        "aivat",
        help="AIVAT: a lower-variance estimate of a known strategy's winnings in a match log",
        description=(
            "AIVAT (Burch et al. 2018) over the hands of LOG for the player whose strategy "
            "is FILE: each hand's outcome minus corrections at chance events (hole and board "
            "cards) and at the known player's decisions (from the strategy's exact "
            "probabilities), with a checked-down equity value function (by default "
            "of the known player's hand against the opponent's actual hand, which the log "
            "shows). Unbiased; prints "
            "the plain and the AIVAT estimate in mbb/g of the known player with 95% "
            "intervals over hands and the variance reduction."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  pokerbot eval aivat matches/leduc.nolimit.2p.1.log --strategy strategies/leduc.nolimit.2p.strategy\n"
            "  pokerbot eval aivat m.log --strategy a.strategy --seat-name a-1 --json\n"
            "  pokerbot eval aivat m.log --strategy a.strategy --resolve --resolve-at turn,river\n"
            "--resolve: the known player re-solved (resolve:FILE in the match; the same --resolve-* "
            "options, iteration budgets only): its probabilities are the re-solves', made again.\n"
            "--opponent FILE (or resolve:FILE, with the same --resolve-* options): the opponent's strategy,\n"
            "as it played (default translation, no purification); its decisions are corrected too.\n"
            "JSON: hands, player, mbb_per_game, ci95, aivat_mbb_per_game, aivat_ci95, "
            "variance_reduction (1 - var_aivat/var_plain), sd_ratio, ..."
        ),
    )
    p.add_argument("log", metavar="LOG", help="an ACPC hand log (our dealer's or the reference dealer's)")
    p.add_argument("--strategy", required=True, metavar="FILE", help="the known player's strategy file")
    p.add_argument(
        "--seat-name",
        metavar="NAME",
        help="the known player's name in the log (default: the first named after FILE's stem, "
        "as 'pokerbot match' names strategy players)",
    )
    p.add_argument("--mapping", choices=MAPPINGS, default=MAPPINGS[0],
                   help=f"the action translation the player used (default {MAPPINGS[0]})")
    p.add_argument("--purify", type=float, default=0.0, help="the purification the player used (default 0)")
    p.add_argument("--opponent", metavar="FILE",
                   help="the opponent's strategy file (resolve:FILE: it re-solved), when it is known "
                        "too: its decisions are corrected as well (heads-up; default: unknown)")
    p.add_argument("--value", choices=("matchup", "checkdown"), default="matchup",  # solver.evaluation.aivat.VALUE_FUNCTIONS
                   help="the value function: equity against the opponent's actual hand (matchup, the default) "
                   "or against a uniformly random hand (checkdown)")
    add_tables_option(p, "auto")
    add_resolve_options(p, flag=True)
    add_png_option(p, "hands (plain and AIVAT)")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Read the log, run AIVAT, print the result."""
    from poker.log import LogFormatError, parse_log
    from solver.evaluation.aivat import aivat, known_player_name, strategy_ranges
    from solver.resolve.opponent import resolving_ranges

    check_png(args.png)
    try:
        text = Path(args.log).read_text()
    except OSError as exc:
        raise UserError(f"cannot read {args.log}: {exc}") from None
    try:
        log = parse_log(text)
        resolve = resolve_spec(args) if args.resolve else None
        spec = PlayerSpec.parse(args.strategy, purify=args.purify, tables=args.tables, mapping=args.mapping,
                                bots=(), bare_files=True, resolve=resolve)
        player = open_for_play(spec, quiet=args.json)
        assert isinstance(player, StrategyPlayer)
        name = args.seat_name or known_player_name(log, spec.name)
        theirs = None
        if args.opponent is not None:
            # (a bare file re-solves when given a spec: only resolve:FILE gets one)
            resolving = resolve_spec(args) if args.opponent.startswith("resolve:") else None
            # opened for the known player's game: a file of another game is refused in one line
            other = open_for_play(PlayerSpec.parse(args.opponent, tables=args.tables, bots=(), bare_files=True,
                                                   resolve=resolving), player.strategy.game, quiet=args.json)
            assert isinstance(other, StrategyPlayer)
            theirs = strategy_ranges(other.policy, resolving_ranges(other.policy, other.resolve))
        bar = Progress(None, f"aivat {name}", unit=" hands", enabled=not args.json)
        try:
            result = aivat(player.policy, log, name, value=args.value, progress=bar.update,
                           player_range=resolving_ranges(player.policy, player.resolve), opponent_range=theirs)
        finally:
            bar.close()
    except (LogFormatError, ValueError) as exc:  # a bad spec or file (StrategyFileError) too
        raise UserError(str(exc)) from None
    write_png(args.png, result.mbb_values, title=f"{result.player} in {result.game}", label="plain",
              second=result.aivat_mbb_values, second_label="AIVAT")
    doc = result.to_dict()
    if args.json:
        print(json.dumps(doc))
        return 0
    lo, hi = result.ci95
    alo, ahi = result.aivat_ci95
    print(f"{result.player} in {result.game}, {result.hands:,} hands")
    print(f"plain: {result.mbb_per_game:+.1f} mbb/g (95% interval {lo:+.1f} .. {hi:+.1f})")
    print(f"AIVAT: {result.aivat_mbb_per_game:+.1f} mbb/g (95% interval {alo:+.1f} .. {ahi:+.1f})")
    print(f"variance reduction {100 * result.variance_reduction:.1f}% (sd ratio {result.sd_ratio:.3f})"
          + (f"; the opponent's {result.opponent_decisions:,} decisions corrected too" if result.opponent_known else ""))
    return 0
