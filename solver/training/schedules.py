"""Schedules of the sampled solvers: discounting regrets and averages, and pruning.

**Discounting** (Brown & Sandholm 2019, "Solving Imperfect-Information Games via
Discounted Regret Minimization", AAAI, Section 3). Linear CFR weighs iteration t's
regrets and average contribution by t; Discounted CFR (DCFR) multiplies, after iteration
t, positive cumulative regrets by t^alpha / (t^alpha + 1), negative ones by
t^beta / (t^beta + 1) and the average's sums by (t / (t + 1))^gamma (their recommended
alpha = 3/2, beta = 0, gamma = 2). Linear CFR is the same rule with every factor
t / (t + 1). A sampled solver cannot afford a pass over its tables after every deal, so
here t counts *batches* of :attr:`Discounting.every` iterations, as Pluribus's Linear
MCCFR discounted once every 10 minutes (Brown & Sandholm 2019, Science, supplementary):
after the b-th batch both tables are multiplied by the factors of t = b. Pluribus
stopped after 400 minutes; :attr:`Discounting.until` is that horizon, in iterations
(the discount is a function of the iteration count alone, so runs repeat and resume
exactly).

**Pruning** (MCCFR-P, the same supplementary, Algorithm 1): from iteration
:attr:`Pruning.after` on, a share :attr:`Pruning.share` of the iterations (95% in
Pluribus) skip every traverser action whose cumulative regret is below
:attr:`Pruning.threshold`, except on the last betting round and actions that end the
hand; the other iterations explore everything, so a pruned action can recover. Regrets
are floored at :attr:`Pruning.floor` (Pluribus: -310M with a threshold of -300M), which
bounds how long recovery takes. Both are in chips summed over visits, like the tables.
"""

from __future__ import annotations

import math

import operator
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from numba import njit

__all__ = ["DISCOUNTS", "NEVER", "Discounting", "Pruning", "discount_tables"]

#: Discount rules: Linear CFR's and Discounted CFR's.
DISCOUNTS = ("linear", "dcfr")
#: An iteration no run reaches (the kernel's "never prune").
NEVER = (1 << 62) - 1


def _whole(name: str, value: Any) -> int:
    try:
        if isinstance(value, bool):
            raise TypeError
        return operator.index(value)
    except TypeError:
        raise ValueError(f"{name} {value!r} is not a whole number") from None


def _real(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise ValueError(f"{name} {value!r} is not a number")
    x = float(value)
    if not np.isfinite(x):
        raise ValueError(f"{name} {value!r} is not finite")
    return x


def _check_record(what: str, record: Any) -> None:
    if not isinstance(record, Mapping):
        raise ValueError(f"the recorded {what} {record!r} is not a table of settings")


@dataclass(frozen=True)
class Discounting:
    """Discount the tables after every ``every`` iterations, up to iteration ``until``
    (None: for the whole run), by ``rule`` ('linear' or 'dcfr' with ``alpha``, ``beta``,
    ``gamma``; see the module docstring)."""

    rule: str = "dcfr"
    every: int = 1_000_000
    until: int | None = None
    alpha: float = 1.5
    beta: float = 0.0
    gamma: float = 2.0

    def __post_init__(self) -> None:
        if self.rule not in DISCOUNTS:
            raise ValueError(f"discount {self.rule!r} is not one of {', '.join(DISCOUNTS)}")
        object.__setattr__(self, "every", _whole("discount interval", self.every))
        if self.every < 1:
            raise ValueError(f"discount interval {self.every} must be at least 1 iteration")
        if self.until is not None:
            object.__setattr__(self, "until", _whole("discount horizon", self.until))
            if self.until < 0:
                raise ValueError(f"discount horizon {self.until} must not be negative")
        for name in ("alpha", "beta", "gamma"):
            object.__setattr__(self, name, _real(f"discount {name}", getattr(self, name)))
        if self.rule == "linear" and (self.alpha, self.beta, self.gamma) != (1.5, 0.0, 2.0):
            raise ValueError("alpha, beta and gamma are Discounted CFR's: the linear discount takes none")

    def due(self, iterations: int) -> bool:
        """Whether a discount follows iteration count ``iterations`` (a batch ends there,
        within the horizon)."""
        return (
            iterations > 0
            and iterations % self.every == 0
            and (self.until is None or iterations <= self.until)
        )

    def until_next(self, iterations: int) -> int | None:
        """Iterations from ``iterations`` to the next discount (None: there is none)."""
        nxt = (iterations // self.every + 1) * self.every
        if self.until is not None and nxt > self.until:
            return None
        return nxt - iterations

    def applied(self, iterations: int) -> int:
        """How many discounts a run has applied after ``iterations`` iterations."""
        last = iterations if self.until is None else min(iterations, self.until)
        return last // self.every

    def factors(self, batch: int) -> tuple[float, float, float]:
        """(positive regrets, negative regrets, average sums) multipliers after the
        ``batch``-th batch (1-based)."""
        t = float(batch)
        if self.rule == "linear":
            f = t / (t + 1.0)
            return f, f, f
        return _share(t, self.alpha), _share(t, self.beta), (t / (t + 1.0)) ** self.gamma

    def record(self) -> dict[str, Any]:
        """The schedule as a checkpoint and a strategy file record it."""
        out: dict[str, Any] = {"rule": self.rule, "every": self.every, "until": self.until}
        if self.rule == "dcfr":
            out.update(alpha=self.alpha, beta=self.beta, gamma=self.gamma)
        return out

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Discounting:
        """The schedule :meth:`record` wrote (``ValueError`` for anything else)."""
        _check_record("discount", record)
        return cls(**{k: record[k] for k in ("rule", "every", "until", "alpha", "beta", "gamma") if k in record})


def _share(t: float, power: float) -> float:
    """t^power / (t^power + 1), and 1 where t^power is beyond a float (a big power over
    a long run), not inf / inf."""
    try:
        x = t**power
    except OverflowError:
        return 1.0
    return 1.0 if math.isinf(x) else x / (x + 1.0)


@dataclass(frozen=True)
class Pruning:
    """MCCFR-P (see the module docstring): from iteration ``after`` on, a ``share`` of
    iterations skip traverser actions with regret below ``threshold`` (chips, negative);
    regrets are kept at or above ``floor`` (None: 31/30 of the threshold, Pluribus's
    ratio)."""

    threshold: float = -300_000_000.0
    after: int = 0
    share: float = 0.95
    floor: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "threshold", _real("pruning threshold", self.threshold))
        if self.threshold >= 0:
            raise ValueError(f"pruning threshold {self.threshold:g} must be negative (chips of regret)")
        object.__setattr__(self, "after", _whole("pruning warm-up", self.after))
        if self.after < 0:
            raise ValueError(f"pruning warm-up {self.after} must not be negative")
        object.__setattr__(self, "share", _real("pruning share", self.share))
        if not 0.0 < self.share <= 1.0:
            raise ValueError(f"pruning share {self.share:g} must be in (0, 1]")
        floor = self.threshold * 31.0 / 30.0 if self.floor is None else _real("regret floor", self.floor)
        if floor > self.threshold:
            raise ValueError(f"pruning's regret floor {floor:g} must be at or below its threshold {self.threshold:g}")
        object.__setattr__(self, "floor", floor)

    def record(self) -> dict[str, Any]:
        """The settings as a checkpoint and a strategy file record them."""
        return {"threshold": self.threshold, "after": self.after, "share": self.share, "floor": self.floor}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Pruning:
        """The settings :meth:`record` wrote (``ValueError`` for anything else)."""
        _check_record("pruning", record)
        return cls(**{k: record[k] for k in ("threshold", "after", "share", "floor") if k in record})


@njit(cache=True, nogil=True)
def discount_tables(regrets: np.ndarray, avg: np.ndarray, pos: float, neg: float, avg_f: float) -> None:
    """Multiply positive regrets by ``pos``, negative ones by ``neg`` and every average
    sum by ``avg_f``, in place (one pass over each flat table)."""
    for i in range(regrets.shape[0]):
        r = regrets[i]
        regrets[i] = r * pos if r > 0 else r * neg
    for i in range(avg.shape[0]):
        avg[i] *= avg_f
