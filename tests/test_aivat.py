"""AIVAT (solver/evaluation/aivat.py) and ``pokerbot eval aivat`` (agent/commands/eval_aivat.py).

Seeded Leduc no-limit matches between the shipped strategy and a small CFR+ strategy
over another betting abstraction (so translation, mapping mixtures and fallbacks occur),
checked against the exact head-to-head value (solver.evaluation.head_to_head)."""

from __future__ import annotations

import json
import math
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from agent.cli import main
from poker.log import MatchLog, parse_log
from poker.cards import deck_cards
from poker.game import load_game
from poker.state import State
from poker.evaluator import evaluate
from solver.evaluation._matchup import matchup_equity
from solver.evaluation.aivat import (VALUE_FUNCTIONS, AivatResult, CheckdownValue, MatchupValue, aivat,
                                      known_player_name, strategy_ranges, zero_value)
from solver.training.algorithms import solve
from solver.evaluation.head_to_head import head_to_head
from solver.play.player import translated
from solver.strategy_io import open_strategy, save_strategy

STRATEGIES = Path(__file__).resolve().parent.parent / "strategies"
SHIPPED = STRATEGIES / "leduc.nolimit.2p.strategy"
SEEDS = (1, 2, 3)
HANDS = 2500


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("aivat")
    other = tmp / "cfrp.strategy"
    save_strategy(other, solve("leduc.nolimit.2p", "cfr+", iterations=200, betting="1p,a"))
    logs = []
    for seed in SEEDS:
        log = tmp / f"m{seed}.log"
        rc = main(["match", "leduc.nolimit.2p", "--players", f"strategy:{SHIPPED}", f"strategy:{other}",
                   "--hands", str(HANDS), "--seed", str(seed), "--quiet", "--json", "--log", str(log),
                   "--no-aivat"])
        assert rc == 0
        logs.append(log)
    a, b = open_strategy(SHIPPED), open_strategy(other)
    exact = head_to_head(translated(a), translated(b), a.game).chips_per_game  # A's value
    return {"a": a, "b": b, "logs": logs, "exact": exact}


def _log(setup: dict, i: int) -> MatchLog:
    """``setup["logs"][i]`` parsed, once per module."""
    parsed = setup.setdefault("parsed", {})
    if i not in parsed:
        parsed[i] = parse_log(setup["logs"][i].read_text())
    return parsed[i]


def _one(setup: dict, which: str, i: int, value=VALUE_FUNCTIONS[0], *, known: bool = False) -> AivatResult:
    """AIVAT of player ``which`` over the hands of ``setup["logs"][i]``, computed once per
    module: several tests read the same estimate (``value`` defaults as aivat's does;
    ``known``: the other player's strategy is known too)."""
    key = (which, i, value, known)
    if key not in setup.setdefault("one", {}):
        strategy = setup[which]
        log = _log(setup, i)
        name = known_player_name(log, Path(strategy.source).stem)
        other = strategy_ranges(translated(setup["b" if which == "a" else "a"])) if known else None
        setup["one"][key] = aivat(translated(strategy), log, name, value=value, opponent_range=other)
    return setup["one"][key]


def _pooled(setup: dict, which: str, value: str) -> tuple[np.ndarray, np.ndarray, list]:
    results = [_one(setup, which, i, value) for i in range(len(setup["logs"]))]
    return np.concatenate([r.values for r in results]), np.concatenate([r.aivat_values for r in results]), results


@pytest.mark.parametrize("value", ["matchup", "checkdown"])
@pytest.mark.parametrize("which, sign", [("a", 1.0), ("b", -1.0)])
def test_unbiased_and_lower_variance(setup, which, sign, value):
    plain, av, results = _pooled(setup, which, value=value)
    assert len(av) == len(SEEDS) * HANDS
    target = sign * setup["exact"]
    half = 1.96 * av.std(ddof=1) / math.sqrt(len(av))
    assert abs(av.mean() - target) <= half, (av.mean(), target, half)
    assert av.std(ddof=1) < plain.std(ddof=1)
    # the corrections at the known player's decisions have mean zero
    dec = np.array([r.decision_correction_mean for r in results])
    sd = max(r.decision_correction_sd for r in results)
    assert abs(dec.mean()) <= 3.0 * sd / math.sqrt(len(av))
    assert sum(r.decisions for r in results) > len(av)


@pytest.mark.parametrize("which, sign", [("a", 1.0), ("b", -1.0)])
def test_a_known_opponent_is_corrected_too(setup, which, sign):
    """Both strategies known: every decision of the opponent is corrected as well. Still
    unbiased (the exact head-to-head within the interval, the new corrections of mean
    zero), and the variance lower than with the opponent unknown, on the same hands."""
    both = [_one(setup, which, i, known=True) for i in range(len(SEEDS))]
    one = [_one(setup, which, i) for i in range(len(SEEDS))]
    av = np.concatenate([r.aivat_values for r in both])
    half = 1.96 * av.std(ddof=1) / math.sqrt(len(av))
    assert abs(av.mean() - sign * setup["exact"]) <= half, (av.mean(), sign * setup["exact"], half)
    assert av.std(ddof=1) < np.concatenate([r.aivat_values for r in one]).std(ddof=1)
    assert all(r.opponent_known and r.opponent_decisions > 0 for r in both)
    assert not any(r.opponent_known or r.opponent_decisions for r in one)
    # the opponent's corrections alone: the difference of the two estimates, mean zero
    diff = np.concatenate([r.aivat_values for r in one]) - av
    assert abs(diff.mean()) <= 3.0 * diff.std(ddof=1) / math.sqrt(len(diff))
    assert np.array_equal(np.concatenate([r.values for r in both]), np.concatenate([r.values for r in one]))
    with pytest.raises(ValueError, match="opponent's action .* probability 0"):
        aivat(translated(setup[which]), _log(setup, 0), both[0].player, opponent_range=strategy_ranges(translated(setup[which])))


def test_zero_value_is_the_plain_estimate(setup):
    """An identity hand by hand, on every log."""
    for which in ("a", "b"):
        for i in range(len(setup["logs"])):
            r = _one(setup, which, i, zero_value)
            assert np.array_equal(r.values, r.aivat_values)
            assert r.aivat_chips_per_game == r.chips_per_game
            assert r.variance_reduction == 0.0


def test_seat_rotation_and_names(setup):
    log = _log(setup, 0)
    assert known_player_name(log, "leduc.nolimit.2p") == "leduc.nolimit.2p"
    assert known_player_name(log, "cfrp") == "cfrp"
    assert {h.names.index("cfrp") for h in log.hands} == {0, 1}
    with pytest.raises(ValueError):
        known_player_name(log, "nobody")
    ra, rb = _one(setup, "a", 0), _one(setup, "b", 0)  # AIVAT of each seat's name on this log
    assert (ra.player, rb.player) == ("leduc.nolimit.2p", "cfrp")
    assert ra.chips_per_game == pytest.approx(-rb.chips_per_game)
    # the wrong strategy for a player: its actions are not all in the strategy's support
    with pytest.raises(ValueError, match="probability 0"):
        aivat(translated(setup["b"]), log, "leduc.nolimit.2p")


def test_cli(setup, capsys):
    log = setup["logs"][0]
    assert main(["eval", "aivat", str(log), "--strategy", str(SHIPPED), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    for key in ("mbb_per_game", "ci95", "aivat_mbb_per_game", "aivat_ci95", "variance_reduction", "hands"):
        assert key in doc
    assert doc["hands"] == HANDS
    assert doc["player"] == "leduc.nolimit.2p"
    lo, hi = doc["aivat_ci95"]
    assert lo < doc["aivat_mbb_per_game"] < hi
    assert hi - lo < doc["ci95"][1] - doc["ci95"][0]
    assert main(["eval", "aivat", str(log), "--strategy", str(setup["b"].source), "--seat-name", "cfrp"]) == 0
    out = capsys.readouterr().out
    assert "AIVAT:" in out and "variance reduction" in out
    assert main(["eval", "aivat", str(log), "--strategy", str(SHIPPED), "--seat-name", "nobody"]) != 0
    assert main(["eval", "aivat", str(log), "--strategy", str(SHIPPED), "--opponent", str(setup["b"].source),
                 "--json"]) == 0
    known = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert known["opponent_known"] and known["opponent_decisions"] > 0 and not doc["opponent_known"]
    assert known["aivat_mbb_per_game"] == pytest.approx(_one(setup, "a", 0, known=True).aivat_mbb_per_game)
    # an opponent file of another game: one line, not a traceback
    assert main(["eval", "aivat", str(log), "--strategy", str(SHIPPED), "--opponent",
                 str(STRATEGIES / "kuhn.limit.2p.strategy")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is for kuhn.limit.2p" in err[0]


def test_per_hand_values_in_log_order(setup):
    log = _log(setup, 0)
    r = _one(setup, "a", 0)  # aivat(translated(a), log, "leduc.nolimit.2p")
    assert r.player == "leduc.nolimit.2p"
    assert list(r.hand_numbers) == [h.hand_no for h in log.hands]
    seat = [h.names.index("leduc.nolimit.2p") for h in log.hands]
    assert list(r.values) == [h.values[p] for h, p in zip(log.hands, seat)]
    bb = open_strategy(SHIPPED).game.big_blind
    assert np.allclose(r.mbb_values, r.values * 1000 / bb)
    assert np.allclose(r.aivat_mbb_values, r.aivat_values * 1000 / bb)
    assert r.aivat_mbb_values.mean() == pytest.approx(r.aivat_mbb_per_game)
    assert set(r.to_dict()).isdisjoint({"values", "aivat_values", "hand_numbers"})


@pytest.mark.parametrize("name, n_new", [("leduc.nolimit.2p", 1), ("holdem.nolimit.2p.short20", 3)])
def test_sampled_chance_expectation_is_the_enumerated_one(name, n_new):
    """Where a chance event has many outcomes, the expectation is a seeded joint draw whose
    mean is the enumerated expectation (here forced with chance_limit=0 on events small
    enough to enumerate: Leduc's flop card and the 20-card deck's 560 flops)."""
    game = load_game(name)
    deck = deck_cards(game.num_ranks, game.num_suits)
    k = game.num_hole_cards
    hole, dead = tuple(deck[:k]), tuple(deck[-k:])
    state = State.new_hand(game)
    exact = CheckdownValue(game)
    assert exact.chance_mean(state, 0, hole, (), n_new, dead, seed=1) is None  # few outcomes: enumerated
    sampled = CheckdownValue(game, chance_limit=0, chance_samples=200_000)
    rest = [c for c in deck if c not in hole and c not in dead]
    want = np.mean([exact(state, 0, hole, c) for c in combinations(rest, n_new)])
    got = sampled.chance_mean(state, 0, hole, (), n_new, dead, seed=1)
    pot = 2 * min(state.spent)
    # the share of the pot is a mean of 200,000 draws of sd at most 1/2: 4 sd is 0.0045
    assert got == pytest.approx(want, abs=0.0045 * pot)
    assert sampled.chance_mean(state, 0, hole, (), n_new, dead, seed=1) == got  # seeded
    assert sampled.chance_mean(state, 0, hole, (), n_new, dead, seed=2) != got


def test_full_deck_sampled_equities_are_suit_canonical():
    game = load_game("holdem.nolimit.2p.reverse_blinds")
    v = CheckdownValue(game, samples=200)
    assert not v.exact(2, 0) and v.exact(5, 3)  # preflop sampled, the flop's run-outs enumerated
    ak = [(51, 46), (50, 47), (48, 45)]  # As Kh, Ah Ks, Ac Kd: one suit class
    assert len({v.equity(h, ()) for h in ak}) == 1
    assert v.equity((51, 47), ()) != v.equity(ak[0], ())  # AKs is another class
    state = State.new_hand(game)
    # a full-deck flop (17,296 outcomes) is drawn, where the value after it is exact
    assert v.chance_mean(state, 0, (51, 46), (), 3, (0, 1), seed=3) is not None
    assert v.chance_mean(state, 0, (51, 46), (0, 4, 8), 1, (1, 2), seed=3) is None  # 45 turns: enumerated


@pytest.mark.parametrize("which", ["a", "b"])
def test_matchup_value_reduces_variance_more_than_checkdown(setup, which):
    """Both players' cards: on the same hands, a clearly larger reduction (about 60% of
    the variance against about 1 to 25% with the known player's cards only)."""
    plain, old, _ = _pooled(setup, which, value="checkdown")
    _, new, results = _pooled(setup, which, value="matchup")
    assert new.var(ddof=1) < 0.6 * plain.var(ddof=1)
    assert new.var(ddof=1) < 0.75 * old.var(ddof=1)
    assert all(r.variance_reduction > 0.4 for r in results)


def _showdown_share(a, b, board, deck, total):
    """Brute force: the pot share of ``a`` against ``b`` over every completion of ``board``."""
    live = [c for c in deck if c not in {*a, *b, *board}]
    shares = []
    for rest in combinations(live, total - len(board)):
        ra, rb = evaluate([*a, *board, *rest]), evaluate([*b, *board, *rest])
        shares.append(1.0 if ra > rb else 0.5 if ra == rb else 0.0)
    return float(np.mean(shares))


@pytest.mark.parametrize("name", ["leduc.nolimit.2p", "holdem.nolimit.2p.short20"])
def test_matchup_value_is_a_martingale_over_chance(name):
    """E over the next board card(s) of the matchup value equals its value before them
    (every next card enumerated, every matchup and board of Leduc, a seeded sample of
    short20's), and over the hole-card deal (every ordered pair of disjoint hands) its
    mean is the value at equity 1/2."""
    game = load_game(name)
    deck = deck_cards(game.num_ranks, game.num_suits)
    k = game.num_hole_cards
    v = MatchupValue(game)
    state = State.from_betting(game, "r4c", strict=False)  # a matched pot of 8
    rng = np.random.default_rng(7)
    pairs = [(a, b) for a in combinations(deck, k) for b in combinations(deck, k) if not {*a} & {*b}]
    if len(pairs) > 60:
        pairs = [pairs[i] for i in rng.choice(len(pairs), 60, replace=False)]
    checked = 0
    for a, b in pairs:
        rest = [c for c in deck if c not in a and c not in b]
        for street in range(game.num_rounds - 1):  # the board before street + 1's cards
            shown, n = game.board_cards_through(street), game.num_board_cards[street + 1]
            boards = list(combinations(rest, shown))
            for board in [boards[i] for i in rng.choice(len(boards), min(3, len(boards)), replace=False)]:
                live = [c for c in rest if c not in board]
                after = [v(state, 0, a, [*board, *new], b) for new in combinations(live, n)]
                before = v.board_mean(state, 0, a, list(board), b)
                assert np.mean(after) == pytest.approx(before, abs=1e-9)
                assert v.equity(a, b, board) == pytest.approx(_showdown_share(a, b, board, deck,
                                                                              game.total_board_cards), abs=1e-12)
                checked += 1
    assert checked >= 30
    start = State.new_hand(game)
    every = [v(start, 0, a, (), b) for a in combinations(deck, k) for b in combinations(deck, k) if not {*a} & {*b}]
    assert np.mean(every) == pytest.approx(v.deal_mean(start), abs=1e-12)
    # a fold's value is the real one, whatever the cards
    folded = State.from_betting(game, "r4f", strict=False)
    p = list(folded.folded).index(True)
    assert v(folded, p, pairs[0][0], (), pairs[0][1]) == -folded.spent[p]
    assert v(folded, 1 - p, pairs[0][0], (), pairs[0][1]) == folded.spent[p]


def test_full_deck_matchup_equity():
    """Exact on the full deck: a flop against brute force, the two sides of a preflop
    matchup summing to one, and isomorphic matchups sharing one cached equity."""
    game = load_game("holdem.nolimit.2p.reverse_blinds")
    deck = deck_cards(game.num_ranks, game.num_suits)
    a, b, flop = (51, 46), (1, 4), (50, 20, 13)  # As Kh | 2d 3c on Ah 7c 5d
    assert matchup_equity(a, b, flop, deck, 5) == pytest.approx(_showdown_share(a, b, flop, deck, 5), abs=1e-12)
    v = MatchupValue(game)
    ab, ba = v.equity(a, b, ()), v.equity(b, a, ())
    assert ab + ba == pytest.approx(1.0, abs=1e-12) and 0.6 < ab < 0.7
    assert len(v._cache) == 2
    assert v.equity((48, 45), (2, 7), ()) == ab  # Ac Kd | 2h 3s: the same matchup, suits renamed
    assert len(v._cache) == 2
    with pytest.raises(ValueError, match="share a card"):
        matchup_equity(a, (51, 0), (), deck, 5)
