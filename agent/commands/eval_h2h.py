"""``pokerbot eval h2h``: the exact head-to-head value of two players, A against B.

Two strategy files played through translation: :mod:`solver.evaluation.head_to_head`,
every hand pair of each final board walked at once. Either side a re-solving player
(``resolve:FILE`` with the ``--resolve-*`` options): :mod:`solver.resolve.h2h`, boards
dealt through ``--through`` (the turn by default) sampled and the rest enumerated, each
re-solve made once per board and history.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np

from poker._compile import COMPILING

from ..players import RESOLVE_PREFIX, STREET_NAMES, PlayerSpec, PlayerSpecError, _street, open_for_play
from ..progress import Progress
from ..strategy_player import StrategyPlayer
from .eval_png import add_png_option, check_png, write_png
from .options import UserError, add_resolve_options, resolve_spec
from .strategy_tables import add_tables_option

__all__ = ["register_h2h", "run_h2h"]


def register_h2h(what: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``h2h`` action: two strategy files against each other, exactly."""
    h = what.add_parser(
        "h2h",
        help="exact head-to-head value of player A against player B",
        description=(
            "Expected value of A against B in the real game, each played through action "
            "translation (their card and betting abstractions may differ), averaged over "
            "both seatings, in mbb/g. Computed exactly for every final board evaluated: "
            "every hand pair, every real action either player takes and every translation "
            "draw, with their probabilities (no hands are sampled). Without --boards every "
            "final board is evaluated and the value is exact; with --boards N, N final boards "
            "are sampled uniformly (without replacement) and the 95% interval is over boards.\n\n"
            "Either player may be resolve:FILE, the re-solving player (with the --resolve-* "
            "options, an iteration budget). Then the boards are those dealt through --through "
            "(default the turn), the later cards enumerated, and each re-solve is made once "
            "per board and history and serves every hand pair and every later card."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  pokerbot eval h2h strategies/leduc.nolimit.2p.strategy other.strategy\n"
            "  pokerbot eval h2h strategies/holdem.nolimit.2p.short20.strategy s20.strategy --boards 50 --json\n"
            "  pokerbot eval h2h resolve:strategies/leduc.nolimit.2p.strategy strategies/leduc.nolimit.2p.strategy "
            "--resolve-at preflop,flop --resolve-from preflop\n"
            "  pokerbot eval h2h resolve:strategies/holdem.nolimit.2p.short20.strategy "
            "strategies/holdem.nolimit.2p.short20.strategy --resolve-at turn,river --boards 40 --predict\n"
            "JSON (last line): mbb_per_game, ci95 [low, high], chips_per_game, exact, "
            "seat_values (A's chips in position 0 and 1), boards, boards_total, seconds."
        ),
    )
    h.add_argument("a", metavar="A", help="player A: a strategy file, or resolve:FILE (re-solving)")
    h.add_argument("b", metavar="B", help="player B (the same game): a strategy file, or resolve:FILE")
    h.add_argument("--boards", type=int, metavar="N",
                   help="sample N final boards (default: every board, exact)")
    h.add_argument("--seed", type=int, default=0, help="seed of the board sample (default 0)")
    h.add_argument("--mapping", default="pseudo_harmonic",
                   help="action translation of both players (default pseudo_harmonic)")
    h.add_argument("--jobs", type=int, default=1, metavar="K",
                   help="evaluate boards in K worker processes (same result as 1; default 1)")
    add_tables_option(h, "auto")
    add_png_option(h, "boards")
    h.add_argument("--through", metavar="STREET",
                   help="with a re-solving player: sample boards dealt through STREET and enumerate the later "
                        "cards (default: the turn, the street before the last)")
    h.add_argument("--predict", action="store_true",
                   help="with a re-solving player: walk one sampled board, print what the run would cost "
                        "(time per board and in all, re-solves, memory) and stop")
    add_resolve_options(h, flag=False)
    h.add_argument("--quiet", action="store_true", help="no progress bar")
    h.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    h.set_defaults(func=run_h2h)


def run_h2h(args: argparse.Namespace) -> int:
    """Compute and print A's head-to-head value against B."""
    from poker._compile import COMPILING
    from solver.evaluation.head_to_head import ALL_BOARDS_MAX, head_to_head, kernels_cold, n_boards

    check_png(args.png)
    if args.boards is not None and args.boards < 1:
        raise UserError(f"--boards must be at least 1, got {args.boards}")
    if args.jobs < 1:
        raise UserError(f"--jobs must be at least 1, got {args.jobs}")
    resolving = [f.startswith(RESOLVE_PREFIX) for f in (args.a, args.b)]
    rspec = resolve_spec(args) if any(resolving) else None
    players: dict[PlayerSpec, StrategyPlayer] = {}
    try:
        specs = [PlayerSpec.parse(f, tables=args.tables, mapping=args.mapping, bots=(), bare_files=True,
                                  resolve=rspec if r else None) for f, r in zip((args.a, args.b), resolving)]
        for spec in specs:
            plain = dataclasses.replace(spec, resolve=None)
            if plain not in players:  # A against itself, re-solved or not: the file opened once
                player = open_for_play(plain, quiet=args.json)
                assert isinstance(player, StrategyPlayer)
                players[plain] = player
    except ValueError as exc:  # a bad spec or file (StrategyFileError), a table build that cannot run
        raise UserError(str(exc)) from None
    pa, pb = (players[dataclasses.replace(s, resolve=None)] for s in specs)
    fa, fb = pa.strategy, pb.strategy
    if fa.game != fb.game:
        raise UserError(
            f"the files are for different games: {args.a} for {fa.game.name or 'one game'}, "
            f"{args.b} for {fb.game.name or 'another'}"
        )
    if rspec is not None:
        options = rspec.options()
        return _run_resolved(args, pa, pb, [options if r else None for r in resolving])
    if args.through is not None or args.predict:
        raise UserError("--through and --predict are for a re-solving player (resolve:FILE)")
    total = n_boards(fa.game)
    if args.boards is None and total > ALL_BOARDS_MAX:
        raise UserError(
            f"{fa.game.name} has {total:,} final boards, too many to evaluate every one: sample "
            "them with --boards N (the interval is over boards)"
        )
    a, b = pa.policy, pb.policy
    todo = total if args.boards is None else min(args.boards, total)
    bar = Progress(todo, "h2h", unit=" boards", enabled=not args.quiet)
    compiling = kernels_cold()
    if compiling:
        bar.phase(COMPILING)

    def walking(done: float, _total: int, nodes: int) -> None:
        # boards done count the chunk under way by its nodes, so the bar moves within a walk
        nonlocal compiling
        if compiling and not kernels_cold():
            compiling = False
            bar.phase(None)
        bar.update(done, nodes=f"{nodes:,}")

    try:
        res = head_to_head(a, b, fa.game, boards=args.boards, seed=args.seed, jobs=args.jobs, walking=walking)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    finally:
        bar.close()
    write_png(args.png, np.asarray(res.board_values) * 1000.0 / fa.game.big_blind,
              title=f"{Path(args.a).name} vs {Path(args.b).name}", xlabel="boards", label="A's winnings")
    if args.json:
        doc = {"a": str(args.a), "b": str(args.b), "mapping": args.mapping, "seed": args.seed, **res.to_dict()}
        print(json.dumps(doc))
        return 0
    lo, hi = res.ci95
    how = "all boards, exact" if res.exact else f"{res.boards:,} of {res.boards_total:,} boards sampled"
    print(f"{res.game}: {args.a} vs {args.b} ({how})")
    print(f"A vs B: {res.mbb_per_game:+.3f} mbb/g  95% [{lo:+.3f}, {hi:+.3f}]  "
          f"({res.chips_per_game:+.6f} chips/game; A in position 0 {res.seat_values[0]:+.6f}, "
          f"in position 1 {res.seat_values[1]:+.6f})")
    print(f"boards {res.boards:,}  seconds {res.seconds:.2f} ({res.seconds_per_board:.3f} per board)")
    return 0


def _street_arg(text: str) -> int:
    """``--through``'s street, by name or number."""
    try:
        return _street(text, f"--through {text!r}")
    except PlayerSpecError as exc:
        raise UserError(str(exc)) from None


def _run_resolved(args: argparse.Namespace, pa: StrategyPlayer, pb: StrategyPlayer, options: list[Any]) -> int:
    """``eval h2h`` with a re-solving side (:mod:`solver.resolve.h2h`)."""
    from poker._compile import cold
    from solver.evaluation.head_to_head import ALL_BOARDS_MAX, kernels_cold, n_boards
    from solver.resolve import subgame
    from solver.resolve.h2h import Contender, default_through, predict_memory, resolved_h2h

    game = pa.strategy.game
    if any(o is not None and o.seconds is not None for o in options):
        raise UserError("--resolve-seconds makes the player depend on the clock: an exact head-to-head needs "
                        "an iteration budget (--resolve-iterations)")
    through = default_through(game) if args.through is None else _street_arg(args.through)
    if not 0 <= through < game.num_rounds:
        raise UserError(f"--through {args.through}: {game.name} has streets 0 to {game.num_rounds - 1}")
    total = n_boards(game, through)
    if args.boards is None and total > ALL_BOARDS_MAX:
        raise UserError(f"{game.name} has {total:,} boards dealt through {STREET_NAMES[through]}, too many to "
                        "evaluate every one: sample them with --boards N (the interval is over boards), or "
                        "deal through an earlier street with --through")
    a, b = Contender(pa.policy, options[0]), Contender(pb.policy, options[1])
    todo = total if args.boards is None else min(args.boards, total)
    memory = predict_memory(a, b, game, through, args.jobs)
    if memory.refused:
        raise UserError(memory.refusal)
    if args.predict:
        return _predict(args, a, b, game, through, todo, memory)
    if not args.json:
        print(f"{todo:,} boards dealt through {STREET_NAMES[through]} ({total:,} in all), the later cards "
              f"enumerated; {memory.text()}", flush=True)
    bar = Progress(todo, "h2h", unit=" boards", enabled=not args.quiet)
    compiling = kernels_cold() or cold(*subgame.KERNELS)
    if compiling:
        bar.phase(COMPILING)

    def walking(done: float, _total: int, nodes: int) -> None:
        nonlocal compiling
        if compiling and done > 0:
            compiling = False
            bar.phase(None)
        bar.update(done, nodes=f"{nodes:,}")

    try:
        res = resolved_h2h(a, b, game, boards=args.boards, through=through, seed=args.seed, jobs=args.jobs,
                           walking=walking)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    finally:
        bar.close()
    r = res.result
    write_png(args.png, np.asarray(r.board_values) * 1000.0 / game.big_blind,
              title=f"{Path(args.a).name} vs {Path(args.b).name}", xlabel="boards", label="A's winnings")
    if args.json:
        doc = {"a": str(args.a), "b": str(args.b), "mapping": args.mapping, "seed": args.seed,
               "options": [None if o is None else _options_doc(o) for o in options], **res.to_dict()}
        print(json.dumps(doc))
        return 0
    lo, hi = r.ci95
    how = (f"every board through {STREET_NAMES[through]}, exact" if r.exact
           else f"{r.boards:,} of {r.boards_total:,} boards through {STREET_NAMES[through]} sampled")
    print(f"{r.game}: {args.a} vs {args.b} ({how})")
    print(f"A vs B: {r.mbb_per_game:+.3f} mbb/g  95% [{lo:+.3f}, {hi:+.3f}]  "
          f"({r.chips_per_game:+.6f} chips/game; A in position 0 {r.seat_values[0]:+.6f}, "
          f"in position 1 {r.seat_values[1]:+.6f})")
    print(f"boards {r.boards:,}  seconds {r.seconds:.2f} ({r.seconds_per_board:.3f} per board)  "
          f"re-solves {res.resolves:,} ({res.resolve_seconds:.1f} s; {res.failed:,} left to the blueprint)")
    return 0


def _options_doc(o: Any) -> dict[str, Any]:
    return {"iterations": o.iterations, "sizes": list(o.sizes), "at": list(o.street_starts), "first": o.first_street,
            "gadget": o.gadget, "max_nodes": o.max_nodes, "runouts": o.runouts}


def _predict(args: argparse.Namespace, a: Any, b: Any, game: Any, through: int, todo: int, memory: Any) -> int:
    """``--predict``: one sampled board walked, the run's cost from it."""
    from poker._stop import run_stoppable, stoppable
    from solver.resolve.h2h import pilot

    with stoppable() as stop:
        got = run_stoppable(lambda: pilot(a, b, game, through, seed=args.seed, stop=stop), stop)
    seconds = got.seconds * todo / args.jobs
    doc = {"boards": todo, "through": through, "jobs": args.jobs, "board_seconds": got.seconds,
           "resolves_per_board": got.resolves, "nodes_per_board": got.nodes, "predicted_seconds": seconds,
           "memory_bytes": memory.bytes, "board": list(got.board)}
    if args.json:
        print(json.dumps(doc))
        return 0
    print(f"one board ({' '.join(map(str, got.board))}): {got.seconds:.1f} s, {got.resolves:,} re-solves, "
          f"{got.nodes:,} real nodes, both seatings")
    print(f"predicted: {todo:,} boards on {args.jobs} job{'s' * (args.jobs > 1)} about "
          f"{_duration(seconds)}; {memory.text()}")
    return 0


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds / 3600:.1f} hours"
