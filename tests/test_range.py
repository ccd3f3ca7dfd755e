"""Range queries (solver.play.policy.range_query): the translated policy for every private
hand at once, equal to the one-hand computation, and to what the player draws."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest

from poker.cards import deck_cards
from poker.state import Action, ActionKind, State
from solver.play.policy import HandWalk, follow, range_query
from solver.play.player import translated
from solver.strategy_io import open_strategy

STRATEGIES = Path(__file__).resolve().parent.parent / "strategies"


def _file(name):
    return open_strategy(STRATEGIES / f"{name}.strategy")


def _random_history(game, rng, max_actions=6):
    """A random real state with someone to act: sizes anywhere in the legal range."""
    while True:
        s = State.new_hand(game)
        for _ in range(rng.randint(0, max_actions)):
            if s.actor is None:
                break
            kinds = s.legal_actions()
            k = rng.choice(kinds)
            if k is ActionKind.RAISE:
                s2 = s.apply(Action.raise_to(rng.randint(s.min_raise_to, s.max_raise_to)))
            else:
                s2 = s.apply(Action.fold() if k is ActionKind.FOLD else Action.call())
            if s2.actor is None:
                break
            s = s2
        if s.actor is not None:
            return s


def _one_hand(policy, state, hole, board):
    """The same mixture for one hand, with the one-hand bucket function."""
    out: dict[str, float] = {}
    for b in follow(policy, state):
        if b.lost:
            out["c"] = out.get("c", 0.0) + b.weight
            continue
        p = policy.probabilities(b.node, policy.bucket(state.round, hole, board))
        for j, child in enumerate(policy.children(b.node)):
            a = policy.real_action(child, state).to_acpc(False)
            out[a] = out.get(a, 0.0) + b.weight * p[j]
    return out


@pytest.mark.parametrize("name,histories", [("leduc.nolimit.2p", 40), ("holdem.nolimit.2p.short20", 8)])
def test_range_equals_the_one_hand_computation(name, histories):
    f = _file(name)
    game, pol = f.game, translated(f)
    rng = random.Random(5)
    deck = deck_cards(game.num_ranks, game.num_suits)
    for _ in range(histories):
        s = _random_history(game, rng)
        board = tuple(rng.sample(deck, sum(game.num_board_cards[: s.round + 1])))
        r = range_query(pol, s, board)
        k, left = game.num_hole_cards, len(deck) - len(board)
        assert r.hands.shape == (math.comb(left, k), k)
        assert not set(r.hands.ravel().tolist()) & set(board)  # card removal
        np.testing.assert_allclose(r.probs.sum(axis=1), 1.0, atol=1e-12)
        for a in r.actions:
            assert s.verify(a) == a
        for i in rng.sample(range(len(r.hands)), min(12, len(r.hands))):
            hole = tuple(int(c) for c in r.hands[i])
            want = _one_hand(pol, s, hole, board)
            got = r.of(hole)
            assert set(want) <= set(got)
            for a, p in got.items():
                assert p == pytest.approx(want.get(a, 0.0), abs=1e-12), (s.betting_string(), hole, a)


def test_range_is_what_the_player_draws():
    f = _file("leduc.nolimit.2p")
    game, pol = f.game, translated(f)
    s = State.from_betting(game, "r7")  # off the tree: a mixture of two abstract bets
    assert len(follow(pol, s)) == 2
    hole = (deck_cards(game.num_ranks, game.num_suits)[5],)
    want = range_query(pol, s, ()).of(hole)
    n = 6000
    counts: dict[str, int] = {}
    for hand in range(n):
        a, _ = HandWalk(pol, 1, 17, hand).decide(s, hole, ())
        counts[a.to_acpc(False)] = counts.get(a.to_acpc(False), 0) + 1
    for a, p in want.items():
        sd = math.sqrt(max(p * (1 - p), 1e-9) / n)
        assert abs(counts.get(a, 0) / n - p) < 4 * sd + 1e-9, (a, p, counts)


def test_range_query_refuses_what_it_cannot_answer():
    f = _file("leduc.nolimit.2p")
    pol = translated(f)
    with pytest.raises(ValueError, match="board cards"):
        range_query(pol, State.new_hand(f.game), (deck_cards(3, 2)[0],))
    with pytest.raises(ValueError, match="hand is over"):
        range_query(pol, State.from_betting(f.game, "r3f"), ())
