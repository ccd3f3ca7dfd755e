"""The ACPC dealer over TCP (or Unix sockets): a thin asyncio shell around :class:`agent.protocol.dealer_state.DealerMatch`.

What the shell adds to the sans-IO match (SPEC §1, §6.4, §7, §8):

* one listening socket per seat (127.0.0.1 unless another host is given; port 0 picks a
  free one; or a Unix socket per seat in a directory), the port line (or the paths) on stdout, each seat's listening socket closed once a client
  is accepted (later connections to it are refused), TCP_NODELAY on every connection;
* the header on stderr and in the log, the log flushed after every hand, WARNING and
  ERROR lines on stderr, the SCORE line on stdout (and stderr) when the match finishes;
* the clock: lines are taken from the seat the match waits for, one at a time, each wait
  bounded by the response limit. EOF, a reset or a read error is a lost connection. A
  client that vanishes while it is not its turn is noticed when it is next to act; writes
  to it are dropped instead of killing the dealer with SIGPIPE as the reference does;
* bounded buffers: a seat's unread input is capped (reading pauses, as the reference
  dealer simply does not read a seat that is not to act), and a client that stops reading
  is dropped once :data:`WRITE_BUFFER_LIMIT` bytes wait for it.

Design: each connection is an :class:`asyncio.Protocol` whose ``data_received`` feeds a
:class:`~agent.protocol.codec.LineBuffer` and pumps the match directly, so a response costs one
event-loop iteration and no task switch (the match is a ping-pong of short lines). One
timer per wait implements the response limit.
:meth:`Dealer.run` owns the servers, connections and log file and releases them on exit.

Cost per hand: a fast match's CPU goes to waking the three processes up in turn (each
write to a sleeping process wakes it, across CPUs on a virtual machine) and to Python per
line. Where the dealer may use one CPU only (``--cpus`` of ``pokerbot match``, or any
affinity of one CPU; :func:`hold_back_by_default`), the processes take turns on that CPU
and every copy sent to a seat that is not to act costs a switch for nothing: there a
step's messages are written only to the seat that must answer next, and every other
seat's are held back and go out with its next message, when it is to act (or all at the
end of the match, or once :data:`HELD_LINES` wait). Every seat still receives every
state, in order, and whoever must answer gets its state at once; the others read theirs
a little later. Heads-up, that is one write and one wake-up per action instead of two,
and no bare TCP acknowledgements (the answer carries them): 16 segments a hand instead
of 31 for ``call`` against ``call``. Writing every copy at once, the seat to act is
written to first, since the match waits for its wake-up (``call`` against ``call`` on two
vCPUs: about 8% more hands a second and 7% less CPU a hand than in seat order, five
pairs of ``bench/match_throughput.py``'s ``throughput`` run on each version in turn).
While a seat thinks, the dealer makes the answer to its call
(:meth:`~agent.protocol.dealer_state.DealerMatch.prepare_call`), so that an exact echoed
call within a hand is answered with bytes made in advance: the time from reading a
response to writing the next state fell from 12.9 to 9.9 µs on average (every action,
the hands' last calls included), and ``call`` against ``call`` on two vCPUs played a
median 3,131 hands a second against 2,908 at 0.601 ms of CPU a hand against 0.647
(eight interleaved pairs of runs, six of them faster). A hand's last call is read, and
ending the hand and dealing the next was the slowest step (29.1 µs of the match's own
Python against 2.2 for a call within a hand: ``bench/match_throughput.py``'s
``dealer_step_us``); so after each write the dealer also makes one piece of the hand's
end ahead (:meth:`~agent.protocol.dealer_state.DealerMatch.prepare_ahead`: the hands'
ranks, the next deal), which brings that step to 15.0 µs in the same run (over eleven
interleaved pairs of matches, 3,197 hands a second against 3,054 and 0.590 ms of CPU a
hand against 0.611, medians).
Log lines are written after the messages;
``pokerbot dealer`` runs on uvloop (:mod:`agent.eventloop`).

Deliberate differences from the reference dealer: the version line is waited for at
most ``--start-timeout`` (or the response limit), where the reference waits for ever; and,
when the dealer holds messages back, a seat that is not to act reads its copies of the
states when it is next to act.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, cast

from poker.game import Game

from .eventloop import CAN_POLL, POLLED_READS, SpinSetting, busy_read, resolve_spin
from .protocol.codec import DEALER_MAX_LINE, LineBuffer
from .protocol.dealer_state import DealerMatch, Diagnostic, LogLine, MatchOver, Output, PreparedCall, Send, TimeLimits

#: Unsent bytes one seat may hold before the dealer gives up on it (a client not reading).
WRITE_BUFFER_LIMIT = 1 << 20
#: Unread bytes one seat may hold before reading from it pauses.
READ_BUFFER_LIMIT = 1 << 16
#: Messages held back for a seat that is not to act before they are written anyway (a
#: seat that folded may not act again for a hand or two).
HELD_LINES = 64
#: Longest Unix socket path, bytes (Linux's sun_path holds 108 with its terminating NUL;
#: macOS's 104).
UNIX_PATH_MAX = 103


def seat_socket_paths(directory: Path, seats: int) -> list[Path]:
    """The Unix socket of each seat in ``directory`` (``seat1`` .. ``seatN``); raises
    ``ValueError`` (one line) where the system has no Unix sockets or a path would be
    too long for one."""
    if not hasattr(socket, "AF_UNIX"):
        raise ValueError("Unix sockets are not available on this system")
    paths = [directory / f"seat{s + 1}" for s in range(seats)]
    longest = max(len(os.fsencode(p)) for p in paths)
    if longest > UNIX_PATH_MAX:
        raise ValueError(f"{directory}: its socket paths would be {longest} bytes, too long for a Unix "
                         f"socket (at most {UNIX_PATH_MAX}); use a shorter directory")
    return paths


@dataclass(frozen=True)
class DealerConfig:
    """Everything one match needs. ``ports`` are per seat (0 = any free port), or empty."""

    game: Game
    num_hands: int
    seed: int
    names: tuple[str, ...]
    host: str = "127.0.0.1"
    ports: tuple[int, ...] = ()
    # Listen on Unix sockets in this directory (``seat1``, ``seat2``, ...) instead of TCP
    # ports: what ``pokerbot match`` uses, its dealer and players being on one machine.
    unix_dir: Path | None = None
    limits: TimeLimits = field(default_factory=TimeLimits)
    fixed_seats: bool = False
    duplicate: bool = False
    log_path: Path | None = None
    match_name: str = "match"
    game_file: str | None = None  # as the user gave it, for the header
    start_timeout: float | None = None  # seconds to wait for every seat to connect
    verbose: bool = False  # TO/FROM lines on stderr, as the reference dealer's default
    # After a line, poll this long for the next (agent.eventloop.busy_read); worth it only
    # when the clients are other processes and waking up is slow ("auto": where this
    # machine's probe says so, agent.eventloop.resolve_spin; ``pokerbot dealer`` decides so).
    spin_us: SpinSetting = 0.0
    # Hold a seat's messages back until it is to act (None: where the dealer may use one
    # CPU only, hold_back_by_default).
    hold_back: bool | None = None


def hold_back_by_default() -> bool:
    """Whether the dealer holds back the messages of seats not to act: where it may run
    on one CPU only (Linux affinity; elsewhere never).

    Measured on the 2-vCPU development VM, ``call`` against ``call`` (``python
    bench/match_throughput.py --quick``, three runs each way): all three processes on one
    CPU played 1,635 to 1,823 hands a second holding back against 1,164 to 1,184 writing
    every copy at once, at 0.56 to 0.59 ms of CPU a hand; spread over two idle CPUs,
    writing every copy at once was faster (2,372 to 2,380 hands a second with polling,
    1,302 to 1,388 without, against 1,939 to 2,100 and 1,005 to 1,266 holding back): a
    copy the seat reads while the other seat thinks keeps its CPU awake, and its next
    wake-up comes cheaper.
    """
    try:
        return len(os.sched_getaffinity(0)) == 1
    except (AttributeError, OSError):
        return False


@dataclass(frozen=True)
class DealerResult:
    """How a match ended: ``score`` is the SCORE line, ``None`` after an abort."""

    score: str | None
    hands_played: int
    totals: tuple[float, ...]

    @property
    def exit_status(self) -> int:
        """0 for a finished match, 1 for an aborted one (as the reference dealer)."""
        return 0 if self.score is not None else 1


class _SeatProtocol(asyncio.Protocol):
    """One seat's connection: frames its bytes into lines and tells the dealer."""

    def __init__(self, dealer: Dealer, seat: int) -> None:
        self.dealer = dealer
        self.seat = seat
        self.lines = LineBuffer(DEALER_MAX_LINE, cut_long_lines=True)
        self.transport: asyncio.Transport | None = None
        self.lost = False  # the dealer no longer writes to it
        self.reading_paused = False
        self.fd = -1  # the socket's descriptor, when the dealer polls

    def connection_made(self, base: asyncio.BaseTransport) -> None:
        transport = cast(asyncio.Transport, base)  # a stream transport (uvloop's too)
        if not self.dealer._take_seat(self.seat, self):
            transport.close()  # the seat is taken: only the first client plays it
            return
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):  # (a Unix socket has no such option)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.dealer._spin_s > 0:
                self.fd = sock.fileno()

    def data_received(self, data: bytes) -> None:
        self.received(data)
        if self.dealer._spin_s > 0:
            self.dealer._poll_awaited()

    def received(self, data: bytes) -> None:
        """Bytes from the client, whether the event loop or the dealer's polling read them."""
        lines = self.lines
        dealer = self.dealer
        if dealer._awaited == self.seat and lines.empty and lines.is_one_line(data):
            # The usual read: exactly the one response the match waits for.
            dealer._take_line(self.seat, data)
            return
        lines.feed(data)
        if lines.buffered > READ_BUFFER_LIMIT and self.transport is not None:
            self.transport.pause_reading()
            self.reading_paused = True
        self.dealer._pump(self.seat)

    def eof_received(self) -> bool:
        self._end()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._end()

    def _end(self) -> None:
        if not self.lines.at_eof:
            self.lines.feed(b"")
            self.dealer._pump(self.seat)

    def next_line(self) -> bytes | None:
        line = self.lines.next_line()
        if self.reading_paused and self.lines.buffered <= READ_BUFFER_LIMIT // 2 and self.transport is not None:
            self.reading_paused = False
            self.transport.resume_reading()
        return line

    def write(self, data: bytes) -> bool:
        """Queue ``data``; False if the connection is gone or hopelessly backed up."""
        t = self.transport
        if self.lost or t is None or t.is_closing():
            return False
        t.write(data)
        if t.get_write_buffer_size() > WRITE_BUFFER_LIMIT:
            t.abort()
            return False
        return True

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


class Dealer:
    """Runs one match on TCP sockets. Use :meth:`run` (or :func:`run_dealer`)."""

    def __init__(
        self,
        config: DealerConfig,
        *,
        stdout: IO[str] | None = None,
        stderr: IO[str] | None = None,
        on_ports: Callable[[list[int] | list[str]], None] | None = None,
    ) -> None:
        n = config.game.num_players
        if config.ports and len(config.ports) != n:
            raise ValueError(f"{len(config.ports)} ports given for {n} seats")
        self.config = config
        self.stdout = stdout if stdout is not None else sys.stdout
        self.stderr = stderr if stderr is not None else sys.stderr
        self.on_ports = on_ports
        self.match = DealerMatch(
            config.game,
            num_hands=config.num_hands,
            seed=config.seed,
            names=config.names,
            limits=config.limits,
            fixed_seats=config.fixed_seats,
            duplicate=config.duplicate,
            match_name=config.match_name,
            game_file=config.game_file,
        )
        self._seats: list[_SeatProtocol | None] = [None] * n
        self._outbox: list[list[bytes]] = [[] for _ in range(n)]  # per seat, not yet written
        self._seat_order = tuple(range(n))
        self._others = tuple(tuple(s for s in range(n) if s != a) for a in range(n))
        self._log: IO[str] | None = None
        self._score: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._all_connected: asyncio.Future[None] | None = None
        self._done: asyncio.Future[None] | None = None
        self._version_seat: int | None = None  # reading version lines: the seat to read
        self._playing = False
        self._pumping = False
        self._awaited: int | None = None  # while playing, the seat whose line the match needs
        self._prepared: PreparedCall | None = None  # the answer to its call, made ahead
        self._response_s = config.limits.response_ms / 1000
        self._wait_limit = self._response_s
        self._deadline = 0.0  # when the current wait for a line runs out
        self._timer: asyncio.TimerHandle | None = None
        #: How the dealer polls its seats (the probe's verdict for ``spin_us="auto"``).
        self.polling = resolve_spin(config.spin_us, unix=config.unix_dir is not None)
        self.hold_back = hold_back_by_default() if config.hold_back is None else config.hold_back
        self._spin_s = self.polling.spin_us * 1e-6 if CAN_POLL else 0.0

    # -- output

    def _err(self, text: str) -> None:
        self.stderr.write(text + "\n")
        self.stderr.flush()

    def _now(self) -> float:
        assert self._loop is not None
        return self._loop.time()

    def _carry_out(self, outputs: list[Output]) -> None:
        """Do what the match asked, in order; lost seats feed back into the match.

        Messages go to per-seat outboxes and are written (:meth:`_flush`) before the next
        diagnostic and at the end, so that a seat's consecutive messages (a hand's last
        state and the next hand's first) go out in one write. Log lines are written after
        the messages they follow: the clients need not wait for the log file.
        """
        outbox = self._outbox
        verbose = self.config.verbose
        log_lines: list[str] = []
        for out in outputs:
            if isinstance(out, Send):
                outbox[out.seat].append(out.data)
                if verbose:
                    self._err(f"TO {out.seat + 1} at {time.time():.6f} {out.data[:-1].decode('ascii')}")
                continue
            if isinstance(out, LogLine):
                log_lines.append(out.text)
                continue
            more = self._flush()
            if log_lines:
                self._write_log(log_lines)
            if isinstance(out, Diagnostic):
                self._err(out.text)
            elif isinstance(out, MatchOver):
                self._score = out.score
            if more:  # what the lost seats caused comes right after
                self._carry_out(more)
        more = self._flush()
        if log_lines:
            self._write_log(log_lines)
        if more:
            self._carry_out(more)

    def _write_log(self, lines: list[str]) -> None:
        """Append log lines and flush them (the log is flushed after every hand)."""
        if self._log is not None:
            self._log.write("".join([line + "\n" for line in lines]))
            self._log.flush()
        lines.clear()

    def _flush(self) -> list[Output]:
        """Write what must go out now: every outbox, or, holding back, the outbox of the
        seat to act (the match waits for it), and every outbox once the match is over.
        Another seat's held messages go out with its next message: a seat reads its
        states when it has to answer, so every action costs one write and one wake-up,
        not one per seat (:data:`HELD_LINES` bounds what is held)."""
        match = self.match
        acting = match.acting_seat
        outbox = self._outbox
        if self.hold_back and acting is not None and not match.over:
            more = self._write_outbox(acting, outbox[acting])
            for s in self._others[acting]:
                if len(outbox[s]) > HELD_LINES:
                    more += self._write_outbox(s, outbox[s])
            return more
        more = []
        if acting is not None and outbox[acting]:
            # the seat that must answer first: its wake-up starts one write sooner
            more += self._write_outbox(acting, outbox[acting])
        for s in self._seat_order:
            if outbox[s]:
                more += self._write_outbox(s, outbox[s])
        return more

    def _write_outbox(self, s: int, chunks: list[bytes]) -> list[Output]:
        """Write seat ``s``'s waiting messages in one write; what losing it caused."""
        if not chunks:
            return []
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        chunks.clear()
        seat = self._seats[s]
        assert seat is not None
        if seat.lost:
            return []
        if not seat.write(data):
            seat.lost = True
            return self.match.connection_lost(s, self._now())
        return []

    # -- connections

    def _take_seat(self, s: int, proto: _SeatProtocol) -> bool:
        if self._seats[s] is not None:
            return False
        self._seats[s] = proto
        done = self._all_connected
        if done is not None and not done.done() and all(p is not None for p in self._seats):
            done.set_result(None)
        return True

    # -- the match

    async def run(self) -> DealerResult:
        """Listen, print the ports, play the match; returns how it ended."""
        import poker.evaluator  # noqa: F401  (warm up before the first showdown, not during it)

        cfg = self.config
        loop = self._loop = asyncio.get_running_loop()
        self._all_connected = loop.create_future()
        self._done = loop.create_future()
        n = cfg.game.num_players
        ports = cfg.ports or (0,) * n
        servers: list[asyncio.Server] = []
        try:
            if cfg.log_path is not None:
                # opened first, so that an unwritable path fails before any port is printed
                self._log = open(cfg.log_path, "w", encoding="ascii", errors="replace")  # noqa: SIM115, ASYNC230
            bound: list[int] | list[str]
            if cfg.unix_dir is not None:
                paths = [str(p) for p in seat_socket_paths(cfg.unix_dir, n)]
                for s in range(n):
                    servers.append(await loop.create_unix_server(
                        lambda s=s: _SeatProtocol(self, s), paths[s]))  # type: ignore[misc]
                bound = paths
            else:
                for s in range(n):
                    servers.append(await loop.create_server(
                        lambda s=s: _SeatProtocol(self, s), cfg.host, ports[s]))  # type: ignore[misc]
                bound = [srv.sockets[0].getsockname()[1] for srv in servers]
            self.stdout.write(" ".join(map(str, bound)) + "\n")
            self.stdout.flush()
            if self.on_ports is not None:
                self.on_ports(bound)
            header = self.match.header()
            for line in header:
                self._err(line)
            if self._log is not None:
                self._log.write("".join(line + "\n" for line in header))
                self._log.flush()
            try:
                async with asyncio.timeout(cfg.start_timeout):
                    await self._all_connected
            except TimeoutError:
                missing = [s + 1 for s, p in enumerate(self._seats) if p is None]
                self._err(f"ERROR: seats {missing} did not connect within {cfg.start_timeout} s")
                return self._result()
            self._close_servers(servers)  # the reference closes a seat's socket once it is taken
            # Version lines, in seat order, then the hands: all driven by _pump.
            self._wait_limit = cfg.start_timeout if cfg.start_timeout is not None else self._response_s
            self._version_seat = 0
            self._start_wait(loop.time())
            self._pump(0)
            await self._done
            if self._score is not None:
                self.stdout.write(self._score + "\n")
                self.stdout.flush()
                self._err(self._score)
            return self._result()
        finally:
            if self._timer is not None:
                self._timer.cancel()
            self._close_servers(servers)
            for seat in self._seats:
                if seat is not None:
                    seat.close()
            if self._log is not None:
                self._log.close()

    def _close_servers(self, servers: list[asyncio.Server]) -> None:
        """Stop listening; a Unix socket's file goes too (nothing can connect to it then)."""
        for srv in servers:
            srv.close()
        if self.config.unix_dir is not None and servers:
            for path in seat_socket_paths(self.config.unix_dir, len(servers)):
                with contextlib.suppress(OSError):
                    path.unlink()
        servers.clear()

    def _result(self) -> DealerResult:
        return DealerResult(self._score, self.match.hands_played, tuple(self.match.totals))

    def _finish(self) -> None:
        self._awaited = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._done is not None and not self._done.done():
            self._done.set_result(None)

    def _wanted(self) -> int | None:
        """The seat whose next line the match needs."""
        if self._version_seat is not None:
            return self._version_seat
        return self.match.acting_seat if self._playing else None

    def _start_wait(self, now: float) -> None:
        """A new wait for a line begins: it may last the response limit (SPEC §7)."""
        self._deadline = now + self._wait_limit
        if self._timer is None:
            assert self._loop is not None
            self._timer = self._loop.call_at(self._deadline, self._on_timer)

    def _on_timer(self) -> None:
        # One timer per wait period: if lines came in meanwhile the deadline moved on, and
        # the timer just follows it (cheaper than a new timer for every response).
        self._timer = None
        if self.match.over and self._version_seat is None:
            return
        now = self._now()
        if now < self._deadline:
            assert self._loop is not None
            self._timer = self._loop.call_at(self._deadline, self._on_timer)
            return
        seat = self._wanted()
        if seat is None:
            return
        if self._version_seat is not None:
            self._err(f"ERROR: could not get version from seat {seat + 1}")
            self._version_seat = None
            self._finish()
            return
        self._carry_out(self.match.read_timed_out(seat, now))
        self._finish()

    def _pump(self, seat_with_data: int) -> None:
        """Feed the match every line it is waiting for that has arrived."""
        if self._pumping or seat_with_data != self._wanted():
            return  # a seat not being read just buffers (SPEC §6.3)
        self._pumping = True
        try:
            self._pump_lines()
        finally:
            self._pumping = False

    def _pump_lines(self) -> None:
        match = self.match
        seats = self._seats
        verbose = self.config.verbose
        loop = self._loop
        assert loop is not None
        while True:
            s = self._wanted()
            if s is None:
                return
            seat = seats[s]
            assert seat is not None
            line = seat.next_line()
            now = loop.time()
            if line is None:
                if not seat.lines.at_eof:
                    return  # wait for more data (or the timer)
                seat.lost = True
                if self._version_seat is not None:
                    self._err(f"ERROR: could not get version from seat {s + 1}")
                    self._version_seat = None
                    self._finish()
                    return
                self._carry_out(match.connection_lost(s, now))
                self._finish()
                return
            if verbose:
                self._err(f"FROM {s + 1} at {time.time():.6f} {line.decode('latin-1').rstrip(chr(10))}")
            if self._version_seat is not None:
                self._carry_out(match.receive_version(s, line))
                if match.over:
                    self._version_seat = None
                    self._finish()
                    return
                self._version_seat = s + 1 if s + 1 < len(seats) else None
                if self._version_seat is None:
                    self._playing = True
                    self._wait_limit = self._response_s
                    self._carry_out(match.start(now))
                    self._awaited = match.acting_seat
                    self._prepare_call()
                if match.over:
                    self._finish()
                    return
                self._start_wait(now)
            else:
                self._take_line(s, line, now)
            if match.over:
                return

    def _poll_awaited(self) -> None:
        """Read the awaited seat's next line straight away if it comes within the polling
        budget (:func:`agent.eventloop.busy_read`), a bounded number of times before the
        event loop runs again. Only the seat the match waits for is read, as the reference
        dealer reads; end of file and errors are left to the event loop."""
        seats = self._seats
        for _ in range(POLLED_READS):
            s = self._awaited
            if s is None:
                return
            seat = seats[s]
            if (
                seat is None
                or seat.fd < 0
                or seat.lost
                or seat.reading_paused
                or not seat.lines.empty
                or seat.transport is None
                or seat.transport.is_closing()  # its descriptor may be gone
            ):
                return
            data = busy_read(seat.fd, self._spin_s)
            if not data:
                return
            seat.received(data)

    def _take_line(self, s: int, line: bytes, now: float | None = None) -> None:
        """One line from seat ``s`` while playing (the seat the match waits for)."""
        match = self.match
        if now is None:
            assert self._loop is not None
            now = self._loop.time()
            if self.config.verbose:
                self._err(f"FROM {s + 1} at {time.time():.6f} {line.decode('latin-1').rstrip(chr(10))}")
        prepared = self._prepared
        if prepared is not None and line in prepared.lines and match.take_prepared(prepared, now):
            self._send_prepared(prepared)
        else:
            self._carry_out(match.receive_line(s, line, now))
        if match.over:
            self._awaited = None
            self._prepared = None
            self._finish()
            return
        self._awaited = match.acting_seat
        self._start_wait(now)
        self._prepare_call()

    def _prepare_call(self) -> None:
        """Make the answer to a call by the seat now awaited, while it thinks (see
        :meth:`DealerMatch.prepare_call`; not in verbose mode, whose lines the slow path
        writes), and a piece of the hand's end (:meth:`DealerMatch.prepare_ahead`)."""
        match = self.match
        self._prepared = None if self.config.verbose else match.prepare_call()
        match.prepare_ahead()

    def _send_prepared(self, prepared: PreparedCall) -> None:
        """Send a prepared call's messages: the seat to act first, as :meth:`_flush` would."""
        outbox = self._outbox
        box = outbox[prepared.seat]
        box.append(prepared.data)
        more = self._write_outbox(prepared.seat, box)
        for s, data in prepared.others:
            outbox[s].append(data)
        more += self._flush()
        if more:
            self._carry_out(more)


async def run_dealer(
    config: DealerConfig,
    *,
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
    on_ports: Callable[[list[int] | list[str]], None] | None = None,
) -> DealerResult:
    """Play one match as configured; ``on_ports`` is called once listening with the seats'
    ports, or their socket paths with ``config.unix_dir``."""
    return await Dealer(config, stdout=stdout, stderr=stderr, on_ports=on_ports).run()


def default_names(num_players: int) -> tuple[str, ...]:
    """``player1 .. playerN``."""
    return tuple(f"player{i + 1}" for i in range(num_players))


def parse_names(values: Sequence[str] | None, num_players: int) -> tuple[str, ...]:
    """Player names from ``--players`` (space- or comma-separated); extra names are ignored
    as the reference dealer ignores them; too few is an error."""
    if not values:
        return default_names(num_players)
    names = [n for v in values for n in v.split(",") if n]
    if len(names) < num_players:
        raise ValueError(f"{len(names)} player names given, the game needs {num_players}")
    return tuple(names[:num_players])


def stderr_tail(path: Path) -> str:
    """What a dealer's stderr file (or any process's) last said: its last ``ERROR`` line,
    else its last line; ``no output`` for an empty or missing file."""
    try:
        lines = [ln for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "no output"
    errors = [ln for ln in lines if ln.startswith("ERROR")]
    return (errors or lines or ["no output"])[-1]
