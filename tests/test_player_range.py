"""The exact range of a translated player (solver/evaluation/player_range.py), LBR's range.

Oracle: Bayes over every hand, with each hand's likelihood of the real history computed
by brute force: the player's own HandWalk driven through every combination of its random
choices (each mapping draw's outcome and each own draw's abstract child), the weight of
a combination the product of the chosen probabilities, counted where the walk takes the
history's actions. No merging, no vectors: one hand, one walk at a time.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

import solver.play.policy as policy_mod
from poker.cards import deck_cards
from poker.game import Game, load_game
from poker.rng import Dealer
from poker.state import Action, ActionKind, State
from solver.evaluation.player_range import PlayerRange
from solver.play.policy import HandWalk, TranslatedPolicy
from solver.play.player import translated
from solver.strategy_io import open_strategy

STRATEGIES = Path(__file__).resolve().parent.parent / "strategies"


class _Choices:
    """Forces HandWalk's random choices: the k-th choice takes option ``prefix[k]``,
    later ones their first option with positive probability; every choice is recorded
    with its options' probabilities."""

    def __init__(self, prefix: list[int]) -> None:
        self.prefix = prefix
        self.calls: list[list[float]] = []
        self.weight = 1.0

    def choose(self, probs: list[float]) -> int:
        k = len(self.calls)
        self.calls.append(probs)
        i = self.prefix[k] if k < len(self.prefix) else next(j for j, p in enumerate(probs) if p > 0.0)
        self.weight *= probs[i]
        return i


def _brute_likelihood(
    monkeypatch: pytest.MonkeyPatch,
    pol: TranslatedPolicy,
    position: int,
    hole: tuple[int, ...],
    history: list[tuple[State, Action, tuple[int, ...]]],
) -> float:
    """P(the player at ``position`` holding ``hole`` takes its actions of ``history``,
    given the other seat's): the sum over every combination of the walk's choices."""
    current: list[_Choices] = []

    def pick(outcomes: list[tuple[int, float]], u: float) -> int:
        return outcomes[current[0].choose([p for _, p in outcomes])][0]

    def draw(probs: np.ndarray, u: float) -> int:
        return current[0].choose(probs.tolist())

    monkeypatch.setattr(policy_mod, "_pick", pick)
    monkeypatch.setattr(policy_mod, "_draw", draw)
    # every walk below holds the same cards: each street's bucket is the policy's own,
    # asked once (a bucket is a function of the cards alone)
    real_bucket, buckets = pol.bucket, {}

    def bucket(street: int, hole_: Sequence[int], board: Sequence[int]) -> int:
        key = (street, tuple(hole_), tuple(board))
        if key not in buckets:
            buckets[key] = real_bucket(street, hole_, board)
        return buckets[key]

    monkeypatch.setattr(pol, "bucket", bucket)

    def run(prefix: list[int]) -> tuple[float, list[list[float]]]:
        """One walk: its weight (0 where it leaves the history) and every choice it made."""
        script = _Choices(prefix)
        current[:] = [script]
        walk = HandWalk(pol, position, seed=0, hand=0)
        for state, action, board in history:
            if state.actor == position:
                took, _ = walk.decide(state, hole, board)
                if took != action:
                    return 0.0, script.calls
        return script.weight, script.calls

    def total(prefix: list[int], ran: tuple[float, list[list[float]]] | None = None) -> float:
        """The sum over every walk whose first choices are ``prefix``. ``ran``: the walk of
        ``prefix`` alone where already made; it is also the walk of ``prefix`` followed by
        its next choice's first option (later choices take their first option anyway),
        so that branch reuses it instead of walking it again."""
        weight, calls = run(prefix) if ran is None else ran
        if len(calls) <= len(prefix):
            return weight
        options = calls[len(prefix)]
        first = next(j for j, p in enumerate(options) if p > 0.0)
        return sum(total([*prefix, i], (weight, calls) if i == first else None)
                   for i, p in enumerate(options) if p > 0.0)

    try:
        return total([])
    finally:
        monkeypatch.undo()


def _other_seat_action(state: State, rng: random.Random) -> Action:
    """A random real action, off-tree sizes included (folds rare, raises small and few,
    so that hands go deep)."""
    lo, hi = state.min_raise_to, state.max_raise_to
    r = rng.random()
    if lo is None or hi is None or r < 0.7:
        return Action.fold() if state.can_fold() and r < 0.02 else Action.call()
    if r < 0.8:
        return Action.raise_to(lo)
    if r < 0.83:
        return Action.raise_to(hi)
    return Action.raise_to(rng.randint(lo, min(hi, lo + state.pot)))


def _random_history(
    game: Game, pol: TranslatedPolicy, position: int, seed: int
) -> tuple[tuple[int, ...], list[tuple[State, Action, tuple[int, ...]]], State]:
    """A real hand: the translated player at ``position`` plays through its own seeded
    walk, the other seat at random."""
    rng = random.Random(seed)
    deal = Dealer(game, seed).next_deal()
    walk = HandWalk(pol, position, seed=seed, hand=seed)
    state = State.new_hand(game, deal)
    history = []
    while state.actor is not None:
        board = deal.board_through(state.round)
        if state.actor == position:
            action, _ = walk.decide(state, deal.holes[position], board)
        else:
            action = _other_seat_action(state, rng)
        history.append((state, action, board))
        state = state.apply(action)
    return deal.holes[position], history, state


def _deep_histories(game: Game, pol: TranslatedPolicy, count: int, street: int, start: int):
    """The first ``count`` random hands from seed ``start`` on whose betting reaches
    ``street``: (position, history), the player's position alternating."""
    out = []
    seed = start
    while len(out) < count:
        position = len(out) % 2
        _, history, final = _random_history(game, pol, position, seed)
        if history[-1][0].round >= street:
            out.append((position, history))
        seed += 1
    return out


def _hands(game: Game) -> np.ndarray:
    deck = deck_cards(game.num_ranks, game.num_suits)
    return np.array(list(combinations(deck, game.num_hole_cards)), np.int64)


def _check_history(monkeypatch, game, pol, position, history, hands, every=1):
    """At every ``every``-th prefix, the range's weights equal the brute-force likelihood
    for every hand that misses the board, and the posterior is Bayes'."""
    rows = PlayerRange(pol, hands, position)
    checked = 0
    for k, (state, action, board) in enumerate(history):
        if k % every == 0 or k == len(history) - 1:
            got = rows.weights()
            want = np.zeros(len(hands))
            for i, h in enumerate(hands.tolist()):
                if not set(h) & set(board):
                    want[i] = _brute_likelihood(monkeypatch, pol, position, tuple(h), history[:k])
            live = ~np.isin(hands, board).any(axis=1)
            assert got[live] == pytest.approx(want[live], abs=1e-12, rel=1e-9), (k, state.betting_string())
            post, brute = got * live, want * live
            assert post / post.sum() == pytest.approx(brute / brute.sum(), abs=1e-12)
            checked += 1
        rows = rows.after(state, board, action)
    return checked


def test_leduc_range_is_the_brute_force_posterior_at_every_depth(monkeypatch):
    game = load_game("leduc.nolimit.2p")
    pol = translated(open_strategy(STRATEGIES / "leduc.nolimit.2p.strategy", game=game))
    depth = 0
    for position, history in _deep_histories(game, pol, 16, 1, 0):
        assert _check_history(monkeypatch, game, pol, position, history, _hands(game)) == len(history)
        depth = max(depth, len(history))
    assert depth >= 6


def test_short20_range_is_the_brute_force_posterior(monkeypatch):
    game = load_game("holdem.nolimit.2p.short20")
    pol = translated(open_strategy(STRATEGIES / "holdem.nolimit.2p.short20.strategy", game=game))
    for position, history in _deep_histories(game, pol, 4, 2, 100):
        assert _check_history(monkeypatch, game, pol, position, history, _hands(game), every=2) >= 3


def test_draws_persist_so_the_range_is_not_a_product_of_mixtures(monkeypatch):
    """A history where one mapping draw decides two of the player's later decisions: the
    exact likelihood differs from the product of the per-decision mixtures for some hand
    (the old LBR update), and the brute force sides with the exact one."""
    game = load_game("leduc.nolimit.2p")
    pol = translated(open_strategy(STRATEGIES / "leduc.nolimit.2p.strategy", game=game))
    hands = _hands(game)
    for seed in range(200):
        position = seed % 2
        hole, history, _ = _random_history(game, pol, position, 1000 + seed)
        own = [k for k, (s, _, _) in enumerate(history) if s.actor == position]
        if len(own) < 2:
            continue
        rows = PlayerRange(pol, hands, position)
        product = np.ones(len(hands))
        for state, action, board in history:
            if state.actor == position:
                r = policy_mod.range_query(pol, state, board)
                j = [(a.kind, a.amount) for a in r.actions].index((action.kind, action.amount))
                idx = {tuple(h): i for i, h in enumerate(r.hands.tolist())}
                product *= np.array([r.probs[idx[tuple(h)], j] if tuple(h) in idx else 0.0
                                     for h in hands.tolist()])
            rows = rows.after(state, board, action)
        got = rows.weights()
        board = history[-1][2]
        live = ~np.isin(hands, board).any(axis=1)
        if np.allclose(got[live], product[live], atol=1e-9):
            continue
        i = int(np.argmax(np.abs(got - product) * live))
        brute = _brute_likelihood(monkeypatch, pol, position, tuple(hands[i].tolist()), history)
        assert got[i] == pytest.approx(brute, abs=1e-12)
        assert abs(product[i] - brute) > 1e-6
        return
    pytest.fail("no history in 200 where the draws' persistence matters")


def test_fold_probability_is_bayes(monkeypatch):
    """P(the player folds right after the other seat's raise) over the range equals the
    brute-force ratio of the likelihoods with and without the fold."""
    game = load_game("leduc.nolimit.2p")
    pol = translated(open_strategy(STRATEGIES / "leduc.nolimit.2p.strategy", game=game))
    hands = _hands(game)
    rng = random.Random(5)
    checked = 0
    for position, history in _deep_histories(game, pol, 6, 1, 500):
        rows = PlayerRange(pol, hands, position)
        for k, (state, action, board) in enumerate(history):
            if state.actor != position and state.min_raise_to is not None:
                raise_ = Action.raise_to(rng.randint(state.min_raise_to, state.max_raise_to))
                prior = (~np.isin(hands, board).any(axis=1)).astype(float)
                got = rows.fold_probability(state, board, raise_, prior)
                base = [*history[:k], (state, raise_, board)]
                folded = [*base, (state.apply(raise_), Action.fold(), board)]
                num = den = 0.0
                for i, h in enumerate(hands.tolist()):
                    if prior[i]:
                        den += _brute_likelihood(monkeypatch, pol, position, tuple(h), base)
                        num += _brute_likelihood(monkeypatch, pol, position, tuple(h), folded)
                assert got == pytest.approx(num / den, abs=1e-12)
                checked += 1
            rows = rows.after(state, board, action)
    assert checked >= 6


def test_an_action_no_hand_takes_empties_the_range():
    game = load_game("leduc.nolimit.2p")
    pol = translated(open_strategy(STRATEGIES / "leduc.nolimit.2p.strategy", game=game))
    rows = PlayerRange(pol, _hands(game), 0)
    state = State.new_hand(game)
    assert state.actor == 0
    moves = rows.moves(state, ())
    taken = set(moves)
    never = next(Action.raise_to(t) for t in range(state.min_raise_to, state.max_raise_to + 1)
                 if Action.raise_to(t) not in taken)
    assert not rows.after(state, (), never).weights().any()
    total = sum(m.weights() for m in moves.values())
    assert total == pytest.approx(np.ones(len(total)))
    assert ActionKind.CALL in {a.kind for a in moves}
