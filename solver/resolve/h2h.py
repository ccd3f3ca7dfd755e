"""Exact head-to-head of re-solving players, board by sampled board.

:func:`resolved_h2h` measures player A against player B, either of them a blueprint
played through translation or the re-solving player (:class:`~solver.resolve.player.ResolvingWalk`
with an iteration budget), averaged over both seatings, as
:func:`solver.evaluation.head_to_head.head_to_head` does for two translated players.

The unit of the sample is a board dealt through one street (``through``, by default the
one before the last: the turn in hold'em, nothing in Leduc). On each such board the
value is exact: the walk goes over the real public tree from the start of the hand,
every private hand of either player that misses the board in its rows
(:class:`~solver.evaluation._cards.CardLayer` with the board ``fixed``), the later
streets' cards enumerated, every real action either player takes with positive
probability, and every draw of both (a translated player's mapping states; the
re-solving player's keys of :class:`~solver.resolve.exact.ResolvingRules`, the rules the
exact exploitability walks, tested there against the playing player). Each re-solve is
made once per (public history, board through its street, the re-solves before it) by
:func:`~solver.resolve.player.resolve_subgame`, the function the playing player calls,
and serves every hand pair and every later card: a turn re-solve serves the whole
enumerated river. Every board through ``through`` is equally likely, so the game's value
is the mean of the boards' values: exact when every board is walked, else an unbiased
estimate with a 95% interval over the boards (finite-population corrected).

Cost: a board's walk is one walk per seating over the real tree the two players reach,
but its time is the re-solves': their number (per board, the re-solving player's
histories at its re-solving points, times the later cards' boards for a later street)
times a re-solve's (its iterations times its subgame's nodes times the deck's hands).
:func:`pilot` walks a first board to measure both. Measured (``bench/search_h2h.py``,
100 iterations a re-solve, two jobs on two cores): a 20-card final board with the river
re-solved, 1,230 re-solves and 5 s; a 20-card turn board with the turn and the river
re-solved, 35,449 re-solves (the river's for each of 18 cards) and 186 s; a full-deck
final board with the river re-solved, 4,262 re-solves and 82 s.

Workers (``jobs``) are forked before this process runs anything in parallel: a re-solve
computes its ranges with the players' bucket functions, which may run numba's parallel
kernels, and a child of a process that has started GNU OpenMP's threads dies when it
starts them again. So the workers compute their boards' buckets themselves.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from typing import Any

import numpy as np

from poker._stop import Interrupted, Stop, stoppable
from poker.game import Game
from poker.state import Action, State

from ..evaluation._cards import CardLayer, _row_buckets
from ..evaluation.head_to_head import (H2HResult, all_boards, board_at, check_run, evaluate_boards, n_boards,
                                       summarize)
from ..evaluation.real_response import TranslatedPlayer
from ..play.policy import TranslatedPolicy
from .exact import ResolvingRules, _check_budget
from .player import ResolveOptions

__all__ = ["Contender", "MemoryPlan", "Pilot", "ResolvedH2H", "board_h2h", "default_through", "pilot",
           "predict_memory", "resolved_h2h"]


@dataclass(frozen=True)
class Contender:
    """One side of a head-to-head: a blueprint ``policy`` played through translation, or
    re-solved with ``options`` (None: never re-solved)."""

    policy: TranslatedPolicy
    options: ResolveOptions | None = None


class _LayerRules(ResolvingRules):
    """The re-solving player's rules over the rows of a :class:`CardLayer`: every board
    of a street, side by side. What it keeps for a public history (its re-solves and its
    Bayes ranges there) is dropped by :meth:`forget` once the walk has left that
    history's subtree, where nothing asks for it again: a board's walk then holds the
    re-solves of one path, not of the whole tree."""

    def __init__(self, policy: TranslatedPolicy, options: ResolveOptions, position: int, cards: CardLayer,
                 buckets: list[np.ndarray], stop: Stop | None) -> None:
        TranslatedPlayer.__init__(self, policy, buckets)
        self._setup(options, policy.game, position, np.array(cards.hands, dtype=np.int64))
        self.cards = cards
        self.stop = stop

    def _boards(self, state: State) -> list[tuple[tuple[int, ...], slice]]:
        h = self.cards.n_hands
        return [(tuple(b), slice(i * h, (i + 1) * h)) for i, b in enumerate(self.cards.boards[state.round])]

    def forget(self, history: tuple[Action, ...]) -> None:
        """Drop the re-solves and ranges made at ``history`` (the walk is done with it)."""
        for cache in (self._solutions, self._ranges):
            for key in [k for k in cache if k[0] == history]:
                del cache[key]
        self._states.pop(history, None)


def default_through(game: Game) -> int:
    """The street whose boards are sampled by default: the one before the last (the
    turn in hold'em: a turn re-solve then serves every river), the first in a game of
    two streets or fewer."""
    return max(game.num_rounds - 2, 0)


@dataclass
class _Tally:
    """What one board's walks did: real nodes, re-solves made, blueprint fallbacks
    (subgames too big or empty), seconds re-solving."""

    nodes: int = 0
    resolves: int = 0
    failed: int = 0
    seconds: float = 0.0


def _seat_value(game: Game, cards: CardLayer, players: tuple[Any, Any], stop: Stop, watch: Any,
                tally: _Tally) -> float:
    """Seat 0's value (chips per deal given the layer's board) with ``players`` in
    positions 0 and 1. ``watch.done`` gains 1 over the walk (a node's share split evenly
    among the actions taken there), ``watch.nodes`` the real nodes walked."""

    def value(state: State, street: int, ms: tuple[dict, dict], share: float) -> float:
        if not ms[0] or not ms[1]:  # a branch one seat never reaches
            watch.done[0] += share
            return 0.0
        stop.check()
        tally.nodes += 1
        watch.nodes[0] += 1
        if state.round != street:
            ms = tuple({k: cards.expand(r, street, state.round) for k, r in m.items()} for m in ms)  # type: ignore[assignment]
            street = state.round
        if state.actor is None:
            watch.done[0] += share
            return cards.hand_value(state, street, sum(ms[0].values()), sum(ms[1].values()))
        actor = state.actor
        moves = players[actor].own_moves(ms[actor], state)
        if not moves:
            watch.done[0] += share
            return 0.0
        part = share / len(moves)
        total = 0.0
        for a, mine in moves.items():
            theirs = players[1 - actor].after_opponent(ms[1 - actor], state, a)
            total += value(state.apply(a), street, (mine, theirs) if actor == 0 else (theirs, mine), part)
        if forgetting:
            history = tuple(x.action for x in state.history)
            for p in forgetting:
                p.forget(history)
        return total

    forgetting = [p for p in players if isinstance(p, _LayerRules)]

    start = cards.live[0]
    ms = tuple({p.start_key: start.copy()} for p in players)
    return value(State.new_hand(game), 0, ms, 1.0)  # type: ignore[arg-type]


def _player(side: Contender, position: int, cards: CardLayer, buckets: list[np.ndarray], stop: Stop) -> Any:
    if side.options is None:
        return TranslatedPlayer(side.policy, buckets)
    return _LayerRules(side.policy, side.options, position, cards, buckets, stop)


def board_h2h(a: Contender, b: Contender, game: Game, board: tuple[int, ...], through: int,
              stop: Stop | None = None, watch: Any = None) -> tuple[float, float, _Tally]:
    """On ``board`` (dealt through street ``through``): seat 0's value with A in
    position 0 and B in 1, seat 0's value with B there and A in 1 (chips per deal given
    the board), and what the walks did. ``watch`` (optional, as
    :class:`solver.evaluation.head_to_head._Watch`): its ``done`` gains 1 per seating."""
    from ..evaluation.head_to_head import _Watch

    stop = Stop() if stop is None else stop
    watch = _Watch(stop.flag) if watch is None else watch
    cards = CardLayer(game, fixed=(through, tuple(board)))
    buckets: dict[int, list[np.ndarray]] = {}
    for side in (a, b):
        if id(side.policy) not in buckets:
            buckets[id(side.policy)] = [_row_buckets(side.policy, cards, s) for s in range(game.num_rounds)]
    tally = _Tally()
    values = []
    for first, second in ((a, b), (b, a)):
        players = (_player(first, 0, cards, buckets[id(first.policy)], stop),
                   _player(second, 1, cards, buckets[id(second.policy)], stop))
        values.append(_seat_value(game, cards, players, stop, watch, tally))
        for p in players:
            if isinstance(p, ResolvingRules):
                tally.resolves += p.resolves
                tally.failed += p.failed
                tally.seconds += p.resolve_seconds
    return values[0], values[1], tally


def _work(a: Contender, b: Contender, game: Game, through: int, chunk: list[tuple[int, ...]], _prepared: Any,
          watch: Any) -> list[tuple[float, float, int, int, int, float]] | None:
    """:func:`evaluate_boards`'s work: each board of ``chunk`` both seatings; None once
    ``watch``'s flag is set."""
    stop = Stop()
    stop.flag = watch.flag
    out = []
    try:
        for board in chunk:
            v0, v1, t = board_h2h(a, b, game, board, through, stop, watch)
            out.append((v0, v1, t.nodes, t.resolves, t.failed, t.seconds))
    except Interrupted:
        return None
    return out


@dataclass(frozen=True)
class ResolvedH2H:
    """:class:`H2HResult` (``result``: its boards are boards through ``through``) and
    the re-solves: made, left to the blueprint (too big, empty ranges), seconds spent."""

    result: H2HResult
    through: int
    resolves: int
    failed: int
    resolve_seconds: float

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {**self.result.to_dict(), "through": self.through, "resolves": self.resolves,
                "failed": self.failed, "resolve_seconds": self.resolve_seconds}


def resolved_h2h(
    a: Contender,
    b: Contender,
    game: Game | None = None,
    *,
    boards: int | None = None,
    through: int | None = None,
    seed: int = 0,
    jobs: int = 1,
    walking: Callable[[float, int, int], None] | None = None,
    stop: Stop | None = None,
) -> ResolvedH2H:
    """A's expected value against B in the real ``game`` (default: A's policy's),
    averaged over both seatings (module docstring): every board dealt through street
    ``through`` (default :func:`default_through`) when ``boards`` is None or at least
    their number (exact), else ``boards`` of them drawn uniformly without replacement
    with ``seed``. ``jobs``, ``walking`` and ``stop`` as
    :func:`~solver.evaluation.head_to_head.head_to_head`'s (one board a chunk). A
    re-solving side needs an iteration budget (ValueError for a seconds cap)."""
    g = game or a.policy.game
    check_run(g, (a.policy, b.policy), boards, jobs)
    for side in (a, b):
        if side.options is not None:
            _check_budget(side.options)
    street = default_through(g) if through is None else int(through)
    if not 0 <= street < g.num_rounds:
        raise ValueError(f"through must be a street of the game (0 to {g.num_rounds - 1}), got {street}")
    t0 = time.perf_counter()
    total = n_boards(g, street)
    if boards is None or boards >= total:
        chosen = all_boards(g, street)
    else:
        rng = np.random.default_rng(seed)
        chosen = [board_at(g, int(i), street) for i in rng.choice(total, size=boards, replace=False)]
    work = functools.partial(_work, a, b, g, street)
    rows: list[tuple[float, float, int]] = []
    resolves = failed = 0
    seconds = 0.0
    # no chunk here before the fork (cold=False): see the module docstring
    with stoppable(stop) as stop, closing(evaluate_boards(work, lambda chunk: None, chosen, jobs, per_chunk=1,
                                                          cold=False, stop=stop, walking=walking)) as results:
        for v0, v1, nodes, made, fell, spent in results:
            rows.append((v0, v1, nodes))
            resolves += made
            failed += fell
            seconds += spent
        stop.check()
    return ResolvedH2H(summarize(g, rows, total, t0), street, resolves, failed, seconds)


@dataclass(frozen=True)
class MemoryPlan:
    """What a run holds at most at once, per worker (``per_job``) and in all
    (``bytes``): each board's rows, and the re-solves of one path of the walk (one a
    street, one per board of a street dealt after the sampled one), each as big as the
    subgame of its street's start when nobody has bet yet; ``available``: the memory
    the system reports free (None: unknown). ``refused`` when it does not fit."""

    per_job: int
    bytes: int
    available: int | None

    @property
    def refused(self) -> bool:
        return self.available is not None and self.bytes > 0.8 * self.available

    @property
    def refusal(self) -> str:
        return (f"this run would hold about {_mb(self.bytes)} at once and {_mb(self.available or 0)} is free: "
                "fewer --jobs, a smaller --resolve-max-nodes, or deal through a later street with --through")

    def text(self) -> str:
        """One line's worth."""
        free = "" if self.available is None else f" of {_mb(self.available)} free"
        return f"memory about {_mb(self.bytes)}{free}"


def _mb(n: float) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def _available() -> int | None:
    """MemAvailable of /proc/meminfo in bytes (None where there is none)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _solver_bytes(options: ResolveOptions, policy: TranslatedPolicy, street: int) -> int:
    """The bytes of a re-solve at the start of ``street`` before anyone bets (the
    deepest stacks, the biggest tree), built as :func:`resolve_subgame` builds it and
    never solved."""
    from .player import _betting
    from .subgame import SubgameSolver, SubgameTooBig, build_subgame, deck_hands

    game = policy.game
    state = State.new_hand(game)
    while state.actor is not None and state.round < street:
        state = state.apply(Action.call())
    if state.actor is None:
        return 0
    board = tuple(range(game.board_cards_through(street)))  # any cards: the tree's size is the same
    hands = deck_hands(game)
    betting, _ = _betting(policy, options, street)
    limit = max(1, min(options.max_nodes, options.max_cells // hands.shape[0]))
    runouts = None
    try:
        tree = build_subgame(state, betting, board, limit)
    except SubgameTooBig:
        if options.runouts < 1:
            return 0
        try:
            tree = build_subgame(state, betting, board, limit, depth_limited=True)
        except SubgameTooBig:
            return 0
        runouts = options.runouts
    ones = np.ones(hands.shape[0])
    solver = SubgameSolver(state, board, [ones, ones], betting, algorithm="dcfr", runouts=runouts, tree=tree)
    return sum(v.nbytes for v in vars(solver).values() if isinstance(v, np.ndarray)) + sum(
        r.nbytes for r in solver.ranges)


def predict_memory(a: Contender, b: Contender, game: Game, through: int, jobs: int) -> MemoryPlan:
    """:class:`MemoryPlan` of :func:`resolved_h2h` with these sides."""
    hands = math.comb(game.num_ranks * game.num_suits, game.num_hole_cards)
    later = n_boards(game) // n_boards(game, through)  # boards of the last street per sampled board
    # a board's rows: the walk's vectors (a few dozen along a path) and the terminal sums
    per_job = 64 * 8 * later * hands
    for side in (a, b):
        if side.options is None:
            continue
        first = side.options.first_street if side.options.first_street is not None else max(game.num_rounds - 2, 0)
        for s in range(first, game.num_rounds):
            per_board = n_boards(game, s) // n_boards(game, through) if s > through else 1
            per_job += per_board * _solver_bytes(side.options, side.policy, s)
    return MemoryPlan(per_job, per_job * jobs, _available())


@dataclass(frozen=True)
class Pilot:
    """One board walked to predict a run: the board, its seconds (both seatings), the
    re-solves it made and the real nodes it walked."""

    board: tuple[int, ...]
    seconds: float
    resolves: int
    nodes: int


def pilot(a: Contender, b: Contender, game: Game, through: int, seed: int = 0, stop: Stop | None = None) -> Pilot:
    """The first board :func:`resolved_h2h` would sample with ``seed``, walked here."""
    rng = np.random.default_rng(seed)
    total = n_boards(game, through)
    board = board_at(game, int(rng.choice(total, size=1, replace=False)[0]), through)
    t0 = time.perf_counter()
    _, _, tally = board_h2h(a, b, game, board, through, stop)
    return Pilot(board, time.perf_counter() - t0, tally.resolves, tally.nodes)
