"""Match results from a dealer's hand log: chips, mbb/g and a 95% confidence interval.

Each STATE line gives every position's chip result and the name playing it. A player's
samples are its per-hand results; with duplicate passes (the same deals replayed with the
seats rotated, hands numbered ``pass * hands_per_pass + h``) a sample is the sum over the
passes of one deal, which cancels most of the luck of the cards. The interval is the
normal approximation ``mean ± 1.96 · s / sqrt(n)`` over samples, reported in mbb/g
(thousandths of a big blind per game).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from poker.log import MatchLog

Z95 = 1.959963984540054


@dataclass(frozen=True)
class PlayerResult:
    """One player's result over a match."""

    name: str
    hands: int
    chips: float
    mbb_per_game: float
    ci95: tuple[float, float]

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-ready dict (``ci95`` as a two-element list)."""
        d = asdict(self)
        d["ci95"] = list(self.ci95)
        return d


def mean_ci95(samples: list[float]) -> tuple[float, float, float]:
    """(mean, low, high) of the normal-approximation 95% interval; the interval is the
    point itself when there are fewer than two samples."""
    n = len(samples)
    if n == 0:
        return 0.0, 0.0, 0.0
    mean = math.fsum(samples) / n
    if n < 2:
        return mean, mean, mean
    var = math.fsum((x - mean) ** 2 for x in samples) / (n - 1)
    half = Z95 * math.sqrt(var / n)
    return mean, mean - half, mean + half


def match_results(log: MatchLog, big_blind: int, passes: int = 1) -> list[PlayerResult]:
    """Per-player results, in the order names first appear in the log.

    ``passes`` > 1 pairs the hands of a duplicate match by deal (hand number modulo the
    hands per pass) and computes the interval over deals.
    """
    if big_blind <= 0:
        raise ValueError(f"big blind {big_blind} must be positive")
    per_pass = hands_per_pass(log, passes)
    order: list[str] = []
    hands: dict[str, int] = defaultdict(int)
    chips: dict[str, float] = defaultdict(float)
    by_deal: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    for hand in log.hands:
        deal = hand.hand_no % per_pass if passes > 1 else hand.hand_no
        for name, value in zip(hand.names, hand.values):
            if name not in hands:
                order.append(name)
            hands[name] += 1
            chips[name] += value
            by_deal[name][deal] += value
    scale = 1000.0 / big_blind
    out = []
    for name in order:
        # A duplicate sample covers `passes` games, so divide to get a per-game figure.
        samples = [v * scale / passes for v in by_deal[name].values()]
        mean, lo, hi = mean_ci95(samples)
        out.append(PlayerResult(name, hands[name], chips[name], mean, (lo, hi)))
    return out


def hands_per_pass(log: MatchLog, passes: int) -> int:
    """The deals of a match played in ``passes`` passes (the header's hand count, else the
    hands logged, over ``passes``): hand ``h`` plays deal ``h % hands_per_pass``."""
    if passes < 1:
        raise ValueError(f"passes {passes} must be at least 1")
    total_hands = sum(h.num_hands for h in log.headers[:1]) or len(log.hands)
    return max(total_hands // passes, 1)


def deal_means(
    values: Sequence[float], hand_numbers: Sequence[int], per_pass: int, passes: int
) -> list[float] | None:
    """One player's per-hand ``values`` (hand ``hand_numbers[i]``) of a duplicate match
    averaged per deal (hand number modulo ``per_pass``), in deal order; ``None`` unless
    the player played every deal it played exactly ``passes`` times."""
    if len(values) != len(hand_numbers):
        raise ValueError(f"{len(values)} values for {len(hand_numbers)} hand numbers")
    by_deal: dict[int, list[float]] = defaultdict(list)
    for v, h in zip(values, hand_numbers):
        by_deal[int(h) % per_pass].append(float(v))
    if not by_deal or any(len(vs) != passes for vs in by_deal.values()):
        return None
    return [math.fsum(by_deal[d]) / passes for d in sorted(by_deal)]
