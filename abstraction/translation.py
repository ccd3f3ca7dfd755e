"""Action translation: an opponent's real bet size mapped to the abstract ones, and an
abstract action turned back into a legal real raise-to.

A blueprint knows a few bet sizes per decision (:mod:`abstraction.betting`); a real
opponent bets any legal amount. Sizes are compared as fractions of the pot after calling
(``x = (raise_to - largest bet) / pot after calling``, :func:`bet_fraction`). A real bet
``x`` between two abstract sizes ``A < B`` maps to ``A`` with probability ``f(x)`` and to
``B`` otherwise, where (Ganzfried & Sandholm 2013, "Action translation in extensive-form
games with large action spaces: axioms, paradoxes, and the pseudo-harmonic mapping",
IJCAI, Section 5, Eq. 1)

    f(x) = (B - x)(1 + A) / ((B - A)(1 + x))          pseudo-harmonic (randomized)

Two baselines of the same paper (Section 4) are kept for measuring it:

    map to A iff x / A <= B / x, i.e. x <= sqrt(A B)    "nearest": deterministic, nearest by ratio
    f(x) = A (B - x) / (A (B - x) + x (x - A))           "geometric": randomized geometric

Where ``x`` is below the smallest abstract size the lower neighbour is ``A = 0``, the
check or call (the paper's treatment of a bet smaller than every size): a player that
maps a real bet to a call has to call it, never fold (the player enforces that). Above
the largest size, ``x`` maps to the largest (the all-in where the tree has it).

The abstract action goes back to the real game by the rule that built the tree
(:func:`abstraction.betting.size_to_raise_to`) applied to the *real* pot and bets: the
blueprint's pot fraction of the real pot after calling, clamped into the real legal
range, as a raise-**to** total (never an increment).

Everything here is a pure function of numbers; :mod:`solver.play.policy` walks the tree.
"""

from __future__ import annotations

from collections.abc import Sequence

from .betting import ALL_IN, pot_after_call, size_to_raise_to

__all__ = [
    "ALL_IN",
    "CALL",
    "MAPPINGS",
    "bet_fraction",
    "map_bet",
    "mapping_probability",
    "real_raise_to",
    "uniform",
]

#: Names of the mappings :func:`map_bet` knows (the default first).
MAPPINGS = ("pseudo_harmonic", "nearest", "geometric")
#: Index :func:`map_bet` returns for the check or call (below the smallest size).
CALL = -1


def mapping_probability(x: float, a: float, b: float, mapping: str = "pseudo_harmonic") -> float:
    """Probability that a bet of ``x`` pots, with ``a <= x <= b``, maps to the smaller
    abstract size ``a`` (``a`` may be 0: the check or call).

    >>> mapping_probability(0.75, 0.5, 1.0)  # pseudo-harmonic
    0.42857142857142855
    >>> mapping_probability(0.5, 0.5, 1.0), mapping_probability(1.0, 0.5, 1.0)
    (1.0, 0.0)
    """
    if not 0.0 <= a < b:
        raise ValueError(f"sizes must satisfy 0 <= A < B, got A={a}, B={b}")
    if not a <= x <= b:
        raise ValueError(f"bet {x} is not between A={a} and B={b}")
    if mapping == "pseudo_harmonic":
        return (b - x) * (1.0 + a) / ((b - a) * (1.0 + x))
    if mapping == "nearest":
        if a == 0.0:
            return 1.0 if x == 0.0 else 0.0
        return 1.0 if x * x <= a * b else 0.0
    if mapping == "geometric":
        den = a * (b - x) + x * (x - a)
        return 1.0 if den == 0.0 else a * (b - x) / den
    raise ValueError(f"mapping {mapping!r} is not one of {', '.join(MAPPINGS)}")


def map_bet(
    x: float, sizes: Sequence[float], mapping: str = "pseudo_harmonic"
) -> list[tuple[int, float]]:
    """Where a real bet of ``x`` pots goes among abstract ``sizes`` (ascending, > 0):
    ``[(index, probability), ...]`` with ``index`` into ``sizes`` or :data:`CALL`, the
    probabilities summing to 1 and none zero.

    Below the smallest size the lower neighbour is the call; at or above the largest,
    the largest; no sizes at all (a capped street): the call.

    >>> map_bet(0.75, [0.5, 1.0])
    [(0, 0.42857142857142855), (1, 0.5714285714285714)]
    >>> map_bet(3.0, [0.5, 1.0]), map_bet(1.0, [0.5, 1.0]), map_bet(0.2, [])
    ([(1, 1.0)], [(1, 1.0)], [(-1, 1.0)])
    """
    if not sizes:
        return [(CALL, 1.0)]
    if any(b <= a for a, b in zip(sizes, sizes[1:])) or sizes[0] <= 0:
        raise ValueError(f"abstract sizes {list(sizes)} must be positive and ascending")
    if x >= sizes[-1]:
        return [(len(sizes) - 1, 1.0)]
    x = max(x, 0.0)
    hi = next(i for i, b in enumerate(sizes) if x < b)
    a = sizes[hi - 1] if hi > 0 else 0.0
    if x == a:
        return [(hi - 1, 1.0)]
    p = mapping_probability(x, a, sizes[hi], mapping)
    out = [(hi - 1, p), (hi, 1.0 - p)]
    return [(i, q) for i, q in out if q > 0.0]


def bet_fraction(raise_to: int, spent: Sequence[int], actor: int) -> float:
    """The size of a raise to ``raise_to`` by ``actor`` facing ``spent``, in pots after
    calling (0 for a raise-to equal to the largest bet).

    >>> bet_fraction(6, (2, 1), 1)  # raise to 6 facing the big blind: one pot
    1.0
    """
    return (raise_to - max(spent)) / pot_after_call(spent, actor)


#: The legal real raise-to of an abstract raise of ``size`` pots (or :data:`ALL_IN`, or NaN
#: for a limit raise), from the real bets: the rule that built the tree
#: (:func:`abstraction.betting.size_to_raise_to`) with the real pot and legal range.
real_raise_to = size_to_raise_to


_MASK = (1 << 64) - 1


def _splitmix(z: int) -> int:
    z = (z + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def uniform(seed: int, hand: int, index: int, stream: int = 0) -> float:
    """A uniform number in [0, 1) fixed by (``seed``, ``hand``, ``index``, ``stream``):
    each random choice of a player is keyed by the match seed, the hand number and the
    action's place in the hand, so a match replays exactly and a choice, once made, is
    the same whenever the hand is looked at again."""
    z = _splitmix(seed & _MASK)
    for part in (hand, index, stream):
        z = _splitmix((z ^ (part & _MASK)) & _MASK)
    return (z >> 11) * (1.0 / (1 << 53))
