"""Public betting tree and bet-size abstraction: counts derived by brute force with State."""

from __future__ import annotations

import numpy as np
import pytest

from abstraction.betting import BettingSpecError, parse_betting
from poker.game import load_game
from poker.state import Action, State
from solver.tree import (
    CHANCE,
    DECISION,
    FOLD,
    SHOWDOWN,
    build_tree,
    table_offsets,
    tree_report,
)


def _brute_force(game):
    """Count decision states, fold terminals and showdown terminals per street by walking
    every legal limit action with State (fold only when facing a bet, as the state allows)."""
    dec, fold, sd, chance = {}, {}, {}, {}

    def walk(s: State) -> None:
        if s.actor is None:
            d = fold if sum(s.folded) == 1 else sd
            d[s.round] = d.get(s.round, 0) + 1
            return
        dec[s.round] = dec.get(s.round, 0) + 1
        acts = [Action.fold()] if s.can_fold() else []
        acts.append(Action.call())
        if s.can_raise():
            acts.append(Action.raise_to(s.min_raise_to))
        for a in acts:
            nxt = s.apply(a)
            if nxt.actor is not None and nxt.round > s.round:
                chance[s.round] = chance.get(s.round, 0) + 1
            walk(nxt)

    walk(State.new_hand(game))
    return dec, fold, sd, chance


def _count(tree, kind, street):
    return int(np.count_nonzero((tree.kind == kind) & (tree.street == street)))


@pytest.mark.parametrize("name", ["kuhn.limit.2p", "leduc.limit.2p"])
def test_limit_tree_counts_match_brute_force(name):
    game = load_game(name)
    tree = build_tree(game)
    dec, fold, sd, chance = _brute_force(game)
    for s in range(game.num_rounds):
        assert _count(tree, DECISION, s) == dec.get(s, 0)
        assert _count(tree, FOLD, s) == fold.get(s, 0)
        assert _count(tree, SHOWDOWN, s) == sd.get(s, 0)
        assert _count(tree, CHANCE, s) == chance.get(s, 0)


def test_known_counts():
    kuhn = build_tree(load_game("kuhn.limit.2p"))
    assert (
        kuhn.n_nodes,
        len(kuhn.decision_nodes()),
        int((kuhn.kind == FOLD).sum()),
        int((kuhn.kind == SHOWDOWN).sum()),
    ) == (9, 4, 2, 3)
    leduc = build_tree(load_game("leduc.limit.2p"))
    # Per round 9 terminal betting sequences (4 folds + 5 that reach the next round /
    # showdown) and 6 decision nodes; round 2 repeats under each of the 5 continuations.
    assert leduc.n_nodes == 90
    assert [len(leduc.decision_nodes(street=s)) for s in (0, 1)] == [6, 30]
    assert [_count(leduc, FOLD, s) for s in (0, 1)] == [4, 20]
    assert [_count(leduc, CHANCE, 0), _count(leduc, SHOWDOWN, 1)] == [5, 25]
    # Lossless buckets: 6 private cards preflop, 30 (card, board) pairs after the flop.
    rep = tree_report(leduc, [6, 30])
    assert rep.total_infosets == 936  # the usual count of Leduc information sets
    assert rep.infosets == ((18, 18), (450, 450))
    assert rep.bytes_float64 == 2 * 8 * rep.total_entries


@pytest.mark.parametrize("name", ["kuhn.limit.2p", "leduc.limit.2p"])
def test_tree_structure(name):
    tree = build_tree(load_game(name))
    for n in range(tree.n_nodes):
        k = tree.kind[n]
        if k in (DECISION, CHANCE):
            kids = range(tree.child[n], tree.child[n] + tree.n_child[n])
            assert all(tree.parent[c] == n for c in kids)
        else:
            assert tree.n_child[n] == 0
        s = tree.state_at(n)
        assert tuple(tree.spent[n]) == s.spent
        if k == DECISION:
            assert s.actor == tree.player[n] and s.round == tree.street[n]
            labels = [
                tree.action_label(c) for c in range(tree.child[n], tree.child[n] + tree.n_child[n])
            ]
            assert labels == [k.value for k in s.legal_actions()]


@pytest.mark.parametrize(
    "game_name,spec",
    [
        ("leduc.nolimit.2p", "1p,a"),
        ("leduc.nolimit.2p", "0.5p,1p,2p,a;1p,a|snap=0.2"),
        ("leduc.nolimit.2p", "0.5p/1p,a,cap2"),
        ("holdem.nolimit.2p.short20", "1p,a,cap2;a"),
    ],
)
def test_nolimit_abstract_nodes_are_legal(game_name, spec):
    game = load_game(game_name)
    tree = build_tree(game, spec)
    abst = parse_betting(spec)
    for n in tree.decision_nodes():
        s = tree.state_at(n)  # replays every action through State.apply (which checks it)
        assert s.actor == tree.player[n]
        kids = range(tree.child[n], tree.child[n] + tree.n_child[n])
        amounts = [int(tree.amount[c]) for c in kids if tree.action[c] == 2]
        assert amounts == sorted(set(amounts))
        for a in amounts:
            assert s.min_raise_to <= a <= s.max_raise_to
        cap = abst.street(s.round).cap
        if cap is not None:
            assert s.num_raises_in_round <= cap
        has_fold = any(tree.action[c] == 0 for c in kids)
        assert has_fold == s.can_fold()
    for n in np.flatnonzero(tree.kind == SHOWDOWN):
        assert tree.street[n] == game.num_rounds - 1
        assert tree.state_at(int(n)).is_showdown


def test_betting_spec_sizes():
    a = parse_betting("0.5p,1p,a;1p|snap=0.25")
    # Pot 2 (1+1), nothing to call: half pot = 1 -> raise-to 2, clamped to the minimum.
    assert a.raise_tos(0, 0, (1, 1), 0, 2, 20) == [2, 3, 20]
    # Facing 3 vs 1: pot after call 6, pot raise to 3 + 6 = 9.
    assert a.raise_tos(1, 1, (1, 3), 0, 5, 20) == [9]
    # 16 >= 0.75 * 20 snaps to all-in.
    assert a.raise_tos(1, 1, (5, 7), 0, 9, 20) == [20]
    assert parse_betting("0.5p,1p/1p,a,cap3").text() == "0.5p,1p/1p,a,cap3"
    assert parse_betting(a.text()) == a
    assert parse_betting("1p,a;").street(1).text() == ""


@pytest.mark.parametrize("bad", ["1x", "0p", "1p,1p", "1p|snap=2", "1p|foo=1", "cap1,cap2", "-1p"])
def test_betting_spec_errors(bad):
    with pytest.raises(BettingSpecError):
        parse_betting(bad)


def test_limit_and_nolimit_betting_arguments():
    with pytest.raises(ValueError, match="limit game"):
        build_tree(load_game("leduc.limit.2p"), "1p")
    with pytest.raises(ValueError, match="no-limit"):
        build_tree(load_game("leduc.nolimit.2p"))


def test_lossless_bucket_counts_by_formula():
    from solver.chance import build_chance, lossless_bucket_counts, raw_lossless_bucket_counts

    from ._solver_twins import TWO_CARD_LEDUC

    for game in (load_game("kuhn.limit.2p"), load_game("leduc.limit.2p"), TWO_CARD_LEDUC):
        assert lossless_bucket_counts(game) == build_chance(game).n_buckets
        assert raw_lossless_bucket_counts(game) == build_chance(game, numbering="raw").n_buckets
    short20 = load_game("holdem.nolimit.2p.short20")
    assert lossless_bucket_counts(short20) == (25, 255, 3185, 43460)  # suit classes
    assert raw_lossless_bucket_counts(short20) == (
        190,
        20 * 171,
        20 * 19 * 153,
        20 * 19 * 18 * 136,
    )


def test_table_offsets_are_dense():
    tree = build_tree(load_game("leduc.limit.2p"))
    offset, size = table_offsets(tree, [6, 30])
    dec = tree.decision_nodes()
    ends = offset[dec] + np.array([6, 30])[tree.street[dec]] * tree.n_child[dec]
    assert offset[dec[0]] == 0 and int(ends.max()) == size
    assert sorted(offset[dec].tolist()) == sorted(set(offset[dec].tolist()))
    assert np.all(offset[tree.kind != DECISION] == -1)
