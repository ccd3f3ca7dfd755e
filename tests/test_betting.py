"""``poker.betting.read_betting``: one reader of ACPC betting strings, three strictness modes.

* Every betting of every recorded reference log reads to the same state in all three
  modes, and read incrementally (a prefix, then the rest) as read whole.
* Each mode accepts what it must and refuses what it must: ``CANONICAL`` only what
  ``State.betting_string`` writes, ``DEALER`` the reference dealer's letters with '/'
  exactly at round ends, ``LENIENT`` the reference dealer's C reading ('/' anywhere,
  ``sscanf("%d")`` amounts wrapped to 32 bits).
* Errors are ``BettingSyntaxError`` for unreadable text and ``IllegalActionError`` for
  an action the rules refuse, in every mode.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from poker.betting import (
    Action,
    BettingSyntax,
    BettingSyntaxError,
    IllegalActionError,
    read_betting,
    scan_c_int,
    scan_c_unsigned,
)
from poker.game import load_game
from poker.log import parse_log
from poker.state import State

LOGS = sorted((Path(__file__).parent / "data" / "acpc" / "logs").glob("*.log"))
NL2 = load_game("holdem.nolimit.2p.reverse_blinds")
L2 = load_game("holdem.limit.2p.reverse_blinds")
NL3 = load_game("holdem.nolimit.3p")
CANONICAL, DEALER, LENIENT = BettingSyntax.CANONICAL, BettingSyntax.DEALER, BettingSyntax.LENIENT


def _read(game, text: str, syntax: BettingSyntax, start: int = 0, state: State | None = None) -> State:
    return read_betting(state or State.new_hand(game), text, start, syntax=syntax)


def _game_of(log: Path):
    return load_game(re.search(r"games/(\S+)\.game", log.read_text().split("\n", 1)[0]).group(1))


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_recorded_bettings_read_alike_in_every_mode_whole_and_in_pieces(log: Path) -> None:
    game = _game_of(log)
    hands = parse_log(log.read_text()).hands
    assert hands
    for hand in hands:
        betting = hand.betting
        whole = _read(game, betting, CANONICAL)
        assert whole.betting_string() == betting
        assert _read(game, betting, DEALER) == whole
        assert _read(game, betting, LENIENT) == whole
        assert _read(game, betting.upper().replace("C", "k"), DEALER) == whole  # other letters
        for cut in range(len(betting) + 1):
            if betting[cut : cut + 1].isdigit():
                continue  # inside a raise: not an action boundary
            prefix = _read(game, betting[:cut], LENIENT)  # (a prefix may end mid-round)
            for syntax in (CANONICAL, DEALER):
                if prefix.round != betting[:cut].count("/"):
                    continue  # a strict prefix must end where its rounds do
                assert _read(game, betting, syntax, cut, prefix) == whole


@pytest.mark.parametrize(
    "text,syntax,betting",
    [
        ("r300c/cr600f", CANONICAL, "r300c/cr600f"),
        ("R300k/Kb600F", DEALER, "r300c/cr600f"),
        ("r0300c/", DEALER, "r300c/"),  # leading zeros: decimal all the same
        ("r300c/", LENIENT, "r300c/"),
        ("r300/c", LENIENT, "r300c/"),  # '/' anywhere
        ("r300c", LENIENT, "r300c/"),  # or nowhere
        ("Cb 200K", LENIENT, "cr200c/"),  # C %d: blanks before the number
        ("r+0200", LENIENT, "r200"),  # and a sign
        ("r4294967496", LENIENT, "r200"),  # 2**32 + 200: %d wraps to 32 bits
    ],
)
def test_what_each_mode_accepts(text: str, syntax: BettingSyntax, betting: str) -> None:
    assert _read(NL2, text, syntax).betting_string() == betting


@pytest.mark.parametrize(
    "text,syntaxes,pattern",
    [
        ("cC", (CANONICAL,), "unexpected character 'C' at offset 1"),
        ("cx", (CANONICAL, DEALER, LENIENT), "unexpected character 'x' at offset 1"),
        ("c:", (CANONICAL, DEALER, LENIENT), "unexpected character ':'"),
        ("r0300", (CANONICAL,), "not written canonically: raise amount '0300'"),
        ("r", (CANONICAL, DEALER, LENIENT), "no-limit raise at offset 0 has no raise-to amount"),
        ("r 300", (CANONICAL, DEALER), "no-limit raise at offset 0 has no raise-to amount"),
        ("r12345678901", (CANONICAL, DEALER), "is too long"),
        ("c/c", (CANONICAL, DEALER), "'/' at offset 1 but round 0 has not ended"),
        ("cc//", (CANONICAL, DEALER), "'/' at offset 3 but round 1 has not ended"),
        ("ccc", (CANONICAL, DEALER), "action at offset 2 follows 0 '/' but the hand is in round 1"),
        ("cc", (CANONICAL, DEALER), "not written canonically: these actions give 'cc/'"),
        ("r20000c", (CANONICAL, DEALER), "these actions give 'r20000c///'"),
    ],
)
def test_unreadable_text_is_a_syntax_error(text: str, syntaxes: tuple[BettingSyntax, ...], pattern: str) -> None:
    for syntax in syntaxes:
        with pytest.raises(BettingSyntaxError, match=pattern):
            _read(NL2, text, syntax)


def test_a_limit_raise_carries_no_amount_in_any_mode() -> None:
    for syntax in (CANONICAL, DEALER, LENIENT):
        assert _read(L2, "rrc/", syntax).betting_string() == "rrc/"
        with pytest.raises(BettingSyntaxError, match="limit raise at offset 1 has an amount"):
            _read(L2, "cr20c", syntax)


@pytest.mark.parametrize(
    "text,pattern",
    [
        ("cr199", r"action 'r199' at offset 1 \(position 0 after 'c'\): raise to 199 is below the minimum 200"),
        ("r-5", "raise to -5 is below the minimum 200"),
        ("cf", "fold is not allowed when checking is free"),
        ("ff", "comes after the hand is over"),
    ],
)
def test_illegal_actions_are_refused_in_every_mode(text: str, pattern: str) -> None:
    for syntax in (CANONICAL, DEALER, LENIENT):
        if "-" in text and syntax is not LENIENT:
            with pytest.raises(BettingSyntaxError):  # only C's %d reads a sign
                _read(NL2, text, syntax)
            continue
        with pytest.raises(IllegalActionError, match=pattern):
            _read(NL2, text, syntax)
    # a lenient amount that wraps to a legal one is legal; one that saturates is not
    with pytest.raises(IllegalActionError, match="raise to -1 is below the minimum"):
        _read(NL2, "r99999999999999999999", LENIENT)


def test_reading_on_from_a_state_counts_the_rounds_already_written() -> None:
    start = _read(NL3, "r300cc/", DEALER)
    assert _read(NL3, "r300cc/ccc/", DEALER, 7, start) == _read(NL3, "r300cc/ccc/", DEALER)
    with pytest.raises(BettingSyntaxError, match="'/' at offset 7"):
        _read(NL3, "r300cc//", DEALER, 7, start)


def test_state_from_betting_is_the_reader() -> None:
    assert State.from_betting(NL2, "r300c/cr600f") == _read(NL2, "r300c/cr600f", CANONICAL)
    assert State.from_betting(NL2, "R300/K", strict=False) == _read(NL2, "r300c/", CANONICAL)
    with pytest.raises(BettingSyntaxError):
        State.from_betting(NL2, "R300/K")


def _random_betting(game, rng_draws: st.DataObject) -> State:
    state = State.new_hand(game)
    while state.actor is not None and rng_draws.draw(st.booleans()):
        kinds = state.legal_actions()
        kind = rng_draws.draw(st.sampled_from(kinds))
        if kind.value == "r":
            lo, hi = state.min_raise_to, state.max_raise_to
            assert lo is not None and hi is not None
            state = state.apply(Action.raise_to(rng_draws.draw(st.integers(lo, hi))))
        else:
            state = state.apply(Action(kind))
    return state


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([NL2, L2, NL3]), st.data())
def test_canonical_text_reads_back_in_every_mode(game, data: st.DataObject) -> None:
    state = _random_betting(game, data)
    text = state.betting_string()
    for syntax in (CANONICAL, DEALER, LENIENT):
        assert _read(game, text, syntax) == state
    assert _read(game, text.replace("/", ""), LENIENT) == state


def test_c_number_scans() -> None:
    assert scan_c_int(" \t-12x", 0) == -12 and scan_c_int("r+7", 1) == 7 and scan_c_int("x", 0) is None
    assert scan_c_int("4294967295", 0) == -1  # wrapped to int32
    assert scan_c_int("9" * 30, 0) == -1  # strtol saturates at 2**63 - 1, then wraps
    assert scan_c_unsigned("VERSION:2.0.0", 8, 32) == (2, 9)
    assert scan_c_unsigned("-1:", 0, 8) == (255, 2)  # strtoul negates, %u truncates
    assert scan_c_unsigned(":", 0, 32) == (None, 0)
