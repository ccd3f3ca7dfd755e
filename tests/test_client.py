"""The client: whatever a bot says is made legal; our client plays every shipped game
against our dealer without a single warning; deadlines, failures and EOF are handled.

The legality property is checked on 100,000 random decision points per shipped game
(random walks that fold, call, min-raise, raise at random and go all-in), each answered
with a random "bot output": every action kind, amounts far outside the legal range, or
not an action at all. A fixed seed per game; the walks mix policies so that capped
rounds, all-ins, short stacks and the 64-action limit are all reached.
"""

from __future__ import annotations

import asyncio
import io
import random
import statistics
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.bots import BOTS, CallBot, make_bot
from agent.client import (
    ClientError,
    MatchSummary,
    measure_decision_overhead,
    play_match,
)
from agent.dealer import DealerConfig, run_dealer
from agent.protocol.client_state import ClientConnection, StateMessage
from agent.protocol.codec import RemoteProtocolError, legalize
from poker.game import load_game, shipped_games
from poker.state import Action, ActionKind, State

DATA = Path(__file__).parent / "data" / "acpc"
STATES_PER_GAME = 100_000
_FOLD, _CALL, _RAISE = ActionKind.FOLD, ActionKind.CALL, ActionKind.RAISE


def _bot_output(rng: random.Random, state: State):
    """Something a careless bot might return here."""
    x = rng.random()
    if x < 0.2:
        return Action(_FOLD)
    if x < 0.35:
        return Action(_CALL)
    if x < 0.95:
        stack = state.game.stack[state.actor]
        amount = rng.choice([None, -5, 0, state.max_spent, state.max_spent + 1, rng.randint(-1000, 2 * min(stack, 10**6)),
                             10**12, state.raise_floor, state.raise_floor - 1, stack, stack + 1])
        return Action(_RAISE, amount)
    return rng.choice([None, "r200", 3, object()])


def _walk_states(game, count: int, rng: random.Random):
    """Yield ``count`` non-terminal states from random hands."""
    made = 0
    while True:
        state = State.new_hand(game)
        style = rng.random()  # per hand: how aggressive the walk is
        while state.actor is not None:
            yield state
            made += 1
            if made >= count:
                return
            lo = state.min_raise_to
            x = rng.random()
            if x < 0.08 and state.can_fold():
                state = state.fold()
            elif x < style and lo is not None:
                hi = state.max_raise_to
                y = rng.random()
                to = lo if y < 0.6 or game.is_limit else (hi if y < 0.7 else rng.randint(lo, hi))
                state = state.apply(Action(_RAISE, to))
            else:
                state = state.call()


@pytest.mark.parametrize("game_name", shipped_games())
def test_legalized_action_is_always_accepted(game_name: str) -> None:
    game = load_game(game_name)
    rng = random.Random(f"legalize {game_name}")
    seen = {"raise_refused": 0, "fold_refused": 0, "clamped": 0}
    for state in _walk_states(game, STATES_PER_GAME, rng):
        raw = _bot_output(rng, state)
        legal = legalize(state, raw)
        canonical = state.verify(legal)  # the property: never raises
        assert legal == canonical
        if isinstance(raw, Action):
            if raw.kind is _RAISE and legal.kind is _CALL:
                seen["raise_refused"] += 1
            elif raw.kind is _FOLD and legal.kind is _CALL:
                seen["fold_refused"] += 1
            elif raw.kind is _RAISE and raw.amount != legal.amount:
                seen["clamped"] += 1
            try:
                ok = state.verify(raw)
            except ValueError:
                continue
            assert legal == ok  # a legal answer is sent as it is
    assert all(seen.values()), seen  # every repair was exercised


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(shipped_games()), st.integers(0, 2**32 - 1), st.integers(-(10**6), 10**6))
def test_legalize_clamps_into_the_legal_range(game_name: str, seed: int, amount: int) -> None:
    game = load_game(game_name)
    rng = random.Random(seed)
    state = next(_walk_states(game, rng.randint(1, 12), rng), None)
    for state in _walk_states(game, rng.randint(1, 12), rng):
        pass
    legal = legalize(state, Action.raise_to(amount))
    if state.min_raise_to is None:
        assert legal == Action.call()
    else:
        assert state.min_raise_to <= legal.amount <= state.max_raise_to
        if state.min_raise_to <= amount <= state.max_raise_to and not game.is_limit:
            assert legal.amount == amount


# ---------------------------------------------------------------------------- end to end


async def _match(game, bots, hands: int, seed: int = 11) -> tuple:
    loop = asyncio.get_running_loop()
    ports: asyncio.Future[list[int]] = loop.create_future()
    err = io.StringIO()
    config = DealerConfig(game=game, num_hands=hands, seed=seed,
                          names=tuple(f"p{i}" for i in range(game.num_players)))
    dealer = asyncio.ensure_future(run_dealer(config, stdout=io.StringIO(), stderr=err, on_ports=ports.set_result))
    seats = await asyncio.wait_for(asyncio.shield(ports), 60)
    clients = [asyncio.ensure_future(play_match("127.0.0.1", port, bot, game)) for port, bot in zip(seats, bots)]
    result = await asyncio.wait_for(dealer, 120)
    summaries = await asyncio.wait_for(asyncio.gather(*clients), 60)
    return result, summaries, err.getvalue()


@pytest.mark.parametrize("game_name", shipped_games())
def test_our_client_against_our_dealer(game_name: str) -> None:
    game = load_game(game_name)
    names = sorted(BOTS)
    bots = [make_bot(names[(i + len(game_name)) % len(names)], i) for i in range(game.num_players)]
    for bot in bots:
        if hasattr(bot, "samples"):
            bot.samples = 50
    hands = 40
    result, summaries, err = asyncio.run(_match(game, bots, hands))
    assert result.exit_status == 0, err
    assert "WARNING" not in err and "ERROR" not in err  # our answers never need repairing
    assert all(s.hands == hands for s in summaries)
    assert [s.chips for s in summaries] == pytest.approx(list(result.totals))
    assert all(s.fallbacks == 0 for s in summaries)


class _Illegal:
    """Answers only what the rules refuse: a fold when checking is free, a raise where no
    raise is allowed, a no-limit raise to 1 chip (below the minimum), or no action at all.
    (A limit raise is sent as ``r`` whatever its amount, so a wrong one is no change.)"""

    def __init__(self) -> None:
        self.answers = 0

    def act(self, ms):
        self.answers += 1
        state = ms.state
        if not state.can_fold():
            return Action.fold()
        if state.min_raise_to is None:
            return Action.raise_to(1)
        if state.game.is_limit or self.answers % 2:
            return "not an action"
        return Action.raise_to(1)


class _LegalOfEveryKind:
    """Legal answers of every kind: fold, call, the minimum raise-to, and in a limit game
    a raise written without its amount (which is no change)."""

    def __init__(self) -> None:
        self.answers = 0

    def act(self, ms):
        self.answers += 1
        state = ms.state
        k = self.answers % 3
        if k == 0 and state.can_fold():
            return Action.fold()
        if k == 1 and state.min_raise_to is not None:
            return Action.raise_to(None if state.game.is_limit else state.min_raise_to)
        return Action.call()


@pytest.mark.parametrize("game_name", ["holdem.nolimit.2p.reverse_blinds", "holdem.limit.2p.reverse_blinds"])
def test_every_changed_answer_is_counted(game_name: str) -> None:
    """ClientConnection.legalized counts the answers legalize had to change, and no other."""
    from agent.protocol.dealer_state import DealerMatch, MatchOver, Send

    game = load_game(game_name)
    bots = [_Illegal(), _LegalOfEveryKind()]
    conns = [ClientConnection(game) for _ in bots]
    dealer = DealerMatch(game, num_hands=60, seed=3, names=("a", "b"))
    for seat, conn in enumerate(conns):
        dealer.receive_version(seat, conn.initiate())
    out = dealer.start(0.0)
    while not any(isinstance(o, MatchOver) for o in out):
        reply = None
        for o in out:
            if isinstance(o, Send):
                conn = conns[o.seat]
                conn.receive_data(o.data)
                while isinstance(event := conn.next_event(), StateMessage):
                    if event.my_turn:
                        reply = (o.seat, conn.send_action(bots[o.seat].act(event.match_state)))
        assert reply is not None
        out = dealer.receive_line(*reply, 0.0)
    assert not any(type(o).__name__ == "Diagnostic" for o in out)  # every answer was legal
    assert bots[0].answers > 50 and conns[0].legalized == bots[0].answers
    assert bots[1].answers > 50 and conns[1].legalized == 0


def test_the_summary_says_how_many_answers_were_legalized() -> None:
    game = load_game("holdem.nolimit.2p.reverse_blinds")
    illegal = _Illegal()
    result, (changed, plain), err = asyncio.run(_match(game, [illegal, CallBot()], hands=20))
    assert result.exit_status == 0 and "WARNING" not in err
    assert changed.legalized == illegal.answers > 0 and plain.legalized == 0
    assert str(changed).endswith(f", {illegal.answers} answers legalized")
    assert "legalized" not in str(plain)
    assert str(MatchSummary(hands=1, chips=1.0, big_blind=100, legalized=1)).endswith(", 1 answer legalized")


class _Failing:
    def __init__(self) -> None:
        self.calls = 0

    def act(self, ms):
        self.calls += 1
        if self.calls % 2:
            raise RuntimeError("bot bug")
        return Action.raise_to(10**9)


class _Slow:
    async def act(self, ms):
        await asyncio.sleep(0 if ms.hand_number % 2 else 5)
        return Action.raise_to(None)


def test_failing_and_slow_bots_fall_back_to_call() -> None:
    game = load_game("holdem.nolimit.2p.reverse_blinds")

    async def run():
        loop = asyncio.get_running_loop()
        ports: asyncio.Future[list[int]] = loop.create_future()
        err = io.StringIO()
        config = DealerConfig(game=game, num_hands=4, seed=1, names=("a", "b"))
        dealer = asyncio.ensure_future(run_dealer(config, stdout=io.StringIO(), stderr=err, on_ports=ports.set_result))
        a, b = await ports
        failing = play_match("127.0.0.1", a, _Failing(), game)
        slow = play_match("127.0.0.1", b, _Slow(), game, action_timeout=0.05)
        res = await asyncio.wait_for(asyncio.gather(failing, slow), 60)
        return await dealer, res, err.getvalue()

    result, (fa, sl), err = asyncio.run(run())
    assert result.exit_status == 0 and "WARNING" not in err
    assert fa.fallbacks > 0 and sl.fallbacks > 0 and fa.hands == sl.hands == 4


async def _fake_dealer(script):
    """A server that runs ``script(reader, writer)`` for one client; returns its port."""
    async def handle(reader, writer):
        try:
            await script(reader, writer)
        except (asyncio.CancelledError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


def test_client_protocol_and_connection_failures() -> None:
    game = load_game("holdem.nolimit.2p.reverse_blinds")

    async def garbage(reader, writer):
        await reader.readline()
        writer.write(b"MATCHSTATE:0:0::7d3d|\r\nTHIS IS NOT A STATE\r\n")
        await asyncio.sleep(0.5)

    async def resets(reader, writer):
        assert await reader.readline() == b"VERSION:2.0.0\r\n"
        writer.write(b"MATCHSTATE:1:0::|2hAc\r\n")
        assert await reader.readline() == b"MATCHSTATE:1:0::|2hAc:c\r\n"
        writer.transport.abort()

    async def one_hand(reader, writer):
        await reader.readline()
        writer.write(b"# hello\r\nMATCHSTATE:1:0::|2hAc\r\n")
        assert await reader.readline() == b"MATCHSTATE:1:0::|2hAc:c\r\n"
        writer.write(b"MATCHSTATE:1:0:c:|2hAc\r\nMATCHSTATE:1:0:cr200:|2hAc\r\n")
        assert await reader.readline() == b"MATCHSTATE:1:0:cr200:|2hAc:c\r\n"
        # the dealer says we folded (whatever we sent): its word is what counts
        writer.write(b"MATCHSTATE:1:0:cr200f:|2hAc\r\n")

    async def run():
        out = []
        for script in (garbage, resets, one_hand):
            server, port = await _fake_dealer(script)
            try:
                out.append(await asyncio.wait_for(play_match("127.0.0.1", port, CallBot(), game), 30))
            except Exception as exc:
                out.append(exc)
            server.close()
            await server.wait_closed()
        return out

    bad, reset, fine = asyncio.run(run())
    assert isinstance(bad, RemoteProtocolError) and "THIS IS NOT A STATE" in str(bad)
    assert isinstance(reset, (ClientError, MatchSummary))  # a reset after the answer may read as EOF
    if isinstance(reset, MatchSummary):
        assert reset.hands == 0
    assert fine == MatchSummary(hands=1, chips=-100.0, big_blind=100)
    assert str(fine) == "hands 1, chips -100, -1000.0 mbb/g"


def test_connection_refused_is_a_client_error() -> None:
    async def run():
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        return await play_match("127.0.0.1", port, CallBot(), load_game("kuhn.limit.2p"))

    with pytest.raises(ClientError, match="cannot connect"):
        asyncio.run(run())


def test_decision_overhead_excludes_the_bot() -> None:
    """measure_decision_overhead (the benchmark's client figure) charges one cost per
    decision answered and leaves the bot's own time out: a bot that burns 2 ms of CPU
    per decision does not show in it. (How small the client's cost is, is measured by
    bench/match_throughput.py, not asserted here.)"""
    game = load_game("holdem.nolimit.2p.reverse_blinds")
    lines = []
    for seat in (1, 2):
        path = DATA / "transcripts" / f"holdem.nolimit.2p.reverse_blinds.spy_vs_example.seat{seat}.txt"
        lines += [row[4:].encode() + b"\r\n" for row in path.read_text().splitlines() if row.startswith("S-> ")]
    lines = lines[:400]

    class Burner(CallBot):
        calls = 0

        def act(self, ms):
            Burner.calls += 1
            end = time.thread_time() + 0.002
            while time.thread_time() < end:
                pass
            return super().act(ms)

    conn = ClientConnection(game)
    conn.initiate()
    owed = 0
    for line in lines:
        conn.receive_data(line)
        while isinstance(event := conn.next_event(), StateMessage):
            if event.my_turn:
                owed += 1
                conn.send_action(Action.call())
    costs = measure_decision_overhead(game, lines, Burner())
    assert len(costs) == owed == Burner.calls > 50
    assert all(c >= 0 for c in costs)
    assert statistics.median(costs) < 0.001  # the bot's 2 ms are not in it
