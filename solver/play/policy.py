"""The translated policy: a blueprint's strategy played in the real game.

A strategy is defined on the abstract betting tree (:mod:`solver.tree`); the real game
allows any legal bet. :class:`TranslatedPolicy` follows a hand's real betting through
the abstract tree and answers with the blueprint's action probabilities:

* each real action is mapped to an abstract child of the current abstract node
  (:meth:`TranslatedPolicy.translate`): fold and call to themselves, a real raise by the
  randomized pseudo-harmonic mapping over the node's raise sizes, in pots after calling
  (:mod:`abstraction.translation`; a real all-in goes to the abstract all-in where the tree
  has one); a player's own actions are abstract already (:class:`HandWalk` remembers which
  child it chose);
* the information set is (abstract node, bucket of the actor's cards on that street);
  buckets come from the cards through the strategy's bucket function;
* an abstract action becomes a legal real action from the *real* pot and bets
  (:meth:`TranslatedPolicy.real_action`): a raise of the blueprint's pot fraction of the
  real pot as a raise-to, clamped into the real legal range; a fold where checking is
  free becomes a check; a raise where the real game allows none becomes a call. Each
  such repair is said (:class:`Repair`, :meth:`TranslatedPolicy.realize`) and a player
  counts them (:class:`TranslationCounts`).

Where the tree cannot follow (:class:`HandWalk`), the player checks or calls, and never
folds; each such decision is counted as a *fallback*. That happens after a real raise
was mapped to a call (a bet smaller than every abstract size, or a raise past the
abstraction's cap) when the abstract street has ended but the real one goes on: the
player calls the real bet, and the two are in step again at the next street. It also
happens, for the rest of the hand, if the opponent acts where the abstract tree has
nobody to act.

Randomness is keyed, never drawn from a shared generator: the mapping of the action at
place ``k`` of hand ``h`` uses ``uniform(seed, h, k)`` (:func:`abstraction.translation.uniform`),
so the choice is made once, kept for the hand, and a match with the same seed replays
exactly. Evaluation needs no sockets: :meth:`TranslatedPolicy.translate` returns the
mapping's outcomes with their probabilities, for exact computations over the mixture.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from itertools import combinations
from typing import Any

import numpy as np

from abstraction.betting import ALL_IN, pot_after_call
from abstraction.translation import CALL, map_bet, real_raise_to, uniform
from poker.cards import deck_cards
from poker.state import Action, ActionKind, State

from ..chance import BucketBatchFn
from ..tree import CHANCE, DECISION, Tree
from .rows import row_is_uniform

__all__ = [
    "LOST",
    "Branch",
    "BucketFn",
    "HandWalk",
    "Range",
    "Repair",
    "TranslatedPolicy",
    "TranslationCounts",
    "after_opponent",
    "follow",
    "range_query",
]

#: ``bucket(street, hole, board) -> bucket``: ``board`` holds the board cards dealt
#: through ``street``, in dealing order.
BucketFn = Callable[[int, Sequence[int], Sequence[int]], int]

_ACT_FOLD, _ACT_CALL, _ACT_RAISE = 0, 1, 2
_STREAM_MAP, _STREAM_ACT = 0, 1
#: Most actions a row :meth:`TranslatedPolicy.decision_row` normalizes in Python floats:
#: numpy sums shorter arrays left to right, longer ones in blocks (other roundings).
_LIST_ROW_MAX = 7


class Repair(Enum):
    """Why the real action of an abstract one is not what the blueprint chose
    (:meth:`TranslatedPolicy.realize`); the value names the count in JSON."""

    MIN_RAISE = "min_raise"  # the raise, sized from the real pot, was below the minimum: raised to it
    ALL_IN = "all_in"  # it was above the stack: lowered to all-in
    FOLD_TO_CHECK = "fold_to_check"  # a fold where checking was free: a check
    RAISE_TO_CALL = "raise_to_call"  # a raise where the real game allows none: a call


@dataclass
class TranslationCounts:
    """How a player's hands went through the tree.

    ``on_tree``: opponent actions the tree holds exactly (a fold, a call, a raise of one of
    the abstract sizes); ``mapped``: opponent raises translated to other sizes, or to a
    call; ``fallback``: own decisions the tree could not answer (the player checked or
    called); ``decisions``: own decisions in all; ``uniform``: own decisions drawn from a
    row with every action within one step of equal (:mod:`solver.play.rows`: a row the
    training never averaged, in an older file). The repairs of own actions
    (:class:`Repair`): ``min_raise``, ``all_in``, ``fold_to_check``, ``raise_to_call``.
    """

    on_tree: int = 0
    mapped: int = 0
    fallback: int = 0
    decisions: int = 0
    uniform: int = 0
    min_raise: int = 0
    all_in: int = 0
    fold_to_check: int = 0
    raise_to_call: int = 0

    def count(self, repair: Repair) -> None:
        """Count one own action repaired by ``repair``."""
        setattr(self, repair.value, getattr(self, repair.value) + 1)

    @property
    def repaired(self) -> int:
        """Own actions repaired, in all."""
        return sum(getattr(self, r.value) for r in Repair)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON: the counts, the repairs under ``"repaired"``."""
        return {
            "on_tree": self.on_tree,
            "mapped": self.mapped,
            "fallback": self.fallback,
            "decisions": self.decisions,
            "uniform": self.uniform,
            "repaired": {r.value: getattr(self, r.value) for r in Repair},
        }


class TranslatedPolicy:
    """An abstract strategy played in the real game (see the module docstring).

    ``tree``: the abstract betting tree (with its ``size`` labels); ``offset``: each
    decision node's first table entry; ``table``: the average strategy, float or 1-byte
    quantized (rows summing to ``scale``: 255 for uint8, 1 for float); ``bucket``: the
    bucket function; ``mapping``: the translation (:data:`abstraction.translation.MAPPINGS`);
    ``purify``: actions below this probability are dropped and the rest renormalized;
    ``bucket_batch``: the buckets of many hands at once, for range queries
    (:func:`range_query`; without it they call ``bucket`` hand by hand).
    """

    def __init__(
        self,
        tree: Tree,
        offset: np.ndarray,
        table: np.ndarray,
        bucket: BucketFn,
        *,
        mapping: str = "pseudo_harmonic",
        purify: float = 0.0,
        bucket_batch: BucketBatchFn | None = None,
    ) -> None:
        if tree.size is None:
            raise ValueError("the tree has no raise sizes: build it with solver.tree.build_tree")
        if not 0.0 <= purify < 1.0:
            raise ValueError(f"purification threshold {purify} is not in [0, 1)")
        self.tree = tree
        self.game = tree.game
        self.offset = offset
        self.table = table
        self.scale = 255.0 if table.dtype == np.uint8 else 1.0
        self.bucket = bucket
        self.bucket_batch = bucket_batch
        self.mapping = mapping
        self.purify = float(purify)
        self.snap = tree.betting.snap if tree.betting is not None else 0.0
        # Python lists: one decision reads a few entries, far cheaper than numpy scalars.
        self._kind = tree.kind.tolist()
        self._player = tree.player.tolist()
        self._street = tree.street.tolist()
        self._child = tree.child.tolist()
        self._n_child = tree.n_child.tolist()
        self._action = tree.action.tolist()
        self._amount = tree.amount.tolist()
        self._size = tree.size.tolist()
        self._spent = tree.spent.tolist()
        self._offset = offset.tolist()

    # -- the strategy at an information set

    def probabilities(self, node: int, bucket: int) -> np.ndarray:
        """Action probabilities (float64, summing to 1) at decision ``node`` for
        ``bucket``, purified when asked."""
        n = self._n_child[node]
        o = self._offset[node] + bucket * n
        p = np.asarray(self.table[o : o + n], dtype=np.float64) / self.scale
        total = p.sum()
        p = p / total if total > 0 else np.full(n, 1.0 / n)
        if self.purify > 0.0:
            kept = np.where(p >= self.purify, p, 0.0)
            if kept.sum() <= 0.0:
                kept = (p == p.max()).astype(np.float64)
            p = kept / kept.sum()
        return p

    def decision_row(self, node: int, bucket: int) -> tuple[np.ndarray, bool]:
        """(:meth:`probabilities`, :meth:`is_uniform`) of one stored row, the row read once:
        the player's hot path, a microsecond cheaper a decision than the two calls. Up to
        :data:`_LIST_ROW_MAX` actions and without purification the row is normalized in
        Python floats in numpy's own order of operations (each value over the scale, their
        sum taken left to right as numpy sums fewer than eight, each over that sum), so the
        probabilities are the very floats :meth:`probabilities` gives."""
        n = self._n_child[node]
        o = self._offset[node] + bucket * n
        raw = self.table[o : o + n].tolist()
        flat = row_is_uniform(raw, self.scale == 255.0)
        if n > _LIST_ROW_MAX or self.purify > 0.0:
            return self.probabilities(node, bucket), flat
        scale = self.scale
        q = [x / scale for x in raw]
        total = 0.0
        for x in q:  # (not sum(): from Python 3.12 it compensates, another rounding)
            total += x
        if total > 0:
            return np.array([x / total for x in q]), flat
        return np.full(n, 1.0 / n), flat

    def is_uniform(self, node: int, bucket: int) -> bool:
        """True if the stored row of ``bucket`` at decision ``node`` plays every action
        alike (:func:`solver.play.rows.row_is_uniform`)."""
        n = self._n_child[node]
        o = self._offset[node] + bucket * n
        return row_is_uniform(self.table[o : o + n].tolist(), self.scale == 255.0)

    def rows(self, node: int, buckets: np.ndarray) -> np.ndarray:
        """:meth:`probabilities` for many buckets at once: ``float64[len(buckets), n_actions]``."""
        n = self._n_child[node]
        idx = self._offset[node] + np.asarray(buckets, dtype=np.int64)[:, None] * n + np.arange(n)
        p = np.asarray(self.table[idx], dtype=np.float64) / self.scale
        total = p.sum(axis=1, keepdims=True)
        p = np.where(total > 0, p / np.where(total > 0, total, 1.0), 1.0 / n)
        if self.purify > 0.0:
            kept = np.where(p >= self.purify, p, 0.0)
            empty = kept.sum(axis=1) <= 0.0
            kept[empty] = (p[empty] == p[empty].max(axis=1, keepdims=True)).astype(np.float64)
            p = kept / kept.sum(axis=1, keepdims=True)
        return p

    def children(self, node: int) -> range:
        """The children of ``node``, in action order."""
        c = self._child[node]
        return range(c, c + self._n_child[node])

    # -- real to abstract

    def in_step(self, node: int, state: State) -> bool:
        """The abstract ``node`` is the decision the real ``state`` waits for: same street,
        same player to act."""
        return (
            node >= 0
            and self._kind[node] == DECISION
            and self._player[node] == state.actor
            and self._street[node] == state.round
        )

    def sync(self, node: int, state: State) -> int:
        """``node`` moved past the chance nodes the real ``state`` has passed (the board
        of each street the real betting reached)."""
        while node >= 0 and self._kind[node] == CHANCE and self._street[node] < state.round:
            node = self._child[node]
        return node

    def raise_children(self, node: int) -> tuple[list[int], list[float]]:
        """The raise children of decision ``node`` and their sizes in pots after calling,
        measured in the abstract game (ascending)."""
        spent = self._spent[node]
        actor = self._player[node]
        base, pot = max(spent), pot_after_call(spent, actor)
        kids = [c for c in self.children(node) if self._action[c] == _ACT_RAISE]
        return kids, [(self._amount[c] - base) / pot for c in kids]

    def translate(
        self, node: int, state: State, action: Action
    ) -> tuple[list[tuple[int, float]], bool]:
        """Where the real ``action`` of ``state``'s actor goes from abstract ``node``
        (which must be :meth:`in_step` with ``state``): ``([(child, probability), ...],
        on_tree)``; ``on_tree`` is True when the tree holds the action exactly.

        A fold or call maps to the fold or call child; a raise is mapped by the
        translation (a real all-in to the abstract all-in where there is one, and where
        the node has no raise child, to the call).
        """
        kind = action.kind
        kids = self.children(node)
        if kind is ActionKind.FOLD:
            folds = [c for c in kids if self._action[c] == _ACT_FOLD]
            if folds:
                return [(folds[0], 1.0)], True
            kind = ActionKind.CALL  # a free fold is a check (the dealer repairs it so)
        call = next(c for c in kids if self._action[c] == _ACT_CALL)
        if kind is ActionKind.CALL:
            return [(call, 1.0)], True
        raises, sizes = self.raise_children(node)
        if self.game.is_limit:
            return ([(raises[0], 1.0)], True) if raises else ([(call, 1.0)], False)
        amount = action.amount
        assert amount is not None
        if amount == state.max_raise_to:
            all_in = [c for c in raises if self._size[c] == ALL_IN]
            if all_in:
                return [(all_in[0], 1.0)], True
        x = (amount - state.max_spent) / pot_after_call(state.spent, state.actor or 0)
        out = [(call if i == CALL else raises[i], p) for i, p in map_bet(x, sizes, self.mapping)]
        exact = len(out) == 1 and out[0][0] != call and any(math.isclose(x, s) for s in sizes)
        return out, exact

    # -- abstract to real

    def real_action(self, child: int, state: State) -> Action:
        """The legal real action for abstract ``child`` in the real ``state`` (see the
        module docstring)."""
        return self.realize(child, state)[0]

    def realize(self, child: int, state: State) -> tuple[Action, Repair | None]:
        """:meth:`real_action`, and the repair that made it legal: None where the abstract
        action is the real one as it stands (a raise sized from the real pot inside the
        legal range, snapped to all-in near it as the tree was built, the all-in, a
        limit raise)."""
        a = self._action[child]
        if a == _ACT_FOLD:
            return (Action.fold(), None) if state.can_fold() else (Action.call(), Repair.FOLD_TO_CHECK)
        if a == _ACT_CALL:
            return Action.call(), None
        lo, hi = state.min_raise_to, state.max_raise_to
        if lo is None or hi is None:
            return Action.call(), Repair.RAISE_TO_CALL
        p = state.actor
        assert p is not None
        size = self._size[child]
        to = real_raise_to(size, state.spent, p, lo, hi, self.snap)
        action = Action.raise_to(to)
        if lo < to < hi or math.isnan(size) or size == ALL_IN:
            return action, None  # strictly inside the range (nothing clamped), or not sized
        wanted = real_raise_to(size, state.spent, p, 0, sys.maxsize)  # the raise-to before the legal range
        if wanted < lo:
            return action, Repair.MIN_RAISE
        if wanted > hi:
            return action, Repair.ALL_IN
        return action, None


def abstract_label(tree: Tree, node: int, child: int) -> tuple[str, float | str | None]:
    """Human label of abstract ``child`` of decision ``node`` ("fold", "check", "call",
    "raise 0.5p", "raise all-in", "raise" in limit games) and its pot fraction ('all-in',
    or None for fold/call and limit raises)."""
    a = int(tree.action[child])
    if a == 0:
        return "fold", None
    if a == 1:
        spent = tree.spent[node]
        return ("check" if spent[int(tree.player[node])] == spent.max() else "call"), None
    if tree.game.is_limit or tree.size is None or math.isnan(float(tree.size[child])):
        return "raise", None
    size = float(tree.size[child])
    if size < 0:
        return "raise all-in", "all-in"
    return f"raise {size:g}p", size


@dataclass
class HandWalk:
    """One hand followed through the abstract tree by the player at ``position``.

    Call :meth:`decide` whenever the player is to act: it first catches up with every real
    action since the last call, then answers. ``seed`` and ``hand`` key the random choices
    (see the module docstring). With ``own`` False (looking at a history from outside,
    as ``pokerbot inspect`` does) the player's own actions are translated like the
    opponent's.
    """

    policy: TranslatedPolicy
    position: int
    seed: int
    hand: int
    counts: TranslationCounts = field(default_factory=TranslationCounts)
    node: int = 0
    lost: bool = False
    seen: int = 0
    _own: dict[int, int] = field(default_factory=dict)
    _real: State | None = None
    _buckets: dict[int, int] = field(default_factory=dict)
    #: The last opponent action followed: (its index in the hand's history, the abstract
    #: node it was made at, the translation's outcomes, the child drawn), for a watcher.
    last_mapping: tuple[int, int, list[tuple[int, float]], int] | None = None
    #: The last decision: (abstract node, index of the action drawn), None after a fallback.
    last_choice: tuple[int, int] | None = None

    def copy(self) -> HandWalk:
        """An independent copy (its own remembered choices, buckets and counts), to
        follow several continuations of one hand."""
        return replace(self, counts=replace(self.counts), _own=dict(self._own), _buckets=dict(self._buckets))

    def update(self, state: State) -> None:
        """Follow every real action of ``state`` not seen yet (``state`` is this hand's)."""
        history = state.history
        if self._real is None:
            self._real = State.new_hand(state.game)
        pol = self.policy
        while self.seen < len(history):
            k = self.seen
            logged = history[k]
            real = self._real
            if not self.lost:
                self.node = pol.sync(self.node, real)
                if pol.in_step(self.node, real):
                    mine = logged.actor == self.position
                    if mine and k in self._own:
                        self.node = self._own[k]
                    else:
                        outcomes, exact = pol.translate(self.node, real, logged.action)
                        parent = self.node
                        self.node = _pick(outcomes, uniform(self.seed, self.hand, k, _STREAM_MAP))
                        if not mine:
                            self.last_mapping = (k, parent, outcomes, self.node)
                            if exact:
                                self.counts.on_tree += 1
                            else:
                                self.counts.mapped += 1
                elif logged.actor != self.position:
                    # The opponent acts where the tree has nobody to act: nothing to follow.
                    self.lost = True
            self._real = real.apply(logged.action)
            self.seen += 1

    def decide(
        self, state: State, hole: Sequence[int], board: Sequence[int], own: bool = True
    ) -> tuple[Action, np.ndarray | None]:
        """The real action at ``state`` (this player to act) for these cards, and the
        abstract probabilities it was drawn from (None for a fallback call)."""
        self.update(state)
        pol = self.policy
        self.counts.decisions += 1
        self.node = pol.sync(self.node, state) if not self.lost else self.node
        if self.lost or not pol.in_step(self.node, state):
            self.counts.fallback += 1
            self.last_choice = None
            return Action.call(), None
        street = state.round
        b = self._buckets.get(street)
        if b is None:
            b = self._buckets[street] = pol.bucket(street, hole, board)
        probs, flat = pol.decision_row(self.node, b)
        if flat:
            self.counts.uniform += 1
        k = len(state.history)
        i = _draw(probs, uniform(self.seed, self.hand, k, _STREAM_ACT))
        self.last_choice = (self.node, i)
        child = pol._child[self.node] + i
        if own:
            self._own[k] = child
        action, repair = pol.realize(child, state)
        if repair is not None:
            self.counts.count(repair)
        return action, probs


@dataclass
class Branch:
    """One way the abstract tree follows a real history: the abstract ``node`` reached,
    its ``weight`` (product of mapping probabilities), ``lost`` when the tree could not
    follow, and ``steps``: for each real action, the abstract action it became."""

    node: int
    weight: float
    lost: bool = False
    steps: list[dict[str, Any]] = field(default_factory=list)


def follow(policy: TranslatedPolicy, state: State) -> list[Branch]:
    """Every abstract branch the real history of ``state`` reaches, with its weight, for
    the player to act at ``state``: the rules of :meth:`HandWalk.update` with every
    action translated (the player's own too), keeping every mapping outcome with its
    probability instead of drawing one: the exact mixture a history stands for."""
    position = state.actor
    limit = state.game.is_limit
    tree = policy.tree
    branches = [Branch(0, 1.0)]
    real = State.new_hand(state.game)
    for logged in state.history:
        text = logged.action.to_acpc(limit)
        merged: dict[tuple[int, bool], Branch] = {}

        def add(b: Branch) -> None:
            key = (b.node, b.lost)
            if key in merged:
                merged[key].weight += b.weight
            else:
                merged[key] = b

        for b in branches:
            if not b.lost:
                node = policy.sync(b.node, real)
                if policy.in_step(node, real):
                    outcomes, exact = policy.translate(node, real, logged.action)
                    for child, p in outcomes:
                        step = {
                            "real": text,
                            "abstract": tree.action_label(child),
                            "probability": p,
                            "exact": exact,
                        }
                        add(Branch(child, b.weight * p, False, [*b.steps, step]))
                    continue
                lost = logged.actor != position
                note = "off the tree: nobody acts there" if lost else "not followed"
                add(Branch(node, b.weight, lost, [*b.steps, {"real": text, "abstract": None,
                                                             "probability": 1.0, "note": note}]))
                continue
            add(Branch(b.node, b.weight, True, [*b.steps, {"real": text, "abstract": None,
                                                           "probability": 1.0, "note": "lost"}]))
        branches = list(merged.values())
        real = real.apply(logged.action)
    for b in branches:
        if not b.lost:
            b.node = policy.sync(b.node, state)
            if not policy.in_step(b.node, state):
                b.lost = True
    return branches


#: The key of a mapping state in which the tree could not follow (see :func:`after_opponent`).
LOST = -1


def after_opponent(policy: TranslatedPolicy, states: dict[int, Any], state: State, action: Action) -> dict[int, Any]:
    """A translated player's *mapping states* once the other seat played ``action`` at the
    real ``state``: ``states`` maps an abstract node (or :data:`LOST`) to the player's
    reach there (a number, or a vector over its hands); each state splits by the
    translation's outcomes, weighted by their probabilities, and states that reach the
    same node merge. A state the real action leaves (nobody to act there in the abstract
    tree) becomes :data:`LOST`, as :meth:`HandWalk.update` does. Exact evaluations
    (:mod:`solver.evaluation.real_response`, :mod:`solver.evaluation.head_to_head`, :mod:`solver.evaluation.aivat`) follow
    the player's mixture this way."""
    out: dict[int, Any] = {}

    def add(key: int, reach: Any) -> None:
        have = out.get(key)
        out[key] = reach if have is None else have + reach

    for key, reach in states.items():
        if key != LOST:
            node = policy.sync(key, state)
            if policy.in_step(node, state):
                outcomes, _ = policy.translate(node, state, action)
                for child, p in outcomes:
                    add(child, reach * p)
                continue
        add(LOST, reach)
    return out


@dataclass(frozen=True)
class Range:
    """The translated policy for every private hand at one real history: ``probs[i, j]``
    is the probability that the player holding ``hands[i]`` (ACPC cards) takes
    ``actions[j]`` (real actions, legal in the real state); rows sum to 1."""

    hands: np.ndarray  # int64[n, hole cards]
    actions: list[Action]
    probs: np.ndarray  # float64[n, len(actions)]

    def of(self, hole: Sequence[int]) -> dict[str, float]:
        """The distribution of one hand, keyed by the actions' ACPC text."""
        key = sorted(int(c) for c in hole)
        i = next((i for i, h in enumerate(self.hands.tolist()) if sorted(h) == key), None)
        if i is None:
            raise ValueError(f"hand {list(hole)} is not in the range (a card on the board?)")
        return {a.to_acpc(False): float(p) for a, p in zip(self.actions, self.probs[i])}


def range_query(policy: TranslatedPolicy, state: State, board: Sequence[int]) -> Range:
    """The action distribution at the real ``state`` for every hand the player to act may
    hold: every set of hole cards that misses ``board`` (the board through the state's
    street, in dealing order). The translation enters exactly: the result is the mixture
    over :func:`follow`'s branches, weighted by their probabilities, never one draw; a
    branch the tree cannot follow checks or calls. Buckets are computed for all hands at
    once (``policy.bucket_batch``)."""
    game = state.game
    if state.actor is None:
        raise ValueError("nobody is to act: the hand is over")
    need = sum(game.num_board_cards[: state.round + 1])
    if len(board) != need:
        raise ValueError(f"street {state.round} has {need} board cards, got {len(board)}")
    used = set(int(c) for c in board)
    free = [c for c in deck_cards(game.num_ranks, game.num_suits) if c not in used]
    k = game.num_hole_cards
    hands = np.array(list(combinations(free, k)), dtype=np.int64).reshape(-1, k)
    cards = np.ascontiguousarray(
        np.concatenate([hands, np.tile(np.asarray(board, dtype=np.int64), (hands.shape[0], 1))], axis=1)
    )
    if policy.bucket_batch is not None:
        buckets = np.asarray(policy.bucket_batch(state.round, cards), dtype=np.int64)
    else:
        buckets = np.array([policy.bucket(state.round, h[:k], h[k:]) for h in cards.tolist()], dtype=np.int64)
    columns: dict[tuple[ActionKind, int], int] = {}
    actions: list[Action] = []
    parts: list[tuple[int, np.ndarray]] = []

    def column(action: Action) -> int:
        key = (action.kind, int(action.amount or 0))
        if key not in columns:
            columns[key] = len(actions)
            actions.append(action)
        return columns[key]

    for b in follow(policy, state):
        if b.lost:
            parts.append((column(Action.call()), np.full(hands.shape[0], b.weight)))
            continue
        p = policy.rows(b.node, buckets)
        for j, child in enumerate(policy.children(b.node)):
            parts.append((column(policy.real_action(child, state)), b.weight * p[:, j]))
    probs = np.zeros((hands.shape[0], len(actions)))
    for j, v in parts:
        probs[:, j] += v
    order = sorted(range(len(actions)), key=lambda j: _action_order(actions[j]))
    return Range(hands=hands, actions=[actions[j] for j in order], probs=probs[:, order])


def _action_order(a: Action) -> tuple[int, int]:
    rank = {ActionKind.FOLD: 0, ActionKind.CALL: 1, ActionKind.RAISE: 2}[a.kind]
    return rank, int(a.amount or 0)


def _pick(outcomes: list[tuple[int, float]], u: float) -> int:
    acc = 0.0
    for child, p in outcomes:
        acc += p
        if u < acc:
            return child
    return outcomes[-1][0]


def _draw(probs: np.ndarray, u: float) -> int:
    acc = 0.0
    last = 0
    for i, p in enumerate(probs.tolist()):
        if p > 0.0:
            last = i
            acc += p
            if u < acc:
                return i
    return last
