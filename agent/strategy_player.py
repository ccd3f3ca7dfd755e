"""The blueprint player: plays a strategy file over the wire.

A thin wrapper over :class:`solver.play.policy.TranslatedPolicy` (DESIGN.md: the translated
policy is solver, the wire is agent): per hand a :class:`solver.play.policy.HandWalk` follows
the real betting through the abstract tree, the player's own actions being the abstract
ones it chose and each opponent action mapped by the randomized pseudo-harmonic
translation; the answer is drawn from the blueprint's probabilities for the bucket of
its cards and made a legal real action from the real pot. Random choices are keyed by
the player's seed, the hand number and the action's place in the hand, so a match with
the same seeds replays exactly. In a duplicate match (``deal_period``: the hands of a
pass) the key is the hand's number within its pass, so that two players of the same
seed draw alike on the same deal in the same seat: common random numbers, which cancel
the draws' luck between the passes wherever the players play alike. The player counts
how its hands went through the tree and every own action that had to be repaired to be
legal in the real game (:class:`solver.play.policy.TranslationCounts`).

A player is opened from its spec by :func:`agent.players.open_for_play`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from poker.state import Action, ActionKind, LoggedAction, State
from solver.play.player import translated
from solver.play.policy import HandWalk, TranslationCounts, abstract_label
from solver.strategy_io import StrategyFile

from .protocol.codec import MatchState
from .web.view import action_text

if TYPE_CHECKING:  # the re-solving player is loaded only by a player that re-solves
    from solver.resolve.player import ResolveCounts, ResolveOptions, ResolvingWalk

__all__ = ["StrategyPlayer"]


class StrategyPlayer:
    """Acts from an opened strategy file (``strategy``, its bucket tables attached or not)
    in any game the file was trained for.

    ``seed``: keys every random choice (translation and action sampling); ``mapping``:
    the translation (:data:`abstraction.translation.MAPPINGS`); ``purify``: drop actions
    below this probability and renormalize; ``deal_period``: in a duplicate match whose
    passes are this many hands (pass k numbers its hands ``k * deal_period + h``, as
    :class:`agent.protocol.dealer_state.DealerMatch` does), choices are keyed by ``h``
    instead of the hand number, the same deal's in every pass. :attr:`policy` is the
    translated policy it plays (:func:`solver.play.player.translated`), the very one an
    evaluation of this player must use.
    """

    def __init__(
        self,
        strategy: StrategyFile,
        *,
        seed: int = 0,
        mapping: str = "pseudo_harmonic",
        purify: float = 0.0,
        resolve: ResolveOptions | None = None,
        deal_period: int | None = None,
    ) -> None:
        if deal_period is not None and deal_period < 1:
            raise ValueError(f"the deal period must be a positive number of hands, not {deal_period}")
        self.strategy = strategy
        self.policy = translated(strategy, mapping, purify)
        self.seed = int(seed)
        self.counts = TranslationCounts()
        self.hands = 0
        self.resolve = resolve
        self.deal_period = deal_period
        self.resolve_counts: ResolveCounts | None = None
        self._walk: HandWalk | ResolvingWalk | None = None
        self._walk_of: tuple[int, int] | None = None  # (hand number, position) of the walk
        self._probs: Any = None  # the last decision's abstract distribution (None: fallback)

    def act(self, match_state: MatchState) -> Action:
        """The action for ``match_state`` (this player to act)."""
        walk = self._walk
        hand = match_state.hand_number
        if walk is None or self._walk_of != (hand, match_state.position):
            self._walk_of = (hand, match_state.position)
            key = hand if self.deal_period is None else hand % self.deal_period
            if self.resolve is None:
                walk = self._walk = HandWalk(self.policy, match_state.position, self.seed, key, counts=self.counts)
            else:
                from solver.resolve.player import ResolveCounts, ResolvingWalk

                if self.resolve_counts is None:
                    self.resolve_counts = ResolveCounts()
                walk = self._walk = ResolvingWalk(self.policy, match_state.position, self.seed,
                                                  key, self.resolve, counts=self.counts,
                                                  resolve_counts=self.resolve_counts)
            self.hands += 1
        action, self._probs = walk.decide(match_state.state, match_state.hole, match_state.board)
        return action

    def explain(self, match_state: MatchState) -> dict[str, Any]:
        """The last decision (the one :meth:`act` just made for ``match_state``) told for a
        watcher: the distribution with the action drawn (``chosen``): the blueprint's
        abstract actions, or, where a re-solve chose (``resolved``), the subgame's real
        actions; how the opponent's last raise was translated into the blueprint's tree;
        and whether the player fell back to check/call (see :mod:`agent.decisions`)."""
        walk = self._walk
        out: dict[str, Any] = {"distribution": None, "chosen": None, "mapping": None, "fallback": False}
        if walk is None:
            return out
        blueprint = walk if isinstance(walk, HandWalk) else walk.walk
        resolved = None if isinstance(walk, HandWalk) else walk.last_play
        tree = self.policy.tree
        if resolved is not None:  # a subgame's solution chose: its real actions and probabilities
            actions, probs, i = resolved
            state = match_state.state
            out["distribution"] = [
                {"label": action_text(state, LoggedAction(match_state.position, a)), "p": round(float(q), 4)}
                for a, q in zip(actions, probs)
            ]
            out["chosen"] = i
            out["resolved"] = True
        elif blueprint.last_choice is None or self._probs is None:
            out["fallback"] = True
        else:
            node, i = blueprint.last_choice
            out["distribution"] = [
                {"label": abstract_label(tree, node, c)[0], "p": round(float(q), 4)}
                for c, q in zip(self.policy.children(node), self._probs)
            ]
            out["chosen"] = i
        mapped = blueprint.last_mapping
        history = match_state.state.history
        theirs = [k for k, a in enumerate(history) if a.actor != match_state.position]
        # only the opponent's last action, when it was a raise the blueprint's walk translated
        if (mapped is not None and theirs and mapped[0] == theirs[-1]
                and history[mapped[0]].action.kind is ActionKind.RAISE):
            k, parent, outcomes, drawn = mapped
            before = _state_before(match_state.state, k)
            out["mapping"] = {
                "real": action_text(before, history[k]),
                "to": [{"label": abstract_label(tree, parent, c)[0], "p": round(q, 4)} for c, q in outcomes],
                "chosen": abstract_label(tree, parent, drawn)[0],
            }
        return out

    def summary(self) -> dict[str, Any]:
        """Translation counts over the hands played (the repairs of its own actions under
        ``"repaired"``), and whether buckets came from bucket tables (for the match's JSON)."""
        ab = self.strategy.abstraction
        tables = ab is not None and bool(getattr(ab, "tables_used", False))
        return {
            "strategy": self.strategy.source,
            "hands_acted": self.hands,
            "bucket_tables": tables,
            **self.counts.to_dict(),
            **({"resolve": self.resolve_counts.to_dict()} if self.resolve_counts is not None else {}),
        }


def _state_before(state: State, k: int) -> State:
    """``state``'s hand before its ``k``-th action (the betting only)."""
    replay = State.new_hand(state.game)
    for logged in state.history[:k]:
        replay = replay.apply(logged.action)
    return replay
