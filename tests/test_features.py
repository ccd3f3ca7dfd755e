"""Hand-strength features (abstraction.features) against slow, independent twins.

* River E[HS] by the per-board sort-and-sweep equals a pairwise loop over every opponent
  hand: all canonical river hands of a short deck, and random full-deck hands.
* Turn / flop / preflop histograms and E[HS], E[HS^2] built by lookups (the tower) equal a
  direct enumeration of every run-out (its own river E[HS] by the pairwise loop).
* Known values: preflop all-in equity against a random hand (mean river E[HS] over the
  run-outs) of AA is about 0.852 and of 72o about 0.346.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np
import pytest
from numba import njit

from abstraction import features as F
from poker.cards import parse_cards
from poker.evaluator import rank_cards
from poker.game import load_game

SHORT24 = "holdem.nolimit.2p.short24"
SHORT20 = "holdem.nolimit.2p.short20"
LEDUC = "leduc.limit.2p"
FULL = "holdem.nolimit.2p.reverse_blinds"


@njit(cache=True)
def _pairwise_ehs(hands, deck, hole):  # pragma: no cover - compiled
    """Twin: 2 * wins + ties of each hand (hole cards first) against every opponent hand."""
    n = hands.shape[1]
    out = np.empty(hands.shape[0], np.int64)
    opp = np.empty(n, np.uint8)
    for i in range(hands.shape[0]):
        hand = hands[i]
        ours = rank_cards(hand, n)
        for j in range(hole, n):
            opp[j] = hand[j]
        rest = []
        for c in deck:
            free = True
            for j in range(n):
                if hand[j] == c:
                    free = False
            if free:
                rest.append(c)
        v = 0
        for a in range(len(rest)):
            opp[0] = rest[a]
            if hole == 1:
                r = rank_cards(opp, n)
                v += 2 * (ours > r) + (ours == r)
                continue
            for b in range(a + 1, len(rest)):
                opp[1] = rest[b]
                r = rank_cards(opp, n)
                v += 2 * (ours > r) + (ours == r)
        out[i] = v
    return out


def _space(name: str) -> F.CardSpace:
    return F.CardSpace.from_game(load_game(name))


@pytest.fixture(scope="module")
def short24() -> tuple[F.CardSpace, F.RiverTable]:
    sp = _space(SHORT24)
    return sp, F.river_table(sp)


def test_card_space_counts() -> None:
    sp = _space(FULL)
    assert [sp.count(s) for s in range(4)] == [169, 1_286_792, 13_960_050, 123_156_254]
    assert sp.opponents == 990 and sp.scale == 1980
    assert [sp.runouts(s) for s in range(4)] == [19600 * 47 * 46, 47 * 46, 46, 1]
    assert sp.split_grouping(3) == [2, 3, 1, 1]
    assert F.canonical_boards(sp, 3).shape == (134_459, 5)


@pytest.mark.parametrize("name", [SHORT24, SHORT20, LEDUC])
def test_river_sweep_equals_pairwise_on_every_canonical_hand(name: str) -> None:
    sp = _space(name)
    rt = F.river_table(sp)
    ix = sp.indexer(sp.last)
    hands = ix.unindex_batch(np.arange(ix.count()), ix.num_rounds - 1)
    np.testing.assert_array_equal(rt.values, _pairwise_ehs(hands, sp.deck, sp.hole))
    # weights: every real deal counted once
    b = sp.board_through[-1]
    total = comb(sp.deck_size, sp.hole) * comb(sp.deck_size - sp.hole, b)
    assert int(rt.weights.sum(dtype=np.int64)) == total and rt.weights.min() >= 1


def test_river_sweep_equals_pairwise_on_random_full_deck_hands() -> None:
    sp = _space(FULL)
    rng = np.random.default_rng(7)
    hands = np.array([rng.choice(52, size=7, replace=False) for _ in range(300)], np.uint8)
    boards = np.sort(hands[:, 2:], axis=1)
    swept = F.board_ehs(sp, boards)
    got = []
    for i in range(hands.shape[0]):
        combos = F.hole_combinations(sp, boards[i])
        q = np.flatnonzero((combos == np.sort(hands[i, :2])).all(axis=1))[0]
        got.append(swept[i, q])
    np.testing.assert_array_equal(got, _pairwise_ehs(hands, sp.deck, 2))


def _direct_twin(sp: F.CardSpace, hand: np.ndarray, street: int, bins: int) -> tuple[np.ndarray, int, int]:
    """Histogram, sum v and sum v^2 over every unordered run-out, by enumeration."""
    used = set(hand.tolist())
    rest = [int(c) for c in sp.deck if int(c) not in used]
    add = sp.board_through[-1] - sp.board_through[street]
    runouts = [np.concatenate([hand, np.array(r, np.uint8)]) for r in combinations(rest, add)]
    v = _pairwise_ehs(np.array(runouts, np.uint8), sp.deck, sp.hole)
    hist = np.bincount(v * bins // (sp.scale + 1), minlength=bins)
    return hist, int(v.sum()), int((v * v).sum())


@pytest.mark.parametrize("name,sample", [(SHORT24, 400), (SHORT20, 10_000), (LEDUC, 100)])
def test_tower_histograms_equal_direct_enumeration(name: str, sample: int) -> None:
    sp = _space(name)
    bins = 16
    nxt: F.RiverTable | F.StreetFeatures = F.river_table(sp)
    rng = np.random.default_rng(1)
    for s in range(sp.last - 1, -1, -1):
        tower = F.tower_features(sp, s, nxt, bins)
        nxt = tower
        ix = sp.indexer(s)
        idx = np.sort(rng.choice(ix.count(), size=min(sample, ix.count()), replace=False))
        hands = ix.unindex_batch(idx, ix.num_rounds - 1)
        # the tower counts each unordered run-out once per split into later streets
        runouts = comb(sp.deck_size - sp.hole - sp.board_through[s], sp.board_through[-1] - sp.board_through[s])
        mult = sp.runouts(s) // runouts
        for j, i in enumerate(idx[: min(len(idx), 40)]):
            hist, s1, s2 = _direct_twin(sp, hands[j], s, bins)
            np.testing.assert_array_equal(tower.counts[i], hist * mult)
            assert (tower.s1[i], tower.s2[i]) == (s1 * mult, s2 * mult)
        # the on-the-fly path (library) gives bitwise-equal feature vectors on all sampled
        direct = F.direct_features(sp, hands, s, bins)
        for metric in (F.METRIC_CDF, F.METRIC_MOMENTS, F.METRIC_EHS):
            a = F.feature_vectors(tower.counts[idx], tower.s1[idx], tower.s2[idx], sp.scale, metric)
            b = F.feature_vectors(direct.counts, direct.s1, direct.s2, sp.scale, metric)
            np.testing.assert_array_equal(a, b)
        # weights: every real deal of the street counted once
        total = comb(sp.deck_size, sp.hole) * comb(sp.deck_size - sp.hole, sp.board_through[s])
        assert int(tower.weights.sum(dtype=np.int64)) == total


def test_moments_are_consistent(short24: tuple[F.CardSpace, F.RiverTable]) -> None:
    sp, rt = short24
    f = F.tower_features(sp, 2, rt, 32)
    m = F.feature_vectors(f.counts, f.s1, f.s2, sp.scale, F.METRIC_MOMENTS).astype(np.float64)
    assert (m[:, 1] >= m[:, 0] ** 2 - 1e-6).all()  # E[HS^2] >= E[HS]^2
    assert (m >= 0).all() and (m <= 1).all()
    cdf = F.feature_vectors(f.counts, f.s1, f.s2, sp.scale, F.METRIC_CDF)
    assert (np.diff(cdf, axis=1) >= 0).all() and cdf.shape[1] == 31


def _preflop_equity(hole: str, boards: int, seed: int) -> float:
    """Mean river E[HS] over random run-outs (= all-in equity against a random hand)."""
    sp = _space(FULL)
    h = np.array(parse_cards(hole), np.uint8)
    rng = np.random.default_rng(seed)
    rest = np.setdiff1d(np.arange(52), h)
    picks = np.argsort(rng.random((boards, rest.size)), axis=1)[:, :5]
    hands = np.concatenate([np.tile(h, (boards, 1)), rest[picks]], axis=1).astype(np.uint8)
    f = F.direct_features(sp, hands, 3, 8)
    return float(f.s1.mean() / sp.scale)


def test_known_preflop_equities() -> None:
    # 6,000 random boards each: standard error about 0.004; tolerance 0.015 (fixed seeds)
    aa = _preflop_equity("AcAd", 6000, 1)
    kk = _preflop_equity("KhKs", 6000, 2)
    seven_two = _preflop_equity("7c2d", 6000, 3)
    assert abs(aa - 0.852) < 0.015
    assert abs(seven_two - 0.346) < 0.015
    assert aa > kk > 0.8 > seven_two


def test_bad_spaces() -> None:
    with pytest.raises(ValueError, match="2 players"):
        F.CardSpace.from_game(load_game("holdem.nolimit.3p"))
    with pytest.raises(ValueError, match="hole cards"):
        F.CardSpace(num_ranks=13, num_suits=4, hole=3, board_through=(0, 3))
