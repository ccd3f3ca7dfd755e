"""Exact real-game exploitability of the re-solving player (:class:`~solver.resolve.player.ResolvingWalk`).

The re-solving player is a fixed function of the public history, its own cards and its
own earlier random draws: a re-solve's budget is an iteration count and its solver is
deterministic, so the same history gives the same subgame solution. Its strategy can
therefore be tabulated over the real game, and a best responder that may bet every
legal amount computed exactly, as :mod:`solver.evaluation.real_response` does for the
translated player (the same walk: vectors over the player's (board, hand) rows, the
maximum over the responder's actions, sums over the player's).

What the walk carries for the player, instead of the translated player's abstract node,
is everything :class:`ResolvingWalk` remembers between decisions, as a key with a reach
vector (the probability, per row, that the player took the real actions so far *and*
its draws put it in that state):

* the blueprint walk's abstract node (or ``LOST``): the walk keeps following the hand,
  translating the opponent's actions and the player's own re-solved ones, because it
  decides when the opponent has left the tree and plays where a re-solve cannot;
* whether the opponent's last action was off the tree;
* the *lineage*: the history lengths at which the re-solves since the last blueprint
  decision were made, which fixes the player's range at the next re-solve (the last
  solution's root range times its probabilities of the actions taken);
* the node of the last solution the real history has reached (-1: none), and whether
  the opponent left that solution's tree there (the next re-solve's alternatives are
  its values at that node: continual re-solving).

Each re-solve is made once per (history, board, lineage) by
:func:`~solver.resolve.player.resolve_subgame`, the very function the playing player
calls, with its inputs rebuilt from the public history (the blueprint's Bayes ranges,
:class:`~solver.resolve.ranges.BlueprintRanges`). Boards are walked one by one (no suit
classes: a re-solve sees the actual cards). The walk is a tree: a subtree's value
depends on the whole history, so nothing is memoized; its size is the real tree the
responder may walk times the actions the player takes with positive probability, which
a small stack keeps within reach (see ``bench/resolve_exact.py``).

Progress is counted in nodes of a total known before the walk
(:func:`resolved_walk_nodes`): the real tree in which the player takes every action of
its subgames' betting (:func:`~solver.resolve.player.resolve_subgame` builds its trees
with it; the blueprint's own sizes are among them) and the responder its own. The walk
counts the nodes it visits and, where the player never takes an action or never reaches
a node, the nodes of the subtree it passes over, so that the count ends at the total.
A :class:`~poker._stop.Stop` ends the walks at their next node or re-solving pass
(:class:`~poker._stop.Interrupted`), never with partial figures.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from poker._stop import Stop
from poker.game import Game
from poker.state import Action, State

from ..evaluation.real_response import (RealResult, Responder, TranslatedPlayer, _all_close, _legal_actions,
                                        _state_key, _TOL, _Walker)
from ..play.policy import LOST, TranslatedPolicy
from .player import (ResolveOptions, Resolved, _betting, _opponent_raise, _reorder, descend, followable,
                     resolve_subgame, solution_step)
from .ranges import BlueprintRanges
from .subgame import SubgameBetting, deck_hands

__all__ = ["resolved_exploitability", "resolved_head_to_head", "resolved_walk_nodes", "ResolvingPlayer",
           "ResolvingRules", "WalkSize"]

#: (blueprint walk node or LOST, opponent off the tree 0/1, lineage, solution node or -1,
#: the opponent left the solution there 0/1)
Key = tuple[int, int, tuple[int, ...], int, int]


class ResolvingRules(TranslatedPlayer):
    """The re-solving player's rules over rows of private hands (module docstring): its
    mapping states (:data:`Key` -> reach over the rows) split at the other seat's actions
    (:meth:`after_opponent`) and at its own (:meth:`own_moves`), each re-solve made once
    per (history, board, lineage). A subclass says which boards the rows are laid out
    over (:meth:`_boards`): every board of a street for the exact walks
    (:class:`ResolvingPlayer`), one deal's for a range along one hand
    (:func:`solver.resolve.opponent.resolving_range`)."""

    #: the mapping state of a hand's start: the blueprint's root, nothing re-solved yet
    start_key: Key = (0, 0, (), -1, 0)

    def _setup(self, options: ResolveOptions, game: Game, position: int, rows: np.ndarray) -> None:
        """The rules' own state; ``rows``: the private hand of each row of one board."""
        self.options = options
        self.game = game
        self.position = int(position)
        self.hands = deck_hands(game)
        self.to_deck = _reorder(np.asarray(rows, dtype=np.int64), self.hands)  # row -> deck row
        self.first = options.first_street if options.first_street is not None else max(game.num_rounds - 2, 0)
        self._ranges: dict[tuple[Any, ...], BlueprintRanges] = {}
        #: the hands' buckets by (street, board), shared by every history's ranges
        self._bucket_rows: dict[tuple[int, tuple[int, ...]], np.ndarray] = {}
        self._states: dict[tuple[Action, ...], State] = {}
        self._solutions: dict[tuple[Any, ...], Resolved] = {}
        self.resolves = 0
        self.failed = 0
        self.resolve_seconds = 0.0
        #: stops the re-solves (and the walks that check it) when set
        self.stop: Stop | None = None

    def _boards(self, state: State) -> list[tuple[tuple[int, ...], slice]]:
        """Each board through ``state``'s street with the slice of the reach vectors'
        rows that lie on it."""
        raise NotImplementedError

    # -- what the player computes from the public history

    def _cards_through(self, board: tuple[int, ...], street: int) -> tuple[int, ...]:
        return board[: sum(self.game.num_board_cards[: street + 1])]

    def _replay(self, history: tuple[Action, ...]) -> State:
        got = self._states.get(history)
        if got is None:
            got = State.new_hand(self.game) if not history else self._replay(history[:-1]).apply(history[-1])
            self._states[history] = got
        return got

    def _blueprint_ranges(self, history: tuple[Action, ...], board: tuple[int, ...]) -> BlueprintRanges:
        """The blueprint's ranges after ``history`` (``board``: the cards through the
        street it ends on, or later), made from those one action earlier, which are kept
        too: the same :meth:`BlueprintRanges.after` calls in the same order as a replay
        of the whole history, so the same numbers, bit for bit."""
        key = (history, board)
        got = self._ranges.get(key)
        if got is None:
            if not history:
                got = BlueprintRanges(self.policy, self.hands, self._bucket_rows)
            else:
                before = self._replay(history[:-1])
                cards = self._cards_through(board, before.round)
                got = self._blueprint_ranges(history[:-1], cards).copy()
                got.after(before, cards, history[-1])
            self._ranges[key] = got
        return got

    def _solution(self, history: tuple[Action, ...], board: tuple[int, ...], lineage: tuple[int, ...]) -> Resolved:
        """The re-solve made at ``history`` (of length ``lineage[-1]``) on ``board`` (its
        cards through that street) after the re-solves of ``lineage[:-1]``."""
        key = (history, board, lineage)
        got = self._solutions.get(key)
        if got is None:
            state = self._replay(history)
            carried, previous = None, None
            if len(lineage) > 1:
                carried, solver, node = self._carried(history, board, lineage[:-1])
                previous = (solver, node)
            parent = None
            if carried is None and state.history and _opponent_raise(
                    state.history[-1].action, state.history[-1].actor, self.position):
                parent = (self._replay(history[:-1]), self._blueprint_ranges(history[:-1], board))
            got = resolve_subgame(self.policy, self.options, self.position, state, board,
                                  self._blueprint_ranges(history, board), carried, self.hands, previous, parent,
                                  stop=self.stop)
            self._solutions[key] = got
            self.resolve_seconds += got.seconds
            if got.solver is None:
                self.failed += 1
            else:
                self.resolves += 1
        return got

    def _carried(self, history: tuple[Action, ...], board: tuple[int, ...],
                 lineage: tuple[int, ...]) -> tuple[np.ndarray, Any, int]:
        """The player's range after ``history`` as :class:`ResolvingWalk` carries it (the
        root range of the last re-solve of ``lineage`` times that solution's
        probabilities of the player's actions while the history stayed on its tree),
        that solution, and the node where the history is in it or left it."""
        k = lineage[-1]
        state = self._replay(history[:k])
        res = self._solution(history[:k], self._cards_through(board, state.round), lineage)
        assert res.solver is not None and res.mine is not None
        tree, r, node, real = res.solver.tree, res.mine.copy(), 0, state
        for a in history[k:]:
            step = solution_step(tree, node, real, a, board)
            if step is None:
                break
            at, i, node = step
            if real.actor == self.position:
                r = r * res.solver.average(at)[i]
            real = real.apply(a)
        return r, res.solver, descend(tree, node, board)

    def _tree_of(self, history: tuple[Action, ...], board: tuple[int, ...], lineage: tuple[int, ...]) -> Resolved:
        k = lineage[-1]
        street = self._replay(history[:k]).round
        return self._solution(history[:k], self._cards_through(board, street), lineage)

    # -- the blueprint walk's node

    def _translate(self, walk: int, state: State, action: Action, own: bool) -> list[tuple[int, float]]:
        """The walk's node after ``action`` at ``state`` (HandWalk.update): an action of
        the player's own that the walk did not choose is translated like the opponent's,
        but where the tree is not in step the walk waits instead of getting lost."""
        if walk == LOST:
            return [(LOST, 1.0)]
        pol = self.policy
        node = pol.sync(walk, state)
        if not pol.in_step(node, state):
            return [(node, 1.0)] if own else [(LOST, 1.0)]
        outcomes, _ = pol.translate(node, state, action)
        return [(c, p) for c, p in outcomes]

    def _off(self, walk: int, state: State, action: Action) -> int:
        """1 when the opponent's ``action`` leaves the walk's tree (ResolvingWalk._leaves_tree)."""
        if walk == LOST:
            return 1
        pol = self.policy
        node = pol.sync(walk, state)
        if not pol.in_step(node, state):
            return 1
        return 0 if pol.translate(node, state, action)[1] else 1

    # -- the walks' hooks

    def after_opponent(self, ms: dict, state: State, action: Action) -> dict:  # type: ignore[override]
        history = tuple(x.action for x in state.history)
        out: dict[Key, np.ndarray] = {}
        for (walk, _, lineage, sol, left), reach in ms.items():
            off = self._off(walk, state, action)
            moves = self._translate(walk, state, action, own=False)
            following = sol >= 0 and not left
            for board, rows in self._boards(state) if following else [((), slice(None))]:
                if not reach[rows].any():
                    continue
                nxt, gone = sol, left
                if following:
                    tree = self._tree_of(history, board, lineage).solver.tree  # type: ignore[union-attr]
                    step = solution_step(tree, sol, state, action, board)
                    nxt, gone = (descend(tree, sol, board), 1) if step is None else (step[2], 0)
                for w, p in moves:
                    _add_rows(out, (w, off, lineage, nxt, gone), reach, rows, p)
        return out

    def own_moves(self, ms: dict, state: State) -> dict[Action, dict]:  # type: ignore[override]
        history = tuple(x.action for x in state.history)
        k = len(history)
        pol = self.policy
        starts = state.round in self.options.street_starts and not any(
            a.actor == self.position for a in state.round_actions)
        out: dict[Action, dict[Key, np.ndarray]] = {}
        for (walk, off, lineage, sol, left), reach in ms.items():
            for board, rows in self._boards(state):
                part = reach[rows]
                if not part.any():
                    continue
                res, node, lin = None, -1, lineage
                if sol >= 0 and not left:
                    res = self._tree_of(history, board, lineage)
                    tree = res.solver.tree  # type: ignore[union-attr]
                    node = descend(tree, sol, board)
                    node = node if followable(tree, node, state) else -1
                if node < 0 and state.round >= self.first and (off or starts or lineage):
                    lin = (*lineage, k)
                    res = self._solution(history, board, lin)
                    node = 0 if res.solver is not None else -1
                if node >= 0:
                    assert res is not None and res.solver is not None
                    tree = res.solver.tree
                    probs = res.solver.average(node)[:, self.to_deck]  # actions x walker hands
                    for i, a in enumerate(tree.actions[node]):
                        column = probs[i]
                        if not (part * column).any():
                            continue
                        nxt = tree.children[node][i]
                        for w, p in self._translate(walk, state, a, own=True):
                            _add_rows(out.setdefault(a, {}), (w, off, lin, nxt, 0), reach * _tile(column, reach, rows),
                                      rows, p)
                    continue
                # the blueprint plays, and the range carried from re-solves is dropped
                if walk != LOST:
                    nd = pol.sync(walk, state)
                    if pol.in_step(nd, state):
                        first = pol._child[nd]
                        for i, column in self._moves(nd):
                            a = pol.real_action(first + i, state)
                            _add_rows(out.setdefault(a, {}), (first + i, off, (), -1, 0), reach * column, rows, 1.0)
                        continue
                    _add_rows(out.setdefault(Action.call(), {}), (nd, off, (), -1, 0), reach, rows, 1.0)
                else:
                    _add_rows(out.setdefault(Action.call(), {}), (LOST, off, (), -1, 0), reach, rows, 1.0)
        before = sum(ms.values())
        after = sum((r for m in out.values() for r in m.values()), np.zeros_like(before))
        if not _all_close(before, after, _TOL):
            raise AssertionError(f"the re-solving player's action probabilities do not sum to 1 at "
                                 f"{state.betting_string()!r}")
        return out



class WalkSize:
    """The nodes a walk of the re-solving player counts (module docstring): the real tree
    below a state in which the player takes every action of its subgames' betting on the
    street and the best responder in ``seat`` its own (``responder``'s bets at the player's
    raise ``caps``; every legal amount for None); ``seat`` None: the player's betting in
    both seats (the head-to-head walks). Memoized on the real state; ``stop`` ends a long
    count (:class:`~poker._stop.Interrupted`)."""

    def __init__(self, policy: TranslatedPolicy, options: ResolveOptions, responder: Responder | None,
                 caps: list[int | None], stop: Stop | None = None) -> None:
        game = policy.game
        self._bets: list[SubgameBetting] = [_betting(policy, options, r)[0] for r in range(game.num_rounds)]
        self.responder = responder
        self.caps = caps
        self.stop = stop
        self._memo: dict[tuple[Any, ...], int] = {}

    def player_actions(self, state: State) -> list[Action]:
        """The actions the player may take at ``state`` (it is to act)."""
        return self._bets[state.round].actions(state)

    def __call__(self, state: State, seat: int | None) -> int:
        """Nodes of the tree below ``state``, itself included."""
        key = (_state_key(state), seat)
        got = self._memo.get(key)
        if got is not None:
            return got
        if self.stop is not None:
            self.stop.check()
        n = 1
        if state.actor is not None:
            if state.actor != seat:
                actions: list[Action] = self.player_actions(state)
            elif self.responder is None:
                actions = list(_legal_actions(state))
            else:
                actions = self.responder.actions(state, self.caps[state.round])
            for a in actions:
                n += self(state.apply(a), seat)
        self._memo[key] = n
        return n

    def passed_over(self, state: State, taken: Any, seat: int | None) -> int:
        """Nodes below the player's actions at ``state`` that are not in ``taken``."""
        return sum(self(state.apply(a), seat) for a in self.player_actions(state) if a not in taken)


class ResolvingPlayer(ResolvingRules, _Walker):
    """The walks over the real game against the re-solving player (module docstring):
    the translated player's walker with the re-solving player's rules at its actions
    and the opponent's, its rows every board's hands. With :attr:`sizes` set, the best
    responses add to :attr:`passed` the nodes of the subtrees they pass over."""

    def __init__(self, policy: TranslatedPolicy, options: ResolveOptions, game: Game | None = None,
                 responder: Responder | None = None) -> None:
        _Walker.__init__(self, policy, game or policy.game, memo=False, responder=responder, symmetric=False)
        self._setup(options, self.game, 1, np.array(self.cards.hands, dtype=np.int64))
        #: the walks' size, to count progress by (None: not counted)
        self.sizes: WalkSize | None = None
        #: nodes of :attr:`sizes` the walks passed over (with :attr:`nodes`, what they did)
        self.passed = 0
        self._counting: int | None = None  # the responder's seat while a best response counts

    def _boards(self, state: State) -> list[tuple[tuple[int, ...], slice]]:
        h = self.cards.n_hands
        return [(tuple(b), slice(i * h, (i + 1) * h)) for i, b in enumerate(self.cards.boards[state.round])]

    def own_moves(self, ms: dict, state: State) -> dict[Action, dict]:  # type: ignore[override]
        out = super().own_moves(ms, state)
        if self.sizes is not None and self._counting is not None:
            self.passed += self.sizes.passed_over(state, out, self._counting)
        return out

    def after_opponent(self, ms: dict, state: State, action: Action) -> dict:  # type: ignore[override]
        out = super().after_opponent(ms, state, action)
        if not out and self.sizes is not None and self._counting is not None:
            # the walk returns at once below (the player never gets there)
            self.passed += self.sizes(state.apply(action), self._counting)
        return out

    def best_response(self, seat: int) -> float:
        """Value (chips per game) of the real best responder in ``seat`` against the
        re-solving player in the other."""
        self.position = 1 - seat
        self._solutions.clear()
        self._ranges.clear()
        root = State.new_hand(self.game)
        ms = {(0, 0, (), -1, 0): np.ones(self.cards.n_rows(0))}
        self._counting = seat
        try:
            return float(self.br(root, 0, ms, seat).sum())
        finally:
            self._counting = None


def _tile(column: np.ndarray, reach: np.ndarray, rows: slice) -> np.ndarray:
    """``column`` (one board's hands) laid over ``reach``'s rows at ``rows`` (zeros
    elsewhere)."""
    out = np.zeros_like(reach)
    out[rows] = column
    return out


def _add_rows(out: dict, key: Key, reach: np.ndarray, rows: slice, p: float) -> None:
    """Add ``p`` times ``reach``'s ``rows`` (the rest zero) to ``out[key]``."""
    part = np.zeros_like(reach)
    part[rows] = reach[rows] * p
    have = out.get(key)
    out[key] = part if have is None else have + part


def resolved_walk_nodes(policy: TranslatedPolicy, options: ResolveOptions, game: Game | None = None, *,
                        responder: Responder | None = None, stop: Stop | None = None) -> tuple[int, int]:
    """The nodes the walks count (module docstring), known before they run: of
    :func:`resolved_exploitability`'s two best responses with ``responder``, and of
    :func:`resolved_head_to_head`'s two seats."""
    g = game or policy.game
    if g != policy.game:
        raise ValueError("the policy was made for a different game")
    caps = [policy.tree.betting.street(r).cap if policy.tree.betting is not None else None
            for r in range(g.num_rounds)]
    sizes = WalkSize(policy, options, responder, caps, stop)
    root = State.new_hand(g)
    return sizes(root, 0) + sizes(root, 1), 2 * sizes(root, None)


def _check_budget(options: ResolveOptions) -> None:
    if options.seconds is not None:
        raise ValueError("an exact evaluation needs an iteration budget: a seconds cap makes the player depend on the clock")


def resolved_exploitability(
    policy: TranslatedPolicy,
    options: ResolveOptions,
    game: Game | None = None,
    *,
    responder: Responder | None = None,
    progress: Callable[[int], None] | None = None,
    stop: Stop | None = None,
) -> tuple[RealResult, dict[str, Any]]:
    """Exploitability of the re-solving player (``policy`` re-solved with ``options``)
    in the real ``game`` (default: the policy's), exactly (module docstring), against a
    responder that may bet every legal amount (or ``responder``'s bets). Returns the
    result, as :func:`~solver.evaluation.real_response.real_exploitability` gives it
    for the translated player (no self-play value), and the re-solves it made:
    ``{"resolves", "failed", "resolve_seconds"}``.

    ``progress(done)``: called at every node the walks evaluate, with the nodes done
    (visited or passed over), which reach the first figure of :func:`resolved_walk_nodes`
    at the end. ``stop``: once set, the walks and their re-solves end and
    :class:`~poker._stop.Interrupted` is raised."""
    g = game or policy.game
    _check_budget(options)
    t0 = time.perf_counter()
    walker = ResolvingPlayer(policy, options, g, responder)
    walker.stop = stop
    if progress is not None:
        walker.sizes = WalkSize(policy, options, responder, walker.caps, stop)
    if progress is not None or stop is not None:

        def at_node(nodes: int) -> None:
            if stop is not None:
                stop.check()
            if progress is not None:
                progress(nodes + walker.passed)

        walker.progress = at_node
    br0 = walker.best_response(0)
    br1 = walker.best_response(1)
    if progress is not None:
        progress(walker.nodes + walker.passed)  # the subtrees passed over after the last node
    expl = (br0 + br1) / 2.0
    result = RealResult(game=g.name, mapping=policy.mapping, exploitability=expl,
                        mbb_per_game=1000.0 * expl / g.big_blind, br=(br0, br1), value=None,
                        nodes=walker.nodes, memo_hits=0, tree_nodes=None, seconds=time.perf_counter() - t0)
    return result, {"resolves": walker.resolves, "failed": walker.failed, "resolve_seconds": walker.resolve_seconds}


def resolved_head_to_head(policy: TranslatedPolicy, options: ResolveOptions, game: Game | None = None, *,
                          progress: Callable[[int], None] | None = None,
                          stop: Stop | None = None) -> tuple[float, float]:
    """The re-solving player's exact expected value (chips per game) against its own
    blueprint played through translation, in seat 0 and in seat 1: both players'
    mixtures over their draws are walked exactly (no sampling), over every deal. A
    player that never re-solves scores the blueprint's self-play value in seat 0 and its
    negative in seat 1 (a test). ``progress`` and ``stop`` as in
    :func:`resolved_exploitability` (the nodes reach the second figure of
    :func:`resolved_walk_nodes`)."""
    g = game or policy.game
    _check_budget(options)
    walker = ResolvingPlayer(policy, options, g)
    walker.stop = stop
    cards = walker.cards
    sizes = WalkSize(policy, options, None, walker.caps, stop) if progress is not None else None
    done = [0]  # nodes visited or passed over

    def value(state: State, street: int, ms: tuple[dict, dict], seat: int) -> float:
        if not ms[0] or not ms[1]:  # a branch one seat never reaches
            if sizes is not None:
                done[0] += sizes(state, None)
            return 0.0
        if stop is not None:
            stop.check()
        done[0] += 1
        if progress is not None:
            progress(done[0])
        if state.round != street:
            ms = tuple({k: cards.expand(r, street, state.round) for k, r in m.items()} for m in ms)  # type: ignore[assignment]
            street = state.round
        if state.actor is None:
            return cards.hand_value(state, street, sum(ms[0].values()), sum(ms[1].values()))
        actor = state.actor
        total = 0.0
        if actor == seat:  # the re-solving player acts; the blueprint hears it
            moves = walker.own_moves(ms[actor], state)
        else:
            moves = TranslatedPlayer.own_moves(walker, ms[actor], state)
        if sizes is not None:
            done[0] += sizes.passed_over(state, moves, None)
        for a, mine in moves.items():
            other = ms[1 - actor]
            theirs = (TranslatedPlayer.after_opponent(walker, other, state, a) if actor == seat
                      else walker.after_opponent(other, state, a))
            total += value(state.apply(a), street, (mine, theirs) if actor == 0 else (theirs, mine), seat)
        return total

    out = []
    n = cards.n_rows(0)
    for seat in (0, 1):
        walker.position = seat
        walker._solutions.clear()
        walker._ranges.clear()
        ms: list[dict] = [{}, {}]
        ms[seat] = {(0, 0, (), -1, 0): np.ones(n)}
        ms[1 - seat] = {0: np.ones(n)}
        v0 = value(State.new_hand(g), 0, (ms[0], ms[1]), seat)
        if progress is not None:
            progress(done[0])
        out.append(v0 if seat == 0 else -v0)
    return out[0], out[1]
