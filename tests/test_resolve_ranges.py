"""Both seats' blueprint ranges at a real history (solver/resolve/ranges.py).

Oracle: for each hand and seat, the likelihood by brute force: every mapping branch of
the history enumerated one by one (each real action's translation outcomes, with their
probabilities), the seat's blueprint probability of the abstract action each of its
actions maps to multiplied along the branch, for that one hand's bucket; no vectors,
no merging of branches.
"""

from __future__ import annotations

import random
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from poker.cards import deck_cards
from poker.game import Game, load_game
from poker.rng import Dealer
from poker.state import Action, State
from solver.play.policy import LOST, HandWalk, TranslatedPolicy
from solver.play.player import translated
from solver.resolve.ranges import BlueprintRanges
from solver.strategy_io import open_strategy
from solver.tree import CHANCE

STRATEGIES = Path(__file__).resolve().parent.parent / "strategies"


def _brute(pol: TranslatedPolicy, seat: int, hole: tuple[int, ...], history) -> float:
    def rec(k: int, node: int, weight: float) -> float:
        if weight == 0.0:
            return 0.0
        if k == len(history):
            return weight
        state, action, board = history[k]
        if node != LOST:
            node = pol.sync(node, state)
        if node == LOST or not pol.in_step(node, state):
            keep = node != LOST and pol._kind[node] == CHANCE
            return rec(k + 1, node if keep else LOST, weight)
        outcomes, _ = pol.translate(node, state, action)
        total = 0.0
        for child, q in outcomes:
            factor = q
            if state.actor == seat:
                bucket = pol.bucket(state.round, hole, board)
                factor *= pol.probabilities(node, bucket)[child - pol._child[node]]
            total += rec(k + 1, child, weight * factor)
        return total

    return rec(0, 0, 1.0)


def _random_action(state: State, rng: random.Random) -> Action:
    lo, hi = state.min_raise_to, state.max_raise_to
    r = rng.random()
    if lo is None or hi is None or r < 0.65:
        return Action.fold() if state.can_fold() and r < 0.02 else Action.call()
    if r < 0.75:
        return Action.raise_to(lo)
    if r < 0.78:
        return Action.raise_to(hi)
    return Action.raise_to(rng.randint(lo, min(hi, lo + state.pot)))


def _histories(game: Game, pol: TranslatedPolicy, count: int, street: int, start: int):
    """Random real hands reaching ``street``: seat 0 plays the translated blueprint (its
    own sizes, on the tree), seat 1 at random (off-tree sizes)."""
    out = []
    seed = start
    while len(out) < count:
        rng = random.Random(seed)
        deal = Dealer(game, seed).next_deal()
        walk = HandWalk(pol, 0, seed=seed, hand=seed)
        state = State.new_hand(game, deal)
        history = []
        while state.actor is not None:
            board = deal.board_through(state.round)
            action = walk.decide(state, deal.holes[0], board)[0] if state.actor == 0 else _random_action(state, rng)
            history.append((state, action, board))
            state = state.apply(action)
        if history[-1][0].round >= street:
            out.append(history)
        seed += 1
    return out


@pytest.mark.parametrize("name,count,street,every", [("leduc.nolimit.2p", 24, 1, 1),
                                                    ("holdem.nolimit.2p.short20", 5, 2, 2)])
def test_both_ranges_equal_the_brute_force_at_every_depth(name, count, street, every):
    game = load_game(name)
    pol = translated(open_strategy(STRATEGIES / f"{name}.strategy", game=game))
    deck = deck_cards(game.num_ranks, game.num_suits)
    hands = np.array(list(combinations(sorted(deck), game.num_hole_cards)), dtype=np.int64)
    checked = 0
    for history in _histories(game, pol, count, street, 7):
        ranges = BlueprintRanges(pol, hands)
        for k, (state, action, board) in enumerate(history):
            if k % every == 0:
                live = ~np.isin(hands, board).any(axis=1)
                for seat in (0, 1):
                    got = ranges.weights(seat)
                    want = np.array([_brute(pol, seat, tuple(h), history[:k]) if live[i] else 0.0
                                     for i, h in enumerate(hands.tolist())])
                    assert got[live] == pytest.approx(want[live], abs=1e-12, rel=1e-9), (k, seat)
                checked += 1
            ranges.after(state, board, action)
    assert checked >= 2 * count


def test_an_off_tree_raise_weighs_the_mapped_nodes_by_the_translation():
    """The other seat raises a size between two of the tree's: its range is the two
    mapped children's blueprint columns, weighted by the pseudo-harmonic probabilities."""
    game = load_game("leduc.nolimit.2p")
    pol = translated(open_strategy(STRATEGIES / "leduc.nolimit.2p.strategy", game=game))
    hands = np.array([[c] for c in sorted(deck_cards(game.num_ranks, game.num_suits))], dtype=np.int64)
    state = State.new_hand(game)
    _, sizes = pol.raise_children(0)
    tos = [state.max_spent + int(round(x * (state.pot + state.to_call))) for x in sizes]
    lo, hi = next((a, b) for a, b in zip(tos, tos[1:]) if b - a >= 2)
    off = Action.raise_to((lo + hi) // 2)
    outcomes, exact = pol.translate(0, state, off)
    assert not exact and len(outcomes) == 2
    ranges = BlueprintRanges(pol, hands)
    ranges.after(state, (), off)
    probs = pol.rows(0, np.array([pol.bucket(0, h, ()) for h in hands.tolist()]))
    want = sum(q * probs[:, child - pol._child[0]] for child, q in outcomes)
    assert ranges.weights(state.actor) == pytest.approx(want, abs=1e-12)
    assert ranges.weights(1 - state.actor) == pytest.approx(np.ones(len(hands)))
