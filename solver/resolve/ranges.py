"""The blueprint's view of a real hand: each seat's range at a real history, read
through the abstract tree, for the root of a re-solve.

A re-solving player needs both ranges at the subgame's root before its first re-solve
in a hand (issue: "both ranges ... come from the blueprint by Bayes along the real
history"). The blueprint knows only its abstract tree, so each real action is read as
the abstract actions the translation maps it to (:meth:`TranslatedPolicy.translate`,
with its probabilities), and a seat's hand ``h`` is weighted by the blueprint's
probability of the abstract action it took, at the abstract node the history had
reached, for ``h``'s bucket:

    w_s(h) = sum over mapping branches b of P(b) * prod over s's actions k of sigma(c_bk | n_bk, h),

``c_bk`` the abstract child branch ``b`` maps the ``k``-th action of seat ``s`` to. After
an off-tree action (a size the tree does not hold) this is the mapped abstract nodes'
ranges weighted by the translation's probabilities. Where the tree cannot follow (the
abstract street is over but the real one goes on, or nobody acts there), a branch stops
learning from the actions and keeps its weights.

:class:`BlueprintRanges` carries the sum as mapping states (abstract node, or ``LOST``,
-> one reach vector per seat over the deck's hands), as the exact evaluations do.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from poker.state import Action, State

from ..play.policy import LOST, TranslatedPolicy
from ..tree import CHANCE

__all__ = ["BlueprintRanges"]


class BlueprintRanges:
    """Both seats' blueprint ranges (module docstring) over ``hands`` (int64[H, hole
    cards], ACPC cards) from the start of a hand; :meth:`after` follows one real action,
    :meth:`weights` gives a seat's likelihood of the history for each hand. Rows that
    hold a board card get bucket 0 (their weight is meaningless; mask them)."""

    def __init__(self, policy: TranslatedPolicy, hands: np.ndarray,
                 shared: dict[tuple[int, tuple[int, ...]], np.ndarray] | None = None) -> None:
        self.policy = policy
        self.hands = np.ascontiguousarray(hands, dtype=np.int64)
        n = self.hands.shape[0]
        self._states: dict[int, tuple[np.ndarray, np.ndarray]] = {0: (np.ones(n), np.ones(n))}
        self._buckets: dict[int, np.ndarray] = {}
        #: the hands' buckets by (street, board), shared by ranges on the same boards (the
        #: exact walks make one per history)
        self._shared = shared

    def copy(self) -> BlueprintRanges:
        """The ranges as they are now, unaffected by later :meth:`after` calls."""
        other = BlueprintRanges.__new__(BlueprintRanges)
        other.policy, other.hands, other._shared = self.policy, self.hands, self._shared
        other._states, other._buckets = dict(self._states), dict(self._buckets)
        return other

    def weights(self, seat: int) -> np.ndarray:
        """Seat ``seat``'s likelihood of the history so far, per hand."""
        return sum((r[seat] for r in self._states.values()), np.zeros(self.hands.shape[0]))

    def _bucket_rows(self, street: int, board: Sequence[int]) -> np.ndarray:
        got = self._buckets.get(street)
        if got is None and self._shared is not None:
            key = (street, tuple(int(c) for c in board))
            got = self._shared.get(key)
            if got is None:
                self._shared[key] = got = self._compute_rows(street, board)
            self._buckets[street] = got
        if got is None:
            got = self._buckets[street] = self._compute_rows(street, board)
        return got

    def _compute_rows(self, street: int, board: Sequence[int]) -> np.ndarray:
        """Each hand's bucket on ``street`` with ``board`` (0 where it holds a board card)."""
        pol = self.policy
        b = np.asarray(board, dtype=np.int64)
        live = ~np.isin(self.hands, b).any(axis=1)
        got = np.zeros(self.hands.shape[0], dtype=np.int64)
        cards = np.ascontiguousarray(np.concatenate([self.hands[live], np.tile(b, (int(live.sum()), 1))], axis=1))
        k = self.hands.shape[1]
        if pol.bucket_batch is not None:
            got[live] = np.asarray(pol.bucket_batch(street, cards), dtype=np.int64)
        else:
            got[live] = [pol.bucket(street, r[:k], r[k:]) for r in cards.tolist()]
        return got

    def after(self, state: State, board: Sequence[int], action: Action) -> None:
        """Follow ``action``, played by ``state``'s actor at ``state`` (``board``: the
        cards through ``state``'s street)."""
        pol = self.policy
        actor = state.actor
        if actor is None:
            raise ValueError("nobody is to act: the hand is over")
        out: dict[int, tuple[np.ndarray, np.ndarray]] = {}

        def add(key: int, r0: np.ndarray, r1: np.ndarray) -> None:
            have = out.get(key)
            out[key] = (r0, r1) if have is None else (have[0] + r0, have[1] + r1)

        for key, (r0, r1) in self._states.items():
            node = pol.sync(key, state) if key != LOST else LOST
            if node == LOST or not pol.in_step(node, state):
                # the abstract street is over while the real one goes on: wait for the
                # next street; anything else (nobody, or the other seat, to act there) is lost
                add(node if node != LOST and pol._kind[node] == CHANCE else LOST, r0, r1)
                continue
            outcomes, _ = pol.translate(node, state, action)
            probs = pol.rows(node, self._bucket_rows(state.round, board))  # hands x children
            first = pol._child[node]
            for child, q in outcomes:
                column = probs[:, child - first]
                if actor == 0:
                    add(child, r0 * (q * column), r1 * q)
                else:
                    add(child, r0 * q, r1 * (q * column))
        self._states = out
