"""Exact head-to-head value of two translated players (solver.evaluation.head_to_head) and
``pokerbot eval h2h``.

Oracle: a brute force that plays out every deal with both players' own HandWalks, their
random choices (mapping outcomes and their own action draws) replaced by enumerating
every outcome with its probability: a recursive expectation over the real game, one
hand at a time, with nothing of the mapping-state machinery. The O(n) terminal sums
(solver.evaluation._terminal) are checked against the dense matrices they replace, and the walk
over many boards at once against a walk of one board at a time (the module's former
path, kept here).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import solver.play.policy as policy_mod
from agent.cli import main
from poker.cards import deck_cards
from poker.evaluator import evaluate, evaluate_batch
from poker.game import Game, load_game
from poker.state import Deal, State
from solver.training.algorithms import solve
from solver.chance import lossless_bucket
from solver.evaluation._terminal import PairValues
import solver.evaluation.head_to_head as h2h_mod
from solver.evaluation.head_to_head import ALL_BOARDS_MAX, _board_at, all_boards, board_value, head_to_head, n_boards
from solver.play.policy import HandWalk, TranslatedPolicy
from solver.problem import make_problem
from solver.evaluation.real_response import TranslatedPlayer, real_self_play_value
from solver.strategy_io import open_strategy, save_strategy
from solver.tree import DECISION

ROOT = Path(__file__).resolve().parents[1]


def _policy_of(strategy: Any, game: Game, mapping: str = "pseudo_harmonic") -> TranslatedPolicy:
    p = strategy.problem
    return TranslatedPolicy(
        p.tree, p.offset, strategy.policy,
        lambda street, hole, board: lossless_bucket(game, street, hole, board), mapping=mapping,
    )


def _random_policy(game: Game, betting: str | None, mapping: str = "pseudo_harmonic", seed: int = 1,
                   low: float = 0.05, purify: float = 0.0) -> TranslatedPolicy:
    """Every abstract action with positive probability (``low`` > 0): every rule gets exercised."""
    p = make_problem(game, betting)
    table = np.random.default_rng(seed).uniform(low, 1.0, p.size)
    return TranslatedPolicy(
        p.tree, p.offset, table,
        lambda street, hole, board: lossless_bucket(game, street, hole, board), mapping=mapping, purify=purify,
    )


# ---------------------------------------------------------------- brute force


class _Script:
    """Forces HandWalk's random choices to a given sequence of outcome indices and
    records the first choice point past it (its outcomes' probabilities)."""

    def __init__(self) -> None:
        self.queue: list[int] = []
        self.new: list[float] | None = None
        self.stats = {"mapped": 0, "fallback": 0, "lost": 0}


def _install(monkeypatch: pytest.MonkeyPatch, script: _Script) -> None:
    def choose(probs: list[float]) -> int:
        if script.queue:
            return script.queue.pop(0)
        if script.new is None:
            script.new = probs
        return next(i for i, p in enumerate(probs) if p > 0.0)

    def pick(outcomes: list[tuple[int, float]], u: float) -> int:
        if len(outcomes) == 1:
            return outcomes[0][0]
        script.stats["mapped"] += 1
        return outcomes[choose([p for _, p in outcomes])][0]

    def draw(probs: np.ndarray, u: float) -> int:
        return choose(probs.tolist())

    monkeypatch.setattr(policy_mod, "_pick", pick)
    monkeypatch.setattr(policy_mod, "_draw", draw)


def _decisions(script: _Script, walk: HandWalk, state: State, hole: tuple[int, ...],
               board: tuple[int, ...], prefix: list[int], prob: float) -> list[tuple[float, Any, HandWalk]]:
    """Every (probability, real action, walk after it) of ``walk`` deciding at ``state``:
    each random choice it makes (catching up with the opponent's actions, then its own
    draw) enumerated with its outcomes' probabilities."""
    w = walk.copy()
    script.queue, script.new = list(prefix), None
    action, _ = w.decide(state, hole, board)
    options = script.new
    if options is None:
        return [(prob, action, w)]
    out = []
    for i, p in enumerate(options):
        if p > 0.0:
            out += _decisions(script, walk, state, hole, board, [*prefix, i], prob * p)
    return out


def _brute_h2h(game: Game, first: TranslatedPolicy, second: TranslatedPolicy, script: _Script) -> float:
    """Seat 0's expected chips, ``first`` in position 0, over every ordered deal."""
    deck = deck_cards(game.num_ranks, game.num_suits)
    k = game.num_hole_cards
    sizes = game.num_board_cards
    total, deals = 0.0, 0

    def value(state: State, walks: tuple[HandWalk, HandWalk], holes: Any, board: tuple[int, ...]) -> float:
        if state.actor is None:
            for w in walks:
                script.stats["fallback"] += w.counts.fallback
                script.stats["lost"] += w.lost
            return state.values()[0]
        actor = state.actor
        seen = board[: game.board_cards_through(state.round)]
        v = 0.0
        for p, action, w in _decisions(script, walks[actor], state, holes[actor], seen, [], 1.0):
            pair = (w, walks[1]) if actor == 0 else (walks[0], w)
            v += p * value(state.apply(action), pair, holes, board)
        return v

    for h0 in itertools.combinations(deck, k):
        for h1 in itertools.combinations([c for c in deck if c not in h0], k):
            rest = [c for c in deck if c not in h0 + h1]
            for board in itertools.permutations(rest, game.total_board_cards):
                streets, i = [], 0
                for n in sizes:
                    streets.append(tuple(board[i : i + n]))
                    i += n
                if any(list(s) != sorted(s) for s in streets):
                    continue  # one order per street's cards: every board equally likely
                state = State.new_hand(game, Deal((h0, h1), tuple(streets)))
                walks = (HandWalk(first, 0, seed=0, hand=0), HandWalk(second, 1, seed=0, hand=0))
                total += value(state, walks, (h0, h1), tuple(board))
                deals += 1
    return total / deals


CASES = [
    # game, A (betting, seed), B (betting, seed)
    ("kuhn.limit.2p", (None, 1), (None, 2)),
    ("leduc.limit.2p", (None, 1), (None, 2)),
    ("leduc.nolimit.2p", ("1p,a", 1), ("0.5p,1p,2p,a", 2)),
]


@pytest.mark.parametrize("name,pa,pb", CASES)
def test_equals_brute_force_over_every_deal_and_draw(name, pa, pb, monkeypatch):
    game = load_game(name)
    a = _random_policy(game, pa[0], seed=pa[1])
    b = _random_policy(game, pb[0], seed=pb[1])
    res = head_to_head(a, b, game)
    assert res.exact and res.boards == res.boards_total == len(all_boards(game))
    assert res.ci95 == (res.mbb_per_game, res.mbb_per_game)
    script = _Script()
    _install(monkeypatch, script)
    ab = _brute_h2h(game, a, b, script)
    ba = _brute_h2h(game, b, a, script)
    assert res.seat_values[0] == pytest.approx(ab, abs=1e-9)
    assert res.seat_values[1] == pytest.approx(-ba, abs=1e-9)
    assert res.chips_per_game == pytest.approx((ab - ba) / 2, abs=1e-9)
    assert res.mbb_per_game == pytest.approx(1000 * res.chips_per_game / game.big_blind)
    assert res.chips_per_game != pytest.approx(0.0, abs=1e-6)  # a real difference was measured
    if not game.is_limit:  # the translation randomized, and both fallbacks were exercised
        assert script.stats["mapped"] > 0 and script.stats["fallback"] > 0 and script.stats["lost"] > 0


def test_same_strategy_is_zero_and_antisymmetric():
    game = load_game("leduc.limit.2p")
    strategy = solve(game, "cfr+", iterations=30)
    pol = _policy_of(strategy, game)
    same = head_to_head(pol, pol, game)
    assert same.chips_per_game == 0.0 and same.mbb_per_game == 0.0
    # each seat's value is the translated self-play value of solver.evaluation.real_response
    assert same.seat_values[0] == pytest.approx(real_self_play_value(pol), abs=1e-12)
    other = _random_policy(game, None, seed=4)
    ab, ba = head_to_head(pol, other, game), head_to_head(other, pol, game)
    assert ab.chips_per_game == pytest.approx(-ba.chips_per_game, abs=1e-12)
    assert ab.chips_per_game > 0.1  # a CFR+ strategy beats a random one


def test_two_betting_abstractions_on_leduc_nolimit():
    game = load_game("leduc.nolimit.2p")
    a = _policy_of(solve(game, "cfr+", iterations=60, betting="1p,a"), game)
    b = _policy_of(solve(game, "cfr+", iterations=60, betting="0.5p,1p,2p,a"), game)
    ab, ba = head_to_head(a, b, game), head_to_head(b, a, game)
    assert ab.chips_per_game == pytest.approx(-ba.chips_per_game, abs=1e-12)
    assert ab.seat_values == pytest.approx((-ba.seat_values[1], -ba.seat_values[0]), abs=1e-12)
    # every board's value is what the mean is made of
    manual = np.mean([(board_value(a, b, game, bd)[0] - board_value(b, a, game, bd)[0]) / 2
                      for bd in all_boards(game)])
    assert ab.chips_per_game == pytest.approx(manual, abs=1e-12)


def test_board_sampling():
    game = load_game("leduc.nolimit.2p")
    assert all(_board_at(game, i) == bd for i, bd in enumerate(all_boards(game)))
    short = load_game("holdem.nolimit.2p.short20")
    assert n_boards(short) == 20 * 19 * 18
    assert [_board_at(short, i) for i in (0, 1, 6839)] == [all_boards(short)[i] for i in (0, 1, 6839)]
    a = _random_policy(game, "1p,a", seed=1)
    b = _random_policy(game, "0.5p,1p,2p,a", seed=2)
    full = head_to_head(a, b, game)
    assert head_to_head(a, b, game, boards=6).mbb_per_game == pytest.approx(full.mbb_per_game, abs=1e-12)
    part = head_to_head(a, b, game, boards=3, seed=7)
    assert not part.exact and part.boards == 3 and part.boards_total == 6
    lo, hi = part.ci95
    assert lo < part.mbb_per_game < hi
    # a different seed draws a different set of boards; the same seed the same
    assert head_to_head(a, b, game, boards=3, seed=7).mbb_per_game == part.mbb_per_game
    with pytest.raises(ValueError):
        head_to_head(a, b, game, boards=0)
    with pytest.raises(ValueError):
        head_to_head(a, _random_policy(load_game("leduc.limit.2p"), None), game)


def test_jobs_progress_and_board_values():
    game = load_game("leduc.nolimit.2p")
    a = _random_policy(game, "1p,a", seed=1)
    b = _random_policy(game, "0.5p,1p,2p,a", seed=2)

    def batch(street: int, cards: np.ndarray) -> np.ndarray:
        # a bucket function that starts numba's threads, as card abstractions do: a worker
        # forked from a process running GNU OpenMP would be killed if it called it
        evaluate_batch(cards, parallel=True)
        return np.array([lossless_bucket(game, street, r[:1], r[1:]) for r in cards.tolist()])

    b.bucket_batch = batch
    seen: list[tuple[int, int]] = []
    one = head_to_head(a, b, game, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(i, 6) for i in range(1, 7)]
    assert len(one.board_values) == 6
    assert np.mean(one.board_values) == one.chips_per_game
    bd = all_boards(game)[2]
    assert one.board_values[2] == pytest.approx((board_value(a, b, game, bd)[0] - board_value(b, a, game, bd)[0]) / 2,
                                                abs=1e-12)
    assert "board_values" not in one.to_dict()
    seen.clear()
    two = head_to_head(a, b, game, jobs=2, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(i, 6) for i in range(1, 7)]
    # the same numbers, bit for bit, whatever the number of processes
    assert two.board_values == one.board_values
    assert (two.chips_per_game, two.seat_values, two.nodes) == (one.chips_per_game, one.seat_values, one.nodes)
    part = head_to_head(a, b, game, boards=3, seed=7, jobs=3)
    assert part.board_values == head_to_head(a, b, game, boards=3, seed=7).board_values
    same = head_to_head(a, a, game, boards=2, jobs=2)  # one player object for both seats
    assert same.board_values == (0.0, 0.0)
    with pytest.raises(ValueError):
        head_to_head(a, b, game, jobs=0)


# ---------------------------------------------------------------- many boards per walk


def _one_board(first: TranslatedPolicy, second: TranslatedPolicy, game: Game,
               board: tuple[int, ...]) -> tuple[float, int]:
    """Seat 0's value on ``board`` and the real nodes walked, by a walk of that board alone
    over the hands that miss it (head_to_head's path before boards shared a walk)."""
    k = game.num_hole_cards
    deck = [c for c in deck_cards(game.num_ranks, game.num_suits) if c not in board]
    hands = np.array(list(itertools.combinations(deck, k)), dtype=np.int64).reshape(-1, k)

    def buckets(pol: TranslatedPolicy) -> list[np.ndarray]:
        out = []
        for s in range(game.num_rounds):
            seen = board[: game.board_cards_through(s)]
            if pol.bucket_batch is not None:
                cards = np.concatenate([hands, np.tile(np.asarray(seen, dtype=np.int64), (hands.shape[0], 1))], axis=1)
                out.append(np.asarray(pol.bucket_batch(s, np.ascontiguousarray(cards)), dtype=np.int64))
            else:
                out.append(np.array([pol.bucket(s, h, seen) for h in hands.tolist()], dtype=np.int64))
        return out

    values = PairValues(hands, board)
    players = (TranslatedPlayer(first, buckets(first)), TranslatedPlayer(second, buckets(second)))
    count = [0]

    def walk(state: State, ms: tuple[dict, dict]) -> float:
        count[0] += 1
        if state.actor is None:
            r0, r1 = sum(ms[0].values()), sum(ms[1].values())
            spent = state.spent
            if state.folded[0]:
                return -spent[0] * values.disjoint(r0, r1)
            if state.folded[1]:
                return spent[1] * values.disjoint(r0, r1)
            return min(spent) * values.showdown(r0, r1)
        actor = state.actor
        total = 0.0
        for a, mine in players[actor].own_moves(ms[actor], state).items():
            theirs = players[1 - actor].after_opponent(ms[1 - actor], state, a)
            total += walk(state.apply(a), (mine, theirs) if actor == 0 else (theirs, mine))
        return total

    ones = np.ones(hands.shape[0])
    v = walk(State.new_hand(game), ({0: ones}, {0: ones.copy()}))
    return v / values.disjoint(ones, ones), count[0]


def _check_against_one_board(a: TranslatedPolicy, b: TranslatedPolicy, game: Game, res: Any,
                             boards: list[tuple[int, ...]]) -> None:
    nodes = 0
    assert len(res.board_values) == len(boards)
    for got, bd in zip(res.board_values, boards):
        (v0, n0), (v1, n1) = _one_board(a, b, game, bd), _one_board(b, a, game, bd)
        assert got == pytest.approx((v0 - v1) / 2, rel=1e-9, abs=1e-12)
        nodes += n0 + n1
    assert res.nodes == nodes  # each board counts the nodes its own walk would visit


@pytest.mark.parametrize("per_walk", [32, 4, 1])
def test_boards_share_a_walk_leduc(per_walk, monkeypatch):
    """Every board of leduc.nolimit.2p, two betting abstractions (one purified), walked in
    chunks of ``per_walk`` boards: each board's value (and node count) is the one-board
    walk's, in board order, on 1 and 2 processes."""
    monkeypatch.setattr(h2h_mod, "BOARDS_PER_WALK", per_walk)
    game = load_game("leduc.nolimit.2p")
    a = _random_policy(game, "1p,a", seed=1, purify=0.3)
    b = _random_policy(game, "0.5p,1p,2p,a", seed=2, mapping="geometric")
    res = head_to_head(a, b, game)
    _check_against_one_board(a, b, game, res, all_boards(game))
    two = head_to_head(a, b, game, jobs=2)
    assert (two.board_values, two.nodes) == (res.board_values, res.nodes)
    for bd in all_boards(game)[:2]:
        assert board_value(a, b, game, bd) == pytest.approx(_one_board(a, b, game, bd), rel=1e-9, abs=1e-12)


def test_boards_share_a_walk_short20(monkeypatch):
    """Sampled boards of the 20-card hold'em with the shipped blueprint against itself
    purified and with another mapping, chunked (3 + 2 boards)."""
    monkeypatch.setattr(h2h_mod, "BOARDS_PER_WALK", 3)
    f = open_strategy(ROOT / "strategies" / "holdem.nolimit.2p.short20.strategy")
    a, b = f.translated(), f.translated(mapping="geometric", purify=0.1)
    game = a.game
    res = head_to_head(a, b, game, boards=5, seed=11)
    rng = np.random.default_rng(11)  # head_to_head's draw of the boards
    boards = [_board_at(game, int(i)) for i in rng.choice(n_boards(game), size=5, replace=False)]
    _check_against_one_board(a, b, game, res, boards)


# ---------------------------------------------------------------- O(n) terminals and row probabilities


def _dense(hands: np.ndarray, board: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The terminal matrices over (hand of seat 0, hand of seat 1) that PairValues replaces:
    1 for disjoint hands, and the sign of seat 0's hand against seat 1's on those pairs."""
    clash = (hands[:, None, :, None] == hands[None, :, None, :]).any(axis=(2, 3))
    consistent = (~clash).astype(np.float64)
    strength = np.array([evaluate(tuple(h) + board) for h in hands.tolist()], dtype=np.float64)
    return consistent, np.sign(strength[:, None] - strength[None, :]) * consistent


@pytest.mark.parametrize("name", ["kuhn.limit.2p", "leduc.nolimit.2p", "holdem.nolimit.2p.short20",
                                  "holdem.nolimit.2p.reverse_blinds"])
def test_terminal_sums_equal_the_dense_matrices(name):
    game = load_game(name)
    deck = deck_cards(game.num_ranks, game.num_suits)
    rng = np.random.default_rng(5)
    for trial in range(4):
        board = tuple(int(c) for c in rng.choice(deck, game.total_board_cards, replace=False))
        rest = [c for c in deck if c not in board]
        hands = np.array(list(itertools.combinations(rest, game.num_hole_cards))).reshape(-1, game.num_hole_cards)
        consistent, showdown = _dense(hands, board)
        values = PairValues(hands, board)
        n = hands.shape[0]
        ones = np.ones(n)
        assert values.disjoint(ones, ones) == consistent.sum()
        for _ in range(5):
            r0, r1 = rng.uniform(0.0, 1.0, n), rng.uniform(0.0, 1.0, n)
            r0[rng.uniform(size=n) < 0.3] = 0.0  # reach vectors of a walk hold zeros
            r1[rng.uniform(size=n) < 0.3] = 0.0
            assert values.disjoint(r0, r1) == pytest.approx(float(r0 @ consistent @ r1), rel=1e-9, abs=0)
            # relative to the sum of the magnitudes: wins and losses cancel
            scale = float(r0 @ np.abs(showdown) @ r1)
            assert abs(values.showdown(r0, r1) - float(r0 @ showdown @ r1)) <= 1e-9 * scale
            assert values.showdown(r1, r0) == pytest.approx(-values.showdown(r0, r1), rel=1e-9, abs=1e-9 * scale)
    # only ties: nothing is won or lost
    tie = PairValues(np.array([[0], [1], [2]]), ())
    assert tie.showdown(np.ones(3), np.ones(3)) == 0.0


@pytest.mark.parametrize("purify", [0.0, 0.2])
def test_row_probabilities_are_the_policys(purify):
    """TranslatedPlayer reads every row at once (TranslatedPolicy.rows): the very numbers
    of TranslatedPolicy.probabilities, bucket by bucket, purification included, with nodes
    of up to ten actions (past numpy's 8-way unrolled sums) and rows of zeros."""
    game = load_game("leduc.nolimit.2p")
    p = make_problem(game, "0.25p,0.5p,0.75p,1p,1.5p,2p,3p,4p,a")
    rng = np.random.default_rng(3)
    table = rng.uniform(0.0, 1.0, p.size) * (rng.uniform(size=p.size) < 0.8)
    pol = TranslatedPolicy(p.tree, p.offset, table, lambda street, hole, board: 0, purify=purify)
    buckets = [rng.integers(0, 3, 40) if s == 0 else rng.integers(0, 15, 40) for s in range(game.num_rounds)]
    player = TranslatedPlayer(pol, buckets)
    nodes = np.flatnonzero(p.tree.kind == DECISION)
    assert p.tree.n_child[nodes].max() >= 10
    for node in nodes.tolist():
        b = buckets[p.tree.street[node]]
        expect = np.stack([pol.probabilities(node, int(x)) for x in b])
        assert np.array_equal(player.probs(node), expect)


@pytest.mark.parametrize("purify", [0.0, 0.2, 0.95])
def test_batched_row_probabilities_are_the_policys(purify):
    """The walk over many boards computes the probabilities of its rows in one kernel
    (head_to_head._row_probs, over the distinct buckets): the numbers of
    TranslatedPolicy.rows, purification (down to nothing left: the most likely actions)
    and rows of zeros included."""
    game = load_game("leduc.nolimit.2p")
    p = make_problem(game, "0.25p,0.5p,0.75p,1p,1.5p,2p,3p,4p,a")
    rng = np.random.default_rng(3)
    for table in (rng.uniform(0.0, 1.0, p.size) * (rng.uniform(size=p.size) < 0.8),
                  rng.integers(0, 4, p.size).astype(np.uint8)):
        pol = TranslatedPolicy(p.tree, p.offset, table, lambda street, hole, board: 0, purify=purify)
        buckets = [rng.integers(0, 3, 40) if s == 0 else rng.integers(0, 15, 40) for s in range(game.num_rounds)]
        player = h2h_mod._BatchPlayer(pol, buckets)
        for node in np.flatnonzero(p.tree.kind == DECISION).tolist():
            expect = pol.rows(node, buckets[p.tree.street[node]])
            got = np.zeros((expect.shape[1], expect.shape[0]))
            for i, column in player._moves(node):
                got[i] = column
            np.testing.assert_allclose(got.T, expect, rtol=1e-15, atol=0)


def test_own_moves_checks_the_probabilities():
    game = load_game("leduc.limit.2p")
    pol = _random_policy(game, None)
    player = TranslatedPlayer(pol, [np.zeros(3, dtype=np.int64)] * game.num_rounds)
    state = State.new_hand(game)
    moves = player.own_moves({0: np.ones(3)}, state)
    assert sum(r for m in moves.values() for r in m.values()) == pytest.approx(np.ones(3), abs=1e-12)
    player._probs[0] = player.probs(0) * np.array([[1.0], [1.0], [0.9]])  # one row sums to 0.9
    player._columns.clear()
    with pytest.raises(AssertionError, match="do not sum to 1"):
        player.own_moves({0: np.ones(3)}, state)


# ---------------------------------------------------------------- CLI


def test_cli_h2h(tmp_path, capsys):
    game = load_game("leduc.nolimit.2p")
    fa, fb = tmp_path / "a.strategy", tmp_path / "b.strategy"
    sa = solve(game, "cfr+", iterations=40, betting="1p,a")
    sb = solve(game, "cfr+", iterations=40, betting="0.5p,1p,2p,a")
    save_strategy(fa, sa, precision="f32")
    save_strategy(fb, sb, precision="f32")
    assert main(["eval", "h2h", str(fa), str(fb), "--json"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    doc = json.loads(out[-1])
    expect = head_to_head(open_strategy(fa).translated(), open_strategy(fb).translated(), game)
    assert doc["mbb_per_game"] == pytest.approx(expect.mbb_per_game, abs=1e-9)
    assert doc["ci95"] == [pytest.approx(expect.mbb_per_game, abs=1e-9)] * 2
    assert doc["boards"] == 6 and doc["seconds"] >= 0
    assert main(["eval", "h2h", str(fa), str(fb), "--boards", "2", "--seed", "3"]) == 0
    text = capsys.readouterr().out
    assert "mbb/g" in text and "boards" in text

    # another game's file, a damaged file: one line on stderr, status 2
    other = tmp_path / "limit.strategy"
    save_strategy(other, solve(load_game("leduc.limit.2p"), "cfr+", iterations=2))
    assert main(["eval", "h2h", str(fa), str(other)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "game" in err[0]
    bad = tmp_path / "bad.strategy"
    bad.write_bytes(fa.read_bytes()[:-100])
    assert main(["eval", "h2h", str(fa), str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.strategy" in err[0]


def test_every_board_of_the_full_deck_is_refused(capsys, tmp_path):
    """Listing all 51,979,200 full-deck boards is refused in one line: sample them."""
    full = load_game("holdem.nolimit.2p.reverse_blinds")
    assert n_boards(full) == 51_979_200 > ALL_BOARDS_MAX
    path = ROOT / "strategies" / "holdem.nolimit.2p.reverse_blinds.strategy"
    assert main(["eval", "h2h", str(path), str(path), "--tables", "none"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--boards N" in err[0]


def test_h2h_command_draws_its_running_estimate(tmp_path, capsys):
    png = tmp_path / "h2h.png"
    leduc = ROOT / "strategies" / "leduc.nolimit.2p.strategy"
    assert main(["eval", "h2h", str(leduc), str(leduc), "--png", str(png), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert doc["exact"] and doc["boards"] == 6
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
