"""AIVAT: variance reduction for a match in which one player's strategy is known, or both.

Burch, Schmid, Moravcik, Morrill and Bowling (2018), "AIVAT: A new variance reduction
technique for agent evaluation in imperfect information games" (AAAI).

Per hand, from the KNOWN player's perspective (the player whose strategy file we hold):

    value = outcome - sum of corrections

* at every chance event (the hole cards, when ``hole_chance``: both hands at once for
  :class:`MatchupValue`, the known player's for a value that does not read the
  opponent's; and the board cards of each street) the correction is ``v(after) - E_chance[v(after)]``,
  the expectation over the cards chance could have dealt given every card already dealt
  (an ACPC log shows every hole card, so the opponent's cards are excluded too: that is
  the true chance distribution at that point of the full history);
* at every decision of the known player the correction is
  ``v(after its action) - sum_a pi(a) v(after a)``, with ``pi`` the exact real-action
  distribution of the translated policy (:class:`solver.play.policy.TranslatedPolicy`) at
  that real history for its cards: the mixture over the abstract nodes the history can
  reach (the mapping states of :mod:`solver.evaluation.real_response`: each opponent action split by
  the translation's probabilities, each own action kept with the probability the player
  gave it, exactly the rules :class:`solver.play.policy.HandWalk` plays by);
* the opponent's decisions get no correction while its strategy is unknown; where it is
  known too (``opponent_range``: two strategy files, or a re-solving player against its
  blueprint), each of its decisions is corrected the same way from its exact action
  distribution for its cards (the log shows them), as the paper corrects every player
  whose strategy is known. The value stays the known player's.

Each correction has zero mean given everything before it, so the estimator is unbiased
for ANY fixed value function ``v`` of the full history (both players' cards
included). Two are provided (:data:`VALUE_FUNCTIONS`), each the known player's checked-down
value: its showdown equity times the matched pot (an uncalled bet is returned) minus its
own matched contribution, a fold ending the hand with its real value:

* :class:`MatchupValue` (the default): the exact equity against the opponent's ACTUAL hand
  (the log shows it), every run-out enumerated. The equity is a martingale over the board
  cards, so a board event's expectation is the value before it, and over the hole-card
  deal its mean is 1/2: no chance enumeration at all. It removes the variance of every
  chance event of a checked-down hand (the betting's own variance remains).
* :class:`CheckdownValue` (``checkdown``): the equity against a uniformly random opponent
  hand; it depends only on the public state and the known player's cards.

With ``v = 0`` every correction vanishes and AIVAT is the plain estimate.

Large games (the full deck), :class:`CheckdownValue`. A chance event's expectation is
enumerated, except where
:class:`CheckdownValue` has more than ``chance_limit`` outcomes (the hold'em flop: 17,296)
and its value after them is exact (every run-out enumerated): there
:meth:`CheckdownValue.chance_mean` estimates it from ``chance_samples`` joint draws of the
new board cards, a uniform opponent hand and the rest of the board, seeded by the hand
number, street and seat. The draw is independent of the cards chance dealt and its mean
is the exact expectation, so each correction still has mean zero and the estimator stays
unbiased (the draw adds a little variance: about ``0.5 / sqrt(chance_samples)`` of the pot).
Equities that are themselves sampled (too many run-outs, as preflop on the full deck) are
computed for a canonical relabelling of the suits, so that the 1,326 preflop hands of the
known player's hole-card expectation cost 169 equities.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
from numba import njit

from poker.cards import deck_cards
from poker.evaluator import rank_cards
from poker.game import Game
from poker.log import LogHand, MatchLog
from poker.state import Action, State

from .lbr import _showdown_rows, range_equity
from ..play.policy import TranslatedPolicy
from .player_range import PlayerRange

#: ``factory(rows, position)``: a player's exact range over the private hands ``rows``
#: from the start of a hand (:class:`PlayerRange` or the re-solving player's).
RangeFactory = Callable[[np.ndarray, int], PlayerRange]

__all__ = [
    "AivatResult",
    "CheckdownValue",
    "HandTerms",
    "MatchupValue",
    "VALUE_FUNCTIONS",
    "ValueFn",
    "aivat",
    "chance_seed",
    "hand_terms",
    "known_player_name",
    "strategy_ranges",
    "value_function",
    "zero_value",
]

#: ``v(state, position, hole, board) -> chips`` for the known player at ``position``;
#: ``board`` holds the board cards dealt so far, in dealing order.
ValueFn = Callable[[State, int, Sequence[int], Sequence[int]], float]



def zero_value(state: State, position: int, hole: Sequence[int], board: Sequence[int]) -> float:
    """``v = 0``: AIVAT reduces to the plain estimate."""
    return 0.0


@njit(cache=True)
def _chance_equity(hole, board, dead, deck, n_new, total_board, kh, samples, seed):  # pragma: no cover - compiled
    """Mean share of the pot (ties half) of ``hole`` at a showdown against a uniform
    opponent hand over ``samples`` joint draws: ``n_new`` board cards from ``deck`` minus
    ``hole``, ``board`` and ``dead``; then the opponent's ``kh`` cards and the rest of the
    board from every card left, ``dead`` included (the value function does not know them)."""
    np.random.seed(seed)
    k = hole.shape[0]
    nb = board.shape[0]
    known = np.zeros(256, np.bool_)
    is_dead = np.zeros(256, np.bool_)
    for c in hole:
        known[c] = True
    for c in board:
        known[c] = True
    for c in dead:
        is_dead[c] = True
    live = np.empty(deck.shape[0], np.int64)
    gone = np.empty(deck.shape[0], np.int64)
    n_live = 0
    n_gone = 0
    for c in deck:
        if known[c]:
            continue
        if is_dead[c]:
            gone[n_gone] = c
            n_gone += 1
        else:
            live[n_live] = c
            n_live += 1
    runout = total_board - nb - n_new
    need = kh + runout
    me, op = _showdown_rows(hole, board, total_board, kh)
    work = np.empty(n_live + n_gone, np.int64)
    total = 0.0
    for _ in range(samples):
        for j in range(n_new):  # partial Fisher-Yates: live[:n_new] is chance's draw
            t = j + np.random.randint(n_live - j)
            c = live[t]
            live[t] = live[j]
            live[j] = c
            me[k + nb + j] = c
            op[kh + nb + j] = c
        m = 0
        for j in range(n_new, n_live):
            work[m] = live[j]
            m += 1
        for j in range(n_gone):
            work[m] = gone[j]
            m += 1
        for j in range(need):  # then the opponent's hand and the run-out
            t = j + np.random.randint(m - j)
            c = work[t]
            work[t] = work[j]
            work[j] = c
        for j in range(kh):
            op[j] = work[j]
        for j in range(runout):
            c = work[kh + j]
            me[k + nb + n_new + j] = c
            op[kh + nb + n_new + j] = c
        mine = rank_cards(me, k + total_board)
        theirs = rank_cards(op, kh + total_board)
        if mine > theirs:
            total += 1.0
        elif mine == theirs:
            total += 0.5
    return total / samples


def chance_seed(hand_no: int, street: int, position: int) -> int:
    """The seed of :meth:`CheckdownValue.chance_mean`'s draw for a hand's street and seat:
    it depends on nothing chance deals."""
    return (hand_no * 1_000_003 + street * 101 + position) & 0xFFFFFFFF


def _canonical_suits(groups: Sequence[Sequence[int]], suits: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """Each group of cards, sorted, with the suits renamed to ``suits`` in order of first
    appearance (group by group, each from its highest card): suit-isomorphic card sets get
    one name, so an equity invariant under renaming the suits is computed once for them."""
    names: dict[int, int] = {}
    for cards in groups:
        for c in sorted(cards, reverse=True):
            if c & 3 not in names:
                names[c & 3] = suits[len(names)]
    return tuple(tuple(sorted(c - (c & 3) + names[c & 3] for c in cards)) for cards in groups)


class MatchupValue:
    """The known player's value with both players' cards: its exact showdown equity against
    the opponent's ACTUAL hand (every run-out of the board enumerated,
    :func:`solver.evaluation._matchup.matchup_equity`) times the matched pot (twice the smaller
    contribution: an uncalled bet is returned), minus its matched contribution; after a
    fold, the fold's real value. Called as ``v(state, position, hole, board, opponent)``.

    The equity is a martingale over the board: its mean over the next cards (uniform over
    the cards neither hand nor the board holds) is the equity before them, and the matched
    pot does not change while chance deals, so :meth:`board_mean` is exact without
    enumeration. Over the hole-card deal (both hands at once, uniform over disjoint pairs)
    the equity's mean is 1/2 by symmetry (:meth:`deal_mean`). Equities are cached by the
    matchup with its suits renamed canonically (isomorphic matchups share one)."""

    def __init__(self, game: Game) -> None:
        if game.num_players != 2:
            raise ValueError("AIVAT here is heads-up")
        self.game = game
        self._deck = deck_cards(game.num_ranks, game.num_suits)
        self._suits = sorted({c & 3 for c in self._deck})
        self._cache: dict[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]], float] = {}

    def equity(self, hole: Sequence[int], opponent: Sequence[int], board: Sequence[int]) -> float:
        """The share of the pot (ties half) ``hole`` wins at a showdown against
        ``opponent`` over every completion of ``board``: exact."""
        from ._matchup import matchup_equity

        if len(opponent) != self.game.num_hole_cards:
            raise ValueError(f"the opponent's hole cards {list(opponent)} are not in the log (needed by "
                             "the matchup value function)")
        key = _canonical_suits((hole, opponent, board), self._suits)
        e = self._cache.get(key)
        if e is None:
            e = self._cache[key] = matchup_equity(*key, self._deck, self.game.total_board_cards)
        return e

    def __call__(self, state: State, position: int, hole: Sequence[int], board: Sequence[int],
                 opponent: Sequence[int]) -> float:
        spent = state.spent
        if state.folded[position]:
            return -float(spent[position])
        if any(state.folded):
            return float(sum(spent) - spent[position])
        matched = float(min(spent))
        return self.equity(hole, opponent, board) * 2.0 * matched - matched

    def board_mean(self, state: State, position: int, hole: Sequence[int], board: Sequence[int],
                   opponent: Sequence[int]) -> float:
        """``E[v]`` after chance deals the next board cards at ``state``: by the martingale,
        ``v`` with the board before them."""
        return self(state, position, hole, board, opponent)

    def deal_mean(self, state: State) -> float:
        """``E[v]`` after the hole-card deal at ``state`` (the blinds): equity 1/2."""
        matched = float(min(state.spent))
        return 0.5 * 2.0 * matched - matched


class CheckdownValue:
    """The known player's value if the rest of the hand were checked down: equity against
    a uniformly random opponent hand (every board completion and every opponent hand
    that misses the known cards, enumerated where :func:`solver.evaluation.lbr.range_equity` can:
    at most ``enum_limit`` run-outs, else ``samples`` seeded ones) times the matched pot
    (twice the smaller contribution: an uncalled bet is returned), minus its matched
    contribution; after a fold, the fold's real value.

    ``chance_limit`` and ``chance_samples``: a chance event with more outcomes than
    ``chance_limit`` is estimated from ``chance_samples`` draws (:meth:`chance_mean`)."""

    def __init__(
        self,
        game: Game,
        *,
        samples: int = 1000,
        enum_limit: int = 2000,
        chance_limit: int = 1000,
        chance_samples: int = 20000,
    ) -> None:
        if game.num_players != 2:
            raise ValueError("AIVAT here is heads-up")
        if samples < 1 or chance_samples < 1:
            raise ValueError("samples and chance_samples must be positive")
        self.game = game
        self.samples = int(samples)
        self.enum_limit = int(enum_limit)
        self.chance_limit = int(chance_limit)
        self.chance_samples = int(chance_samples)
        deck = deck_cards(game.num_ranks, game.num_suits)
        self._deck = np.array(deck, np.int64)
        self._suits = sorted({c & 3 for c in deck})
        self.hands = np.array(list(combinations(deck, game.num_hole_cards)), np.int64)
        self.weights = np.ones(len(self.hands))
        self._cache: dict[tuple[tuple[int, ...], tuple[int, ...]], float] = {}

    def exact(self, cards_known: int, board_cards: int) -> bool:
        """Whether the equity with ``cards_known`` cards known (the known player's and the
        board's) of which ``board_cards`` on the board enumerates every run-out."""
        missing = self.game.total_board_cards - board_cards
        return missing <= 0 or math.comb(len(self._deck) - cards_known, missing) <= self.enum_limit

    def equity(self, hole: Sequence[int], board: Sequence[int]) -> float:
        """Share of the pot at a showdown against a uniform opponent hand (ties half);
        where run-outs are sampled, the equity of the canonical suit relabelling."""
        key = (tuple(sorted(hole)), tuple(sorted(board)))
        e = self._cache.get(key)
        if e is None:
            cards = key
            if not self.exact(len(hole) + len(board), len(board)):
                cards = _canonical_suits((hole, board), self._suits)
                e = self._cache.get(cards)
            if e is None:
                e = self._cache[cards] = range_equity(
                    cards[0], cards[1], self.hands, self.weights, self.game,
                    samples=self.samples, enum_limit=self.enum_limit,
                )
            self._cache[key] = e
        return e

    def chance_mean(
        self,
        state: State,
        position: int,
        hole: Sequence[int],
        board: Sequence[int],
        n_new: int,
        dead: Sequence[int],
        *,
        seed: int,
    ) -> float | None:
        """An unbiased estimate of ``E[v]`` after chance deals ``n_new`` board cards to
        ``board`` from the cards not in ``hole``, ``board`` or ``dead`` (the opponent's), at
        ``state`` (the betting when they are dealt), drawn with ``seed``; ``None`` where
        the expectation is to be enumerated: at most ``chance_limit`` outcomes, or a value
        after them that is not exact (so whose mean the draw would not estimate)."""
        known = len(hole) + len(board)
        outcomes = math.comb(len(self._deck) - known - len(dead), n_new)
        if outcomes <= self.chance_limit or not self.exact(known + n_new, len(board) + n_new):
            return None
        if any(state.folded):
            return None
        matched = float(min(state.spent))
        e = _chance_equity(
            np.asarray(hole, np.int64), np.asarray(board, np.int64), np.asarray(dead, np.int64), self._deck,
            int(n_new), int(self.game.total_board_cards), int(self.game.num_hole_cards),
            self.chance_samples, int(seed) & 0xFFFFFFFF,
        )
        return e * 2.0 * matched - matched

    def __call__(self, state: State, position: int, hole: Sequence[int], board: Sequence[int]) -> float:
        spent = state.spent
        if state.folded[position]:
            return -float(spent[position])
        if any(state.folded):
            return float(sum(spent) - spent[position])
        matched = float(min(spent))  # an uncalled bet goes back when the hand is checked down
        return self.equity(hole, board) * 2.0 * matched - matched


@dataclass(frozen=True)
class HandTerms:
    """One hand for the known player: ``outcome`` (chips), the sums of its ``chance`` and
    ``decision`` corrections, and the number of its ``decisions``; with a known opponent,
    the sum of the corrections at the opponent's decisions and their number."""

    outcome: float
    chance: float
    decision: float
    decisions: int
    opponent_decision: float = 0.0
    opponent_decisions: int = 0

    @property
    def aivat(self) -> float:
        """The AIVAT value of the hand."""
        return self.outcome - self.chance - self.decision - self.opponent_decision


def hand_terms(
    policy: TranslatedPolicy,
    hand: LogHand,
    position: int,
    value: ValueFn | MatchupValue,
    *,
    hole_chance: bool = True,
    player_range: RangeFactory | None = None,
    opponent_range: RangeFactory | None = None,
) -> HandTerms:
    """The AIVAT terms of one logged hand for the known player at ``position``; a
    :class:`MatchupValue` also reads the opponent's hole cards from the log.
    ``player_range(rows, position)``: the known player's exact range over ``rows`` (the
    action distribution at each of its decisions); default the translated player's
    :class:`~solver.evaluation.player_range.PlayerRange`, and
    :func:`solver.resolve.opponent.resolving_range` for the re-solving player.
    ``opponent_range``: the same for the opponent, whose decisions are then corrected
    too (None: an unknown opponent, no correction at its decisions)."""
    game = policy.game
    deck = deck_cards(game.num_ranks, game.num_suits)
    me = tuple(hand.holes[position])
    others = {c for p, h in enumerate(hand.holes) if p != position for c in h}
    matchup = value if isinstance(value, MatchupValue) else None
    opponent = tuple(hand.holes[1 - position])
    v: ValueFn = value if matchup is None else (
        lambda s, p, h, b: matchup(s, p, h, b, opponent))  # type: ignore[assignment]
    final = State.from_betting(game, hand.betting, strict=False)
    history = final.history
    state = State.new_hand(game)
    board: list[int] = []
    chance = decision = 0.0
    decisions = 0
    if hole_chance:
        if matchup is not None:  # both hands dealt at once: equity 1/2 on average
            expected = matchup.deal_mean(state)
        else:  # the known player's hand (the value does not read the opponent's)
            combos = list(combinations(deck, game.num_hole_cards))
            expected = sum(v(state, position, h, ()) for h in combos) / len(combos)
        chance += v(state, position, me, ()) - expected
    # the known player as one row of hands: its exact range, draws summed over
    rng = strategy_ranges(policy, player_range)(np.asarray([me], np.int64), position)
    # a known opponent likewise, one row: its cards
    theirs = None if opponent_range is None else opponent_range(np.asarray([opponent], np.int64), 1 - position)
    opponent_decision = 0.0
    opponent_decisions = 0
    def corrected(who: PlayerRange, action: Action, whose: str) -> tuple[float, PlayerRange]:
        """A decision's correction ``v(after the action) - E_pi[v(after)]`` with ``pi``
        the deciding player's exact distribution (``who``, one row), and its range after."""
        moves = who.moves(state, board)
        if action not in moves:
            raise ValueError(
                f"hand {hand.hand_no}: {whose} action {action.to_acpc(game.is_limit)!r} at "
                f"{state.betting_string()!r} has probability 0 under its strategy "
                "(wrong strategy, player, mapping or purification?)"
            )
        reach = {a: float(m.weights()[0]) for a, m in moves.items()}
        total = sum(reach.values())
        expected = sum(p / total * v(state.apply(a), position, me, board) for a, p in reach.items())
        return v(state.apply(action), position, me, board) - expected, moves[action]

    for logged in history:
        action = logged.action
        if logged.actor == position:
            term, rng = corrected(rng, action, "the known player's")
            decision += term
            decisions += 1
            if theirs is not None:
                theirs = theirs.after(state, board, action)
        else:
            if theirs is not None:
                term, theirs = corrected(theirs, action, "the opponent's")
                opponent_decision += term
                opponent_decisions += 1
            rng = rng.after(state, board, action)
        before = state.round
        state = state.apply(action)
        for street in range(before + 1, state.round + 1):
            n = game.num_board_cards[street]
            if n == 0:
                continue
            new = tuple(hand.boards[street]) if street < len(hand.boards) else ()
            if len(new) != n:
                raise ValueError(f"hand {hand.hand_no}: the log does not show street {street}'s board")
            expected = None
            if matchup is not None:  # the martingale: the value before the cards
                expected = matchup.board_mean(state, position, me, board, opponent)
            elif isinstance(value, CheckdownValue):
                expected = value.chance_mean(state, position, me, board, n, sorted(others),
                                             seed=chance_seed(hand.hand_no, street, position))
            if expected is None:
                dead = set(me) | others | set(board)
                outcomes = list(combinations([c for c in deck if c not in dead], n))
                expected = sum(v(state, position, me, [*board, *c]) for c in outcomes) / len(outcomes)
            board.extend(new)
            chance += v(state, position, me, board) - expected
    return HandTerms(float(hand.values[position]), chance, decision, decisions, opponent_decision,
                     opponent_decisions)


#: The named value functions, the default first: ``matchup`` (:class:`MatchupValue`, both
#: players' cards) and ``checkdown`` (:class:`CheckdownValue`, the known player's only).
VALUE_FUNCTIONS = ("matchup", "checkdown")


def value_function(name: str, game: Game) -> MatchupValue | CheckdownValue:
    """The value function of :data:`VALUE_FUNCTIONS` called ``name`` for ``game``."""
    if name == "matchup":
        return MatchupValue(game)
    if name == "checkdown":
        return CheckdownValue(game)
    raise ValueError(f"unknown value function {name!r}; choose from {', '.join(VALUE_FUNCTIONS)}")


def known_player_name(log: MatchLog, stem: str) -> str:
    """The first player (in order of appearance) named as ``pokerbot match`` names a
    strategy file with this stem: ``stem`` or ``stem-<k>``."""
    seen: list[str] = []
    for hand in log.hands:
        for name in hand.names:
            if name not in seen:
                seen.append(name)
    safe = stem.replace("|", "_").replace(":", "_").replace(" ", "_") or "strategy"
    for name in seen:
        if name == safe or (name.startswith(safe + "-") and name[len(safe) + 1 :].isdigit()):
            return name
    raise ValueError(f"no player in the log is named after {stem!r}; players: {', '.join(seen) or 'none'}")


@dataclass(frozen=True)
class AivatResult:
    """Plain and AIVAT estimates of the known player's value per hand (chips and mbb/g,
    95% intervals over hands), and the variance reduction.

    Per hand, in the log's order (the order of play): ``values`` (the outcome) and
    ``aivat_values`` in chips, :attr:`mbb_values` and :attr:`aivat_mbb_values` in mbb, and
    ``hand_numbers``, each hand's number in the log (which pairs the hands of a duplicate
    match's deals)."""

    game: str
    player: str
    hands: int
    chips_per_game: float
    sd: float
    aivat_chips_per_game: float
    aivat_sd: float
    big_blind: float
    chance_correction_mean: float
    decision_correction_mean: float
    decision_correction_sd: float
    decisions: int
    values: np.ndarray
    aivat_values: np.ndarray
    #: The opponent's decisions corrected (0 where its strategy was not known).
    opponent_decisions: int = 0
    opponent_known: bool = False
    hand_numbers: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64), repr=False)

    def _mbb(self, x: float) -> float:
        return 1000.0 * x / self.big_blind

    @property
    def mbb_values(self) -> np.ndarray:
        """The outcome of each hand in mbb, in the log's order."""
        return self.values * (1000.0 / self.big_blind)

    @property
    def aivat_mbb_values(self) -> np.ndarray:
        """The AIVAT value of each hand in mbb, in the log's order."""
        return self.aivat_values * (1000.0 / self.big_blind)

    def _ci(self, mean: float, sd: float) -> tuple[float, float]:
        half = 1.96 * sd / math.sqrt(self.hands) if self.hands > 1 else math.inf
        return (self._mbb(mean - half), self._mbb(mean + half))

    @property
    def mbb_per_game(self) -> float:
        return self._mbb(self.chips_per_game)

    @property
    def aivat_mbb_per_game(self) -> float:
        return self._mbb(self.aivat_chips_per_game)

    @property
    def ci95(self) -> tuple[float, float]:
        return self._ci(self.chips_per_game, self.sd)

    @property
    def aivat_ci95(self) -> tuple[float, float]:
        return self._ci(self.aivat_chips_per_game, self.aivat_sd)

    @property
    def variance_reduction(self) -> float:
        """``1 - var_aivat / var_plain``."""
        return 1.0 - (self.aivat_sd / self.sd) ** 2 if self.sd > 0 else 0.0

    @property
    def sd_ratio(self) -> float:
        """``sd_aivat / sd_plain``."""
        return self.aivat_sd / self.sd if self.sd > 0 else 1.0

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {
            "game": self.game,
            "player": self.player,
            "hands": self.hands,
            "chips_per_game": self.chips_per_game,
            "mbb_per_game": self.mbb_per_game,
            "ci95": list(self.ci95),
            "sd": self.sd,
            "aivat_chips_per_game": self.aivat_chips_per_game,
            "aivat_mbb_per_game": self.aivat_mbb_per_game,
            "aivat_ci95": list(self.aivat_ci95),
            "aivat_sd": self.aivat_sd,
            "variance_reduction": self.variance_reduction,
            "sd_ratio": self.sd_ratio,
            "chance_correction_mean": self.chance_correction_mean,
            "decision_correction_mean": self.decision_correction_mean,
            "decisions": self.decisions,
            "opponent_known": self.opponent_known,
            "opponent_decisions": self.opponent_decisions,
        }


def aivat(
    policy: TranslatedPolicy,
    log: MatchLog,
    player: str,
    *,
    value: ValueFn | MatchupValue | str | None = None,
    hole_chance: bool = True,
    progress: Callable[[int], None] | None = None,
    player_range: RangeFactory | None = None,
    opponent_range: RangeFactory | None = None,
) -> AivatResult:
    """AIVAT over every hand of ``log`` in which ``player`` (a name in the log) plays the
    known ``policy``; ``value`` is a value function or a name of :data:`VALUE_FUNCTIONS`
    (default :class:`MatchupValue`). ``progress(n)`` is called after each of the player's
    hands with the number done. ``player_range``: as :func:`hand_terms` (the re-solving
    player's, for a player that re-solved); ``opponent_range``: the opponent's, where its
    strategy is known too (:func:`strategy_ranges`), to correct its decisions as well."""
    game = policy.game
    if game.num_players != 2:
        raise ValueError(f"AIVAT here is heads-up; {game.name} has {game.num_players} players")
    v = value_function(value if value is not None else VALUE_FUNCTIONS[0], game) if (
        value is None or isinstance(value, str)) else value
    terms: list[HandTerms] = []
    numbers: list[int] = []
    for hand in log.hands:
        if player not in hand.names:
            continue
        terms.append(hand_terms(policy, hand, hand.names.index(player), v, hole_chance=hole_chance,
                                player_range=player_range, opponent_range=opponent_range))
        numbers.append(hand.hand_no)
        if progress is not None:
            progress(len(terms))
    if not terms:
        raise ValueError(f"no hand in the log has a player named {player!r}")
    plain = np.array([t.outcome for t in terms])
    av = np.array([t.aivat for t in terms])
    dec = np.array([t.decision for t in terms])
    ddof = 1 if len(terms) > 1 else 0
    return AivatResult(
        game=game.name,
        player=player,
        hands=len(terms),
        chips_per_game=float(plain.mean()),
        sd=float(plain.std(ddof=ddof)),
        aivat_chips_per_game=float(av.mean()),
        aivat_sd=float(av.std(ddof=ddof)),
        big_blind=float(game.big_blind),
        chance_correction_mean=float(np.mean([t.chance for t in terms])),
        decision_correction_mean=float(dec.mean()),
        decision_correction_sd=float(dec.std(ddof=ddof)),
        decisions=sum(t.decisions for t in terms),
        values=plain,
        aivat_values=av,
        hand_numbers=np.array(numbers, np.int64),
        opponent_decisions=sum(t.opponent_decisions for t in terms),
        opponent_known=opponent_range is not None,
    )


def strategy_ranges(policy: TranslatedPolicy, player_range: RangeFactory | None = None) -> RangeFactory:
    """A player's range factory for :func:`aivat`: ``player_range`` where given (the
    re-solving player's), else the translated player's :class:`PlayerRange` over
    ``policy``."""
    if player_range is not None:
        return player_range
    return lambda rows, position: PlayerRange(policy, rows, position)
