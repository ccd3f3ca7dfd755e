"""Targeted CFR (Jackson 2017, "Targeted CFR", AAAI Workshop on Computer Poker and
Imperfect Information Games).

The game tree is partitioned by street. Each iteration draws a set R of targeted streets
from a distribution tau (paper, section "Targeted CFR"; Algorithm 1) and, for player
i = 0 then 1 on a deal made up front (see :mod:`solver.training.mccfr`):

1. at i's decision nodes on a street in R, evaluate every action, return
   c = sum_a sigma(I, a) v(a) and add v(a) - c to the regrets r(I, a) (Algorithm 1's
   targeted branch; Eq. 2-3 with sampled values);
2. at every other decision node (i's outside R, and all of the opponent's) follow one
   action sampled from the actor's current strategy (Eq. 4, regret matching) and update
   nothing: only the sampled value comes back (a "probe", Gibson et al. 2012);
3. only on "full" iterations (R = every street, identical to an external-sampling
   iteration) add sigma(I) to the opponent's cumulative profile s(I, .) at its nodes.

Options, each pinned by a test in ``tests/test_tcfr.py``:

* ``importance``: scale regret updates by 1/q(I), the probability that I is updated
  (tau and i's own sampled actions on untargeted streets). The paper finds that this
  theoretically required correction slows convergence, so it is off by default.
  Without it the updates of I are weighted by q_t(I) = 0.1 + 0.9 * pi_i^t(I), which
  moves as i's early-street strategy moves, so regret matching minimizes a weighted
  regret and the average wanders: on Leduc with the default targeting the
  exploitability goes up and down between 0.04 and 0.10 chips from 1M to 128M
  iterations (seeds 1 to 3), while with the correction it falls steadily (0.0021 to
  0.0034 at 128M). A schedule whose update probabilities do not change over time
  (``mod10:0@1-9``) converges without it. On 20-card hold'em the uncorrected run is
  ahead at two minutes, as the paper finds (README, "What the Targeted CFR paper claims,
  what we measured").
* ``close_threshold``: the paper's extension (section "Extensions"): also explore and
  update i's decisions whose two highest regrets differ by less than the threshold
  (in chips of cumulative regret; Slumbot 2019 ships ``CloseThreshold 2000`` in its
  scaled units). 0 turns it off.
* ``pure``: the current strategy is the highest-regret action (Slumbot 2019's
  ``src/tcfr.cpp`` plays it) instead of regret matching.

tau is data (:class:`Targeting`): a table of (streets, probability), as the paper's
tables for its games 1 and 2, or a modular schedule where iteration t targets the set
listed for t mod m and every unlisted remainder is full, as Slumbot's ``ActiveMod 40``
(one iteration in 40 full; 30 target the turn and river, 7 the flop and river, 2 the
preflop and river).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _sampling_kernels as SK
from ..problem import Problem
from .sampled import SampledCFRSolver, SamplingOptions, make_config

__all__ = [
    "PAPER_GAME1",
    "PAPER_GAME2",
    "SLUMBOT_MOD40",
    "TargetedCFRSolver",
    "Targeting",
    "TargetingError",
    "default_targeting",
    "parse_targeting",
]


class TargetingError(ValueError):
    """A targeting distribution that cannot be used; the message says which part."""


def _streets_text(streets: frozenset[int]) -> str:
    return "".join(str(s) for s in sorted(streets))


def _ranges(values: list[int]) -> str:
    """``[1, 2, 3, 7]`` -> ``'1-3,7'``."""
    out: list[str] = []
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        out.append(str(values[i]) if i == j else f"{values[i]}-{values[j]}")
        i = j + 1
    return ",".join(out)


@dataclass(frozen=True)
class Targeting:
    """tau: which sets of streets an iteration targets, and how often.

    Table form (``modulus`` = 0): ``sets[k]`` is drawn with probability ``weights[k]``.
    Modular form: iteration t (0-based) targets ``sets[t % modulus]`` (``weights`` are
    all 1 / modulus). Build with :meth:`table`, :meth:`modular` or
    :func:`parse_targeting`.
    """

    sets: tuple[frozenset[int], ...]
    weights: tuple[float, ...]
    modulus: int = 0
    spec: str = ""

    @classmethod
    def table(cls, entries: Sequence[tuple[Iterable[int], float]], spec: str = "") -> Targeting:
        """From (streets, probability) pairs; probabilities are normalised."""
        if not entries:
            raise TargetingError("the targeting table is empty")
        sets, weights = [], []
        for streets, w in entries:
            s = frozenset(int(x) for x in streets)
            if not s:
                raise TargetingError("a targeted set must hold at least one street")
            if s in sets:
                raise TargetingError(f"streets {_streets_text(s)} are listed twice")
            if not w > 0:
                raise TargetingError(
                    f"probability {w} of streets {_streets_text(s)} is not positive"
                )
            sets.append(s)
            weights.append(float(w))
        total = sum(weights)
        text = spec or ",".join(f"{_streets_text(s)}:{w / total:g}" for s, w in zip(sets, weights))
        return cls(tuple(sets), tuple(w / total for w in weights), 0, text)

    @classmethod
    def modular(
        cls, modulus: int, conditions: Sequence[tuple[Iterable[int], Iterable[int]]], spec: str = ""
    ) -> Targeting:
        """Iteration t targets the streets whose condition lists t mod ``modulus``;
        remainders no condition lists target every street (full iterations)."""
        if modulus < 1:
            raise TargetingError(f"modulus {modulus} must be at least 1")
        slots: list[frozenset[int] | None] = [None] * modulus
        parts = []
        for streets, rems in conditions:
            s = frozenset(int(x) for x in streets)
            if not s:
                raise TargetingError("a targeted set must hold at least one street")
            rl = sorted(int(r) for r in rems)
            for r in rl:
                if not 0 <= r < modulus:
                    raise TargetingError(f"remainder {r} is outside 0..{modulus - 1}")
                if slots[r] is not None:
                    raise TargetingError(f"remainder {r} is listed twice")
                slots[r] = s
            parts.append(f"{_streets_text(s)}@{_ranges(rl)}")
        full = frozenset({-1})  # placeholder for "every street", resolved per game
        sets = tuple(x if x is not None else full for x in slots)
        text = spec or f"mod{modulus}:" + ";".join(parts)
        return cls(sets, tuple([1.0 / modulus] * modulus), modulus, text)

    def resolved(self, n_streets: int) -> list[frozenset[int]]:
        """The sets with "every street" made explicit, checked against the game."""
        every = frozenset(range(n_streets))
        out = []
        for s in self.sets:
            if s == frozenset({-1}):
                out.append(every)
                continue
            bad = [x for x in s if not 0 <= x < n_streets]
            if bad:
                raise TargetingError(
                    f"targeting names street {bad[0]}, the game has streets 0..{n_streets - 1}"
                )
            out.append(s)
        return out

    def full_probability(self, n_streets: int) -> float:
        """How often an iteration targets every street (updates the average)."""
        every = frozenset(range(n_streets))
        return sum(w for s, w in zip(self.resolved(n_streets), self.weights) if s == every)

    def kernel_arrays(self, n_streets: int) -> dict[str, Any]:
        """The :class:`KConfig` fields of this targeting."""
        sets = self.resolved(n_streets)
        if self.full_probability(n_streets) <= 0:
            raise TargetingError(
                "the targeting never targets every street: full iterations are the only ones "
                "that update the average strategy (and satisfy reachability)"
            )
        masks = np.array([sum(1 << s for s in x) for x in sets], dtype=np.int64)
        freq: dict[int, float] = {}
        for m, w in zip(masks.tolist(), self.weights):
            freq[m] = freq.get(m, 0.0) + w
        return {
            "target_mask": masks,
            "target_cum": np.cumsum(self.weights),
            "modulus": self.modulus,
            "q_mask": np.array(list(freq), dtype=np.int64),
            "q_freq": np.array(list(freq.values())),
        }


#: Jackson 2017, game 1 (24-card deck, no card abstraction, one pot-size bet a street).
PAPER_GAME1 = Targeting.table([((0, 1, 2, 3), 0.2), ((2, 3), 0.8)], spec="game1")
#: Jackson 2017, game 2 (52 cards, imperfect-recall buckets).
PAPER_GAME2 = Targeting.table(
    [((0, 1, 2, 3), 0.025), ((2, 3), 0.75), ((1, 3), 0.175), ((0, 3), 0.05)], spec="game2"
)
#: Slumbot 2019 ``runs/tcfr_params``: ActiveMod 40, ActiveConditions
#: 0,3:38,39; 1,3:31..37; 2,3:1..30 (remainder 0: full).
SLUMBOT_MOD40 = Targeting.modular(
    40, [((0, 3), (38, 39)), ((1, 3), range(31, 38)), ((2, 3), range(1, 31))], spec="mod40"
)
_NAMED = {"game1": PAPER_GAME1, "game2": PAPER_GAME2, "mod40": SLUMBOT_MOD40}


def default_targeting(n_streets: int) -> Targeting:
    """Slumbot's mod-40 schedule for four streets; for fewer, one iteration in 10 full and
    the others targeting the last street (on Leduc this reaches a 10x lower
    exploitability than uniform play about 3x sooner than one full iteration in 40);
    every iteration is full in a one-street game."""
    if n_streets == 4:
        return SLUMBOT_MOD40
    if n_streets == 1:
        return Targeting.modular(1, [], spec="full")
    return Targeting.modular(10, [((n_streets - 1,), range(1, 10))])


_TABLE_ITEM = re.compile(r"^([0-9]+):([0-9.eE+-]+)$")
_MOD_ITEM = re.compile(r"^([0-9]+)@([0-9,\-]+)$")


def _rems(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        if "-" in part:
            lo, hi = part.split("-", 1)
            out.extend(range(int(lo), int(hi) + 1))
        elif part:
            out.append(int(part))
    return out


def parse_targeting(spec: str) -> Targeting:
    """A :class:`Targeting` from text.

    Names: ``full`` (every iteration full: external sampling), ``game1``, ``game2`` (the
    paper's tables), ``mod40`` (Slumbot's schedule). Table: ``0123:0.2,23:0.8`` (streets
    as digits, then probability; normalised). Modular: ``mod40:03@38-39;13@31-37;23@1-30``
    (streets @ remainders; unlisted remainders are full).

    >>> parse_targeting("0123:0.2,23:0.8").weights
    (0.2, 0.8)
    """
    text = spec.strip().replace(" ", "")
    if text == "full":
        return Targeting.modular(1, [], spec="full")
    if text in _NAMED:
        return _NAMED[text]
    try:
        if text.startswith("mod"):
            head, _, body = text.partition(":")
            modulus = int(head[3:])
            conds = []
            for item in filter(None, body.split(";")):
                m = _MOD_ITEM.match(item)
                if not m:
                    raise TargetingError(f"targeting item {item!r} is not STREETS@REMAINDERS")
                conds.append(([int(c) for c in m.group(1)], _rems(m.group(2))))
            return Targeting.modular(modulus, conds, spec=text)
        entries = []
        for item in text.split(","):
            m = _TABLE_ITEM.match(item)
            if not m:
                raise TargetingError(f"targeting item {item!r} is not STREETS:PROBABILITY")
            entries.append(([int(c) for c in m.group(1)], float(m.group(2))))
        return Targeting.table(entries, spec=text)
    except TargetingError:
        raise
    except ValueError as exc:
        raise TargetingError(f"targeting {spec!r}: {exc}") from None


class TargetedCFRSolver(SampledCFRSolver):
    """Targeted CFR (Jackson 2017, Algorithm 1) with the options of the module docstring.

    ``sampling``: the :class:`~solver.training.sampled.SamplingOptions` of the run;
    ``targeting``: a :class:`Targeting`, its text, or None for :func:`default_targeting`.
    """

    algorithm = "tcfr"

    def __init__(
        self,
        problem: Problem,
        sampling: SamplingOptions | None = None,
        *,
        targeting: Targeting | str | None = None,
        importance: bool = False,
        close_threshold: float = 0.0,
        pure: bool = False,
    ) -> None:
        n_streets = problem.tree.n_streets
        if targeting is None:
            targeting = default_targeting(n_streets)
        elif isinstance(targeting, str):
            targeting = parse_targeting(targeting)
        if not close_threshold >= 0:
            raise ValueError(f"close threshold {close_threshold} must not be negative")
        self.targeting = targeting
        self.importance = bool(importance)
        self.close_threshold = float(close_threshold)
        self.pure = bool(pure)
        config = make_config(
            SK.ALG_TARGETED,
            n_streets,
            importance=importance,
            close=close_threshold,
            pure=pure,
            **targeting.kernel_arrays(n_streets),
        )
        super().__init__(problem, config, sampling)

    def options(self) -> dict[str, Any]:
        return {
            **super().options(),
            "targeting": self.targeting.spec,
            "importance": self.importance,
            "close_threshold": self.close_threshold,
            "pure": self.pure,
        }
