"""The re-solving player as local best response's opponent: its exact range along one hand.

LBR (:mod:`solver.evaluation.lbr`) needs, at each of its decisions, the opponent's range
(the likelihood of the real history for every private hand) and its fold probability
after each action LBR considers. For the translated player that is
:class:`~solver.evaluation.player_range.PlayerRange`. The re-solving player
(:class:`~solver.resolve.player.ResolvingWalk`) is the same kind of object: a fixed
function of the public history, its cards and its own earlier draws, so its likelihood
is again a sum over its draws of the product of its action probabilities, where a
re-solve's probabilities are the solution's for each hand. :func:`resolving_range` is
that range: the mapping states of :class:`~solver.resolve.exact.ResolvingRules` (the
rules the exact evaluation walks, tested there against the playing player) over the
rows of one deal's board, each re-solve made once per (history, board, lineage) and
shared by every range derived along the hand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from poker._stop import Stop
from poker.state import Action, State

from ..evaluation.player_range import PlayerRange, _HandRows
from ..play.policy import TranslatedPolicy, TranslationCounts
from .exact import ResolvingRules
from .player import ResolveCounts, ResolveOptions, ResolvingWalk

__all__ = ["ResolvingOpponent", "resolving_range", "resolving_ranges"]


class _DealRules(ResolvingRules):
    """:class:`ResolvingRules` over the rows of one hand (one deal's board)."""

    def __init__(self, rows: _HandRows, options: ResolveOptions, position: int, stop: Stop | None = None) -> None:
        super().__init__(rows.policy, rows.buckets)
        self._setup(options, rows.policy.game, position, rows.hands)
        self._rows = rows
        self.stop = stop

    def _boards(self, state: State) -> list[tuple[tuple[int, ...], slice]]:
        return [(self._rows.board_through(state.round), slice(None))]


def _require_budget(options: ResolveOptions) -> None:
    """Refuse (ValueError) a seconds cap: the player's play would depend on the clock, and
    its range could not be made again."""
    if options.seconds is not None:
        raise ValueError("the re-solving player's range needs an iteration budget: a seconds cap makes its "
                         "play depend on the clock")


def resolving_range(policy: TranslatedPolicy, options: ResolveOptions, hands: np.ndarray,
                    position: int, stop: Stop | None = None) -> PlayerRange:
    """The exact range of the re-solving player (``policy`` re-solved with ``options``) at
    ``position`` over the private hands ``hands``, from the start of a hand: the
    :class:`PlayerRange` interface (``weights``, ``after``, ``moves``,
    ``fold_probability``) with the re-solving player's rules. ``stop``: its re-solves end
    when set (:class:`poker._stop.Interrupted` is raised)."""
    _require_budget(options)
    return PlayerRange(policy, hands, position, rules=lambda rows: _DealRules(rows, options, position, stop))


def resolving_ranges(policy: TranslatedPolicy,
                     options: ResolveOptions | None) -> Callable[[np.ndarray, int], PlayerRange] | None:
    """A factory ``(rows, position) -> range`` of the re-solving player's exact ranges, for
    AIVAT (:func:`solver.evaluation.aivat.aivat`'s ``player_range``); None for a player
    that does not re-solve (``options`` None). A seconds cap is refused (ValueError)."""
    if options is None:
        return None
    _require_budget(options)
    return lambda rows, position: resolving_range(policy, options, rows, position)


class ResolvingOpponent:
    """LBR's opponent (:class:`solver.evaluation.lbr.Opponent`): the re-solving player,
    acting through :class:`ResolvingWalk` (seeded by ``seed`` and the hand number), its
    range :func:`resolving_range`. ``counts`` adds up its translations, ``resolve_counts``
    its re-solves, over the hands."""

    card_blind = False

    def __init__(self, policy: TranslatedPolicy, options: ResolveOptions, seed: int = 0,
                 name: str = "resolve") -> None:
        _require_budget(options)
        self.policy = policy
        self.options = options
        self.seed = int(seed)
        self.name = name
        self.counts = TranslationCounts()
        self.resolve_counts = ResolveCounts()
        self._walk: ResolvingWalk | None = None
        self._stop: Stop | None = None

    def start(self, position: int, hand: int, stop: Stop | None = None) -> None:
        self._stop = stop  # the hand's re-solves, its own and its range's, end when it is set
        self._walk = ResolvingWalk(self.policy, position, self.seed, hand, self.options,
                                   counts=self.counts, resolve_counts=self.resolve_counts, stop=stop)

    def act(self, state: State, hole: Sequence[int], board: Sequence[int]) -> Action | None:
        assert self._walk is not None
        action, _ = self._walk.decide(state, hole, board)
        return action

    def range(self, hands: np.ndarray, position: int) -> PlayerRange:
        return resolving_range(self.policy, self.options, hands, position, self._stop)

    def fold_probability(self, state: State, action: Action) -> float:
        raise TypeError("the re-solving player's fold probability comes from its range")
