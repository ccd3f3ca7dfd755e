"""Match throughput and client overhead.

1. Hands per second of a full ``pokerbot match`` on heads-up no-limit: our dealer and two
   bot processes talking over loopback sockets, with ``call`` bots and with ``random``
   bots. Each is run at two lengths; the steady-state rate is the difference in hands over
   the difference in wall time, which removes process start-up (Python + numba import) from
   the figure. The plain rate of the longer run is printed too. Then the same matches
   with every process on one CPU (``pokerbot match --cpus``, keys ``*_one_cpu``), and
   with ``call`` bots and no process polling its socket before it sleeps (``--spin-us 0``,
   key ``hands_per_s_call_no_polling``, and the ratio ``polling_speedup_call``), and
   every process polling (``--spin-us 100``, key ``hands_per_s_call_polling``, ratio
   ``polling_speedup_call_forced``). The default, ``--spin-us auto``, polls where this
   machine's probe says it pays; ``polling_auto`` is that probe's verdict here over
   loopback TCP, ``polling_auto_unix`` over a Unix socket pair
   (:func:`agent.eventloop.choose_polling`). The match's processes talk over Unix
   sockets by default (``pokerbot match --transport unix``); ``*_call_tcp`` is the
   ``call`` match over loopback TCP instead, run right after the default one so that
   the two share the machine's mood, and ``transport_speedup_call`` and
   ``cpu_ratio_call_unix_to_tcp`` compare them.

   Beside each rate, ``cpu_ms_per_hand_*``: the CPU time of the dealer and both players
   per hand, from the operating system's accounting (the user and system time of the
   match process's children, read from ``/proc`` before the match process is reaped;
   Linux only, else ``null``), as a steady state over the two lengths (start-up removed)
   and, ``*_plain``, the longer run's total over its hands (start-up included).
   ``cpu_ms_per_hand_split_*``: the same steady state for the dealer and for each player
   on its own (``call`` bots: by default, on one CPU, without polling), from the match's
   ``--json`` report ``cpu_s`` (each process's CPU as it is reaped; POSIX).
2. For reference, the round trip of a short line between two processes over loopback TCP
   (``loopback_round_trip_us``): ``any_cpu`` and ``one_cpu`` with each receiver sleeping
   until its line comes, ``any_cpu_polling`` with both polling for the default budget
   first (:func:`agent.eventloop.busy_read`). Every action of a match has such a round
   trip on its critical path; polling avoids the sleep, and so the wake-up, which is what
   makes a round trip across CPUs slow on a virtual machine. ``loopback_round_trip_cpu_us``:
   the CPU time of both processes per round trip (Linux; ``null`` elsewhere), the floor
   under a match's CPU per hand that no protocol code can go below.
3. With ``--reference DIR`` (a built ACPC reference server, ``project_acpc_server``: its
   ``dealer`` and ``example_player``), the same steady state for the reference programs
   on this machine (key ``reference``): the reference dealer with its two example players
   (random: fold 6%, call and raise 47% each, as in the reference's own measurement), and
   the reference dealer with our two ``call`` bots, split by process, so that our dealer's
   CPU a hand can be set against the reference dealer's on the same traffic
   (``dealer_cpu_ratio``), and ours in all against the reference's with its example
   players (``cpu_ratio_call_to_reference_example``: a figure that travels between
   machines better than either time). Without it, ``reference`` is ``null``.
4. The client's own CPU time per decision, excluding the bot: the sans-IO client is fed
   the dealer lines of a recorded reference match and answers every owed state with a
   call; each decision is charged for reading every line since the previous one, then
   legalizing and formatting its answer.
5. The dealer's own work per response in one process (``dealer_step_us``): a call
   within a hand, and a hand's last call (ending the hand, its log line, the next deal)
   as it comes and with the hand's end made ahead, compared in the same run
   (``hand_ending_ratio_ahead``).

Prints one JSON object as its last line. ``--quick`` takes about a minute.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.bots import CallBot  # noqa: E402
from agent.client import measure_decision_overhead  # noqa: E402
from agent.eventloop import DEFAULT_SPIN_US, busy_read, choose_polling  # noqa: E402
from agent.protocol.dealer_state import DealerMatch  # noqa: E402
from poker.game import load_game  # noqa: E402

GAME = "holdem.nolimit.2p.reverse_blinds"
TRANSCRIPT = ROOT / "tests" / "data" / "acpc" / "transcripts" / (
    "holdem.nolimit.2p.reverse_blinds.example_vs_example.seat1.txt"
)


def _process_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) of the running process ``pid`` so far: ``utime +
    stime`` in ``/proc/<pid>/stat`` (Linux; ``None`` elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # fields 14 and 15 of proc(5)


def _children_cpu(pid: int) -> float | None:
    """CPU seconds (user + system) of the exited, not yet reaped process ``pid``'s reaped
    children: ``cutime + cstime`` in ``/proc/<pid>/stat`` (Linux; ``None`` elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[13]) + int(fields[14])) / ticks  # fields 16 and 17 of proc(5)


def run_match(
    bot: str, hands: int, workdir: Path, cpus: str | None = None, extra: tuple[str, ...] = ()
) -> tuple[float, float | None, dict[str, Any] | None]:
    """Wall seconds of one ``pokerbot match`` with two copies of ``bot`` (on ``cpus``), the
    CPU seconds of its dealer and players (:func:`_children_cpu`; ``None`` if unknown),
    and the match's own ``cpu_s`` report (each process's CPU seconds)."""
    log = workdir / f"{bot}.{hands}.log"
    cmd = [sys.executable, "-m", "agent", "match", GAME, "--players", bot, bot,
           "--hands", str(hands), "--seed", "1", "--log", str(log), "--json", "--quiet"]
    if cpus is not None:
        cmd += ["--cpus", cpus]
    cmd += list(extra)
    err_path = workdir / f"{bot}.{hands}.stderr"
    t0 = time.perf_counter()
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=err)
        assert proc.stdout is not None
        stdout = proc.stdout.read().decode()  # until the match exits (only it holds the pipe)
        proc.stdout.close()
        cpu = None
        if hasattr(os, "waitid"):
            # Wait for the exit without reaping it: /proc still holds its children's times.
            os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
            cpu = _children_cpu(proc.pid)
        proc.wait()
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"match failed ({proc.returncode}): {err_path.read_text().strip()[-500:]}")
    result = json.loads(stdout.strip().splitlines()[-1])
    if result["hands"] != hands:
        raise SystemExit(f"match played {result['hands']} hands, expected {hands}")
    return elapsed, cpu, result.get("cpu_s")


def _split_ms(short: dict[str, Any] | None, long: dict[str, Any] | None, hands: int) -> dict[str, Any] | None:
    """Steady-state CPU milliseconds per hand of the dealer and of each player, from the
    two matches' ``cpu_s`` reports (``hands`` more in the long one; ``None`` if unknown)."""
    if not short or not long or short["dealer"] is None or long["dealer"] is None:
        return None
    players = [None if a is None or b is None else round(1e3 * (b - a) / hands, 3)
               for a, b in zip(short["players"], long["players"])]  # fmt: skip
    return {"dealer": round(1e3 * (long["dealer"] - short["dealer"]) / hands, 3), "players": players}


def throughput(
    bot: str, short: int, long: int, workdir: Path, cpus: str | None = None, extra: tuple[str, ...] = ()
) -> dict[str, float | None]:
    """Steady-state and plain hands/s for ``bot`` vs ``bot``, the same for the CPU
    milliseconds per hand of the dealer and players (``None`` where unknown), and the
    steady state's split between the processes (``split``)."""
    t_short, cpu_short, split_short = run_match(bot, short, workdir, cpus, extra)
    t_long, cpu_long, split_long = run_match(bot, long, workdir, cpus, extra)
    steady = (long - short) / max(t_long - t_short, 1e-9)
    cpu_steady = cpu_plain = None
    if cpu_short is not None and cpu_long is not None:
        cpu_steady = 1e3 * (cpu_long - cpu_short) / (long - short)
        cpu_plain = 1e3 * cpu_long / long
    return {"steady": steady, "plain": long / t_long, "startup_s": t_short - short / steady,
            "cpu_ms": cpu_steady, "cpu_ms_plain": cpu_plain, "split": _split_ms(split_short, split_long, long - short)}


def reference_match(
    ref_dir: Path, hands: int, workdir: Path, players: str
) -> tuple[float, list[float], list[float]]:
    """Wall seconds of one match of the reference ``dealer`` in ``ref_dir`` (quiet, with its
    log) against two ``example_player`` processes (``players="example"``) or two of our
    ``call`` bots (``"call"``), and the CPU seconds of the dealer and of each player, in
    all and in the kernel (``os.wait4``; POSIX)."""
    game_file = ROOT / "poker" / "games" / f"{GAME}.game"
    err = open(workdir / f"reference.{players}.{hands}.stderr", "wb")  # noqa: SIM115 - closed below
    t0 = time.perf_counter()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        dealer = subprocess.Popen([str(ref_dir / "dealer"), str(workdir / f"reference.{players}"), str(game_file),
                                   str(hands), "1", "a", "b", "-q"], stdout=subprocess.PIPE, stderr=err)
        procs.append(dealer)
        assert dealer.stdout is not None
        ports = dealer.stdout.readline().split()
        if len(ports) != 2:
            raise SystemExit(f"the reference dealer printed no ports: see {err.name}")
        if players == "example":
            cmds = [[str(ref_dir / "example_player"), str(game_file), "127.0.0.1", port.decode()] for port in ports]
        else:
            cmds = [[sys.executable, "-m", "agent", "play", "--host", "127.0.0.1", "--port", port.decode(),
                     "--bot", "call", "--game", GAME] for port in ports]
        for cmd in cmds:
            procs.append(subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err))
        dealer.stdout.read()  # the SCORE line, until the dealer exits
        dealer.stdout.close()
        cpu, system = [], []
        for proc in procs:
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            if proc.returncode != 0:
                raise SystemExit(f"reference match failed ({proc.args[0]}: {proc.returncode}): see {err.name}")
            cpu.append(usage.ru_utime + usage.ru_stime)
            system.append(usage.ru_stime)
    finally:
        for proc in procs:  # a failed match leaves no process behind
            if proc.returncode is None:
                proc.kill()
                proc.wait()
        err.close()
    return time.perf_counter() - t0, cpu, system


def reference_throughput(ref_dir: Path, short: int, long: int, workdir: Path, players: str) -> dict[str, Any]:
    """Steady-state hands/s and CPU milliseconds a hand of the reference dealer against
    ``players`` (:func:`reference_match`), in all, split by process, and the share of it
    spent in the kernel (``system_share``)."""
    t_short, cpu_short, sys_short = reference_match(ref_dir, short, workdir, players)
    t_long, cpu_long, sys_long = reference_match(ref_dir, long, workdir, players)
    per_hand = [1e3 * (b - a) / (long - short) for a, b in zip(cpu_short, cpu_long)]
    system = sum(sys_long) - sum(sys_short)
    return {"hands_per_s": round((long - short) / max(t_long - t_short, 1e-9), 1),
            "cpu_ms_per_hand": round(sum(per_hand), 3),
            "cpu_ms_per_hand_split": {"dealer": round(per_hand[0], 3), "players": [round(x, 3) for x in per_hand[1:]]},
            "system_share": round(system / max(sum(cpu_long) - sum(cpu_short), 1e-9), 2)}


def _receive(sock: socket.socket, budget_s: float) -> bytes:
    """What the non-blocking ``sock`` delivers next: polled for ``budget_s`` first
    (:func:`agent.eventloop.busy_read`), then waited for asleep."""
    data = busy_read(sock.fileno(), budget_s)
    if data is None:
        select.select([sock], [], [])
        data = sock.recv(4096)
    return data


def echo(port: int, poll_us: float) -> None:
    """The other end of :func:`round_trip_us` (``--echo PORT POLL_US``): send back what
    comes, until end of file."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        while data := _receive(sock, poll_us * 1e-6):
            sock.sendall(data)


def round_trip_us(trips: int, cpu: str | None = None, poll_us: float = 0.0) -> tuple[float, float | None]:
    """Mean microseconds for a 60-byte line to go to an echo process over loopback TCP and
    back (both processes on CPU ``cpu`` if given), and the CPU microseconds both processes
    spent per round trip (``None`` where ``/proc`` is missing); each side polls for
    ``poll_us`` before it sleeps (:func:`agent.eventloop.busy_read`)."""
    saved = os.sched_getaffinity(0) if cpu is not None else None
    if cpu is not None:
        os.sched_setaffinity(0, {int(cpu)})  # the echo process inherits it
    try:
        with socket.create_server(("127.0.0.1", 0)) as server:
            port = str(server.getsockname()[1])
            child = subprocess.Popen([sys.executable, __file__, "--echo", port, str(poll_us)], cwd=ROOT)
            conn, _ = server.accept()
        with conn:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.setblocking(False)
            line = b"x" * 59 + b"\n"
            budget = poll_us * 1e-6

            def trip() -> None:
                conn.sendall(line)
                got = 0
                while got < len(line):
                    got += len(_receive(conn, budget))

            for _ in range(trips // 10):  # warm up
                trip()
            child_cpu0, cpu0 = _process_cpu(child.pid), time.process_time()
            t0 = time.perf_counter()
            for _ in range(trips):
                trip()
            elapsed = time.perf_counter() - t0
            own_cpu, child_cpu1 = time.process_time() - cpu0, _process_cpu(child.pid)
        child.wait(timeout=10)
    finally:
        if saved is not None:
            os.sched_setaffinity(0, saved)
    # the child's CPU comes in clock ticks (10 ms): thousands of trips keep that small
    both = None if child_cpu0 is None or child_cpu1 is None else own_cpu + child_cpu1 - child_cpu0
    return elapsed / trips * 1e6, None if both is None else both / trips * 1e6


def dealer_steps(hands: int) -> dict[str, float]:
    """Microseconds of the dealer's own work per response, in one process (no sockets):
    a ``call`` match's responses fed to :class:`DealerMatch`, the calls within a hand and
    the hands' last calls apart, once as they come and once with the hand's end made
    ahead between responses (:meth:`DealerMatch.prepare_ahead`, as the dealer does while
    a seat thinks; its own cost per call is ``prepare_ahead_us``), on the same deals."""
    game = load_game(GAME)
    out: dict[str, float] = {}
    for ahead in (False, True):
        match = DealerMatch(game, num_hands=hands, seed=1, names=["a", "b"])
        match.start(0.0)
        within = ending = spent_ahead = 0.0
        n_within = n_ending = 0
        clock = time.perf_counter
        while (seat := match.acting_seat) is not None:
            played = match.hands_played
            line = match.owed_text + b":c\r\n"
            t0 = clock()
            match.receive_line(seat, line, 0.0)
            dt = clock() - t0
            if match.hands_played != played:
                ending, n_ending = ending + dt, n_ending + 1
            else:
                within, n_within = within + dt, n_within + 1
            if ahead:
                t0 = clock()
                match.prepare_ahead()
                spent_ahead += clock() - t0
        key = "_ahead" if ahead else ""
        out[f"within_hand_call_us{key}"] = round(1e6 * within / n_within, 2)
        out[f"hand_ending_call_us{key}"] = round(1e6 * ending / n_ending, 2)
        if ahead:
            out["prepare_ahead_us"] = round(1e6 * spent_ahead / (n_within + n_ending), 2)
    out["hand_ending_ratio_ahead"] = round(out["hand_ending_call_us_ahead"] / out["hand_ending_call_us"], 3)
    return out


def client_overhead(decisions: int) -> list[float]:
    """Microseconds per decision of the sans-IO client (:func:`agent.client.measure_decision_overhead`:
    reading every line since the previous decision, legalizing, formatting; the bot excluded)."""
    game = load_game(GAME)
    lines = [ln[4:].encode() + b"\r\n" for ln in TRANSCRIPT.read_text().splitlines() if ln.startswith("S-> ")]
    bot = CallBot()
    samples: list[float] = []
    measure_decision_overhead(game, lines, bot)  # warm up
    while len(samples) < decisions:
        samples += [c * 1e6 for c in measure_decision_overhead(game, lines, bot)]
    return samples[:decisions]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter matches: about a minute")
    parser.add_argument("--reference", type=Path, metavar="DIR",
                        help="a built ACPC reference server (its dealer and example_player): measure it too")
    parser.add_argument("--echo", nargs=2, metavar=("PORT", "POLL_US"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo:
        echo(int(args.echo[0]), float(args.echo[1]))
        return
    short, long = (200, 5000) if args.quick else (1000, 20000)
    if args.reference is not None:
        missing = [name for name in ("dealer", "example_player") if not os.access(args.reference / name, os.X_OK)]
        if missing:
            parser.error(f"--reference {args.reference}: no executable {' or '.join(missing)} there "
                         "(build the reference server with make)")
    one_cpu = str(min(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity") else None
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        call = throughput("call", short, long, work)
        call_tcp = throughput("call", short, long, work, None, ("--transport", "tcp"))
        rand = throughput("random", short, long, work)
        # The same matches with every process on one CPU (pokerbot match --cpus)
        call_1 = throughput("call", short, long, work, one_cpu) if one_cpu else None
        rand_1 = throughput("random", short, long, work, one_cpu) if one_cpu else None
        # and with no process polling its socket before it sleeps (--spin-us 0), and all polling
        call_0 = throughput("call", short, long, work, None, ("--spin-us", "0"))
        call_p = throughput("call", short, long, work, None, ("--spin-us", f"{DEFAULT_SPIN_US:g}"))
        reference = None
        if args.reference is not None:
            ref_example = reference_throughput(args.reference, short, long, work, "example")
            ref_call = reference_throughput(args.reference, short, long, work, "call")
            ours_dealer = call["split"]["dealer"] if call["split"] else None
            reference = {
                "example_players": ref_example,
                "call_bots": ref_call,
                "dealer_cpu_ratio": None if ours_dealer is None else
                round(ours_dealer / ref_call["cpu_ms_per_hand_split"]["dealer"], 2),
                "cpu_ratio_call_to_reference_example": None if call["cpu_ms"] is None else
                round(call["cpu_ms"] / ref_example["cpu_ms_per_hand"], 2),
            }
    trips = 5_000 if args.quick else 20_000
    trip_runs = {"any_cpu": round_trip_us(trips), "any_cpu_polling": round_trip_us(trips, poll_us=DEFAULT_SPIN_US)}
    if one_cpu is not None:
        trip_runs["one_cpu"] = round_trip_us(trips, one_cpu)
    rtt = {key: round(wall, 1) for key, (wall, _) in trip_runs.items()}
    rtt_cpu = {key: None if cpu is None else round(cpu, 1) for key, (_, cpu) in trip_runs.items()}
    overhead = client_overhead(20_000 if args.quick else 200_000)
    steps = dealer_steps(2_000 if args.quick else 20_000)

    def ms(value: float | None) -> float | None:
        return None if value is None else round(value, 3)

    result = {
        "hands_per_s_call": round(call["steady"], 1),
        "hands_per_s_random": round(rand["steady"], 1),
        "hands_per_s_call_plain": round(call["plain"], 1),
        "hands_per_s_random_plain": round(rand["plain"], 1),
        "hands_per_s_call_one_cpu": None if call_1 is None else round(call_1["steady"], 1),
        "hands_per_s_random_one_cpu": None if rand_1 is None else round(rand_1["steady"], 1),
        "one_cpu": one_cpu,
        "hands_per_s_call_no_polling": round(call_0["steady"], 1),
        "polling_speedup_call": round(call["steady"] / call_0["steady"], 2),
        "hands_per_s_call_polling": round(call_p["steady"], 1),
        "polling_speedup_call_forced": round(call_p["steady"] / call_0["steady"], 2),
        "polling_auto": choose_polling().to_json(),
        "polling_auto_unix": choose_polling(unix=True).to_json(),
        "hands_per_s_call_tcp": round(call_tcp["steady"], 1),
        "cpu_ms_per_hand_call_tcp": ms(call_tcp["cpu_ms"]),
        "cpu_ms_per_hand_split_call_tcp": call_tcp["split"],
        "transport_speedup_call": round(call["steady"] / call_tcp["steady"], 2),
        "cpu_ratio_call_unix_to_tcp": None if call["cpu_ms"] is None or call_tcp["cpu_ms"] is None else
        round(call["cpu_ms"] / call_tcp["cpu_ms"], 3),
        "cpu_ms_per_hand_call": ms(call["cpu_ms"]),
        "cpu_ms_per_hand_random": ms(rand["cpu_ms"]),
        "cpu_ms_per_hand_call_plain": ms(call["cpu_ms_plain"]),
        "cpu_ms_per_hand_random_plain": ms(rand["cpu_ms_plain"]),
        "cpu_ms_per_hand_call_one_cpu": None if call_1 is None else ms(call_1["cpu_ms"]),
        "cpu_ms_per_hand_random_one_cpu": None if rand_1 is None else ms(rand_1["cpu_ms"]),
        "cpu_ms_per_hand_call_no_polling": ms(call_0["cpu_ms"]),
        "cpu_ms_per_hand_call_polling": ms(call_p["cpu_ms"]),
        "cpu_ms_per_hand_split_call": call["split"],
        "cpu_ms_per_hand_split_call_one_cpu": None if call_1 is None else call_1["split"],
        "cpu_ms_per_hand_split_call_no_polling": call_0["split"],
        "startup_s": round(call["startup_s"], 2),
        "reference": reference,
        "loopback_round_trip_us": rtt,
        "loopback_round_trip_cpu_us": rtt_cpu,
        "client_overhead_us_median": round(statistics.median(overhead), 2),
        "dealer_step_us": steps,
        "client_overhead_us_p90": round(statistics.quantiles(overhead, n=10)[-1], 2),
        "hands": {"short": short, "long": long},
        "game": GAME,
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "quick": args.quick,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
