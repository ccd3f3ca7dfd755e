"""Replay every hand the reference dealer logged and reproduce its log lines exactly.

For each ``.log`` under ``tests/data/acpc`` (normal matches, fault scenarios, a resumed
match with two header blocks, aborted matches with no SCORE line): re-deal from the
seed, replay the betting with :meth:`State.from_betting`, and rebuild every STATE line
(betting, cards, values, names by seat rotation) and the SCORE line character for
character. The transcripts (every MATCHSTATE the dealer sent) and the dealer's stderr
(its warnings) are checked the same way: each message's betting re-derived, its cards
shown as the dealer shows them, each answer coming from the player to act, and each
repaired action repaired as the dealer did.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from poker.game import load_game
from poker.log import (
    LogFormatError,
    format_cards_field,
    format_header,
    format_score_line,
    format_state_line,
    format_value,
    names_by_position,
    parse_cards_field,
    parse_log,
)
from poker.rng import deal_hands
from poker.state import Action, ActionKind, State, repair

DATA = Path(__file__).parent / "data" / "acpc"
LOGS = sorted(
    list((DATA / "logs").glob("*.log"))
    + list((DATA / "faults").glob("*/*.log"))
    + list((DATA / "resume").glob("*.log"))
)
TRANSCRIPTS = sorted((DATA / "transcripts").glob("*.seat*.txt"))
STDERRS = sorted((DATA / "faults").glob("*/*.dealer.stderr")) + sorted(
    (DATA / "resume").glob("*.dealer.stderr")
)


def _id(path: Path) -> str:
    return str(path.relative_to(DATA))


def test_data_is_there():
    assert len(LOGS) >= 40 and len(TRANSCRIPTS) >= 20 and len(STDERRS) >= 30


def _replay_log(path: Path) -> tuple[int, list[str]]:
    """Rebuild every STATE and SCORE line of one log; return (hands, mismatches)."""
    log = parse_log(path.read_text())
    assert log.headers, "a log starts with a header"
    games = {h.game_name for h in log.headers}
    seeds = {h.seed for h in log.headers}
    assert len(games) == 1 and len(seeds) == 1, "a resumed log keeps its game and seed"
    header = log.headers[0]
    game = load_game(header.game_name)
    deals = deal_hands(game, header.seed, header.num_hands)
    n = game.num_players
    problems = []
    seat_names: list[str] | None = None
    totals = [0.0] * n
    for hand in log.hands:
        if seat_names is None:
            # Position p of hand h is seat (p + h) mod N.
            seat_names = [""] * n
            for p, name in enumerate(hand.names):
                seat_names[(p + hand.hand_no) % n] = name
        names = names_by_position(seat_names, hand.hand_no)
        state = State.from_betting(game, hand.betting, deals[hand.hand_no])
        line = format_state_line(hand.hand_no, state, names)
        if line != hand.line:
            problems.append(f"hand {hand.hand_no}:\n  log   {hand.line}\n  built {line}")
        for p, v in enumerate(state.values()):
            totals[(p + hand.hand_no) % n] += v
    if log.score is not None:
        assert seat_names is not None
        score = format_score_line(totals, seat_names)
        if score != log.score.line:
            problems.append(f"SCORE:\n  log   {log.score.line}\n  built {score}")
    return len(log.hands), problems


@pytest.mark.parametrize("path", LOGS, ids=_id)
def test_replay_log(path):
    _, problems = _replay_log(path)
    assert not problems, "\n".join(problems[:5])


def test_every_logged_hand_was_replayed():
    # SPEC §9: 1,154 STATE lines in logs/, faults/ and resume/ (plus the 3 hands the final
    # resume log repeats from the aborted run's log).
    assert sum(_replay_log(p)[0] for p in LOGS) == 1157


def test_resumed_log_has_two_blocks_and_one_score():
    log = parse_log((DATA / "resume" / "tlog_demo.final.log").read_text())
    assert len(log.headers) == 2
    assert [h.hand_no for h in log.hands] == list(range(6))
    assert [h.block for h in log.hands] == [0, 0, 0, 1, 1, 1]
    assert log.score is not None and log.score.names == ("Alice", "Bob")
    assert log.headers[1].options == {"t_response": 600000, "t_hand": 600000, "t_per_hand": 7000}
    aborted = parse_log((DATA / "resume" / "tlog_demo.run1.log").read_text())
    assert aborted.score is None and len(aborted.hands) == 3


def test_header_lines_round_trip():
    text = (DATA / "logs" / "kuhn.limit.3p.example_x3.log").read_text().splitlines()
    h = parse_log("\n".join(text)).headers[0]
    assert h.game_name == "kuhn.limit.3p"
    assert format_header(h.match_name, h.game_file, h.num_hands, h.seed, **h.options) == text[:4]


def test_format_value():
    assert format_value(20000) == "20000"
    assert format_value(-50.0) == "-50"
    assert format_value(0.0) == "0" and format_value(-0.0) == "0"
    assert format_value(-1e-9) == "0"
    assert format_value(12.5) == "12.5" and format_value(-7.25) == "-7.25"
    assert format_value(10 / 3) == "3.333333"
    assert format_value(100.0) == "100"  # the integer part keeps its zeros


def test_parse_log_errors_name_the_line():
    with pytest.raises(LogFormatError, match="log line 2"):
        parse_log("# name/game/hands/seed m games/x.game 3 42\nSTATE:0:cc\n")
    with pytest.raises(LogFormatError, match="log line 1"):
        parse_log("hello\n")


def test_parse_cards_field():
    holes, boards = parse_cards_field("7d3d|2hAc/5sKs7s/9s/6h", 2)
    assert len(holes) == 2 and [len(b) for b in boards] == [0, 3, 1, 1]
    holes, boards = parse_cards_field("Ks|As|Js", 3)
    assert boards == ((),)


# ---------------------------------------------------------------------- transcripts

_MATCHSTATE = re.compile(r"MATCHSTATE:(\d+):(\d+):([^:]*):([^:]*)")


def _transcript_games():
    """Map each transcript to its log (same match name), whose header names game and seed."""
    for path in TRANSCRIPTS:
        match = path.name.rsplit(".seat", 1)[0]
        log = DATA / "logs" / f"{match}.log"
        yield path, log


@pytest.mark.parametrize("path,log", list(_transcript_games()), ids=lambda x: x.name)
def test_transcript_messages(path, log):
    """Every MATCHSTATE sent: betting canonical, cards as shown, answers only from the actor."""
    header = parse_log(log.read_text()).headers[0]
    game = load_game(header.game_name)
    deals = deal_hands(game, header.seed, header.num_hands)
    checked = 0
    for line in path.read_text().splitlines():
        if line.startswith("S-> "):
            m = _MATCHSTATE.fullmatch(line[4:])
            assert m, line
            viewer, hand_no, betting, cards = int(m[1]), int(m[2]), m[3], m[4]
            state = State.from_betting(game, betting, deals[hand_no])
            assert state.betting_string() == betting
            assert format_cards_field(state, viewer) == cards, line
            checked += 1
        elif line.startswith("<-C MATCHSTATE:"):
            m = _MATCHSTATE.match(line[4:])
            assert m, line
            state = State.from_betting(game, m[3])
            # The recorded clients answer only when it is their turn.
            assert state.actor == int(m[1]), line
    assert checked > 100


# ---------------------------------------------------------------------- dealer repairs

_FROM = re.compile(r"FROM \d+ at [\d.]+ MATCHSTATE:\d+:\d+:([^:]*):[^:]*:(.*)")
_TO = re.compile(r"TO \d+ at [\d.]+ MATCHSTATE:\d+:\d+:([^:]*):")
_REPAIRABLE = re.compile(r"(invalid action, changed to call|raise of -?\d+ (in|de)creased to \d+)")


def _action_from_wire(text: str) -> Action | None:
    """The action letters the recorded injector used, as the dealer's table reads them."""
    letter = text[:1]
    if letter in "fF":
        return Action.fold()
    if letter in "cCkK":
        return Action.call()
    if letter in "rRbB":
        m = re.match(r"\s*([+-]?\d+)", text[1:])
        return Action.raise_to(int(m[1]) if m else None)
    return None  # an unknown letter: the codec's business, not the state's


@pytest.mark.parametrize("path", STDERRS, ids=_id)
def test_dealer_repairs(path):
    """Each WARNING about an action: :func:`repair` gives the same text and the same result."""
    lines = path.read_text().splitlines()
    game = load_game(parse_log(lines[0]).headers[0].game_name)
    for i, line in enumerate(lines):
        if not line.startswith("WARNING: ") or not _REPAIRABLE.search(line):
            continue
        m = _FROM.match(lines[i - 1])
        assert m, lines[i - 1]
        betting, sent = m[1], m[2]
        action = _action_from_wire(sent)
        if action is None:
            continue
        state = State.from_betting(game, betting)
        fixed, warning = repair(state, action)
        assert "WARNING: " + str(warning) == line
        after = state.apply(fixed)
        nxt = next(_TO.match(x) for x in lines[i + 1 :] if x.startswith("TO "))
        assert after.betting_string() == nxt[1]


def test_repair_cases_were_seen():
    """The recorded faults exercise each repair the dealer makes."""
    seen = set()
    for path in STDERRS:
        for line in path.read_text().splitlines():
            m = _REPAIRABLE.search(line)
            if m:
                seen.add(re.sub(r"-?\d+", "N", m[1]))
    assert seen == {
        "invalid action, changed to call",
        "raise of N increased to N",
        "raise of N decreased to N",
    }


def test_limit_raise_size_is_ignored():
    # faults/limit_raise_with_size: 'r300' in limit is applied as a plain 'r', no warning.
    game = load_game("holdem.limit.2p.reverse_blinds")
    state = State.from_betting(game, "c")
    fixed, warning = repair(state, Action.raise_to(300))
    assert warning is None and fixed == Action(ActionKind.RAISE, 20)
    assert state.apply(fixed).betting_string() == "cr"
