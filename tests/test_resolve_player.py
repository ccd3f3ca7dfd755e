"""The re-solving player's hand logic (solver/resolve/player.py)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from poker.game import load_game
from poker.rng import Dealer
from poker.state import Action, State
from solver.evaluation.real_response import _legal_actions
from solver.play.policy import HandWalk
from solver.play.player import translated
from solver.resolve.player import ResolveOptions, ResolvingWalk
from solver.resolve.ranges import BlueprintRanges
from solver.strategy_io import open_strategy

STRATEGIES = Path(__file__).resolve().parent.parent / "strategies"
GAMES = {name: load_game(name) for name in ("leduc.nolimit.2p", "holdem.nolimit.2p.short20")}
POLICIES = {name: translated(open_strategy(STRATEGIES / f"{name}.strategy", game=g)) for name, g in GAMES.items()}
FAST = ResolveOptions(iterations=30, cap=2)  # small trees: legality, not quality


def _legal(state: State) -> list[Action]:
    return list(_legal_actions(state))  # fold where not free, call, every raise-to


def _play(name: str, seed: int, position: int, opponent, options: ResolveOptions = FAST):
    """One hand: the re-solving player at ``position``, ``opponent(state, rng)`` in the
    other seat; returns the walk, the history and the player's actions."""
    game, pol = GAMES[name], POLICIES[name]
    rng = random.Random(seed)
    deal = Dealer(game, seed).next_deal()
    walk = ResolvingWalk(pol, position, seed, seed, options)
    state = State.new_hand(game, deal)
    mine = []
    while state.actor is not None:
        board = deal.board_through(state.round)
        if state.actor == position:
            action, _ = walk.decide(state, deal.holes[position], board)
            assert action in _legal(state), (state.betting_string(), action)
            mine.append(action)
        else:
            action = opponent(state, rng)
        state = state.apply(action)
    return walk, state, mine


def _wild(state: State, rng: random.Random) -> Action:
    lo, hi = state.min_raise_to, state.max_raise_to
    r = rng.random()
    if lo is None or hi is None or r < 0.6:
        return Action.call()
    return Action.raise_to(rng.randint(lo, min(hi, lo + 2 * state.pot)))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(GAMES)), seed=st.integers(0, 10_000), position=st.integers(0, 1))
def test_its_actions_are_always_legal(name, seed, position):
    walk, _, _ = _play(name, seed, position, _wild)
    assert walk.counts.resolves + walk.counts.followed >= 0


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(GAMES)), seed=st.integers(0, 10_000), position=st.integers(0, 1))
def test_a_re_solve_from_the_blueprint_starts_from_the_blueprint_reach(name, seed, position):
    """Over random real histories with random off-tree sizes, every re-solve that does
    not carry a range from an earlier one has, as both seats' ranges, the reach the
    blueprint gives each hand along the real history (an independent Bayes replay)."""
    game, pol = GAMES[name], POLICIES[name]
    rng = random.Random(seed)
    deal = Dealer(game, seed).next_deal()
    walk = ResolvingWalk(pol, position, seed, seed, FAST)
    check = BlueprintRanges(pol, walk.hands)
    state = State.new_hand(game, deal)
    while state.actor is not None:
        board = deal.board_through(state.round)
        if state.actor == position:
            fresh, before = walk._my_range is None, walk.counts.resolves
            action, _ = walk.decide(state, deal.holes[position], board)
            if fresh and walk.counts.resolves > before:
                mine, theirs, _ = walk.last_inputs
                live = ~np.isin(walk.hands, board).any(axis=1)
                assert mine == pytest.approx(check.weights(position) * live, abs=1e-12)
                assert theirs == pytest.approx(check.weights(1 - position) * live, abs=1e-12)
        else:
            action = _wild(state, rng)
        check.after(state, board, action)
        state = state.apply(action)


def test_it_is_the_blueprint_while_the_opponent_stays_on_the_tree():
    """Against the blueprint itself (every size on the tree) nothing triggers a re-solve
    and each action is the blueprint's, draw for draw."""
    name = "holdem.nolimit.2p.short20"
    pol = POLICIES[name]
    for seed in range(6):
        position = seed % 2
        other = HandWalk(pol, 1 - position, seed + 100, seed)
        deal = Dealer(GAMES[name], seed).next_deal()

        def blueprint(state, rng, other=other, deal=deal):
            return other.decide(state, deal.holes[state.actor], deal.board_through(state.round))[0]

        walk, final, mine = _play(name, seed, position, blueprint)
        assert walk.counts.resolves == 0 and walk.counts.timeouts == 0
        twin = HandWalk(pol, position, seed, seed)
        replay = State.new_hand(GAMES[name], deal)
        for logged in final.history:
            if logged.actor == position:
                assert twin.decide(replay, deal.holes[position], deal.board_through(replay.round))[0] == logged.action
            replay = replay.apply(logged.action)


def test_a_resolve_uses_the_blueprint_ranges_and_keeps_the_opponent_within_its_alternatives():
    name = "holdem.nolimit.2p.short20"
    game, pol = GAMES[name], POLICIES[name]
    found = 0
    for seed in range(60):
        position = seed % 2
        deal = Dealer(game, seed).next_deal()
        walk = ResolvingWalk(pol, position, seed, seed, ResolveOptions(iterations=200))
        check = BlueprintRanges(pol, walk.hands)
        state = State.new_hand(game, deal)
        rng = random.Random(seed)
        while state.actor is not None:
            board = deal.board_through(state.round)
            if state.actor == position:
                before = walk.counts.resolves
                action, _ = walk.decide(state, deal.holes[position], board)
                if walk.counts.resolves > before and found < 3 and walk.counts.resolves == 1:
                    mine, theirs, alt = walk.last_inputs
                    live = ~np.isin(walk.hands, board).any(axis=1)
                    assert mine == pytest.approx(check.weights(position) * live, abs=1e-12)
                    assert theirs == pytest.approx(check.weights(1 - position) * live, abs=1e-12)
                    sol = walk._solution
                    entered = sol.ranges[1 - position]  # the gadget's weights: the range, floored
                    assert np.all(entered[live] > 0) and np.all(entered[~live] == 0)
                    after = sol.values(1 - position, mine, best=True)
                    scale = max(1.0, float(np.abs(alt).max()))
                    assert np.all(after[live] <= alt[live] + 0.02 * scale)
                    found += 1
            else:
                action = _wild(state, rng)
            check.after(state, board, action)
            state = state.apply(action)
        if found >= 3:
            break
    assert found >= 3


def test_the_seconds_cap_plays_the_blueprint_and_is_counted():
    name = "leduc.nolimit.2p"
    for seed in range(40):
        walk, final, mine = _play(name, seed, seed % 2, _wild, ResolveOptions(iterations=50, seconds=0.0))
        assert walk.counts.resolves == 0
        if walk.counts.timeouts:
            return
    pytest.fail("no re-solve was ever tried")


def test_an_opponent_off_the_tree_is_met_by_re_solving():
    """Against random sizes the player re-solves on the turn and river, every action
    legal (checked in ``_play``)."""
    resolves = 0
    for seed in range(16):
        walk, _, _ = _play("holdem.nolimit.2p.short20", seed, seed % 2, _wild)
        resolves += walk.counts.resolves
        assert walk.counts.timeouts == 0
    assert resolves >= 5


def test_an_answer_on_the_solutions_tree_is_followed_not_re_solved():
    """Re-solving at the river's start (an option), then an opponent that answers with an
    action of the solution's tree: the next decision plays that solution."""
    name = "holdem.nolimit.2p.short20"
    game, pol = GAMES[name], POLICIES[name]
    options = ResolveOptions(iterations=30, street_starts=(3,))
    followed = 0
    for seed in range(30):
        deal = Dealer(game, seed).next_deal()
        position = game.first_player[3]  # first to act on the river: the opponent answers it
        walk = ResolvingWalk(pol, position, seed, seed, options)
        other = HandWalk(pol, 1 - position, seed + 7, seed)
        state = State.new_hand(game, deal)
        while state.actor is not None:
            board = deal.board_through(state.round)
            if state.actor == position:
                action, _ = walk.decide(state, deal.holes[position], board)
            elif state.round == 3 and walk._solution is not None:
                tree, node = walk._solution.tree, walk._node
                if tree.kind[node] == 0 and tree.player[node] == position:  # after the player's action
                    node = tree.children[node][tree.actions[node].index(state.history[-1].action)]
                acts = tree.actions[node] if tree.kind[node] == 0 else []
                raises = [a for a in acts if a.amount is not None]
                action = raises[0] if raises else Action.call()
            else:
                action = other.decide(state, deal.holes[state.actor], board)[0]
            state = state.apply(action)
        followed += walk.counts.followed
    assert followed >= 1


def test_a_match_seats_the_re_solving_player(capsys, tmp_path):
    """``resolve:FILE`` in ``pokerbot match``: it plays through the dealer like any seat,
    and the match's JSON counts its re-solves and has AIVAT's estimate of its seat."""
    import json

    from agent.cli import main

    path = STRATEGIES / "holdem.nolimit.2p.short20.strategy"
    assert main(["match", "holdem.nolimit.2p.short20", "--players", f"resolve:{path}", "random",
                 "--hands", "12", "--seed", "3", "--resolve-iterations", "20", "--json", "--quiet",
                 "--log", str(tmp_path / "match.log")]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert doc["completed"] and doc["hands"] == 12
    seat = doc["players"][0]
    counts = seat["translation"]["resolve"]
    assert seat["name"].endswith("+resolve") and counts["resolves"] >= 1 and counts["timeouts"] == 0
    assert seat["legalized"] == 0  # every re-solved action was legal as it stood
    # AIVAT makes its re-solves again: every action it logged has a probability
    assert "error" not in seat["aivat"] and seat["aivat"]["hands"] == 12


def test_a_subgame_past_the_node_limit_is_left_to_the_blueprint():
    """With a limit of 50 nodes and no depth-limited subgames most subgames are refused
    and counted; in a hand where none was solved every action is the blueprint's."""
    name = "holdem.nolimit.2p.short20"
    too_big = 0
    for seed in range(12):
        walk, final, mine = _play(name, seed, seed % 2, _wild, ResolveOptions(iterations=30, max_nodes=50, runouts=0))
        too_big += walk.counts.too_big
        twin = HandWalk(POLICIES[name], seed % 2, seed, seed)  # what the blueprint would have done
        replay = State.new_hand(GAMES[name], final.deal)
        for logged in final.history:
            if logged.actor == seed % 2 and walk.counts.resolves == 0:
                assert twin.decide(replay, final.deal.holes[seed % 2],
                                   final.deal.board_through(replay.round))[0] == logged.action
            replay = replay.apply(logged.action)
    assert too_big >= 3


def test_a_raise_past_the_cap_preflop_is_re_solved_to_the_street_end(capsys):
    """The shipped full-deck blueprint calls r300r900r2700r20000 with any hand (its tree
    cannot follow). Re-solving from preflop, the subgame stops at the street's end (the
    all-in is shown down over seeded run-outs): 7c2d folds, aces call; ``pokerbot
    inspect --resolve`` reports the same."""
    import json

    from agent.cli import main
    from agent.commands.inspect import parse_history
    from poker.cards import parse_cards
    from solver.play.player import open_playable
    from solver.resolve.player import ResolveCounts

    game = load_game("holdem.nolimit.2p.reverse_blinds")
    path = STRATEGIES / "holdem.nolimit.2p.reverse_blinds.strategy"
    pol = translated(open_playable(path, game=game, tables="none"))
    state = parse_history(game, "r300r900r2700r20000")
    options = ResolveOptions(iterations=100, first_street=0)
    calls = {}
    for hand in ("7c2d", "AsAh"):
        hole = parse_cards(hand)
        assert HandWalk(pol, state.actor, 1, 1).decide(state, hole, [])[0] == Action.call()
        counts = ResolveCounts()
        walk = ResolvingWalk(pol, state.actor, 1, 1, options, resolve_counts=counts)
        action, probs = walk.decide(state, hole, [])
        assert counts.resolves == 1 and counts.limited == 1
        acts = walk.solution[0].tree.actions[0]
        calls[hand] = float(probs[acts.index(Action.call())])
    assert calls["7c2d"] < 0.01 and calls["AsAh"] > 0.99
    assert main(["inspect", str(path), "--history", "r300r900r2700r20000", "--hand", "7c2d", "--tables", "none",
                 "--resolve", "--resolve-from", "preflop", "--resolve-iterations", "100", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert doc["actions"][0]["real"] == "c"  # the blueprint: call (fallback)
    got = {a["action"]: a["prob"] for a in doc["resolving"]["actions"]}
    assert doc["resolving"]["source"] == "solved" and got["fold"] > 0.99
    assert main(["inspect", str(path), "--tables", "none", "--resolve"]) == 2  # no --hand: one line
    assert "--resolve" in capsys.readouterr().err


def test_subgames_past_the_node_limit_stop_at_the_street_end():
    """With a node limit of 300 most 20-card subgames cannot reach the end of the hand:
    re-solving from preflop against a wild opponent, they stop at their street's end
    (counted as limited) and every action stays legal (``_play`` checks each)."""
    name = "holdem.nolimit.2p.short20"
    limited = 0
    for seed in range(8):
        walk, _, _ = _play(name, seed, seed % 2, _wild,
                           ResolveOptions(iterations=20, max_nodes=300, runouts=30, first_street=0, cap=2))
        limited += walk.counts.limited
    assert limited >= 3


def test_the_gadgets_alternatives_and_ranges():
    """On the same 20-card re-solves: the estimated alternatives (the opponent playing on
    as the blueprint) are never above the safe ones (its best response), and without a
    gadget the opponent's range is its blueprint range as it stands; a bad gadget name is
    refused in one line."""
    from agent.players import PlayerSpecError, ResolveSpec
    from solver.resolve.player import resolve_subgame

    name = "holdem.nolimit.2p.short20"
    game, pol = GAMES[name], POLICIES[name]
    checked = 0
    for seed in range(40):
        position = seed % 2
        deal = Dealer(game, seed).next_deal()
        walk = ResolvingWalk(pol, position, seed, seed, ResolveOptions(iterations=20, street_starts=(2, 3)))
        state = State.new_hand(game, deal)
        rng = random.Random(seed)
        while state.actor is not None and checked < 4:
            board = deal.board_through(state.round)
            if state.actor == position:
                before = walk.counts.resolves
                action, _ = walk.decide(state, deal.holes[position], board)
                if walk.counts.resolves == 1 > before:
                    got = {g: resolve_subgame(pol, ResolveOptions(iterations=5, gadget=g), position, state, board,
                                              walk.ranges, None, walk.hands) for g in ("safe", "estimated", "none")}
                    live = ~np.isin(walk.hands, board).any(axis=1)
                    safe, est = got["safe"].alternatives, got["estimated"].alternatives
                    scale = max(1.0, float(np.abs(safe).max()))
                    assert np.all(est[live] <= safe[live] + 1e-9 * scale) and (est[live] < safe[live] - 1e-6).any()
                    plain = got["none"].solver
                    assert plain.gadget_seat is None and got["none"].alternatives is None
                    assert plain.ranges[1 - position] == pytest.approx(got["none"].theirs, abs=1e-12)
                    checked += 1
                if walk.counts.resolves:
                    break  # only a hand's first re-solve is checked: the rest of it is not needed
            else:
                action = _wild(state, rng)
            state = state.apply(action)
        if checked >= 4:
            break
    assert checked >= 4
    with pytest.raises(PlayerSpecError, match="--resolve-gadget"):
        ResolveSpec.parse(gadget="trusting")
    with pytest.raises(ValueError, match="gadget"):
        ResolveOptions(gadget="trusting")


_FULL = load_game("holdem.nolimit.2p.reverse_blinds")
_FULL_POLICY: list = []


def _full_policy():
    if not _FULL_POLICY:
        from solver.play.player import open_playable

        path = STRATEGIES / "holdem.nolimit.2p.reverse_blinds.strategy"
        _FULL_POLICY.append(translated(open_playable(path, game=_FULL, tables="none")))
    return _FULL_POLICY[0]


# (two deals, one a seat at random: each re-solves the full deck's preflop and flop, some
# 8 s of CPU a deal; the same property is checked on many more deals of the small games
# above)
@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), position=st.integers(0, 1))
def test_full_deck_preflop_and_flop_re_solves_are_legal(seed, position):
    """The full-deck blueprint re-solving from preflop against a wild opponent (random
    sizes, many off the tree) through the preflop and the flop: every subgame stops at
    its street's end and every action it takes is legal."""
    pol = _full_policy()
    rng = random.Random(seed)
    deal = Dealer(_FULL, seed).next_deal()
    walk = ResolvingWalk(pol, position, seed, seed, ResolveOptions(iterations=10, runouts=20, first_street=0))
    state = State.new_hand(_FULL, deal)
    while state.actor is not None and state.round <= 1:
        board = deal.board_through(state.round)
        if state.actor == position:
            action, _ = walk.decide(state, deal.holes[position], board)
            assert action in _legal(state), (state.betting_string(), action)
        else:
            action = _wild(state, rng)
        state = state.apply(action)
    assert walk.counts.resolves == walk.counts.limited  # preflop and flop: always to the street's end


def test_a_first_preflop_re_solve_is_made_once_per_history():
    """A first re-solve with no board depends on the public history alone: the same one
    again returns the kept solution (no time spent), other options or another history
    solve anew, and a re-solve with a board is not kept."""
    import dataclasses

    from solver.resolve.player import resolve_subgame
    from solver.resolve.subgame import deck_hands

    name = "leduc.nolimit.2p"
    game, pol = GAMES[name], POLICIES[name]
    hands = deck_hands(game)
    opts = ResolveOptions(iterations=20, first_street=0)

    def solve_at(state, options, board=()):
        ranges = BlueprintRanges(pol, hands)
        real = State.new_hand(game)
        for logged in state.history:
            ranges.after(real, board if real.round else (), logged.action)
            real = real.apply(logged.action)
        return resolve_subgame(pol, options, state.actor, state, board, ranges, None, hands)

    root = State.new_hand(game)
    first = solve_at(root, opts)
    again = solve_at(root, opts)
    assert first.status == "solved" and first.seconds > 0.0
    assert again.solver is first.solver and again.seconds == 0.0
    assert np.array_equal(again.mine, first.mine)
    assert solve_at(root, dataclasses.replace(opts, iterations=21)).solver is not first.solver
    raised = root.apply(Action.raise_to(root.min_raise_to))
    assert solve_at(raised, opts).solver is not first.solver
    flop = root.apply(Action.call()).apply(Action.call())
    board = (Dealer(game, 3).next_deal().boards[1][0],)
    on_board = solve_at(flop, opts, board)
    assert on_board.status == "solved" and solve_at(flop, opts, board).solver is not on_board.solver


def test_a_watcher_is_told_the_re_solves_distribution():
    """Where a re-solve chose, the decision event carries the subgame's real actions and
    their probabilities (the action played among them); where the blueprint chose, its
    abstract ones."""
    from agent.decisions import decision_event
    from agent.protocol.client_state import ClientConnection
    from agent.strategy_player import StrategyPlayer

    name = "leduc.nolimit.2p"
    player = StrategyPlayer(open_strategy(STRATEGIES / f"{name}.strategy", game=GAMES[name]), seed=4,
                            resolve=ResolveOptions(iterations=30, first_street=0))

    def told(line: bytes):
        conn = ClientConnection(GAMES[name])
        conn.initiate()
        conn.receive_data(line)
        ms = conn.next_event().match_state
        action = player.act(ms)
        return action, decision_event(ms, action, "p", player.explain(ms))

    # position 1 faces a raise to 7 (a bet of 3 pots): off the blueprint's tree, so it re-solves
    action, event = told(b"MATCHSTATE:1:0:r7:|Qs\r\n")
    assert event["resolved"] is True and event["fallback"] is False
    dist = event["distribution"]
    assert sum(d["p"] for d in dist) == pytest.approx(1.0, abs=1e-3) and dist[event["chosen"]]["p"] > 0
    assert {d["label"] for d in dist} >= {"folds", "calls 6"} and event["action_text"] == dist[event["chosen"]]["label"]
    assert event["mapping"] is None  # the re-solve met the real bet: nothing was translated
    # a new hand from the root: the blueprint chooses, over its abstract actions
    _, event = told(b"MATCHSTATE:0:1::Ks|\r\n")
    assert "resolved" not in event and event["distribution"][0]["label"] == "check"
