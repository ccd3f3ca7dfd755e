"""Local best response (solver/evaluation/lbr.py) and ``pokerbot eval lbr`` (agent/commands/eval_lbr.py)."""

from __future__ import annotations

import argparse
import json
import random
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from poker.cards import deck_cards
from poker.evaluator import evaluate
from poker.game import load_game
from poker.rng import Dealer
from poker.state import ActionKind, State
from abstraction.betting import parse_betting
from solver.chance import lossless_bucket
from solver.evaluation.lbr import (
    BlindOpponent,
    LocalBestResponse,
    StrategyOpponent,
    default_action_spec,
    leak_action_spec,
    parse_action_set,
    range_equity,
)
from solver.evaluation.leaks import all_in_decisions, planted_policy
from solver.evaluation.real_response import Responder, real_best_response_value
from solver.play.policy import TranslatedPolicy
from solver.problem import make_problem
from solver.play.policy import range_query
from solver.play.player import translated
from solver.strategy_io import open_strategy

STRATEGIES = Path(__file__).resolve().parent.parent / "strategies"
HOLDEM = load_game("holdem.nolimit.2p.reverse_blinds")


def _brute_equity(game, hole, board, hands, weights):
    """Exact equity by enumerating every completion of the board with the evaluator."""
    known = set(hole) | set(board)
    rest = [c for c in deck_cards(game.num_ranks, game.num_suits) if c not in known]
    missing = game.total_board_cards - len(board)
    num = den = 0.0
    for runout in combinations(rest, missing):
        full = list(board) + list(runout)
        mine = evaluate(list(hole) + full)
        for h, w in zip(hands.tolist(), weights.tolist()):
            if w <= 0 or set(h) & (known | set(runout)):
                continue
            theirs = evaluate(h + full)
            den += w
            num += w * (1.0 if mine > theirs else 0.5 if mine == theirs else 0.0)
    return num / den


@pytest.mark.parametrize("street_cards", [5, 4, 3])
def test_equity_kernel_matches_brute_force(street_cards):
    rng = random.Random(street_cards)
    all_hands = np.array(list(combinations(range(52), 2)), np.int64)
    for _ in range(3):
        cards = rng.sample(range(52), 2 + street_cards)
        hole, board = cards[:2], cards[2:]
        pick = all_hands[rng.sample(range(len(all_hands)), 40 if street_cards < 5 else 300)]
        weights = np.array([rng.random() if rng.random() < 0.8 else 0.0 for _ in range(len(pick))])
        got = range_equity(hole, board, pick, weights, HOLDEM)
        want = _brute_equity(HOLDEM, hole, board, pick, weights)
        assert got == pytest.approx(want, abs=1e-12)


def test_equity_kernel_leduc_and_sampled_preflop():
    leduc = load_game("leduc.nolimit.2p")
    deck = deck_cards(leduc.num_ranks, leduc.num_suits)
    hands = np.array([[c] for c in deck], np.int64)
    for hole in deck:
        w = np.arange(1.0, len(deck) + 1)
        for board in ([], [c for c in deck if c != hole][:1]):
            got = range_equity([hole], board, hands, w, leduc)
            assert got == pytest.approx(_brute_equity(leduc, [hole], board, hands, w), abs=1e-12)
    # Preflop (run-outs sampled): aces against a uniform range win about 85%.
    all_hands = np.array(list(combinations(range(52), 2)), np.int64)
    eq = range_equity([48, 49], [], all_hands, np.ones(len(all_hands)), HOLDEM, samples=1000, seed=7)
    assert 0.83 < eq < 0.87
    assert eq == range_equity([48, 49], [], all_hands, np.ones(len(all_hands)), HOLDEM, samples=1000, seed=7)


def test_action_sets():
    assert default_action_spec(HOLDEM) == "c/c/fcpa/fcpa"
    assert default_action_spec(load_game("leduc.nolimit.2p")) == "fcpa/fcpa"
    sets = parse_action_set("c/c,0.5p/fcpa", HOLDEM)
    assert sets == [[("c", 0.0)], [("c", 0.0), ("p", 0.5)], [("f", 0.0), ("c", 0.0), ("p", 1.0), ("a", 0.0)]] + [
        [("f", 0.0), ("c", 0.0), ("p", 1.0), ("a", 0.0)]
    ]
    for bad in ("", "f/c", "c/x", "c/c/c/c/c"):
        with pytest.raises(ValueError):
            parse_action_set(bad, HOLDEM)


def test_min_raise_token():
    assert parse_action_set("fcm", HOLDEM)[0] == [("f", 0.0), ("c", 0.0), ("m", 0.0)]
    lbr = LocalBestResponse(HOLDEM, BlindOpponent("call"), actions="cm")
    state = State.new_hand(HOLDEM)
    assert [a.amount for a in lbr._candidates(state)] == [None, state.min_raise_to]
    state = state.apply(lbr._candidates(state)[1])  # a min-raise, then the other's min re-raise
    assert lbr._candidates(state)[1].amount == state.min_raise_to > state.max_spent


def test_leak_preset_comes_from_the_strategy_tree():
    betting = parse_betting("0.5p,1p,2p,a/1p,a,cap3;0.5p,1p,a/1p,a,cap2")  # the shipped full-deck tree
    assert leak_action_spec(betting, HOLDEM) == (
        "f,c,m,0.25p,0.71p,1.41p,4p,a/" + "/".join(["f,c,m,0.25p,0.71p,2p,a"] * 3))
    game = load_game("leduc.nolimit.2p")
    policy = translated(open_strategy(STRATEGIES / "leduc.nolimit.2p.strategy", game=game))
    lbr = LocalBestResponse(game, StrategyOpponent(policy), actions="leaks")
    assert lbr.action_spec == leak_action_spec(policy.tree.betting, game)
    assert ("m", 0.0) in lbr.action_set[1] and ("a", 0.0) in lbr.action_set[1]
    with pytest.raises(ValueError, match="betting tree"):
        LocalBestResponse(game, BlindOpponent("call"), actions="leaks")
    assert leak_action_spec(betting, load_game("leduc.limit.2p")) == "fcp/fcp"


def test_always_fold_gives_exactly_the_blinds():
    big, small = max(HOLDEM.blind), min(HOLDEM.blind)
    # LBR in the small blind limps (call only preflop), the folder surrenders its big
    # blind; LBR in the big blind wins the small blind: (big + small) / 2 per game.
    want = (big + small) / 2 / big * 1000
    assert want == 750.0
    r = LocalBestResponse(HOLDEM, BlindOpponent("fold"), seed=1).run(40)
    assert r.mbb_per_game == want
    assert r.ci95 == (want, want)
    assert sorted(r.by_seat) == [small / big * 1000, 1000.0]


def test_crushes_always_call_and_range_stays_prior():
    seen = []

    def hook(state, hands, w, eq, action):
        seen.append((state.round, action.kind, eq))
        known = set(state.hole(state.actor)) | set(state.board())
        clash = np.array([bool(set(h) & known) for h in hands.tolist()])
        assert np.all(w[clash] == 0)
        assert np.allclose(w[~clash], 1.0 / (~clash).sum())  # card-blind: the prior

    r = LocalBestResponse(HOLDEM, BlindOpponent("call"), seed=5).run(200, on_decision=hook)
    assert r.mbb_per_game > 4000 and r.ci95[0] > 0
    # Call only before the turn; against a caller it never folds (it is never bet into)
    # and it bets only with equity above one half (a raise gains nothing from folds).
    assert all(k is ActionKind.CALL and eq is None for street, k, eq in seen if street < 2)
    assert all(k is not ActionKind.FOLD for _, k, _ in seen)
    assert all(eq > 0.5 for street, k, eq in seen if k is ActionKind.RAISE)
    assert any(k is ActionKind.RAISE for _, k, _ in seen)


def test_against_random_and_raise_bots_runs():
    for bot in ("random", "raise", "allin"):
        r = LocalBestResponse(HOLDEM, BlindOpponent(bot, seed=2), seed=2).run(30)
        assert r.hands == 30 and np.isfinite(r.mbb_per_game)


@pytest.mark.parametrize("name,hands", [("leduc.nolimit.2p", 300), ("holdem.nolimit.2p.short20", 60)])
def test_against_a_strategy_the_range_is_a_bayes_distribution(name, hands):
    game = load_game(name)
    policy = translated(open_strategy(STRATEGIES / f"{name}.strategy", game=game))
    opp = StrategyOpponent(policy, seed=3, name=name)
    lbr = LocalBestResponse(game, opp, seed=3)
    checked = {"decisions": 0, "bayes": 0}

    def hook(state, hands_, w, eq, action):
        checked["decisions"] += 1
        assert w.sum() == pytest.approx(1.0)
        assert np.all(w >= 0)
        me = state.actor
        known = set(state.hole(me)) | set(state.board())
        clash = np.array([bool(set(h) & known) for h in hands_.tolist()])
        assert np.all(w[clash] == 0)
        # After exactly one opponent action (its first), the range is that action's
        # column of the range query, renormalized over the hands that miss known cards.
        hist = state.history
        opp_moves = [k for k, a in enumerate(hist) if a.actor != me]
        if len(opp_moves) == 1 and state.round == 0:
            k = opp_moves[0]
            before = State.new_hand(game, state.deal)
            for a in hist[:k]:
                before = before.apply(a.action)
            r = range_query(policy, before, [])
            j = [(a.kind, a.amount) for a in r.actions].index((hist[k].action.kind, hist[k].action.amount))
            want = np.zeros(len(w))
            want[lbr.index_of(r.hands)] = r.probs[:, j]
            want[clash] = 0
            assert w == pytest.approx(want / want.sum())
            checked["bayes"] += 1

    r = lbr.run(hands, on_decision=hook)
    assert checked["decisions"] > hands // 2 and checked["bayes"] > 0
    assert np.isfinite(r.mbb_per_game) and r.ci95[0] <= r.mbb_per_game <= r.ci95[1]
    assert r.translation is not None and r.translation["decisions"] > 0
    # Seeded: the same run again gives the same hands.
    again = LocalBestResponse(game, StrategyOpponent(policy, seed=3, name=name), seed=3).run(20)
    assert np.array_equal(again.values, r.values[:20])


def _parser():
    from agent.commands.eval_lbr import register_lbr

    p = argparse.ArgumentParser(prog="pokerbot eval")
    what = p.add_subparsers(dest="what")
    register_lbr(what)
    return p


def test_cli_json(capsys):
    p = _parser()
    args = p.parse_args(["lbr", "fold", "--hands", "20", "--json", "--seed", "4"])
    assert args.func(args) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert doc["mbb_per_game"] == 750.0 and doc["ci95"] == [750.0, 750.0]
    assert doc["hands"] == 20 and doc["seconds"] >= 0
    strategy = STRATEGIES / "leduc.nolimit.2p.strategy"
    args = p.parse_args(["lbr", str(strategy), "--hands", "30", "--actions", "c/fcpa", "--json"])
    assert args.func(args) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert doc["game"] == "leduc.nolimit.2p" and doc["actions"] == "c/fcpa" and len(doc["ci95"]) == 2
    args = p.parse_args(["lbr", "call", "--hands", "10"])
    assert args.func(args) == 0
    assert "mbb/g" in capsys.readouterr().out
    args = p.parse_args(["lbr", str(strategy), "--actions", "leaks", "--exact", "--json"])
    assert args.func(args) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert doc["exact"] and doc["actions"].startswith("f,c,m,") and len(doc["mbb_per_game_by_lbr_seat"]) == 2


def test_pokerbot_eval_lbr_is_wired(capsys):
    from agent.cli import main

    assert main(["eval", "lbr", "fold", "--hands", "20", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert doc["mbb_per_game"] == 750.0 and doc["hands"] == 20


def test_per_hand_values_for_plots():
    """The per-hand values in play order, in chips and mbb, and the per-deal means the
    interval is over."""
    game = load_game("leduc.nolimit.2p")
    r = LocalBestResponse(game, BlindOpponent("random", seed=1), seed=1).run(41)  # the last deal has one hand
    assert r.values.shape == (41,) and r.big_blind == game.big_blind
    assert np.allclose(r.mbb_values, r.values * 1000 / game.big_blind)
    assert r.mbb_values.mean() == pytest.approx(r.mbb_per_game)
    deals = r.deal_mbb_values
    assert deals.shape == (21,) and deals[0] == pytest.approx(r.mbb_values[:2].mean()) and deals[-1] == r.mbb_values[-1]
    half = 1.96 * deals.std(ddof=1) / np.sqrt(deals.size)
    assert r.ci95 == pytest.approx((r.mbb_per_game - half, r.mbb_per_game + half))
    assert "values" not in r.to_dict()  # the JSON stays a summary


# ---------------------------------------------------------------- exact LBR, planted leaks

LEDUC = load_game("leduc.nolimit.2p")


def _random_leduc_policy(betting: str, seed: int) -> TranslatedPolicy:
    """Every abstract action with positive probability, a capped tree: the fallbacks and
    every mapping rule get exercised."""
    p = make_problem(LEDUC, betting)
    table = np.random.default_rng(seed).uniform(0.05, 1.0, p.size)
    return TranslatedPolicy(p.tree, p.offset, table,
                            lambda street, hole, board: lossless_bucket(LEDUC, street, hole, board))


@pytest.fixture(scope="module")
def shipped_leduc():
    """The shipped no-limit Leduc strategy, its exact best response's value per seat and
    the leak-seeking LBR's exact values against it: made once for the tests below."""
    policy = translated(open_strategy(STRATEGIES / "leduc.nolimit.2p.strategy", game=LEDUC))
    br = [real_best_response_value(policy, seat) for seat in (0, 1)]
    leaks = LocalBestResponse(LEDUC, StrategyOpponent(policy), actions="leaks").exact_values()
    return policy, br, leaks


@pytest.mark.parametrize("which", ["shipped", "random capped"])
def test_exact_lbr_never_exceeds_the_exact_best_response(which, request):
    if which == "shipped":
        policy, br, leaks = request.getfixturevalue("shipped_leduc")
        made = {"leaks": leaks}
    else:
        policy = _random_leduc_policy("0.5p,1p,a/1p,a,cap2", seed=3)
        br = [real_best_response_value(policy, seat) for seat in (0, 1)]
        made = {}
    for actions in (None, "leaks", "fcmpa", "fc0.25p0.5p0.75p1p1.5p2p3pa"):
        values = (made[actions] if actions in made
                  else LocalBestResponse(LEDUC, StrategyOpponent(policy), actions=actions).exact_values())
        for seat in (0, 1):
            assert values[seat] <= br[seat] + 1e-9, (actions, seat, values, br)


def test_exact_lbr_is_what_play_averages_to():
    """Deal by deal, LBR's hands against the player's real seeded draws (400 hand numbers,
    so 400 sets of draws) average to the exact value of that deal: every z-score small,
    their squares summing below chi-square's 99.9% point for 12 deals."""
    policy = _random_leduc_policy("0.5p,1p,a/1p,a,cap2", seed=4)
    lbr = LocalBestResponse(LEDUC, StrategyOpponent(policy, seed=9), actions="leaks", seed=9)
    dealer = Dealer(LEDUC, 3)
    squares = 0.0
    for j in range(12):
        deal = dealer.next_deal()
        seat = j % 2
        start = lbr.opponent.range(lbr.hands, 1 - seat)
        row = int(lbr.index_of(np.asarray([deal.holes[1 - seat]]))[0])
        exact = lbr._exact(State.new_hand(LEDUC, deal), deal, seat, start, row)
        played = np.array([lbr.play_hand(deal, seat, hand) for hand in range(400)])
        se = played.std(ddof=1) / np.sqrt(played.size)
        z = (played.mean() - exact) / se if se > 0 else 0.0
        assert se > 0 or played.mean() == pytest.approx(exact)
        assert abs(z) < 4, (j, exact, played.mean(), se)
        squares += z * z
    assert squares < 32.9


@pytest.mark.parametrize("street", [0, 1])
def test_a_planted_leak_is_found_exactly_in_leduc(street, shipped_leduc):
    """Calling every all-in on one street: the exact best response and the leak-seeking
    LBR (exactly, over every deal) win clearly more against the altered strategy."""
    policy, policy_br, policy_lbr = shipped_leduc
    altered, changed = planted_policy(policy, street)
    assert changed == len(all_in_decisions(policy.tree, street)) > 0

    def br(p):
        return 1000 * sum(real_best_response_value(p, seat) for seat in (0, 1)) / 2

    def lbr(p):
        return 1000 * sum(LocalBestResponse(LEDUC, StrategyOpponent(p), actions="leaks").exact_values()) / 2

    assert br(altered) > 1000 * sum(policy_br) / 2 + 1000
    assert lbr(altered) > 1000 * sum(policy_lbr) / 2 + 300


def test_a_planted_leak_is_found_by_play_in_20_card_holdem():
    """The leak-seeking LBR against the shipped 20-card strategy with a preflop
    call-every-shove leak: the paired difference (same seeds, same deals) is positive
    with 95% confidence."""
    game = load_game("holdem.nolimit.2p.short20")
    policy = translated(open_strategy(STRATEGIES / "holdem.nolimit.2p.short20.strategy", game=game))
    altered, _ = planted_policy(policy, 0)
    runs = [LocalBestResponse(game, StrategyOpponent(p, seed=2), actions="leaks", seed=2).run(1000)
            for p in (policy, altered)]
    diff = (runs[1].mbb_values - runs[0].mbb_values).reshape(-1, 2).mean(axis=1)
    half = 1.96 * diff.std(ddof=1) / np.sqrt(diff.size)
    assert diff.mean() - half > 0, (diff.mean(), half)


def test_a_planted_leak_is_found_by_the_exact_best_response_in_20_card_holdem():
    """The exact real-game best response of a responder that checks, calls, folds or
    shoves (seconds with one board per suit class) wins far more against the 20-card
    strategy made to call every preflop all-in than against the original."""
    game = load_game("holdem.nolimit.2p.short20")
    policy = translated(open_strategy(STRATEGIES / "holdem.nolimit.2p.short20.strategy", game=game))
    altered, _ = planted_policy(policy, 0)
    shove = Responder(sizes=(), all_in=True, past_cap=0)
    values = [1000 * sum(real_best_response_value(p, seat, responder=shove) for seat in (0, 1)) / 2 / game.big_blind
              for p in (policy, altered)]
    assert values[1] > values[0] + 1000, values
