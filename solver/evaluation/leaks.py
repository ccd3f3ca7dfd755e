"""Planted leaks: a strategy changed on purpose, to check that an exploiter finds it.

An exploiter that cannot tell a strategy from the same strategy with a known hole in it
measures nothing. :func:`plant_call_all_in` makes the hole: at every decision of one
street where the player faces an all-in (it may only fold or call), the altered strategy
calls with every hand, the leak of a bot that never folds to a shove. The tests and
``bench/leaks.py`` play every exploiter against the original and the altered strategy;
each must win clearly more against the second.
"""

from __future__ import annotations

import numpy as np

from ..play.policy import TranslatedPolicy
from ..tree import DECISION, Tree

__all__ = ["all_in_decisions", "plant_call_all_in", "planted_policy"]

_ACT_CALL = 1


def all_in_decisions(tree: Tree, street: int) -> np.ndarray:
    """The decision nodes of ``street`` where the player to act faces an all-in: the other
    player has put its whole stack in (so the only actions are fold and call)."""
    game = tree.game
    nodes = []
    for n in np.flatnonzero((tree.kind == DECISION) & (tree.street == street)).tolist():
        other = 1 - int(tree.player[n])
        if int(tree.spent[n, other]) >= game.stack[other]:
            nodes.append(n)
    return np.asarray(nodes, dtype=np.int64)


def plant_call_all_in(tree: Tree, offset: np.ndarray, table: np.ndarray, street: int) -> tuple[np.ndarray, int]:
    """A copy of the strategy ``table`` (rows of each decision node's buckets, float or
    uint8 quantized) in which every bucket calls at every node of
    :func:`all_in_decisions`; and the number of nodes changed."""
    out = table.copy()
    full = 255 if table.dtype == np.uint8 else 1.0
    nodes = all_in_decisions(tree, street)
    starts = np.unique(offset[offset >= 0])
    for n in nodes.tolist():
        k = int(tree.n_child[n])
        first = int(tree.child[n])
        call = next(i for i in range(k) if int(tree.action[first + i]) == _ACT_CALL)
        later = starts[starts > offset[n]]  # the next node's rows start where this one's end
        end = int(later[0]) if later.size else out.shape[0]
        rows = out[int(offset[n]) : end].reshape(-1, k)  # a view: the node's buckets
        rows[:] = 0
        rows[:, call] = full
    return out, int(nodes.shape[0])


def planted_policy(policy: TranslatedPolicy, street: int) -> tuple[TranslatedPolicy, int]:
    """``policy`` with :func:`plant_call_all_in` on ``street``, everything else the same;
    and the number of nodes changed."""
    table, changed = plant_call_all_in(policy.tree, policy.offset, policy.table, street)
    altered = TranslatedPolicy(policy.tree, policy.offset, table, policy.bucket, mapping=policy.mapping,
                               purify=policy.purify, bucket_batch=policy.bucket_batch)
    return altered, changed
