"""Re-solving stops when asked and shows its progress within the solve (issue 58): the
subgame solver's kernels read a stop flag (solver/resolve/subgame.py), the exact walks
over the re-solving player count their nodes against a total known up front and stop at
their next node (solver/resolve/exact.py), and ``pokerbot eval translated --resolve`` and
``pokerbot inspect --resolve`` end within 2 s of SIGTERM or SIGINT with one line."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from poker._stop import Interrupted, Stop, counter, run_stoppable
from poker.cards import deck_cards
from poker.game import load_game
from poker.state import Action, State
from solver.evaluation.real_response import Responder
from solver.play.player import translated
from solver.resolve.exact import resolved_exploitability, resolved_head_to_head, resolved_walk_nodes
from solver.resolve.player import ResolveOptions
from solver.resolve.subgame import SubgameBetting, SubgameSolver, _terminal_pass, deck_hands
from solver.strategy_io import open_strategy

from ._signals import LONG, signal_when

ROOT = Path(__file__).resolve().parents[1]
LEDUC = ROOT / "strategies" / "leduc.nolimit.2p.strategy"


def _river(game_name: str) -> tuple[State, list[int]]:
    """The last street after calls, on the deck's highest cards."""
    game = load_game(game_name)
    state = State.new_hand(game)
    while state.round < game.num_rounds - 1:
        state = state.apply(Action.call())
    deck = sorted(deck_cards(game.num_ranks, game.num_suits))
    return state, deck[len(deck) - game.total_board_cards:]


def test_a_subgame_solve_stopped_by_its_flag_raises_interrupted() -> None:
    game = load_game("leduc.nolimit.2p")
    n = deck_hands(game).shape[0]
    stop = Stop()
    solver = SubgameSolver(State.new_hand(game), (), [np.ones(n), np.ones(n)], SubgameBetting(), algorithm="dcfr",
                           stop=stop)
    solver.solve(1)  # compiled (or loaded) before the clock matters
    assert solver.done[0] == solver.work_per_iteration  # an iteration counts its nodes

    def stop_after_ten() -> None:
        while solver.done[0] < 10 * solver.work_per_iteration:
            time.sleep(0.001)
        stop.set(signal.SIGTERM)

    threading.Thread(target=stop_after_ten, daemon=True).start()
    with pytest.raises(Interrupted) as info:
        run_stoppable(lambda: solver.solve(10**9), stop)
    assert info.value.signum == signal.SIGTERM
    assert 10 <= solver.iterations < 10**9
    # once stopped, a solve does not start
    done, iterations = int(solver.done[0]), solver.iterations
    with pytest.raises(Interrupted):
        solver.solve(1)
    assert (int(solver.done[0]), solver.iterations) == (done, iterations)


def test_a_pass_reads_the_flag_while_it_runs() -> None:
    """A flag set from another thread ends a kernel's pass under way: the compiler keeps
    the flag's load in the node loop (a store to the counter there may alias it). The
    pass: 300,000 folds of a full-deck river, each summed over 1,326 hands (about 2 s);
    stopped after its first, it has done a few."""
    state, board = _river("holdem.nolimit.2p.reverse_blinds")
    n = deck_hands(state.game).shape[0]
    solver = SubgameSolver(state, board, [np.ones(n), np.ones(n)], SubgameBetting(sizes=(1.0,), cap=1),
                           algorithm="dcfr").solve(1)
    folds = np.full(300_000, solver._folds[0], dtype=np.int64)
    order, ranks = solver._showdown_order()
    flag, done = np.zeros(1, dtype=np.int64), counter()

    def run() -> None:
        _terminal_pass(0, folds, solver._showdowns, solver._shown_from, solver._player, solver._spent,
                       solver._board_of, solver.values_of.hands, order, ranks, solver._live, solver._reach[1],
                       solver._value, flag, done)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    while done[0] == 0:
        time.sleep(0.0005)
    flag[0] = signal.SIGINT
    worker.join(60.0)
    assert not worker.is_alive()
    assert 0 < done[0] < folds.size


def test_the_exact_walks_count_to_their_total_and_stop_with_no_figures() -> None:
    policy = translated(open_strategy(LEDUC))
    options = ResolveOptions(iterations=5)
    responder = Responder()
    total, versus = resolved_walk_nodes(policy, options, responder=responder)
    seen: list[int] = []
    resolved_exploitability(policy, options, responder=responder, progress=seen.append)
    assert seen[-1] == total and seen == sorted(seen)
    seen.clear()
    resolved_head_to_head(policy, options, progress=seen.append)
    assert seen[-1] == versus and seen == sorted(seen)

    stop = Stop()

    def stop_a_third_of_the_way(done: int) -> None:
        if done > total // 3:
            stop.set(signal.SIGINT)

    with pytest.raises(Interrupted):
        resolved_exploitability(policy, options, responder=responder, progress=stop_a_third_of_the_way, stop=stop)
    with pytest.raises(Interrupted):  # a stop asked before the walk starts
        resolved_head_to_head(policy, options, stop=stop)


def test_eval_translated_resolve_stops_on_sigterm_mid_walk() -> None:
    """The exact walk against the re-solving player with the responder betting every
    amount counts 27,258 nodes; at 1,000 iterations a re-solve it did 30 to 50 a second
    once under way on the 2-vCPU development machine (about 10 minutes; at 200
    iterations, 62 s), so the signal comes well inside it."""
    got = signal_when(["eval", "translated", str(LEDUC), "--resolve", "--resolve-iterations", "1000",
                       "--responder", "any"], signal.SIGTERM, label="best response to the re-solving player")
    assert got.match.total == 27_258 and got.match.seconds_left() > LONG, got.match
    got.check("eval", signal.SIGTERM)
    assert "exploitability" not in got.stdout  # no figures of a walk cut short


def test_inspect_resolve_stops_on_sigint_mid_solve() -> None:
    """One re-solve of no-limit Leduc's first street after an opponent's raise off the
    tree (to 7 chips); at a million iterations (about 4,000 to 7,000 a second on the
    2-vCPU development machine: minutes) the signal comes well inside it."""
    got = signal_when(["inspect", str(LEDUC), "--history", "r7", "--hand", "Ks", "--resolve",
                       "--resolve-iterations", "1000000"], signal.SIGINT)
    assert got.match.total == 1_000_000 and got.match.seconds_left() > LONG, got.match
    got.check("inspect", signal.SIGINT)
    assert "re-solving player" not in got.stdout
