"""Cards in ACPC's encoding.

A card is the integer ``rank * 4 + suit`` with ranks ``23456789TJQKA`` (0..12) and
suits ``cdhs`` (0..3). Its text form is the rank character followed by the suit
character, e.g. ``As`` or ``Td``.

A reduced deck (Kuhn, Leduc, short decks) uses the *highest* ``num_ranks`` ranks and
the *last* ``num_suits`` suits, as the reference ACPC dealer does: Kuhn with four
ranks and one suit is ``Js Qs Ks As``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

RANKS = "23456789TJQKA"
SUITS = "cdhs"
NUM_RANKS = 13
NUM_SUITS = 4
DECK_SIZE = 52


class CardError(ValueError):
    """A card's text or integer is not a card."""


def make_card(rank: int, suit: int) -> int:
    """Return the card with ``rank`` (0 = deuce .. 12 = ace) and ``suit`` (0 = c .. 3 = s)."""
    if not 0 <= rank < NUM_RANKS or not 0 <= suit < NUM_SUITS:
        raise CardError(f"rank {rank} / suit {suit} out of range 0..12 / 0..3")
    return rank * 4 + suit


def rank_of(card: int) -> int:
    """Rank of ``card``: 0 (deuce) .. 12 (ace)."""
    return card >> 2


def suit_of(card: int) -> int:
    """Suit of ``card``: 0 (c), 1 (d), 2 (h), 3 (s)."""
    return card & 3


def card_from_str(text: str) -> int:
    """Parse one card such as ``As`` or ``td`` (either case, as the dealer accepts)."""
    if len(text) != 2:
        raise CardError(f"card {text!r} is not two characters (rank then suit)")
    r = RANKS.find(text[0].upper())
    s = SUITS.find(text[1].lower())
    if r < 0 or s < 0:
        raise CardError(f"card {text!r}: rank must be one of {RANKS}, suit one of {SUITS}")
    return r * 4 + s


def card_to_str(card: int) -> str:
    """Text form of ``card``, rank upper case and suit lower case (``As``)."""
    if not 0 <= int(card) < DECK_SIZE:
        raise CardError(f"card {card} is outside 0..51")
    return RANKS[int(card) >> 2] + SUITS[int(card) & 3]


def parse_cards(text: str) -> list[int]:
    """Parse a run of cards written together, e.g. ``AsKd7h`` -> ``[51, 45, 22]``."""
    if len(text) % 2:
        raise CardError(f"cards {text!r} have an odd number of characters")
    return [card_from_str(text[i : i + 2]) for i in range(0, len(text), 2)]


_CARD_TEXT = tuple(RANKS[c >> 2] + SUITS[c & 3] for c in range(DECK_SIZE))


def format_cards(cards: Iterable[int]) -> str:
    """Write cards together, as ACPC does: ``[51, 45]`` -> ``AsKd``."""
    # A table lookup for plain ints (the dealer formats every hand's cards); anything else
    # (numpy integers, bad values) goes through card_to_str's conversion and checks.
    return "".join([
        _CARD_TEXT[c] if type(c) is int and 0 <= c < DECK_SIZE else card_to_str(c) for c in cards
    ])


def deck_cards(num_ranks: int = NUM_RANKS, num_suits: int = NUM_SUITS) -> list[int]:
    """The cards of a (possibly reduced) deck in the reference dealer's order.

    The order is suit-major: for each used suit, each used rank from low to high. This is
    the order the dealer's draws index into (SPEC §9.3).
    """
    if not 1 <= num_ranks <= NUM_RANKS or not 1 <= num_suits <= NUM_SUITS:
        raise CardError(f"deck of {num_ranks} ranks x {num_suits} suits is not possible")
    return [
        r * 4 + s
        for s in range(NUM_SUITS - num_suits, NUM_SUITS)
        for r in range(NUM_RANKS - num_ranks, NUM_RANKS)
    ]


def cards_to_array(cards: Sequence[int]) -> np.ndarray:
    """Cards as a ``uint8`` array, checked to be distinct cards of the full deck."""
    arr = np.asarray(cards, dtype=np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= DECK_SIZE):
        raise CardError(f"cards {list(cards)} are not all in 0..51")
    if len(set(arr.tolist())) != arr.size:
        raise CardError(f"cards {format_cards(arr.tolist())} repeat a card")
    return arr.astype(np.uint8)
