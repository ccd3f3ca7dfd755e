"""The reference ACPC dealer's random number generator and its way of dealing cards.

The dealer (SPEC §9) uses the standard 32-bit Mersenne Twister, MT19937, seeded **once
per match** with ``init_genrand(seed)`` (not the ``init_by_array`` seeding of Python's
``random.seed``). Every hand draws all of its cards at the start:

1. build the deck suit-major (:func:`poker.cards.deck_cards`), ``n`` = its size;
2. draw ``numHoleCards`` cards for position 0, then position 1, ..., position N-1;
3. draw every board card, round by round, in the order they are shown;
4. each draw: ``k = genrand_int32() mod n``; the card is ``deck[k]``; then
   ``deck[k] = deck[n-1]`` and ``n -= 1``.

So the cards of hand ``h`` depend only on (seed, h) and never on the betting.

Python's :class:`random.Random` runs the same MT19937 core, so :class:`MT19937` only
replaces the seeding (SPEC §9.4) and then lets ``getrandbits(32)`` produce
``genrand_int32()`` at C speed.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from .cards import deck_cards
from .game import Game
from .state import Deal

_N = 624
_MASK32 = 0xFFFFFFFF


def init_genrand_state(seed: int) -> tuple[int, ...]:
    """The 624-word MT19937 state that ``init_genrand(seed)`` produces (seed taken mod 2**32)."""
    mt = [seed & _MASK32]
    for i in range(1, _N):
        prev = mt[-1]
        mt.append((1812433253 * (prev ^ (prev >> 30)) + i) & _MASK32)
    return tuple(mt)


class MT19937:
    """MT19937 seeded with ``init_genrand(seed)``, as the reference dealer seeds it.

    >>> MT19937(5489).genrand_int32()
    3499211612
    >>> r = MT19937(42); [r.genrand_int32() for _ in range(3)]
    [1608637542, 3421126067, 4083286876]
    """

    __slots__ = ("_random", "seed")

    def __init__(self, seed: int) -> None:
        if not 0 <= seed <= _MASK32:
            raise ValueError(f"seed {seed} is not a uint32 (0..{_MASK32})")
        self.seed = seed
        self._random = random.Random()
        # Python's state tuple is (version, 624 words + position, gauss_next); position 624
        # means "regenerate before the next output", exactly as after init_genrand.
        self._random.setstate((3, init_genrand_state(seed) + (_N,), None))

    def genrand_int32(self) -> int:
        """The next 32-bit output, identical to the C ``genrand_int32()``."""
        return self._random.getrandbits(32)

    def skip(self, count: int) -> None:
        """Throw away the next ``count`` outputs."""
        getrandbits = self._random.getrandbits
        for _ in range(count):
            getrandbits(32)


def deal_hand(rng: MT19937, game: Game) -> Deal:
    """Draw one hand's cards from ``rng`` exactly as the reference dealer does (SPEC §9.3).

    Hole cards are by **position**; every board card is drawn, shown or not. Call once
    per hand, in hand order, on one generator seeded once per match.
    """
    deck = _deck(game.num_ranks, game.num_suits)
    n = len(deck)
    getrandbits = rng._random.getrandbits
    drawn = []
    for _ in range(game.cards_per_hand):
        k = getrandbits(32) % n
        drawn.append(deck[k])
        n -= 1
        deck[k] = deck[n]
    h = game.num_hole_cards
    holes = tuple(tuple(drawn[p * h : (p + 1) * h]) for p in range(game.num_players))
    pos = game.num_players * h
    boards = []
    for count in game.num_board_cards:
        boards.append(tuple(drawn[pos : pos + count]))
        pos += count
    # Distinct cards of the game's deck by construction, so the checks can be skipped.
    return Deal._trusted(holes, tuple(boards))


_DECKS: dict[tuple[int, int], tuple[int, ...]] = {}


def _deck(num_ranks: int, num_suits: int) -> list[int]:
    """A fresh copy of the game's deck in dealing order (the order is cached)."""
    key = (num_ranks, num_suits)
    deck = _DECKS.get(key)
    if deck is None:
        deck = _DECKS[key] = tuple(deck_cards(num_ranks, num_suits))
    return list(deck)


class Dealer:
    """The cards of a whole match: hand ``h`` gets the ``h``-th deal of the seed's stream.

    >>> from poker.game import load_game
    >>> d = Dealer(load_game("kuhn.limit.3p"), 42)
    >>> d.next_deal().holes
    ((47,), (51,), (39,))
    """

    __slots__ = ("_rng", "game", "hand_number", "seed")

    def __init__(self, game: Game, seed: int) -> None:
        self.game = game
        self.seed = seed
        self._rng = MT19937(seed)
        self.hand_number = 0  # the number of the hand the next call deals

    def next_deal(self) -> Deal:
        """Deal the next hand (hand ``self.hand_number``) and advance."""
        deal = deal_hand(self._rng, self.game)
        self.hand_number += 1
        return deal

    def deal_for_hand(self, hand: int) -> Deal:
        """Deal hand number ``hand`` (>= the next hand number), skipping the hands before it.

        Each hand uses a fixed number of draws, so skipping is just drawing and discarding.
        """
        if hand < self.hand_number:
            raise ValueError(f"hand {hand} was already dealt (next hand is {self.hand_number})")
        self._rng.skip((hand - self.hand_number) * self.game.cards_per_hand)
        self.hand_number = hand
        return self.next_deal()

    def __iter__(self) -> Iterator[Deal]:
        while True:
            yield self.next_deal()


def deal_hands(game: Game, seed: int, count: int, start: int = 0) -> list[Deal]:
    """Deals of hands ``start .. start+count-1`` of a match played with ``seed``."""
    dealer = Dealer(game, seed)
    if count <= 0:
        return []
    first = dealer.deal_for_hand(start)
    return [first] + [dealer.next_deal() for _ in range(count - 1)]
