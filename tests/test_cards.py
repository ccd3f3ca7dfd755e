"""Cards: ACPC encoding, text forms, reduced decks in the reference dealer's order."""

import pytest

from poker.cards import (
    CardError,
    card_from_str,
    card_to_str,
    cards_to_array,
    deck_cards,
    format_cards,
    make_card,
    parse_cards,
    rank_of,
    suit_of,
)


def test_encoding_matches_acpc():
    assert card_from_str("2c") == 0
    assert card_from_str("2d") == 1
    assert card_from_str("As") == 51
    assert card_from_str("Td") == 8 * 4 + 1
    assert make_card(12, 3) == 51
    assert rank_of(51) == 12 and suit_of(51) == 3


def test_text_round_trip_every_card():
    for c in range(52):
        assert card_from_str(card_to_str(c)) == c
    assert format_cards(parse_cards("7d3d2hAc")) == "7d3d2hAc"


def test_input_accepts_either_case_output_is_canonical():
    assert card_from_str("aS") == card_from_str("As")
    assert card_to_str(card_from_str("tD")) == "Td"


@pytest.mark.parametrize("bad", ["", "A", "Ax", "1s", "Asd", "10s"])
def test_bad_card_text_is_a_clear_error(bad):
    with pytest.raises(CardError, match="card"):
        card_from_str(bad)


def test_odd_length_run_is_rejected():
    with pytest.raises(CardError, match="odd"):
        parse_cards("AsK")


def test_full_deck_is_suit_major():
    deck = deck_cards()
    assert len(deck) == 52 and sorted(deck) == list(range(52))
    assert format_cards(deck[:13]) == "2c3c4c5c6c7c8c9cTcJcQcKcAc"
    assert format_cards(deck[13:15]) == "2d3d"


def test_reduced_decks_use_highest_ranks_and_last_suits():
    # Kuhn as the reference dealer deals it (SPEC 9.1).
    assert format_cards(deck_cards(4, 1)) == "JsQsKsAs"
    assert format_cards(deck_cards(3, 2)) == "QhKhAhQsKsAs"
    with pytest.raises(CardError):
        deck_cards(14, 4)


def test_cards_to_array_checks_range_and_repeats():
    assert cards_to_array([0, 51]).tolist() == [0, 51]
    with pytest.raises(CardError, match="repeat"):
        cards_to_array([3, 3])
    with pytest.raises(CardError, match="0..51"):
        cards_to_array([52])
