"""Rows of a stored strategy that play every action alike.

A sampled solver leaves an information set's average at zero when its average was never
updated (Targeted CFR updates it only on its full iterations), and a file then stores
that row as the uniform distribution: at such a row the player folds, calls and shoves
with the same probability whatever its cards. A row is *uniform* here when all its
actions lie within one quantization step of each other: 1 of 255 in a one-byte file
(rows summing to 255), a 255th of the row's sum in a float file. A row that really
converged to an even mixture counts too; with three or more actions that is rare.

:func:`row_is_uniform` tests one row (the player counts its decisions on them,
:class:`~solver.play.policy.TranslationCounts`); :func:`uniform_rows` counts them per
street over a whole table (``pokerbot inspect``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..tree import DECISION, Tree

__all__ = ["FLOAT_STEP", "UniformRows", "row_is_uniform", "uniform_rows"]


#: One quantization step of a float row, as a share of the row's sum (a one-byte row's
#: step is 1 of its 255).
FLOAT_STEP = 1.0 / 255.0


def row_is_uniform(values: Sequence[float], quantized: bool) -> bool:
    """True if a stored row (``quantized``: one byte per action, summing to 255; else
    floats) has at least two actions, all within one quantization step of each other.
    Plain Python: the player asks once per decision, on a handful of values."""
    if len(values) < 2:
        return False
    spread = max(values) - min(values)
    if quantized:
        return spread <= 1
    total = sum(values)
    return spread <= (total if total > 0 else 1.0) * FLOAT_STEP


@dataclass(frozen=True)
class UniformRows:
    """Per street: ``rows`` (information sets with two or more actions: decision nodes x
    buckets) and ``uniform`` (those with every action within one step of equal)."""

    rows: list[int]
    uniform: list[int]

    @property
    def shares(self) -> list[float]:
        """``uniform / rows`` per street (0 where a street has no rows)."""
        return [u / r if r else 0.0 for u, r in zip(self.uniform, self.rows)]

    def to_dict(self) -> dict[str, list[int] | list[float]]:
        """Plain data for JSON."""
        return {"rows": self.rows, "uniform": self.uniform, "shares": [round(s, 6) for s in self.shares]}


def uniform_rows(tree: Tree, offset: np.ndarray, table: np.ndarray, n_buckets: list[int]) -> UniformRows:
    """Count the uniform rows of ``table`` (the layout of :func:`solver.tree.table_offsets`:
    node ``v``'s row for bucket ``b`` at ``offset[v] + b * n_actions``) per street."""
    streets = tree.game.num_rounds
    rows = [0] * streets
    uniform = [0] * streets
    for node in np.flatnonzero(tree.kind == DECISION):
        n = int(tree.n_child[node])
        if n < 2:
            continue
        street = int(tree.street[node])
        k = int(n_buckets[street])
        start = int(offset[node])
        block = np.asarray(table[start : start + k * n], dtype=np.float64).reshape(k, n)
        spread = block.max(axis=1) - block.min(axis=1)
        if table.dtype == np.uint8:
            hit = spread <= 1.0
        else:
            total = block.sum(axis=1)
            hit = spread <= np.where(total > 0, total, 1.0) * FLOAT_STEP
        rows[street] += k
        uniform[street] += int(hit.sum())
    return UniformRows(rows, uniform)
