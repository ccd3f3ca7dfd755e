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

A responder that may not bet every amount (:class:`Responder`: raises of some pot
fractions, all-in, and at most one raise past the player's own cap on a street) gives the
best response within that betting, a lower bound on the any-size figure that grows with
the sizes; the raise past the cap walks into the translated player's fallback call.

Cost: one walk per seat of the responder over the public tree with vectors over every
(board, hand) row of the street: boards through the street in dealing order, times every
hand of the deck (a hand that holds a board card is a row of zero reach), so dealing a
street's cards repeats each board's rows and summing back adds them up. Terminal values
take O(hands) per board (:class:`solver.evaluation._terminal.HandValues`). Subtrees
reached again with the same real betting state and the same mapping states (same nodes,
the same reach, compared by a 128-bit digest) are memoized within a memory bound. In
leduc.nolimit.2p the full real betting tree has 900,305 nodes and vectors have 6 and 36
rows; the walks visit only those nodes the player reaches with positive probability (an
action it never takes is worth nothing to the responder's counterfactual values): 6,000
to 25,000 nodes for both seats with the abstractions of ``bench/translation.py``, a
second or two. Boards are walked one per class under the permutations of the suits
where the player's buckets do not name suits (the card layer,
:class:`solver.evaluation._cards.CardLayer`): the 20-card game's 6,840 river boards
become 485, and a river vector has 92,150 rows. :func:`predict_walk` says before a walk
how many nodes and vector elements it will touch, its memory and time.

exploitability = (BR_0 + BR_1) / 2 chips per game, BR_i the value of a best responder in
seat i against the translated player in the other seat (the convention of
:func:`solver.evaluation.best_response.exploitability`); mbb/g = 1000 * exploitability / big blind
(:attr:`poker.game.Game.big_blind`, the largest blind: the ante of 1 in Leduc).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from abstraction.betting import size_to_raise_to
from poker._compile import cold
from poker.game import Game
from poker.state import Action, State

from ..chance import lossless_bucket, raw_lossless_bucket
from ..play.policy import LOST, BucketFn, TranslatedPolicy, after_opponent
from ..strategy import Strategy
from ._cards import card_layer
from ._terminal import _card_totals, _hand_disjoint, _hand_showdown
from .runouts import RunOuts

__all__ = [
    "RealResult",
    "TranslatedPlayer",
    "real_best_response_value",
    "real_exploitability",
    "real_self_play_value",
    "real_tree_size",
    "responder_values",
    "translated_policy",
    "predict_walk",
    "Responder",
    "WALK_COMPILE_SECONDS",
    "WalkCost",
    "walk_cold",
    "warm_up_walk",
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


@dataclass(frozen=True)
class Responder:
    """A best responder's betting when it may not bet every amount: raises of ``sizes``
    pots after calling (sized as the blueprint sizes its own raises,
    :func:`abstraction.betting.size_to_raise_to`), all-in when ``all_in``, fold and call; on a street
    where the player's tree caps the raises at ``cap``, at most ``past_cap`` raises beyond
    it (None: no limit but the stacks). The raise past the cap finds the leak of a
    translated player that can only check or call there."""

    sizes: tuple[float, ...] = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
    all_in: bool = True
    past_cap: int | None = 1

    def actions(self, state: State, cap: int | None) -> list[Action]:
        """The responder's actions at ``state`` (it is to act) on a street capped at
        ``cap`` raises by the player's tree."""
        out = [Action.fold()] if state.can_fold() else []
        out.append(Action.call())
        lo, hi = state.min_raise_to, state.max_raise_to
        if lo is None or hi is None:
            return out
        if cap is not None and self.past_cap is not None and state.num_raises_in_round >= cap + self.past_cap:
            return out
        actor = state.actor
        assert actor is not None
        tos = {size_to_raise_to(x, state.spent, actor, lo, hi) for x in self.sizes}  # the blueprint's rule
        if self.all_in:
            tos.add(hi)
        return out + [Action.raise_to(t) for t in sorted(tos)]

    @staticmethod
    def parse(spec: str) -> Responder | None:
        """``any`` (None: every legal amount), or pot fractions and ``a`` (all-in)
        separated by commas, optionally ``+capN`` (N raises past the player's cap; ``+cap``
        alone: no limit; default 1): e.g. ``0.25,0.5,0.75,1,1.5,2,a,+cap1``."""
        text = spec.strip().lower()
        if text == "any":
            return None
        sizes: list[float] = []
        all_in = False
        past_cap: int | None = 1
        for token in (t.strip() for t in text.split(",")):
            if token == "a":
                all_in = True
            elif token.startswith("+cap"):
                rest = token[4:]
                if rest and not rest.isdigit():
                    raise ValueError(f"responder {spec!r}: {token!r} is not +capN")
                past_cap = int(rest) if rest else None
            else:
                try:
                    x = float(token.removesuffix("p"))
                except ValueError:
                    raise ValueError(f"responder {spec!r}: cannot read {token!r}; use pot fractions, "
                                     f"'a' for all-in, '+capN', or 'any'") from None
                if not x > 0:
                    raise ValueError(f"responder {spec!r}: a raise of {x} pots")
                sizes.append(x)
        if not sizes and not all_in:
            raise ValueError(f"responder {spec!r} makes no raise")
        return Responder(tuple(sorted(set(sizes))), all_in, past_cap)

    def text(self) -> str:
        """The set in words, for reports."""
        sizes = ", ".join(f"{x:g}" for x in self.sizes)
        extra = "any number of raises" if self.past_cap is None else f"{self.past_cap} raise(s) past the player's cap"
        return f"{{{sizes}}} pots{' + all-in' if self.all_in else ''}, {extra}"


class TranslatedPlayer:
    """A translated player's rules over rows of private hands, as exact evaluations walk
    them: ``buckets[s]`` holds the bucket of each row on street ``s``; the player's
    mapping states (abstract node -> reach over the rows) split at the other seat's
    actions (:func:`solver.play.policy.after_opponent`) and by its own real actions
    (:meth:`own_moves`), with the fallbacks of :class:`solver.play.policy.HandWalk`."""

    #: the mapping state of a hand's start: the blueprint tree's root
    start_key: Any = 0

    def __init__(self, policy: TranslatedPolicy, buckets: list[np.ndarray]) -> None:
        self.policy = policy
        self.buckets = buckets
        self._cached = 0
        self._buckets_distinct: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._columns: dict[int, list[tuple[int, np.ndarray]]] = {}

    #: Most bytes of blueprint probabilities kept between uses (nodes past it are recomputed).
    cache_bytes = 1 << 30

    def probs(self, node: int) -> np.ndarray:
        """Blueprint probabilities at decision ``node`` for every row of its street
        (rows x children): :meth:`TranslatedPolicy.rows`, the very numbers of
        :meth:`TranslatedPolicy.probabilities` (purification included)."""
        pol = self.policy
        distinct, inverse = self._distinct(pol._street[node])
        return pol.rows(node, distinct)[inverse]

    def _distinct(self, street: int) -> tuple[np.ndarray, np.ndarray]:
        """The distinct buckets of ``street``'s rows and each row's index among them: the
        blueprint's rows are read once per bucket, then spread to the rows."""
        got = self._buckets_distinct.get(street)
        if got is None:
            distinct, inverse = np.unique(self.buckets[street], return_inverse=True)
            got = self._buckets_distinct[street] = (distinct, inverse.ravel())
        return got

    def _moves(self, node: int) -> list[tuple[int, np.ndarray]]:
        """(child index, its probability over the rows) for the children of ``node`` some
        row plays, each column contiguous: a column of zeros leads nowhere."""
        cols = self._columns.get(node)
        if cols is None:
            pol = self.policy
            distinct, inverse = self._distinct(pol._street[node])
            small = pol.rows(node, distinct)  # one row per distinct bucket
            by_child = np.ascontiguousarray(small.T[:, inverse])
            cols = [(i, by_child[i]) for i in np.flatnonzero(by_child.any(axis=1)).tolist()]
            if self._cached + by_child.nbytes <= self.cache_bytes:  # memory for speed, within a bound
                self._columns[node] = cols
                self._cached += by_child.nbytes
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


#: Longest vectors whose subtrees the walk memoizes: past it, hashing the reach costs
#: more than the rare hit saves (different histories almost never share their reach).
_MEMO_MAX_ROWS = 20_000


class _Walker(TranslatedPlayer):
    """The walks over the real game for one translated policy."""

    #: Most bytes of subtree values the memo keeps (past it, subtrees are walked again).
    memo_bytes = 1 << 30

    def __init__(
        self,
        policy: TranslatedPolicy,
        game: Game,
        memo: bool = True,
        responder: Responder | None = None,
        symmetric: bool = True,
        root: tuple[int, tuple[int, ...]] | None = None,
        runouts: tuple[int, int] | None = None,
    ) -> None:
        if game != policy.game:
            raise ValueError("the policy was made for a different game")
        if runouts is not None and root is None:
            raise ValueError("a depth-limited walk starts from a state inside the hand (root)")
        self.root_street = root[0] if root is not None else 0
        cards, buckets = card_layer(policy, game, symmetric, root, self.root_street if runouts is not None else None)
        #: the leaves' run-outs of a depth-limited walk (None: walk to the end of the hand)
        self.runouts: RunOuts | None = None
        if runouts is not None and root is not None:
            self.runouts = RunOuts(game, np.array(cards.hands, dtype=np.int64), root[1], runouts[0], runouts[1])
        super().__init__(policy, buckets)
        self.game = game
        self.responder = responder
        self.caps = [policy.tree.betting.street(r).cap if policy.tree.betting is not None else None
                     for r in range(game.num_rounds)]
        self.cards = cards
        self.use_memo = memo
        self.nodes = 0
        self.memo_hits = 0
        self.memo: dict[tuple[Any, ...], np.ndarray] = {}
        self._memo_bytes = 0
        self.progress: Callable[[int], None] | None = None
        self.last = game.num_rounds - 1

    # -- values

    def terminal(self, state: State, street: int, ms: MappingStates, seat: int) -> np.ndarray:
        """Counterfactual values of the responder in ``seat`` at a finished hand."""
        reach = sum(ms.values())
        c = self.cards
        w = c.weight[street]
        spent = state.spent
        if state.folded[seat]:
            return -spent[seat] * w * c.disjoint(street, reach)
        if state.folded[1 - seat]:
            return spent[1 - seat] * w * c.disjoint(street, reach)
        assert street == self.last
        return min(spent) * w * c.showdown(reach)

    def br(self, state: State, street: int, ms: MappingStates, seat: int) -> np.ndarray:
        """Values over ``street``'s rows of the best responder in ``seat`` against the
        player's mapping states ``ms`` at the real ``state``."""
        if not ms:  # the player never gets here: nothing to win (a branch of zero reach)
            return np.zeros(self.cards.n_rows(street))
        if self.runouts is not None and self._leaf(state):
            return self.leaf(state, ms, seat)
        if state.round != street:
            ms = {k: self.cards.expand(r, street, state.round) for k, r in ms.items()}
            v = self.br(state, state.round, ms, seat)
            return self.cards.contract(v, state.round, street)
        key: tuple[Any, ...] | None = None
        if self.use_memo and self.cards.n_rows(street) <= _MEMO_MAX_ROWS:
            # the reach by a 128-bit digest: exact but for a collision (chance 2^-128)
            key = (_state_key(state), tuple(sorted((k, hashlib.blake2b(r.tobytes(), digest_size=16).digest())
                                                   for k, r in ms.items())))
            hit = self.memo.get(key)
            if hit is not None:
                self.memo_hits += 1
                return hit
        self.nodes += 1
        if self.progress is not None:
            self.progress(self.nodes)
        if state.actor is None:
            v = self.terminal(state, street, ms, seat)
        elif state.actor == seat:
            v = None
            actions = (_legal_actions(state) if self.responder is None
                       else self.responder.actions(state, self.caps[state.round]))
            for a in actions:
                child = self.after_opponent(ms, state, a)
                w = self.br(state.apply(a), street, child, seat)
                v = w if v is None else np.maximum(v, w)
            assert v is not None
        else:
            v = np.zeros(self.cards.n_rows(street))
            for a, child in self.own_moves(ms, state).items():
                v = v + self.br(state.apply(a), street, child, seat)
        if key is not None:
            if self._memo_bytes + v.nbytes <= self.memo_bytes:  # bounded: big games fill it fast
                self.memo[key] = v
                self._memo_bytes += v.nbytes
        return v

    def _leaf(self, state: State) -> bool:
        """Whether a depth-limited walk stops at ``state``: its street is over, or both
        players are all in, with cards to come (as :func:`solver.resolve.subgame.build_subgame`)."""
        return state.round > self.root_street or (
            state.actor is None and not any(state.folded) and self.root_street < self.last)

    def leaf(self, state: State, ms: MappingStates, seat: int) -> np.ndarray:
        """The responder's values at a depth-limited walk's leaf: the pot shown down over
        the run-outs (:class:`solver.evaluation.runouts.RunOuts`), rows of the root's street."""
        assert self.runouts is not None
        reach = sum(ms.values())
        street = self.root_street
        return min(state.spent) * self.cards.weight[street] * self.runouts.values(reach) * self.cards.live[street]

    def play_values(self, state: State, street: int, ms: MappingStates, mo: MappingStates, seat: int) -> np.ndarray:
        """Values over ``street``'s rows of the translated player in ``seat`` playing on
        against itself in the other seat: ``ms`` the other seat's mapping states (its
        reach), ``mo`` the ``seat`` player's own (per row, the probability that its
        translation is at each abstract node), each seat translating the other's actions
        with its own draws; leaves and terminals as in :meth:`br`."""
        if not ms or not mo:  # a branch one of them never reaches
            return np.zeros(self.cards.n_rows(street))
        own = sum(mo.values())
        if self.runouts is not None and self._leaf(state):
            return self.leaf(state, ms, seat) * own
        if state.round != street:
            ms = {k: self.cards.expand(r, street, state.round) for k, r in ms.items()}
            mo = {k: self.cards.expand(r, street, state.round) for k, r in mo.items()}
            v = self.play_values(state, state.round, ms, mo, seat)
            return self.cards.contract(v, state.round, street)
        if state.actor is None:
            return self.terminal(state, street, ms, seat) * own
        v = np.zeros(self.cards.n_rows(street))
        if state.actor == seat:
            for a, child in self.own_moves(mo, state).items():
                v = v + self.play_values(state.apply(a), street, self.after_opponent(ms, state, a), child, seat)
        else:
            for a, child in self.own_moves(ms, state).items():
                v = v + self.play_values(state.apply(a), street, child, self.after_opponent(mo, state, a), seat)
        return v

    def best_response(self, seat: int) -> float:
        """Value (chips per game) of the real best responder in ``seat``."""
        if seat not in (0, 1):
            raise ValueError(f"seat {seat} is not 0 or 1")
        self.memo.clear()
        self._memo_bytes = 0
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
            return self.cards.hand_value(state, street, sum(ms[0].values()), sum(ms[1].values()))
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


def real_best_response_value(
    policy: TranslatedPolicy, seat: int, game: Game | None = None, responder: Responder | None = None
) -> float:
    """Value (chips per game) of the real-game best responder in ``seat`` against
    ``policy`` played by the translated player in the other seat (see the module
    docstring); ``game`` defaults to the policy's; ``responder`` restricts the
    responder's bets (None: every legal amount)."""
    return _Walker(policy, game or policy.game, responder=responder).best_response(seat)


def responder_values(
    policy: TranslatedPolicy,
    state: State,
    board: tuple[int, ...],
    states: MappingStates,
    seat: int,
    responder: Responder | None = None,
    runouts: tuple[int, int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """A best responder's counterfactual values from a state inside a hand: ``seat`` at
    the real ``state`` (``board``: its cards through ``state``'s street), against the
    translated player in the other seat whose mapping states there are ``states``
    (abstract node or ``LOST`` -> its reach over the returned hands), the later streets'
    cards dealt, bets restricted to ``responder`` (None: every legal amount). Returns
    ``(hands, values)``: every hand of the deck (int64[H, hole cards]) and the responder's
    value for each, weighted by the probability of the cards dealt after ``state``
    (zero for hands that hold a board card). A re-solving gadget's alternatives are these
    values: what the other seat wins at best against the blueprint from here.
    ``runouts = (n, seed)`` limits the walk's depth: it stops where ``state``'s street
    ends with cards to come and shows the pot down over ``n`` complete boards drawn with
    ``seed`` (:class:`solver.evaluation.runouts.RunOuts`), as a depth-limited subgame
    does."""
    game = policy.game
    board = tuple(int(c) for c in board)
    walker = _Walker(policy, game, responder=responder, root=(state.round, board), runouts=runouts)
    hands = np.array(walker.cards.hands, dtype=np.int64)
    values = walker.br(state, state.round, states, seat)
    return hands, values * walker.cards.live[state.round]


def blueprint_values(
    policy: TranslatedPolicy,
    state: State,
    board: tuple[int, ...],
    states: MappingStates,
    own: MappingStates,
    seat: int,
    runouts: tuple[int, int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The counterfactual values of the translated player in ``seat`` when it plays on
    from ``state`` against itself, per hand (as :func:`responder_values`, whose best
    response this replaces by the player's own strategy): ``states`` the other seat's
    mapping states (its reach), ``own`` the ``seat`` player's (per hand, the probability
    of each abstract node). Brown & Sandholm 2017's "estimated" alternatives of a
    re-solving gadget are these values: tighter than a best response's, without its
    guarantee."""
    game = policy.game
    board = tuple(int(c) for c in board)
    walker = _Walker(policy, game, root=(state.round, board), runouts=runouts)
    hands = np.array(walker.cards.hands, dtype=np.int64)
    values = walker.play_values(state, state.round, states, own, seat)
    return hands, values * walker.cards.live[state.round]


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


@dataclass(frozen=True)
class WalkCost:
    """What a best-response walk will cost, predicted before it runs
    (:func:`predict_walk`): ``nodes[s]``: real public nodes on street ``s`` the walk of one
    seat visits (an upper bound: an action every row of the player leaves at probability
    zero is not pruned here); ``rows[s]``: the length of a vector there; ``elements``:
    vector elements the walk of both seats touches (nodes x rows x the mapping states);
    ``bytes``: the most memory it needs (its caches' bounds included); ``seconds``: the nodes at :data:`US_PER_NODE`
    plus the elements at :data:`NS_PER_ELEMENT`, plus ``compile_seconds``: compiling the
    walk's kernels first where numba's cache is cold (:data:`WALK_COMPILE_SECONDS`; 0 when
    they are compiled or cached)."""

    nodes: tuple[int, ...]
    rows: tuple[int, ...]
    elements: float
    bytes: int
    seconds: float
    compile_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {"nodes": list(self.nodes), "rows": list(self.rows), "elements": self.elements,
                "bytes": self.bytes, "seconds": self.seconds, "compile_seconds": self.compile_seconds}


#: A walk's time per node (Python) and per vector element it touches, measured on the
#: 2-vCPU development machine: no-limit Leduc's walks (vectors of 6 and 18 rows) take
#: about 25 us a node; 20-card walks (vectors of up to 92,150 rows) 5 ns an element for
#: the default responder's 536,288 nodes (708 s while other jobs ran) and 16 to 25 ns
#: for walks of a few thousand nodes: the prediction is good to a factor of about 2.
US_PER_NODE = 25.0
NS_PER_ELEMENT = 8.0
#: Compiling the walk's kernels (the terminal values' and :func:`_all_close`) with numba's
#: cache cold: the first walk of a Leduc strategy in a process whose NUMBA_CACHE_DIR was
#: an empty folder took 1.7 and 3.3 s more than the second (the kernels the card layer
#: needs are compiled by :func:`predict_walk` itself, before it predicts); the 2-vCPU
#: development VM while other jobs ran, 2026-12-07.
WALK_COMPILE_SECONDS = 3.0


def walk_cold() -> bool:
    """Whether the walk's kernels compile before they run (numba's cache is cold)."""
    return cold(_hand_disjoint, _hand_showdown, _card_totals, _all_close)


def warm_up_walk() -> None:
    """Compile (or load from numba's cache) the walk's kernels on one hand of one board,
    with the types the walk passes them (which do not depend on the game), so that a
    caller can say so before the walk rather than in its first node."""
    hands = np.zeros((1, 2), dtype=np.int64)
    reach, out = np.zeros((1, 1)), np.empty((1, 1))
    order = np.zeros((1, 1), dtype=np.int64)
    _hand_disjoint(hands, reach, out)
    _hand_showdown(hands, order, order.copy(), reach, out)
    _all_close(np.zeros(1), np.zeros(1), _TOL)


def predict_walk(policy: TranslatedPolicy, responder: Responder | None = None) -> WalkCost:
    """Predict the cost of :func:`real_exploitability` (both seats) from the public tree
    alone: the walk's nodes follow the translated player's mapping states (abstract nodes,
    no vectors) and, at its decisions, the real actions of every child of every state;
    vectors have the rows of their street's boards (one per suit class where the player's
    buckets allow) times the deck's hands."""
    game = policy.game
    cards, _ = card_layer(policy, game)
    rows = [cards.n_rows(st) for st in range(game.num_rounds)]
    caps = [policy.tree.betting.street(r).cap if policy.tree.betting is not None else None
            for r in range(game.num_rounds)]
    n_streets = game.num_rounds
    memo: dict[tuple[Any, ...], np.ndarray] = {}

    def walk(state: State, keys: frozenset[int], seat: int) -> np.ndarray:
        """Per street, the nodes of the subtree and (last entry) the vector elements its
        walk touches. A subtree met again is counted again (the walk memoizes only
        bit-identical reach, which different histories almost never have)."""
        key = (_state_key(state), keys)
        hit = memo.get(key)
        if hit is not None:
            return hit
        out = np.zeros(n_streets + 1)
        out[state.round] = 1
        out[n_streets] = len(keys) * rows[state.round]
        if state.actor == seat:
            acts = list(_legal_actions(state)) if responder is None else responder.actions(state, caps[state.round])
            for a in acts:
                after = after_opponent(policy, {key_: 1.0 for key_ in keys}, state, a)
                out += walk(state.apply(a), frozenset(after), seat)
        elif state.actor is not None:
            moves: dict[Action, set[int]] = {}
            for key_ in keys:
                if key_ != LOST:
                    node = policy.sync(key_, state)
                    if policy.in_step(node, state):
                        for child in policy.children(node):
                            moves.setdefault(policy.real_action(child, state), set()).add(child)
                        continue
                    moves.setdefault(Action.call(), set()).add(node)
                else:
                    moves.setdefault(Action.call(), set()).add(LOST)
            for a, after_keys in moves.items():
                out += walk(state.apply(a), frozenset(after_keys), seat)
        memo[key] = out
        return out

    total = np.zeros(n_streets + 1)
    for seat in (0, 1):
        memo.clear()
        total += walk(State.new_hand(game), frozenset({0}), seat)
    nodes = [int(x) for x in total[:n_streets]]
    elements = float(total[n_streets])
    # peak: a vector per mapping state on the deepest path (about 4 per street), the
    # buckets and the showdown order of the last street, the probability cache
    peak = 8 * (16 * sum(rows) + 3 * rows[-1]) + TranslatedPlayer.cache_bytes + _Walker.memo_bytes
    compiling = WALK_COMPILE_SECONDS if walk_cold() else 0.0
    seconds = sum(nodes) * US_PER_NODE * 1e-6 + elements * NS_PER_ELEMENT * 1e-9 + compiling
    return WalkCost(tuple(nodes), tuple(rows), elements, int(peak), seconds, compiling)


def real_exploitability(
    policy: TranslatedPolicy,
    game: Game | None = None,
    *,
    self_play: bool = True,
    memo: bool = True,
    count_tree: bool = True,
    responder: Responder | None = None,
    progress: Callable[[int], None] | None = None,
) -> RealResult:
    """Exploitability of the translated ``policy`` in the real ``game`` (default: the
    policy's), computed exactly (module docstring): a best responder in each seat that
    may make every legal bet, against the player's mixture over its mapping draws.

    ``self_play``: also seat 0's value when the player plays both seats; ``memo``:
    memoize subtrees met again with the same real state and mapping states (exact; off
    only to check that); ``count_tree``: count the full real betting tree for scale;
    ``responder``: the responder's bets (None: every legal amount, the module docstring);
    ``progress(nodes)``: called at every node the best-response walks evaluate.
    """
    g = game or policy.game
    t0 = time.perf_counter()
    walker = _Walker(policy, g, memo=memo, responder=responder)
    walker.progress = progress
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
