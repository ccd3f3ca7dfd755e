"""The sans-IO ACPC protocol: MATCHSTATE codec, line framing, and both connection ends.

* Every dealer line in the recordings parses and formats back byte for byte, read whole
  and incrementally; every recorded client response parses.
* Every spelling the reference dealer accepts (SPEC §2.2, §2.7) reads as the canonical one.
* Malformed lines raise exactly one error class, RemoteProtocolError (hypothesis: random
  bytes, and real lines with mutated fields); the dealer-side reader never raises at all.
* Parsers fed whole, one byte at a time and with trailing data give the same events.
* A client and the dealer object talk over a fake link (h11's ConnectionPair idea).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.protocol.client_state import NEED_DATA, ClientConnection, MatchEnded, StateMessage
from agent.protocol.codec import (
    DEALER_MAX_LINE,
    LineBuffer,
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
    format_match_state,
    format_response,
    hand_values,
    legalize,
    parse_action,
    parse_match_state,
    parse_response,
    parse_version,
)
from agent.protocol.dealer_state import DealerMatch, MatchOver, PreparedCall, Send, TimeLimits, _read_echo
from poker.betting import scan_c_int as _scan_c_int
from poker.game import load_game, shipped_games
from poker.state import Action, ActionKind, State

DATA = Path(__file__).parent / "data" / "acpc"
TRANSCRIPTS = sorted(DATA.glob("transcripts/*.txt")) + sorted(DATA.glob("faults/*/*.seat*.txt")) + sorted(
    DATA.glob("resume/*.seat*.txt")
)
NL2 = load_game("holdem.nolimit.2p.reverse_blinds")
L2 = load_game("holdem.limit.2p.reverse_blinds")
NL3 = load_game("holdem.nolimit.3p")
KUHN3 = load_game("kuhn.limit.3p")


def _game_of(path: Path):
    head = path.read_text().split("\n", 1)[0]
    m = re.search(r"game=(\S+)\.game", head)
    if m:
        return load_game(m.group(1))
    name = path.name
    for g in ("holdem.nolimit.2p.reverse_blinds", "holdem.limit.2p.reverse_blinds", "holdem.nolimit.3p", "kuhn.limit.3p"):
        if name.startswith(g):
            return load_game(g)
    if name.startswith("tlog_demo"):
        return NL2
    raise AssertionError(f"no game for {path}")


def _lines(path: Path, prefix: str) -> list[str]:
    return [line[4:] for line in path.read_text().splitlines() if line.startswith(prefix)]


ALL_DEALER_LINES = [(p, line) for p in TRANSCRIPTS for line in _lines(p, "S-> ")]


def test_recordings_are_here():
    assert len(TRANSCRIPTS) >= 90 and len(ALL_DEALER_LINES) > 16000


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.name)
def test_every_dealer_line_round_trips(path: Path) -> None:
    game = _game_of(path)
    previous = None
    for line in _lines(path, "S-> "):
        whole = parse_match_state(line, game)
        incremental = parse_match_state(line.encode(), game, previous)
        assert whole == incremental
        assert format_match_state(whole) == line
        assert str(incremental) == line and incremental.text == line
        previous = incremental


@pytest.mark.parametrize("path", sorted(DATA.glob("transcripts/*.txt")), ids=lambda p: p.name)
def test_every_recorded_response_parses(path: Path) -> None:
    game = _game_of(path)
    responses = [r for r in _lines(path, "<-C ") if not r.startswith("VERSION")]
    assert responses
    for line in responses:
        ms, action = parse_response(line, game)
        assert format_response(ms, action) == line
        # the recorded players only ever answered their own turn, with legal actions
        assert ms.is_my_turn
        ms.state.verify(action)


def test_example_states_from_spec():
    ms = parse_match_state("MATCHSTATE:0:0:cc/:7d3d|/5sKs7s", NL2)
    assert (ms.position, ms.hand_number, ms.state.round) == (0, 0, 1)
    assert ms.hole == (21, 5) and ms.board == (15, 47, 23)  # 7d 3d | 5s Ks 7s
    assert ms.holes[1] == () and ms.is_my_turn
    three = parse_match_state("MATCHSTATE:2:1::||Ad8h", NL3)
    assert three.position == 2 and three.is_my_turn  # the button opens preflop in 3p
    kuhn = parse_match_state("MATCHSTATE:0:0::Ks||", KUHN3)
    assert kuhn.hole == (47,) and kuhn.is_my_turn
    allin = parse_match_state("MATCHSTATE:0:0:r20000c///:7d3d|2hAc/5sKs7s/9s/6h", NL2)
    assert allin.state.is_terminal and allin.state.round == 3
    assert hand_values(allin) == (20000.0, -20000.0)
    folded = parse_match_state("MATCHSTATE:0:0:rfc:Ks||Js", KUHN3)
    assert folded.state.is_terminal and folded.holes[1] == ()


@pytest.mark.parametrize(
    ("spelled", "canonical", "game"),
    [
        ("MATCHSTATE:0:0:cc/:7D3d|/5SkS7s", "MATCHSTATE:0:0:cc/:7d3d|/5sKs7s", NL2),
        ("MATCHSTATE:0:0:kK/:7d3d|/5sKs7s", "MATCHSTATE:0:0:cc/:7d3d|/5sKs7s", NL2),
        ("MATCHSTATE:0:0:Cb300B900:7d3d|", "MATCHSTATE:0:0:cr300r900:7d3d|", NL2),
        ("MATCHSTATE:1:0:R300F:|2hac", "MATCHSTATE:1:0:r300f:|2hAc", NL2),
        ("MATCHSTATE:0:0:bBrK/:7d3d|/5sks7s", "MATCHSTATE:0:0:rrrc/:7d3d|/5sKs7s", L2),
        ("MATCHSTATE:0:0:rF:ks||", "MATCHSTATE:0:0:rf:Ks||", KUHN3),
    ],
)
def test_accepted_spellings_read_as_canonical(spelled: str, canonical: str, game) -> None:
    ms = parse_match_state(spelled, game)
    assert format_match_state(ms) == canonical
    assert ms.text == spelled  # an answer echoes what was received, not the canonical form


@pytest.mark.parametrize(
    "line",
    [
        "",
        "MATCHSTATE",
        "MATCHSTATE:0:0::7d3d",  # one hole group for two players
        "MATCHSTATE:0:0::7d3d|||",
        "MATCHSTATE:2:0::7d3d|",  # position out of range
        "MATCHSTATE:-1:0::7d3d|",
        "MATCHSTATE:0:-1::7d3d|",
        "MATCHSTATE:0:4294967296::7d3d|",
        "MATCHSTATE:0:0:x:7d3d|",
        "MATCHSTATE:0:0:r:7d3d|",  # no-limit raise without amount
        "MATCHSTATE:0:0:r199:7d3d|",  # below the minimum raise-to
        "MATCHSTATE:0:0:cc:7d3d|",  # missing '/' after the round ended
        "MATCHSTATE:0:0:c/c:7d3d|/5sKs7s",  # '/' before the round ended
        "MATCHSTATE:0:0:cc/:7d3d|",  # board missing
        "MATCHSTATE:0:0:cc/:7d3d|/5sKs",  # board too short
        "MATCHSTATE:0:0::7d3|",
        "MATCHSTATE:0:0::7d7d|",  # a card twice
        "MATCHSTATE:0:0::|2hAc",  # own cards not shown
        "MATCHSTATE:0:0::Zz3d|",
        "MATCHSTATE:0:0:cc/cc/cc/ccc:7d3d|2hAc/5sKs7s/9s/6h",  # action after the end
        "MATCHSTATE:0:0::7d3d|:c",  # a response is not a state
        "MATCHSTATE:0:0:r99999999999999999999999:7d3d|",
        "MATCHSTATE:0:0:r" + "9" * 5000 + ":7d3d|",
        "MATCHSTATE:0:0::7d3d|\r",
        "matchstate:0:0::7d3d|",
        "MATCHSTATE:0:0::7d3d|\x00",
        "MATCHSTATE:٠:0::7d3d|",  # a non-ASCII digit
        b"MATCHSTATE:0:0::7d3d|" + b"\xff",
    ],
)
def test_malformed_lines_raise_remote_protocol_error(line) -> None:
    with pytest.raises(RemoteProtocolError):
        parse_match_state(line, NL2)


def test_kuhn_deck_is_checked():
    with pytest.raises(RemoteProtocolError, match="deck"):
        parse_match_state("MATCHSTATE:0:0::2c||", KUHN3)


@pytest.mark.parametrize(
    ("text", "kind", "amount"),
    [
        ("c", ActionKind.CALL, None),
        ("k", ActionKind.CALL, None),
        ("K", ActionKind.CALL, None),
        ("C", ActionKind.CALL, None),
        ("f", ActionKind.FOLD, None),
        ("F", ActionKind.FOLD, None),
        ("r200", ActionKind.RAISE, 200),
        ("b200", ActionKind.RAISE, 200),
        ("B200", ActionKind.RAISE, 200),
        ("R200", ActionKind.RAISE, 200),
        ("r 200", ActionKind.RAISE, 200),
        ("r-5", ActionKind.RAISE, -5),
        ("r+7", ActionKind.RAISE, 7),
        ("r300junk", ActionKind.RAISE, 300),
        ("cxyz junk", ActionKind.CALL, None),
        ("r4294967496", ActionKind.RAISE, 200),  # C's %d into an int32 wraps
        ("r99999999999999999999999", ActionKind.RAISE, -1),  # strtol saturates, then wraps
    ],
)
def test_actions_read_like_the_reference_dealer(text: str, kind: ActionKind, amount: int | None) -> None:
    a = parse_action(text, NL2)
    assert (a.kind, a.amount) == (kind, amount)


def test_limit_raise_ignores_digits_and_bad_actions_raise():
    assert parse_action("r300", L2) == Action.raise_to(None)
    for bad in ("", "x", "r", "r x", ":c", "\r\n"):
        with pytest.raises(RemoteProtocolError):
            parse_action(bad, NL2)
    assert _scan_c_int("  -12", 0) == -12 and _scan_c_int("x", 0) is None


def test_parse_response_rejects_lines_without_an_action():
    with pytest.raises(RemoteProtocolError):
        parse_response("MATCHSTATE:0:0::7d3d|", NL2)
    with pytest.raises(RemoteProtocolError):
        parse_response("MATCHSTATE:0:0::7d3d|:x", NL2)
    ms, action = parse_response("MATCHSTATE:0:0:c:7d3d|:c:more", NL2)
    assert action == Action.call() and ms.state.betting_string() == "c"


@pytest.mark.parametrize(
    ("line", "version"),
    [
        ("VERSION:2.0.0\r\n", (2, 0, 0)),
        ("VERSION:2.0.0\n", (2, 0, 0)),
        ("VERSION:1.0.0", (1, 0, 0)),
        ("VERSION: 2. 1.0junk", (2, 1, 0)),
        ("VERSION:-1.0.0", (4294967295, 0, 0)),
        ("HELLO", None),
        ("VERSION:2.0", None),
        ("VERSION:2..0", None),
        ("", None),
    ],
)
def test_version_line(line: str, version) -> None:
    assert parse_version(line) == version


# ---------------------------------------------------------------------------- fuzzing

_SAMPLE = [line for i, (_, line) in enumerate(ALL_DEALER_LINES) if i % 37 == 0]
_GAME_OF_SAMPLE = {line: _game_of(p) for i, (p, line) in enumerate(ALL_DEALER_LINES) if i % 37 == 0}


def _mutate(line: str, data: st.DataObject) -> str:
    fields = line.split(":")
    how = data.draw(st.sampled_from(["field", "char", "insert", "delete", "swap"]))
    if how == "field":
        i = data.draw(st.integers(0, len(fields) - 1))
        fields[i] = data.draw(st.text(alphabet="0123456789cfrkbKB/|:AsKdTc2h- \r\x00", max_size=12))
        return ":".join(fields)
    pos = data.draw(st.integers(0, len(line)))
    ch = data.draw(st.sampled_from(list("0123456789cfrxkb/|:AKQJT98sdhcZ \r\n\x00\xe9")))
    if how == "char" and pos < len(line):
        return line[:pos] + ch + line[pos + 1 :]
    if how == "insert":
        return line[:pos] + ch + line[pos:]
    if how == "delete" and pos < len(line):
        return line[:pos] + line[pos + 1 :]
    if how == "swap" and pos + 1 < len(line):
        return line[:pos] + line[pos + 1] + line[pos] + line[pos + 2 :]
    return line


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_only_raise_protocol_errors(data: bytes) -> None:
    for game in (NL2, L2, KUHN3):
        for parse in (parse_match_state, parse_response):
            try:
                parse(data, game)
            except RemoteProtocolError:
                pass
        _read_echo(data.decode("latin-1"), game)  # the dealer's lenient reader: no exception


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_SAMPLE), st.data())
def test_mutated_real_lines_only_raise_protocol_errors(line: str, data: st.DataObject) -> None:
    game = _GAME_OF_SAMPLE[line]
    bad = _mutate(line, data)
    try:
        ms = parse_match_state(bad, game)
    except RemoteProtocolError:
        pass
    else:
        # whatever was accepted is a consistent state that formats to a line we read back
        again = parse_match_state(format_match_state(ms), game)
        assert again == ms
    try:
        parse_response(bad + ":c", game)
    except RemoteProtocolError:
        pass
    echo = _read_echo(bad, game)  # the dealer's lenient reader never raises
    if echo is not None:
        assert 0 <= echo.end <= len(bad)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=120), max_size=6), st.data())
def test_dealer_survives_any_response_bytes(junk: list[bytes], data: st.DataObject) -> None:
    """Garbage on its turn never raises in the dealer: warnings, repairs, then play goes on."""
    d = DealerMatch(NL2, num_hands=2, seed=7, names=["a", "b"])
    d.start(0.0)
    valid = d.owed_text + b":" + data.draw(st.sampled_from([b"c", b"f", b"r150", b"r9999999", b"x", b""])) + b"\r\n"
    buf = LineBuffer(DEALER_MAX_LINE, cut_long_lines=True)
    for chunk in junk + [valid]:
        if not chunk:
            continue  # b"" would mean EOF
        buf.feed(chunk)
        while (line := buf.next_line()) is not None and not d.over:
            seat = d.acting_seat
            assert seat is not None
            for out in d.receive_line(seat, line, 0.0):
                assert not isinstance(out, MatchOver) or out.score is not None


def _outputs(outs: list) -> tuple[dict[int, bytes], list]:
    """Outputs as each seat's bytes and, in order, everything that is not a message."""
    sent: dict[int, bytes] = {}
    rest = []
    for o in outs:
        if isinstance(o, Send):
            sent[o.seat] = sent.get(o.seat, b"") + o.data
        else:
            rest.append(o)
    return sent, rest


def _prepared_outputs(p: PreparedCall) -> dict[int, bytes]:
    return {p.seat: p.data, **dict(p.others)}


def _match_view(d: DealerMatch) -> tuple:
    return (d.acting_seat, d.owed_text, d.state, d.over, d.hands_played, list(d.totals),
            list(d._hand_used), list(d._match_used), d._sent_at)


@pytest.mark.parametrize("game_name", ["holdem.nolimit.2p.reverse_blinds", "holdem.limit.3p", "leduc.nolimit.2p"])
@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_prepared_call_is_the_call_read(game_name: str, data: st.DataObject) -> None:
    """A call answered from :meth:`DealerMatch.prepare_call` sends what reading it sends
    and leaves the match as reading it does, time charged and limits included; any other
    response, and a preparation the match has moved past, fall back to reading. Hands'
    ends made ahead (:meth:`DealerMatch.prepare_ahead`: ranks, the next deal, across
    duplicate passes) change nothing either."""
    game = load_game(game_name)
    names = [f"p{i}" for i in range(game.num_players)]
    limits = TimeLimits(response_ms=50, hand_ms=120, per_hand_ms=40)
    seed = data.draw(st.integers(0, 2**32 - 1))
    fast, read = (DealerMatch(game, num_hands=4, seed=seed, names=names, limits=limits,
                              duplicate=game.num_players == 2) for _ in range(2))  # fmt: skip
    now = 0.0
    assert _outputs(read.start(now)) == _outputs(fast.start(now))
    stale = None
    while not read.over:
        seat = read.acting_seat
        assert seat is not None and seat == fast.acting_seat
        prepared = fast.prepare_call()
        for _ in range(data.draw(st.integers(0, 3))):  # the hand's end made ahead, or not
            fast.prepare_ahead()
        assert _match_view(fast) == _match_view(read)  # preparing changes nothing
        now += data.draw(st.sampled_from([0.0, 0.001, 0.02, 0.049, 0.051]))
        letter = data.draw(st.sampled_from([b"c", b"c", b"c", b"f", b"r", b"C"]))
        if letter == b"r" and not game.is_limit:
            letter += str(data.draw(st.integers(0, 30000))).encode()
        ending = data.draw(st.sampled_from([b"\r\n", b"\n"]))
        line = read.owed_text + b":" + letter + ending
        if stale is not None:
            assert not fast.take_prepared(stale, now)  # made for an earlier state
            assert _match_view(fast) == _match_view(read)
        expected = _outputs(read.receive_line(seat, line, now))
        if prepared is not None and line in prepared.lines and fast.take_prepared(prepared, now):
            got = (_prepared_outputs(prepared), [])
        else:
            if prepared is not None and line in prepared.lines:
                assert expected[1], "a prepared call refused without a reason"
            got = _outputs(fast.receive_line(seat, line, now))
        assert got == expected
        assert _match_view(fast) == _match_view(read)
        stale = prepared if prepared is not None and data.draw(st.booleans()) else None


def test_a_prepared_call_is_used_in_a_match() -> None:
    """Calls within a hand are answered from the preparation; the hand's last call is read."""
    d = DealerMatch(NL2, num_hands=3, seed=3, names=["a", "b"])
    d.start(0.0)
    taken = read = 0
    while not d.over:
        prepared = d.prepare_call()
        line = d.owed_text + b":c\r\n"
        if prepared is not None and d.take_prepared(prepared, 0.0):
            taken += 1
        else:
            d.receive_line(d.acting_seat, line, 0.0)
            read += 1
    assert d.hands_played == 3 and read == 3 and taken == 3 * 7  # preflop, flop, turn, river: 8 calls a hand
    lost = DealerMatch(NL2, num_hands=3, seed=3, names=["a", "b"])
    lost.start(0.0)
    prepared = lost.prepare_call()
    assert prepared is not None
    lost.connection_lost(1 - lost.acting_seat, 0.0)  # the seat not to act: play goes on
    assert not lost.over and lost.prepare_call() is None  # its messages are no longer made
    assert not lost.take_prepared(prepared, 0.0)  # the call is read: the lost seat acts next
    assert _outputs(lost.receive_line(lost.acting_seat, prepared.lines[0], 0.0))[1][-1] == MatchOver(None)


def test_preparing_ahead_ranks_the_hands_then_deals_the_next() -> None:
    """One piece a call: this deal's ranks on the whole board, then the next hand's deal
    (the next pass's first, from the seed, at a pass's end); nothing after the last hand."""
    from poker.evaluator import evaluate

    d = DealerMatch(NL2, num_hands=2, seed=8, names=["a", "b"], duplicate=True)
    d.start(0.0)
    deals, ranked = [], []
    while not d.over:
        if d.hands_played == len(deals):
            deal = d.state.deal
            board = deal.board_through(NL2.num_rounds - 1)
            deals.append(deal)
            pieces = 0
            while d.prepare_ahead():
                pieces += 1
            ranked.append(pieces)
            assert d._ranks == [evaluate(hole + board) for hole in deal.holes]
        d.receive_line(d.acting_seat, d.owed_text + b":c\r\n", 0.0)
    assert ranked == [2, 2, 2, 1]  # the last hand has no next deal
    assert deals[2] == deals[0] and deals[3] == deals[1] and deals[0] != deals[1]  # the pass deals again
    assert not d.prepare_ahead()  # over


# ---------------------------------------------------------------------------- framing


def _split(data: bytes, how: str, rng: random.Random) -> list[bytes]:
    if how == "whole":
        return [data]
    if how == "bytes":
        return [data[i : i + 1] for i in range(len(data))]
    cuts = sorted(rng.sample(range(1, len(data)), min(8, len(data) - 1)))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])]


@pytest.mark.parametrize("how", ["whole", "bytes", "random"])
def test_line_buffer_fed_three_ways(how: str) -> None:
    # "three" + 11 x + "\n" is 17 bytes: cut after 16, the rest is a line of its own
    data = b"one\r\ntwo\n\nthree" + b"x" * 11 + b"\n" + b"full-sixteen-ln\n" + b"tail"
    buf = LineBuffer(16, cut_long_lines=True)
    lines = []
    for chunk in _split(data, how, random.Random(1)):
        buf.feed(chunk)
        while (line := buf.next_line()) is not None:
            lines.append(line)
    assert lines == [b"one\r\n", b"two\n", b"\n", b"threexxxxxxxxxxx", b"\n", b"full-sixteen-ln\n"]
    buf.feed(b"")
    assert buf.next_line() is None and buf.at_eof  # an unfinished line is no line


def _reference_lines(data: bytes, limit: int) -> list[bytes]:
    """The framing rule written plainly: up to and including the first b"\\n" within
    ``limit`` bytes, else ``limit`` bytes; an unfinished tail is no line."""
    out = []
    while True:
        i = data.find(b"\n", 0, limit)
        if i >= 0:
            out.append(data[: i + 1])
            data = data[i + 1 :]
        elif len(data) >= limit:
            out.append(data[:limit])
            data = data[limit:]
        else:
            return out


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=8),
    st.integers(1, 10),
    st.data(),
)
def test_line_buffer_equals_the_plain_rule(texts: list[bytes], limit: int, data: st.DataObject) -> None:
    """Whole-line reads, several lines per read, lines cut anywhere, taking lines between
    reads or not: the same lines as the plain rule, and ``buffered``/``empty`` agree."""
    stream = b"".join(t + b"\n" for t in texts) + data.draw(st.binary(max_size=5).map(lambda b: b.replace(b"\n", b"")))
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(stream) - 1)), max_size=6))))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)]) if stream[a:b]]
    buf = LineBuffer(limit, cut_long_lines=True)
    got, fed = [], 0
    for chunk in chunks:
        buf.feed(chunk)
        fed += len(chunk)
        if data.draw(st.booleans()):
            while (line := buf.next_line()) is not None:
                got.append(line)
        assert buf.buffered == fed - sum(map(len, got))
    while (line := buf.next_line()) is not None:
        got.append(line)
    assert got == _reference_lines(stream, limit)
    assert buf.empty == (buf.buffered == 0)


def test_line_buffer_cuts_like_the_reference_dealer():
    buf = LineBuffer(DEALER_MAX_LINE, cut_long_lines=True)
    buf.feed(b"a" * 5000 + b"\n")
    first, second = buf.next_line(), buf.next_line()
    assert len(first) == 4095 and second == b"a" * 905 + b"\n" and buf.next_line() is None
    strict = LineBuffer(10, cut_long_lines=False)
    strict.feed(b"0123456789abc")
    with pytest.raises(RemoteProtocolError):
        strict.next_line()


def _client_events(game, chunks: list[bytes]) -> list:
    conn = ClientConnection(game)
    conn.initiate()
    events = []
    for chunk in chunks:
        conn.receive_data(chunk)
        while (ev := conn.next_event()) is not NEED_DATA:
            events.append(ev)
            if isinstance(ev, MatchEnded):
                return events
            if ev.my_turn:
                events.append(conn.send_action(Action.call()))
    return events


@pytest.mark.parametrize("how", ["whole", "bytes", "random"])
def test_client_connection_fed_three_ways(how: str) -> None:
    path = DATA / "transcripts" / "holdem.nolimit.3p.example_x3.seat2.txt"
    lines = _lines(path, "S-> ")[:60]
    stream = b"".join(line.encode() + b"\r\n" for line in lines) + b"# a comment\r\n; gui\r\n"
    reference = _client_events(NL3, [stream, b""])
    events = _client_events(NL3, _split(stream, how, random.Random(2)) + [b""])
    assert events == reference
    assert sum(isinstance(e, StateMessage) for e in events) == 60
    assert isinstance(events[-1], MatchEnded)


def test_client_with_trailing_partial_line_at_eof():
    conn = ClientConnection(NL2)
    conn.initiate()
    conn.receive_data(b"MATCHSTATE:0:0::7d3d|\r\nMATCHSTATE:0:0:c:7d")
    assert isinstance(conn.next_event(), StateMessage)
    assert conn.next_event() is NEED_DATA
    conn.receive_data(b"")
    assert isinstance(conn.next_event(), MatchEnded)


def test_client_answers_exactly_its_turns_in_recorded_matches():
    """For every recorded seat: a state needs an answer iff the recorded client answered it,
    and the answer echoes the state exactly as received."""
    for path in sorted(DATA.glob("transcripts/*.txt")):
        game = _game_of(path)
        conn = ClientConnection(game)
        conn.initiate()
        rows = [line for line in path.read_text().splitlines() if line.startswith(("S-> ", "<-C MATCH"))]
        for i, row in enumerate(rows):
            if not row.startswith("S-> "):
                continue
            conn.receive_data(row[4:].encode() + b"\r\n")
            ev = conn.next_event()
            answered = i + 1 < len(rows) and rows[i + 1].startswith("<-C ")
            assert ev.my_turn == answered, (path.name, row)
            if answered:
                recorded = rows[i + 1][4:]
                _, action = parse_response(recorded, game)
                assert conn.send_action(action) == recorded.encode() + b"\r\n"


def test_client_refuses_misuse():
    conn = ClientConnection(NL2)
    with pytest.raises(LocalProtocolError):
        conn.next_event()
    conn = ClientConnection(NL2)
    conn.initiate()
    with pytest.raises(LocalProtocolError):
        conn.initiate()
    conn = ClientConnection(NL2)
    conn.initiate()
    conn.receive_data(b"MATCHSTATE:1:0::|2hAc\r\nMATCHSTATE:1:0:c:|2hAc\r\n")
    assert conn.next_event().my_turn
    assert not conn.next_event().my_turn
    with pytest.raises(LocalProtocolError):
        conn.send_action(Action.call())  # not our turn: never answer
    with pytest.raises(LocalProtocolError):
        conn.next_event()  # and the connection is now unusable


def test_client_error_state_is_sticky():
    conn = ClientConnection(NL2)
    conn.initiate()
    conn.receive_data(b"garbage\r\n")
    with pytest.raises(RemoteProtocolError):
        conn.next_event()
    with pytest.raises(RemoteProtocolError):
        conn.next_event()
    with pytest.raises(ProtocolError):
        conn.receive_data(b"MATCHSTATE:0:0::7d3d|\r\n")


def test_client_never_answers_a_finished_hand():
    conn = ClientConnection(NL2)
    conn.initiate()
    conn.receive_data(b"MATCHSTATE:1:0:f:|2hAc\r\n")
    ev = conn.next_event()
    assert ev.match_state.state.is_terminal and not ev.my_turn and ev.value == -50.0  # the small blind folded
    with pytest.raises(LocalProtocolError):
        conn.send_action(Action.call())
    with pytest.raises(LocalProtocolError):
        legalize(ev.match_state.state, Action.call())


# ---------------------------------------------------------------------------- fake link


class ConnectionPair:
    """A dealer object and one client object per seat, joined by in-memory pipes."""

    def __init__(self, game, hands: int, seed: int, bots) -> None:
        self.dealer = DealerMatch(game, num_hands=hands, seed=seed, names=[f"p{i}" for i in range(game.num_players)])
        self.clients = [ClientConnection(game) for _ in range(game.num_players)]
        self.bots = bots
        self.inbox: list[list[bytes]] = [[] for _ in self.clients]

    def run(self) -> str | None:
        d = self.dealer
        for seat, c in enumerate(self.clients):
            d.receive_version(seat, c.initiate())
        outputs = d.start(0.0)
        score = None
        while True:
            for out in outputs:
                if isinstance(out, Send):
                    self.clients[out.seat].receive_data(out.data)
                elif isinstance(out, MatchOver):
                    score = out.score
            if d.over:
                break
            outputs = []
            for seat, c in enumerate(self.clients):
                while (ev := c.next_event()) is not NEED_DATA:
                    if ev.my_turn:
                        self.inbox[seat].append(c.send_action(self.bots[seat](ev.match_state)))
            seat = d.acting_seat
            assert self.inbox[seat], "the acting seat's client did not answer"
            outputs = d.receive_line(seat, self.inbox[seat].pop(0), 0.0)
        for c in self.clients:
            c.receive_data(b"")
            while not isinstance(c.next_event(), MatchEnded):
                pass
        return score


@pytest.mark.parametrize("game_name", shipped_games())
def test_clients_and_dealer_agree_over_a_fake_link(game_name: str) -> None:
    game = load_game(game_name)
    rng = random.Random(game_name)

    def wild(ms):  # anything at all; the client makes it legal
        return rng.choice([Action.fold(), Action.call(), Action.raise_to(None),
                           Action.raise_to(rng.randint(-10, 30000)), None, "junk"])

    pair = ConnectionPair(game, hands=30, seed=3, bots=[wild] * game.num_players)
    score = pair.run()
    assert score is not None
    totals = [float(v) for v in score.split(":")[1].split("|")]
    assert [c.chips for c in pair.clients] == pytest.approx(totals)
    assert all(c.hands == 30 for c in pair.clients)


def test_state_is_legal_for_every_owed_turn():
    ms = parse_match_state("MATCHSTATE:0:0:c:7d3d|", NL2)
    assert legalize(ms.state, Action.fold()) == Action.call()  # a free fold is a check
    assert legalize(ms.state, Action.raise_to(10**9)) == Action.raise_to(20000)
    assert legalize(ms.state, Action.raise_to(None)) == Action.raise_to(200)
    assert isinstance(State.from_betting(NL2, "c"), State)
