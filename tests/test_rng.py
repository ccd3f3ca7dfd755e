"""The reference dealer's MT19937 and dealing (SPEC §9): sanity values and test vectors."""


import pytest

from poker.cards import format_cards
from poker.game import load_game, shipped_games
from poker.rng import MT19937, Dealer, deal_hand, deal_hands, init_genrand_state


class SlowMT19937:
    """SPEC §9.2's pseudo-code, word for word: the slow twin of :class:`MT19937`."""

    def __init__(self, seed):
        self.mt = list(init_genrand_state(seed))
        self.mti = 624

    def genrand_int32(self):
        mt = self.mt
        if self.mti >= 624:
            for k in range(624):
                y = (mt[k] & 0x80000000) | (mt[(k + 1) % 624] & 0x7FFFFFFF)
                mt[k] = mt[(k + 397) % 624] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
            self.mti = 0
        y = mt[self.mti]
        self.mti += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        y ^= y >> 18
        return y


def test_sanity_values():
    assert MT19937(5489).genrand_int32() == 3499211612
    r = MT19937(42)
    assert [r.genrand_int32() for _ in range(9)] == [
        1608637542,
        3421126067,
        4083286876,
        787846414,
        3143890026,
        3348747335,
        2571218620,
        2563451924,
        670094950,
    ]


@pytest.mark.parametrize("seed", [0, 1, 42, 5489, 2**32 - 1])
def test_matches_slow_twin_across_regenerations(seed):
    fast, slow = MT19937(seed), SlowMT19937(seed)
    assert [fast.genrand_int32() for _ in range(1500)] == [
        slow.genrand_int32() for _ in range(1500)
    ]


def test_seed_out_of_range():
    with pytest.raises(ValueError, match="uint32"):
        MT19937(2**32)
    with pytest.raises(ValueError, match="uint32"):
        MT19937(-1)


def test_worked_first_hand_draws():
    # SPEC §9.5: the k values of the first hold'em hand with seed 42.
    r = MT19937(42)
    ks = [r.genrand_int32() % n for n in range(52, 43, -1)]
    assert ks == [18, 14, 26, 12, 42, 14, 44, 14, 30]


def _fields(deal):
    return [format_cards(h) for h in deal.holes] + [format_cards(b) for b in deal.boards]


@pytest.mark.parametrize(
    "game", ["holdem.nolimit.2p.reverse_blinds", "holdem.limit.2p.reverse_blinds"]
)
def test_vectors_2p_holdem(game):
    deals = deal_hands(load_game(game), 42, 5)
    assert [_fields(d) for d in deals] == [
        ["7d3d", "2hAc", "", "5sKs7s", "9s", "6h"],
        ["9h6s", "3d3h", "", "5s3s8h", "9d", "5c"],
        ["4d6c", "QsJh", "", "3c9sJc", "2d", "Ts"],
        ["Ad3s", "8d5d", "", "2cAs8s", "Tc", "Qh"],
        ["2sQd", "8h4d", "", "2h9s7c", "As", "Kc"],
    ]


def test_vector_nl_3p():
    (deal,) = deal_hands(load_game("holdem.nolimit.3p"), 42, 1)
    assert _fields(deal) == ["7d3d", "2hAc", "5sKs", "", "7s9s6h", "4h", "Ts"]
    assert str(deal) == "7d3d|2hAc|5sKs/7s9s6h/4h/Ts"


def test_vectors_kuhn_3p():
    deals = deal_hands(load_game("kuhn.limit.3p"), 42, 4)
    assert [" ".join(_fields(d)[:3]) for d in deals] == [
        "Ks As Js",
        "Ks Js Qs",
        "Js Ks As",
        "Qs As Js",
    ]


@pytest.mark.parametrize("name", shipped_games())
def test_deals_fit_their_game(name):
    game = load_game(name)
    for deal in deal_hands(game, 7, 200):
        deal.check_fits(game)  # right shape, distinct cards of the game's deck
        cards = [c for h in deal.holes for c in h] + [c for b in deal.boards for c in b]
        assert len(set(cards)) == game.cards_per_hand


def test_dealer_skips_and_streams():
    game = load_game("holdem.nolimit.3p")
    all_ten = deal_hands(game, 43, 10)
    assert deal_hands(game, 43, 4, start=6) == all_ten[6:]
    d = Dealer(game, 43)
    assert d.deal_for_hand(3) == all_ten[3]
    assert d.hand_number == 4
    assert d.next_deal() == all_ten[4]
    with pytest.raises(ValueError, match="already dealt"):
        d.deal_for_hand(2)
    it = iter(Dealer(game, 43))
    assert [next(it) for _ in range(3)] == all_ten[:3]
    # deal_hand on a bare generator is the same stream.
    r = MT19937(43)
    assert [deal_hand(r, game) for _ in range(2)] == all_ten[:2]


def test_many_deals_are_distinct_and_use_the_deck():
    # (how fast dealing is shows in bench/match_throughput.py: the dealer deals every hand)
    game = load_game("holdem.nolimit.2p.reverse_blinds")
    deals = deal_hands(game, 1, 20000)
    assert len({(d.holes, d.boards) for d in deals}) == 20000
    for d in deals[:2000]:
        cards = [c for h in d.holes for c in h] + [c for b in d.boards for c in b]
        assert len(set(cards)) == len(cards) == 9
