"""Exact head-to-head value of two translated players in the real game.

:func:`head_to_head` measures player A against player B, each a blueprint played in the
real game through action translation (:class:`solver.policy.TranslatedPolicy`; the two
may have different card and betting abstractions), as the expected value of A in chips
per game and in mbb/g (``1000 * chips / game.big_blind``), averaged over both seatings
(A in position 0 and B in 1, then swapped).

What is computed exactly
------------------------
For a fixed final board (every street's cards, in dealing order), the walk goes over the
REAL public tree restricted to the real actions the players take with positive
probability, and carries for EACH player its *mapping states* (abstract node -> reach
vector over the player's private hands that miss the board), exactly as
:mod:`solver.real_response` does for one player: at the player's own decision the
mapping states are grouped by the real action :meth:`TranslatedPolicy.real_action` makes
of each abstract child; at the other's action each state splits by the translation's
probabilities (:meth:`TranslatedPolicy.translate`); the fallbacks are those of
:class:`solver.policy.HandWalk` (out of step: check or call; the opponent acting where
the tree has nobody to act: lost, checks or calls for the rest of the hand). The players'
translation draws are independent random choices with the mapping's probabilities (what
a match's keyed draws stand for). At a terminal, the value is summed over every (hand
of seat 0, hand of seat 1) pair of disjoint hands: folds by the folder's chips, showdowns
by hand strength on the board (ties split). Every (board, hand 0, hand 1) deal is equally
likely, and every board has the same number of hand pairs, so the value of the game is
the plain mean over final boards of the per-board values.

* Boards enumerated (``boards=None``, or at least as many as there are): the value is
  exact (to rounding); the interval has zero width.
* Boards sampled (``boards=N``): N distinct final boards drawn uniformly (without
  replacement, with ``seed``); each board's value is still exact, the mean over them is
  an unbiased estimate, and ``ci95`` is mean +- 1.96 standard errors over the boards (with
  the finite-population correction, so it shrinks to zero width as N reaches all boards).

Cost: one walk per board and seating, with vectors over the hands that miss the board
(Leduc: 5 hands, 6 boards, about 0.01 s a board; the 20-card short hold'em: 136 hands,
6,840 ordered final boards of 3 cards, 0.5 to 2 s a board for both seatings with the
shipped strategy, so every board takes one to a few hours: sample boards there).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from poker.cards import deck_cards
from poker.evaluator import evaluate
from poker.game import Game
from poker.state import State

# the mapping-state rules must be the very ones the exploitability walk uses
from .policy import TranslatedPolicy
from .real_response import MappingStates, TranslatedPlayer

__all__ = ["H2HResult", "all_boards", "board_value", "head_to_head"]


@dataclass(frozen=True)
class H2HResult:
    """Value of A against B, averaged over both seatings.

    ``chips_per_game`` / ``mbb_per_game``: the mean over the boards evaluated (exact when
    ``exact``); ``ci95``: the 95% interval of ``mbb_per_game`` over sampled boards (the
    point itself when every board was evaluated); ``seat_values``: A's value in position
    0 and in position 1 (chips per game); ``boards``: boards evaluated, of
    ``boards_total``; ``nodes``: real public nodes walked; ``seconds``: wall time.
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


def all_boards(game: Game) -> list[tuple[int, ...]]:
    """Every final board in dealing order: each street's cards a combination (sorted)
    of the cards left, so every board is equally likely. ``[()]`` without a board."""
    deck = deck_cards(game.num_ranks, game.num_suits)
    boards: list[tuple[int, ...]] = [()]
    for n in game.num_board_cards:
        if n:
            boards = [b + new for b in boards for new in combinations([c for c in deck if c not in b], n)]
    return boards


def _n_boards(game: Game) -> int:
    """``len(all_boards(game))`` without listing them."""
    left, total = game.num_ranks * game.num_suits, 1
    for n in game.num_board_cards:
        total *= math.comb(left, n)
        left -= n
    return total


def _player(policy: TranslatedPolicy, game: Game, hands: np.ndarray, board: tuple[int, ...]) -> TranslatedPlayer:
    """One translated player on one final board, over the hands that miss it (the same
    rows on every street): the exploitability walk's rules (:class:`TranslatedPlayer`)."""
    k = game.num_hole_cards
    buckets: list[np.ndarray] = []
    for s in range(game.num_rounds):
        seen = board[: game.board_cards_through(s)]
        if policy.bucket_batch is not None:
            cards = np.concatenate([hands, np.tile(np.asarray(seen, dtype=np.int64), (hands.shape[0], 1))], axis=1)
            buckets.append(np.asarray(policy.bucket_batch(s, np.ascontiguousarray(cards)), dtype=np.int64))
        else:
            buckets.append(np.array([policy.bucket(s, h[:k], seen) for h in hands.tolist()], dtype=np.int64))
    return TranslatedPlayer(policy, buckets)


class _Board:
    """Hands that miss one final board and the terminal matrices over (hand of seat 0,
    hand of seat 1): ``consistent`` (disjoint hands) and ``showdown`` (the sign of seat 0's
    hand against seat 1's, on disjoint pairs)."""

    def __init__(self, game: Game, board: tuple[int, ...]) -> None:
        deck = [c for c in deck_cards(game.num_ranks, game.num_suits) if c not in board]
        self.board = board
        self.hands = np.array(list(combinations(deck, game.num_hole_cards)), dtype=np.int64)
        self.hands = self.hands.reshape(-1, game.num_hole_cards)
        hs = self.hands
        clash = (hs[:, None, :, None] == hs[None, :, None, :]).any(axis=(2, 3))
        self.consistent = (~clash).astype(np.float64)
        strength = np.array([evaluate(tuple(h) + board) for h in hs.tolist()], dtype=np.float64)
        self.showdown = np.sign(strength[:, None] - strength[None, :]) * self.consistent
        self.pairs = float(self.consistent.sum())


def _walk(
    state: State, players: tuple[TranslatedPlayer, TranslatedPlayer], ms: tuple[MappingStates, MappingStates], board: _Board,
    count: list[int],
) -> float:
    """Seat 0's chips summed over the (hand 0, hand 1) pairs, weighted by both reaches."""
    count[0] += 1
    if state.actor is None:
        r0, r1 = sum(ms[0].values()), sum(ms[1].values())
        spent = state.spent
        if state.folded[0]:
            return -spent[0] * float(r0 @ board.consistent @ r1)
        if state.folded[1]:
            return spent[1] * float(r0 @ board.consistent @ r1)
        return min(spent) * float(r0 @ board.showdown @ r1)
    actor = state.actor
    total = 0.0
    for a, mine in players[actor].own_moves(ms[actor], state).items():
        theirs = players[1 - actor].after_opponent(ms[1 - actor], state, a)
        pair = (mine, theirs) if actor == 0 else (theirs, mine)
        total += _walk(state.apply(a), players, pair, board, count)
    return total


def board_value(
    first: TranslatedPolicy, second: TranslatedPolicy, game: Game, board: tuple[int, ...]
) -> tuple[float, int]:
    """Seat 0's expected chips on the final ``board`` (dealing order) when ``first`` plays
    position 0 and ``second`` position 1, averaged over the disjoint hand pairs; and the
    number of real nodes walked."""
    b = _Board(game, board)
    players = (_player(first, game, b.hands, board), _player(second, game, b.hands, board))
    ones = np.ones(b.hands.shape[0])
    count = [0]
    v = _walk(State.new_hand(game), players, ({0: ones}, {0: ones.copy()}), b, count)
    return v / b.pairs, count[0]


def head_to_head(
    a: TranslatedPolicy,
    b: TranslatedPolicy,
    game: Game | None = None,
    *,
    boards: int | None = None,
    seed: int = 0,
) -> H2HResult:
    """A's expected value against B in the real ``game`` (default: A's), averaged over
    both seatings (module docstring). ``boards``: None for every final board (exact), or
    the number of final boards to sample uniformly without replacement with ``seed``
    (every board when there are no more than that)."""
    g = game or a.game
    if g.num_players != 2:
        raise ValueError(f"head-to-head is for 2 players, the game has {g.num_players}")
    for name, p in (("A", a), ("B", b)):
        if p.game != g:
            raise ValueError(f"player {name} was made for {p.game.name or 'another game'}, not {g.name}")
    if boards is not None and boards < 1:
        raise ValueError(f"boards must be at least 1, got {boards}")
    t0 = time.perf_counter()
    total = _n_boards(g)
    if boards is None or boards >= total:
        chosen = all_boards(g)
    else:
        # sample indices into the (never listed) sequence of boards, then decode them
        rng = np.random.default_rng(seed)
        idx = rng.choice(total, size=boards, replace=False)
        chosen = [_board_at(g, int(i)) for i in idx]
    per_board: list[float] = []
    seats = np.zeros(2)
    nodes = 0
    for board in chosen:
        v0, n0 = board_value(a, b, g, board)  # A in position 0
        v1, n1 = board_value(b, a, g, board)  # A in position 1: A's value is -seat 0's
        per_board.append((v0 - v1) / 2.0)
        seats += (v0, -v1)
        nodes += n0 + n1
    n = len(chosen)
    values = np.array(per_board)
    mean = float(values.mean())
    exact = n == total
    mbb = 1000.0 * mean / g.big_blind
    if exact or n < 2:
        half = 0.0 if exact else math.inf
    else:
        fpc = math.sqrt((total - n) / (total - 1))
        half = 1.96 * float(values.std(ddof=1)) / math.sqrt(n) * fpc * 1000.0 / g.big_blind
    return H2HResult(
        game=g.name,
        chips_per_game=mean,
        mbb_per_game=mbb,
        ci95=(mbb - half, mbb + half),
        exact=exact,
        seat_values=(float(seats[0] / n), float(seats[1] / n)),
        boards=n,
        boards_total=total,
        nodes=nodes,
        seconds=time.perf_counter() - t0,
    )


def _board_at(game: Game, index: int) -> tuple[int, ...]:
    """The ``index``-th board of :func:`all_boards` (same order), without listing them."""
    deck = deck_cards(game.num_ranks, game.num_suits)
    sizes = [n for n in game.num_board_cards if n]
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
