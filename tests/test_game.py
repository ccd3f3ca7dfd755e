"""Game definitions: the reference dealer's lenient reader, clear errors, writing back."""

from pathlib import Path

import pytest

from poker.game import (
    INT32_MAX,
    Betting,
    Game,
    GameError,
    load_game,
    parse_game,
    read_game_file,
    shipped_games,
    write_game_file,
)

NL2 = """GAMEDEF
nolimit
numPlayers = 2
numRounds = 4
stack = 20000 20000
blind = 100 50
firstPlayer = 2 1 1 1
numSuits = 4
numRanks = 13
numHoleCards = 2
numBoardCards = 0 3 1 1
END GAMEDEF
"""


def test_reference_nolimit_game():
    g = load_game("holdem.nolimit.2p.reverse_blinds")
    assert g.betting is Betting.NOLIMIT
    assert g.stack == (20000, 20000) and g.blind == (100, 50)
    assert g.first_player == (1, 0, 0, 0)
    assert g.max_raises == (255,) * 4
    assert g.num_board_cards == (0, 3, 1, 1)
    assert g.big_blind == 100 and g.deck_size == 52 and g.cards_per_hand == 9


def test_reference_limit_games_default_to_unlimited_stacks():
    g = load_game("holdem.limit.3p.game")
    assert g.is_limit and g.stack == (INT32_MAX,) * 3
    assert g.raise_size == (10, 10, 20, 20) and g.max_raises == (3, 4, 4, 4)
    assert g.first_player == (2, 0, 0, 0)


def test_kuhn_and_leduc():
    k = load_game("kuhn.limit.3p")
    assert (k.num_ranks, k.num_suits, k.num_rounds, k.stack) == (4, 1, 1, (2, 2, 2))
    leduc = load_game("leduc.limit.2p")
    assert leduc.raise_size == (2, 4) and leduc.max_raises == (2, 2)
    assert leduc.num_board_cards == (0, 1) and leduc.deck_size == 6


@pytest.mark.parametrize("name", shipped_games())
def test_every_shipped_game_writes_back_equal(name, tmp_path):
    g = load_game(name)
    assert parse_game(g.to_text()) == g
    out = tmp_path / f"{name}.game"
    write_game_file(g, out)
    assert read_game_file(out) == g
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp file left


def test_shipped_names_include_the_required_games():
    names = set(shipped_games())
    for required in (
        "holdem.limit.2p.reverse_blinds",
        "holdem.nolimit.2p.reverse_blinds",
        "holdem.limit.3p",
        "holdem.nolimit.3p",
        "kuhn.limit.3p",
        "kuhn.limit.2p",
        "leduc.limit.2p",
        "leduc.nolimit.2p",
    ):
        assert required in names
    assert any(load_game(n).deck_size < 52 and not load_game(n).is_limit for n in names)


def test_load_by_path(tmp_path):
    p = tmp_path / "mine.game"
    p.write_text(NL2)
    g = load_game(str(p))
    assert g.name == "mine" and g.stack == (20000, 20000)


def test_unknown_game_names_the_choices():
    with pytest.raises(GameError, match="unknown game 'nope'.*leduc.limit.2p"):
        load_game("nope")


def test_leniency_case_prefix_equals_and_unknown_lines():
    text = (
        "# comment\n"
        "NoLimitBetting\n"
        "NUMPLAYERS=2\n"
        "numrounds 4\n"
        "stack = 20000 = 20000\n"
        "blind=100=50\n"
        "someUnknownKey = 7\n"
        "firstPlayer 2 1 1 1\n"
        "numSuits = 4\nnumRanks = 13\nnumHoleCards = 2\nnumBoardCards = 0 3 1 1 junk\n"
    )
    g = parse_game(text)  # no GAMEDEF line at all is fine
    assert g == parse_game(NL2)


def test_crlf_file_parses_like_lf():
    assert parse_game(NL2.replace("\n", "\r\n")) == parse_game(NL2)


def test_end_gamedef_stops_reading():
    moved = NL2.replace("numBoardCards = 0 3 1 1\nEND GAMEDEF\n", "END GAMEDEF\nnumBoardCards = 0 3 1 1\n")
    with pytest.raises(GameError, match="numBoardCards is missing"):
        parse_game(moved, source="moved.game")


def test_indented_key_is_lost_as_in_the_reference():
    text = NL2.replace("numRounds = 4", "  numRounds = 4")
    with pytest.raises(GameError, match="numRounds is missing"):
        parse_game(text)


def test_key_with_extra_letters_reads_no_value():
    # 'Stacks 20000 20000': reading starts after 'stack', at 's 2000...', so no value.
    text = NL2.replace("stack = 20000 20000", "Stacks 20000 20000")
    with pytest.raises(GameError, match=r"x.game:5: only 0 stack sizes, need 2"):
        parse_game(text, source="x.game")


@pytest.mark.parametrize(
    "old,new,message",
    [
        ("numPlayers = 2", "numPlayers = 11", r"f.game:3: numPlayers 11 is not in 2..10"),
        ("numPlayers = 2", "numPlayers = 1", "numPlayers 1"),
        ("numRounds = 4", "numRounds = 5", r"f.game:4: numRounds 5 is not in 1..4"),
        ("blind = 100 50", "blind = 100", r"f.game:6: only 1 blinds, need 2"),
        ("blind = 100 50", "blind = 30000 50", "blind is larger than its stack"),
        ("stack = 20000 20000", "stack = 0 20000", "stack sizes .* must all be positive"),
        ("firstPlayer = 2 1 1 1", "firstPlayer = 0 1 1 1", r"f.game:7: firstPlayer 0 in round 1"),
        ("firstPlayer = 2 1 1 1", "firstPlayer = 2 1", "firstPlayer has 2 values, need 4"),
        ("numSuits = 4", "numSuits = 5", "numSuits 5 is not in 1..4"),
        ("numRanks = 13", "numRanks = 0", "numRanks 0"),
        ("numHoleCards = 2", "numHoleCards = 4", "numHoleCards 4"),
        ("numBoardCards = 0 3 1 1", "numBoardCards = 0 3", "numBoardCards has 2 values, need 4"),
        ("numRanks = 13", "numRanks = 2", "9 cards do not fit a deck of 8"),
    ],
)
def test_bad_definitions_name_file_line_and_rule(old, new, message):
    assert old in NL2
    with pytest.raises(GameError, match=message) as info:
        parse_game(NL2.replace(old, new), source="f.game")
    assert str(info.value).startswith("f.game")


def test_limit_game_needs_raise_sizes():
    text = NL2.replace("nolimit", "limit")
    with pytest.raises(GameError, match="raiseSize is missing"):
        parse_game(text)


def test_five_players_need_a_stack_line():
    text = (
        "limit\nnumPlayers = 5\nnumRounds = 1\nblind = 1 1 1 1 1\nraiseSize = 1\n"
        "numSuits = 4\nnumRanks = 13\nnumHoleCards = 2\nnumBoardCards = 0\n"
    )
    with pytest.raises(GameError, match="needs a stack line"):
        parse_game(text)
    g = parse_game(text.replace("limit\n", "limit\nstack = 9 9 9 9 9\n"))
    assert g.stack == (9,) * 5 and parse_game(g.to_text()) == g


def test_ten_players_round_trip():
    text = (
        "nolimit\nnumPlayers = 10\nnumRounds = 4\nstack = " + " ".join(["200"] * 10) + "\n"
        "blind = 1 2 0 0 0 0 0 0 0 0\nfirstPlayer = 3 1 1 1\n"
        "numSuits = 4\nnumRanks = 13\nnumHoleCards = 2\nnumBoardCards = 0 3 1 1\n"
    )
    g = parse_game(text)
    assert g.num_players == 10 and parse_game(g.to_text()) == g


def test_game_object_validates_on_construction():
    g = load_game("leduc.limit.2p")
    fields = {k: getattr(g, k) for k in Game.__dataclass_fields__}
    fields["num_hole_cards"] = 4
    with pytest.raises(GameError, match="numHoleCards 4"):
        Game(**fields)


def test_unreadable_file_is_one_clear_error(tmp_path):
    with pytest.raises(GameError, match="unknown game"):
        load_game(str(tmp_path / "missing.game"))
    d = tmp_path / "dir.game"
    d.mkdir()
    with pytest.raises(GameError, match="cannot read game file"):
        read_game_file(d)


def test_shipped_files_are_packaged():
    import poker

    root = Path(poker.__file__).parent / "games"
    assert len(list(root.glob("*.game"))) == len(shipped_games()) >= 10
