"""Exact real-game exploitability of a translated player.

A blueprint solved on an abstract betting tree is played in the real game through action
translation (:class:`solver.play.policy.TranslatedPolicy`): an opponent's real raise is mapped
to the abstract sizes by the randomized pseudo-harmonic mapping of Ganzfried & Sandholm
2013 ("Action translation in extensive-form games with large action spaces: axioms,
paradoxes, and the pseudo-harmonic mapping", IJCAI; or the paper's "nearest" and
"geometric" baselines, :mod:`abstraction.translation`), and the player's abstract actions
are sized from the real pot. :func:`real_exploitability` measures that player *in the real
game*: its best responder may bet every legal amount (every integer raise-to in
``[min_raise_to, max_raise_to]``), sees its own cards and the board, and has perfect
recall. Nothing is sampled and no raise size of the responder is left out.

What is computed exactly
------------------------
The translated player is a behaviour strategy of the real game extended by a private
random state, the outcome of each mapping draw; the responder never sees it. The walk
goes over the REAL public tree (every legal action of the responder, and every real
action the player takes with positive probability) and carries, for the player, a set
of *mapping states*: (abstract node, reach vector over the player's (board, hand)
rows). A mapping state's reach is the probability, for each of the player's hands, that
the player took the real actions so far *and* the translation's draws put it at that
abstract node. At a responder action each mapping state splits by the mapping
probabilities (:meth:`TranslatedPolicy.translate`); at the player's decision the
probability of a real action is the sum, over the abstract children that
:meth:`TranslatedPolicy.real_action` turns into it, of the blueprint's probability; states
at the same abstract node are merged (their futures are identical). The sum over states
is the player's real reach, so the responder's counterfactual values are exact and the
best response is the usual backward induction (Johanson et al. 2011, the vector form of
:mod:`solver.evaluation.best_response`): the maximum over actions, per (board, hand), at the
responder's nodes; sums at the player's; card removal at the terminals; chance uniform
over the deals.

The fallback rules are those of :class:`solver.play.policy.HandWalk`, applied per mapping
state, so the strategy evaluated is the one the player plays: a state whose abstract
node is not in step with the real decision of the player checks or calls with
probability 1 (its node stays, and is in step again after the chance node the real
street reaches); a responder action where the state's node is not in step makes that
state *lost*: it checks or calls for the rest of the hand. Every one of these rules is a
deterministic function of (abstract node, real state), so nothing about them prevents an
exact evaluation. The one difference from a match is where the draws come from: a match
keys each draw by (seed, hand, place) (:func:`abstraction.translation.uniform`); here
each draw is an independent random choice with the mapping's probabilities, which is what
those keyed numbers stand for.

Each player decision checks that the player's real action probabilities sum to one for
every hand (the children's reach adds up to the node's).

Cost: one walk per seat of the responder over the public tree with vectors of (board,
hand) rows (in leduc.nolimit.2p: 6 hands on the first street, 30 (board, hand) pairs on
the second); subtrees reached again with the same real betting state and the same
mapping states (same nodes, bit-identical reach) are memoized, which is exact. In
leduc.nolimit.2p the full real betting tree has 900,305 nodes; the walks visit only
those the player reaches with positive probability (an action it never takes is worth
nothing to the responder's counterfactual values): 6,000 to 25,000 nodes for both seats
with the abstractions of ``bench/translation.py``, a second or two.

exploitability = (BR_0 + BR_1) / 2 chips per game, BR_i the value of a best responder in
seat i against the translated player in the other seat (the convention of
:func:`solver.evaluation.best_response.exploitability`); mbb/g = 1000 * exploitability / big blind
(:attr:`poker.game.Game.big_blind`, the largest blind: the ante of 1 in Leduc).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
from numba import njit

from poker.cards import deck_cards
from poker.evaluator import evaluate
from poker.game import Game
from poker.state import Action, State

from ..chance import lossless_bucket, raw_lossless_bucket
from ..play.policy import LOST, BucketFn, TranslatedPolicy, after_opponent
from ..strategy import Strategy

__all__ = [
    "RealResult",
    "TranslatedPlayer",
    "real_best_response_value",
    "real_exploitability",
    "real_self_play_value",
    "real_tree_size",
    "translated_policy",
]

_TOL = 1e-9

MappingStates = dict[int, np.ndarray]


@dataclass(frozen=True)
class RealResult:
    """Real-game exploitability of a translated player.

    ``exploitability``: (BR_0 + BR_1) / 2 in chips per game; ``mbb_per_game``: the same in
    milli-big-blinds; ``br``: (BR_0, BR_1), the value of a real-game best responder in
    seat i against the translated player in the other seat; ``value``: seat 0's value when
    the translated player plays both seats (None when not asked); ``nodes``: real public
    nodes the two best-response walks evaluated (a memo hit is not counted again);
    ``memo_hits``: subtrees answered from the memo; ``tree_nodes``: nodes of the full real
    betting tree, for scale (None when not counted); ``seconds``: wall time.
    """

    game: str
    mapping: str
    exploitability: float
    mbb_per_game: float
    br: tuple[float, float]
    value: float | None
    nodes: int
    memo_hits: int
    tree_nodes: int | None
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {
            "game": self.game,
            "mapping": self.mapping,
            "exploitability": self.exploitability,
            "mbb_per_game": self.mbb_per_game,
            "br": list(self.br),
            "value": self.value,
            "nodes": self.nodes,
            "memo_hits": self.memo_hits,
            "tree_nodes": self.tree_nodes,
            "seconds": self.seconds,
        }


class _Cards:
    """The private-card layer: per street, the rows (board through the street, hand), the
    map from a street's rows to the previous street's, and the terminal matrices."""

    def __init__(self, game: Game) -> None:
        if game.num_players != 2:
            raise ValueError(f"real best response is for 2 players, the game has {game.num_players}")
        deck = deck_cards(game.num_ranks, game.num_suits)
        self.hands: list[tuple[int, ...]] = list(combinations(deck, game.num_hole_cards))
        self.boards: list[list[tuple[int, ...]]] = []
        self.rows: list[list[tuple[int, int]]] = []  # (board index, hand index)
        self.parent: list[np.ndarray | None] = []  # row of street s -> row of street s - 1
        prev_boards: list[tuple[int, ...]] = [()]
        prev_rows: dict[tuple[int, int], int] = {}
        for s in range(game.num_rounds):
            boards: list[tuple[int, ...]] = []
            origin: list[int] = []  # index of the board's prefix among the previous boards
            for i, b in enumerate(prev_boards):
                rest = [c for c in deck if c not in b]
                for new in combinations(rest, game.num_board_cards[s]):
                    boards.append(b + new)
                    origin.append(i)
            rows = [
                (bi, hi)
                for bi, b in enumerate(boards)
                for hi, h in enumerate(self.hands)
                if not set(b) & set(h)
            ]
            if s == 0:
                self.parent.append(None)
            else:
                self.parent.append(np.array([prev_rows[(origin[bi], hi)] for bi, hi in rows]))
            self.boards.append(boards)
            self.rows.append(rows)
            prev_boards, prev_rows = boards, {r: k for k, r in enumerate(rows)}
        # terminal matrices: consistent[s][r, q] = 1 when the responder's row r and the
        # player's row q share the board and their hands are disjoint; showdown[r, q] the
        # sign of the responder's hand against the player's on the last street's board.
        self.consistent: list[np.ndarray] = []
        self.weight: list[float] = []
        for s in range(game.num_rounds):
            rows = self.rows[s]
            n = len(rows)
            c = np.zeros((n, n))
            for i, (bi, hi) in enumerate(rows):
                h = set(self.hands[hi])
                for j, (bj, hj) in enumerate(rows):
                    if bi == bj and not h & set(self.hands[hj]):
                        c[i, j] = 1.0
            self.consistent.append(c)
            # every consistent (responder row, player row) pair is equally likely
            self.weight.append(1.0 / c.sum())
        last = game.num_rounds - 1
        strength = [
            evaluate(self.hands[hi] + self.boards[last][bi]) for bi, hi in self.rows[last]
        ]
        st = np.array(strength)
        self.showdown = np.sign(st[:, None] - st[None, :]) * self.consistent[last]

    def n_rows(self, street: int) -> int:
        """Rows of ``street``."""
        return len(self.rows[street])

    def expand(self, v: np.ndarray, street: int, to: int) -> np.ndarray:
        """A vector over ``street``'s rows carried to ``to``'s (the board dealt between)."""
        for s in range(street + 1, to + 1):
            parent = self.parent[s]
            assert parent is not None
            v = v[parent]
        return v

    def contract(self, v: np.ndarray, street: int, to: int) -> np.ndarray:
        """Values over ``street``'s rows summed back to the rows of the earlier ``to``."""
        for s in range(street, to, -1):
            parent = self.parent[s]
            assert parent is not None
            v = np.bincount(parent, weights=v, minlength=self.n_rows(s - 1))
        return v


def _state_key(state: State) -> tuple[Any, ...]:
    """What a real state's future depends on: the chips, folds, the raise floor, who acts,
    the round and the kinds of its actions so far (the round closes by counting them)."""
    return (
        state.round,
        state.spent,
        state.folded,
        state.raise_floor,
        state.actor,
        tuple((a.actor, a.action.kind) for a in state.round_actions),
    )


def _legal_actions(state: State) -> Iterator[Action]:
    """Every legal real action: fold (when it is not free), call, every raise-to."""
    if state.can_fold():
        yield Action.fold()
    yield Action.call()
    lo, hi = state.min_raise_to, state.max_raise_to
    if lo is not None and hi is not None:
        for to in range(lo, hi + 1):
            yield Action.raise_to(to)


class TranslatedPlayer:
    """A translated player's rules over rows of private hands, as exact evaluations walk
    them: ``buckets[s]`` holds the bucket of each row on street ``s``; the player's
    mapping states (abstract node -> reach over the rows) split at the other seat's
    actions (:func:`solver.play.policy.after_opponent`) and by its own real actions
    (:meth:`own_moves`), with the fallbacks of :class:`solver.play.policy.HandWalk`."""

    def __init__(self, policy: TranslatedPolicy, buckets: list[np.ndarray]) -> None:
        self.policy = policy
        self.buckets = buckets
        self._probs: dict[int, np.ndarray] = {}
        self._columns: dict[int, list[tuple[int, np.ndarray]]] = {}

    def probs(self, node: int) -> np.ndarray:
        """Blueprint probabilities at decision ``node`` for every row of its street
        (rows x children): :meth:`TranslatedPolicy.rows`, the very numbers of
        :meth:`TranslatedPolicy.probabilities` (purification included)."""
        p = self._probs.get(node)
        if p is None:
            pol = self.policy
            p = self._probs[node] = pol.rows(node, self.buckets[pol._street[node]])
        return p

    def _moves(self, node: int) -> list[tuple[int, np.ndarray]]:
        """(child index, its probability over the rows) for the children of ``node`` some
        row plays, each column contiguous: a column of zeros leads nowhere."""
        cols = self._columns.get(node)
        if cols is None:
            by_child = np.ascontiguousarray(self.probs(node).T)
            cols = self._columns[node] = [(i, by_child[i]) for i in np.flatnonzero(by_child.any(axis=1)).tolist()]
        return cols

    def after_opponent(self, ms: MappingStates, state: State, action: Action) -> MappingStates:
        """The player's mapping states once the other seat played ``action`` at ``state``
        (:func:`solver.play.policy.after_opponent`)."""
        return after_opponent(self.policy, ms, state, action)

    def own_moves(self, ms: MappingStates, state: State) -> dict[Action, MappingStates]:
        """The player's real actions at ``state`` with the mapping states each leads to;
        checks that the real action probabilities sum to one for every row."""
        pol = self.policy
        out: dict[Action, MappingStates] = {}
        for key, reach in ms.items():
            if key != LOST:
                node = pol.sync(key, state)
                if pol.in_step(node, state):
                    first = pol._child[node]
                    for i, column in self._moves(node):
                        r = reach * column
                        if r.any():
                            a = pol.real_action(first + i, state)
                            _add(out.setdefault(a, {}), first + i, r)
                    continue
                _add(out.setdefault(Action.call(), {}), node, reach)  # fallback: call
            else:
                _add(out.setdefault(Action.call(), {}), LOST, reach)
        before = sum(ms.values())
        after = sum((r for m in out.values() for r in m.values()), np.zeros_like(before))
        # np.allclose's test in one compiled pass: np.allclose costs tens of microseconds a call
        if not _all_close(before, after, _TOL):
            raise AssertionError(
                f"the player's real action probabilities do not sum to 1 at "
                f"{state.betting_string()!r}: {before} vs {after}"
            )
        return out


@njit(cache=True)
def _all_close(before: np.ndarray, after: np.ndarray, tol: float) -> bool:
    """``np.allclose(before, after, rtol=tol, atol=tol)`` for finite 1-D vectors (a NaN
    fails, as there)."""
    for i in range(before.shape[0]):
        if not abs(before[i] - after[i]) <= tol + tol * abs(after[i]):
            return False
    return True


class _Walker(TranslatedPlayer):
    """The walks over the real game for one translated policy."""

    def __init__(self, policy: TranslatedPolicy, game: Game, memo: bool = True) -> None:
        if game != policy.game:
            raise ValueError("the policy was made for a different game")
        cards = _Cards(game)
        # bucket of every (board, hand) row, per street, as the player computes it
        super().__init__(policy, [
            np.array([policy.bucket(s, cards.hands[hi], cards.boards[s][bi]) for bi, hi in cards.rows[s]])
            for s in range(game.num_rounds)
        ])
        self.game = game
        self.cards = cards
        self.use_memo = memo
        self.nodes = 0
        self.memo_hits = 0
        self.memo: dict[tuple[Any, ...], np.ndarray] = {}
        self.last = game.num_rounds - 1

    # -- values

    def terminal(self, state: State, street: int, ms: MappingStates, seat: int) -> np.ndarray:
        """Counterfactual values of the responder in ``seat`` at a finished hand."""
        reach = sum(ms.values())
        c = self.cards
        w = c.weight[street]
        spent = state.spent
        if state.folded[seat]:
            return -spent[seat] * w * (c.consistent[street] @ reach)
        if state.folded[1 - seat]:
            return spent[1 - seat] * w * (c.consistent[street] @ reach)
        assert street == self.last
        return min(spent) * w * (c.showdown @ reach)

    def br(self, state: State, street: int, ms: MappingStates, seat: int) -> np.ndarray:
        """Values over ``street``'s rows of the best responder in ``seat`` against the
        player's mapping states ``ms`` at the real ``state``."""
        if state.round != street:
            ms = {k: self.cards.expand(r, street, state.round) for k, r in ms.items()}
            v = self.br(state, state.round, ms, seat)
            return self.cards.contract(v, state.round, street)
        key: tuple[Any, ...] | None = None
        if self.use_memo:
            key = (_state_key(state), tuple(sorted((k, r.tobytes()) for k, r in ms.items())))
            hit = self.memo.get(key)
            if hit is not None:
                self.memo_hits += 1
                return hit
        self.nodes += 1
        if state.actor is None:
            v = self.terminal(state, street, ms, seat)
        elif state.actor == seat:
            v = None
            for a in _legal_actions(state):
                child = self.after_opponent(ms, state, a)
                w = self.br(state.apply(a), street, child, seat)
                v = w if v is None else np.maximum(v, w)
            assert v is not None
        else:
            v = np.zeros(self.cards.n_rows(street))
            for a, child in self.own_moves(ms, state).items():
                v = v + self.br(state.apply(a), street, child, seat)
        if key is not None:
            self.memo[key] = v
        return v

    def best_response(self, seat: int) -> float:
        """Value (chips per game) of the real best responder in ``seat``."""
        if seat not in (0, 1):
            raise ValueError(f"seat {seat} is not 0 or 1")
        self.memo.clear()
        root = State.new_hand(self.game)
        ms = {0: np.ones(self.cards.n_rows(0))}
        return float(self.br(root, 0, ms, seat).sum())

    def self_play(self, state: State, street: int, ms: tuple[MappingStates, MappingStates]) -> float:
        """Seat 0's expected value (chips per game) when the translated player plays both
        seats, from ``state`` with both seats' mapping states."""
        if state.round != street:
            ms = tuple(
                {k: self.cards.expand(r, street, state.round) for k, r in m.items()} for m in ms
            )  # type: ignore[assignment]
            street = state.round
        if state.actor is None:
            r0, r1 = sum(ms[0].values()), sum(ms[1].values())
            c = self.cards
            w = c.weight[street]
            spent = state.spent
            if state.folded[0]:
                return -spent[0] * w * float(r0 @ c.consistent[street] @ r1)
            if state.folded[1]:
                return spent[1] * w * float(r0 @ c.consistent[street] @ r1)
            return min(spent) * w * float(r0 @ c.showdown @ r1)
        actor = state.actor
        total = 0.0
        for a, mine in self.own_moves(ms[actor], state).items():
            theirs = self.after_opponent(ms[1 - actor], state, a)
            pair = (mine, theirs) if actor == 0 else (theirs, mine)
            total += self.self_play(state.apply(a), street, pair)
        return float(total)


def _add(ms: MappingStates, key: int, reach: np.ndarray) -> None:
    have = ms.get(key)
    ms[key] = reach if have is None else have + reach


def translated_policy(
    strategy: Strategy, mapping: str = "pseudo_harmonic", purify: float = 0.0
) -> TranslatedPolicy:
    """The translated player of a solver's ``strategy`` (lossless buckets, or the card
    abstraction its problem was built with), as :func:`solver.play.player.translated`
    makes it from a file."""
    p = strategy.problem
    game = p.game
    bucket: BucketFn
    if p.abstraction is not None:
        ab = p.abstraction
        bucket = lambda street, hole, board: ab.lookup(hole, board, street)  # noqa: E731
    elif p.chance.lossless and p.chance.numbering == "raw":  # a strategy file older than suit classes
        bucket = lambda street, hole, board: raw_lossless_bucket(game, street, hole, board)  # noqa: E731
    elif p.chance.lossless:
        bucket = lambda street, hole, board: lossless_bucket(game, street, hole, board)  # noqa: E731
    else:
        raise ValueError("the strategy's buckets come from a bucket function this cannot rebuild")
    return TranslatedPolicy(p.tree, p.offset, strategy.policy, bucket, mapping=mapping, purify=purify)


def real_best_response_value(policy: TranslatedPolicy, seat: int, game: Game | None = None) -> float:
    """Value (chips per game) of the real-game best responder in ``seat`` against
    ``policy`` played by the translated player in the other seat (see the module
    docstring); ``game`` defaults to the policy's."""
    return _Walker(policy, game or policy.game).best_response(seat)


def real_self_play_value(policy: TranslatedPolicy, game: Game | None = None) -> float:
    """Seat 0's value (chips per game) when the translated ``policy`` plays both seats in
    the real game (each seat translating the other's actions, exactly)."""
    w = _Walker(policy, game or policy.game)
    ones = np.ones(w.cards.n_rows(0))
    return w.self_play(State.new_hand(w.game), 0, ({0: ones}, {0: ones.copy()}))


def real_tree_size(game: Game) -> int:
    """Nodes of ``game``'s real betting tree (every legal action, every raise-to), counted
    with a memo on the real state (the tree itself is never built)."""
    memo: dict[tuple[Any, ...], int] = {}

    def count(state: State) -> int:
        if state.actor is None:
            return 1
        key = _state_key(state)
        n = memo.get(key)
        if n is None:
            n = 1 + sum(count(state.apply(a)) for a in _legal_actions(state))
            memo[key] = n
        return n

    return count(State.new_hand(game))


def real_exploitability(
    policy: TranslatedPolicy,
    game: Game | None = None,
    *,
    self_play: bool = True,
    memo: bool = True,
    count_tree: bool = True,
) -> RealResult:
    """Exploitability of the translated ``policy`` in the real ``game`` (default: the
    policy's), computed exactly (module docstring): a best responder in each seat that
    may make every legal bet, against the player's mixture over its mapping draws.

    ``self_play``: also seat 0's value when the player plays both seats; ``memo``:
    memoize subtrees met again with the same real state and mapping states (exact; off
    only to check that); ``count_tree``: count the full real betting tree for scale.
    """
    g = game or policy.game
    t0 = time.perf_counter()
    walker = _Walker(policy, g, memo=memo)
    br0 = walker.best_response(0)
    br1 = walker.best_response(1)
    walker.memo.clear()
    value = float(real_self_play_value(policy, g)) if self_play else None
    expl = (br0 + br1) / 2.0
    return RealResult(
        game=g.name,
        mapping=policy.mapping,
        exploitability=expl,
        mbb_per_game=1000.0 * expl / g.big_blind,
        br=(br0, br1),
        value=value,
        nodes=walker.nodes,
        memo_hits=walker.memo_hits,
        tree_nodes=real_tree_size(g) if count_tree else None,
        seconds=time.perf_counter() - t0,
    )
