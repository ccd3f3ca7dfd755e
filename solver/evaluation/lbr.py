"""Local best response (Lisý and Bowling 2017, "Equilibrium approximation quality of
current no-limit poker bots", arXiv 1612.07547): a lower bound on a player's
exploitability from play.

LBR plays heads-up against a *player* for a number of seeded hands, the seats
alternating (hands ``2j`` and ``2j + 1`` share deal ``j`` with the seats swapped, so the
cards' luck cancels). The player is a translated strategy file (:class:`StrategyOpponent`:
it acts through :class:`solver.play.policy.HandWalk` exactly as ``pokerbot play`` would,
LBR's raises translated like any opponent's) or a card-blind bot
(:class:`BlindOpponent`: ``fold``, ``call``, ``raise``, ``allin``, ``random``).

At each of its decisions LBR knows the opponent's *range*: a weight per opponent private
hand, zero for hands that hold LBR's cards or the board's. It starts uniform and, for a
strategy, is multiplied at each of the strategy's decisions by the probability of the
action it took (:func:`solver.play.policy.range_query`: the exact mixture over translation
outcomes); a card-blind bot's range stays the prior. LBR then picks, among the actions
of the street's action set (:func:`parse_action_set`; by default call only before the
turn, then fold, call, pot raise and all-in, the paper's setting), the one of highest
value assuming the rest of the hand is checked down. Values are chips relative to
folding now (fold = 0); with ``eq`` LBR's showdown equity against the range, ``pot``
the chips in before the action, ``to_call`` and LBR's ``spent``:

* call: ``eq * (pot + to_call) - to_call``;
* raise to ``x`` (LBR's total): ``fp * pot + (1 - fp) * (eq * 2x - (x - spent))``, where
  ``fp`` is the probability the opponent folds to it: for a strategy, its fold
  probability at the real state after the raise, averaged over the range; for a bot its
  known response.

Ties go to the earlier of call, raises (smallest first), fold. The equity is
:func:`range_equity`, a numba kernel over all opponent hands: the remaining board
run-outs enumerated where there are few of them (the river, turn and flop of hold'em)
and sampled, seeded, earlier.

A bot that folds where checking is free (``fold``) *surrenders*: the hand ends and it
loses what it put in, as the paper's always-fold player does.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Protocol

import numpy as np
from numba import njit

from poker.cards import deck_cards
from poker.evaluator import rank_cards
from poker.game import Game
from poker.rng import Dealer
from poker.state import Action, ActionKind, Deal, State

from ..play.blind import BLIND_BOTS, blind_action, fold_probability
from ..play.policy import HandWalk, TranslatedPolicy, TranslationCounts, range_query

__all__ = [
    "BLIND_BOTS",
    "BlindOpponent",
    "LBRResult",
    "LocalBestResponse",
    "Opponent",
    "StrategyOpponent",
    "default_action_spec",
    "parse_action_set",
    "range_equity",
]

#: The card-blind players LBR can face by name.

# ---------------------------------------------------------------- the equity kernel


@njit(cache=True)
def _n_choose_k(n: int, k: int) -> float:
    if k < 0 or k > n:
        return 0.0
    r = 1.0
    for i in range(k):
        r = r * (n - i) / (i + 1)
    return r


@njit(cache=True)
def _score_cards(cards, me, op, me_at, op_at, n_me, kh, hands, live, n_live, weights, used):  # pragma: no cover - compiled
    """Deal the run-out ``cards`` into both hands (from ``me_at`` and ``op_at``), score it,
    and take them back."""
    for j in range(cards.shape[0]):
        c = cards[j]
        me[me_at + j] = c
        op[op_at + j] = c
        used[c] = True
    a, b = _score_runout(me, op, n_me, kh, hands, live, n_live, weights, used)
    for j in range(cards.shape[0]):
        used[cards[j]] = False
    return a, b


@njit(cache=True)
def _score_runout(me, op, n_cards, kh, hands, live, n_live, weights, used):  # pragma: no cover - compiled
    """Weighted wins (tie = half) and weight of the live hands that miss ``used`` cards,
    on the board held in ``me[k:]`` / ``op[kh:]``."""
    mine = rank_cards(me, n_cards)
    num = 0.0
    den = 0.0
    n_op = op.shape[0]
    for t in range(n_live):
        i = live[t]
        clash = False
        for j in range(kh):
            if used[hands[i, j]]:
                clash = True
        if clash:
            continue
        for j in range(kh):
            op[j] = hands[i, j]
        theirs = rank_cards(op, n_op)
        w = weights[i]
        den += w
        if mine > theirs:
            num += w
        elif mine == theirs:
            num += 0.5 * w
    return num, den


@njit(cache=True)
def _showdown_rows(hole, board, total_board, kh):  # pragma: no cover - compiled
    """The two seven-card rows a showdown ranks, filled as far as is known: ``me`` holds
    ``hole`` then ``board``, ``op`` leaves its first ``kh`` entries for the opponent's hand;
    the run-out goes after the board in both."""
    k = hole.shape[0]
    nb = board.shape[0]
    me = np.empty(k + total_board, np.int64)
    op = np.empty(kh + total_board, np.int64)
    for j in range(k):
        me[j] = hole[j]
    for j in range(nb):
        me[k + j] = board[j]
        op[kh + j] = board[j]
    return me, op


@njit(cache=True)
def _range_equity(hole, board, total_board, hands, weights, rest, samples, enum_limit, seed):  # pragma: no cover - compiled
    k = hole.shape[0]
    nb = board.shape[0]
    kh = hands.shape[1]
    missing = total_board - nb
    known = np.zeros(256, np.bool_)
    for c in hole:
        known[c] = True
    for c in board:
        known[c] = True
    n = hands.shape[0]
    live = np.empty(n, np.int64)
    n_live = 0
    for i in range(n):
        if weights[i] <= 0.0:
            continue
        ok = True
        for j in range(kh):
            if known[hands[i, j]]:
                ok = False
        if ok:
            live[n_live] = i
            n_live += 1
    if n_live == 0:
        return 0.5
    me, op = _showdown_rows(hole, board, total_board, kh)
    n_me = k + total_board
    used = np.zeros(256, np.bool_)
    num = 0.0
    den = 0.0
    r = rest.shape[0]
    if missing == 0:
        a, b = _score_runout(me, op, n_me, kh, hands, live, n_live, weights, used)
        return a / b if b > 0.0 else 0.5
    if _n_choose_k(r, missing) <= enum_limit:
        idx = np.arange(missing)
        while True:
            a, b = _score_cards(rest[idx], me, op, k + nb, kh + nb, n_me, kh, hands, live, n_live, weights, used)
            num += a
            den += b
            # next combination of ``missing`` indices out of ``r``
            j = missing - 1
            while j >= 0 and idx[j] == r - missing + j:
                j -= 1
            if j < 0:
                break
            idx[j] += 1
            for t in range(j + 1, missing):
                idx[t] = idx[t - 1] + 1
    else:
        np.random.seed(seed)
        pool = rest.copy()
        for _ in range(samples):
            for j in range(missing):  # partial Fisher-Yates: pool[:missing] is the draw
                t = j + np.random.randint(r - j)
                c = pool[t]
                pool[t] = pool[j]
                pool[j] = c
            a, b = _score_cards(pool[:missing], me, op, k + nb, kh + nb, n_me, kh, hands, live, n_live, weights, used)
            num += a
            den += b
    return num / den if den > 0.0 else 0.5


def range_equity(
    hole: Sequence[int],
    board: Sequence[int],
    hands: np.ndarray,
    weights: np.ndarray,
    game: Game,
    *,
    samples: int = 1000,
    enum_limit: int = 2000,
    seed: int = 0,
) -> float:
    """LBR's share of the pot at a showdown: ``hole`` against opponent ``hands``
    (``int[n, hole cards]``) weighted by ``weights`` (any scale; hands that hold a known
    card are ignored), over the board completions of ``game`` from ``board``. Every
    completion is enumerated when there are at most ``enum_limit`` of them (exact), else
    ``samples`` are drawn with ``seed``. A tie counts half."""
    known = set(int(c) for c in hole) | set(int(c) for c in board)
    rest = np.array([c for c in deck_cards(game.num_ranks, game.num_suits) if c not in known], np.int64)
    return float(
        _range_equity(
            np.asarray(hole, np.int64),
            np.asarray(board, np.int64),
            int(game.total_board_cards),
            np.ascontiguousarray(hands, dtype=np.int64),
            np.ascontiguousarray(weights, dtype=np.float64),
            rest,
            int(samples),
            float(enum_limit),
            int(seed) & 0xFFFFFFFF,
        )
    )


# ---------------------------------------------------------------- LBR's action set

_TOKEN_HELP = "f (fold), c (call), a (all-in), p or <x>p (raise x pots, x = 1 by default)"


def default_action_spec(game: Game) -> str:
    """The paper's setting: call only, except fold, call, pot, all-in on the last two
    streets (hold'em: ``c/c/fcpa/fcpa``)."""
    return "/".join("c" if r < game.num_rounds - 2 else "fcpa" for r in range(game.num_rounds))


def parse_action_set(spec: str, game: Game) -> list[list[tuple[str, float]]]:
    """Per street, LBR's candidate actions: ``("f", 0)``, ``("c", 0)``, ``("a", 0)`` or
    ``("p", x)`` (a raise of ``x`` pots after calling). ``spec`` has one group per street
    separated by ``/``; a group is tokens (optionally comma-separated): ``f``, ``c``,
    ``a``, ``p``, ``<x>p`` (e.g. ``c/c/f,c,0.5p,p,a/fcpa``). A spec shorter than the game's
    streets repeats its last group; every street needs ``c``."""
    groups = [g.strip() for g in spec.split("/")]
    if not spec.strip() or any(not g for g in groups):
        raise ValueError(f"action set {spec!r}: one group of actions per street, separated by '/'")
    if len(groups) > game.num_rounds:
        raise ValueError(f"action set {spec!r} has {len(groups)} streets; the game has {game.num_rounds}")
    groups += [groups[-1]] * (game.num_rounds - len(groups))
    out: list[list[tuple[str, float]]] = []
    for g in groups:
        acts: list[tuple[str, float]] = []
        text = g.replace(",", " ").replace(" ", ",")
        i = 0
        while i < len(text):
            ch = text[i]
            if ch == ",":
                i += 1
                continue
            if ch in "fca":
                acts.append((ch, 0.0))
                i += 1
                continue
            j = i
            while j < len(text) and (text[j].isdigit() or text[j] == "."):
                j += 1
            if j < len(text) and text[j] == "p":
                try:
                    x = float(text[i:j]) if j > i else 1.0
                except ValueError:
                    raise ValueError(f"action set {spec!r}: bad pot fraction {text[i:j]!r}") from None
                if not x > 0:
                    raise ValueError(f"action set {spec!r}: a raise of {x} pots")
                acts.append(("p", x))
                i = j + 1
                continue
            raise ValueError(f"action set {spec!r}: cannot read {text[i:]!r}; tokens are {_TOKEN_HELP}")
        if ("c", 0.0) not in acts:
            raise ValueError(f"action set {spec!r}: every street needs c (call) in {g!r}")
        out.append(acts)
    return out


# ---------------------------------------------------------------- opponents


class Opponent(Protocol):
    """What LBR plays against (see :class:`StrategyOpponent`, :class:`BlindOpponent`)."""

    name: str
    card_blind: bool

    def start(self, position: int, hand: int) -> None:
        """A new hand in which the opponent sits at ``position``."""

    def act(self, state: State, hole: Sequence[int], board: Sequence[int]) -> Action | None:
        """Its action (``None``: it surrenders where a fold is not legal)."""

    def likelihood(
        self, state: State, board: Sequence[int], action: Action
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """``(hands, p)``: the probability each private hand takes ``action`` at ``state``
        (None: the same for every hand)."""

    def fold_probability(
        self, state: State, board: Sequence[int], weigh: Callable[[np.ndarray], np.ndarray]
    ) -> float:
        """Its probability of folding at ``state`` (it is to act), over the range:
        ``weigh(hands)`` gives the normalized range weights of ``hands``."""


class BlindOpponent:
    """A card-blind bot (:mod:`solver.play.blind`: ``fold``, ``call``, ``raise``, ``allin``,
    ``random``); its range stays the prior."""

    card_blind = True

    def __init__(self, name: str, seed: int = 0) -> None:
        if name not in BLIND_BOTS:
            raise ValueError(f"unknown bot {name!r}; choose one of {', '.join(BLIND_BOTS)}")
        self.name = name
        self.rng = random.Random(seed)

    def start(self, position: int, hand: int) -> None:
        pass

    def act(self, state: State, hole: Sequence[int], board: Sequence[int]) -> Action | None:
        return blind_action(self.name, state, self.rng)

    def likelihood(self, state: State, board: Sequence[int], action: Action) -> None:
        return None

    def fold_probability(self, state: State, board: Sequence[int], weigh: Callable[[np.ndarray], np.ndarray]) -> float:
        return fold_probability(self.name, state)


class StrategyOpponent:
    """A translated strategy: acts through :class:`HandWalk` (seeded by ``seed`` and the
    hand number), its range updated from :func:`range_query`."""

    card_blind = False

    def __init__(self, policy: TranslatedPolicy, seed: int = 0, name: str = "strategy") -> None:
        self.policy = policy
        self.seed = int(seed)
        self.name = name
        self.counts = TranslationCounts()
        self._walk: HandWalk | None = None

    def start(self, position: int, hand: int) -> None:
        self._walk = HandWalk(self.policy, position, self.seed, hand, counts=self.counts)

    def act(self, state: State, hole: Sequence[int], board: Sequence[int]) -> Action | None:
        assert self._walk is not None
        action, _ = self._walk.decide(state, hole, board)
        return action

    def likelihood(self, state: State, board: Sequence[int], action: Action) -> tuple[np.ndarray, np.ndarray] | None:
        r = range_query(self.policy, state, board)
        key = (action.kind, int(action.amount or 0))
        for j, a in enumerate(r.actions):
            if (a.kind, int(a.amount or 0)) == key:
                return r.hands, r.probs[:, j]
        return None  # cannot happen for its own actions; leave the range as it is

    def fold_probability(self, state: State, board: Sequence[int], weigh: Callable[[np.ndarray], np.ndarray]) -> float:
        r = range_query(self.policy, state, board)
        if not r.actions or r.actions[0].kind is not ActionKind.FOLD:
            return 0.0
        return float(np.dot(weigh(r.hands), r.probs[:, 0]))


# ---------------------------------------------------------------- the match


@dataclass
class LBRResult:
    """LBR's winnings: ``mbb_per_game`` with ``ci95`` (a 95% interval over seat pairs),
    ``chips_per_game``, per seat, and timing.

    ``values``: LBR's chips in each hand, in play order (hands ``2j`` and ``2j + 1`` share
    deal ``j`` with the seats swapped); :attr:`mbb_values` is the same in mbb, and
    :attr:`deal_mbb_values` the mean of each deal's pair: the samples ``ci95`` is over."""

    player: str
    game: str
    hands: int
    chips_per_game: float
    mbb_per_game: float
    ci95: tuple[float, float]
    by_seat: list[float]
    seconds: float
    actions: str
    seed: int
    values: np.ndarray = field(repr=False)
    translation: dict[str, int] | None = None
    #: the game's big blind (chips), the unit of the mbb figures
    big_blind: float = 0.0

    @property
    def seconds_per_hand(self) -> float:
        return self.seconds / self.hands if self.hands else 0.0

    @property
    def mbb_values(self) -> np.ndarray:
        """LBR's winnings per hand in mbb, in play order."""
        return self.values * (1000.0 / self.big_blind)

    @property
    def deal_mbb_values(self) -> np.ndarray:
        """The mean over each deal's pair of hands (the last deal may have one hand), in
        mbb and deal order: the independent samples of ``ci95``."""
        v = self.mbb_values
        return np.array([v[i : i + 2].mean() for i in range(0, v.size, 2)])

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {
            "player": self.player,
            "game": self.game,
            "hands": self.hands,
            "mbb_per_game": self.mbb_per_game,
            "ci95": list(self.ci95),
            "chips_per_game": self.chips_per_game,
            "mbb_per_game_by_lbr_seat": self.by_seat,
            "seconds": self.seconds,
            "seconds_per_hand": self.seconds_per_hand,
            "hands_per_second": self.hands / self.seconds if self.seconds > 0 else None,
            "actions": self.actions,
            "seed": self.seed,
            "translation": self.translation,
        }


#: ``on_decision(state, hands, weights, equity, choice)``: called at each LBR decision
#: with the opponent's normalized range (``weights`` over ``hands``), for inspection.
DecisionHook = Callable[[State, np.ndarray, np.ndarray, float | None, Action], None]


class LocalBestResponse:
    """LBR in ``game`` against ``opponent`` (see the module docstring). ``actions``: the
    action set spec (:func:`parse_action_set`; default :func:`default_action_spec`);
    ``samples``: run-outs drawn where they are not enumerated; ``seed``: deals and
    samples."""

    def __init__(
        self,
        game: Game,
        opponent: Opponent,
        *,
        actions: str | None = None,
        samples: int = 1000,
        enum_limit: int = 2000,
        seed: int = 0,
    ) -> None:
        if game.num_players != 2:
            raise ValueError(f"LBR is heads-up; {game.name or 'this game'} has {game.num_players} players")
        self.game = game
        self.opponent = opponent
        self.action_spec = actions or default_action_spec(game)
        self.action_set = parse_action_set(self.action_spec, game)
        self.samples = int(samples)
        self.enum_limit = int(enum_limit)
        self.seed = int(seed)
        k = game.num_hole_cards
        deck = deck_cards(game.num_ranks, game.num_suits)
        self.hands = np.array(sorted(combinations(sorted(deck), k)), np.int64).reshape(-1, k)
        self._index = np.full(52**k, -1, np.int64)
        self._index[self._codes(self.hands)] = np.arange(self.hands.shape[0])
        self._card_hit = np.zeros((52, self.hands.shape[0]), bool)  # hands holding each card
        for j in range(k):
            self._card_hit[self.hands[:, j], np.arange(self.hands.shape[0])] = True

    @staticmethod
    def _codes(hands: np.ndarray) -> np.ndarray:
        h = np.sort(np.asarray(hands, np.int64), axis=1)
        code = np.zeros(h.shape[0], np.int64)
        for j in range(h.shape[1]):
            code = code * 52 + h[:, j]
        return code

    def index_of(self, hands: np.ndarray) -> np.ndarray:
        """Rows of :attr:`hands` for these private hands."""
        return self._index[self._codes(hands)]

    # -- one decision

    def _candidates(self, state: State) -> list[Action]:
        acts: list[Action] = [Action.call()]
        raises: list[int] = []
        fold = False
        lo, hi = state.min_raise_to, state.max_raise_to
        for kind, x in self.action_set[state.round]:
            if kind == "f":
                fold = state.can_fold()
            elif kind in "ap" and lo is not None and hi is not None:
                if kind == "a" or self.game.is_limit:
                    to = hi if not self.game.is_limit else lo
                else:
                    to = state.max_spent + int(round(x * (state.pot + state.to_call)))
                    to = min(max(to, lo), hi)
                if to not in raises:
                    raises.append(to)
        acts += [Action.raise_to(to) for to in sorted(raises)]
        if fold:
            acts.append(Action.fold())
        return acts

    def decide(
        self, state: State, hole: Sequence[int], board: Sequence[int], weights: np.ndarray, hand: int
    ) -> tuple[Action, float | None]:
        """LBR's action at ``state`` (LBR to act) with range ``weights`` (over
        :attr:`hands`, normalized, zero where a card is known), and the equity used."""
        cands = self._candidates(state)
        if len(cands) == 1:
            return cands[0], None
        eq = range_equity(
            hole, board, self.hands, weights, self.game, samples=self.samples,
            enum_limit=self.enum_limit, seed=(self.seed * 1_000_003 + hand * 101 + len(state.history)),
        )
        me = state.actor
        assert me is not None
        spent = state.spent[me]
        pot = state.pot
        to_call = state.to_call
        weigh = self._weigher(weights)
        best, best_v = cands[0], eq * (pot + to_call) - to_call
        for a in cands[1:]:
            if a.kind is ActionKind.FOLD:
                v = 0.0
            else:
                x = int(a.amount or 0)
                after = state.apply(a)
                fp = self.opponent.fold_probability(after, board, weigh) if after.actor is not None else 0.0
                v = fp * pot + (1.0 - fp) * (eq * 2 * x - (x - spent))
            if v > best_v:
                best, best_v = a, v
        return best, eq

    def _weigher(self, weights: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        def weigh(hands: np.ndarray) -> np.ndarray:
            idx = self.index_of(hands)
            return np.where(idx >= 0, weights[np.maximum(idx, 0)], 0.0)

        return weigh

    # -- one hand

    def play_hand(self, deal: Deal, lbr: int, hand: int, on_decision: DecisionHook | None = None) -> float:
        """LBR's chips won in one hand of ``deal``, LBR at position ``lbr``."""
        game = self.game
        opp = 1 - lbr
        opponent = self.opponent
        opponent.start(opp, hand)
        hole = deal.holes[lbr]
        prior = np.ones(self.hands.shape[0])
        for c in hole:
            prior[self._card_hit[c]] = 0.0
        w = prior.copy()
        state = State.new_hand(game, deal)
        while state.actor is not None:
            board = deal.board_through(state.round)
            if state.actor == lbr:
                for c in board:
                    w[self._card_hit[c]] = 0.0
                total = w.sum()
                if total <= 0.0:  # every hand ruled out (cannot happen with exact queries)
                    w = prior.copy()
                    for c in board:
                        w[self._card_hit[c]] = 0.0
                    total = w.sum()
                w /= total
                action, eq = self.decide(state, hole, board, w, hand)
                if on_decision is not None:
                    on_decision(state, self.hands, w.copy(), eq, action)
            else:
                action = opponent.act(state, deal.holes[opp], board)
                if action is None:  # surrender where a fold is not legal
                    return float(state.spent[opp])
                if not opponent.card_blind:
                    lik = opponent.likelihood(state, board, action)
                    if lik is not None:
                        hands, p = lik
                        w[self.index_of(hands)] *= p
            state = state.apply(action)
        return float(state.values()[lbr])

    # -- a match

    def run(
        self,
        hands: int,
        on_decision: DecisionHook | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> LBRResult:
        """Play ``hands`` hands (hand ``h``: deal ``h // 2``, LBR at position ``h % 2``)."""
        if hands < 1:
            raise ValueError("LBR needs at least one hand")
        game = self.game
        dealer = Dealer(game, self.seed)
        values = np.zeros(hands)
        t0 = time.perf_counter()
        deal = None
        for h in range(hands):
            if h % 2 == 0:
                deal = dealer.next_deal()
            assert deal is not None
            values[h] = self.play_hand(deal, h % 2, h, on_decision)
            if progress is not None:
                progress(h + 1)
        seconds = time.perf_counter() - t0
        scale = 1000.0 / game.big_blind
        # Pairs of hands on one deal are the independent units of the interval.
        units = np.array([values[i : i + 2].mean() for i in range(0, hands, 2)])
        mean = float(values.mean())
        half = 1.96 * float(units.std(ddof=1)) / math.sqrt(len(units)) if len(units) > 1 else math.inf
        by_seat = [float(values[s::2].mean() * scale) if values[s::2].size else float("nan") for s in (0, 1)]
        counts = getattr(self.opponent, "counts", None)
        return LBRResult(
            player=self.opponent.name,
            game=game.name,
            hands=hands,
            chips_per_game=mean,
            mbb_per_game=mean * scale,
            ci95=((mean - half) * scale, (mean + half) * scale),
            by_seat=by_seat,
            seconds=seconds,
            actions=self.action_spec,
            seed=self.seed,
            values=values,
            translation=counts.to_dict() if counts is not None else None,
            big_blind=float(game.big_blind),
        )
