"""A last-street subgame solved in vector form (solver/resolve/subgame.py).

Oracles: a scalar walk over every pair of hands (values and best responses, no vectors,
no O(n) terminal sums) on no-limit Leduc's river; convergence of CFR+ and Discounted CFR
toward an equilibrium of the subgame; and the re-solving gadget's guarantee: no
opponent hand gains against the re-solved strategy more than its alternative.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from poker.cards import deck_cards
from poker.evaluator import evaluate
from poker.game import load_game
from poker.state import Action, State
from solver.resolve.subgame import SubgameBetting, SubgameSolver, build_subgame, deck_hands

LEDUC = load_game("leduc.nolimit.2p")


def _river(game, actions=("c", "c")):
    state = State.new_hand(game)
    for a in actions:
        state = state.apply(Action.call() if a == "c" else Action.raise_to(int(a)))
    assert state.round == game.num_rounds - 1 and state.actor is not None
    return state


def _payoff(state, p, mine, theirs, board):
    if state.folded[p]:
        return -state.spent[p]
    if state.folded[1 - p]:
        return state.spent[1 - p]
    a, b = evaluate(list(mine) + list(board)), evaluate(list(theirs) + list(board))
    return state.spent[p] * ((a > b) - (a < b))


def _scalar_values(solver, p, reach_o, best):
    """Per hand of ``p``: its value against the other seat's average strategy and
    ``reach_o``, by recursion over the tree for each hand (max at ``p``'s nodes when
    ``best``; at a chance node the mean over the cards that can come with both hands
    out, a card either hand holds leaving that pair out)."""
    tree = solver.tree
    hands = solver.hands.tolist()
    deck = solver.game.num_ranks * solver.game.num_suits
    k = solver.game.num_hole_cards
    root_board = set(tree.boards[tree.board[0]])
    out = np.zeros(len(hands))
    for i, h in enumerate(hands):
        if set(h) & root_board:
            continue

        def walk(node, w):
            board = tree.boards[tree.board[node]]
            if tree.kind[node] == 3:
                total = 0.0
                for c in tree.children[node]:
                    new = set(tree.boards[tree.board[c]]) - set(board)
                    if new & set(h):
                        continue
                    total += walk(c, np.array([0.0 if new & set(g) else x for g, x in zip(hands, w)]))
                return total / math.comb(deck - len(board) - 2 * k, len(tree.boards[tree.board[tree.children[node][0]]]) - len(board))
            if tree.kind[node] != 0:
                return sum(w[j] * _payoff(tree.state[node], p, h, g, board)
                           for j, g in enumerate(hands) if w[j] and not set(g) & (set(h) | set(board)))
            sigma = solver.average(node)
            if tree.player[node] == p:
                vals = [walk(c, w) for c in tree.children[node]]
                return max(vals) if best else sum(sigma[a, i] * v for a, v in enumerate(vals))
            return sum(walk(c, w * sigma[a]) for a, c in enumerate(tree.children[node]))

        out[i] = walk(0, reach_o.copy())
    return out


def test_tree_is_the_real_betting():
    state = _river(LEDUC)
    tree = build_subgame(state, SubgameBetting(sizes=(1.0,), all_in=True, extra=(7,)), [42])
    root = tree.actions[0]
    assert root[0] == Action.call() and Action.raise_to(7) in root and Action.raise_to(state.max_raise_to) in root
    for n in tree.decisions():
        s = tree.state[n]
        for a, c in zip(tree.actions[n], tree.children[n]):
            assert tree.state[c] == s.apply(a)  # every action legal, every child its result
    with pytest.raises(ValueError, match="board cards"):
        build_subgame(state, SubgameBetting())
    with pytest.raises(ValueError, match="complete boards"):
        build_subgame(State.new_hand(load_game("holdem.nolimit.2p.reverse_blinds")), SubgameBetting())
    capped = build_subgame(state, SubgameBetting(sizes=(0.5,), all_in=False, cap=1), [42])
    assert all(tree_state.num_raises_in_round <= 1 for tree_state in capped.state)
    # From the first street: a chance node deals each flop card that can come, and what
    # follows it is the river's tree on that board.
    whole = build_subgame(State.new_hand(LEDUC), SubgameBetting(sizes=(1.0,)))
    chance = [n for n, k in enumerate(whole.kind) if k == 3]
    assert chance and all(len(whole.children[n]) == 6 for n in chance)
    assert {len(whole.boards[whole.board[c]]) for n in chance for c in whole.children[n]} == {1}


@pytest.mark.parametrize("algorithm,root", [("cfr+", "river"), ("dcfr", "river"), ("dcfr", "first street")])
def test_values_and_best_responses_match_a_scalar_walk(algorithm, root):
    rng = np.random.default_rng(3)
    n = deck_hands(LEDUC).shape[0]
    ranges = [rng.uniform(0.1, 1.0, n), rng.uniform(0.1, 1.0, n)]
    state, board = (_river(LEDUC, ("4", "c")), [42]) if root == "river" else (State.new_hand(LEDUC), [])
    solver = SubgameSolver(state, board, ranges, SubgameBetting(sizes=(0.5, 1.0)), algorithm=algorithm).solve(30)
    for p in (0, 1):
        reach_o = solver.ranges[1 - p]
        for best in (False, True):
            assert solver.values(p, reach_o, best=best) == pytest.approx(
                _scalar_values(solver, p, reach_o, best), abs=1e-9)


@pytest.mark.parametrize("name", ["leduc.nolimit.2p", "holdem.nolimit.2p.short20"])
def test_cfr_plus_and_dcfr_converge(name):
    game = load_game(name)
    n = deck_hands(game).shape[0]
    board = sorted(deck_cards(game.num_ranks, game.num_suits))[-game.total_board_cards:]
    state = _river(game, ("c",) * (2 * game.num_rounds - 2))
    for algorithm, bound in (("cfr+", 0.05), ("dcfr", 0.02)):
        solver = SubgameSolver(state, board, [np.ones(n), np.ones(n)], SubgameBetting(sizes=(1.0,)),
                               algorithm=algorithm)
        early = solver.solve(10).exploitability()
        late = solver.solve(290).exploitability()
        assert late < early / 5 and late < bound * game.big_blind, (algorithm, early, late)


def test_the_gadget_keeps_every_opponent_hand_at_or_below_its_alternative():
    """Re-solve a weak strategy (a few iterations) behind the gadget, with alternatives the
    opponent's best-response values against it: after re-solving, no opponent hand's
    best-response value exceeds its alternative by more than the solving error, and
    the opponent's total gain does not grow."""
    board = [50]
    state = _river(LEDUC)
    n = deck_hands(LEDUC).shape[0]
    rng = np.random.default_rng(8)
    mine = rng.uniform(0.2, 1.0, n)
    weak = SubgameSolver(state, board, [mine, np.ones(n)], SubgameBetting(sizes=(0.5, 1.0))).solve(3)
    alt = weak.values(1, mine, best=True)  # what the opponent wins per hand against it
    resolved = SubgameSolver(state, board, [mine, np.ones(n)], SubgameBetting(sizes=(0.5, 1.0)),
                             algorithm="dcfr", gadget=(1, alt)).solve(400)
    after = resolved.values(1, mine, best=True)
    live = resolved.live > 0
    assert np.all(after[live] <= alt[live] + 1e-3)
    assert after[live].sum() < alt[live].sum() - 1.0  # the weak strategy's leaks are closed
    assert resolved.entering().shape == (n,)
    # Alternatives an equilibrium attains: the re-solved strategy attains them too, and
    # the hands that hold a board card count for nothing whatever the range says.
    plain = SubgameSolver(state, board, [mine, np.ones(n)], SubgameBetting(sizes=(0.5, 1.0)), algorithm="dcfr").solve(400)
    tight = plain.values(1, mine, best=True)
    again = SubgameSolver(state, board, [mine, np.ones(n)], SubgameBetting(sizes=(0.5, 1.0)),
                          algorithm="dcfr", gadget=(1, tight)).solve(1000)
    assert np.all(again.values(1, mine, best=True)[live] <= tight[live] + 0.02)


def _root_value(solver):
    mass = float(solver.ranges[0] @ solver.values_of.disjoint(solver.ranges[1][None, :])[0])
    return float(solver.ranges[0] @ solver.values(0)) / mass


def test_whole_leduc_from_the_root_has_its_known_value():
    """Rooted at the first street with every hand equally likely, the subgame is the
    whole game: limit Leduc's value for the first player is about -0.0856; no-limit
    Leduc's, with pot raises and all-in, is what the training solver's CFR+ finds on the
    same betting."""
    from solver.evaluation.best_response import exploitability, profile_value
    from solver.training.algorithms import solve

    game = load_game("leduc.limit.2p")
    n = deck_hands(game).shape[0]
    whole = SubgameSolver(State.new_hand(game), (), [np.ones(n), np.ones(n)],
                          SubgameBetting(sizes=(1.0,), all_in=False), algorithm="dcfr").solve(1000)
    assert whole.exploitability() < 2e-4
    assert _root_value(whole) == pytest.approx(-0.0856, abs=5e-4)
    n = deck_hands(LEDUC).shape[0]
    nolimit = SubgameSolver(State.new_hand(LEDUC), (), [np.ones(n), np.ones(n)], SubgameBetting(sizes=(1.0,)),
                            algorithm="dcfr").solve(1500)
    reference = solve(LEDUC, "cfr+", iterations=1500, betting="1p,a")
    slack = nolimit.exploitability() + exploitability(LEDUC, reference).exploitability
    assert abs(_root_value(nolimit) - profile_value(reference, 0)) <= slack + 1e-9


def test_a_turn_subgame_with_the_river_enumerated_converges():
    game = load_game("holdem.nolimit.2p.short20")
    n = deck_hands(game).shape[0]
    state = State.new_hand(game)
    while state.round < 2:
        state = state.apply(Action.call())
    board = sorted(deck_cards(game.num_ranks, game.num_suits))[-2:]
    solver = SubgameSolver(state, board, [np.ones(n), np.ones(n)], SubgameBetting(sizes=(1.0,), cap=2),
                           algorithm="dcfr")
    assert sum(k == 3 for k in solver.tree.kind) > 0
    early = solver.solve(5).exploitability()
    late = solver.solve(195).exploitability()
    assert late < early / 100 and late < 0.02 * game.big_blind  # 9.2 chips after 5, 0.029 after 200
