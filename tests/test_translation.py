"""Action translation (abstraction.translation): the mappings, sizes back to raise-to,
and the keyed random numbers."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from abstraction.betting import ALL_IN, parse_betting, size_to_raise_to
from abstraction.translation import (
    CALL,
    MAPPINGS,
    bet_fraction,
    map_bet,
    mapping_probability,
    real_raise_to,
    uniform,
)


def test_pseudo_harmonic_formula_and_axioms():
    a, b = 0.5, 1.0
    # Ganzfried & Sandholm 2013, Eq. 1, by hand at x = 0.75: (0.25 * 1.5) / (0.5 * 1.75)
    assert mapping_probability(0.75, a, b) == pytest.approx(0.375 / 0.875)
    # boundary conditions and monotonicity (their axioms 1 and 3)
    assert mapping_probability(a, a, b) == 1.0 and mapping_probability(b, a, b) == 0.0
    xs = [a + (b - a) * i / 50 for i in range(51)]
    ps = [mapping_probability(x, a, b) for x in xs]
    assert all(p >= q for p, q in zip(ps, ps[1:]))
    # scale invariance: the same bets in other units map the same (sizes are pot fractions)
    assert mapping_probability(0.8, 0.5, 2.0) == pytest.approx((2.0 - 0.8) * 1.5 / (1.5 * 1.8))


def test_pseudo_harmonic_is_indifferent_at_the_harmonic_point():
    # f(x) = 1/2 exactly at x* = (A + B + 2AB) / (A + B + 2): the bet that makes the
    # responder indifferent (the paper's derivation).
    for a, b in [(0.5, 1.0), (1.0, 2.0), (0.25, 4.0), (0.0, 1.0)]:
        x = (a + b + 2 * a * b) / (a + b + 2)
        assert mapping_probability(x, a, b) == pytest.approx(0.5)


def test_baseline_mappings():
    assert mapping_probability(0.7, 0.5, 1.0, "nearest") == 1.0  # 0.49 <= 0.5
    assert mapping_probability(0.71, 0.5, 1.0, "nearest") == 0.0  # 0.5041 > 0.5
    g = mapping_probability(0.7, 0.5, 1.0, "geometric")
    assert g == pytest.approx(0.5 * 0.3 / (0.5 * 0.3 + 0.7 * 0.2))
    with pytest.raises(ValueError, match="mapping"):
        mapping_probability(0.7, 0.5, 1.0, "median")
    with pytest.raises(ValueError, match="between"):
        mapping_probability(1.5, 0.5, 1.0)


def test_map_bet_regions():
    sizes = [0.5, 1.0, 2.0]
    assert map_bet(0.5, sizes) == [(0, 1.0)]  # on the tree
    assert map_bet(5.0, sizes) == [(2, 1.0)]  # above the largest: the largest
    below = map_bet(0.2, sizes)  # below the smallest: between the call and 0.5
    assert [i for i, _ in below] == [CALL, 0]
    assert below[0][1] == pytest.approx(mapping_probability(0.2, 0.0, 0.5))
    assert map_bet(0.0, sizes) == [(CALL, 1.0)]
    assert map_bet(0.3, []) == [(CALL, 1.0)]  # no raise in the tree (a cap): the call
    mid = map_bet(1.5, sizes)
    assert [i for i, _ in mid] == [1, 2] and sum(p for _, p in mid) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="ascending"):
        map_bet(1.0, [1.0, 0.5])


@given(
    x=st.floats(0.0, 50.0, allow_nan=False),
    sizes=st.lists(st.floats(0.01, 20.0, allow_nan=False), min_size=1, max_size=6, unique=True),
    mapping=st.sampled_from(MAPPINGS),
)
def test_map_bet_is_a_distribution_over_the_neighbours(x, sizes, mapping):
    sizes = sorted(sizes)
    if any(b - a < 1e-9 for a, b in zip(sizes, sizes[1:])):
        return
    out = map_bet(x, sizes, mapping)
    assert math.isclose(sum(p for _, p in out), 1.0, rel_tol=1e-12)
    assert all(p > 0 for _, p in out) and 1 <= len(out) <= 2
    points = [0.0 if i == CALL else sizes[i] for i, _ in out]
    lower = max([0.0] + [s for s in sizes if s <= x])
    upper = min([s for s in sizes if s > x], default=sizes[-1])
    assert set(points) <= {lower, upper}  # only the two neighbours of x
    if x >= sizes[-1]:
        assert points == [sizes[-1]]
    elif mapping == "pseudo_harmonic" and len(out) == 1:  # one outcome only on a size
        assert math.isclose(points[0], x, abs_tol=1e-9)


def test_real_raise_to_uses_the_real_pot_and_is_a_total():
    # Facing a bet to 300 with 100 in, pot after calling 600: a pot raise is to 900 (a
    # raise-to total), whatever the abstract pot was.
    assert real_raise_to(1.0, (300, 100), 1, 500, 20000) == 900
    assert real_raise_to(0.5, (300, 100), 1, 500, 20000) == 600
    assert real_raise_to(0.1, (300, 100), 1, 500, 20000) == 500  # clamped up to the minimum
    assert real_raise_to(50.0, (300, 100), 1, 500, 20000) == 20000  # down to the stack
    assert real_raise_to(ALL_IN, (300, 100), 1, 500, 20000) == 20000
    assert real_raise_to(math.nan, (4, 2), 1, 6, 6) == 6  # limit: the one raise
    assert real_raise_to(0.95, (300, 100), 1, 500, 1000, snap=0.15) == 1000  # 870 >= 850


def test_the_tree_and_the_real_game_size_the_same_way():
    a = parse_betting("0.5p,1p,a|snap=0.1")
    for spent, actor, lo, hi in [((2, 1), 1, 4, 200), ((6, 2), 1, 10, 200), ((40, 40), 0, 42, 200)]:
        for to, size in a.raise_items(0, 0, spent, actor, lo, hi):
            assert real_raise_to(size, spent, actor, lo, hi, a.snap) == to
            assert size_to_raise_to(size, spent, actor, lo, hi, a.snap) == to


def test_bet_fraction():
    assert bet_fraction(6, (2, 1), 1) == 1.0
    assert bet_fraction(2, (2, 1), 1) == 0.0
    assert bet_fraction(900, (300, 100), 1) == 1.0


def test_uniform_is_keyed_and_uniform():
    assert uniform(7, 3, 2) == uniform(7, 3, 2)
    assert len({uniform(7, 3, k) for k in range(100)}) == 100
    assert uniform(7, 3, 2, 1) != uniform(7, 3, 2, 0)
    xs = [uniform(1, h, 0) for h in range(20000)]
    assert all(0.0 <= x < 1.0 for x in xs)
    assert abs(sum(xs) / len(xs) - 0.5) < 0.01
    assert abs(sum(x < 0.1 for x in xs) / len(xs) - 0.1) < 0.01
