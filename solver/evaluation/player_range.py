"""The exact range of a translated player along one real hand, as its opponent sees it.

A translated player (:class:`solver.play.policy.HandWalk`) maps each of the other seat's
real raises onto its abstract tree by a random draw that it keeps for the rest of the
hand, and it plays the blueprint's probabilities at the abstract node the draws led to.
Seen from the other seat, which never sees the draws, the probability that the player
holding hand ``h`` took the real actions so far is therefore

    P(history | h) = sum over mapping branches b of  P(b) * prod_k p_b(a_k | h),

the sum over every way the draws can map the history (``P(b)``: the product of the
mapping probabilities), of the product of ``h``'s probabilities, on that branch, of the
real actions ``a_k`` the player took (every abstract child whose real action is ``a_k``
adds up; where the branch cannot follow the real betting the player checks or calls
with probability 1). The posterior over hands is that likelihood times the prior (hands
that miss the known cards), normalized (Bayes). It is not the product over decisions
of the per-decision mixtures :func:`solver.play.policy.range_query` gives, because one
draw decides several later decisions.

:class:`PlayerRange` carries the sum as the exact evaluations do
(:class:`solver.evaluation.real_response.TranslatedPlayer`): a set of *mapping states*,
abstract node (or ``LOST``) -> reach over the rows of private hands, split at the other
seat's actions by the translation's probabilities and at the player's own by its
per-hand action probabilities, merged where they reach the same node. A range is
immutable: each action gives a new one, so a walk can branch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from poker.state import Action, State

from ..play.policy import TranslatedPolicy
from .real_response import MappingStates, TranslatedPlayer

__all__ = ["PlayerRange"]


class _HandRows:
    """The rows of private hands of one hand (one deal's board), their buckets per street
    (filled as the streets' boards arrive) and the player's rules over them."""

    def __init__(self, policy: TranslatedPolicy, hands: np.ndarray,
                 rules: Callable[[_HandRows], TranslatedPlayer] | None = None) -> None:
        self.policy = policy
        self.hands = np.ascontiguousarray(hands, dtype=np.int64)
        self.buckets: list[np.ndarray] = []
        self._board: tuple[int, ...] = ()
        self.player = TranslatedPlayer(policy, self.buckets) if rules is None else rules(self)

    def board_through(self, street: int) -> tuple[int, ...]:
        """The hand's board cards through ``street`` (as far as they are known)."""
        return self._board[: sum(self.policy.game.num_board_cards[: street + 1])]

    def reach_street(self, street: int, board: Sequence[int]) -> None:
        """Make the buckets of every street through ``street`` known (``board``: the board
        through ``street``). Rows that hold a board card get bucket 0: their weight is
        zero to whoever reads the range."""
        game = self.policy.game
        board = tuple(int(c) for c in board)
        n = min(len(board), len(self._board))
        if board[:n] != self._board[:n]:
            raise ValueError("the board changed within a hand")
        while len(self.buckets) <= street:
            s = len(self.buckets)
            b = board[: sum(game.num_board_cards[: s + 1])]
            live = ~np.isin(self.hands, np.asarray(b, dtype=np.int64)).any(axis=1)
            out = np.zeros(self.hands.shape[0], dtype=np.int64)
            if live.any():
                cards = np.ascontiguousarray(np.concatenate(
                    [self.hands[live], np.tile(np.asarray(b, dtype=np.int64), (int(live.sum()), 1))], axis=1))
                pol = self.policy
                k = self.hands.shape[1]
                if pol.bucket_batch is not None:
                    out[live] = np.asarray(pol.bucket_batch(s, cards), dtype=np.int64)
                else:
                    out[live] = [pol.bucket(s, row[:k], row[k:]) for row in cards.tolist()]
            self.buckets.append(out)
        if len(board) > len(self._board):
            self._board = board


class PlayerRange:
    """The exact range (module docstring) of the translated player at ``position`` over
    the private hands ``hands`` (``int[n, hole cards]``, ACPC cards), from the start of a
    hand. :meth:`after` follows one real action; :meth:`weights` is the likelihood of the
    history so far for each row (multiply by a prior and normalize for the posterior)."""

    def __init__(self, policy: TranslatedPolicy, hands: np.ndarray, position: int,
                 rules: Callable[[_HandRows], TranslatedPlayer] | None = None) -> None:
        self.position = int(position)
        self._rows = _HandRows(policy, hands, rules)
        self._states: MappingStates = {self._rows.player.start_key: np.ones(self._rows.hands.shape[0])}

    @property
    def hands(self) -> np.ndarray:
        """The rows the weights are over."""
        return self._rows.hands

    def _with(self, states: MappingStates) -> PlayerRange:
        out = object.__new__(PlayerRange)
        out.position = self.position
        out._rows = self._rows
        out._states = states
        return out

    def weights(self) -> np.ndarray:
        """``P(history | hand)`` for every row (zero for rows the history rules out)."""
        return sum(self._states.values(), np.zeros(self._rows.hands.shape[0]))

    def moves(self, state: State, board: Sequence[int]) -> dict[Action, PlayerRange]:
        """The player's real actions at ``state`` (the player is to act), each with the
        range after it: the weights of the range after ``a`` are the rows' likelihood of
        the history followed by ``a``."""
        if state.actor != self.position:
            raise ValueError(f"position {self.position} is not to act at {state.betting_string()!r}")
        self._rows.reach_street(state.round, board)
        return {a: self._with(ms) for a, ms in self._rows.player.own_moves(self._states, state).items()}

    def after(self, state: State, board: Sequence[int], action: Action) -> PlayerRange:
        """The range once the actor of ``state`` played ``action`` there (``board``: the
        board through ``state``'s street). An action of the player that no row takes
        leaves every weight zero."""
        if state.actor == self.position:
            moved = self.moves(state, board).get(action)
            return moved if moved is not None else self._with({})
        self._rows.reach_street(state.round, board)
        return self._with(self._rows.player.after_opponent(self._states, state, action))

    def fold_probability(self, state: State, board: Sequence[int], action: Action, prior: np.ndarray) -> float:
        """The probability that the player folds at once when the other seat plays
        ``action`` at ``state``, over this range times ``prior`` (a weight per row: zero
        for rows that hold a known card). 0 where the player does not act next."""
        after = state.apply(action)
        if after.actor != self.position:
            return 0.0
        moves = self.after(state, board, action).moves(after, board)
        fold = moves.get(Action.fold())
        if fold is None:
            return 0.0
        total = float(np.dot(prior, sum(m.weights() for m in moves.values())))
        return float(np.dot(prior, fold.weights())) / total if total > 0.0 else 0.0
