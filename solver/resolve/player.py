"""A blueprint player that re-solves the rest of the hand when the opponent leaves the
tree: the hand-level logic, without the wire (:mod:`agent.strategy_player` plays a
:class:`~solver.play.policy.HandWalk`; a :class:`ResolvingWalk` takes the same calls).

Until something triggers a re-solve, the player is its blueprint: a
:class:`~solver.play.policy.HandWalk` answers, with the same keyed draws, so the same
hands get the same actions. A re-solve is triggered at the player's decision when the
opponent's last action was off the tree (a size the tree does not hold, a raise past its
cap, an action where the tree cannot follow), and, if asked, at the start of chosen
streets; only on streets from ``ResolveOptions.first_street`` on (by default the turn:
there the subgame is solved to the end of the hand, the river enumerated; earlier
streets' subgames stop at the street's end).

The subgame (:class:`~solver.resolve.subgame.SubgameSolver`) is rooted at the current
real state, with finer betting than the blueprint's (:class:`ResolveOptions`: sizes, all-in,
the opponent's actual bet, a raise cap), solved by Discounted CFR for a number of
iterations (so a match replays exactly) with a seconds cap on top: a re-solve that hits
the cap plays the blueprint, and is counted. Its inputs:

* the player's range: the blueprint's Bayes range along the real history
  (:class:`~solver.resolve.ranges.BlueprintRanges`) until the hand's first re-solve;
  after it, the range times the re-solved strategies' probabilities of the actions the
  player took;
* the opponent behind the re-solving gadget (Burch, Johanson & Bowling 2014): its hands
  enter with their blueprint range as weights (floored, so that every hand it may hold
  is guarded: a hand of weight zero would be left out of the guarantee), and each may
  instead take its alternative. At the hand's first re-solve that is its best-response
  value against the blueprint played on from here with the player's range
  (:func:`~solver.evaluation.real_response.responder_values`), so the re-solved
  strategy lets no opponent hand win more than the blueprint would (within the solving
  error, and in the subgame's betting). At a later re-solve it is the opponent's
  counterfactual value, best responding, at the node of the last solution where the
  history left it (:func:`continual_alternatives`: DeepStack's continual re-solving,
  Moravčík et al. 2017), so a nested re-solve keeps what the last one promised.

While the opponent's actions stay on the last solution's tree the player follows that
solution on the street it was made for; an action off it re-solves again from there
(nested), and so does the player's first decision on each later street, with the cards
then known. Where the rest of the hand does not fit (``max_nodes`` or ``max_cells``, or more boards than
the subgame may enumerate: preflop and the flop on the full deck), the subgame stops at
its street's end and shows the pot down over ``runouts`` seeded boards, and so does the
best response that gives the gadget its alternatives; the next street's re-solve then
takes the blueprint's alternatives again, with the range the player carried.
:mod:`solver.resolve.exact` tabulates this player over the real game and computes its
exact exploitability.
"""

from __future__ import annotations

import dataclasses
import functools
import time
import weakref
import zlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from abstraction.translation import uniform
from poker._stop import Stop
from poker.betting import ActionKind
from poker.cards import deck_cards
from poker.game import Game
from poker.state import Action, State

from ..evaluation.real_response import Responder, blueprint_values, responder_values
from ..play.policy import HandWalk, TranslatedPolicy, TranslationCounts
from . import GADGETS
from .ranges import BlueprintRanges
from .subgame import (_CHANCE, _LEAF, SubgameBetting, SubgameSolver, SubgameTooBig, SubgameTree, build_subgame,
                      deck_hands, subgame_tree)

__all__ = ["GADGETS", "ResolveCounts", "ResolveOptions", "Resolved", "ResolvingWalk", "resolve_subgame"]

#: The keyed-draw stream of a re-solved decision (0 and 1 are the walk's mapping and
#: action draws).
_STREAM_RESOLVE = 2


@dataclass(frozen=True)
class ResolveOptions:
    """When and how a player re-solves.

    ``iterations``: Discounted CFR iterations a re-solve runs (the budget: a match
    replays exactly); ``seconds``: a cap on top (None: none), past which the blueprint
    plays; ``sizes``, ``all_in``, ``cap``: the subgame's bets (pot fractions after
    calling, to which the blueprint's own sizes on the street are added, so that the
    blueprint is one of the subgame's strategies; all-in; raises a street, None: one past
    the blueprint's cap, no limit where it has none; the opponent's actual bet is the
    root's);
    ``street_starts``: streets at whose first decision the player also re-solves;
    ``first_street``: the earliest street it re-solves on (None: the one before last,
    the turn in hold'em); ``max_nodes``: a subgame tree bigger than this is not solved
    (the blueprint plays, counted): a full-deck turn with the river enumerated has
    tens of thousands of nodes and takes seconds an iteration; ``runouts``: where the
    rest of the hand is past those limits (or past
    :data:`~solver.resolve.subgame.MAX_FINAL_BOARDS` boards), the subgame stops at the
    end of its street and shows the pot down over that many seeded complete boards (0:
    the blueprint plays there instead); ``max_cells``: as ``max_nodes``, for the tree's
    nodes times the deck's hands (its vectors' size, which an iteration's time follows:
    5,263 nodes of the 20-card game's 190 hands, 754 of the full deck's 1,326);
    ``gadget``: what keeps a re-solve safe,
    :data:`GADGETS` (``"safe"``: the opponent's best-response values against what it
    replaces; ``"estimated"``: its values when it plays on as the blueprint, or as the
    last solution, Brown & Sandholm 2017's estimated alternatives, tighter and without a
    guarantee; ``"none"``: the opponent's blueprint range, trusted)."""

    iterations: int = 200
    seconds: float | None = None
    sizes: tuple[float, ...] = (0.5, 1.0)
    all_in: bool = True
    cap: int | None = None
    street_starts: tuple[int, ...] = ()
    first_street: int | None = None
    max_nodes: int = 10_000
    runouts: int = 100
    gadget: str = "safe"
    max_cells: int = 1_000_000

    def __post_init__(self) -> None:
        if self.gadget not in GADGETS:
            raise ValueError(f"gadget {self.gadget!r}: one of {', '.join(GADGETS)}")


@dataclass
class ResolveCounts:
    """``resolves``: subgames solved; ``followed``: decisions answered from the last
    solution; ``timeouts``: re-solves stopped by the seconds cap (the blueprint played);
    ``too_big``: subgames past the node limit (the blueprint played); ``limited``: of the
    re-solves, those whose depth was limited (leaves shown down over run-outs);
    ``seconds``: time spent re-solving."""

    resolves: int = 0
    followed: int = 0
    timeouts: int = 0
    too_big: int = 0
    limited: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, float]:
        """Plain data for JSON."""
        return {"resolves": self.resolves, "followed": self.followed, "timeouts": self.timeouts,
                "too_big": self.too_big, "limited": self.limited, "seconds": self.seconds}


class ResolvingWalk:
    """One hand of the re-solving player at ``position`` (module docstring): call
    :meth:`decide` whenever it is to act, as with :class:`HandWalk`. ``stop`` and
    ``started``: passed to each re-solve (:func:`resolve_subgame`), for a caller that
    shows one long solve and lets a signal end it."""

    def __init__(
        self,
        policy: TranslatedPolicy,
        position: int,
        seed: int,
        hand: int,
        options: ResolveOptions | None = None,
        counts: TranslationCounts | None = None,
        resolve_counts: ResolveCounts | None = None,
        *,
        stop: Stop | None = None,
        started: Callable[[SubgameSolver], None] | None = None,
    ) -> None:
        self.policy = policy
        self.stop = stop
        self.started = started
        self.game = policy.game
        self.position = int(position)
        self.seed = int(seed)
        self.hand = int(hand)
        self.options = options or ResolveOptions()
        self.walk = HandWalk(policy, position, seed, hand, counts=counts or TranslationCounts())
        self.counts = resolve_counts or ResolveCounts()
        self.hands = deck_hands(self.game)
        self.ranges = BlueprintRanges(policy, self.hands)
        self._seen = 0
        self._real = State.new_hand(self.game)
        self._off_tree = False  # the opponent's last action was off the tree
        #: The last decision when a subgame's solution made it: (its real actions, their
        #: probabilities for the hand, the index drawn); None when the blueprint made it.
        self.last_play: tuple[list[Action], np.ndarray, int] | None = None
        self._my_range: np.ndarray | None = None  # after the hand's first re-solve
        self._solution: SubgameSolver | None = None
        self._node = 0  # where the real history is in the last solution's tree
        self._left = False  # the opponent left that tree at _node
        self._before: tuple[State, BlueprintRanges] | None = None  # before the opponent's last action, a raise
        #: the last re-solve's inputs, for inspection: (my range, opponent weights, alternatives)
        self.last_inputs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    @property
    def solution(self) -> tuple[SubgameSolver, int] | None:
        """The last solution and the node of its tree the real history is at (None before
        the hand's first re-solve, or once the blueprint has played since)."""
        return None if self._solution is None else (self._solution, self._node)

    # -- following the real history

    def _follow(self, state: State, board: Sequence[int]) -> None:
        history = state.history
        real = self._real  # the state after the actions followed so far
        while self._seen < len(history):
            logged = history[self._seen]
            cards = tuple(board[: sum(self.game.num_board_cards[: real.round + 1])])
            if logged.actor != self.position:
                self._off_tree = self._leaves_tree(real, logged.action)
            # the ranges before an opponent's raise: a first re-solve right after it takes
            # its alternatives there (resolve_subgame's parent)
            self._before = (real, self.ranges.copy()) if _opponent_raise(logged.action, logged.actor, self.position) else None
            self.ranges.after(real, cards, logged.action)
            self._follow_solution(real, logged.action, board)
            real = real.apply(logged.action)
            self._seen += 1
        self._real = real

    def _leaves_tree(self, real: State, action: Action) -> bool:
        """Whether the blueprint's walk cannot hold the opponent's ``action`` exactly."""
        pol = self.policy
        walk = self.walk
        walk.update(real)  # catch up to just before the action
        if walk.lost:
            return True
        node = pol.sync(walk.node, real)
        if not pol.in_step(node, real):
            return True
        outcomes, exact = pol.translate(node, real, action)
        return not exact

    def _follow_solution(self, real: State, action: Action, board: Sequence[int]) -> None:
        sol = self._solution
        if sol is None or self._left:
            return
        step = solution_step(sol.tree, self._node, real, action, board)
        if step is None:  # off the solution's tree: the next decision re-solves from here
            self._node = descend(sol.tree, self._node, board)
            self._left = True
            return
        at, i, nxt = step
        if real.actor == self.position and self._my_range is not None:
            self._my_range = self._my_range * sol.average(at)[i]
        self._node = nxt

    # -- deciding

    def decide(self, state: State, hole: Sequence[int], board: Sequence[int]) -> tuple[Action, np.ndarray | None]:
        """The real action at ``state`` (this player to act) for ``hole`` on ``board``,
        and the probabilities it was drawn from (None where the blueprint's fallback call
        played)."""
        self._follow(state, board)
        self.last_play = None
        game = self.game
        first = self.options.first_street if self.options.first_street is not None else max(game.num_rounds - 2, 0)
        sol = self._solution
        if sol is not None and not self._left:
            self._node = descend(sol.tree, self._node, board)
            if followable(sol.tree, self._node, state):
                self.counts.followed += 1
                return self._play(sol, self._node, state, hole)
        starts = state.round in self.options.street_starts and not any(
            a.actor == self.position for a in state.round_actions)
        if state.round >= first and (self._off_tree or starts or self._my_range is not None):
            previous = (sol, self._node) if sol is not None and self._my_range is not None else None
            solver = self._resolve(state, board, previous, self._before if previous is None else None)
            if solver is not None:
                self._solution, self._node, self._left = solver, 0, False
                return self._play(solver, 0, state, hole)
        action, probs = self.walk.decide(state, hole, board)
        # the blueprint played: the range carried from re-solves is no longer known
        self._my_range, self._solution = None, None
        return action, probs

    def _play(self, solver: SubgameSolver, node: int, state: State, hole: Sequence[int]) -> tuple[Action, np.ndarray]:
        row = _row_of(self.hands, hole)
        probs = solver.average(node)[:, row]
        u = uniform(self.seed, self.hand, len(state.history), _STREAM_RESOLVE)
        i = min(int(np.searchsorted(np.cumsum(probs), u, side="right")), len(probs) - 1)
        while probs[i] <= 0.0 and i > 0:
            i -= 1
        self.last_play = (solver.tree.actions[node], probs, i)
        return solver.tree.actions[node][i], probs

    def _resolve(self, state: State, board: Sequence[int], previous: tuple[SubgameSolver, int] | None,
                 parent: tuple[State, BlueprintRanges] | None) -> SubgameSolver | None:
        got = resolve_subgame(self.policy, self.options, self.position, state, board, self.ranges,
                              self._my_range, self.hands, previous, parent, stop=self.stop, started=self.started)
        self.counts.seconds += got.seconds
        if got.status == "too_big":
            self.counts.too_big += 1
        elif got.status == "timeout":
            self.counts.timeouts += 1
        if got.solver is None:
            return None
        self.counts.resolves += 1
        self.counts.limited += got.limited
        self.last_inputs = (got.mine, got.theirs, got.alternatives)
        self._my_range = got.mine
        return got.solver


def descend(tree: SubgameTree, node: int, board: Sequence[int]) -> int:
    """``node``, or where the cards of ``board`` lead below it when it is a chance node
    (it stays where ``board`` does not hold the street's cards yet)."""
    while tree.kind[node] == _CHANCE:
        for child in tree.children[node]:
            cards = tree.boards[tree.board[child]]
            if len(board) < len(cards):
                return node
            if sorted(cards) == sorted(int(c) for c in board[: len(cards)]):
                node = child
                break
        else:
            raise ValueError(f"board {list(board)} is not among the subgame's")
    return node


def followable(tree: SubgameTree, node: int, state: State) -> bool:
    """Whether the player at ``state`` plays the solution at ``node``: the same betting,
    on the street the solution was made for (each later street is re-solved with its
    cards known)."""
    return (tree.kind[node] == 0 and tree.state[node].round == tree.state[0].round
            and _same_betting(tree.state[node], state))


def solution_step(tree: SubgameTree, node: int, real: State, action: Action,
                  board: Sequence[int]) -> tuple[int, int, int] | None:
    """Follow ``action`` at ``real`` from ``node`` of a solution's tree (first down
    through the chance nodes ``board`` decides): ``(the node it was taken at, its index
    there, the node it leads to)``, or None when the tree does not hold it."""
    node = descend(tree, node, board)
    if tree.kind[node] != 0 or not _same_betting(tree.state[node], real):
        return None
    try:
        i = tree.actions[node].index(action)
    except ValueError:
        return None
    return node, i, tree.children[node][i]


def continual_alternatives(previous: tuple[SubgameSolver, int], opponent: int, my_range: np.ndarray,
                           best: bool = True) -> np.ndarray:
    """The opponent's counterfactual values per hand at ``node`` of the last solution
    (``previous = (solver, node)``: where the real history left it), best responding to
    the player's strategy there (``best``; else playing its own side of the solution)
    with the player's range ``my_range`` (its reach at the node): DeepStack's continual
    re-solving (Moravčík et al. 2017) takes these as the next gadget's alternatives, so
    that a nested re-solve keeps what the last one promised instead of falling back to
    the blueprint's values."""
    solver, node = previous
    live = solver._live[solver.tree.board[node]]
    return solver._evaluate(node, opponent, my_range * live, best)


@dataclass
class Resolved:
    """One re-solve: ``solver`` (None where the blueprint plays: ``status`` says why,
    ``"empty"`` for a range of no hand, ``"too_big"``, ``"timeout"``; else
    ``"solved"``), and its inputs over :func:`deck_hands`: the player's range ``mine``,
    the opponent's blueprint range ``theirs`` and the gadget's ``alternatives``;
    ``limited``: the subgame stops at its street's end (leaves over run-outs)."""

    solver: SubgameSolver | None
    status: str
    mine: np.ndarray | None = None
    theirs: np.ndarray | None = None
    alternatives: np.ndarray | None = None
    seconds: float = 0.0
    limited: bool = False


def resolve_subgame(
    policy: TranslatedPolicy,
    options: ResolveOptions,
    position: int,
    state: State,
    board: Sequence[int],
    ranges: BlueprintRanges,
    my_range: np.ndarray | None,
    hands: np.ndarray,
    previous: tuple[SubgameSolver, int] | None = None,
    parent: tuple[State, BlueprintRanges] | None = None,
    *,
    stop: Stop | None = None,
    started: Callable[[SubgameSolver], None] | None = None,
) -> Resolved:
    """Re-solve the rest of the hand at ``state`` for the player at ``position`` (module
    docstring): its range is ``my_range`` (the last solution's, carried along the
    history) or, when None, the blueprint's from ``ranges``. The gadget's alternatives
    come from ``previous`` (the last solution and where the history left it,
    :func:`continual_alternatives`) when the range was carried; else from the blueprint
    (:func:`responder_values`), the opponent held to the blueprint's own sizes (the
    values the blueprint guarantees in its abstraction, not what translation gives away
    against other sizes): at ``parent`` (the state before the opponent's raise that the
    player now answers, and the ranges there) when given, so that its alternative is
    the best it could have done by staying on the tree (Brown & Sandholm 2017's
    alternative for an action off the abstraction), else at ``state``; both :class:`ResolvingWalk`
    and the exact evaluation (:mod:`solver.resolve.exact`) call this, so they play the
    same strategy.

    ``stop``: ends the solve when set (:class:`~poker._stop.Interrupted` is raised, nothing
    is kept); ``started(solver)``: called before the solve runs, so that a caller on
    another thread can watch its progress (:attr:`SubgameSolver.done`)."""
    opts = options
    me, opp = position, 1 - position
    board = tuple(int(c) for c in board)
    key = None
    if not board and my_range is None and previous is None:
        # a first preflop re-solve is a function of the public history alone: made once
        key = (opts, position, tuple(a.action for a in state.history), parent is not None)
        kept = _preflop_kept(policy)
        if key in kept:
            kept.move_to_end(key)
            return dataclasses.replace(kept[key], seconds=0.0)
    live = ~np.isin(hands, np.asarray(board, dtype=np.int64)).any(axis=1)
    blueprint_mine = ranges.weights(me) * live
    mine = blueprint_mine if my_range is None else my_range * live
    theirs = ranges.weights(opp) * live
    if not mine.any() or not theirs.any():
        return Resolved(None, "empty")
    t0 = time.perf_counter()
    betting, responder = _betting(policy, options, state.round)
    runouts: tuple[int, int] | None = None
    # the tree first: a subgame past the limits costs no alternatives
    limit = max(1, min(opts.max_nodes, opts.max_cells // hands.shape[0]))
    try:
        tree = subgame_tree(state, betting, board, limit)
    except SubgameTooBig:
        if opts.runouts < 1:
            return Resolved(None, "too_big", seconds=time.perf_counter() - t0)
        try:  # the rest of the hand does not fit: stop at the street's end
            tree = build_subgame(state, betting, board, limit, depth_limited=True)
        except SubgameTooBig:
            return Resolved(None, "too_big", seconds=time.perf_counter() - t0)
        runouts = (opts.runouts, runout_seed(board))
    if previous is not None and previous[0].tree.kind[previous[1]] == _LEAF:
        # past a depth-limited solution's leaf its values are the run-outs' average, not
        # this board's: the blueprint's alternatives guard this street
        previous = None
    if opts.gadget == "none":
        alt = None
    elif previous is not None and my_range is not None:
        alt = continual_alternatives(previous, opp, my_range, best=opts.gadget == "safe")
    else:
        at, at_ranges = parent if parent is not None else (state, ranges)
        alt = _alternatives(policy, position, at_ranges, at, board, mine, blueprint_mine,
                            _own_sizes(policy, state.round) or responder, hands, runouts,
                            estimated=opts.gadget == "estimated")
    weights = theirs if alt is None else _gadget_weights(theirs, live)
    solver = SubgameSolver(state, board, [mine, weights] if me == 0 else [weights, mine], betting,
                           algorithm="dcfr", gadget=None if alt is None else (opp, alt),
                           runouts=None if runouts is None else runouts[0],
                           seed=0 if runouts is None else runouts[1], tree=tree, stop=stop)
    if started is not None:
        started(solver)
    done = 0
    while done < opts.iterations:
        step = min(10, opts.iterations - done)
        solver.solve(step)
        done += step
        if opts.seconds is not None and time.perf_counter() - t0 > opts.seconds:
            return Resolved(None, "timeout", mine, theirs, alt, time.perf_counter() - t0, runouts is not None)
    got = Resolved(solver, "solved", mine, theirs, alt, time.perf_counter() - t0, runouts is not None)
    if key is not None:
        kept = _preflop_kept(policy)
        kept[key] = got
        while len(kept) > PREFLOP_KEPT:
            kept.popitem(last=False)
    return got


#: First preflop re-solves kept per policy (the least recently used go first): the same
#: preflop history recurs hand after hand, and its re-solve is the same every time.
PREFLOP_KEPT = 16
_KEPT: weakref.WeakKeyDictionary[TranslatedPolicy, OrderedDict[Any, Resolved]] = weakref.WeakKeyDictionary()


def _preflop_kept(policy: TranslatedPolicy) -> OrderedDict[Any, Resolved]:
    kept = _KEPT.get(policy)
    if kept is None:
        kept = _KEPT[policy] = OrderedDict()
    return kept


def runout_seed(board: Sequence[int]) -> int:
    """The seed of a depth-limited subgame's run-outs: a function of the board alone, so
    a re-solve is the same wherever it is made, and every re-solve on a board shares its
    run-outs (and their showdown matrix)."""
    return zlib.crc32(",".join(str(int(c)) for c in board).encode())


def _betting(policy: TranslatedPolicy, options: ResolveOptions, street: int) -> tuple[SubgameBetting, Responder]:
    """The subgame's bets on ``street`` (the options' sizes and the blueprint's), and the
    same bets for a responder: the alternatives' where the blueprint names no sizes of
    its own (:func:`_own_sizes`)."""
    opts = options
    abstract = policy.tree.betting
    sizes = set(opts.sizes)
    cap, snap = opts.cap, 0.0
    if abstract is not None:
        st_ = abstract.street(street)
        sizes |= set(st_.first) | set(st_.later)
        snap = abstract.snap
        if cap is None and st_.cap is not None:
            cap = st_.cap + 1
    ordered = tuple(sorted(sizes))
    all_in = opts.all_in or (abstract is not None and (abstract.street(street).all_in_first
                                                      or abstract.street(street).all_in_later))
    past = None if cap is None else max(cap - (abstract.street(street).cap or cap) if abstract else 0, 0)
    return (SubgameBetting(sizes=ordered, all_in=all_in, cap=cap, snap=snap),
            Responder(sizes=ordered, all_in=all_in, past_cap=past))


def _own_sizes(policy: TranslatedPolicy, street: int) -> Responder | None:
    """A responder held to the blueprint's own sizes on ``street`` (None: the blueprint
    has no betting abstraction to name them)."""
    abstract = policy.tree.betting
    if abstract is None:
        return None
    st_ = abstract.street(street)
    sizes = tuple(sorted(set(st_.first) | set(st_.later)))
    all_in = st_.all_in_first or st_.all_in_later
    if not sizes and not all_in:
        return None
    return Responder(sizes=sizes, all_in=all_in, past_cap=0)


def _opponent_raise(action: Action, actor: int, position: int) -> bool:
    return actor != position and action.kind is ActionKind.RAISE


def _alternatives(policy: TranslatedPolicy, position: int, ranges: BlueprintRanges, state: State,
                  board: tuple[int, ...], mine: np.ndarray, blueprint_mine: np.ndarray,
                  responder: Responder, hands: np.ndarray, runouts: tuple[int, int] | None = None,
                  estimated: bool = False) -> np.ndarray:
    """The opponent's best-response values, per hand (in :func:`deck_hands` order),
    against the blueprint played on from ``state`` with the player's range ``mine``:
    each of the blueprint's mapping states keeps its share of each hand's weight.
    ``runouts``: stop at the street's end, as a depth-limited subgame does.
    ``estimated``: the opponent's values when it plays on as the blueprint instead of
    best responding (its mapping states in proportion to its blueprint reach through
    each, per hand)."""
    share = np.divide(mine, blueprint_mine, out=np.zeros_like(mine), where=blueprint_mine > 0)
    order, n = _walker_order(policy.game, hands)  # our row -> the walk's row
    states = {key: _to_walker((r0 if position == 0 else r1) * share, order, n)
              for key, (r0, r1) in ranges._states.items()}
    if not estimated:
        _, values = responder_values(policy, state, board, states, 1 - position, responder, runouts)
        return values[order]
    theirs = {key: (r1 if position == 0 else r0) for key, (r0, r1) in ranges._states.items()}
    total = sum(theirs.values())
    mass = float(total.sum())
    # a hand the blueprint never brings here is at each node in the proportion of all
    own = {key: _to_walker(np.where(total > 0, r / np.where(total > 0, total, 1.0),
                                    float(r.sum()) / mass if mass > 0 else 1.0 / len(theirs)), order, n)
           for key, r in theirs.items()}
    _, values = blueprint_values(policy, state, board, states, own, 1 - position, runouts)
    return values[order]


#: The least weight an opponent hand enters the gadget with, relative to the most likely
#: one: every hand must have some, or the re-solved strategy does not guard it.
GADGET_FLOOR = 0.01


def _gadget_weights(theirs: np.ndarray, live: np.ndarray) -> np.ndarray:
    """The opponent's hands' weights into the gadget: its blueprint range scaled to a
    largest weight of 1, floored at :data:`GADGET_FLOOR` for every hand it may hold."""
    top = float(theirs.max())
    scaled = theirs / top if top > 0 else np.ones_like(theirs)
    return np.where(live, np.maximum(scaled, GADGET_FLOOR), 0.0)


def _same_betting(a: State, b: State) -> bool:
    return tuple(x.action for x in a.history) == tuple(x.action for x in b.history)


def _row_of(hands: np.ndarray, hole: Sequence[int]) -> int:
    key = sorted(int(c) for c in hole)
    rows = np.flatnonzero((np.sort(hands, axis=1) == np.asarray(key)).all(axis=1))
    if rows.size != 1:
        raise ValueError(f"hand {list(hole)} is not a hand of this deck")
    return int(rows[0])


@functools.lru_cache(maxsize=8)
def _deck_to_walker(game: Game) -> np.ndarray:
    """For each row of :func:`deck_hands`, the row of the real-game walks' hands (every
    hand of the deck in dealing order, :class:`~solver.evaluation._cards.CardLayer`)."""
    walker = np.array(list(combinations(deck_cards(game.num_ranks, game.num_suits), game.num_hole_cards)),
                      dtype=np.int64)
    return _reorder(deck_hands(game), walker)


def _walker_order(game: Game, hands: np.ndarray) -> tuple[np.ndarray, int]:
    """``hands`` (:func:`deck_hands`) row -> the walks' row, and the walks' row count;
    computed once per game."""
    order = _deck_to_walker(game)
    if order.shape[0] != hands.shape[0]:
        raise ValueError("the hands are not the deck's")
    return order, order.shape[0]


def _reorder(ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """For each row of ``ours``, the row of ``theirs`` holding the same cards."""
    index = {tuple(sorted(h)): i for i, h in enumerate(theirs.tolist())}
    return np.array([index[tuple(sorted(h))] for h in ours.tolist()], dtype=np.int64)


def _to_walker(v: np.ndarray, order: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n)
    out[order] = v
    return out
