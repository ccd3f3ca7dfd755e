"""Exact head-to-head value of two translated players (solver.evaluation.head_to_head) and
``pokerbot eval h2h``.

Oracles: a brute force that plays out every deal with both players' own HandWalks, their
random choices (mapping outcomes and their own action draws) replaced by enumerating
every outcome with its probability: a recursive expectation over the real game, one
hand at a time, with nothing of the mapping-state machinery. On the 20-card hold'em a
board holds 14,280 deals, so there the same enumeration runs hand by hand for each player
and every pair of hands is summed with dense matrices (_brute_board). The O(n) terminal
sums (solver.evaluation._terminal) are checked against the dense matrices they replace,
and the walk over many boards at once against a walk of one board at a time (the
module's former path, kept here). The 95% interval of sampled boards is checked by its
coverage: thousands of seeded draws of boards from the stored value of every board.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
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
from solver.chance import lossless_bucket, lossless_indexer
from solver.evaluation._terminal import PairValues
import solver.evaluation.head_to_head as h2h_mod
from solver.evaluation.head_to_head import (ALL_BOARDS_MAX, H2HResult, board_at, all_boards, board_value,
                                            head_to_head, n_boards)
from solver.play.policy import HandWalk, TranslatedPolicy
from solver.problem import make_problem
from solver.evaluation.real_response import TranslatedPlayer, real_self_play_value
from solver.play.player import translated
from solver.strategy_io import open_strategy, save_strategy
from solver.tree import DECISION, build_tree, table_offsets

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
    """Forces HandWalk's random choices: the first ones to a given sequence of outcome
    indices (``queue``), every later one to its first outcome of positive probability,
    recorded in ``auto`` with its outcomes' probabilities (what is left to enumerate)."""

    def __init__(self) -> None:
        self.queue: list[int] = []
        self.auto: list[tuple[list[float], int]] = []
        self.stats = {"mapped": 0, "fallback": 0, "lost": 0}


def _install(monkeypatch: pytest.MonkeyPatch, script: _Script) -> None:
    def choose(probs: list[float]) -> int:
        if script.queue:
            return script.queue.pop(0)
        first = next(i for i, p in enumerate(probs) if p > 0.0)
        script.auto.append((probs, first))
        return first

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
    draw) enumerated with its outcomes' probabilities. Each run of the decision is one
    outcome (the choices after ``prefix`` taken by default); every other outcome of those
    default choices is a run of its own."""
    w = walk.copy()
    script.queue, script.auto = list(prefix), []
    action, _ = w.decide(state, hole, board)
    defaults = script.auto  # the runs below record into lists of their own
    out = []
    path, p_path = list(prefix), prob
    for options, chosen in defaults:
        for i, p in enumerate(options):
            if p > 0.0 and i != chosen:
                out += _decisions(script, walk, state, hole, board, [*path, i], p_path * p)
        path.append(chosen)
        p_path *= options[chosen]
    out.append((p_path, action, w))
    return out


def _brute_h2h(game: Game, first: TranslatedPolicy, second: TranslatedPolicy, script: _Script) -> float:
    """Seat 0's expected chips, ``first`` in position 0, over every ordered deal.

    A walk decides from its own cards, the board so far and the public actions, and
    :func:`_decisions` never changes the walk it starts from (it decides on copies), so
    the decisions of one walk (a player's start, or a walk after its earlier choices)
    with the same cards at the same history are the same in every deal: they are
    enumerated once and reused by each deal that reaches them."""
    deck = deck_cards(game.num_ranks, game.num_suits)
    k = game.num_hole_cards
    sizes = game.num_board_cards
    total, deals = 0.0, 0
    starts = (HandWalk(first, 0, seed=0, hand=0), HandWalk(second, 1, seed=0, hand=0))
    # (id of the walk deciding, its cards, the board it sees, the history) -> its decisions;
    # each walk in a key stays alive in this table or in ``starts``, so ids are not reused
    known: dict[tuple[Any, ...], list[tuple[float, Any, HandWalk]]] = {}

    def value(state: State, walks: tuple[HandWalk, HandWalk], holes: Any, board: tuple[int, ...]) -> float:
        if state.actor is None:
            for w in walks:
                script.stats["fallback"] += w.counts.fallback
                script.stats["lost"] += w.lost
            return state.values()[0]
        actor = state.actor
        seen = board[: game.board_cards_through(state.round)]
        key = (id(walks[actor]), holes[actor], seen, state.history)
        if key not in known:
            known[key] = _decisions(script, walks[actor], state, holes[actor], seen, [], 1.0)
        v = 0.0
        for p, action, w in known[key]:
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
                total += value(state, starts, (h0, h1), tuple(board))
                deals += 1
    return total / deals


#: One particle of :func:`_brute_board`: a hand's index, the probability of the player's
#: own random choices so far with it, and its walk after them.
_Particle = tuple[int, float, HandWalk]


def _brute_board(game: Game, first: TranslatedPolicy, second: TranslatedPolicy, board: tuple[int, ...],
                 script: _Script) -> float:
    """Seat 0's expected chips on the final ``board`` (dealing order) with ``first`` in
    position 0: the mean over every deal of two disjoint hands that miss the board of the
    expectation over both players' random choices.

    A player decides from its own cards and the public actions alone, with draws of its
    own, so in the deal (h0, h1) a history has probability P0(history | h0) *
    P1(history | h1). Each player is played hand by hand: one HandWalk per hand and per
    outcome of its random choices so far (:func:`_decisions`, never merged), the public
    history branching on every real action some hand takes. At a terminal the products
    are summed over every pair of hands with the dense matrices of :func:`_dense`."""
    rest = [c for c in deck_cards(game.num_ranks, game.num_suits) if c not in board]
    hands = list(itertools.combinations(rest, game.num_hole_cards))
    consistent, showdown = _dense(np.array(hands), board)
    n = len(hands)

    def value(state: State, particles: tuple[list[_Particle], list[_Particle]]) -> float:
        if state.actor is None:
            reach = (np.zeros(n), np.zeros(n))
            for seat in (0, 1):
                for h, p, w in particles[seat]:
                    reach[seat][h] += p
                    script.stats["fallback"] += w.counts.fallback
                    script.stats["lost"] += w.lost
            spent = state.spent
            if state.folded[0]:
                return -spent[0] * float(reach[0] @ consistent @ reach[1])
            if state.folded[1]:
                return spent[1] * float(reach[0] @ consistent @ reach[1])
            assert spent[0] == spent[1]  # equal stacks: both have put in the same at a showdown
            return spent[0] * float(reach[0] @ showdown @ reach[1])
        actor = state.actor
        seen = board[: game.board_cards_through(state.round)]
        by_action: dict[Any, list[_Particle]] = {}
        for h, p, w in particles[actor]:
            for q, action, after in _decisions(script, w, state, hands[h], seen, [], p):
                by_action.setdefault(action, []).append((h, q, after))
        total = 0.0
        for action, mine in by_action.items():
            total += value(state.apply(action), (mine, particles[1]) if actor == 0 else (particles[0], mine))
        return total

    start = ([(h, 1.0, HandWalk(first, 0, seed=0, hand=0)) for h in range(n)],
             [(h, 1.0, HandWalk(second, 1, seed=0, hand=0)) for h in range(n)])
    return value(State.new_hand(game), start) / float(consistent.sum())


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
    assert all(board_at(game, i) == bd for i, bd in enumerate(all_boards(game)))
    short = load_game("holdem.nolimit.2p.short20")
    assert n_boards(short) == 20 * 19 * 18
    assert [board_at(short, i) for i in (0, 1, 6839)] == [all_boards(short)[i] for i in (0, 1, 6839)]
    a = _random_policy(game, "1p,a", seed=1)
    b = _random_policy(game, "0.5p,1p,2p,a", seed=2)
    full = head_to_head(a, b, game)
    assert head_to_head(a, b, game, boards=6).mbb_per_game == pytest.approx(full.mbb_per_game, abs=1e-12)
    part = head_to_head(a, b, game, boards=3, seed=7)
    assert not part.exact and part.boards == 3 and part.boards_total == 6
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


# ---------------------------------------------------------------- every board of the 20-card game

#: Seeded draws of sampled boards in the coverage test, and the boards of each. The
#: interval covers about 94% of the time here (1.96 standard errors of 30 boards fall a
#: little short of 95%); 2,000 draws measure that to about 0.5% (one standard error), so
#: the band holds it and rejects a 90% or a 99% interval passed off as 95%.
DRAWS, DRAW_BOARDS = 2000, 30
COVERAGE_BAND = (0.92, 0.98)


def _coarse_policy(game: Game, betting: str, seed: int, buckets: int = 5) -> TranslatedPolicy:
    """A random strategy over ``betting`` (every action at least 0.05 before normalizing)
    with ``buckets`` buckets a street: the lossless class of the cards modulo ``buckets``,
    hand by hand and batched alike. Lossless tables of the 20-card game run to tens of
    millions of entries ('1p,a'); these stay small and still depend on the cards."""
    tree = build_tree(game, betting)
    offset, size = table_offsets(tree, [buckets] * game.num_rounds)
    table = np.random.default_rng(seed).uniform(0.05, 1.0, size)
    indexer, per_street = lossless_indexer(game)
    known: dict[tuple[Any, ...], int] = {}

    def bucket(street: int, hole: Any, board: Any) -> int:
        # remembered: the brute force asks it again for each walk of the same cards
        key = (street, tuple(hole), tuple(board))
        if key not in known:
            known[key] = lossless_bucket(game, street, hole, board) % buckets
        return known[key]

    return TranslatedPolicy(
        tree, offset, table, bucket,
        bucket_batch=lambda street, cards: indexer.index_batch(cards, per_street[street]) % buckets,
    )


@pytest.fixture(scope="module")
def short20_every_board() -> tuple[TranslatedPolicy, TranslatedPolicy, H2HResult]:
    """A (all-in or nothing) against B (pot raises preflop, then all-in or nothing) on the
    20-card hold'em, and head_to_head over every one of its 6,840 final boards. B's
    preflop raises are off A's tree (randomized mapping, fallbacks, lost walks); the small
    trees keep every board, and the brute force of a few, to seconds."""
    game = load_game("holdem.nolimit.2p.short20")
    a, b = _coarse_policy(game, "a", seed=1), _coarse_policy(game, "1p,a;a", seed=2)
    every = head_to_head(a, b, game)
    assert every.exact and every.boards == len(every.board_values) == n_boards(game) == 6840
    return a, b, every


def _served(values: dict[tuple[int, ...], float]) -> Callable[..., Iterator[tuple[float, float, int]]]:
    """A stand-in for head_to_head's evaluation of the chosen boards (``evaluate_boards``) that
    serves stored board values: ``(v, -v, 0)`` makes a board's value ``(v - (-v)) / 2``,
    ``v`` exactly. The draw of the boards and the interval stay head_to_head's own."""

    def evaluate(work: Any, prepare: Any, chosen: list[tuple[int, ...]], jobs: int,
                 **_: Any) -> Iterator[tuple[float, float, int]]:
        for board in chosen:
            yield values[board], -values[board], 0

    return evaluate


def _covering(centre: np.ndarray, half: np.ndarray, truth: float) -> float:
    """The share of the intervals ``centre +- half`` that hold ``truth``."""
    return float(np.mean(np.abs(centre - truth) <= half))


def test_sampled_interval_covers_the_value_of_every_board(short20_every_board, monkeypatch):
    """The 95% interval of sampled boards holds the value of every board 92-98% of the
    time. Each of 2,000 seeded draws of 30 boards is head_to_head's own (its draw of the
    boards, its interval), each board's value served from the run over every board
    instead of walked again; the same band rejects intervals too narrow, too wide or off
    centre."""
    a, b, every = short20_every_board
    game = a.game
    truth = every.mbb_per_game
    walked = head_to_head(a, b, game, boards=DRAW_BOARDS, seed=0)
    monkeypatch.setattr(h2h_mod, "evaluate_boards", _served(dict(zip(all_boards(game), every.board_values))))
    draws = [head_to_head(a, b, game, boards=DRAW_BOARDS, seed=s) for s in range(DRAWS)]
    # the stored values are what walking the drawn boards again gives
    assert draws[0].board_values == pytest.approx(walked.board_values, rel=1e-9, abs=1e-12)
    assert draws[0].ci95 == pytest.approx(walked.ci95, rel=1e-9)
    assert all(not d.exact and d.boards == DRAW_BOARDS for d in draws)
    centre = np.array([d.mbb_per_game for d in draws])
    lo, hi = np.array([d.ci95 for d in draws]).T
    coverage = float(np.mean((lo <= truth) & (truth <= hi)))
    assert COVERAGE_BAND[0] <= coverage <= COVERAGE_BAND[1], coverage
    # unbiased: the mean of the independent draws is near the value of every board
    assert abs(centre.mean() - truth) <= 4.0 * centre.std(ddof=1) / np.sqrt(DRAWS)

    # the band fails wrong intervals over the same draws: half as wide, a 90% or a 99%
    # interval called 95%, twice as wide, and centred one standard error off
    half = (hi - lo) / 2.0
    for wrong in (half / 2.0, half * 1.645 / 1.96, half * 2.576 / 1.96, half * 2.0):
        assert not COVERAGE_BAND[0] <= _covering(centre, wrong, truth) <= COVERAGE_BAND[1]
    assert not COVERAGE_BAND[0] <= _covering(centre + half / 1.96, half, truth) <= COVERAGE_BAND[1]


def test_board_values_equal_brute_force_short20(short20_every_board, monkeypatch):
    """Three seeded boards of the 20-card hold'em: each board's value in the run over every
    board is the brute force's, every deal and every random choice of both players
    enumerated (:func:`_brute_board`), both seatings."""
    a, b, every = short20_every_board
    game = a.game
    script = _Script()
    _install(monkeypatch, script)
    boards = all_boards(game)
    brute = []
    for i in np.random.default_rng(3).choice(len(boards), size=3, replace=False).tolist():
        ab = _brute_board(game, a, b, boards[i], script)
        ba = _brute_board(game, b, a, boards[i], script)
        brute.append((ab - ba) / 2)
        assert every.board_values[i] == pytest.approx(brute[-1], abs=1e-9)
    # the boards' values differ, so each match is board for board
    assert min(abs(x - y) for x, y in itertools.combinations(brute, 2)) > 1e-3
    # the translation randomized, and both fallbacks were exercised
    assert script.stats["mapped"] > 0 and script.stats["fallback"] > 0 and script.stats["lost"] > 0


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
    a, b = translated(f), translated(f, mapping="geometric", purify=0.1)
    game = a.game
    res = head_to_head(a, b, game, boards=5, seed=11)
    rng = np.random.default_rng(11)  # head_to_head's draw of the boards
    boards = [board_at(game, int(i)) for i in rng.choice(n_boards(game), size=5, replace=False)]
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
        # a bucket's probabilities, asked once for the rows that share it
        of = {x: pol.probabilities(node, x) for x in set(b.tolist())}
        expect = np.stack([of[x] for x in b.tolist()])
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
        gots, expects = [], []
        for node in np.flatnonzero(p.tree.kind == DECISION).tolist():
            expect = pol.rows(node, buckets[p.tree.street[node]])
            got = np.zeros((expect.shape[1], expect.shape[0]))
            for i, column in player._moves(node):
                got[i] = column
            gots.append(got.T.ravel())
            expects.append(expect.ravel())
        # every node's rows at once: the same bound, entry by entry
        np.testing.assert_allclose(np.concatenate(gots), np.concatenate(expects), rtol=1e-15, atol=0)


def test_own_moves_checks_the_probabilities():
    game = load_game("leduc.limit.2p")
    pol = _random_policy(game, None)
    player = TranslatedPlayer(pol, [np.zeros(3, dtype=np.int64)] * game.num_rounds)
    state = State.new_hand(game)
    moves = player.own_moves({0: np.ones(3)}, state)
    assert sum(r for m in moves.values() for r in m.values()) == pytest.approx(np.ones(3), abs=1e-12)
    broken = player.probs(0) * np.array([[1.0], [1.0], [0.9]])  # one row sums to 0.9
    player._columns[0] = [(i, np.ascontiguousarray(broken[:, i])) for i in range(broken.shape[1])]
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
    expect = head_to_head(translated(open_strategy(fa)), translated(open_strategy(fb)), game)
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
