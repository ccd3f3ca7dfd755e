"""The exact real-game evaluation of the re-solving player (solver/resolve/exact.py)."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from poker.game import load_game
from poker.state import State
from solver.evaluation.real_response import _legal_actions, real_exploitability, translated_policy
from solver.resolve.exact import ResolvingPlayer, resolved_exploitability
from solver.resolve.player import ResolveOptions, ResolvingWalk
from solver.training.algorithms import solve

#: No-limit Leduc with 6-chip stacks: its whole real tree has 817 nodes, so the exact
#: walks take a second or two.
GAME = dataclasses.replace(load_game("leduc.nolimit.2p"), stack=(6, 6))
OPTIONS = ResolveOptions(iterations=60)


@pytest.fixture(scope="module")
def policy():
    """The translated CFR+ blueprint the tests re-solve from (solved when first asked for,
    not when the module is collected: every pytest run, and every xdist worker, collects
    it)."""
    return translated_policy(solve(GAME, "cfr+", iterations=1000, betting="0.5p,1p,a"))


def test_a_player_that_never_re_solves_is_the_translated_player_exactly(policy):
    never = ResolveOptions(iterations=10, first_street=GAME.num_rounds)  # no street qualifies
    got, info = resolved_exploitability(policy, never, GAME)
    want = real_exploitability(policy, GAME, self_play=False, count_tree=False)
    assert info["resolves"] == 0
    assert got.br == pytest.approx(want.br, abs=1e-12)


def test_re_solving_cuts_the_real_exploitability(policy):
    translated = real_exploitability(policy, GAME, self_play=False, count_tree=False).mbb_per_game
    resolved, info = resolved_exploitability(policy, OPTIONS, GAME)
    assert info["resolves"] > 100 and info["failed"] == 0
    assert 0.0 <= resolved.mbb_per_game < translated / 2, (resolved.mbb_per_game, translated)


def test_a_seconds_cap_is_refused(policy):
    with pytest.raises(ValueError, match="iteration budget"):
        resolved_exploitability(policy, ResolveOptions(iterations=10, seconds=1.0), GAME)


@pytest.mark.parametrize("position", [0, 1])
def test_the_tabulated_player_is_the_playing_player(position, policy):
    """Along random real histories, the exact walk's probability of each action of the
    re-solving player equals the one the playing :class:`ResolvingWalk` draws it from,
    for every hand, on a random board. The player re-solves at its first decision
    (``street_starts``), so that from there on its strategy depends on the public
    history alone and one walk per hand can follow any history."""
    options = dataclasses.replace(OPTIONS, street_starts=(0,))
    rng = random.Random(position)
    walker = ResolvingPlayer(policy, options, GAME)
    walker.position = position
    cards = walker.cards
    h = cards.n_hands
    checked = 0
    for game_no in range(10):
        state = State.new_hand(GAME)
        ms = {(0, 0, (), -1, 0): np.ones(cards.n_rows(0))}
        street = 0
        walks = {hand: ResolvingWalk(policy, position, 7, game_no, options) for hand in range(h)}
        board_i = rng.randrange(len(cards.boards[1]))
        while state.actor is not None:
            if state.round != street:
                ms = {k: cards.expand(r, street, state.round) for k, r in ms.items()}
                street = state.round
            if state.actor != position:
                action = rng.choice(list(_legal_actions(state)))
                ms = walker.after_opponent(ms, state, action)
                state = state.apply(action)
                continue
            moves = walker.own_moves(ms, state)
            reach = sum(ms.values())
            b = 0 if street == 0 else board_i
            board = cards.boards[street][b]
            for hand, walk in walks.items():
                row = b * h + hand
                if reach[row] <= 0.0 or set(cards.hands[hand]) & set(board):
                    continue
                _, probs = walk.decide(state, cards.hands[hand], board)
                assert probs is not None and walk._solution is not None  # re-solved or followed
                exact = {a: float(sum(m.values())[row] / reach[row]) for a, m in moves.items()}
                actions = walk._solution.tree.actions[walk._node]
                assert set(exact) <= set(actions)
                for a, p in zip(actions, probs):
                    assert exact.get(a, 0.0) == pytest.approx(float(p), abs=1e-9), (state.betting_string(), hand, a)
                checked += 1
            draw = rng.choice(list(moves))
            ms = moves[draw]
            state = state.apply(draw)
    assert checked > 40


def test_head_to_head_of_a_player_that_never_re_solves_is_the_blueprints_self_play(policy):
    from solver.evaluation.real_response import real_self_play_value
    from solver.resolve.exact import resolved_head_to_head

    never = ResolveOptions(iterations=10, first_street=GAME.num_rounds)
    v = real_self_play_value(policy, GAME)
    assert resolved_head_to_head(policy, never, GAME) == pytest.approx((v, -v), abs=1e-12)


def test_head_to_head_of_the_re_solving_player_is_near_its_blueprint(policy):
    """Against a blueprint nearly at equilibrium of its abstraction, re-solving neither
    wins nor loses much (solving error and the sizes the blueprint translates), and the
    two seats' values differ from the blueprint's own by a few hundredths of a chip."""
    from solver.evaluation.real_response import real_self_play_value
    from solver.resolve.exact import resolved_head_to_head

    v = real_self_play_value(policy, GAME)
    got = resolved_head_to_head(policy, dataclasses.replace(OPTIONS, street_starts=(0, 1)), GAME)
    assert got[0] != pytest.approx(v, abs=1e-9)  # it re-solved
    assert abs(got[0] - v) < 0.05 and abs(got[1] + v) < 0.05
