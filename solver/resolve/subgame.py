"""A subgame solved in vector form, and the re-solving gadget that keeps the solution
safe.

The subgame is rooted at a real public state: its betting tree is built from the real
chips (:func:`build_subgame`: fold, call, raises of some pot fractions after calling,
all-in, extra raise-tos such as the opponent's actual bet, at most ``cap`` raises a
street), the cards of the streets still to come are chance nodes with every set of new
cards (the river enumerated on the turn; each card's subtree its own copy, so the
strategy may depend on it), and both players' ranges over every private hand of the deck
are given (zero for hands that hold a board card). Rooted at the first street with
uniform ranges it is the whole game: limit Leduc's value comes out at -0.0856 (a test).

Where the rest of the hand is too big (preflop and flop on the full deck: millions of
boards), the tree is depth-limited: it stops where the root's street ends with cards to
come, or where both players are all in before the last street, at a leaf whose value is
the pot shown down over seeded run-outs (:class:`solver.evaluation.runouts.RunOuts`,
every board where there are few). For an all-in that is the hand's value; with chips
behind it is the value of checking the hand down (local best response's assumption,
Lisý & Bowling 2017), not yet the blueprint's continuation that Brown, Sandholm & Amos
2018 put at the leaves. The leaves' values are one matrix product per pass.

:class:`SubgameSolver` runs counterfactual regret minimization in vector form (Johanson,
Bard, Lanctot, Gibson & Bowling 2012: one walk per player and iteration, one vector per
node over all private hands; terminal values in O(n) by
:class:`solver.evaluation._terminal.HandValues`), with alternating updates and either

* CFR+ (Tammelin 2014, "Solving large imperfect information games using CFR+"):
  regret-matching+ (cumulative regrets floored at zero after each update) and the
  average strategy weighted by the iteration number; or
* Discounted CFR (Brown & Sandholm 2019, "Solving imperfect-information games via
  discounted regret minimization", AAAI, section 4): before iteration ``t`` is added,
  positive cumulative regrets are multiplied by ``t^a / (t^a + 1)``, negative ones by
  ``t^b / (t^b + 1)`` and the average-strategy sums by ``(t / (t + 1))^g``, with the
  paper's recommended ``a, b, g = 3/2, 0, 2``.

Counterfactual values are in chips of the whole hand (each player's total spent, as the
hand's result counts it), summed over the other player's hands with its reach: ``v_p(h) =
sum_{h' disjoint} r_o(h') u_p(h, h')``.

The gadget (Burch, Johanson & Bowling 2014, "Solving imperfect information games using
decomposition", AAAI; DeepStack's continual re-solving, Moravčík et al. 2017): the
opponent's range is not trusted. At the root, each opponent hand ``h'`` chooses between
entering the subgame and taking its alternative value ``alt(h')`` (its counterfactual
value in the strategy being replaced); its reach into the subgame is its probability of
entering, learned by regret matching like any decision. The player's strategy then holds
every opponent hand's counterfactual value of entering near or below its alternative, so
the re-solved strategy is no more exploitable than the one it replaces (Burch et al.
2014, theorem 1, up to the solving error).

A solve stops when asked (:class:`poker._stop.Stop`, given to :class:`SubgameSolver`): the
kernels read the flag at every decision and chance node, fold and final board they work
on (a pass over a big tree is seconds long) and count them (:attr:`SubgameSolver.done`,
for a progress bar within a solve); a
stopped iteration raises :class:`poker._stop.Interrupted`, and the solver, half-updated,
is dropped. The kernels release the GIL, so a solve run off the main thread leaves the
signal handlers free to run.
"""

from __future__ import annotations

from collections.abc import Sequence
import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any
from itertools import combinations

import numpy as np

from numba import njit

from abstraction.betting import size_to_raise_to
from poker._stop import Interrupted, Stop, counter
from poker.cards import deck_cards
from poker.game import Game
from poker.state import Action, State

from ..evaluation._terminal import HandValues, _hand_disjoint, _hand_showdown, _showdown_rows
from ..evaluation.runouts import RunOuts

__all__ = ["KERNELS", "SubgameBetting", "SubgameSolver", "SubgameTooBig", "SubgameTree", "build_subgame", "deck_hands",
           "subgame_tree", "warm_up"]

_DECISION, _FOLD, _SHOWDOWN, _CHANCE, _LEAF = 0, 1, 2, 3, 4
#: Most complete boards a subgame may enumerate (its tree is copied per board).
MAX_FINAL_BOARDS = 5_000
#: Showdowns of one final board swept at once: 32 rows cost 5.7 us a row on a full-deck
#: river, 16 and 64 rows 7.0 and 7.1, 256 rows 20 (the per-card sums leave the cache);
#: one at a time, 19 us.
SHOWDOWN_ROWS = 32
#: Discounted CFR's recommended parameters (Brown & Sandholm 2019).
DCFR_ALPHA, DCFR_BETA, DCFR_GAMMA = 1.5, 0.0, 2.0


@njit(cache=True, nogil=True)
def _positive_totals(regrets, r0, na, total):  # pragma: no cover - compiled
    """Regret matching's denominators of a node's ``na`` actions (rows from ``r0``), every
    hand at once into ``total``: the sum of each hand's positive regrets, added in action
    order (a row at a time, so the hands run along memory)."""
    total[:] = 0.0
    for i in range(na):
        for h in range(total.shape[0]):
            x = regrets[r0 + i, h]
            if x > 0.0:
                total[h] += x


@njit(cache=True, inline="always")
def _sigma(regrets, row, h, total, na):  # pragma: no cover - compiled
    """Regret matching's probability of the action in ``row`` for hand ``h`` (``total``:
    :func:`_positive_totals`; uniform where no regret is positive)."""
    x = regrets[row, h]
    t = total[h]
    return (x if x > 0.0 else 0.0) / t if t > 0.0 else 1.0 / na


@njit(cache=True, nogil=True)
def _reach_pass(p, kind, player, kid_ptr, kids, row_off, board_of, live, regrets, reach_p, reach_o, flag,
                done):  # pragma: no cover - compiled
    """The first part of one traverser's CFR update over the flat subgame tree (nodes in
    pre-order, so a parent comes before its children): both reaches top-down
    (``reach_p[0]``, ``reach_o[0]`` given; a chance node's child masks the hands that hold
    its new cards, ``live[board_of[child]]``), by regret matching at the decisions (node
    by node, each action's row of hands in one sweep: the tables are actions x hands, so
    the hands run along memory; on a big tree, blocks of hands taken across every node
    measured 1.8 times slower, and a sweep per hand over the actions 1.6 times slower on
    a 105-node river subgame). Returns early once ``flag[0]`` is set (a stop: the pass is
    incomplete), read at every decision and chance node, which ``done[0]`` counts (the
    store in the same loop keeps the compiler from hoisting the flag's load out of it)."""
    n_nodes, n_hands = reach_p.shape
    total = np.empty(n_hands)
    for n in range(n_nodes):
        k = kind[n]
        if k != _DECISION and k != _CHANCE:
            continue
        if flag[0] != 0:
            return
        done[0] += 1
        if k == _CHANCE:
            for j in range(kid_ptr[n], kid_ptr[n + 1]):
                c = kids[j]
                b = board_of[c]
                for h in range(n_hands):
                    reach_p[c, h] = reach_p[n, h] * live[b, h]
                    reach_o[c, h] = reach_o[n, h] * live[b, h]
            continue
        a0 = kid_ptr[n]
        na = kid_ptr[n + 1] - a0
        r0 = row_off[n]
        mine = player[n] == p
        _positive_totals(regrets, r0, na, total)
        for i in range(na):
            c = kids[a0 + i]
            for h in range(n_hands):
                sig = _sigma(regrets, r0 + i, h, total, na)
                if mine:
                    reach_p[c, h] = reach_p[n, h] * sig
                    reach_o[c, h] = reach_o[n, h]
                else:
                    reach_o[c, h] = reach_o[n, h] * sig
                    reach_p[c, h] = reach_p[n, h]


@njit(cache=True, inline="always")
def _in_chips(value, n, chips, live):  # pragma: no cover - compiled
    """Terminal ``n``'s per-hand sums times its ``chips``, zero for the hands its board
    holds (``live``)."""
    for h in range(value.shape[1]):
        value[n, h] *= chips * live[h]


@njit(cache=True, nogil=True)
def _terminal_pass(p, folds, showdowns, shown_from, player, spent, board_of, hands, order, ranks, live, reach_o,
                   value, flag, done):  # pragma: no cover - compiled
    """The traverser's values at the folds and showdowns, each from the whole opponent
    reach vector at it, in O(n) (:mod:`solver.evaluation._terminal`). ``showdowns`` are
    grouped by final board (those of final board f from ``shown_from[f]``) and swept
    :data:`SHOWDOWN_ROWS` at a time (:func:`_showdown_rows`; one at a time below three,
    where that is faster). Stops and counts as :func:`_reach_pass` does: a fold, or a
    final board's showdowns, at a time."""
    n_hands = value.shape[1]
    for t in range(folds.shape[0]):
        if flag[0] != 0:
            return
        done[0] += 1
        n = folds[t]
        b = board_of[n]
        _hand_disjoint(hands, reach_o[n : n + 1], value[n : n + 1])
        _in_chips(value, n, -spent[n, p] if player[n] == p else spent[n, 1 - p], live[b])
    rows = np.empty((SHOWDOWN_ROWS, n_hands))
    got = np.empty((SHOWDOWN_ROWS, n_hands))
    for f in range(shown_from.shape[0] - 1):
        if flag[0] != 0:
            return
        lo, hi = shown_from[f], shown_from[f + 1]
        done[0] += hi - lo
        for c0 in range(lo, hi, SHOWDOWN_ROWS):
            c1 = min(hi, c0 + SHOWDOWN_ROWS)
            if c1 - c0 >= 3:
                for m in range(c1 - c0):
                    rows[m] = reach_o[showdowns[c0 + m]]
                _showdown_rows(hands, order[f], ranks[f], rows[: c1 - c0], got[: c1 - c0])
                for m in range(c1 - c0):
                    value[showdowns[c0 + m]] = got[m]
            else:
                for t in range(c0, c1):
                    n = showdowns[t]
                    _hand_showdown(hands, order[f : f + 1], ranks[f : f + 1], reach_o[n : n + 1], value[n : n + 1])
        for t in range(lo, hi):
            n = showdowns[t]
            _in_chips(value, n, spent[n, p], live[board_of[n]])


@njit(cache=True, nogil=True)
def _value_pass(p, kind, player, kid_ptr, kids, row_off, chance_p, regrets, avg, reach_p, value, weight,
                plus, flag, done):  # pragma: no cover - compiled
    """The last part: counterfactual values bottom-up into ``value`` at the decisions and
    chance nodes (a chance node: its children's sum times the probability of one card;
    terminals and leaves are filled before), and the traverser's regrets (floored at zero
    with ``plus``) and average sums (``weight`` x its reach x its strategy) at its nodes.
    Each action's row of hands in one sweep, as in :func:`_reach_pass`; every hand's sums
    are added in action order, as a sweep per hand would. Stops and counts as
    :func:`_reach_pass` does."""
    n_nodes, n_hands = value.shape
    total = np.empty(n_hands)
    acc = np.empty(n_hands)
    for n in range(n_nodes - 1, -1, -1):
        k = kind[n]
        if k != _DECISION and k != _CHANCE:
            continue
        if flag[0] != 0:
            return
        done[0] += 1
        a0 = kid_ptr[n]
        na = kid_ptr[n + 1] - a0
        acc[:] = 0.0
        if k == _CHANCE or player[n] != p:
            scale = chance_p[n] if k == _CHANCE else 1.0
            for i in range(na):
                c = kids[a0 + i]
                for h in range(n_hands):
                    acc[h] += value[c, h]
            for h in range(n_hands):
                value[n, h] = acc[h] * scale
            continue
        r0 = row_off[n]
        _positive_totals(regrets, r0, na, total)
        for i in range(na):
            c = kids[a0 + i]
            for h in range(n_hands):
                sig = _sigma(regrets, r0 + i, h, total, na)
                acc[h] += sig * value[c, h]
        for h in range(n_hands):
            value[n, h] = acc[h]
        # sigma again from the regrets before this node's update (a row is rewritten
        # only after its own sigma is taken)
        for i in range(na):
            c = kids[a0 + i]
            for h in range(n_hands):
                x = regrets[r0 + i, h]
                sig = _sigma(regrets, r0 + i, h, total, na)
                y = x + value[c, h] - acc[h]
                regrets[r0 + i, h] = y if (y > 0.0 or not plus) else 0.0
                avg[r0 + i, h] += (weight * reach_p[n, h]) * sig


@njit(cache=True, nogil=True)
def _discount_regrets(regrets, pos, neg):  # pragma: no cover - compiled
    """Discounted CFR's regret discount in place: each positive regret times ``pos``, the
    others times ``neg`` (numpy's ``r *= where(r > 0, pos, neg)`` makes two temporaries
    the size of the table: on a full-deck turn, a third of an iteration)."""
    flat = regrets.reshape(-1)
    for i in range(flat.size):
        x = flat[i]
        flat[i] = x * (pos if x > 0.0 else neg)


@njit(cache=True, nogil=True)
def _iterations(count, t0, dcfr, gadget_seat, ranges, alt, gadget_regrets, gadget_sums, kind, player, kid_ptr, kids,
                row_off, board_of, live, chance_p, regrets, avg, folds, showdowns, shown_from, spent, hands, order,
                ranks, reach_p, reach_o, value, flag, done):  # pragma: no cover - compiled
    """``count`` iterations after the ``t0`` already run, every step of
    :meth:`SubgameSolver.iterate` in one compiled call, the same operations in the same
    order (so the same numbers): a small subgame's iteration is a few tens of
    microseconds of kernels, which the Python between them used to take several times
    over (a 20-card river re-solve spent 70% of its time between kernels). For trees
    without leaves. Returns the iterations completed: fewer once ``flag`` is set (the
    last one then half done)."""
    n_hands = ranges.shape[1]
    for it in range(count):
        if flag[0] != 0:
            return it
        t = t0 + it + 1
        if dcfr:
            tf = float(t)
            pos = tf**DCFR_ALPHA / (tf**DCFR_ALPHA + 1.0)
            neg = tf**DCFR_BETA / (tf**DCFR_BETA + 1.0)
            _discount_regrets(regrets, pos, neg)
            _discount_regrets(gadget_regrets, pos, neg)
            keep = (tf / (tf + 1.0)) ** DCFR_GAMMA
            flat = avg.reshape(-1)
            for i in range(flat.size):
                flat[i] *= keep
            sums = gadget_sums.reshape(-1)
            for i in range(sums.size):
                sums[i] *= keep
            weight = 1.0
        else:
            weight = float(t)
        for p in range(2):
            for side in range(2):
                seat = p if side == 0 else 1 - p
                root = reach_p if side == 0 else reach_o
                for h in range(n_hands):
                    x = ranges[seat, h]
                    if gadget_seat == seat:
                        x = x * _gadget_sigma(gadget_regrets, h, 0)
                    root[0, h] = x
            _reach_pass(p, kind, player, kid_ptr, kids, row_off, board_of, live, regrets, reach_p, reach_o, flag, done)
            _terminal_pass(p, folds, showdowns, shown_from, player, spent, board_of, hands, order, ranks, live,
                           reach_o, value, flag, done)
            _value_pass(p, kind, player, kid_ptr, kids, row_off, chance_p, regrets, avg, reach_p, value, weight,
                        not dcfr, flag, done)
            if flag[0] != 0:
                return it
            if gadget_seat == p:  # the gadget's choice, per hand: enter or take alt
                for h in range(n_hands):
                    s0 = _gadget_sigma(gadget_regrets, h, 0)
                    s1 = _gadget_sigma(gadget_regrets, h, 1)
                    v = value[0, h]
                    a = alt[h]
                    got = s0 * v + s1 * a
                    for row, x in ((0, v), (1, a)):
                        y = gadget_regrets[row, h] + (x - got)
                        gadget_regrets[row, h] = y if (dcfr or y > 0.0) else 0.0
                    w = weight * ranges[p, h]
                    gadget_sums[0, h] += w * s0
                    gadget_sums[1, h] += w * s1
    return count


@njit(cache=True, inline="always")
def _gadget_sigma(g, h, row):  # pragma: no cover - compiled
    """Regret matching's probability of the gadget's ``row`` (0: enter, 1: take the
    alternative) for hand ``h`` (numpy's :meth:`SubgameSolver._match` of the two rows,
    the same operations)."""
    a = g[0, h] if g[0, h] > 0.0 else 0.0
    b = g[1, h] if g[1, h] > 0.0 else 0.0
    t = a + b
    return (a if row == 0 else b) / t if t > 0.0 else 1.0 / 2


#: The kernels a solve runs (:func:`poker._compile.cold` of these: the first solve compiles).
KERNELS = (_reach_pass, _terminal_pass, _value_pass, _discount_regrets, _iterations)


def deck_hands(game: Game) -> np.ndarray:
    """Every private hand of the game's deck (int64[H, hole cards], ACPC cards), in the
    order ranges over hands use here."""
    deck = deck_cards(game.num_ranks, game.num_suits)
    return np.array(list(combinations(sorted(deck), game.num_hole_cards)), dtype=np.int64)


@dataclass(frozen=True)
class SubgameBetting:
    """The subgame's bets: raises of ``sizes`` pots after calling (sized as the blueprint
    sizes its own, :func:`abstraction.betting.size_to_raise_to`, with ``snap``), all-in
    when ``all_in``, and at most ``cap`` raises on the street in all (None: the stacks
    decide). ``extra``: raise-tos offered wherever they are legal (e.g. an opponent's
    bet, so that the tree holds it exactly)."""

    sizes: tuple[float, ...] = (0.5, 1.0)
    all_in: bool = True
    cap: int | None = None
    extra: tuple[int, ...] = ()
    snap: float = 0.0

    def actions(self, state: State) -> list[Action]:
        """The actions at ``state`` (someone is to act): fold where it is not free, call,
        the raises in ascending order."""
        out = [Action.fold()] if state.can_fold() else []
        out.append(Action.call())
        lo, hi = state.min_raise_to, state.max_raise_to
        if lo is None or hi is None or (self.cap is not None and state.num_raises_in_round >= self.cap):
            return out
        actor = state.actor
        assert actor is not None
        # the rule that sizes the blueprint's own raises, so its actions are in the tree
        tos = {size_to_raise_to(x, state.spent, actor, lo, hi, self.snap) for x in self.sizes}
        tos.update(t for t in self.extra if lo <= t <= hi)
        if self.all_in:
            tos.add(hi)
        return out + [Action.raise_to(t) for t in sorted(tos)]


@dataclass
class SubgameTree:
    """The public tree below a real state: per node its ``kind`` (decision, fold,
    showdown, or chance: the next street's cards), the ``player`` to act (or the one who
    folded), the real ``state``, its ``children``, the real ``actions`` leading to them
    (a chance node's are empty) and its board (an index into ``boards``, the board through
    the node's street). Node 0 is the root; a chance node has one child per set of new
    cards that can come, each with its own copy of what follows; a depth-limited tree's
    leaves (kind 4) end a street with cards to come."""

    kind: list[int] = field(default_factory=list)
    player: list[int] = field(default_factory=list)
    state: list[State] = field(default_factory=list)
    children: list[list[int]] = field(default_factory=list)
    actions: list[list[Action]] = field(default_factory=list)
    board: list[int] = field(default_factory=list)
    boards: list[tuple[int, ...]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.kind)

    def decisions(self) -> list[int]:
        """The decision nodes."""
        return [n for n, k in enumerate(self.kind) if k == _DECISION]


class SubgameTooBig(ValueError):
    """A subgame tree past the node limit it was built with."""


def build_subgame(state: State, betting: SubgameBetting, board: Sequence[int] = (),
                  max_nodes: int | None = None, depth_limited: bool = False) -> SubgameTree:
    """The subgame tree below ``state`` (someone to act) with ``betting``, on ``board``
    (the cards through ``state``'s street); the streets still to come are chance nodes
    with every set of new cards that can come. More than :data:`MAX_FINAL_BOARDS`
    complete boards, or more than ``max_nodes`` nodes, raises :class:`SubgameTooBig`
    (the latter as soon as the build passes it). ``depth_limited``: the tree stops where
    ``state``'s street ends with cards to come, at a leaf (a showdown over the run-outs,
    :class:`~solver.evaluation.runouts.RunOuts`), and so does an all-in before the last
    street."""
    game = state.game
    if state.actor is None:
        raise ValueError("the hand is over: there is no subgame to solve")
    board = tuple(int(c) for c in board)
    need = sum(game.num_board_cards[: state.round + 1])
    if len(board) != need:
        raise ValueError(f"street {state.round} has {need} board cards, got {len(board)}")
    finals = 1
    left = game.num_ranks * game.num_suits - need
    for s in range(state.round + 1, game.num_rounds):
        finals *= math.comb(left, game.num_board_cards[s])
        left -= game.num_board_cards[s]
    if finals > MAX_FINAL_BOARDS and not depth_limited:
        raise SubgameTooBig(f"the subgame deals {finals:,} complete boards; at most {MAX_FINAL_BOARDS:,} "
                            "(root it on a later street, or limit its depth)")
    deck = deck_cards(game.num_ranks, game.num_suits)
    tree = SubgameTree()
    board_index: dict[tuple[int, ...], int] = {}

    def board_id(cards: tuple[int, ...]) -> int:
        if cards not in board_index:
            board_index[cards] = len(tree.boards)
            tree.boards.append(cards)
        return board_index[cards]

    def node(kind: int, player: int, s: State, cards: tuple[int, ...]) -> int:
        n = len(tree.kind)
        if max_nodes is not None and n >= max_nodes:
            raise SubgameTooBig(f"the subgame has more than {max_nodes:,} nodes")
        tree.kind.append(kind)
        tree.player.append(player)
        tree.state.append(s)
        tree.children.append([])
        tree.actions.append([])
        tree.board.append(board_id(cards))
        return n

    def add(s: State, street: int, cards: tuple[int, ...]) -> int:
        if depth_limited and (s.round > street or (s.actor is None and not any(s.folded)
                                                   and street < game.num_rounds - 1)):
            return node(_LEAF, -1, s, cards)  # the street ends with cards to come
        if s.round > street:  # the street is over: deal the next one's cards
            n = node(_CHANCE, -1, s, cards)
            for new in combinations([c for c in deck if c not in cards], game.num_board_cards[street + 1]):
                tree.children[n].append(add(s, street + 1, cards + new))
            return n
        if s.actor is None:
            folded = [p for p in range(2) if s.folded[p]]
            if not folded and street < game.num_rounds - 1:  # all-in: the board runs out
                n = node(_CHANCE, -1, s, cards)
                for new in combinations([c for c in deck if c not in cards], game.num_board_cards[street + 1]):
                    tree.children[n].append(add(s, street + 1, cards + new))
                return n
            return node(_FOLD if folded else _SHOWDOWN, folded[0] if folded else -1, s, cards)
        n = node(_DECISION, s.actor, s, cards)
        for a in betting.actions(s):
            child = add(s.apply(a), street, cards)
            tree.children[n].append(child)
            tree.actions[n].append(a)
        return n

    add(state, state.round, board)
    return tree


#: Last-street trees kept as templates (:func:`subgame_tree`).
TREES_KEPT = 256
_TREES: OrderedDict[Any, SubgameTree | None] = OrderedDict()


def subgame_tree(state: State, betting: SubgameBetting, board: Sequence[int] = (), max_nodes: int | None = None,
                 depth_limited: bool = False) -> SubgameTree:
    """:func:`build_subgame`, with the trees of the last street kept: there no cards
    are to come, so the tree of a betting history is the same on every board but for its
    one board, and the exact evaluations re-solve each history on every river. The tree
    returned shares its lists with the kept one (neither is changed once built)."""
    game = state.game
    if state.round != game.num_rounds - 1:
        return build_subgame(state, betting, board, max_nodes, depth_limited)
    key = (game, tuple(a.action for a in state.history), betting, max_nodes, depth_limited)
    if key in _TREES:
        _TREES.move_to_end(key)
        kept = _TREES[key]
        if kept is None:
            raise SubgameTooBig(f"the subgame has more than {max_nodes:,} nodes")
        need = sum(game.num_board_cards)
        cards = tuple(int(c) for c in board)
        if len(cards) != need:
            raise ValueError(f"street {state.round} has {need} board cards, got {len(cards)}")
        return SubgameTree(kept.kind, kept.player, kept.state, kept.children, kept.actions, kept.board, [cards])
    try:
        tree = build_subgame(state, betting, board, max_nodes, depth_limited)
    except SubgameTooBig:
        _TREES[key] = None
        raise
    finally:
        while len(_TREES) > TREES_KEPT:
            _TREES.popitem(last=False)
    _TREES[key] = tree
    return tree


#: Hand values of the last final boards kept (:func:`_hand_values`).
HAND_VALUES_KEPT = 64
_HAND_VALUES: OrderedDict[Any, HandValues] = OrderedDict()


def _hand_values(game: Game, hands: np.ndarray, final_cards: np.ndarray) -> HandValues:
    """The showdown sums of ``final_cards`` (:class:`HandValues`), kept for the last
    :data:`HAND_VALUES_KEPT` sets of boards: the exact evaluations solve many histories'
    subgames on the same river (it is never changed once made)."""
    key = (game, final_cards.tobytes(), final_cards.shape)
    got = _HAND_VALUES.get(key)
    if got is None or got.hands.shape != hands.shape:
        got = _HAND_VALUES[key] = HandValues(hands, final_cards)
        while len(_HAND_VALUES) > HAND_VALUES_KEPT:
            _HAND_VALUES.popitem(last=False)
    else:
        _HAND_VALUES.move_to_end(key)
    return got


class SubgameSolver:
    """CFR+ or Discounted CFR (``algorithm``: ``"cfr+"`` or ``"dcfr"``) on the subgame of
    ``state`` (see the module docstring) with ``ranges[p]``, a weight per hand of
    :func:`deck_hands` for each player (scaled as the player's reach: the values scale
    with it), on ``board`` (the cards through ``state``'s street, in dealing order; later
    streets' cards are enumerated, each card with probability one over the cards that
    can come once both hands are dealt).

    ``gadget``: ``(seat, alt)`` puts that seat's range behind the re-solving gadget with
    alternative values ``alt`` per hand (in the units of :meth:`values` with the other
    seat's range as given); its ``ranges`` entry is then the weight each hand enters the
    gadget with (1 for every hand that misses the board is DeepStack's choice).
    ``max_nodes``: refuse a bigger tree (:class:`SubgameTooBig`). ``runouts``: limit the
    depth (:func:`build_subgame`) and value the leaves over that many complete boards,
    drawn with ``seed`` (every one where there are no more; None: solve to the end of the
    hand). ``tree``: the tree :func:`build_subgame` already built for these arguments.
    ``stop``: a :class:`poker._stop.Stop` whose flag ends a solve (module docstring; None:
    the solve runs to its end).
    """

    def __init__(
        self,
        state: State,
        board: Sequence[int],
        ranges: Sequence[np.ndarray],
        betting: SubgameBetting | None = None,
        *,
        algorithm: str = "cfr+",
        gadget: tuple[int, np.ndarray] | None = None,
        max_nodes: int | None = None,
        runouts: int | None = None,
        seed: int = 0,
        tree: SubgameTree | None = None,
        stop: Stop | None = None,
    ) -> None:
        if algorithm not in ("cfr+", "dcfr"):
            raise ValueError(f"algorithm {algorithm!r}: choose cfr+ or dcfr")
        game = state.game
        if game.num_players != 2:
            raise ValueError("subgames here are heads-up")
        board = tuple(int(c) for c in board)
        self.game = game
        self.algorithm = algorithm
        self.tree = tree if tree is not None else build_subgame(state, betting or SubgameBetting(), board, max_nodes,
                                                                runouts is not None)
        self.hands = deck_hands(game)
        n = self.hands.shape[0]
        #: the leaves' run-outs (None: the tree has no leaf)
        self.runouts = (RunOuts(game, self.hands, board, runouts, seed)
                        if runouts is not None and _LEAF in self.tree.kind else None)
        self._leaves = np.array([v for v, k in enumerate(self.tree.kind) if k == _LEAF], dtype=np.int64)
        boards = self.tree.boards
        #: live[b, h]: hand h misses board b
        self._live = np.array([~np.isin(self.hands, np.asarray(b, dtype=np.int64)).any(axis=1) for b in boards],
                              dtype=np.float64).reshape(len(boards), n)
        self.live = self._live[0]
        finals = [i for i, b in enumerate(boards) if len(b) == game.total_board_cards]
        self._final_of = np.full(len(boards), -1, dtype=np.int64)
        self._final_of[finals] = np.arange(len(finals))
        final_cards = np.array([boards[i] for i in finals], dtype=np.int64).reshape(len(finals), game.total_board_cards)
        self.values_of = _hand_values(game, self.hands, final_cards) if finals else HandValues(self.hands, None)
        # the terminal pass's order: folds, then showdowns by final board
        self._folds = np.array([v for v, k in enumerate(self.tree.kind) if k == _FOLD], dtype=np.int64)
        shown = sorted((int(self._final_of[self.tree.board[v]]), v) for v, k in enumerate(self.tree.kind) if k == _SHOWDOWN)
        self._showdowns = np.array([v for _, v in shown], dtype=np.int64)
        assert all(f >= 0 for f, _ in shown), "a showdown before the last board card"
        self._shown_from = np.searchsorted(np.array([f for f, _ in shown], dtype=np.int64), np.arange(len(finals) + 1))
        self.ranges = [np.asarray(r, dtype=np.float64).reshape(n) * self.live for r in ranges]
        if len(self.ranges) != 2:
            raise ValueError("two ranges, one per seat")
        self.gadget_seat: int | None = None
        self.alt = np.zeros(n)
        if gadget is not None:
            self.gadget_seat = int(gadget[0])
            self.alt = np.asarray(gadget[1], dtype=np.float64).reshape(n) * self.live
        nodes = self.tree.decisions()
        tree = self.tree
        n_nodes = len(tree)
        self._kind = np.array(tree.kind, dtype=np.int64)
        self._player = np.array(tree.player, dtype=np.int64)
        self._kid_ptr = np.zeros(n_nodes + 1, dtype=np.int64)
        self._kid_ptr[1:] = np.cumsum([len(c) for c in tree.children])
        self._kids = np.array([c for cs in tree.children for c in cs], dtype=np.int64)
        if any(len(tree.children[v]) > 16 for v in nodes):
            raise ValueError("more than 16 actions at a node: fewer sizes")
        self._spent = np.array([st.spent for st in tree.state], dtype=np.float64).reshape(n_nodes, 2)
        self._board_of = np.array(tree.board, dtype=np.int64)
        self._leaf_live = self._live[self._board_of[self._leaves]]  # each leaf's hands
        deck = game.num_ranks * game.num_suits
        # a chance node's children are equally likely given both hands: one over the
        # cards (sets of cards) left once the board and both hands are out
        self._chance_p = np.array([
            1.0 / math.comb(deck - len(boards[tree.board[v]]) - 2 * game.num_hole_cards,
                            len(boards[tree.board[tree.children[v][0]]]) - len(boards[tree.board[v]]))
            if k == _CHANCE else 0.0 for v, k in enumerate(tree.kind)])
        self._row_off = np.full(n_nodes, -1, dtype=np.int64)
        rows = 0
        for v in nodes:
            self._row_off[v] = rows
            rows += len(tree.children[v])
        self._regret_table = np.zeros((rows, n))
        self._avg_table = np.zeros((rows, n))
        # per node, views into the flat tables the kernel updates
        self.regrets = {v: self._regret_table[self._row_off[v] : self._row_off[v] + len(tree.children[v])] for v in nodes}
        self.avg = {v: self._avg_table[self._row_off[v] : self._row_off[v] + len(tree.children[v])] for v in nodes}
        self._reach = (np.zeros((n_nodes, n)), np.zeros((n_nodes, n)))
        self._value = np.zeros((n_nodes, n))
        self.gadget_regrets = np.zeros((2, n))  # enter, take the alternative
        self.iterations = 0
        self.stop = stop if stop is not None else Stop()
        #: nodes the kernels have passed, read from outside for progress within a solve
        self.done = counter()
        #: what :attr:`done` counts an iteration: each player's reach and value passes
        #: over the decision and chance nodes, its folds and showdowns, and the leaves
        inner = sum(1 for k in tree.kind if k == _DECISION or k == _CHANCE)
        self.work_per_iteration = 2 * (2 * inner + len(self._folds) + len(self._showdowns) + len(self._leaves))

    # -- strategies

    @staticmethod
    def _match(regrets: np.ndarray) -> np.ndarray:
        """Regret matching over the actions (rows), per hand (columns)."""
        pos = np.maximum(regrets, 0.0)
        total = pos.sum(axis=0)
        n = regrets.shape[0]
        return np.where(total > 0.0, pos / np.where(total > 0.0, total, 1.0), 1.0 / n)

    def current(self, node: int) -> np.ndarray:
        """The current strategy at decision ``node`` (actions x hands)."""
        return self._match(self.regrets[node])

    def average(self, node: int) -> np.ndarray:
        """The average strategy at decision ``node`` (actions x hands). A hand the player
        never brings there (its range gives it no weight) has no average; it plays the
        current strategy, which regret matching makes from counterfactual values that do
        not depend on the player's own reach."""
        s = self.avg[node]
        total = s.sum(axis=0)
        if (total > 0.0).all():
            return s / total
        return np.where(total > 0.0, s / np.where(total > 0.0, total, 1.0), self.current(node))

    def entering(self, average: bool = True) -> np.ndarray:
        """The gadget seat's probability, per hand, of entering the subgame (1 without a
        gadget)."""
        if self.gadget_seat is None:
            return np.ones(self.hands.shape[0])
        return self._match(self.gadget_regrets)[0] if not average else self._gadget_avg()

    def _gadget_avg(self) -> np.ndarray:
        s = getattr(self, "_gadget_sums", None)
        if s is None:
            return self._match(self.gadget_regrets)[0]
        total = s.sum(axis=0)
        return np.where(total > 0.0, s[0] / np.where(total > 0.0, total, 1.0), 0.5)

    # -- the walk

    def _terminal(self, node: int, p: int, reach_o: np.ndarray) -> np.ndarray:
        st = self.tree.state[node]
        b = self.tree.board[node]
        live = self._live[b]
        if self.tree.kind[node] == _FOLD:
            folder = self.tree.player[node]
            chips = -st.spent[p] if folder == p else st.spent[1 - p]
            return chips * self.values_of.disjoint(reach_o[None, :])[0] * live
        f = int(self._final_of[b])
        out = np.empty((1, reach_o.shape[0]))
        order, ranks = self._showdown_order()
        _hand_showdown(self.values_of.hands, order[f : f + 1], ranks[f : f + 1],
                       np.ascontiguousarray(reach_o[None, :]), out)
        return st.spent[p] * out[0] * live

    def _update(self, regrets: np.ndarray, delta: np.ndarray) -> None:
        regrets += delta
        if self.algorithm == "cfr+":
            np.maximum(regrets, 0.0, out=regrets)

    def _discount(self, t: int) -> float:
        """DCFR's discounts before iteration ``t`` is added; returns the average's."""
        pos = t**DCFR_ALPHA / (t**DCFR_ALPHA + 1.0)
        neg = t**DCFR_BETA / (t**DCFR_BETA + 1.0)
        for r in (self._regret_table, self.gadget_regrets):
            _discount_regrets(r, pos, neg)
        return (t / (t + 1.0)) ** DCFR_GAMMA

    def iterate(self) -> None:
        """One iteration: each player's update in turn (alternating). Raises
        :class:`poker._stop.Interrupted` once :attr:`stop` is set, the tables then half
        updated."""
        self.stop.check()
        flag, done = self.stop.flag, self.done
        self.iterations += 1
        t = self.iterations
        if self.algorithm == "dcfr":
            keep = self._discount(t)
            self._avg_table *= keep
            if hasattr(self, "_gadget_sums"):
                self._gadget_sums *= keep
            weight = 1.0
        else:
            weight = float(t)  # CFR+'s linear average
        for p in (0, 1):
            reach_p, reach_o = self._reach
            reach_p[0] = self._root_reach(p)
            reach_o[0] = self._root_reach(1 - p)
            order, ranks = self._showdown_order()
            _reach_pass(p, self._kind, self._player, self._kid_ptr, self._kids, self._row_off, self._board_of,
                       self._live, self._regret_table, reach_p, reach_o, flag, done)
            _terminal_pass(p, self._folds, self._showdowns, self._shown_from, self._player, self._spent, self._board_of,
                          self.values_of.hands, order, ranks, self._live, reach_o, self._value, flag, done)
            if self._leaves.size:
                self._leaf_values(p, reach_o)
                done[0] += self._leaves.size
            _value_pass(p, self._kind, self._player, self._kid_ptr, self._kids, self._row_off, self._chance_p,
                       self._regret_table, self._avg_table, reach_p, self._value, weight, self.algorithm == "cfr+",
                       flag, done)
            if flag[0]:  # the passes returned early: this iteration is incomplete
                raise Interrupted(int(flag[0]))
            v = self._value[0].copy()
            if self.gadget_seat == p:  # the gadget's choice, per hand: enter or take alt
                sigma = self._match(self.gadget_regrets)
                both = np.stack([v, self.alt])
                value = (sigma * both).sum(axis=0)
                self._update(self.gadget_regrets, both - value)
                sums = getattr(self, "_gadget_sums", None)
                if sums is None:
                    sums = self._gadget_sums = np.zeros((2, v.shape[0]))
                sums += weight * self.ranges[p] * sigma

    def _leaf_values(self, p: int, reach_o: np.ndarray) -> None:
        """The traverser's values at every leaf at once: one product of the leaves'
        opponent reaches with the run-outs' showdown matrix."""
        leaves = self._leaves
        if leaves.size == 0:
            return
        assert self.runouts is not None
        got = self.runouts.values_many(reach_o[leaves])
        self._value[leaves] = got * self._spent[leaves, p][:, None] * self._leaf_live

    def _showdown_order(self) -> tuple[np.ndarray, np.ndarray]:
        """The complete boards' hands by rank and their ranks (empty where none)."""
        hv = self.values_of
        if hv.order is None or hv._sorted is None:
            empty = np.zeros((1, self.hands.shape[0]), dtype=np.int64)
            return empty, empty
        return hv.order, hv._sorted

    def _root_reach(self, p: int) -> np.ndarray:
        if self.gadget_seat == p:
            return self.ranges[p] * self._match(self.gadget_regrets)[0]
        return self.ranges[p]

    def solve(self, iterations: int) -> SubgameSolver:
        """Run ``iterations`` more iterations; returns self (raises
        :class:`poker._stop.Interrupted` when stopped). A tree without leaves runs them in
        one compiled call (:func:`_iterations`), the same numbers as :meth:`iterate`'s."""
        n = int(iterations)
        if n <= 0:
            return self
        if self._leaves.size:
            for _ in range(n):
                self.iterate()
            return self
        self.stop.check()
        if self.gadget_seat is not None and getattr(self, "_gadget_sums", None) is None:
            self._gadget_sums = np.zeros((2, self.hands.shape[0]))
        sums = getattr(self, "_gadget_sums", None)
        order, ranks = self._showdown_order()
        reach_p, reach_o = self._reach
        got = _iterations(n, self.iterations, self.algorithm == "dcfr",
                          -1 if self.gadget_seat is None else self.gadget_seat, np.stack(self.ranges), self.alt,
                          self.gadget_regrets, sums if sums is not None else np.zeros((2, 0)), self._kind,
                          self._player, self._kid_ptr, self._kids, self._row_off, self._board_of, self._live,
                          self._chance_p, self._regret_table, self._avg_table, self._folds, self._showdowns,
                          self._shown_from, self._spent, self.values_of.hands, order, ranks, reach_p, reach_o,
                          self._value, self.stop.flag, self.done)
        self.iterations += got
        if got < n:
            self.iterations += 1  # the one under way when the flag was set, half done
            self.stop.check()
        return self

    # -- measures

    def values(self, p: int, reach_o: np.ndarray | None = None, best: bool = False) -> np.ndarray:
        """``p``'s counterfactual values per hand at the root against the other seat's
        average strategy and ``reach_o`` (default: its range, through the gadget's average
        entering probability if it has one): of ``p``'s average strategy, or of a best
        response (``best``)."""
        if reach_o is None:
            o = 1 - p
            reach_o = self.ranges[o] * (self.entering() if self.gadget_seat == o else 1.0)
        # a hand that holds a board card cannot be dealt: no reach, whatever was given
        return self._evaluate(0, p, np.asarray(reach_o, dtype=np.float64) * self.live, best)

    def _evaluate(self, node: int, p: int, reach_o: np.ndarray, best: bool) -> np.ndarray:
        self.stop.check()  # a walk of the whole tree: stopped at any node
        kind = self.tree.kind[node]
        if kind == _CHANCE:
            total = sum(self._evaluate(c, p, reach_o * self._live[self.tree.board[c]], best)
                        * self._live[self.tree.board[c]] for c in self.tree.children[node])
            return self._chance_p[node] * total
        if kind == _LEAF:
            assert self.runouts is not None
            st = self.tree.state[node]
            return st.spent[p] * self.runouts.values(reach_o) * self._live[self.tree.board[node]]
        if kind != _DECISION:
            return self._terminal(node, p, reach_o)
        kids = self.tree.children[node]
        sigma = self.average(node)
        if self.tree.player[node] == p:
            values = np.stack([self._evaluate(c, p, reach_o, best) for c in kids])
            return values.max(axis=0) if best else (sigma * values).sum(axis=0)
        return sum(self._evaluate(c, p, reach_o * sigma[i], best) for i, c in enumerate(kids))

    def exploitability(self) -> float:
        """How far the average profile is from an equilibrium of the subgame with the
        given ranges: ``(BR_0 + BR_1) / 2`` in chips per deal of the ranges (each best
        responder's value, both ranges as given, no gadget)."""
        mass = float(self.ranges[0] @ self.values_of.disjoint(self.ranges[1][None, :])[0])
        if not mass > 0.0:
            raise ValueError("the ranges hold no pair of hands that can be dealt together")
        br = [float(self.ranges[p] @ self.values(p, self.ranges[1 - p], best=True)) for p in (0, 1)]
        return (br[0] + br[1]) / 2.0 / mass

    def root_strategy(self) -> tuple[list[Action], np.ndarray]:
        """The root's actions and the average strategy there (actions x hands)."""
        return list(self.tree.actions[0]), self.average(0)


def warm_up(game: Game) -> None:
    """Compile (or load from numba's cache) what a solve on ``game`` runs: one iteration of
    two tiny subgames, its last street after calls on the deck's highest cards (showdowns)
    and, with cards to come, its first street stopped at the street's end (leaves over one
    run-out); the kernels take arrays and scalars of the same types whatever the tree. A
    command calls this before a walk that solves subgames, so the first run's compile is
    paid (and shown as such) before the walk's progress counts."""
    n = deck_hands(game).shape[0]
    calls = SubgameBetting(sizes=(), all_in=False, cap=0)
    state = State.new_hand(game)
    SubgameSolver(state, (), [np.ones(n), np.ones(n)], calls, algorithm="dcfr", runouts=1,
                  max_nodes=1_000).solve(1)
    while state.round < game.num_rounds - 1 and state.actor is not None:
        state = state.apply(Action.call())
    if state.actor is None or state.round == 0:
        return
    deck = sorted(deck_cards(game.num_ranks, game.num_suits))
    board = deck[len(deck) - game.total_board_cards:]
    SubgameSolver(state, board, [np.ones(n), np.ones(n)], calls, algorithm="dcfr").solve(1)
