"""The re-solving player as LBR's opponent (solver/resolve/opponent.py).

Oracles: Bayes over every hand with each hand's likelihood brute-forced by driving the
playing :class:`ResolvingWalk` through every combination of its random choices (mapping
draws, blueprint draws, draws from a solution); the exact best response of
:mod:`solver.resolve.exact`, which LBR's exact value can never exceed.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

import solver.play.policy as policy_mod
from poker.cards import deck_cards
from poker.game import load_game
from poker.state import Action, State
from solver.evaluation.leaks import planted_policy
from solver.evaluation.lbr import LocalBestResponse, StrategyOpponent
from solver.evaluation.real_response import _legal_actions, translated_policy
from solver.resolve.exact import resolved_exploitability
from solver.resolve.opponent import ResolvingOpponent, resolving_range
from solver.resolve.player import ResolveCounts, ResolveOptions, ResolvingWalk, _row_of
from solver.training.algorithms import solve

from .test_player_range import _Choices

#: No-limit Leduc with 6-chip stacks (817 real nodes), as in test_resolve_exact.py.
GAME = dataclasses.replace(load_game("leduc.nolimit.2p"), stack=(6, 6))
OPTIONS = ResolveOptions(iterations=40)


@pytest.fixture(scope="module")
def policy():
    """The translated CFR+ blueprint the tests re-solve from (solved when first asked for,
    not when the module is collected: every pytest run, and every xdist worker, collects
    it)."""
    return translated_policy(solve(GAME, "cfr+", iterations=1000, betting="0.5p,1p,a"))


def _brute_likelihood(monkeypatch, policy, position, hole, history, options) -> float:
    """P(the re-solving player holding ``hole`` takes its actions of ``history``): the
    sum over every combination of its walk's choices, one fresh walk per combination."""
    current: list[_Choices] = []

    def pick(outcomes, u):
        return outcomes[current[0].choose([p for _, p in outcomes])][0]

    def draw(probs, u):
        return current[0].choose(probs.tolist())

    def play(self, solver, node, state, hole_):
        probs = solver.average(node)[:, _row_of(self.hands, hole_)]
        return solver.tree.actions[node][current[0].choose(probs.tolist())], probs

    monkeypatch.setattr(policy_mod, "_pick", pick)
    monkeypatch.setattr(policy_mod, "_draw", draw)
    monkeypatch.setattr(ResolvingWalk, "_play", play)
    counts = ResolveCounts()

    def run(prefix):
        script = _Choices(prefix)
        current[:] = [script]
        walk = ResolvingWalk(policy, position, 0, 0, options, resolve_counts=counts)
        for state, action, board in history:
            if state.actor == position and walk.decide(state, hole, board)[0] != action:
                return 0.0, script.calls
        return script.weight, script.calls

    def total(prefix, ran=None):
        # ``ran``: the walk of ``prefix`` where already made, which is also the walk of
        # ``prefix`` and its next choice's first option (test_player_range's brute force)
        weight, calls = run(prefix) if ran is None else ran
        if len(calls) <= len(prefix):
            return weight
        options_ = calls[len(prefix)]
        first = next(j for j, p in enumerate(options_) if p > 0.0)
        return sum(total([*prefix, i], (weight, calls) if i == first else None)
                   for i, p in enumerate(options_) if p > 0.0)

    try:
        return total([])
    finally:
        monkeypatch.undo()
        _brute_likelihood.resolves += counts.resolves


_brute_likelihood.resolves = 0  # type: ignore[attr-defined]


def _random_history(policy, position: int, seed: int, options: ResolveOptions):
    """A real hand: the re-solving player at ``position`` plays its seeded walk, the other
    seat any legal action at random (off-tree sizes included)."""
    rng = random.Random(seed)
    cards = deck_cards(GAME.num_ranks, GAME.num_suits)
    rng.shuffle(cards)
    holes = ((cards[0],), (cards[1],))
    board = (cards[2],)
    walk = ResolvingWalk(policy, position, seed, seed, options)
    state = State.new_hand(GAME)
    history = []
    while state.actor is not None:
        b = board if state.round >= 1 else ()
        if state.actor == position:
            action, _ = walk.decide(state, holes[position], b)
        else:
            legal = list(_legal_actions(state))
            action = Action.call() if rng.random() < 0.4 else rng.choice(legal)
        history.append((state, action, b))
        state = state.apply(action)
    return history


def _hands() -> np.ndarray:
    return np.array([[c] for c in deck_cards(GAME.num_ranks, GAME.num_suits)], np.int64)


@pytest.mark.parametrize("position", [0, 1])
def test_the_range_is_the_brute_force_posterior(monkeypatch, position, policy):
    """At every prefix of random real histories, the range's weights equal the brute-force
    likelihood of the playing walk for every hand that misses the board, re-solves
    included (the player re-solves from the first street, and at every street's start)."""
    options = dataclasses.replace(OPTIONS, street_starts=(1,))
    hands = _hands()
    before = _brute_likelihood.resolves
    checked = 0
    for seed in range(6):
        history = _random_history(policy, position, 100 * position + seed, options)
        rng = resolving_range(policy, options, hands, position)
        for k, (state, action, board) in enumerate(history):
            got = rng.weights()
            live = ~np.isin(hands, board).any(axis=1)
            want = np.array([_brute_likelihood(monkeypatch, policy, position, tuple(h), history[:k], options) if ok else 0.0
                             for h, ok in zip(hands.tolist(), live)])
            assert got[live] == pytest.approx(want[live], abs=1e-12, rel=1e-9), (seed, k, state.betting_string())
            checked += 1
            rng = rng.after(state, board, action)
    assert checked >= 20
    assert _brute_likelihood.resolves > before  # the histories did reach re-solves


def test_lbr_never_beats_the_exact_best_response_of_the_re_solving_player(policy):
    """LBR's exact value against the re-solving player, seat by seat, is at most the exact
    real best response's against the same player (every legal amount)."""
    result, info = resolved_exploitability(policy, OPTIONS, GAME)
    assert info["resolves"] > 0
    for actions in ("leaks", "fcmpa"):
        values = LocalBestResponse(GAME, ResolvingOpponent(policy, OPTIONS), actions=actions).exact_values()
        for seat in (0, 1):
            assert values[seat] <= result.br[seat] + 1e-9, (actions, seat, values, result.br)


def test_re_solving_closes_a_planted_leak_that_lbr_finds(policy):
    """The blueprint altered to call every preflop all-in: LBR (exact, leak-seeking) wins
    clearly more against it than against the original, and the re-solving player built
    on the altered file, re-solving at each street's start with the estimated gadget,
    gives back at least two thirds of it. (The safe gadget keeps about half of the leak:
    its alternatives are what the altered blueprint concedes, so it has no reason to
    fold the hands the leak calls with.)"""
    altered, changed = planted_policy(policy, 0)
    assert changed > 0
    options = dataclasses.replace(OPTIONS, street_starts=(0, 1), gadget="estimated")

    def lbr(opponent) -> float:
        return 1000 * sum(LocalBestResponse(GAME, opponent, actions="leaks").exact_values()) / 2 / GAME.big_blind

    original, leak = lbr(StrategyOpponent(policy)), lbr(StrategyOpponent(altered))
    resolved = lbr(ResolvingOpponent(altered, options))
    assert leak > original + 300.0, (original, leak)
    assert resolved - original < (leak - original) / 3, (original, leak, resolved)


def test_a_seconds_cap_is_refused(policy):
    with pytest.raises(ValueError, match="iteration budget"):
        ResolvingOpponent(policy, ResolveOptions(iterations=10, seconds=1.0))
    with pytest.raises(ValueError, match="iteration budget"):
        resolving_range(policy, ResolveOptions(iterations=10, seconds=1.0), _hands(), 0)


def test_pokerbot_eval_lbr_plays_the_re_solving_player(capsys):
    """``eval lbr resolve:FILE``: the play's JSON counts the player's re-solves, and the
    exact value is LocalBestResponse's against a ResolvingOpponent; a seconds cap is
    refused in one line."""
    import json
    from pathlib import Path

    from agent.cli import main
    from solver.play.player import translated
    from solver.strategy_io import open_strategy

    strategy = Path(__file__).resolve().parent.parent / "strategies" / "leduc.nolimit.2p.strategy"
    flags = ["--resolve-iterations", "20", "--resolve-at", "flop", "--json"]
    assert main(["eval", "lbr", f"resolve:{strategy}", "--hands", "6", "--actions", "leaks", *flags]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert doc["hands"] == 6 and doc["resolve"]["resolves"] >= 1
    assert main(["eval", "lbr", f"resolve:{strategy}", "--exact", *flags]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    game = load_game("leduc.nolimit.2p")
    pol = translated(open_strategy(strategy, game=game))
    want = LocalBestResponse(game, ResolvingOpponent(pol, ResolveOptions(iterations=20, street_starts=(1,)))).exact_values()
    assert doc["mbb_per_game_by_lbr_seat"] == pytest.approx([1000 * v / game.big_blind for v in want], abs=1e-9)
    assert main(["eval", "lbr", f"resolve:{strategy}", "--resolve-seconds", "1"]) == 2
    assert "iteration budgets" in capsys.readouterr().err


def test_aivat_of_the_re_solving_seat(capsys, tmp_path):
    """A Leduc match of the re-solving player: ``eval aivat --resolve`` with the match's
    options gives the match's own AIVAT entry for that seat; the translated player's
    probabilities (no --resolve) give another estimate, or refuse an action they never
    take; a seconds cap is refused in one line."""
    import json
    from pathlib import Path

    from agent.cli import main

    strategy = Path(__file__).resolve().parent.parent / "strategies" / "leduc.nolimit.2p.strategy"
    log = tmp_path / "m.log"
    flags = ["--resolve-iterations", "20", "--resolve-at", "preflop,flop"]
    assert main(["match", "leduc.nolimit.2p", "--players", f"resolve:{strategy}", "random", "--hands", "40",
                 "--seed", "2", "--json", "--quiet", "--log", str(log), *flags]) == 0
    seat = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["players"][0]
    assert seat["translation"]["resolve"]["resolves"] >= 20 and "error" not in seat["aivat"]
    assert main(["eval", "aivat", str(log), "--strategy", str(strategy), "--resolve", *flags, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert doc["hands"] == 40 and doc["player"] == seat["name"]
    assert doc["aivat_mbb_per_game"] == pytest.approx(seat["aivat"]["aivat_mbb_per_game"], abs=1e-9)
    assert doc["decisions"] > 0
    code = main(["eval", "aivat", str(log), "--strategy", str(strategy), "--seat-name", seat["name"], "--json"])
    out = capsys.readouterr()
    if code == 0:
        other = json.loads(out.out.strip().splitlines()[-1])
        assert other["aivat_mbb_per_game"] != pytest.approx(doc["aivat_mbb_per_game"], abs=1e-6)
    else:
        assert code == 2 and "probability 0" in out.err
    assert main(["eval", "aivat", str(log), "--strategy", str(strategy), "--resolve", "--resolve-seconds", "1"]) == 2
    assert "iteration budget" in capsys.readouterr().err


def test_a_set_stop_ends_the_opponents_re_solves_and_its_ranges(policy):
    """LBR hands the re-solving opponent its run's stop: once set, the opponent's next
    re-solve (its own decision, or its range's after an action) raises Interrupted
    instead of solving on."""
    from poker._stop import Interrupted, Stop

    options = dataclasses.replace(OPTIONS, street_starts=(0, 1))  # re-solves at once
    stop = Stop()
    stop.set()
    opponent = ResolvingOpponent(policy, options)
    opponent.start(0, 0, stop)
    state = State.new_hand(GAME)
    hole = _hands()[0]
    with pytest.raises(Interrupted):
        opponent.act(state, tuple(hole), ())
    rng = opponent.range(_hands(), 0)
    with pytest.raises(Interrupted):
        rng.after(state, (), Action.call()).weights()
