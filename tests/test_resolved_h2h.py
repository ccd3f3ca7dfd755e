"""The exact head-to-head of re-solving players on sampled boards (solver/resolve/h2h.py)."""

from __future__ import annotations

import dataclasses
import json
import random

import numpy as np
import pytest

import solver.resolve.exact as exact_mod
from poker.cards import deck_cards
from poker.game import load_game
from poker.state import State
from solver.evaluation._cards import CardLayer
from solver.evaluation.head_to_head import all_boards, board_value, head_to_head, n_boards
from solver.evaluation.real_response import translated_policy
from solver.play.policy import HandWalk
from solver.resolve.exact import resolved_head_to_head
from solver.resolve.h2h import Contender, board_h2h, predict_memory, resolved_h2h
from solver.resolve.player import ResolveOptions, ResolvingWalk
from solver.training.algorithms import solve

#: No-limit Leduc with 6-chip stacks (817 real nodes): the exact walks take a second or two.
GAME = dataclasses.replace(load_game("leduc.nolimit.2p"), stack=(6, 6))
#: Re-solving from the first decision of each street: every hand re-solves.
OPTIONS = ResolveOptions(iterations=30, street_starts=(0, 1), first_street=0)


@pytest.fixture(scope="module")
def policies():
    """Two translated CFR+ blueprints of different betting (solved when first asked for)."""
    return (translated_policy(solve(GAME, "cfr+", iterations=400, betting="0.5p,1p,a")),
            translated_policy(solve(GAME, "cfr+", iterations=300, betting="1p,a")))


@pytest.mark.parametrize("through", [0, 1])
def test_on_every_board_it_is_the_exact_tabulated_head_to_head(policies, through):
    """Every board, dealt through the preflop (one board, everything enumerated) or the
    flop (six boards): the re-solving player's value against its blueprint in each seat
    is solver/resolve/exact.py's, a walk over every board at once, to 1e-9."""
    policy = policies[0]
    want = resolved_head_to_head(policy, OPTIONS, GAME)
    got = resolved_h2h(Contender(policy, OPTIONS), Contender(policy), GAME, through=through)
    r = got.result
    assert r.exact and r.boards == r.boards_total == n_boards(GAME, through)
    assert r.seat_values == pytest.approx(want, abs=1e-9)
    assert r.chips_per_game == pytest.approx((want[0] + want[1]) / 2.0, abs=1e-9)
    assert got.resolves > 0 and got.failed == 0
    assert r.ci95[0] == r.ci95[1] == r.mbb_per_game


def test_two_translated_players_score_what_head_to_head_gives(policies):
    """Neither side re-solving, it is the head-to-head of two translated players: the same
    figure as solver/evaluation/head_to_head.py's walk over final boards, by a different
    walk (a board's rows as a card layer, the later cards enumerated)."""
    a, b = policies
    want = head_to_head(a, b, GAME)
    got = resolved_h2h(Contender(a), Contender(b), GAME, through=0).result
    assert got.mbb_per_game == pytest.approx(want.mbb_per_game, abs=1e-9)
    assert got.seat_values == pytest.approx(want.seat_values, abs=1e-12)
    assert got.exact


def test_a_turn_board_is_the_mean_of_its_final_boards():
    """On the 20-card game a board dealt through the turn is worth the mean of the final
    boards it leads to, each walked alone by head_to_head's board walk: the layer's
    weights per deal given the board are right."""
    from solver.play.player import translated
    from solver.strategy_io import open_strategy

    game = load_game("holdem.nolimit.2p.short20")
    policy = translated(open_strategy("strategies/holdem.nolimit.2p.short20.strategy", game=game))
    deck = deck_cards(game.num_ranks, game.num_suits)
    turn = (deck[0], deck[5], deck[9])[: game.board_cards_through(2)]
    v0, v1, tally = board_h2h(Contender(policy), Contender(policy), game, turn, 2)
    assert tally.resolves == 0 and v0 == pytest.approx(v1, abs=1e-12)  # the same player in both seats
    finals = [bd for bd in all_boards(game) if bd[: len(turn)] == turn]
    assert len(finals) == game.num_ranks * game.num_suits - len(turn)
    want = np.mean([board_value(policy, policy, game, bd)[0] for bd in finals])
    assert v0 == pytest.approx(want, abs=1e-9)


def test_the_layer_deals_hands_that_miss_the_whole_given_board():
    deck = deck_cards(GAME.num_ranks, GAME.num_suits)
    layer = CardLayer(GAME, fixed=(1, (deck[0], deck[5])[: GAME.board_cards_through(1)]))
    board = layer.boards[1][0]
    dead = [i for i, h in enumerate(layer.hands) if set(h) & set(board)]
    assert dead and all(layer.live[0][i] == 0.0 for i in dead)  # preflop already
    with pytest.raises(ValueError, match="cards"):
        CardLayer(GAME, fixed=(1, ()))


def test_sampled_boards_give_an_interval_and_a_seconds_cap_is_refused(policies):
    policy = policies[0]
    got = resolved_h2h(Contender(policy, OPTIONS), Contender(policy), GAME, through=1, boards=3, seed=2).result
    assert not got.exact and got.boards == 3 and got.boards_total == 6
    assert got.ci95[0] < got.mbb_per_game < got.ci95[1]
    with pytest.raises(ValueError, match="iteration budget"):
        resolved_h2h(Contender(policy, dataclasses.replace(OPTIONS, seconds=1.0)), Contender(policy), GAME)


def test_jobs_give_the_same_figures(policies):
    policy = policies[0]
    one = resolved_h2h(Contender(policy, OPTIONS), Contender(policies[1], OPTIONS), GAME, through=1)
    two = resolved_h2h(Contender(policy, OPTIONS), Contender(policies[1], OPTIONS), GAME, through=1, jobs=2)
    assert two.result.board_values == one.result.board_values
    assert two.resolves == one.resolves > 0


def test_the_cached_re_solve_is_the_playing_players_bit_for_bit(policies, monkeypatch):
    """Every re-solve the playing ResolvingWalk makes in seeded hands on a board, against
    its blueprint, is one the head-to-head made on that board: the same inputs (its range,
    the opponent's, the gadget's alternatives) and the same solution, bit for bit."""
    policy = policies[0]
    made: dict[tuple, list] = {}
    real = exact_mod.resolve_subgame

    def recording(pol, options, position, state, board, *args, **kwargs):
        got = real(pol, options, position, state, board, *args, **kwargs)
        key = (position, tuple(a.action for a in state.history), tuple(board))
        made.setdefault(key, []).append(got)
        return got

    monkeypatch.setattr(exact_mod, "resolve_subgame", recording)
    every = deck_cards(GAME.num_ranks, GAME.num_suits)
    board = (every[3], every[1])[: GAME.board_cards_through(1)]
    board_h2h(Contender(policy, OPTIONS), Contender(policy), GAME, board, 1)
    assert made
    rng = random.Random(5)
    deck = [c for c in every if c not in board]
    checked = 0
    for hand in range(30):
        holes = rng.sample(deck, 2 * GAME.num_hole_cards)
        k = GAME.num_hole_cards
        hole = (tuple(holes[:k]), tuple(holes[k:]))
        for position in (0, 1):
            me = ResolvingWalk(policy, position, 3, hand, OPTIONS)
            other = HandWalk(policy, 1 - position, 4, hand)
            state = State.new_hand(GAME)
            while state.actor is not None:
                shown = board[: GAME.board_cards_through(state.round)]
                if state.actor == position:
                    before = me.counts.resolves
                    action, _ = me.decide(state, hole[position], shown)
                    if me.counts.resolves > before:
                        key = (position, tuple(a.action for a in state.history), tuple(shown))
                        mine, theirs, alt = me.last_inputs
                        same = [r for r in made.get(key, []) if np.array_equal(r.mine, mine)
                                and np.array_equal(r.theirs, theirs) and np.array_equal(r.alternatives, alt)]
                        assert same, key
                        sol = me.solution[0]
                        assert any(np.array_equal(r.solver.average(0), sol.average(0)) for r in same)
                        checked += 1
                else:
                    action, _ = other.decide(state, hole[1 - position], shown)
                state = state.apply(action)
    assert checked >= 60


def test_memory_is_predicted_and_grows_with_jobs(policies):
    policy = policies[0]
    one = predict_memory(Contender(policy, OPTIONS), Contender(policy), GAME, 0, 1)
    two = predict_memory(Contender(policy, OPTIONS), Contender(policy), GAME, 0, 2)
    assert one.per_job > 0 and two.bytes == 2 * one.bytes
    assert "MiB" in one.text() or "GiB" in one.text()


# ---------------------------------------------------------------- the command


def test_cli_h2h_with_a_re_solving_player(tmp_path, capsys):
    """``eval h2h resolve:FILE FILE``: the JSON figures are the tabulated exact walk's
    (solver/resolve/exact.py, every board at once); --predict walks one board and
    predicts; a seconds cap, --through without a re-solving player and a street the game
    lacks are refused in one line each."""
    from agent.cli import main
    from solver.play.player import translated
    from solver.strategy_io import open_strategy, save_strategy

    path = tmp_path / "leduc.strategy"
    save_strategy(path, solve(load_game("leduc.nolimit.2p"), "cfr+", iterations=60, betting="0.5p,1p,a"))
    flags = ["--resolve-at", "preflop,flop", "--resolve-from", "preflop", "--resolve-iterations", "20"]
    assert main(["eval", "h2h", f"resolve:{path}", str(path), *flags, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    policy = translated(open_strategy(path))
    options = ResolveOptions(iterations=20, street_starts=(0, 1), first_street=0)
    want = resolved_head_to_head(policy, options)
    assert doc["seat_values"] == pytest.approx(list(want), abs=1e-9)
    assert doc["exact"] and doc["through"] == 0 and doc["resolves"] > 0
    assert doc["options"][1] is None and doc["options"][0]["iterations"] == 20

    assert main(["eval", "h2h", f"resolve:{path}", str(path), *flags, "--through", "flop", "--predict"]) == 0
    out = capsys.readouterr().out
    assert "predicted: 6 boards" in out and "re-solves" in out and "memory" in out

    for argv, words in (([f"resolve:{path}", str(path), "--resolve-seconds", "1"], "iteration budget"),
                        ([str(path), str(path), "--through", "flop"], "re-solving player"),
                        ([f"resolve:{path}", str(path), "--through", "river"], "streets 0 to 1")):
        assert main(["eval", "h2h", *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and words in err[0], err
