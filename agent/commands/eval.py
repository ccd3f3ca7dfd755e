"""``pokerbot eval``: measure a strategy (exploitability by exact best response; ``h2h``:
the exact head-to-head value of two strategy files, :mod:`solver.evaluation.head_to_head`).

For a strategy over a card abstraction two figures are reported: the exploitability in
its abstract game (each best responder limited to the same buckets) and in the real card
game with the same betting tree (each best responder sees its exact cards; the strategy
is looked up through its buckets). See :mod:`solver.evaluation.best_response`.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
from pathlib import Path
from typing import Any


from poker._compile import COMPILING
from poker.game import load_game
from solver.evaluation.best_response import Result, abstract_and_real_exploitability, walks_cold
from solver.strategy_io import cards_record, describe_cards, load_strategy
from solver.training.run import load_abstraction

from ..progress import Progress
from .eval_aivat import register_aivat
from .eval_h2h import register_h2h
from .eval_lbr import register_lbr
from .options import UserError, add_resolve_options, positive_int, resolve_spec


#: An evaluation's independent walks: two best responses and the profile's value.
MAX_WALKS_AT_ONCE = 3


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``eval`` subcommand and its ``exploitability`` action."""
    p = sub.add_parser(
        "eval",
        help="evaluate a strategy: exploitability, head-to-head",
        description="Evaluate a strategy file written by 'pokerbot train'.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  pokerbot eval exploitability leduc.limit.2p leduc.strategy\n"
            "  pokerbot eval exploitability holdem.nolimit.2p.short20 short20.strategy --json\n"
            "  pokerbot eval exploitability leduc.limit.2p l3.strategy --abstraction abs/leduc"
        ),
    )
    what = p.add_subparsers(dest="what", metavar="WHAT")
    what.required = True
    e = what.add_parser(
        "exploitability",
        help="exact best response of each player against the strategy",
        description=(
            "Exact exploitability of STRATEGY: each player's best-response value against the "
            "other's part of the strategy, (BR_0 + BR_1) / 2 in chips per game and in mbb/g, "
            "and the first player's expected value when both follow the strategy. Two "
            "responders: one limited to the strategy's card buckets (the abstract game; with "
            "imperfect-recall buckets the best such responder found by backward induction, a "
            "lower bound) and one that sees its exact cards (the real card game, same betting "
            "tree). Without a card abstraction both are the same. A strategy trained with "
            "--abstraction DIR needs the same abstraction here. The progress bar counts the "
            "(public node, board state) pairs the walks enter, of a total known before they "
            "start; Ctrl-C or SIGTERM stops them within a second (status 130 or 143)."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  pokerbot eval exploitability leduc.limit.2p leduc.strategy --json\n"
            "  pokerbot eval exploitability leduc.limit.2p l3.strategy --abstraction abs/leduc --json\n"
            "JSON: exploitability, mbb_per_game and br are the abstract game's; "
            "real_exploitability, real_mbb_per_game and real_br the real game's."
        ),
    )
    e.add_argument("game", help="the game the strategy was trained for (name or .game file)")
    e.add_argument("strategy", help="strategy file written by 'pokerbot train'")
    e.add_argument(
        "--abstraction",
        metavar="DIR",
        help="the card abstraction the strategy was trained with (its content hash must match); "
        "needed only for files written before format 3, which do not carry the abstraction's model",
    )
    e.add_argument(
        "--threads",
        type=positive_int,
        metavar="N",
        help="walks at once: each player's best response and the profile's value are "
        f"independent (default: the machine's cores, at most {MAX_WALKS_AT_ONCE}; the figures do not depend on it)",
    )
    e.add_argument("--json", action="store_true", help="print one JSON object")
    e.add_argument("--quiet", action="store_true", help="no progress bar")
    e.set_defaults(func=run)
    register_h2h(what)
    _register_translated(what)
    register_lbr(what)
    register_aivat(what)


def _line(name: str, r: Result) -> str:
    return (
        f"{name}: best response P0 {r.br[0]:+.6f}  P1 {r.br[1]:+.6f} chips/game; "
        f"exploitability {r.exploitability:.6f} chips/game = {r.mbb_per_game:.3f} mbb/g"
    )


def run(args: argparse.Namespace) -> int:
    """Compute and print the exploitability."""
    game = load_game(args.game)
    abstraction = load_abstraction(args.abstraction)
    strategy = load_strategy(args.strategy, abstraction)
    if strategy.game != game:
        raise UserError(
            f"{args.strategy} was trained for {strategy.game.name or 'another game'}, not {game.name}"
        )
    threads = args.threads or min(os.cpu_count() or 1, MAX_WALKS_AT_ONCE)
    # the unit: a (public node, board state) pair a walk enters, summed over the walks
    bar = Progress(None, "best response", unit=" nodes", enabled=not args.quiet)
    if walks_cold():
        bar.phase(COMPILING)

    def walked(done: int, total: int) -> None:
        bar.total = total
        bar.update(done)  # the last state is drawn when the bar closes

    # the strategy and its problem live until the end: frozen, the collector stops
    # scanning them (its full passes are pauses in which no signal is handled, and the
    # interpreter makes one more at exit)
    gc.freeze()

    try:
        abstract, real = abstract_and_real_exploitability(strategy, threads=threads, progress=walked)
    finally:
        bar.close()
    cards: dict[str, Any] | None = (
        cards_record(strategy.problem) if strategy.problem.abstraction is not None else None
    )
    doc = {
        "game": game.name,
        "strategy": str(args.strategy),
        "algorithm": strategy.algorithm,
        "iterations": strategy.iterations,
        "betting": strategy.problem.tree.betting_spec,
        "abstraction": cards,
        "exploitability": abstract.exploitability,
        "mbb_per_game": abstract.mbb_per_game,
        "br": list(abstract.br),
        "value": abstract.value,
        "real_exploitability": real.exploitability,
        "real_mbb_per_game": real.mbb_per_game,
        "real_br": list(real.br),
    }
    if args.json:
        print(json.dumps(doc))
        return 0
    over = describe_cards(cards) if cards is not None else "lossless buckets"
    print(
        f"{game.name}: {strategy.algorithm or 'strategy'} after {strategy.iterations:,} "
        f"iterations, {over}"
    )
    if cards is None:
        print(_line("exact", real))
    else:
        print(_line("abstract game", abstract))
        print(_line("real game", real))
    print(f"value of the profile to P0 {real.value:+.6f} chips/game")
    return 0


#: ``eval translated``'s default responder: the sizes of the issue that measured the leaks.
DEFAULT_RESPONDER = "0.25,0.5,0.75,1,1.5,2,a,+cap1"


def _register_translated(what: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``translated`` action: the exact real-game best response to a translated player."""
    t = what.add_parser(
        "translated",
        help="exact best response in the real game to a strategy played through action translation",
        description=(
            "Exact exploitability of STRATEGY as 'pokerbot play' plays it: translated (the "
            "opponent's real bets mapped onto its tree, its own sized from the real pot), "
            "against a best responder in the real game that sees its cards and bets the "
            "--responder sizes (every legal amount with 'any'). The player's mapping draws "
            "are summed over, nothing is sampled. The walk's memory and time are predicted "
            "first; a walk that cannot fit in memory is refused."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  pokerbot eval translated strategies/leduc.nolimit.2p.strategy --responder any\n"
            "  pokerbot eval translated strategies/holdem.nolimit.2p.short20.strategy --responder a --json\n"
            "  pokerbot eval translated strategies/leduc.nolimit.2p.strategy --responder any --resolve\n"
            f"--responder: pot fractions and 'a' (all-in), '+capN' raises past the player's cap "
            f"(default {DEFAULT_RESPONDER}), or 'any'."
        ),
    )
    t.add_argument("strategy", help="a strategy file")
    t.add_argument("--responder", default=DEFAULT_RESPONDER, metavar="SPEC", help="the responder's bets (see below)")
    t.add_argument("--mapping", default="pseudo_harmonic", help="the action translation (default pseudo_harmonic)")
    t.add_argument("--predict", action="store_true", help="print the prediction only")
    t.add_argument("--resolve", action="store_true",
                   help="the re-solving player (resolve:FILE, with the --resolve-* options) instead: its exact "
                        "exploitability, and its exact value against the translated blueprint")
    add_resolve_options(t, flag=False)
    t.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    t.set_defaults(func=_run_translated)


def _run_translated(args: argparse.Namespace) -> int:
    """Predict, then walk, and print the real-game exploitability."""
    from poker._sysinfo import available_memory_gib
    from solver.evaluation.real_response import Responder, predict_walk, real_exploitability, warm_up_walk
    from solver.play.player import translated
    from solver.strategy_io import open_strategy

    try:
        responder = Responder.parse(args.responder)
        sf = open_strategy(Path(args.strategy))
        policy = translated(sf, mapping=args.mapping)
    except ValueError as exc:  # a spec that cannot be read, a bad or mismatched file
        raise UserError(str(exc)) from None
    if sf.game.num_players != 2 or sf.game.is_limit and responder is not None:
        raise UserError("the translated best response is for heads-up no-limit games (limit: 'eval exploitability')")
    cost = predict_walk(policy, responder)
    words = "every legal amount" if responder is None else responder.text()
    free = available_memory_gib()
    line = (f"predicted: {sum(cost.nodes):,} real nodes, {cost.elements:.3g} vector elements, "
            f"at most {cost.bytes / 2**30:.2f} GiB, about {cost.seconds:,.0f} s")
    if cost.compile_seconds:
        line += f" (includes about {cost.compile_seconds:,.0f} s compiling, first run only)"
    if not args.json:
        print(f"{sf.game.name}: a best responder with {words} against {args.strategy}")
        print(line)
    if free is not None and cost.bytes > free * 2**30:
        raise UserError(f"the walk needs about {cost.bytes / 2**30:.1f} GiB and {free:.1f} GiB are free; "
                        "choose fewer responder sizes")
    if args.predict:
        if args.json:
            print(json.dumps({"game": sf.game.name, "responder": words, "prediction": cost.to_dict()}))
        return 0
    if args.resolve:
        return _run_resolved(args, sf, policy, responder, words, cost)
    bar = Progress(sum(cost.nodes), "best response", unit=" nodes", enabled=not args.json)
    if cost.compile_seconds:
        bar.phase(COMPILING)
        warm_up_walk()  # here, not in the walk's first node: its rate then counts walking only
    # The walk is Python, so a signal acts between two of its steps (each of its kernels
    # takes milliseconds). What is built by now lives until the end: frozen, the collector
    # stops scanning it, where a full collection of it took 1 to 2 s on the 20-card game,
    # a pause in which no signal is handled (and the same again at exit).
    gc.freeze()
    try:
        result = real_exploitability(policy, responder=responder, count_tree=False, self_play=False,
                                     progress=lambda n: bar.update(n))
    finally:
        bar.close()
    doc = {"game": sf.game.name, "strategy": str(args.strategy), "responder": words,
           "prediction": cost.to_dict(), **result.to_dict()}
    if args.json:
        print(json.dumps(doc))
        return 0
    print(_br_line(result, f"{result.nodes:,} nodes"))
    return 0


def _br_line(result: Any, work: str) -> str:
    """The line of a real best response's figures (``work``: what the walk did)."""
    return (f"best response P0 {result.br[0]:+.6f}  P1 {result.br[1]:+.6f} chips/game; exploitability "
            f"{result.exploitability:.6f} chips/game = {result.mbb_per_game:.1f} mbb/g ({work}, {result.seconds:.1f} s)")


#: Seconds ``eval translated --resolve`` compiles the subgame solver on a first run: its
#: warm-up (:func:`solver.resolve.subgame.warm_up`) took 7.8 s on no-limit Leduc and 9.6 s
#: on full-deck hold'em with NUMBA_CACHE_DIR an empty directory, on the 2-vCPU
#: development machine while other jobs ran (0.3 to 0.7 s from the cache).
RESOLVE_COMPILE_SECONDS = 10.0


def _run_resolved(args: argparse.Namespace, sf: Any, policy: Any, responder: Any, words: str, cost: Any) -> int:
    """``eval translated --resolve``: the re-solving player tabulated over the real game
    (:mod:`solver.resolve.exact`), its exploitability and its value against the
    translated blueprint, exactly."""
    from poker._compile import COMPILING, cold
    from poker._stop import counter, run_stoppable, stoppable
    from solver.resolve import subgame
    from solver.resolve.exact import resolved_exploitability, resolved_head_to_head, resolved_walk_nodes

    spec = resolve_spec(args)
    if spec.seconds is not None:
        raise UserError("--resolve-seconds makes the player depend on the clock: an exact evaluation needs "
                        "iteration budgets only")
    options = spec.options()
    # The walks and their re-solves run off the main thread (poker._stop), so that SIGINT
    # and SIGTERM act at once and the bars are drawn from the kernels' counts meanwhile.
    with stoppable() as stop:
        totals = run_stoppable(lambda: resolved_walk_nodes(policy, options, responder=responder, stop=stop), stop)
        compiling = cold(*subgame.KERNELS)
        if not args.json:
            print(f"re-solving: {spec.iterations} iterations a re-solve, sizes {','.join(f'{x:g}' for x in spec.sizes)}, "
                  f"gadget {spec.gadget}; the walks count {totals[0]:,} nodes against the responder, "
                  f"{totals[1]:,} against the blueprint (the prediction above is the translated player's)"
                  + (f"; compiling the solver first, about {RESOLVE_COMPILE_SECONDS:.0f} s (first run only)"
                     if compiling else ""))

        def walk(label: str, total: int, run: Any) -> Any:
            """``run(progress)`` on a worker thread with a bar of ``total`` nodes."""
            done = counter()
            bar = Progress(total, label, unit=" nodes", enabled=not args.json)
            if compiling:
                bar.phase(COMPILING)
            counted = [False]  # the bar has counted some of the walk

            def poll() -> None:
                # the first count is not drawn: the rate is measured from it, and drawn with
                # it a compile before it would count as walking time
                bar.enabled = counted[0] and not args.json
                bar.update(min(int(done[0]), total))
                bar.enabled = not args.json
                counted[0] = counted[0] or done[0] > 0

            def work() -> Any:
                if compiling:
                    subgame.warm_up(sf.game)
                return run(lambda n: done.__setitem__(0, n))

            try:
                return run_stoppable(work, stop, on_poll=poll)
            finally:
                bar.close()

        result, info = walk("best response to the re-solving player", totals[0],
                            lambda progress: resolved_exploitability(policy, options, responder=responder,
                                                                     progress=progress, stop=stop))
        compiling = False  # the first walk compiled what the second runs
        seats = walk("re-solving player against its blueprint", totals[1],
                     lambda progress: resolved_head_to_head(policy, options, progress=progress, stop=stop))
    versus = 1000.0 * (seats[0] + seats[1]) / 2.0 / sf.game.big_blind
    doc = {"game": sf.game.name, "strategy": str(args.strategy), "responder": words, "resolve": info,
           "options": {"iterations": spec.iterations, "sizes": list(spec.sizes), "at": list(spec.at),
                       "first": spec.first, "gadget": spec.gadget},
           "against_blueprint_mbb_per_game": versus, "against_blueprint_seats": list(seats), **result.to_dict()}
    if args.json:
        print(json.dumps(doc))
        return 0
    print(_br_line(result, f"{info['resolves']:,} re-solves"))
    print(f"against its blueprint (translated): {versus:+.1f} mbb/g")
    return 0
