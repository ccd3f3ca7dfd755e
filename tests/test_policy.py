"""The translated policy and the blueprint player (solver.play.policy, agent.strategy_player):
each defined translation behaviour, legality under any real betting, replay, and the
lossless bucket numbering."""

from __future__ import annotations

import functools
import json
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from abstraction.translation import mapping_probability
from agent.cli import main
from agent.protocol.codec import MatchState
from agent.strategy_player import StrategyPlayer
from poker.cards import deck_cards
from poker.game import load_game, parse_game
from poker.state import Action, ActionKind, State
from solver.chance import build_chance, lossless_bucket, raw_lossless_bucket
from solver.play.player import translated
from solver.play.policy import HandWalk, Repair, TranslatedPolicy, TranslationCounts
from solver.strategy_io import dumps_policy, loads_file
from solver.tree import DECISION, build_tree, table_offsets

LEDUC_NL = load_game("leduc.nolimit.2p")


@functools.lru_cache(maxsize=64)
def _policy(game, betting, seed=0, counts=None):
    """A random policy over ``betting`` as a loaded format-3 file's translated policy."""
    tree = build_tree(game, betting)
    counts = list(counts or (3, 15))
    _, size = table_offsets(tree, counts)
    table = np.random.default_rng(seed).random(size)
    return translated(loads_file(dumps_policy(game, betting, table)))


def _state(game, betting):
    return State.from_betting(game, betting)


def _walk(pol, position=0, seed=1, hand=0):
    return HandWalk(pol, position, seed, hand)


DECK = deck_cards(LEDUC_NL.num_ranks, LEDUC_NL.num_suits)


def _hole(game, position):
    """Distinct cards of the deck for each position (the board card is DECK[4])."""
    return (DECK[position],)


def test_on_tree_actions_are_followed_exactly():
    pol = _policy(LEDUC_NL, "0.5p,1p,a")
    s = State.new_hand(LEDUC_NL)
    node = 0
    kids = list(pol.children(node))
    for child in kids:  # every abstract action of the root, converted and read back
        act = pol.real_action(child, s)
        outcomes, exact = pol.translate(node, s, act)
        assert outcomes == [(child, 1.0)] and exact


def test_real_raise_to_is_sized_from_the_real_pot():
    pol = _policy(LEDUC_NL, "0.5p,1p")  # no all-in: a bet above 1p maps to 1p
    # The opponent (position 0) opened with an off-tree bet to 5 (pot 2: two pots).
    s = _state(LEDUC_NL, "r5")
    walk = _walk(pol, position=1)
    walk.update(s)
    assert pol.in_step(walk.node, s) and walk.counts.mapped == 1
    assert pol.tree.amount[walk.node] == 3  # the abstract bet: to 3, one pot
    pot_raise = next(c for c in pol.children(walk.node) if pol.tree.size[c] == 1.0)
    assert pol.tree.amount[pot_raise] == 9  # in the abstract game: 3 + a pot of 6
    act = pol.real_action(pot_raise, s)
    # Facing 5 against 1: pot after calling 10, a pot raise is to 5 + 10 = 15 (a total)
    assert act == Action.raise_to(15)
    assert s.verify(act) == act


def _child(pol, node, size=None, action=None):
    """The child of ``node`` of raise ``size`` (pots; -1 the all-in), or of ``action``
    (0 fold, 1 call)."""
    if size is not None:
        return next(c for c in pol.children(node) if pol.tree.action[c] == 2 and pol.tree.size[c] == size)
    return next(c for c in pol.children(node) if pol.tree.action[c] == action)


def test_every_repair_of_an_abstract_action_is_said():
    """A real action that is not the abstract one as sized from the real pot says why:
    raised to the minimum, lowered to all-in, a free fold checked, a raise not allowed
    called; an action legal as it stands says nothing."""
    pol = _policy(LEDUC_NL, "0.1p,1p,a")
    root = State.new_hand(LEDUC_NL)  # 1 and 1 in, 19 behind each: the minimum raise is to 2
    tenth, pot, all_in = (_child(pol, 0, size) for size in (0.1, 1.0, -1.0))
    assert pol.realize(tenth, root) == (Action.raise_to(2), Repair.MIN_RAISE)  # 1 + 0.2 pots -> 1
    assert pol.realize(pot, root) == (Action.raise_to(3), None)
    assert pol.realize(all_in, root) == (Action.raise_to(20), None)
    assert pol.realize(_child(pol, 0, action=1), root) == (Action.call(), None)
    # after the abstract pot bet (to 3): the real bet was to 10 (pot after calling 20)
    facing = pot
    big = root.apply(Action.raise_to(10))
    assert pol.realize(_child(pol, facing, 1.0), big) == (Action.raise_to(20), Repair.ALL_IN)  # 30 > 20
    assert pol.realize(_child(pol, facing, action=0), big) == (Action.fold(), None)
    # the real opponent checked: a fold is a check
    checked = root.apply(Action.call())
    assert pol.realize(_child(pol, facing, action=0), checked) == (Action.call(), Repair.FOLD_TO_CHECK)
    # the real opponent is all-in: no raise is allowed, a raise is a call
    shoved = root.apply(Action.raise_to(20))
    assert pol.realize(_child(pol, facing, 1.0), shoved) == (Action.call(), Repair.RAISE_TO_CALL)
    for child, state in ((tenth, root), (_child(pol, facing, 1.0), big), (_child(pol, facing, action=0), checked)):
        assert pol.real_action(child, state) == pol.realize(child, state)[0]
        assert state.verify(pol.real_action(child, state))
    # limit: the one raise is never a repair
    limit = load_game("leduc.limit.2p")
    lpol = _policy(limit, None)
    raise_child = next(c for c in lpol.children(0) if lpol.tree.action[c] == 2)
    assert lpol.realize(raise_child, State.new_hand(limit))[1] is None


def test_a_walk_counts_the_repairs_of_its_own_actions():
    tree = build_tree(LEDUC_NL, "0.1p,1p")
    offset, size = table_offsets(tree, [3, 15])
    table = np.zeros(size)
    for node in np.flatnonzero(tree.kind == 0):  # every row: the smallest raise, where there is one
        kids = range(tree.child[node], tree.child[node] + tree.n_child[node])
        pick = next((c for c in kids if tree.action[c] == 2), next(c for c in kids if tree.action[c] == 1))
        for b in range((3, 15)[tree.street[node]]):
            table[offset[node] + b * tree.n_child[node] + pick - tree.child[node]] = 1.0
    pol = TranslatedPolicy(tree, offset, table, lambda street, hole, board: 0)
    walk = _walk(pol, position=0)
    act, _ = walk.decide(State.new_hand(LEDUC_NL), _hole(LEDUC_NL, 0), ())
    assert act == Action.raise_to(2) and walk.counts.min_raise == 1 and walk.counts.repaired == 1
    # the opponent shoves (mapped to 1p, the largest): our raise is a call
    s = State.new_hand(LEDUC_NL).apply(act).apply(Action.raise_to(20))
    act, _ = walk.decide(s, _hole(LEDUC_NL, 0), ())
    assert act == Action.call() and walk.counts.raise_to_call == 1
    assert walk.counts.to_dict()["repaired"] == {"min_raise": 1, "all_in": 0, "fold_to_check": 0, "raise_to_call": 1}
    assert walk.copy().counts == walk.counts and walk.copy().counts is not walk.counts
    assert TranslationCounts().to_dict()["repaired"] == dict.fromkeys([r.value for r in Repair], 0)


def test_a_bet_between_two_sizes_maps_by_the_pseudo_harmonic_formula():
    pol = _policy(LEDUC_NL, "0.5p,1p,a")
    s = State.new_hand(LEDUC_NL)
    kids, sizes = pol.raise_children(0)
    assert sizes == [0.5, 1.0, 9.5]  # to 2, 3 and 20 over blinds of 1 and 1
    x = (4 - 1) / 2  # a bet to 4: 1.5 pots, between 1p and the all-in
    outcomes, exact = pol.translate(0, s, Action.raise_to(4))
    assert not exact and [c for c, _ in outcomes] == [kids[1], kids[2]]
    assert outcomes[0][1] == pytest.approx(mapping_probability(x, 1.0, 9.5))
    assert outcomes[0][1] + outcomes[1][1] == pytest.approx(1.0)
    # the player's draws follow those probabilities
    after = s.apply(Action.raise_to(4))
    hits = sum(_pick_node(pol, after, h) == kids[1] for h in range(2000))
    assert abs(hits / 2000 - outcomes[0][1]) < 0.04


def _pick_node(pol, s, hand):
    w = _walk(pol, position=1, seed=11, hand=hand)
    w.update(s)
    return w.node


def test_a_real_all_in_maps_to_the_abstract_all_in():
    pol = _policy(LEDUC_NL, "0.5p,1p,a")
    s = State.new_hand(LEDUC_NL)
    all_in = next(c for c in pol.children(0) if pol.tree.size[c] == -1.0)
    assert pol.translate(0, s, Action.raise_to(s.max_raise_to)) == ([(all_in, 1.0)], True)


def test_above_the_largest_size_maps_to_the_largest():
    pol = _policy(LEDUC_NL, "0.5p,1p")  # no all-in in the tree
    s = State.new_hand(LEDUC_NL)
    kids, sizes = pol.raise_children(0)
    outcomes, exact = pol.translate(0, s, Action.raise_to(s.max_raise_to))
    assert outcomes == [(kids[-1], 1.0)] and not exact


def test_a_tiny_bet_may_map_to_a_call_and_the_player_then_never_folds():
    pol = _policy(LEDUC_NL, "1p,a")
    # Position 0 checks, position 1 (the opponent) bets to 2 into a pot of 2: 0.5 pots,
    # between the check (0) and 1p: the check with probability f(0.5) = 0.5 * 1 / (1 * 1.5).
    s = _state(LEDUC_NL, "cr2")
    assert mapping_probability(0.5, 0.0, 1.0) == pytest.approx(1 / 3)
    mapped_to_call = fallback = 0
    for hand in range(300):
        player = StrategyPlayer.__new__(StrategyPlayer)  # a bare player over this policy
        walk = _walk(pol, position=0, hand=hand)
        act, probs = walk.decide(s, _hole(LEDUC_NL, 0), ())
        assert act.kind is not ActionKind.FOLD or s.can_fold()
        if probs is None:  # the abstract street ended with check-check: call the real bet
            fallback += 1
            assert act == Action.call() and walk.counts.fallback == 1
        mapped_to_call += walk.counts.mapped
        del player
    assert 0.2 < fallback / 300 < 0.47  # about 1/3 of the hands map the bet to a check
    assert mapped_to_call == 300


def test_a_raise_past_the_cap_maps_to_a_call_and_the_player_calls():
    pol = _policy(LEDUC_NL, "1p,cap1")
    # P0 bets the pot (to 3), P1 re-raises: the abstraction allows one bet a street, so
    # the re-raise maps to a call; P0's real decision has no abstract node: it calls.
    s = _state(LEDUC_NL, "r3r9")
    walk = _walk(pol, position=0)
    act, probs = walk.decide(s, _hole(LEDUC_NL, 0), ())
    assert probs is None and act == Action.call()
    assert (walk.counts.mapped, walk.counts.fallback) == (1, 1)
    # The next street is followed again: the abstract node is P0's decision on street 1.
    s2 = s.apply(Action.call())
    act2, probs2 = walk.decide(s2, _hole(LEDUC_NL, 0), (DECK[4],))
    assert probs2 is not None and pol.in_step(walk.node, s2)


def test_a_fold_where_checking_is_free_becomes_a_check():
    pol = _policy(LEDUC_NL, "1p,a")
    s = _state(LEDUC_NL, "r3c/")  # street 1, nobody has bet: folding is not legal
    # an abstract fold (the tree's pot may differ: the opponent's real bet may have been
    # mapped to a bet in the abstract game) is a check in the real game
    fold = int(np.flatnonzero(pol.tree.action == 0)[0])
    assert not s.can_fold() and pol.real_action(fold, s) == Action.call()
    facing = _state(LEDUC_NL, "r3")
    assert pol.real_action(fold, facing) == Action.fold()


def test_choices_are_keyed_by_seed_hand_and_place():
    pol = _policy(LEDUC_NL, "0.5p,1p,a", seed=3)
    s = _state(LEDUC_NL, "r5")  # off-tree: a mapped choice, then a sampled action
    hole = _hole(LEDUC_NL, 1)

    def answers(seed):
        return [_walk(pol, 1, seed, h).decide(s, hole, ())[0] for h in range(200)]

    assert answers(7) == answers(7)
    assert answers(7) != answers(8)
    # within a hand, asking again gives the same choice (it is kept for the hand)
    w = _walk(pol, 1, 7, 5)
    first = w.decide(s, hole, ())[0]
    assert all(_walk(pol, 1, 7, 5).decide(s, hole, ())[0] == first for _ in range(5))


def test_purification_drops_small_probabilities():
    game = LEDUC_NL
    tree = build_tree(game, "1p,a")
    _, size = table_offsets(tree, [3, 15])
    file = loads_file(dumps_policy(game, "1p,a", np.random.default_rng(1).random(size)))
    plain, pure = translated(file), translated(file, purify=0.3)
    p, q = plain.probabilities(0, 2), pure.probabilities(0, 2)
    assert q.sum() == pytest.approx(1.0)
    assert all((qi == 0) == (pi < 0.3) for pi, qi in zip(p, q)) or q.max() == 1.0


def _random_real_line(game, data, max_actions=12):
    """A random real betting line: sizes anywhere in the legal range, with the tiny, the
    near-all-in and the all-in sizes likely."""
    s = State.new_hand(game)
    for _ in range(max_actions):
        if s.actor is None:
            break
        kinds = s.legal_actions()
        k = data.draw(st.sampled_from(kinds))
        if k is ActionKind.RAISE:
            lo, hi = s.min_raise_to, s.max_raise_to
            to = data.draw(st.one_of(st.sampled_from([lo, hi, max(lo, hi - 1), min(hi, lo + 1)]),
                                     st.integers(lo, hi)))
            s = s.apply(Action.raise_to(to))
        else:
            s = s.apply(Action.fold() if k is ActionKind.FOLD else Action.call())
        yield s


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), betting=st.sampled_from(["1p,a", "0.5p,1p,a", "0.5p,1p", "1p,cap1", "2p;a"]),
       seed=st.integers(0, 2**31))
def test_never_illegal_under_any_real_betting(data, betting, seed):
    pol = _policy(LEDUC_NL, betting, seed=seed % 7)
    walks = {p: _walk(pol, p, seed, 0) for p in (0, 1)}
    board_card = DECK[4]
    for s in _random_real_line(LEDUC_NL, data):
        if s.actor is None:
            break
        p = s.actor
        board = (board_card,) if s.round > 0 else ()
        act, _ = walks[p].decide(s, _hole(LEDUC_NL, p), board)
        assert s.verify(act) == act or act.kind is ActionKind.RAISE and s.verify(act).amount == act.amount
        if not s.can_fold():
            assert act.kind is not ActionKind.FOLD


def test_lossless_bucket_matches_the_chance_layer_numbering():
    # two hole cards, board 0 + 2 + 1 on an 8-card deck: every pair of the enumeration
    text = ("GAMEDEF\nnolimit\nnumPlayers = 2\nnumRounds = 3\nstack = 20 20\nblind = 2 1\n"
            "firstPlayer = 2 1 1\nnumSuits = 2\nnumRanks = 4\nnumHoleCards = 2\n"
            "numBoardCards = 0 2 1\nEND GAMEDEF\n")
    game = parse_game(text, name="tiny")
    for numbering, bucket_of in (("canonical", lossless_bucket), ("raw", raw_lossless_bucket)):
        ch = build_chance(game, strength=lambda cards: sum(cards), numbering=numbering)
        checked, seen = 0, [set() for _ in ch.n_buckets]
        for i in range(ch.n_board_states):
            street = int(ch.board_street[i])
            board = [ch.deck[x] for x in ch.board_cards[i] if x >= 0]
            for h in range(ch.n_hands):
                b = int(ch.kernel.bucket[i, h])
                if b >= 0:
                    assert bucket_of(game, street, [ch.deck[x] for x in ch.hands[h]], board) == b
                    seen[street].add(b)
                    checked += 1
        assert checked == int((ch.kernel.bucket >= 0).sum())
        assert [len(x) for x in seen] == list(ch.n_buckets)  # every bucket is used
        if numbering == "raw":
            assert checked == sum(ch.n_buckets)  # raw: one pair per bucket
        with pytest.raises(ValueError, match="distinct"):
            bucket_of(game, 0, [ch.deck[0], ch.deck[0]], [])
    assert list(combinations(range(3), 2))  # the enumeration order the numbering follows


def test_strategy_player_plays_a_match_and_reports_translation(tmp_path, capsys):
    path = tmp_path / "lnl.strategy"
    tree = build_tree(LEDUC_NL, "0.5p,1p,a")
    _, size = table_offsets(tree, [3, 15])
    path.write_bytes(dumps_policy(LEDUC_NL, "0.5p,1p,a", np.random.default_rng(2).random(size)))
    argv = ["match", "leduc.nolimit.2p", "--players", f"strategy:{path}", "random", "--hands", "60",
            "--duplicate", "--seed", "4", "--quiet", "--json", "--log", str(tmp_path / "m.log")]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert doc["completed"] and doc["hands"] == 120
    t = doc["players"][0]["translation"]
    assert t["decisions"] > 0 and t["mapped"] > 0 and t["on_tree"] + t["mapped"] > 0
    first = (tmp_path / "m.log").read_text()
    assert main(argv) == 0  # the same seeds replay the same match
    capsys.readouterr()
    assert (tmp_path / "m.log").read_text() == first


def test_player_acts_from_match_states():
    pol_file = loads_file(dumps_policy(LEDUC_NL, "1p,a",
                                       np.random.default_rng(0).random(table_offsets(build_tree(LEDUC_NL, "1p,a"), [3, 15])[1])))
    player = StrategyPlayer(pol_file, seed=3)
    s = _state(LEDUC_NL, "r7")
    ms = MatchState(position=1, hand_number=0, state=s, holes=((), _hole(LEDUC_NL, 1)), boards=((),))
    act = player.act(ms)
    assert s.verify(act) == act
    assert player.summary()["decisions"] == 1 and player.counts.mapped == 1


def test_an_opponent_acting_where_the_tree_has_nobody_loses_the_walk():
    """A call (or any action) of the opponent where the abstract tree has nobody to act:
    the walk is lost, and the player checks or calls for the rest of the hand."""
    pol = _policy(LEDUC_NL, "1p,a")
    s = _state(LEDUC_NL, "c")  # position 1 to act on street 0
    walk = _walk(pol, position=1)
    chance = int(np.flatnonzero(pol.tree.kind == 1)[0])  # an abstract street end
    walk.node = chance  # the abstract street is over, the real one is not
    walk.update(s.apply(Action.raise_to(3)).apply(Action.call()).apply(Action.raise_to(10)))
    assert walk.lost
    s2 = s.apply(Action.raise_to(3)).apply(Action.call()).apply(Action.raise_to(10))
    act, probs = walk.decide(s2, _hole(LEDUC_NL, 1), (DECK[4],))
    assert probs is None and act == Action.call() and walk.counts.fallback == 1


SHORT20 = Path(__file__).resolve().parent.parent / "strategies" / "holdem.nolimit.2p.short20.strategy"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers(0, 2**31))
def test_the_shipped_blueprint_is_never_illegal(data, seed):
    """The 20-card blueprint (buckets from its card model) under random real betting."""
    file = _shipped_short20()
    game = file.game
    deck = list(deck_cards(game.num_ranks, game.num_suits))
    cards = data.draw(st.permutations(deck))
    holes = (tuple(cards[:2]), tuple(cards[2:4]))
    board = cards[4:7]
    pol = translated(file)
    walks = {p: _walk(pol, p, seed, 0) for p in (0, 1)}
    for s in _random_real_line(game, data, max_actions=16):
        if s.actor is None:
            break
        p = s.actor
        act, _ = walks[p].decide(s, holes[p], tuple(board[: s.round]))
        assert s.verify(act) == act
        if not s.can_fold():
            assert act.kind is not ActionKind.FOLD


@functools.lru_cache(maxsize=1)
def _shipped_short20():
    from solver.strategy_io import open_strategy

    return open_strategy(SHORT20)


def test_play_takes_the_strategy_files_game_by_default(tmp_path):
    from agent.cli import build_parser
    from agent.commands.options import UserError
    from agent.commands.play import open_player, player_spec

    path = tmp_path / "l.strategy"
    tree = build_tree(LEDUC_NL, "1p,a")
    path.write_bytes(dumps_policy(LEDUC_NL, "1p,a", np.ones(table_offsets(tree, [3, 15])[1])))

    def game_of(*argv: str):
        args = build_parser().parse_args(["play", "--port", "1", *argv])
        return open_player(player_spec(args), args.game, args.seed)[0]

    assert game_of("--bot", f"strategy:{path}") == LEDUC_NL
    assert game_of("--strategy", str(path)) == LEDUC_NL
    assert game_of("--bot", "call").name == "holdem.nolimit.2p.reverse_blinds"
    assert game_of("--game", "kuhn.limit.2p", "--bot", "call").name == "kuhn.limit.2p"
    assert game_of("--game", "leduc.nolimit.2p", "--bot", f"strategy:{path}") == LEDUC_NL
    with pytest.raises(UserError, match="not kuhn.limit.2p"):  # --game is the dealer's: the file must be for it
        game_of("--game", "kuhn.limit.2p", "--bot", f"strategy:{path}")
    with pytest.raises(UserError, match="missing.strategy"):
        game_of("--bot", f"strategy:{tmp_path / 'missing.strategy'}")


@pytest.mark.parametrize("betting", ["0.5p,1p,a", "0.25p,0.5p,0.75p,1p,1.5p,2p,a"])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.float64])
@pytest.mark.parametrize("purify", [0.0, 0.2])
def test_decision_row_is_probabilities_and_uniformity_bit_for_bit(betting, dtype, purify):
    """The player's one-read row (decision_row) gives the very floats of probabilities()
    and the verdict of is_uniform() on every row: rows of 2 to 9 actions (the longer ones
    take numpy's path), quantized and float tables, uniform and empty rows planted."""
    game = LEDUC_NL
    tree = build_tree(game, betting)
    counts = [3, 15]
    offset, size = table_offsets(tree, counts)
    rng = np.random.default_rng(5)
    if dtype == np.uint8:
        table = rng.integers(0, 256, size).astype(np.uint8)
    else:
        table = (rng.random(size) * rng.choice([1e-3, 1.0, 1e3], size)).astype(dtype)
    decisions = [int(v) for v in np.flatnonzero(tree.kind == DECISION)]
    widths = {int(tree.n_child[v]) for v in decisions}
    assert max(widths) >= (9 if "0.25p" in betting else 5)
    # plant rows that are uniform, within one step of uniform, and all zero
    for k, v in enumerate(decisions[:30]):
        n, o = int(tree.n_child[v]), int(offset[v])
        table[o : o + n] = (85 if dtype == np.uint8 else 0.25) if k % 3 == 0 else table[o : o + n]
        if k % 3 == 1:
            table[o : o + n] = 0
    pol = TranslatedPolicy(tree, offset, table, lambda street, hole, board: 0, purify=purify)
    flats = 0
    for v in decisions:
        for b in range(counts[int(tree.street[v])]):
            p, flat = pol.decision_row(v, b)
            assert p.dtype == np.float64
            assert p.tobytes() == pol.probabilities(v, b).tobytes()
            assert flat is pol.is_uniform(v, b)
            flats += flat
    assert flats >= 20
