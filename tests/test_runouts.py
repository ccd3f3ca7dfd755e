"""Depth-limited walks: showdowns over drawn or enumerated run-outs
(solver/evaluation/runouts.py), the subgames and best responses that stop at a street's
end (solver/resolve/subgame.py, solver/evaluation/real_response.py)."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from poker.cards import deck_cards
from poker.evaluator import evaluate_batch
from poker.game import load_game
from poker.state import Action, State
from solver.evaluation.real_response import Responder, responder_values
from solver.evaluation.runouts import RunOuts
from solver.play.player import translated
from solver.resolve.subgame import SubgameBetting, SubgameSolver, SubgameTooBig, build_subgame, deck_hands
from solver.strategy_io import open_strategy

STRATEGIES = Path(__file__).resolve().parent.parent / "strategies"
SHORT = load_game("holdem.nolimit.2p.short20")
LEDUC = load_game("leduc.nolimit.2p")
DECK20 = deck_cards(SHORT.num_ranks, SHORT.num_suits)


def _dense_checkdown(game, hands: np.ndarray, board: tuple[int, ...], reach: np.ndarray) -> np.ndarray:
    """Every complete board, every pair of hands, by dense numpy: the mean over the
    boards that miss both hands of sign(rank difference), summed against ``reach``."""
    left = [c for c in deck_cards(game.num_ranks, game.num_suits) if c not in board]
    m = game.total_board_cards - len(board)
    n = hands.shape[0]
    wins = np.zeros((n, n))
    count = np.zeros((n, n))
    clash = (hands[:, None, :, None] == hands[None, :, None, :]).any(axis=(2, 3))
    for new in combinations(left, m):
        full = np.array(board + new, dtype=np.int64)
        miss = ~np.isin(hands, full).any(axis=1)
        cards = np.concatenate([hands, np.tile(full, (n, 1))], axis=1)
        rank = evaluate_batch(np.ascontiguousarray(cards)).astype(np.int64)
        ok = miss[:, None] & miss[None, :] & ~clash
        wins += np.where(ok, np.sign(rank[:, None] - rank[None, :]), 0)
        count += ok
    return np.divide(wins, count, out=np.zeros_like(wins), where=count > 0) @ reach


def test_enumerated_runouts_are_the_dense_checkdown():
    """On a 20-card flop (two cards to come, 171 boards) the enumeration's values, by the
    O(n) sweep and by the matrix, are the dense all-pairs mean for every hand."""
    hands = deck_hands(SHORT)
    board = (DECK20[3],)
    live = ~np.isin(hands, board).any(axis=1)
    reach = np.random.default_rng(4).random(hands.shape[0]) * live
    ro = RunOuts(SHORT, hands, board, 1000, seed=0)
    assert ro.exact and len(ro) == 171
    want = _dense_checkdown(SHORT, hands, board, reach)
    np.testing.assert_allclose(ro.values(reach) * live, want * live, atol=1e-9)
    np.testing.assert_allclose(ro.values_many(reach[None])[0] * live, want * live, atol=1e-9)


def test_drawn_runouts_are_unbiased_and_the_matrix_is_the_sweep():
    """Drawn boards: the mean over 400 seeds of 8 boards each lands on the enumeration
    (well inside the error the draws allow, a hundredth of it without averaging), and on
    the full deck the matrix product equals the sweep for several ranges."""
    hands = deck_hands(SHORT)
    board = (DECK20[0],)
    live = ~np.isin(hands, board).any(axis=1)
    reach = np.random.default_rng(5).random(hands.shape[0]) * live
    exact = RunOuts(SHORT, hands, board, 1000, seed=0).values(reach) * live
    draws = np.array([RunOuts(SHORT, hands, board, 8, seed=s).values(reach) * live for s in range(400)])
    one_error = np.abs(draws[0] - exact).mean()
    mean_error = np.abs(draws.mean(axis=0) - exact).mean()
    assert mean_error < one_error / 8  # 20 = sqrt(400) times smaller in expectation
    full = load_game("holdem.nolimit.2p.reverse_blinds")
    big = deck_hands(full)
    ro = RunOuts(full, big, (), 12, seed=3)
    assert not ro.exact and len(ro) == 12
    ranges = np.random.default_rng(6).random((3, big.shape[0]))
    np.testing.assert_allclose(ro.values_many(ranges), np.stack([ro.values(r) for r in ranges]), atol=1e-9)


def _flop_all_in() -> tuple[State, tuple[int, ...]]:
    state = State.new_hand(SHORT).apply(Action.call()).apply(Action.call())
    return state.apply(Action.raise_to(state.max_raise_to)), (DECK20[0],)


def test_a_depth_limited_all_in_is_the_full_subgame():
    """Facing an all-in on the 20-card flop, the subgame that stops there (every run-out
    enumerated) solves to the same strategy and values as the one that deals the turn and
    the river as chance nodes."""
    state, board = _flop_all_in()
    rng = np.random.default_rng(0)
    n = deck_hands(SHORT).shape[0]
    ranges = [rng.random(n), rng.random(n)]
    full = SubgameSolver(state, board, ranges, SubgameBetting()).solve(30)
    limited = SubgameSolver(state, board, ranges, SubgameBetting(), runouts=1000).solve(30)
    assert len(limited.tree) == 3 and len(full.tree) > 300
    np.testing.assert_allclose(limited.average(0), full.average(0), atol=1e-12)
    for p in (0, 1):
        np.testing.assert_allclose(limited.values(p), full.values(p), atol=1e-8)
        np.testing.assert_allclose(limited.values(p, best=True), full.values(p, best=True), atol=1e-8)


def test_a_depth_limited_tree_stops_at_the_street_end():
    """Preflop on the full deck the whole rest of the hand is refused (too many boards);
    limited, every path ends in a fold or a leaf on the first street, and a solve lowers
    the exploitability of its own game."""
    full = load_game("holdem.nolimit.2p.reverse_blinds")
    state = State.new_hand(full).apply(Action.raise_to(300))
    with pytest.raises(SubgameTooBig):
        build_subgame(state, SubgameBetting(), ())
    tree = build_subgame(state, SubgameBetting(sizes=(1.0,), cap=3), (), depth_limited=True)
    leaves = [v for v, k in enumerate(tree.kind) if k == 4]
    assert leaves and all(tree.state[v].round == 1 or tree.state[v].actor is None for v in leaves)
    assert all(tree.state[v].round == 0 for v, k in enumerate(tree.kind) if k == 0)
    n = deck_hands(full).shape[0]
    solver = SubgameSolver(state, (), [np.ones(n), np.ones(n)], SubgameBetting(sizes=(1.0,), cap=2), runouts=20)
    before = solver.solve(1).exploitability()
    assert solver.solve(60).exploitability() < before / 3


def test_a_depth_limited_best_response_shows_down_at_the_leaf():
    """No-limit Leduc, the player checked first: a responder that may only check gets a
    check-down of the flop card against the player's checking range (dense, every card),
    which is what the walk that stops at the street's end gives; after the responder's
    all-in the walk that stops equals the full walk (nothing is decided after it)."""
    from solver.evaluation.real_response import _Walker

    pol = translated(open_strategy(STRATEGIES / "leduc.nolimit.2p.strategy", game=LEDUC))
    walker = _Walker(pol, LEDUC, symmetric=False)
    state = State.new_hand(LEDUC)
    ms = walker.own_moves({0: np.ones(6)}, state)[Action.call()]
    state = state.apply(Action.call())
    hands, got = responder_values(pol, state, (), ms, 1, Responder(sizes=(), all_in=False, past_cap=0), (50, 0))
    reach = sum(ms.values())
    assert 0 < reach.min() < reach.max()  # a range, not every hand alike
    np.testing.assert_allclose(got, state.spent[1] * _dense_checkdown(LEDUC, hands, (), reach), atol=1e-9)
    shove = Action.raise_to(state.max_raise_to)
    after = walker.after_opponent(ms, state, shove)
    whole = responder_values(pol, state.apply(shove), (), after, 1, Responder())[1]
    limited = responder_values(pol, state.apply(shove), (), after, 1, Responder(), (50, 0))[1]
    np.testing.assert_allclose(limited, whole, atol=1e-9)
    assert np.abs(whole).max() > 1


def test_blueprint_values_from_the_start_are_its_self_play():
    """From the first decision, the translated blueprint's per-hand values when it plays
    both seats sum (over the 30 deals of two Leduc cards) to its self-play value, seat 0
    and seat 1 alike; and a best response gets at least as much for every hand."""
    from solver.evaluation.real_response import blueprint_values, real_self_play_value

    pol = translated(open_strategy(STRATEGIES / "leduc.nolimit.2p.strategy", game=LEDUC))
    v0 = real_self_play_value(pol)
    assert abs(v0) > 1e-3
    root = State.new_hand(LEDUC)
    for seat, sign in ((0, 1.0), (1, -1.0)):
        _, values = blueprint_values(pol, root, (), {0: np.ones(6)}, {0: np.ones(6)}, seat)
        assert values.sum() / 30 == pytest.approx(sign * v0, abs=1e-12)
        _, best = responder_values(pol, root, (), {0: np.ones(6)}, seat, None)
        assert (best >= values - 1e-9).all() and best.sum() > values.sum()
