"""Exact head-to-head value of two translated players in the real game.

:func:`head_to_head` measures player A against player B, each a blueprint played in the
real game through action translation (:class:`solver.play.policy.TranslatedPolicy`; the two
may have different card and betting abstractions), as the expected value of A in chips
per game and in mbb/g (``1000 * chips / game.big_blind``), averaged over both seatings
(A in position 0 and B in 1, then swapped).

What is computed exactly
------------------------
For a fixed final board (every street's cards, in dealing order), the walk goes over the
REAL public tree restricted to the real actions the players take with positive
probability, and carries for EACH player its *mapping states* (abstract node -> reach
vector over the player's private hands that miss the board), exactly as
:mod:`solver.evaluation.real_response` does for one player: at the player's own decision the
mapping states are grouped by the real action :meth:`TranslatedPolicy.real_action` makes
of each abstract child; at the other's action each state splits by the translation's
probabilities (:meth:`TranslatedPolicy.translate`); the fallbacks are those of
:class:`solver.play.policy.HandWalk` (out of step: check or call; the opponent acting where
the tree has nobody to act: lost, checks or calls for the rest of the hand). The players'
translation draws are independent random choices with the mapping's probabilities (what
a match's keyed draws stand for). At a terminal, the value is summed over every (hand
of seat 0, hand of seat 1) pair of disjoint hands: folds by the folder's chips, showdowns
by hand strength on the board (ties split), in O(n) for n hands rather than O(n^2)
(:mod:`solver.evaluation._terminal`: card removal by inclusion-exclusion, showdowns by one sweep
over the hands sorted by rank, as vector-form CFR does). Every (board, hand 0, hand 1) deal is equally
likely, and every board has the same number of hand pairs, so the value of the game is
the plain mean over final boards of the per-board values.

* Boards enumerated (``boards=None``, or at least as many as there are): the value is
  exact (to rounding); the interval has zero width.
* Boards sampled (``boards=N``): N distinct final boards drawn uniformly (without
  replacement, with ``seed``); each board's value is still exact, the mean over them is
  an unbiased estimate, and ``ci95`` is mean +- 1.96 standard errors over the boards (with
  the finite-population correction, so it shrinks to zero width as N reaches all boards).

Cost: the walk's structure does not depend on the board (the real actions and the
mapping-state splits at the other player's actions depend on the public state alone;
only the reach vectors and the terminal values depend on the cards), so one walk per
seating serves a chunk of up to :data:`BOARDS_PER_WALK` boards: its reach arrays hold
every board's hands side by side, an action is followed when some board plays it, and
the terminals sum per board (:class:`solver.evaluation._terminal.BoardsPairValues`). Each board's
value is the one its own walk would give (to rounding), and the per-node Python is paid
once per chunk. The chunks are independent, so ``jobs`` worker processes share them out.
On one core, both seatings: Leduc, 5 hands, 6 boards, about 0.01 s a board; the 20-card
short hold'em, 136 hands, 6,840 ordered final boards of 3 cards, about 0.03 s a board
with the shipped strategy in chunks of 32 (0.5 s with one board per walk; every board:
about 4 minutes); full hold'em, 1,081 hands, 51,979,200 ordered final boards, about 1 s
a board with the shipped blueprint in chunks of 32 (4 s with one board per walk; some
66,000 real nodes a walk; sample boards). The time
goes to the terminal sums, the blueprint's probabilities for every row
(:func:`_row_probs`) and the vector operations of the mapping states, each proportional
to boards x hands.

Stopping and progress (:mod:`poker._stop`): every walk reads the job's stop flag at each
real node and returns at once when a stop is asked (SIGINT or SIGTERM under the command
line, :func:`poker._stop.stop_all`); :func:`head_to_head` then raises
:class:`poker._stop.Interrupted` and reports nothing. A walk also counts the share of
itself done (each node splits its share among the actions by the size of the abstract
subtree the actor follows), so that a caller sees a chunk of boards under way advance:
on the full deck one chunk is 30 s of work or more. In this process a walk runs off the
main thread (:func:`poker._stop.run_stoppable`), which stays free to run signal handlers
and redraw the bar; ``jobs`` worker processes read the flag and write their counts in
shared memory, and a signal to a worker (a terminal's Ctrl-C reaches the whole process
group) only sets the flag, so every walk ends within one node's work and the pool shuts
down with no worker left behind.
"""

from __future__ import annotations

import ctypes
import functools
import math
import mmap
import multiprocessing
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import closing
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
from numba import njit

from poker._compile import cold
from poker._stop import Stop, run_stoppable, stop_all, stoppable
from poker.cards import deck_cards
from poker.game import Game
from poker.state import State

from ._terminal import BoardsPairValues, _disjoint_sums, _showdown_sums
# the mapping-state rules must be the very ones the exploitability walk uses
from ..play.policy import TranslatedPolicy
from .real_response import MappingStates, TranslatedPlayer, _all_close

__all__ = [
    "ALL_BOARDS_MAX",
    "BOARDS_PER_WALK",
    "H2HResult",
    "all_boards",
    "board_at",
    "board_value",
    "check_run",
    "evaluate_boards",
    "head_to_head",
    "kernels_cold",
    "n_boards",
]

#: Evaluating every final board is refused above this many (the full deck has 51,979,200
#: ordered boards, days of work): sample boards there.
ALL_BOARDS_MAX = 1_000_000


@dataclass(frozen=True)
class H2HResult:
    """Value of A against B, averaged over both seatings.

    ``chips_per_game`` / ``mbb_per_game``: the mean over the boards evaluated (exact when
    ``exact``); ``ci95``: the 95% interval of ``mbb_per_game`` over sampled boards (the
    point itself when every board was evaluated); ``seat_values``: A's value in position
    0 and in position 1 (chips per game); ``boards``: boards evaluated, of
    ``boards_total``; ``nodes``: real public nodes walked, summed over the boards (each
    counts the nodes a walk of that board alone visits); ``seconds``: wall time;
    ``board_values``: A's chips per game on each board evaluated (both seatings' mean), in
    the order evaluated (their mean is ``chips_per_game``: plot the running mean and
    interval from them; not in :meth:`to_dict`).
    """

    game: str
    chips_per_game: float
    mbb_per_game: float
    ci95: tuple[float, float]
    exact: bool
    seat_values: tuple[float, float]
    boards: int
    boards_total: int
    nodes: int
    seconds: float
    board_values: tuple[float, ...]

    @property
    def seconds_per_board(self) -> float:
        """Wall time per board (both seatings)."""
        return self.seconds / max(self.boards, 1)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {
            "game": self.game,
            "chips_per_game": self.chips_per_game,
            "mbb_per_game": self.mbb_per_game,
            "ci95": list(self.ci95),
            "exact": self.exact,
            "seat_values": list(self.seat_values),
            "boards": self.boards,
            "boards_total": self.boards_total,
            "nodes": self.nodes,
            "seconds": self.seconds,
            "seconds_per_board": self.seconds_per_board,
        }


def all_boards(game: Game, through: int | None = None) -> list[tuple[int, ...]]:
    """Every final board in dealing order (or every board dealt through street
    ``through``): each street's cards a combination (sorted) of the cards left, so every
    board is equally likely. ``[()]`` without a board."""
    deck = deck_cards(game.num_ranks, game.num_suits)
    boards: list[tuple[int, ...]] = [()]
    for n in game.num_board_cards[: None if through is None else through + 1]:
        if n:
            boards = [b + new for b in boards for new in combinations([c for c in deck if c not in b], n)]
    return boards


def n_boards(game: Game, through: int | None = None) -> int:
    """``len(all_boards(game, through))`` without listing them."""
    left, total = game.num_ranks * game.num_suits, 1
    for n in game.num_board_cards[: None if through is None else through + 1]:
        total *= math.comb(left, n)
        left -= n
    return total


#: Boards per walk: the walk's Python cost per node is shared by this many boards, its
#: reach arrays are this many times larger (full deck: 32 x 1,081 float64, 277 kB each).
BOARDS_PER_WALK = 32


class _Boards:
    """Several final boards walked at once. On board ``b``, the rows of the reach arrays
    are the ``n`` sets of hole cards that miss it (``values.valid[b]``, the same number on
    every board); the arrays are flat float64[boards * n], board major. The terminal pair
    sums of each board: :class:`solver.evaluation._terminal.BoardsPairValues`."""

    def __init__(self, game: Game, boards: list[tuple[int, ...]]) -> None:
        deck = deck_cards(game.num_ranks, game.num_suits)
        k = game.num_hole_cards
        self.boards = np.array(boards, dtype=np.int64).reshape(len(boards), game.total_board_cards)
        hands = np.array(list(combinations(deck, k)), dtype=np.int64).reshape(-1, k)
        self.values = BoardsPairValues(hands, self.boards)
        self.n, self.width = self.values.shape
        self.ones = np.ones(self.n * self.width)
        self.pairs = self.values.disjoint(self.ones, self.ones)

    def alive(self, reach: np.ndarray) -> np.ndarray:
        """bool[boards]: the boards on which ``reach`` (flat) is not all zero."""
        return reach.reshape(self.n, self.width).any(axis=1)


def _buckets(policy: TranslatedPolicy, game: Game, boards: _Boards) -> list[np.ndarray]:
    """The bucket of each row of ``boards``' reach arrays on each street, as the player
    computes it (flat int64[boards * n])."""
    k = game.num_hole_cards
    held = boards.values.held  # (boards, n, k)
    n_boards, n = boards.n, boards.width
    out: list[np.ndarray] = []
    for s in range(game.num_rounds):
        m = game.board_cards_through(s)
        seen = np.broadcast_to(boards.boards[:, None, :m], (n_boards, n, m))
        cards = np.ascontiguousarray(np.concatenate([held, seen], axis=2).reshape(n_boards * n, k + m))
        if policy.bucket_batch is not None:
            out.append(np.asarray(policy.bucket_batch(s, cards), dtype=np.int64))
        else:
            out.append(np.array([policy.bucket(s, r[:k], tuple(r[k:])) for r in cards.tolist()], dtype=np.int64))
    return out


@njit(cache=True)
def _row_probs(table: np.ndarray, start: int, n: int, scale: float, purify: float, buckets: np.ndarray,
               rows: np.ndarray, out: np.ndarray) -> None:
    """:meth:`TranslatedPolicy.rows` of the decision node with first table entry ``start``
    and ``n`` children, written transposed: ``out[j, r]`` is child ``j``'s probability in
    bucket ``buckets[rows[r]]``. Each of the distinct ``buckets`` is computed once (32
    boards hold some 35,000 rows but under a thousand buckets a street), in one compiled
    pass instead of numpy's many: on the full deck this was most of a walk's time."""
    probs = np.empty((buckets.shape[0], n))
    for u in range(buckets.shape[0]):
        p = probs[u]
        o = start + buckets[u] * n
        total = 0.0
        for j in range(n):
            p[j] = table[o + j] / scale
            total += p[j]
        for j in range(n):
            p[j] = p[j] / total if total > 0.0 else 1.0 / n
        if purify > 0.0:
            kept = 0.0
            top = p[0]
            for j in range(n):
                top = max(top, p[j])
                if p[j] >= purify:
                    kept += p[j]
            if kept <= 0.0:  # nothing clears the threshold: the most likely actions, evenly
                for j in range(n):
                    p[j] = 1.0 if p[j] == top else 0.0
                    kept += p[j]
            else:
                for j in range(n):
                    if p[j] < purify:
                        p[j] = 0.0
            for j in range(n):
                p[j] = p[j] / kept
    for r in range(rows.shape[0]):
        p = probs[rows[r]]
        for j in range(n):
            out[j, r] = p[j]


class _BatchPlayer(TranslatedPlayer):
    """:class:`TranslatedPlayer` over the rows of several boards (:class:`_Boards`): the
    same rules, its probabilities computed by :func:`_row_probs` and never cached (a walk
    meets each abstract node about once, and over 32 boards a node's probabilities take
    about a megabyte)."""

    def __init__(self, policy: TranslatedPolicy, buckets: list[np.ndarray]) -> None:
        super().__init__(policy, buckets)
        # per street: the distinct buckets, and each row's index among them
        self._distinct = [np.unique(b, return_inverse=True) for b in buckets]
        # nodes of each abstract subtree (a child's index is above its parent's)
        parent = policy.tree.parent.tolist()
        self._sizes = [1] * len(parent)
        for node in range(len(parent) - 1, 0, -1):
            self._sizes[parent[node]] += self._sizes[node]

    def cost(self, states: MappingStates) -> int:
        """What walking on from mapping ``states`` costs, roughly: the nodes of the
        abstract subtrees they stand at (1 for a lost state)."""
        return sum(self._sizes[k] if k >= 0 else 1 for k in states)

    def _moves(self, node: int) -> list[tuple[int, np.ndarray]]:
        pol = self.policy
        n = pol._n_child[node]
        distinct, rows = self._distinct[pol._street[node]]
        by_child = np.empty((n, rows.shape[0]))
        _row_probs(pol.table, pol._offset[node], n, pol.scale, pol.purify, distinct, rows, by_child)
        return [(i, by_child[i]) for i in np.flatnonzero(by_child.any(axis=1)).tolist()]


class _Watch:
    """What a walk reads and writes besides its figures, each a one-element array read
    from outside (one writer): the job's stop ``flag`` (int64, nonzero once a stop is
    asked: the walk returns at once, its figures incomplete), the real ``nodes`` visited
    (int64) and the share of the walk ``done`` (float64, 1 per walk at its end: see
    :func:`_walk`)."""

    __slots__ = ("done", "flag", "nodes")

    def __init__(self, flag: np.ndarray | None = None, nodes: np.ndarray | None = None,
                 done: np.ndarray | None = None) -> None:
        self.flag = np.zeros(1, dtype=np.int64) if flag is None else flag
        self.nodes = np.zeros(1, dtype=np.int64) if nodes is None else nodes
        self.done = np.zeros(1, dtype=np.float64) if done is None else done


def _reach(ms: MappingStates) -> np.ndarray:
    """A player's real reach: the sum over its mapping states."""
    if len(ms) == 1:
        for r in ms.values():
            return r
    return sum(ms.values())  # type: ignore[return-value]


def _walk(
    state: State, players: tuple[_BatchPlayer, _BatchPlayer], ms: tuple[MappingStates, MappingStates],
    boards: _Boards, alive: np.ndarray, count: np.ndarray, watch: _Watch, share: float = 1.0,
) -> np.ndarray:
    """Seat 0's chips on each board, summed over its (hand 0, hand 1) pairs, weighted by
    both reaches. ``alive``: the boards on which every real action so far had positive
    probability, the ones a walk of that board alone would visit this node on (``count``,
    nodes per board, counts them so, whatever boards share the walk). Once ``watch``'s
    flag is set every node returns zeros at once: the caller drops the figures.

    ``share``: the part of the walk this subtree stands for (the root's is 1), added to
    ``watch.done`` as its leaves are reached, so that a long walk is seen to advance with
    no count of its nodes known beforehand. A node splits its share among the real actions
    by :meth:`_BatchPlayer.cost` of the actor's mapping states after each (the sizes of
    the abstract subtrees the walk follows there): a fold is worth a node, a call or a
    raise the rest of the hand."""
    if watch.flag[0]:
        return np.zeros(boards.n)
    watch.nodes[0] += 1
    count += alive
    if state.actor is None:
        watch.done[0] += share
        r0, r1 = _reach(ms[0]), _reach(ms[1])
        spent = state.spent
        if state.folded[0]:
            return -spent[0] * boards.values.disjoint(r0, r1)
        if state.folded[1]:
            return spent[1] * boards.values.disjoint(r0, r1)
        return min(spent) * boards.values.showdown(r0, r1)
    actor = state.actor
    total = np.zeros(boards.n)
    moves = players[actor].own_moves(ms[actor], state)
    costs = [players[actor].cost(mine) for mine in moves.values()]
    if not costs:
        watch.done[0] += share
        return total
    scale = share / sum(costs)
    for (a, mine), cost in zip(moves.items(), costs):
        go = np.zeros(boards.n, dtype=bool)
        for r in mine.values():
            go |= boards.alive(r)
        go &= alive
        if not go.any():
            watch.done[0] += cost * scale
            continue  # played only on boards already left: worth exactly 0 on every board
        theirs = players[1 - actor].after_opponent(ms[1 - actor], state, a)
        pair = (mine, theirs) if actor == 0 else (theirs, mine)
        total += _walk(state.apply(a), players, pair, boards, go, count, watch, cost * scale)
    return total


def _seat_values(
    game: Game, boards: _Boards, players: tuple[_BatchPlayer, _BatchPlayer], watch: _Watch | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Seat 0's expected chips on each board (the mean over its disjoint hand pairs) with
    ``players`` in positions 0 and 1; real nodes walked per board. Incomplete if
    ``watch``'s flag was set."""
    count = np.zeros(boards.n, dtype=np.int64)
    alive = np.ones(boards.n, dtype=bool)
    v = _walk(State.new_hand(game), players, ({0: boards.ones}, {0: boards.ones.copy()}), boards, alive, count,
              _Watch() if watch is None else watch)
    return v / boards.pairs, count


def board_value(
    first: TranslatedPolicy, second: TranslatedPolicy, game: Game, board: tuple[int, ...]
) -> tuple[float, int]:
    """Seat 0's expected chips on the final ``board`` (dealing order) when ``first`` plays
    position 0 and ``second`` position 1, averaged over the disjoint hand pairs; and the
    number of real nodes walked."""
    bd = _Boards(game, [board])
    players = (_BatchPlayer(first, _buckets(first, game, bd)), _BatchPlayer(second, _buckets(second, game, bd)))
    v, count = _seat_values(game, bd, players)
    return float(v[0]), int(count[0])


#: Both players' buckets on a chunk of boards (:func:`_buckets`); None for B's when B is A.
_ChunkBuckets = tuple[list[np.ndarray], list[np.ndarray] | None]


def _chunk_buckets(a: TranslatedPolicy, b: TranslatedPolicy, game: Game, chunk: list[tuple[int, ...]]) -> _ChunkBuckets:
    """A's and B's buckets on the boards of ``chunk``: a player's buckets do not depend on
    its seat."""
    bd = _Boards(game, chunk)
    return _buckets(a, game, bd), None if b is a else _buckets(b, game, bd)


def _both_seatings(
    a: TranslatedPolicy, b: TranslatedPolicy, game: Game, chunk: list[tuple[int, ...]], buckets: _ChunkBuckets,
    watch: _Watch | None = None,
) -> list[tuple[float, float, int]] | None:
    """For each board of ``chunk``: seat 0's value with A in position 0, then with B there,
    and the real nodes a walk of that board alone visits. One walk per seating serves every
    board; each player is built once for both seatings. None once ``watch``'s flag is set
    (the walks stopped)."""
    watch = _Watch() if watch is None else watch
    bd = _Boards(game, chunk)
    pa = _BatchPlayer(a, buckets[0])
    pb = pa if buckets[1] is None else _BatchPlayer(b, buckets[1])
    v0, n0 = _seat_values(game, bd, (pa, pb), watch)
    if watch.flag[0]:
        return None
    v1, n1 = _seat_values(game, bd, (pb, pa), watch)
    if watch.flag[0]:
        return None
    return list(zip(v0.tolist(), v1.tolist(), (n0 + n1).tolist()))


def _chunks(chosen: list[tuple[int, ...]], per_chunk: int = BOARDS_PER_WALK) -> list[list[tuple[int, ...]]]:
    """``chosen`` cut, in order, into the fewest chunks of at most ``per_chunk`` boards,
    as even as possible (so ``jobs`` workers get even shares). The cut depends on the
    boards alone, never on ``jobs``: the numbers are the same for every ``jobs``."""
    n = len(chosen)
    k = max(1, -(-n // per_chunk))
    sizes = [n // k + (i < n % k) for i in range(k)]
    out, at = [], 0
    for size in sizes:
        out.append(chosen[at : at + size])
        at += size
    return out


def head_to_head(
    a: TranslatedPolicy,
    b: TranslatedPolicy,
    game: Game | None = None,
    *,
    boards: int | None = None,
    seed: int = 0,
    jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
    walking: Callable[[float, int, int], None] | None = None,
    stop: Stop | None = None,
) -> H2HResult:
    """A's expected value against B in the real ``game`` (default: A's), averaged over
    both seatings (module docstring).

    ``boards``: None for every final board (exact), or the number of final boards to
    sample uniformly without replacement with ``seed`` (every board when there are no
    more than that). ``jobs``: worker processes evaluating boards at once (forked, so
    they share the policies' memory-mapped tables; needs the ``fork`` start method); each
    board's value does not depend on where it was computed, and the mean is taken in
    board order, so the result is the same, bit for bit, for every ``jobs``.
    ``progress``: called as ``progress(done, total)`` for each board, in board order, as
    each chunk of boards (one walk) is done. ``walking``: called about every 0.1 s while
    walks run, in the calling thread, as ``walking(boards, total, nodes)``: ``boards`` done
    of ``total``, a chunk under way counted by the share of its walks done (see
    :func:`_walk`: an estimate, exact at each chunk's end), and ``nodes``, the real nodes
    walked so far by every walk (a chunk's shared walk counts a node once).
    ``stop``: ends the evaluation once set; it is registered (:func:`poker._stop.stoppable`)
    for the call, so that :func:`poker._stop.stop_all` (SIGINT or SIGTERM under the command
    line's handlers) reaches the walks, the workers' included, within one node's work.
    Raises :class:`poker._stop.Interrupted` when stopped (nothing partial is returned);
    ``ValueError`` for a game that is not 2-player, a policy made for another game,
    ``boards`` or ``jobs`` below 1, or ``jobs`` > 1 without ``fork``.
    """
    g = game or a.game
    check_run(g, (a, b), boards, jobs)
    t0 = time.perf_counter()
    total = n_boards(g)
    if boards is None and total > ALL_BOARDS_MAX:
        raise ValueError(f"{g.name or 'the game'} has {total:,} final boards, too many to evaluate "
                         "every one: sample boards (boards=N)")
    if boards is None or boards >= total:
        chosen = all_boards(g)
    else:
        # sample indices into the (never listed) sequence of boards, then decode them
        rng = np.random.default_rng(seed)
        idx = rng.choice(total, size=boards, replace=False)
        chosen = [board_at(g, int(i)) for i in idx]
    work = functools.partial(_both_seatings, a, b, g)
    prepare = functools.partial(_chunk_buckets, a, b, g)
    rows: list[tuple[float, float, int]] = []
    # a failure or a stop closes the evaluation, which stops the workers at once
    with stoppable(stop) as stop, closing(evaluate_boards(work, prepare, chosen, jobs, cold=kernels_cold(), stop=stop,
                                                          walking=walking)) as results:
        for row in results:
            rows.append(row)
            if progress is not None:
                progress(len(rows), len(chosen))
    stop.check()  # a stop after the last walk still means the caller was asked to stop
    return summarize(g, rows, total, t0)


def check_run(game: Game, policies: tuple[TranslatedPolicy, TranslatedPolicy], boards: int | None, jobs: int) -> None:
    """Refuse (ValueError, one line) a head-to-head that cannot run: a game that is not
    2-player, a policy made for another game, ``boards`` or ``jobs`` below 1, or ``jobs``
    > 1 without the ``fork`` start method."""
    if game.num_players != 2:
        raise ValueError(f"head-to-head is for 2 players, the game has {game.num_players}")
    for name, p in zip("AB", policies):
        if p.game != game:
            raise ValueError(f"player {name} was made for {p.game.name or 'another game'}, not {game.name}")
    if boards is not None and boards < 1:
        raise ValueError(f"boards must be at least 1, got {boards}")
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    if jobs > 1 and "fork" not in multiprocessing.get_all_start_methods():
        raise ValueError("jobs > 1 needs the fork start method (worker processes share the policies), "
                         "which this platform lacks: use jobs=1")


def summarize(game: Game, rows: list[tuple[float, float, int]], total: int, t0: float) -> H2HResult:
    """The result of boards evaluated in order, each ``(v0, v1, nodes)``: seat 0's value
    with A in position 0, seat 0's value with B there (so A's is ``-v1``), the real nodes
    walked; of ``total`` boards equally likely; ``t0``: when the evaluation started
    (:func:`time.perf_counter`). The mean over the boards, and the 95% interval over them
    (finite-population corrected; zero width when every board was evaluated)."""
    per_board = [(v0 - v1) / 2.0 for v0, v1, _ in rows]
    seats = np.array([[v0, -v1] for v0, v1, _ in rows]).sum(axis=0)
    nodes = sum(walked for _, _, walked in rows)
    n = len(rows)
    values = np.array(per_board)
    mean = float(values.mean())
    exact = n == total
    mbb = 1000.0 * mean / game.big_blind
    if exact or n < 2:
        half = 0.0 if exact else math.inf
    else:
        fpc = math.sqrt((total - n) / (total - 1))
        half = 1.96 * float(values.std(ddof=1)) / math.sqrt(n) * fpc * 1000.0 / game.big_blind
    return H2HResult(
        game=game.name,
        chips_per_game=mean,
        mbb_per_game=mbb,
        ci95=(mbb - half, mbb + half),
        exact=exact,
        seat_values=(float(seats[0] / n), float(seats[1] / n)),
        boards=n,
        boards_total=total,
        nodes=nodes,
        seconds=time.perf_counter() - t0,
        board_values=tuple(per_board),
    )


def kernels_cold() -> bool:
    """Whether the walks' compiled kernels compile before they run in this process
    (:func:`poker._compile.cold`): then the first chunk takes some seconds longer. The
    players' bucket functions (card abstractions) compile on their own account."""
    return cold(_row_probs, _disjoint_sums, _showdown_sums, _all_close)


#: Signals that stop an evaluation: a worker's handlers only set the shared stop flag.
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}

#: Seconds between two looks at the workers (and two redraws of the bar).
_POLL = 0.1

#: A chunk's work in a worker: ``work(chunk, prepared, watch)`` -> one tuple of figures
#: per board (None once stopped), as :func:`evaluate_boards` takes it.
Work = Callable[[list[tuple[int, ...]], Any, "_Watch"], "list[tuple[float, float, int]] | None"]

#: What forked workers evaluate boards with (inherited, never pickled: a policy holds its
#: bucket function, often a lambda), with the shared stop flag and the chunks' counters
#: (:class:`_Counters`). Set only while :func:`evaluate_boards`'s pool runs.
_SHARED: tuple[Work, np.ndarray, _Counters] | None = None


def _shared(n: int, dtype: type[np.generic]) -> np.ndarray:
    """``n`` zeros of 8-byte ``dtype`` in anonymous shared memory: processes forked later
    see every write to it, in either direction."""
    return np.frombuffer(mmap.mmap(-1, 8 * n), dtype=dtype)


class _Counters:
    """Per chunk (shared with forked workers): the real nodes its walks visited and the
    share of its two walks done (0 to 2, :func:`_walk`)."""

    def __init__(self, n: int) -> None:
        self.nodes = _shared(n, np.int64)
        self.done = _shared(n, np.float64)

    def watch(self, flag: np.ndarray, chunk: int) -> _Watch:
        """What chunk ``chunk``'s walks read and write, stopped by ``flag``."""
        return _Watch(flag, self.nodes[chunk : chunk + 1], self.done[chunk : chunk + 1])


def _worker_signal(signum: int, frame: object) -> None:
    stop_all(signum)


def _worker_start(parent: int) -> None:
    """A worker's set-up. SIGINT and SIGTERM only set the stop flags (:func:`stop_all`:
    the shared flag was registered before the fork), so that a terminal's Ctrl-C, which
    reaches the whole process group, ends every walk at its next node and leaves the
    parent to shut the pool down, with no traceback from a worker. On Linux the worker
    is also killed if ``parent`` dies, a SIGKILL included: no orphan is left waiting."""
    for sig in _STOP_SIGNALS:
        signal.signal(sig, _worker_signal)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)  # blocked by the parent across the fork
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None).prctl(pr_set_pdeathsig, int(signal.SIGKILL))
        if os.getppid() != parent:  # it died before the prctl
            os._exit(1)


def _job(chunk: list[tuple[int, ...]], prepared: Any, slot: int) -> list[tuple[float, float, int]] | None:
    assert _SHARED is not None
    work, flag, counters = _SHARED
    return work(chunk, prepared, counters.watch(flag, slot))


class _Tally:
    """Boards done for ``walking``: the chunks done (taken in order), plus each chunk
    under way counted by the share of its two walks done."""

    def __init__(self, sizes: list[int], counters: _Counters) -> None:
        self.sizes = np.array(sizes, dtype=np.float64)
        self.counters = counters
        self.done = 0
        self.boards_done = 0.0

    def finished(self) -> None:
        """The next chunk, in order, is done."""
        self.boards_done += self.sizes[self.done]
        self.done += 1

    def boards(self) -> float:
        share = np.minimum(self.counters.done[self.done :] / 2.0, 1.0)
        return self.boards_done + float(share @ self.sizes[self.done :])


def evaluate_boards(
    work: Work, prepare: Callable[[list[tuple[int, ...]]], Any], chosen: list[tuple[int, ...]], jobs: int,
    *, per_chunk: int = BOARDS_PER_WALK, cold: bool = False, stop: Stop | None = None,
    walking: Callable[[float, int, int], None] | None = None,
) -> Iterator[tuple[float, float, int]]:
    """``work`` on every board of ``chosen``, in board order, a chunk of up to
    ``per_chunk`` boards at a time (:func:`_chunks`), the chunks on ``jobs`` processes;
    yields ``work``'s figures board by board; raises :class:`Interrupted` once ``stop`` is
    set (``walking``: as :func:`head_to_head`'s). ``work(chunk, prepare(chunk), watch)``
    evaluates a chunk both seatings (:func:`_both_seatings` for two translated players),
    counting its share done from 0 to 2 into ``watch.done`` and returning None once
    ``watch.flag`` is set.

    In this process a chunk is walked off the main thread (:func:`run_stoppable`). Workers
    are forked, so they share ``work``'s players (and their memory-mapped tables), the
    stop flag and the chunks' counters (:class:`_Counters`, in shared memory). While the
    kernels are ``cold`` the first chunk is walked here before the fork, so that they
    compile once rather than once per worker, and the workers inherit them. The parent
    runs ``prepare`` (the players' buckets) and sends what it gives with the chunk: bucket
    functions may run numba's parallel kernels, and a child forked from a process that
    has started GNU OpenMP threads is killed when it starts them again. A pool that loses
    a worker raises (``BrokenProcessPool``) instead of waiting for it."""
    global _SHARED
    stop = Stop() if stop is None else stop
    chunks = _chunks(chosen, per_chunk)
    counters = _Counters(len(chunks))
    tally = _Tally([len(c) for c in chunks], counters)

    def poll() -> None:
        if walking is not None:
            walking(tally.boards(), len(chosen), int(counters.nodes.sum()))

    def here(i: int) -> list[tuple[float, float, int]]:
        watch = counters.watch(stop.flag, i)
        chunk = chunks[i]
        out = run_stoppable(lambda: work(chunk, prepare(chunk), watch), stop, on_poll=poll, poll=_POLL)
        assert out is not None  # a stopped walk made run_stoppable raise
        tally.finished()
        poll()
        return out

    first = len(chunks) if jobs == 1 or len(chunks) < 2 else int(cold)
    for i in range(first):
        yield from here(i)
    if first == len(chunks):
        return
    workers = min(jobs, len(chunks) - first)
    pool_stop = Stop()
    pool_stop.flag = _shared(1, np.int64)  # the workers read it, and their signal handlers set it
    finished = False

    def result(fut: Future[list[tuple[float, float, int]] | None]) -> list[tuple[float, float, int]]:
        while True:
            if stop:  # asked of the caller's flag alone (Stop.set, not stop_all)
                pool_stop.set(int(stop.flag[0]))
            try:
                out = fut.result(timeout=_POLL)
            except TimeoutError:
                poll()
                continue
            if out is None:  # a worker's walk stopped
                stop.set(pool_stop.signum or signal.SIGINT)
                stop.check()
            assert out is not None
            tally.finished()
            poll()
            return out

    with stoppable(pool_stop):
        _SHARED = (work, pool_stop.flag, counters)
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                                   initializer=_worker_start, initargs=(os.getpid(),))
        try:
            pending: deque[Future[list[tuple[float, float, int]] | None]] = deque()
            for i in range(first, len(chunks)):
                prepared = prepare(chunks[i])
                # the first submit forks the workers: no stop signal may reach a child
                # before it has its own handlers, so they wait, blocked, until then
                blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS) if i == first else None
                try:
                    pending.append(pool.submit(_job, chunks[i], prepared, i))
                finally:
                    if blocked is not None:
                        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
                if len(pending) > 2 * workers:  # a few chunks ahead of the workers, not all of them
                    yield from result(pending.popleft())
            while pending:
                yield from result(pending.popleft())
            finished = True
        finally:
            if not finished:  # stopped, failed or abandoned: every walk under way ends at its next node
                pool_stop.set(stop.signum or signal.SIGINT)
            pool.shutdown(wait=True, cancel_futures=True)
            _SHARED = None


def board_at(game: Game, index: int, through: int | None = None) -> tuple[int, ...]:
    """The ``index``-th board of :func:`all_boards` (same order), without listing them."""
    deck = deck_cards(game.num_ranks, game.num_suits)
    sizes = [n for n in game.num_board_cards[: None if through is None else through + 1] if n]
    left = len(deck)
    counts = []
    for n in sizes:
        counts.append(math.comb(left, n))
        left -= n
    # mixed radix, first street most significant (the order all_boards lists them in)
    digits = []
    for c in reversed(counts):
        digits.append(index % c)
        index //= c
    digits.reverse()
    board: tuple[int, ...] = ()
    for n, d in zip(sizes, digits):
        rest = [c for c in deck if c not in board]
        board += _nth_combination(rest, n, d)
    return board


def _nth_combination(items: list[int], k: int, index: int) -> tuple[int, ...]:
    """The ``index``-th k-combination of ``items`` in :func:`itertools.combinations` order."""
    out: list[int] = []
    start = 0
    while k:
        for i in range(start, len(items)):
            c = math.comb(len(items) - i - 1, k - 1)
            if index < c:
                out.append(items[i])
                start = i + 1
                k -= 1
                break
            index -= c
    return tuple(out)
