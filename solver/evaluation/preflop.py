"""Whether a hold'em strategy orders its preflop hands by strength.

A converged heads-up strategy opens more often with stronger hands: the probability
that the button raises first in is close to monotone in the hand's equity against a
random hand (the exceptions are few: small suited hands can out-open weak offsuit
broadways). :func:`rank_correlation` is Spearman's rho (the Pearson correlation of
the two ranks, ties given their average rank), and :func:`equity_vs_random` the
all-in equity of each hand against every hand the deck leaves, on sampled boards.
``pokerbot inspect FILE --grid`` prints the correlation of its 169 classes.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np

from poker.cards import deck_cards
from poker.game import Game

from .lbr import range_equity

__all__ = ["EQUITY_SAMPLES", "average_ranks", "equity_vs_random", "rank_correlation"]

#: Boards sampled per hand by default: each against all 1,225 opposing hands, so the
#: standard error of an equity is under 0.01, far below the gaps that set the ranks
#: that matter (a pair against the offsuit hands near it).
EQUITY_SAMPLES = 1000


def equity_vs_random(game: Game, hands: Sequence[Sequence[int]], *, samples: int = EQUITY_SAMPLES,
                     seed: int = 0) -> np.ndarray:
    """The showdown equity (ties half) of each of ``hands`` against a uniformly random
    opposing hand, over ``samples`` boards drawn with ``seed`` (the same stream for
    every hand, so that close hands are compared on the same boards)."""
    deck = deck_cards(game.num_ranks, game.num_suits)
    opponents = np.array(list(combinations(deck, game.num_hole_cards)), dtype=np.int64)
    weights = np.ones(len(opponents))
    return np.array([range_equity(h, (), opponents, weights, game, samples=samples, seed=seed) for h in hands])


def average_ranks(values: Sequence[float]) -> np.ndarray:
    """Ranks 1..n of ``values``, tied values sharing the average of their ranks."""
    x = np.asarray(values, dtype=np.float64)
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    sorted_x = x[order]
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and sorted_x[j + 1] == sorted_x[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks


def rank_correlation(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation of ``x`` and ``y`` (NaN when either is constant)."""
    if len(x) != len(y) or len(x) < 2:
        raise ValueError(f"rank correlation needs two sequences of equal length >= 2, got {len(x)} and {len(y)}")
    rx, ry = average_ranks(x), average_ranks(y)
    rx -= rx.mean()
    ry -= ry.mean()
    denom = float(np.sqrt((rx * rx).sum() * (ry * ry).sum()))
    return float((rx * ry).sum() / denom) if denom > 0 else float("nan")
