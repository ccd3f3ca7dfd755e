"""CFR and CFR+ in history form: one scalar walk per deal, as the textbook states it.

Zinkevich, Johanson, Bowling and Piccione 2007, "Regret minimization in games with
incomplete information": for every history h in an information set I of the updating
player i, the counterfactual regret ``pi_{-i}(h) * (u_i(h, a) - u_i(h))`` (Eq. 7 summed
history by history) is added to ``R(I, a)``, and ``w_t * pi_i(h) * sigma(I, a)`` to the
average-strategy sums (Eq. 4). CFR+ (Tammelin 2014) floors the cumulative regrets at 0
after each player's update and weights iteration t by t. Updates alternate: player 0,
then player 1 against player 0's new strategy.

The vector-form solver (:mod:`solver.training.cfr`) computes the same quantities with far fewer
operations, summing over the opponent's hands before anything touches a cumulative
regret. In real arithmetic the two agree; in floating point they round differently, and
on Leduc poker CFR's trajectory amplifies rounding differences until, after a few hundred
iterations, strategies differ in their leading digits (see ``tests/test_cfr.py``). This
module fixes the order of every floating-point operation instead: deals are enumerated
card by card with cards ordered by rank, then suit (OpenSpiel's card numbering), each
history adds its own term to the cumulative regret, values are accumulated action by
action, and the chance probability is multiplied along the path. That is the order of
OpenSpiel's ``CFRSolver``/``CFRPlusSolver`` (``python/algorithms/cfr.py``), so runs here
can be compared with OpenSpiel's figure for figure, at any iteration count. The cost is
one walk per deal instead of one per public state: use it for small games (Kuhn, Leduc),
as a reference for the vector-form kernels.

Tables share the :class:`solver.problem.Problem` layout, so the average strategy is an
ordinary :class:`solver.strategy.Strategy`.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numba import njit

from poker.cards import rank_of, suit_of

from .. import _kernels as K
from .._kernels import CHANCE, DECISION, FOLD, KTree
from ..chance import num_deals
from ..problem import Problem
from .vector_cfr import VectorCFRSolver

__all__ = ["MAX_HISTORIES", "HistoryCFRSolver", "count_histories"]

#: Largest number of histories per player walk the solver accepts (about a second per
#: iteration of work): the history form is for small games.
MAX_HISTORIES = 50_000_000


def count_histories(problem: Problem) -> int:
    """Histories (public node x deal of the cards seen by then) one player walk visits."""
    tree, game = problem.tree, problem.game
    per_street = np.bincount(tree.street.astype(np.int64), minlength=game.num_rounds)
    return int(sum(int(per_street[s]) * num_deals(game, s) for s in range(game.num_rounds)))


def _card_key(deck: tuple[int, ...], cards: Iterable[int]) -> tuple[tuple[int, int], ...]:
    """Sort key of a set of deck indices: by rank, then suit, card by card."""
    return tuple(sorted((rank_of(deck[int(i)]), suit_of(deck[int(i)])) for i in cards))


def _orders(problem: Problem) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Hand order, root board-state order, board-state children order and a dense
    showdown-strength table, all in the enumeration order of the module docstring."""
    ch = problem.chance
    kc = ch.kernel
    deck = ch.deck
    hand_order = sorted(range(ch.n_hands), key=lambda h: _card_key(deck, ch.hands[h]))

    def new_cards(bs: int, parent: int | None) -> list[int]:
        mine = [int(x) for x in ch.board_cards[bs] if x >= 0]
        if parent is None:
            return mine
        seen = {int(x) for x in ch.board_cards[parent] if x >= 0}
        return [x for x in mine if x not in seen]

    roots = sorted((int(r) for r in kc.root_states), key=lambda b: _card_key(deck, new_cards(b, None)))
    kid = np.arange(ch.n_board_states, dtype=np.int32)
    for bs in range(ch.n_board_states):
        first, n = int(kc.bs_child[bs]), int(kc.bs_n_child[bs])
        if n:
            kids = range(first, first + n)
            kid[first : first + n] = sorted(kids, key=lambda b: _card_key(deck, new_cards(b, bs)))
    n_last = kc.sd_order.shape[0]
    strength = np.zeros((n_last, ch.n_hands), dtype=np.int64)
    for j in range(n_last):
        m = int(kc.sd_len[j])
        strength[j, kc.sd_order[j, :m]] = kc.sd_key[j, :m]
    return (
        np.asarray(hand_order, dtype=np.int32),
        np.asarray(roots, dtype=np.int32),
        kid,
        strength,
    )


@njit(cache=True)
def _next_board(bucket: np.ndarray, kid: np.ndarray, first: int, j: int, n: int, h0: int, h1: int) -> int:
    """The first j' >= j whose board (``kid[first + j']``) shares no card with the hands,
    or n."""
    while j < n:
        b = kid[first + j]
        if bucket[b, h0] >= 0 and bucket[b, h1] >= 0:
            return j
        j += 1
    return n


@njit(cache=True)
def _walk(
    t: KTree,
    bucket: np.ndarray,
    kid: np.ndarray,
    bs_child: np.ndarray,
    bs_n_child: np.ndarray,
    strength: np.ndarray,
    sd_first: int,
    root_bs: int,
    h0: int,
    h1: int,
    rc0: float,
    player: int,
    regrets: np.ndarray,
    avg: np.ndarray,
    strat: np.ndarray,
    weight: float,
    vals: np.ndarray,
    fi: np.ndarray,
    ff: np.ndarray,
) -> float:
    """Walk every history of one deal of hands (h0, h1) depth first, with an explicit
    stack (numba cannot cache recursive functions); return player 0's value under
    ``strat``. At ``player``'s information sets add each history's regret and average
    terms.

    Frame d: ``fi[d]`` = node, board state, next child, table offset; ``ff[d]`` = reach of
    player 0, of player 1, of chance, value so far, chance probability of a child. (Frames
    are written out where they are pushed: a helper for it, even inlined, made the walk
    three times slower.)
    """
    d = 0
    fi[0, 0] = 0
    fi[0, 1] = root_bs
    ff[0, 0] = 1.0
    ff[0, 1] = 1.0
    ff[0, 2] = rc0
    entering = True
    ret = 0.0
    while True:
        node = fi[d, 0]
        bs = fi[d, 1]
        kind = t.kind[node]
        r0 = ff[d, 0]
        r1 = ff[d, 1]
        if entering:
            if kind == FOLD:
                ret = -float(t.spent[node, 0]) if t.player[node] == 0 else float(t.spent[node, 1])
            elif kind == CHANCE:
                first = bs_child[bs]
                n = bs_n_child[bs]
                count = 0
                j = _next_board(bucket, kid, first, 0, n, h0, h1)
                while j < n:
                    count += 1
                    j = _next_board(bucket, kid, first, j + 1, n, h0, h1)
                p = 1.0 / count
                j = _next_board(bucket, kid, first, 0, n, h0, h1)
                fi[d, 2] = j
                ff[d, 3] = 0.0
                ff[d, 4] = p
                fi[d + 1, 0] = t.child[node]
                fi[d + 1, 1] = kid[first + j]
                ff[d + 1, 0] = r0
                ff[d + 1, 1] = r1
                ff[d + 1, 2] = ff[d, 2] * p
                d += 1
                continue
            elif kind == DECISION:
                if r0 == 0.0 and r1 == 0.0:
                    # Neither player reaches it: nothing to add (OpenSpiel returns 0 too).
                    ret = 0.0
                else:
                    cp = t.player[node]
                    o = t.offset[node] + bucket[bs, h0 if cp == 0 else h1] * t.n_child[node]
                    fi[d, 2] = 0
                    fi[d, 3] = o
                    ff[d, 3] = 0.0
                    p = strat[o]
                    fi[d + 1, 0] = t.child[node]
                    fi[d + 1, 1] = bs
                    ff[d + 1, 0] = r0 * p if cp == 0 else r0
                    ff[d + 1, 1] = r1 * p if cp == 1 else r1
                    ff[d + 1, 2] = ff[d, 2]
                    d += 1
                    continue
            else:  # showdown
                s0 = strength[bs - sd_first, h0]
                s1 = strength[bs - sd_first, h1]
                if s0 > s1:
                    ret = float(t.spent[node, 1])
                elif s0 < s1:
                    ret = -float(t.spent[node, 0])
                else:
                    ret = 0.5 * float(t.spent[node, 1] - t.spent[node, 0])
        elif kind == CHANCE:
            ff[d, 3] += ff[d, 4] * ret
            first = bs_child[bs]
            n = bs_n_child[bs]
            j = _next_board(bucket, kid, first, fi[d, 2] + 1, n, h0, h1)
            if j < n:
                fi[d, 2] = j
                fi[d + 1, 0] = t.child[node]
                fi[d + 1, 1] = kid[first + j]
                ff[d + 1, 0] = r0
                ff[d + 1, 1] = r1
                ff[d + 1, 2] = ff[d, 2] * ff[d, 4]
                d += 1
                entering = True
                continue
            ret = ff[d, 3]
        else:  # decision: child a has returned
            cp = t.player[node]
            n_act = t.n_child[node]
            a = fi[d, 2]
            o = fi[d, 3]
            vals[d, a] = ret
            ff[d, 3] += strat[o + a] * ret
            a += 1
            if a < n_act:
                fi[d, 2] = a
                p = strat[o + a]
                fi[d + 1, 0] = t.child[node] + a
                fi[d + 1, 1] = bs
                ff[d + 1, 0] = r0 * p if cp == 0 else r0
                ff[d + 1, 1] = r1 * p if cp == 1 else r1
                ff[d + 1, 2] = ff[d, 2]
                d += 1
                entering = True
                continue
            v = ff[d, 3]
            if cp == player:
                # Player 1's values are the negation of player 0's, exactly, in floating point.
                cf = r1 * ff[d, 2] if cp == 0 else r0 * ff[d, 2]
                own = r0 if cp == 0 else r1
                for a in range(n_act):
                    diff = vals[d, a] - v
                    if cp == 1:
                        diff = -diff
                    regrets[o + a] += cf * diff
                    if weight > 0.0:
                        avg[o + a] += weight * own * strat[o + a]
            ret = v
        # The frame is done: hand its value to the parent.
        if d == 0:
            return ret
        d -= 1
        entering = False


@njit(cache=True)
def _iterations(
    t: KTree,
    c: K.KChance,
    hand_order: np.ndarray,
    roots: np.ndarray,
    kid: np.ndarray,
    strength: np.ndarray,
    regrets: np.ndarray,
    avg: np.ndarray,
    strat: np.ndarray,
    vals: np.ndarray,
    done: int,
    n_iter: int,
    plus: int,
    linear: int,
    delay: int,
) -> None:
    """Run iterations done+1 .. done+n_iter; ``strat`` holds the current strategy."""
    fi = np.zeros((vals.shape[0], 4), dtype=np.int64)
    ff = np.zeros((vals.shape[0], 5))
    bucket = c.bucket
    hands = c.hand_cards
    n_h = hand_order.shape[0]
    k = hands.shape[1]
    n_root = roots.shape[0]
    pr = 1.0 / n_root
    for it in range(done + 1, done + n_iter + 1):
        if it <= delay:
            weight = 0.0
        elif linear:
            weight = float(it - delay)
        else:
            weight = 1.0
        for player in range(2):
            for root in roots:
                n0 = 0
                for i in range(n_h):
                    if bucket[root, hand_order[i]] >= 0:
                        n0 += 1
                p0 = 1.0 / n0
                for i in range(n_h):
                    h0 = hand_order[i]
                    if bucket[root, h0] < 0:
                        continue
                    n1 = 0
                    for j in range(n_h):
                        h1 = hand_order[j]
                        if bucket[root, h1] >= 0 and not _clash(hands, h0, h1, k):
                            n1 += 1
                    p1 = 1.0 / n1
                    for j in range(n_h):
                        h1 = hand_order[j]
                        if bucket[root, h1] < 0 or _clash(hands, h0, h1, k):
                            continue
                        rc = 1.0 * p0 * p1
                        if n_root > 1:
                            rc = rc * pr
                        _walk(
                            t, bucket, kid, c.bs_child, c.bs_n_child, strength, c.sd_first,
                            root, h0, h1, rc, player, regrets, avg, strat, weight,
                            vals, fi, ff,
                        )
            if plus:
                for e in range(regrets.shape[0]):
                    if regrets[e] < 0.0:
                        regrets[e] = 0.0
            K.regret_match(t, c, regrets, strat, -1)


@njit(cache=True)
def _clash(hands: np.ndarray, h0: int, h1: int, k: int) -> bool:
    """Whether two hands share a card."""
    for x in range(k):
        for y in range(k):
            if hands[h0, x] == hands[h1, y]:
                return True
    return False


class HistoryCFRSolver(VectorCFRSolver):
    """CFR (``plus=False``: uniform averaging) or CFR+ (``plus=True``: regret-matching+,
    linear averaging) in history form; the tables, policies and average strategy are
    those of the vector-form solvers, only :meth:`iterate` differs.

    Raises ``ValueError`` when a player walk would visit more than :data:`MAX_HISTORIES`
    histories, or the game is not for two players.
    """

    def __init__(self, problem: Problem, *, plus: bool, delay: int = 0) -> None:
        if problem.game.num_players != 2:
            raise ValueError("history-form CFR needs a two-player game")
        n = count_histories(problem)
        if n > MAX_HISTORIES:
            raise ValueError(
                f"history-form CFR would walk {n:,} histories per player and iteration "
                f"(at most {MAX_HISTORIES:,}); use the vector-form solver"
            )
        super().__init__(problem, plus=plus, linear=plus, delay=delay)
        self._hand_order, self._roots, self._kid, self._strength = _orders(problem)
        depth = problem.tree.max_depth + 2 + problem.game.num_rounds
        self._vals = np.zeros((depth, problem.tree.max_actions))

    def iterate(self, iterations: int = 1) -> None:
        """Run ``iterations`` more iterations."""
        if iterations < 0:
            raise ValueError(f"iterations {iterations} must not be negative")
        if iterations == 0:
            return
        p = self.problem
        # From the regrets, so a solver restored from a checkpoint continues exactly.
        K.regret_match(p.ktree, p.kchance, self.regrets, self._strat, -1)
        _iterations(
            p.ktree,
            p.kchance,
            self._hand_order,
            self._roots,
            self._kid,
            self._strength,
            self.regrets,
            self.avg_sums,
            self._strat,
            self._vals,
            self.iterations,
            int(iterations),
            int(self.plus),
            int(self.linear),
            self.delay,
        )
        self.iterations += int(iterations)
