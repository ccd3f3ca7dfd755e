"""The match's fast paths give exactly what the general code gives.

The per-action work of the dealer and the client has cheap paths (see the notes in
:mod:`agent.protocol`, :mod:`agent.dealer` and :meth:`poker.state.State.apply`); each is
checked here against the slow path it replaces:

* incremental reading of a state (reused fields, new actions and cards only, shown hole
  cards at a showdown) accepts and rejects exactly what a full read does, and reads the
  same thing, on real consecutive lines and on mutations of them (hypothesis);
* the client's call shortcut and hand values equal the general ones;
* ``State.apply`` (call fast path, slot-built states) equals a replay through the
  checked constructor; ``with_deal`` and the raise bounds agree with their definitions;
* table-driven card formatting and the STATE line with precomputed values are unchanged;
* the event loop: uvloop when importable, the stock loop on request;
* the dealer's coalesced, acting-seat-first writes give every seat over loopback exactly
  the bytes the sans-IO match sends it.
"""

from __future__ import annotations

import asyncio
import io
import random
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent import eventloop
from agent.protocol.client_state import NEED_DATA, ClientConnection, StateMessage, _own_value
from agent.protocol.codec import RemoteProtocolError, hand_values, legalize, parse_match_state
from poker.cards import CardError, card_to_str, format_cards
from poker.game import load_game
from poker.log import format_state_line
from poker.rng import Dealer as CardDealer
from poker.state import Action, Deal, IllegalActionError, State

DATA = Path(__file__).parent / "data" / "acpc"
TRANSCRIPTS = sorted(DATA.glob("transcripts/*.txt")) + sorted(DATA.glob("faults/*/*.seat*.txt"))
GAMES = ("holdem.nolimit.2p.reverse_blinds", "holdem.limit.2p.reverse_blinds", "holdem.nolimit.3p", "kuhn.limit.3p")
NL2 = load_game("holdem.nolimit.2p.reverse_blinds")


def _game_of(path: Path):
    m = re.search(r"game=(\S+)\.game", path.read_text().split("\n", 1)[0])
    if m:
        return load_game(m.group(1))
    for name in GAMES:
        if path.name.startswith(name):
            return load_game(name)
    return NL2


def _dealer_lines(path: Path) -> list[str]:
    return [line[4:] for line in path.read_text().splitlines() if line.startswith("S-> ")]


# Consecutive dealer lines (previous, line) of one connection, a sample of every recording.
_PAIRS = []
for _path in TRANSCRIPTS:
    _lines = _dealer_lines(_path)
    _PAIRS += [(_path, _lines[i - 1], _lines[i]) for i in range(1, len(_lines), 23)]


def _read(line: str, game, previous=None):
    try:
        return parse_match_state(line, game, previous)
    except RemoteProtocolError:
        return None


def test_pairs_cover_every_kind_of_step() -> None:
    steps = set()
    for path, prev_line, line in _PAIRS:
        game = _game_of(path)
        prev, ms = parse_match_state(prev_line, game), parse_match_state(line, game)
        if prev.hand_number != ms.hand_number:
            steps.add("new hand")
        elif ms.state.is_terminal and ms.holes != prev.holes:
            steps.add("showdown")
        elif ms.state.round != prev.state.round:
            steps.add("new round")
        else:
            steps.add("same round")
    assert steps == {"new hand", "showdown", "new round", "same round"}


_CARD_TEXTS = [r + u for r in "23456789TJQKA" for u in "cdhs"]


def _mutate(line: str, data: st.DataObject) -> str:
    """Mostly lines that still look right: the fast paths compare them with the previous one."""
    fields = line.split(":")
    how = data.draw(st.sampled_from(["none", "number", "betting", "card", "hole", "char", "delete"]))
    if how == "number":  # another position or hand number
        i = data.draw(st.sampled_from([1, 2]))
        fields[i] = str(data.draw(st.integers(0, 3) if i == 1 else st.integers(0, 10**6)))
    elif how == "betting":  # cut the betting, or add to it
        cut = data.draw(st.integers(0, len(fields[3])))
        fields[3] = fields[3][:cut] + data.draw(st.text(alphabet="cfr0123456789/", max_size=6))
    elif how == "card":  # one card replaced by another (often still a valid line)
        cards = fields[4]
        starts = [m.start() for m in re.finditer(r"[2-9TJQKA][cdhs]", cards)]
        if starts:
            at = data.draw(st.sampled_from(starts))
            fields[4] = cards[:at] + data.draw(st.sampled_from(_CARD_TEXTS)) + cards[at + 2 :]
    elif how == "hole":  # a hole group emptied or filled in
        groups = fields[4].split("|")
        i = data.draw(st.integers(0, len(groups) - 1))
        tail = re.sub(r"^([2-9TJQKA][cdhs])*", "", groups[i]) if i == len(groups) - 1 else ""
        hole = "".join(data.draw(st.lists(st.sampled_from(_CARD_TEXTS), max_size=3)))
        groups[i] = hole + tail
        fields[4] = "|".join(groups)
    elif how in ("char", "delete"):
        pos = data.draw(st.integers(0, len(line) - 1))
        if how == "delete":
            return line[:pos] + line[pos + 1 :]
        return line[:pos] + data.draw(st.sampled_from(list("0123456789cfrkb/|:AKTsdhc"))) + line[pos + 1 :]
    return ":".join(fields)


@settings(max_examples=4000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_PAIRS), st.data())
def test_incremental_read_of_mutated_lines_equals_full_read(pair, data: st.DataObject) -> None:
    path, prev_line, line = pair
    game = _game_of(path)
    previous = parse_match_state(prev_line, game)
    bad = _mutate(line, data)
    full = _read(bad, game)
    incremental = _read(bad, game, previous)
    assert incremental == full
    if full is not None:
        assert (incremental.text, incremental.holes, incremental.boards) == (full.text, full.holes, full.boards)
        assert incremental.state.spent == full.state.spent and incremental.state.actor == full.state.actor


def test_incremental_read_of_changed_cards_equals_full_read() -> None:
    """Every card of every sampled line replaced, every hole group emptied or filled: the
    reads must agree (this is where a shortcut would reuse a stale card)."""
    rng = random.Random(11)
    compared = accepted = 0
    for path, prev_line, line in _PAIRS:
        game = _game_of(path)
        previous = parse_match_state(prev_line, game)
        head, cards = line.rsplit(":", 1)
        variants = []
        for m in re.finditer(r"[2-9TJQKA][cdhs]", cards):
            for card in rng.sample(_CARD_TEXTS, 3):
                variants.append(cards[: m.start()] + card + cards[m.end() :])
        groups = cards.split("|")
        for i in range(len(groups) - 1):  # (the last group carries the round-0 board)
            for hole in ("", "".join(rng.sample(_CARD_TEXTS, game.num_hole_cards))):
                variants.append("|".join(groups[:i] + [hole] + groups[i + 1 :]))
        for variant in variants:
            bad = f"{head}:{variant}"
            full = _read(bad, game)
            incremental = _read(bad, game, previous)
            assert incremental == full, bad
            if full is not None:
                assert (incremental.holes, incremental.boards) == (full.holes, full.boards), bad
                accepted += 1
            compared += 1
    assert compared > 10_000 and accepted > 1_000


def _events(conn: ClientConnection, chunks: list[bytes], one_call: bool) -> list[object]:
    """Every event of ``conn`` for ``chunks``: through receive_data_event or through
    receive_data and next_event; errors are events too (their type and text)."""
    out: list[object] = []
    for chunk in chunks:
        try:
            event = conn.receive_data_event(chunk) if one_call else (conn.receive_data(chunk), conn.next_event())[1]
            while event is not NEED_DATA:
                out.append(event)
                if isinstance(event, StateMessage) and event.my_turn:
                    out.append(conn.send_action(Action.call()))
                if not isinstance(event, StateMessage):
                    break
                if one_call and conn.idle:  # idle: nothing to read, as next_event says
                    assert conn.next_event() is NEED_DATA
                    break
                event = conn.next_event()
        except RemoteProtocolError as exc:
            out.append(("error", str(exc)))
            break
    return out


@pytest.mark.parametrize("path", TRANSCRIPTS[::4], ids=lambda p: p.name)
def test_one_call_receive_equals_receive_then_next_event(path: Path) -> None:
    """The line buffer's whole-line shortcut, through receive_data_event, gives the
    events of the buffered path for any cutting of the stream into reads: whole lines,
    two lines at once, lines cut anywhere, a comment, end of file."""
    game = _game_of(path)
    data = "".join(line + "\r\n" for line in _dealer_lines(path)).encode()
    data = data.replace(b"\r\n", b"\r\n# a comment\r\n", 1)
    rng = random.Random(path.name)
    for trial in range(4):
        chunks, i = [], 0
        while i < len(data):
            end = data.find(b"\n", i) + 1
            kind = rng.random() if trial else 0.0  # trial 0: exactly one line per read
            if kind < 0.6:
                j = end
            elif kind < 0.8:
                j = data.find(b"\n", end) + 1 or len(data)
            else:
                j = rng.randint(i + 1, end)
            chunks.append(data[i:j])
            i = j
        chunks.append(b"")
        fast, slow = ClientConnection(game), ClientConnection(game)
        fast.initiate()
        slow.initiate()
        got, want = _events(fast, chunks, True), _events(slow, chunks, False)
        assert got == want
        assert (fast.hands, fast.chips, fast.unscored_hands) == (slow.hands, slow.chips, slow.unscored_hands)


def test_one_call_receive_rejects_what_next_event_rejects() -> None:
    line = _dealer_lines(TRANSCRIPTS[0])[0]
    for bad in (line.replace("MATCHSTATE", "MATCHSTATF"), line + "Zz", "\xff" + line):
        conn = ClientConnection(_game_of(TRANSCRIPTS[0]))
        conn.initiate()
        with pytest.raises(RemoteProtocolError):
            conn.receive_data_event(bad.encode("latin-1") + b"\r\n")
        with pytest.raises(RemoteProtocolError, match="unusable"):
            conn.next_event()


@pytest.mark.parametrize("path", TRANSCRIPTS[::3], ids=lambda p: p.name)
def test_client_events_and_values_equal_the_general_code(path: Path) -> None:
    game = _game_of(path)
    lines = _dealer_lines(path)
    conn = ClientConnection(game)
    conn.initiate()
    conn.receive_data("".join(line + "\r\n" for line in lines).encode())
    for line in lines:
        event = conn.next_event()
        assert isinstance(event, StateMessage)
        whole = parse_match_state(line, game)
        assert event.match_state == whole and event.match_state.text == line
        assert event.my_turn == (not whole.state.is_terminal and whole.is_my_turn)
        if whole.state.is_terminal:
            values = hand_values(whole)
            assert _own_value(event.match_state) == (None if values is None else values[whole.position])
            assert event.value == (None if values is None else values[whole.position])
        elif event.my_turn:
            # the call shortcut writes what the general legalize-and-format path writes
            general = f"{line}:{legalize(whole.state, Action.call()).to_acpc(game.is_limit)}\r\n".encode()
            assert conn.send_action(Action.call()) == general
    assert conn.next_event() is NEED_DATA


def _random_hand(game, rng: random.Random, deal=None) -> list[State]:
    states = [State.new_hand(game, deal)]
    while not states[-1].is_terminal:
        s = states[-1]
        kinds = s.legal_actions()
        kind = rng.choice(kinds)
        if kind.value == "r":
            lo, hi = s.min_raise_to, s.max_raise_to
            action = Action.raise_to(rng.randint(lo, hi) if not game.is_limit else None)
        else:
            action = Action(kind)
        states.append(s.apply(action))
    return states


@pytest.mark.parametrize("name", GAMES)
def test_apply_equals_a_checked_replay(name: str) -> None:
    game = load_game(name)
    rng = random.Random(7)
    cards = CardDealer(game, 3)
    for _ in range(300):
        deal = cards.next_deal()
        for s in _random_hand(game, rng, deal):
            replay = State(game, s.actions, deal)  # the constructor replays and checks the log
            assert replay == s
            for field in ("round", "spent", "folded", "max_spent", "raise_floor", "actor", "is_terminal"):
                assert getattr(replay, field) == getattr(s, field), field
            assert State.from_betting(game, s.betting_string(), deal) == s
            bounds = s._raise_bounds()
            assert (s.min_raise_to, s.max_raise_to) == ((None, None) if bounds is None else bounds)
            assert (bounds is not None) == s.can_raise()


def test_apply_keeps_its_checks() -> None:
    s = State.new_hand(NL2)
    with pytest.raises(TypeError):
        s.apply("c")  # type: ignore[arg-type]
    over = s.fold()
    with pytest.raises(IllegalActionError, match="the hand is over"):
        over.apply(Action.call())
    with pytest.raises(IllegalActionError, match="fold is not allowed"):
        s.call().apply(Action.fold())

    class MyAction(Action):
        pass

    # a subclass goes through verify(), which accepts any Action
    assert s.apply(MyAction(Action.call().kind)).spent == s.call().spent


def test_with_deal_keeps_the_betting_and_checks_the_shape() -> None:
    s = State.from_betting(NL2, "r300c/cc/cc/cc")
    deal = CardDealer(NL2, 1).next_deal()
    full = s.with_deal(deal)
    assert full.deal == deal and full.actions == s.actions and full.spent == s.spent and full.round == s.round
    assert full == State.from_betting(NL2, "r300c/cc/cc/cc", deal)
    assert full.values() == State.from_betting(NL2, "r300c/cc/cc/cc", deal).values()
    assert full.with_deal(None) == s
    with pytest.raises(ValueError, match="hole cards"):
        s.with_deal(Deal(((1, 2), (3, 4), (5, 6)), deal.boards))
    kuhn = load_game("kuhn.limit.3p")
    with pytest.raises(ValueError, match="not in this game"):
        State.new_hand(kuhn).with_deal(Deal(((0,), (1,), (2,)), ((),)))


def test_format_cards_table_equals_card_to_str() -> None:
    assert format_cards(range(52)) == "".join(card_to_str(c) for c in range(52))
    assert format_cards(np.array([51, 0], dtype=np.int64)) == "As2c"
    assert format_cards([np.uint8(12)]) == card_to_str(12)
    for bad in (-1, 52, 99):
        with pytest.raises(CardError):
            format_cards([bad])


def test_state_line_with_given_values_is_the_same() -> None:
    rng = random.Random(5)
    cards = CardDealer(NL2, 9)
    for hand in range(200):
        final = _random_hand(NL2, rng, cards.next_deal())[-1]
        line = format_state_line(hand, final, ["a", "b"])
        assert format_state_line(hand, final, ["a", "b"], values=final.values()) == line
    with pytest.raises(ValueError, match="values"):
        format_state_line(0, final, ["a", "b"], values=(1.0,))


def test_event_loop_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    async def which() -> str:
        return type(asyncio.get_running_loop()).__module__

    monkeypatch.delenv("POKERBOT_UVLOOP", raising=False)
    try:
        import uvloop  # noqa: F401
    except ImportError:
        assert eventloop.loop_factory() is None
    else:
        assert eventloop.run(which()).startswith("uvloop")
    monkeypatch.setenv("POKERBOT_UVLOOP", "0")
    assert eventloop.loop_factory() is None
    assert eventloop.run(which()).startswith("asyncio")


# ---------------------------------------------------------------------------- the dealer shell


async def _match_over_loopback(game, hands: int, answer, seed: int = 5):
    """Our dealer and one raw client per seat that records every byte it gets and answers
    each owed state with ``await answer(seat, match_state)``; returns (result, bytes per seat,
    [(seat, time a state was read, its text)])."""
    from agent.dealer import DealerConfig, run_dealer

    loop = asyncio.get_running_loop()
    ports: asyncio.Future[list[int]] = loop.create_future()
    config = DealerConfig(game=game, num_hands=hands, seed=seed, names=tuple(f"p{i}" for i in range(game.num_players)))
    dealer = asyncio.ensure_future(run_dealer(config, stdout=io.StringIO(), stderr=io.StringIO(), on_ports=ports.set_result))
    seats = await asyncio.wait_for(asyncio.shield(ports), 30)
    received: list[bytearray] = [bytearray() for _ in seats]
    seen: list[tuple[int, float, str]] = []

    async def client(seat: int, port: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        conn = ClientConnection(game)
        writer.write(conn.initiate())
        while True:
            event = conn.next_event()
            if event is NEED_DATA:
                data = await reader.read(65536)
                received[seat] += data
                conn.receive_data(data)
                continue
            if not isinstance(event, StateMessage):
                break
            seen.append((seat, loop.time(), event.match_state.text))
            if event.my_turn:
                writer.write(conn.send_action(await answer(seat, event.match_state)))
        writer.close()

    tasks = [asyncio.ensure_future(client(s, p)) for s, p in enumerate(seats)]
    result = await asyncio.wait_for(dealer, 120)
    await asyncio.wait_for(asyncio.gather(*tasks), 30)
    return result, [bytes(r) for r in received], seen


def _sans_io_streams(game, hands: int, actions: dict[str, Action], seed: int = 5) -> list[bytes]:
    """What each seat is sent by the sans-IO match given the same answers."""
    from agent.protocol.dealer_state import DealerMatch, Send

    match = DealerMatch(game, num_hands=hands, seed=seed, names=[f"p{i}" for i in range(game.num_players)])
    streams = [bytearray() for _ in range(game.num_players)]
    outputs = match.start(0.0)
    while True:
        for out in outputs:
            if isinstance(out, Send):
                streams[out.seat] += out.data
        if match.over:
            return [bytes(s) for s in streams]
        text = match.owed_text.decode()
        outputs = match.receive_line(match.acting_seat, f"{text}:{actions[text].to_acpc(game.is_limit)}\r\n".encode(), 0.0)


@pytest.mark.parametrize("name", ["holdem.nolimit.2p.reverse_blinds", "kuhn.limit.3p"])
def test_every_seat_gets_every_message_byte_for_byte(name: str) -> None:
    game = load_game(name)
    rng = random.Random(3)
    chosen: dict[str, Action] = {}

    async def answer(seat: int, ms) -> Action:
        action = legalize(ms.state, rng.choice([Action.fold(), Action.call(), Action.raise_to(None), Action.raise_to(rng.randint(0, 20000))]))
        chosen[ms.text] = action
        return action

    result, received, _ = asyncio.run(_match_over_loopback(game, 60, answer))
    assert result.exit_status == 0 and result.hands_played == 60
    assert received == _sans_io_streams(game, 60, chosen)
