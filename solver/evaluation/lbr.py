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
hand, zero for hands that hold LBR's cards or the board's. For a strategy it is the exact
Bayes posterior of the translated player (:class:`PlayerRange`): a hand's weight is the
sum, over the ways the translation's draws can map the hand's real history onto the
abstract tree, of the branch's probability times the product of that hand's probabilities
of the actions it took along the branch (the fallback check or call where the tree cannot
follow included). The draws persist across the hand's decisions, so this is not the
product of per-decision mixtures. A card-blind bot's range stays the prior.

LBR then picks, among the actions of the street's action set (:func:`parse_action_set`;
by default call only before the turn, then fold, call, pot raise and all-in, the paper's
setting; :func:`leak_action_spec` derives a set from a strategy's own tree), the one of
highest value assuming the rest of the hand is checked down. Values are chips relative to
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

Stopping (:mod:`poker._stop`): :meth:`LocalBestResponse.run` and
:meth:`LocalBestResponse.exact_values` play off the main thread when called from it
(:func:`poker._stop.run_stoppable`), so that SIGINT and SIGTERM act at once; the hands
read the run's stop flag at every decision and the equity kernel before every run-out,
and a stopped run raises :class:`poker._stop.Interrupted` with no result.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations, permutations
from typing import Any, Protocol

import numpy as np
from numba import njit

from abstraction.betting import BettingAbstraction
from poker._compile import cold
from poker._stop import Stop, counter, run_stoppable, stoppable
from poker.cards import deck_cards
from poker.evaluator import rank_cards
from poker.game import Game
from poker.rng import Dealer
from poker.state import Action, ActionKind, Deal, State

from ..play.blind import BLIND_BOTS, blind_action, fold_probability
from ..play.policy import HandWalk, TranslatedPolicy, TranslationCounts
from .player_range import PlayerRange

__all__ = [
    "BLIND_BOTS",
    "BlindOpponent",
    "LBRResult",
    "LocalBestResponse",
    "Opponent",
    "StrategyOpponent",
    "LEAKS_PRESET",
    "PlayerRange",
    "default_action_spec",
    "kernels_cold",
    "leak_action_spec",
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


@njit(cache=True, nogil=True)
def _range_equity(hole, board, total_board, hands, weights, rest, samples, enum_limit, seed, flag):  # pragma: no cover - compiled
    """:func:`range_equity`'s kernel; returns at once (a meaningless figure) once
    ``flag[0]`` is set, read before each run-out."""
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
            if flag[0] != 0:
                return 0.5
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
            if flag[0] != 0:
                return 0.5
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
    stop: Stop | None = None,
) -> float:
    """LBR's share of the pot at a showdown: ``hole`` against opponent ``hands``
    (``int[n, hole cards]``) weighted by ``weights`` (any scale; hands that hold a known
    card are ignored), over the board completions of ``game`` from ``board``. Every
    completion is enumerated when there are at most ``enum_limit`` of them (exact), else
    ``samples`` are drawn with ``seed``. A tie counts half. The kernel releases the GIL and
    reads ``stop``'s flag before each run-out: raises :class:`poker._stop.Interrupted` once
    it is set."""
    known = set(int(c) for c in hole) | set(int(c) for c in board)
    rest = np.array([c for c in deck_cards(game.num_ranks, game.num_suits) if c not in known], np.int64)
    flag = stop.flag if stop is not None else np.zeros(1, np.int64)
    eq = float(
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
            flag,
        )
    )
    if stop is not None:
        stop.check()  # a stopped kernel's figure is not the equity
    return eq


def kernels_cold() -> bool:
    """Whether LBR's equity kernel compiles before it runs in this process
    (:func:`poker._compile.cold`): the first decision then takes some seconds. The
    opponent's kernels (its buckets, its range) compile on their own account."""
    return cold(_range_equity)


# ---------------------------------------------------------------- LBR's action set

_TOKEN_HELP = "f (fold), c (call), a (all-in), m (minimum raise), p or <x>p (raise x pots, x = 1 by default)"
#: ``--actions leaks``: the set :func:`leak_action_spec` derives from the strategy's tree.
LEAKS_PRESET = "leaks"


def default_action_spec(game: Game) -> str:
    """The paper's setting: call only, except fold, call, pot, all-in on the last two
    streets (hold'em: ``c/c/fcpa/fcpa``)."""
    return "/".join("c" if r < game.num_rounds - 2 else "fcpa" for r in range(game.num_rounds))


def parse_action_set(spec: str, game: Game) -> list[list[tuple[str, float]]]:
    """Per street, LBR's candidate actions: ``("f", 0)``, ``("c", 0)``, ``("a", 0)``,
    ``("m", 0)`` (the minimum raise) or ``("p", x)`` (a raise of ``x`` pots after
    calling). ``spec`` has one group per street separated by ``/``; a group is tokens
    (optionally comma-separated): ``f``, ``c``, ``a``, ``m``, ``p``, ``<x>p`` (e.g.
    ``c/c/f,c,0.5p,p,a/fcpa``). A spec shorter than the game's
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
            if ch in "fcam":
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


def leak_action_spec(betting: BettingAbstraction, game: Game) -> str:
    """A leak-seeking action set from a strategy's betting abstraction: on every street,
    fold, call, the minimum raise, all-in, and raises of sizes the tree does not hold:
    half its smallest size, the geometric mean of each two neighbouring sizes, and twice
    its largest (opening and later sizes together, in pots after calling). LBR may raise
    whenever the real game allows, so it also re-raises past the tree's cap, where the
    translated player can only check or call. In a limit game: ``fcp`` on every street."""
    if game.is_limit:
        return "/".join("fcp" for _ in range(game.num_rounds))
    groups = []
    for r in range(game.num_rounds):
        street = betting.street(r)
        sizes = sorted(set(street.first) | set(street.later))
        probes: list[float] = []
        if sizes:
            probes.append(sizes[0] / 2)
            probes += [math.sqrt(lo * hi) for lo, hi in zip(sizes, sizes[1:])]
            probes.append(sizes[-1] * 2)
        else:
            probes = [0.5, 1.0]
        tokens = ["f", "c", "m"] + [f"{round(x, 2):g}p" for x in probes] + ["a"]
        groups.append(",".join(tokens))
    return "/".join(groups)


# ---------------------------------------------------------------- opponents


class Opponent(Protocol):
    """What LBR plays against (see :class:`StrategyOpponent`, :class:`BlindOpponent`)."""

    name: str
    card_blind: bool

    def start(self, position: int, hand: int, stop: Stop | None = None) -> None:
        """A new hand in which the opponent sits at ``position``; ``stop``: the run's stop
        flag, for an opponent whose own decisions or range run long kernels (the re-solving
        player's subgames), which then raise :class:`poker._stop.Interrupted` once set."""

    def act(self, state: State, hole: Sequence[int], board: Sequence[int]) -> Action | None:
        """Its action (``None``: it surrenders where a fold is not legal)."""

    def range(self, hands: np.ndarray, position: int) -> PlayerRange | None:
        """Its exact range over ``hands`` at the start of a hand in which it sits at
        ``position`` (None: card-blind, the range stays the prior)."""

    def fold_probability(self, state: State, action: Action) -> float:
        """For a card-blind bot: its probability of folding at once when LBR plays
        ``action`` at ``state`` (a strategy's comes from its range)."""


class BlindOpponent:
    """A card-blind bot (:mod:`solver.play.blind`: ``fold``, ``call``, ``raise``, ``allin``,
    ``random``); its range stays the prior."""

    card_blind = True

    def __init__(self, name: str, seed: int = 0) -> None:
        if name not in BLIND_BOTS:
            raise ValueError(f"unknown bot {name!r}; choose one of {', '.join(BLIND_BOTS)}")
        self.name = name
        self.rng = random.Random(seed)

    def start(self, position: int, hand: int, stop: Stop | None = None) -> None:
        pass

    def act(self, state: State, hole: Sequence[int], board: Sequence[int]) -> Action | None:
        return blind_action(self.name, state, self.rng)

    def range(self, hands: np.ndarray, position: int) -> None:
        return None

    def fold_probability(self, state: State, action: Action) -> float:
        after = state.apply(action)
        return fold_probability(self.name, after) if after.actor is not None else 0.0


class StrategyOpponent:
    """A translated strategy: acts through :class:`HandWalk` (seeded by ``seed`` and the
    hand number); its range is :class:`PlayerRange`."""

    card_blind = False

    def __init__(self, policy: TranslatedPolicy, seed: int = 0, name: str = "strategy") -> None:
        self.policy = policy
        self.seed = int(seed)
        self.name = name
        self.counts = TranslationCounts()
        self._walk: HandWalk | None = None

    def start(self, position: int, hand: int, stop: Stop | None = None) -> None:
        self._walk = HandWalk(self.policy, position, self.seed, hand, counts=self.counts)

    def act(self, state: State, hole: Sequence[int], board: Sequence[int]) -> Action | None:
        assert self._walk is not None
        action, _ = self._walk.decide(state, hole, board)
        return action

    def range(self, hands: np.ndarray, position: int) -> PlayerRange:
        return PlayerRange(self.policy, hands, position)

    def fold_probability(self, state: State, action: Action) -> float:
        raise TypeError("a strategy's fold probability comes from its range (PlayerRange.fold_probability)")


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
    #: a re-solving opponent's re-solves while it played (its range's own are not counted)
    resolve: dict[str, float] | None = None

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
            **({"resolve": self.resolve} if self.resolve is not None else {}),
        }


#: ``on_decision(state, hands, weights, equity, choice)``: called at each LBR decision
#: with the opponent's normalized range (``weights`` over ``hands``), for inspection.
DecisionHook = Callable[[State, np.ndarray, np.ndarray, float | None, Action], None]


class LocalBestResponse:
    """LBR in ``game`` against ``opponent`` (see the module docstring). ``actions``: the
    action set spec (:func:`parse_action_set`; default :func:`default_action_spec`;
    :data:`LEAKS_PRESET` for :func:`leak_action_spec` of a strategy opponent's tree);
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
        if actions is not None and actions.strip() == LEAKS_PRESET:
            policy = getattr(opponent, "policy", None)
            betting = policy.tree.betting if policy is not None else None
            if betting is None:
                raise ValueError(f"--actions {LEAKS_PRESET} derives its sizes from a strategy's betting tree; "
                                 f"{opponent.name!r} has none")
            actions = leak_action_spec(betting, game)
        self.action_spec = actions or default_action_spec(game)
        self.action_set = parse_action_set(self.action_spec, game)
        self.samples = int(samples)
        self.enum_limit = int(enum_limit)
        self.seed = int(seed)
        #: the stop of the run under way (a fresh, unset one between runs)
        self._stop = Stop()
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
            elif kind in "apm" and lo is not None and hi is not None:
                if self.game.is_limit or kind == "m":
                    to = lo
                elif kind == "a":
                    to = hi
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
        self,
        state: State,
        hole: Sequence[int],
        board: Sequence[int],
        weights: np.ndarray,
        hand: int,
        opponent_range: PlayerRange | None = None,
        prior: np.ndarray | None = None,
    ) -> tuple[Action, float | None]:
        """LBR's action at ``state`` (LBR to act) with range ``weights`` (over
        :attr:`hands`, normalized, zero where a card is known), and the equity used. A
        strategy's fold probabilities come from ``opponent_range`` (its exact range, over
        :attr:`hands`) times ``prior`` (zero for the rows that hold a known card); a
        card-blind bot's from its rule."""
        cands = self._candidates(state)
        if len(cands) == 1:
            return cands[0], None
        eq = range_equity(
            hole, board, self.hands, weights, self.game, samples=self.samples,
            enum_limit=self.enum_limit, seed=(self.seed * 1_000_003 + hand * 101 + len(state.history)),
            stop=self._stop,
        )
        me = state.actor
        assert me is not None
        spent = state.spent[me]
        pot = state.pot
        to_call = state.to_call
        best, best_v = cands[0], eq * (pot + to_call) - to_call
        for a in cands[1:]:
            if a.kind is ActionKind.FOLD:
                v = 0.0
            else:
                x = int(a.amount or 0)
                if opponent_range is not None:
                    mask = prior if prior is not None else (weights > 0).astype(np.float64)
                    fp = opponent_range.fold_probability(state, board, a, mask)
                else:
                    fp = self.opponent.fold_probability(state, a)
                v = fp * pot + (1.0 - fp) * (eq * 2 * x - (x - spent))
            if v > best_v:
                best, best_v = a, v
        return best, eq

    def _prior(self, hole: Sequence[int], board: Sequence[int]) -> np.ndarray:
        """1 for the rows that miss ``hole`` and ``board``, else 0."""
        prior = np.ones(self.hands.shape[0])
        for c in (*hole, *board):
            prior[self._card_hit[c]] = 0.0
        return prior

    def _posterior(self, prior: np.ndarray, opponent_range: PlayerRange | None) -> np.ndarray:
        w = prior if opponent_range is None else prior * opponent_range.weights()
        total = w.sum()
        if not total > 0.0:  # the opponent's own hand always has weight: a bug if not
            raise RuntimeError("LBR's range of the opponent has no weight left")
        return w / total

    # -- one hand

    def play_hand(self, deal: Deal, lbr: int, hand: int, on_decision: DecisionHook | None = None) -> float:
        """LBR's chips won in one hand of ``deal``, LBR at position ``lbr``."""
        game = self.game
        opp = 1 - lbr
        opponent = self.opponent
        opponent.start(opp, hand, self._stop)
        hole = deal.holes[lbr]
        rng = opponent.range(self.hands, opp)
        state = State.new_hand(game, deal)
        while state.actor is not None:
            self._stop.check()
            board = deal.board_through(state.round)
            if state.actor == lbr:
                prior = self._prior(hole, board)
                w = self._posterior(prior, rng)
                action, eq = self.decide(state, hole, board, w, hand, rng, prior)
                if on_decision is not None:
                    on_decision(state, self.hands, w.copy(), eq, action)
            else:
                action = opponent.act(state, deal.holes[opp], board)
                if action is None:  # surrender where a fold is not legal
                    return float(state.spent[opp])
            if rng is not None:
                rng = rng.after(state, board, action)
            state = state.apply(action)
        return float(state.values()[lbr])

    # -- exactly, over every deal

    def exact_values(
        self,
        max_deals: int = 200_000,
        progress: Callable[[int, int], None] | None = None,
        stop: Stop | None = None,
    ) -> tuple[float, float]:
        """LBR's expected chips per game against a strategy, exactly: every deal of the
        game (each ordered set of hole and board cards, equally likely), LBR at position
        0 and at position 1, and at each of the player's decisions every real action it
        takes, weighted by its probability given its cards and the real history (the
        translation's draws summed over, as :class:`PlayerRange` does). Comparable with
        :func:`solver.evaluation.real_response.real_best_response_value` seat by seat,
        which it can never exceed when LBR's actions are real actions of the game. Only
        for small games (no-limit Leduc: 120 deals): more than ``max_deals`` deals is
        refused.

        ``progress(done, total)``: hands walked (a deal at one of LBR's seats) of ``2 *
        deals``, called about every 0.1 s and at the end, in the calling thread. ``stop``:
        as :meth:`run`'s (raises :class:`poker._stop.Interrupted` once set)."""
        if self.opponent.card_blind:
            raise ValueError("the exact LBR value is for a strategy opponent")
        game = self.game
        k, nb = game.num_hole_cards, game.total_board_cards
        deck = deck_cards(game.num_ranks, game.num_suits)
        count = self.exact_deals(max_deals)
        sums = [0.0, 0.0]
        done = counter()

        def walk() -> None:
            for cards in permutations(deck, 2 * k + nb):
                boards, at = [], 2 * k
                for m in game.num_board_cards:
                    boards.append(cards[at : at + m])
                    at += m
                deal = Deal((cards[:k], cards[k : 2 * k]), tuple(boards))
                for lbr in (0, 1):
                    rng = self.opponent.range(self.hands, 1 - lbr)
                    assert rng is not None
                    row = int(self.index_of(np.asarray([deal.holes[1 - lbr]]))[0])
                    sums[lbr] += self._exact(State.new_hand(game, deal), deal, lbr, rng, row)
                    done[0] += 1

        self._stopping(walk, None if progress is None else lambda: progress(int(done[0]), 2 * count), stop)
        return sums[0] / count, sums[1] / count

    def exact_deals(self, max_deals: int = 200_000) -> int:
        """The deals :meth:`exact_values` walks (each at both of LBR's seats): every
        ordered set of hole and board cards. Raises ``ValueError`` above ``max_deals``."""
        game = self.game
        count = math.perm(game.num_ranks * game.num_suits, 2 * game.num_hole_cards + game.total_board_cards)
        if count > max_deals:
            raise ValueError(f"{game.name} has {count:,} deals; the exact LBR value enumerates at most {max_deals:,}")
        return count

    def _stopping(self, work: Callable[[], None], poll: Callable[[], None] | None, stop: Stop | None) -> None:
        """``work()`` under :func:`run_stoppable` with ``stop`` (or a new one) registered and
        made the run's, ``poll()`` called as it goes; raises Interrupted once stopped."""
        with stoppable(stop) as stop:
            self._stop = stop
            try:
                run_stoppable(work, stop, on_poll=poll)
            finally:
                self._stop = Stop()

    def _exact(self, state: State, deal: Deal, lbr: int, rng: PlayerRange, row: int) -> float:
        self._stop.check()
        if state.actor is None:
            return float(state.values()[lbr])
        board = deal.board_through(state.round)
        if state.actor == lbr:
            hole = deal.holes[lbr]
            prior = self._prior(hole, board)
            action, _ = self.decide(state, hole, board, self._posterior(prior, rng), 0, rng, prior)
            return self._exact(state.apply(action), deal, lbr, rng.after(state, board, action), row)
        moves = rng.moves(state, board)
        reach = {a: float(m.weights()[row]) for a, m in moves.items()}
        total = sum(reach.values())
        return sum(p / total * self._exact(state.apply(a), deal, lbr, moves[a], row)
                   for a, p in reach.items() if p > 0.0)

    # -- a match

    def run(
        self,
        hands: int,
        on_decision: DecisionHook | None = None,
        progress: Callable[[int], None] | None = None,
        stop: Stop | None = None,
    ) -> LBRResult:
        """Play ``hands`` hands (hand ``h``: deal ``h // 2``, LBR at position ``h % 2``).

        ``progress(done)``: hands played, called about every 0.1 s and at the end, in the
        calling thread (called from the main thread, the hands are played on another,
        ``on_decision`` with them). ``stop``: ends the match once set; it is registered for
        the call (:func:`poker._stop.stoppable`), so SIGINT and SIGTERM under the command
        line's handlers reach it. Raises :class:`poker._stop.Interrupted` once stopped
        (no result)."""
        if hands < 1:
            raise ValueError("LBR needs at least one hand")
        game = self.game
        dealer = Dealer(game, self.seed)
        values = np.zeros(hands)
        done = counter()

        def play() -> None:
            deal = None
            for h in range(hands):
                if h % 2 == 0:
                    deal = dealer.next_deal()
                assert deal is not None
                values[h] = self.play_hand(deal, h % 2, h, on_decision)
                done[0] = h + 1

        t0 = time.perf_counter()
        self._stopping(play, None if progress is None else lambda: progress(int(done[0])), stop)
        seconds = time.perf_counter() - t0
        scale = 1000.0 / game.big_blind
        # Pairs of hands on one deal are the independent units of the interval.
        units = np.array([values[i : i + 2].mean() for i in range(0, hands, 2)])
        mean = float(values.mean())
        half = 1.96 * float(units.std(ddof=1)) / math.sqrt(len(units)) if len(units) > 1 else math.inf
        by_seat = [float(values[s::2].mean() * scale) if values[s::2].size else float("nan") for s in (0, 1)]
        counts = getattr(self.opponent, "counts", None)
        resolve_counts = getattr(self.opponent, "resolve_counts", None)
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
            resolve=resolve_counts.to_dict() if resolve_counts is not None else None,
        )
