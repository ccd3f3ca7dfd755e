"""The blueprint player: plays a strategy file over the wire.

A thin wrapper over :class:`solver.play.policy.TranslatedPolicy` (DESIGN.md: the translated
policy is solver, the wire is agent): per hand a :class:`solver.play.policy.HandWalk` follows
the real betting through the abstract tree, the player's own actions being the abstract
ones it chose and each opponent action mapped by the randomized pseudo-harmonic
translation; the answer is drawn from the blueprint's probabilities for the bucket of
its cards and made a legal real action from the real pot. Random choices are keyed by
the player's seed, the hand number and the action's place in the hand, so a match with
the same seeds replays exactly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from poker.game import Game
from poker.state import Action
from solver.play.policy import HandWalk, TranslationCounts
from solver.strategy_io import StrategyFile, open_strategy

from .protocol import MatchState

__all__ = ["StrategyPlayer", "load_player"]


class StrategyPlayer:
    """Acts from a loaded strategy file in any game the file was trained for.

    ``seed``: keys every random choice (translation and action sampling); ``mapping``:
    the translation (:data:`abstraction.translation.MAPPINGS`); ``purify``: drop actions
    below this probability and renormalize.
    """

    def __init__(
        self,
        strategy: StrategyFile,
        *,
        seed: int = 0,
        mapping: str = "pseudo_harmonic",
        purify: float = 0.0,
    ) -> None:
        self.strategy = strategy
        self.policy = strategy.translated(mapping, purify)
        self.seed = int(seed)
        self.counts = TranslationCounts()
        self.hands = 0
        self._walk: HandWalk | None = None

    def act(self, match_state: MatchState) -> Action:
        """The action for ``match_state`` (this player to act)."""
        walk = self._walk
        if walk is None or walk.hand != match_state.hand_number or walk.position != match_state.position:
            walk = self._walk = HandWalk(
                self.policy, match_state.position, self.seed, match_state.hand_number, counts=self.counts
            )
            self.hands += 1
        action, _ = walk.decide(match_state.state, match_state.hole, match_state.board)
        return action

    def summary(self) -> dict[str, Any]:
        """Translation counts over the hands played, and whether buckets came from bucket
        tables (for the match's JSON)."""
        ab = self.strategy.abstraction
        tables = ab is not None and bool(getattr(ab, "tables_used", False))
        return {
            "strategy": self.strategy.source,
            "hands_acted": self.hands,
            "bucket_tables": tables,
            **self.counts.to_dict(),
        }


def load_player(
    path: str | Path,
    game: Game,
    *,
    seed: int = 0,
    purify: float = 0.0,
    tables: str | Path | None = None,
    mapping: str = "pseudo_harmonic",
) -> StrategyPlayer:
    """Open the strategy at ``path`` for ``game`` (a file for another game is refused
    with :class:`solver.strategy_io.StrategyFileError`) and make its player."""
    return StrategyPlayer(open_strategy(path, game=game, tables=tables), seed=seed, mapping=mapping, purify=purify)
