"""``pokerbot match``: our dealer and one bot process per seat on this machine, one command.

The processes talk over Unix sockets in a private temporary directory where the system
has them (``--transport unix``, the default; ``tcp`` for loopback TCP as with any other
ACPC dealer or client): the same bytes for less of the kernel's work than loopback TCP
(``pokerbot dealer --unix``, ``pokerbot play --unix``).

Each player is a spec (:class:`agent.players.PlayerSpec`) parsed once; the match process
opens each strategy file once (:func:`agent.players.open_for_play`: the game checked,
``--tables auto`` built into the cache) before anything starts, and each seat's
``pokerbot play`` process gets the spec on its command line. After the match, each
strategy player's winnings are also estimated by AIVAT (:mod:`solver.evaluation.aivat`)
from the match's own hands, with the opened player's own translated policy (its
translation, purification and bucket tables); by default with ``--json`` (``--aivat`` /
``--no-aivat``). Each strategy player's entry also says how many of its actions it
repaired to make them legal and how many the client had to legalize after it.

``--json`` also gives the CPU time of the dealer and of each seat's process (``cpu_s``),
from the operating system's accounting of each child as it is reaped.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

try:
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]

from poker.game import Game, load_game
from poker.log import MatchLog, parse_log
from solver.play.policy import TranslatedPolicy

from ..dealer import seat_socket_paths, stderr_tail
from ..players import PlayerSpec, open_for_play
from ..progress import Progress
from ..results import deal_means, hands_per_pass, match_results, mean_ci95
from ..strategy_player import StrategyPlayer
from .options import (
    UserError,
    add_mqtt_options,
    add_resolve_options,
    add_spin_option,
    mqtt_config,
    resolve_spec,
    spin_choice,
)
from .strategy_tables import add_tables_option

if TYPE_CHECKING:
    from solver.resolve.player import ResolveOptions


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``match`` subcommand."""
    p = sub.add_parser(
        "match",
        help="play a match between bots: dealer + one process per seat on this machine",
        description=(
            "Start our ACPC dealer and one 'pokerbot play' process per seat, talking over Unix "
            "sockets (or loopback TCP); wait for the match and report, per player, the hands, chips "
            "won and mbb/g with a 95% confidence interval (over duplicate deals with "
            "--duplicate)."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  pokerbot match holdem.nolimit.2p.reverse_blinds --players equity random --hands 1000 --seed 1\n"
            "  pokerbot match leduc.limit.2p --players raise call --hands 5000 --seed 7 --duplicate --json\n"
            "  pokerbot match holdem.nolimit.3p --players call random allin --hands 300 --seed 3\n"
            "  pokerbot match leduc.nolimit.2p --players strategy:strategies/leduc.nolimit.2p.strategy call \\\n"
            "      --hands 20000 --duplicate --json\n"
            "A strategy:FILE player's entry also gets AIVAT's lower-variance estimate of its winnings\n"
            "(as 'pokerbot eval aivat LOG --strategy FILE' gives; with --duplicate the intervals are\n"
            "over deals), or the reason there is none: by default with --json, --aivat adds it to the\n"
            "text report, --no-aivat skips it. It also counts the player's own actions repaired to be\n"
            "legal (translation.repaired: min_raise, all_in, fold_to_check, raise_to_call) and those\n"
            "the client still had to legalize (legalized; the text report says them when nonzero)."
        ),
    )
    p.add_argument("game", help="a shipped game name or a .game file")
    p.add_argument("--players", nargs="+", required=True, metavar="BOT",
                   help="one bot per seat, in seat order: a bot name (see 'pokerbot play --help') "
                        "or strategy:FILE, a strategy file written by 'pokerbot train'")
    p.add_argument("--hands", type=int, required=True, metavar="N", help="hands (per pass with --duplicate)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="card seed (bots' seeds derive from it)")
    p.add_argument("--duplicate", action="store_true",
                   help="replay every deal with the seats rotated; the interval is over deals")
    p.add_argument("--common-draws", action=argparse.BooleanOptionalAction, default=True,
                   help="with --duplicate, strategy players share one seed and key their random "
                        "choices by the deal, so that whoever sits in a seat draws what that seat "
                        "drew on the same deal in the other passes: where the players play alike "
                        "the passes cancel (default: on; bots draw from their own seeds either way)")
    p.add_argument("--log", type=Path, metavar="FILE",
                   help="hand log (default matches/<game>.<seed>.log)")
    add_tables_option(p, "cached")
    add_resolve_options(p, flag=False)
    p.add_argument("--aivat", action=argparse.BooleanOptionalAction, default=None,
                   help="estimate strategy players' winnings by AIVAT after the match (default: "
                        "with --json only; on the full deck it takes some tens of milliseconds a hand)")
    add_mqtt_options(p)
    p.add_argument("--watch", action="store_true",
                   help="write every player's decisions beside the log (LOG's name.playerN.events.jsonl) "
                        "so that 'pokerbot web' shows the match live")
    add_spin_option(p)
    p.add_argument("--cpus", metavar="LIST",
                   help="run the dealer and every player on these CPUs only, e.g. 0 or 0,1 or 0-3 "
                        "(Linux), to keep matches that run side by side apart")
    p.add_argument("--transport", choices=TRANSPORTS, default=DEFAULT_TRANSPORT,
                   help="how the dealer and the players talk: Unix sockets in a private temporary "
                        f"directory, or loopback TCP as with any ACPC dealer (default {DEFAULT_TRANSPORT})")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


#: ``--transport`` choices; Unix sockets where the system has them.
TRANSPORTS = ("unix", "tcp")
DEFAULT_TRANSPORT = "unix" if hasattr(socket, "AF_UNIX") else "tcp"


@contextlib.contextmanager
def _socket_dir(transport: str, seats: int) -> Iterator[Path | None]:
    """A private directory for the match's Unix sockets (removed afterwards), or ``None``
    for TCP; ``unix`` where the system has no Unix sockets, or where the temporary
    directory's path is too long for one, is refused in one line."""
    if transport != "unix":
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="pokerbot-") as tmp:  # mode 0700: only this user connects
        try:
            seat_socket_paths(Path(tmp), seats)
        except ValueError as exc:
            raise UserError(f"--transport unix: {exc}; or use --transport tcp") from None
        yield Path(tmp)


def parse_cpus(text: str) -> set[int]:
    """A CPU list such as ``0``, ``0,2`` or ``0-3`` (the ``taskset -c`` syntax)."""
    cpus: set[int] = set()
    for part in text.split(","):
        lo, sep, hi = part.strip().partition("-")
        try:
            first, last = int(lo), int(hi if sep else lo)
        except ValueError:
            raise UserError(f"--cpus {text!r}: {part.strip()!r} is not a CPU number or range like 0-3") from None
        if first < 0 or last < first:
            raise UserError(f"--cpus {text!r}: {part.strip()!r} is not a CPU number or range like 0-3")
        cpus.update(range(first, last + 1))
    return cpus


def _pin(text: str) -> None:
    """Restrict this process, and so every process it starts, to the CPUs in ``text``."""
    cpus = parse_cpus(text)
    if not hasattr(os, "sched_setaffinity"):
        raise UserError("--cpus needs a system with CPU affinity (Linux)")
    allowed = os.sched_getaffinity(0)
    if not cpus <= allowed:
        raise UserError(f"--cpus {text}: CPUs {sorted(cpus - allowed)} are not available "
                        f"(this process may use {sorted(allowed)})")
    os.sched_setaffinity(0, cpus)


def _die_with_parent() -> None:
    """In a child before it runs (Linux): be sent SIGTERM when the match process dies,
    however it dies, so no dealer or player outlives it (and goes on writing the log)."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _terminated(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # the same clean-up as Ctrl-C: stop the children, exit 130


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """While the match runs, SIGTERM stops it like Ctrl-C (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _names(specs: list[PlayerSpec]) -> list[str]:
    """Seat names: the bot names (a strategy's file name without its suffix), numbered
    where a player plays more than one seat."""
    names = []
    for i, spec in enumerate(specs):
        base = spec.log_name or "strategy"
        names.append(base if specs.count(spec) == 1 else f"{base}-{specs[: i + 1].count(spec)}")
    return names


def _open_players(args: argparse.Namespace, game: Game) -> tuple[list[PlayerSpec], dict[PlayerSpec, StrategyPlayer]]:
    """Every seat's spec, and each strategy player opened once (a spec that plays several
    seats too): an unknown bot, a file that cannot play ``game`` or bucket tables that
    cannot be built are refused before anything starts."""
    try:
        resolving = resolve_spec(args)
        specs = [PlayerSpec.parse(text, tables=args.tables, resolve=resolving) for text in args.players]
        opened: dict[PlayerSpec, StrategyPlayer] = {}
        for spec in specs:
            if spec.is_strategy and spec not in opened:
                player = open_for_play(spec, game, quiet=args.quiet)
                assert isinstance(player, StrategyPlayer)
                opened[spec] = player
    except ValueError as exc:  # PlayerSpecError, StrategyFileError, a table build that cannot run
        raise UserError(str(exc)) from None
    return specs, opened


def _mqtt_argv(args: argparse.Namespace) -> list[str]:
    """The telemetry options, passed on to each player process."""
    argv = ["--mqtt", args.mqtt]
    for flag, value in (("--mqtt-user", args.mqtt_user), ("--mqtt-password", args.mqtt_password),
                        ("--mqtt-ca", args.mqtt_ca)):
        if value:
            argv += [flag, value]
    argv += [flag for flag, on in (("--mqtt-tls", args.mqtt_tls), ("--mqtt-insecure", args.mqtt_insecure)) if on]
    return argv


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "agent", *args]


def _reaped_cpu() -> float | None:
    """CPU seconds (user + system) of every child this process has reaped so far
    (``RUSAGE_CHILDREN``; ``None`` where there is no such accounting). A child's time
    joins it when it is reaped, so the change across one wait is that child's."""
    if resource is None:
        return None
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _since(before: float | None) -> float | None:
    """:func:`_reaped_cpu` now minus ``before``, rounded to the millisecond."""
    now = _reaped_cpu()
    return None if before is None or now is None else round(now - before, 3)


def _starting(specs: list[PlayerSpec]) -> str:
    """What the bar says until the first hand ends: the players start, and a strategy
    player's first run compiles the kernels that bucket its cards (tens of seconds)."""
    if any(spec.is_strategy for spec in specs):
        from abstraction.card_abstraction import bucket_kernels
        from poker._compile import COMPILING, cold

        if cold(*bucket_kernels()):
            return f"starting the players, {COMPILING}"
    return "starting the players"


def run(args: argparse.Namespace) -> int:
    """Run the match and report; the exit status is the dealer's."""
    game = load_game(args.game)
    with _socket_dir(args.transport, game.num_players) as sockets:
        return _run(args, game, sockets)


def _run(args: argparse.Namespace, game: Game, sockets: Path | None) -> int:
    """:func:`run` with the directory of the match's Unix sockets (``None``: TCP)."""
    if len(args.players) != game.num_players:
        raise UserError(f"{game.name} has {game.num_players} seats, but {len(args.players)} players were given")
    if args.hands < 1:
        raise UserError(f"--hands must be positive, not {args.hands}")
    if not 0 <= args.seed <= 0xFFFFFFFF:
        raise UserError(f"--seed {args.seed} is not in 0..4294967295")
    specs, opened = _open_players(args, game)
    mqtt_config(args)  # check the broker address before starting anything
    if args.cpus is not None:
        _pin(args.cpus)  # the dealer and the players inherit it
    # Decided once for every process of the match, after pinning: the probe then times the
    # round trips on the CPUs the match will run on.
    polling = spin_choice(args, unix=args.transport == "unix")
    spin = f"{polling.spin_us:g}"
    log_path: Path = args.log or Path("matches") / f"{game.name}.{args.seed}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    names = _names(specs)
    passes = game.num_players if args.duplicate else 1
    total = args.hands * passes

    dealer_cmd = _cli("dealer", args.game, "--hands", str(args.hands), "--seed", str(args.seed),
                      "--players", *names, "--log", str(log_path), "--spin-us", spin)
    if args.duplicate:
        dealer_cmd.append("--duplicate")
    if sockets is not None:
        dealer_cmd += ["--unix", str(sockets)]
    err_path = log_path.with_suffix(".dealer.err")
    procs: list[subprocess.Popen[bytes]] = []
    linux = sys.platform.startswith("linux")
    # (only from a single-threaded process: code between fork and exec must not need locks)
    child_setup = _die_with_parent if linux and threading.active_count() == 1 else None
    # CPU of each process, as each is reaped (the probe's child was reaped before this)
    cpu: dict[str, Any] = {"dealer": None, "players": [None] * len(specs)}
    cpu_before = _reaped_cpu()
    with _sigterm_as_interrupt(), open(err_path, "wb") as dealer_err:
        dealer = subprocess.Popen(dealer_cmd, stdout=subprocess.PIPE, stderr=dealer_err,
                                  preexec_fn=child_setup)
        procs.append(dealer)
        try:
            assert dealer.stdout is not None
            port_line = dealer.stdout.readline().decode().split()
            if len(port_line) != game.num_players:
                dealer.wait(timeout=10)
                raise UserError(f"the dealer did not start: {stderr_tail(err_path)}")
            common = args.duplicate and args.common_draws
            for seat, (spec, port) in enumerate(zip(specs, port_line)):
                # 'auto' tables were built above: the seat finds them in the cache. Common
                # draws: every strategy seat gets seat 0's seed, keyed by the deal.
                seed = (args.seed * 7919 + (0 if common and spec.is_strategy else seat) + 1) % 2**32
                where = ["--host", "127.0.0.1", "--port", port] if sockets is None else ["--unix", port]
                cmd = _cli("play", *where, *spec.cached().play_args(),
                           "--game", args.game, "--seed", str(seed), "--spin-us", spin)
                if common and spec.is_strategy:
                    cmd += ["--duplicate-hands", str(args.hands)]
                if args.mqtt or args.watch:
                    cmd += ["--name", names[seat]]
                if args.mqtt:
                    cmd += _mqtt_argv(args)
                if args.watch:
                    cmd += ["--events", str(log_path.with_suffix(f".player{seat + 1}.events.jsonl"))]
                if spec.is_strategy:
                    cmd += ["--summary", str(_summary_path(log_path, seat))]
                player_err = open(log_path.with_suffix(f".player{seat + 1}.err"), "wb")
                procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=player_err,
                                              preexec_fn=child_setup))
                player_err.close()
            bar = Progress(total, "match", unit=" hands", enabled=not args.quiet)
            bar.phase(_starting(specs))
            counter = _HandCounter(log_path)
            while True:
                try:  # (returns as soon as the dealer exits: a sleep cost every match up to 0.2 s)
                    dealer.wait(timeout=0.2)
                    break
                except subprocess.TimeoutExpired:
                    bar.update(counter())
            bar.update(counter())
            bar.close()
            cpu["dealer"] = _since(cpu_before)
            for seat, p in enumerate(procs[1:]):
                cpu_before = _reaped_cpu()
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    continue
                cpu["players"][seat] = _since(cpu_before)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
    if dealer.returncode != 0:
        print(f"pokerbot match: the match was aborted (dealer exit {dealer.returncode}): {stderr_tail(err_path)}",
              file=sys.stderr)
    log = parse_log(log_path.read_text())
    results = match_results(log, game.big_blind, passes)
    by_name = {r.name: r for r in results}
    players = [by_name[n].to_json() if n in by_name else
               {"name": n, "hands": 0, "chips": 0.0, "mbb_per_game": 0.0, "ci95": [0.0, 0.0]}
               for n in names]
    for seat, (entry, text, spec) in enumerate(zip(players, args.players, specs)):
        entry["bot"] = text
        if spec.is_strategy:
            entry["translation"], entry["legalized"] = _player_summary(_summary_path(log_path, seat))
    if args.aivat if args.aivat is not None else args.json:
        interrupted = False
        for entry, spec in zip(players, specs):
            if not spec.is_strategy:
                continue
            if interrupted:
                entry["aivat"] = {"error": "interrupted"}
                continue
            options = spec.resolve.options() if spec.resolve is not None else None
            if options is not None and options.seconds is not None:
                entry["aivat"] = {"error": "a re-solving player with a seconds cap depends on the clock: "
                                           "its probabilities cannot be made again"}
                continue
            # heads-up against another strategy: its decisions are corrected too
            other = [o for o in specs if o is not spec]
            known = other[0] if len(other) == 1 and other[0].is_strategy else None
            opponent = None
            if known is not None:
                known_options = known.resolve.options() if known.resolve is not None else None
                opponent = None if known_options is not None and known_options.seconds is not None else (
                    opened[known].policy, known_options)
            entry["aivat"] = _aivat_entry(log, opened[spec].policy, entry["name"], passes, quiet=args.quiet,
                                          resolve=options, opponent=opponent)
            interrupted = entry["aivat"].get("error") == "interrupted"
    summary = {
        "game": game.name,
        "hands": len(log.hands),
        "seed": args.seed,
        "duplicate": bool(args.duplicate),
        "common_draws": bool(args.duplicate and args.common_draws),
        "log": str(log_path),
        "completed": dealer.returncode == 0,
        "players": players,
        "polling": polling.to_json(),
        "transport": args.transport,
        "cpu_s": cpu,
    }
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{game.name}: {len(log.hands)} hands, seed {args.seed}"
              f"{' (duplicate)' if args.duplicate else ''}; log {log_path}")
        width = max(16, *(len(e["name"]) for e in players))
        print(f"{'player':<{width}} {'hands':>7} {'chips':>12} {'mbb/g':>10}   95% interval")
        for e in players:
            lo, hi = e["ci95"]
            print(f"{e['name']:<{width}} {e['hands']:>7} {e['chips']:>12.1f} {e['mbb_per_game']:>10.1f}"
                  f"   [{lo:.1f}, {hi:.1f}]")
        for e in players:
            t = e.get("translation")
            if t:
                print(f"{e['name']}: opponent actions {t['on_tree']} on the tree, {t['mapped']} mapped; "
                      f"{t['fallback']} of {t['decisions']} decisions fell back to check/call")
                repaired = _repaired_line(e["name"], t["repaired"], e["legalized"])
                if repaired:
                    print(repaired)
                r = t.get("resolve")
                if r:
                    print(f"{e['name']}: re-solved {r['resolves']} times in {r['seconds']:.1f} s, answered "
                          f"{r['followed']} decisions from a solution; {r['timeouts']} re-solves past the seconds "
                          f"cap and {r['too_big']} subgames past the node limit played the blueprint; "
                          f"{r.get('limited', 0)} re-solves stopped at the street's end")
        for e in players:
            if "aivat" in e:
                print(_aivat_line(e["name"], e["aivat"]))
    return 0 if dealer.returncode == 0 else 1


def _repaired_line(name: str, repaired: dict[str, int], legalized: int | None) -> str | None:
    """The text report's line on a strategy player's repaired actions, or None when the
    player repaired none and the client legalized none."""
    if not any(repaired.values()) and not legalized:
        return None
    return (f"{name}: {sum(repaired.values())} of its actions repaired to be legal "
            f"({repaired['min_raise']} raised to the minimum, {repaired['all_in']} lowered to all-in, "
            f"{repaired['fold_to_check']} folds made checks, {repaired['raise_to_call']} raises made calls); "
            f"{'?' if legalized is None else legalized} changed by the client")


def _aivat_entry(log: MatchLog, policy: TranslatedPolicy, name: str, passes: int, *,
                 quiet: bool, resolve: ResolveOptions | None = None,
                 opponent: tuple[TranslatedPolicy, ResolveOptions | None] | None = None) -> dict[str, Any]:
    """AIVAT's estimate of the winnings of ``name``, who played ``policy`` (the opened
    player's own; re-solving with ``resolve``, whose re-solves are made again): the keys
    of ``pokerbot eval aivat --json`` that say the estimate (intervals over deals in a
    duplicate match whose deals the player played in full, else over hands), or
    ``{"error": reason}``; a failure never fails the match. ``opponent``: the other
    seat's policy and re-solving options where it is a strategy too, whose decisions
    are then corrected as well."""
    from solver.evaluation.aivat import aivat, strategy_ranges  # the solver's evaluation only when asked
    from solver.resolve.opponent import resolving_ranges

    start = time.perf_counter()
    opponent_error = None
    total = sum(1 for h in log.hands if name in h.names)
    bar = Progress(total, f"aivat {name}", unit=" hands", enabled=not quiet)
    try:
        mine = resolving_ranges(policy, resolve)
        theirs = None if opponent is None else strategy_ranges(opponent[0], resolving_ranges(*opponent))
        try:
            result = aivat(policy, log, name, progress=bar.update, player_range=mine, opponent_range=theirs)
        except ValueError as exc:  # the opponent's log does not fit its strategy: estimate without it
            if theirs is None:
                raise
            opponent_error = str(exc)
            result = aivat(policy, log, name, progress=bar.update, player_range=mine)
    except KeyboardInterrupt:
        return {"error": "interrupted"}
    except Exception as exc:  # noqa: BLE001 - the match's result stands without the estimate
        return {"error": str(exc) or type(exc).__name__}
    finally:
        bar.close()
    doc: dict[str, Any] = {
        "player": result.player,
        "hands": result.hands,
        "mbb_per_game": result.mbb_per_game,
        "ci95": list(result.ci95),
        "aivat_mbb_per_game": result.aivat_mbb_per_game,
        "aivat_ci95": list(result.aivat_ci95),
        "variance_reduction": result.variance_reduction,
        "sd_ratio": result.sd_ratio,
        "opponent_known": result.opponent_known,
        **({"opponent_error": opponent_error} if opponent_error is not None else {}),
        "interval_over": "hands",
        "seconds": time.perf_counter() - start,
    }
    if passes > 1:
        per_pass = hands_per_pass(log, passes)
        plain = deal_means(result.mbb_values, result.hand_numbers, per_pass, passes)
        av = deal_means(result.aivat_mbb_values, result.hand_numbers, per_pass, passes)
        if plain is not None and av is not None and len(plain) > 1:
            _, lo, hi = mean_ci95(plain)
            _, alo, ahi = mean_ci95(av)
            ratio = (ahi - alo) / (hi - lo) if hi > lo else 1.0
            doc.update(ci95=[lo, hi], aivat_ci95=[alo, ahi], sd_ratio=ratio,
                       variance_reduction=1.0 - ratio**2 if hi > lo else 0.0, interval_over="deals")
    return doc


def _aivat_line(name: str, doc: dict[str, Any]) -> str:
    """The text output's line for a strategy player's AIVAT estimate."""
    if "error" in doc:
        return f"{name}: no AIVAT estimate: {doc['error']}"
    lo, hi = doc["aivat_ci95"]
    plo, phi = doc["ci95"]
    return (f"{name}: AIVAT {doc['aivat_mbb_per_game']:.1f} mbb/g [{lo:.1f}, {hi:.1f}] "
            f"(plain {doc['mbb_per_game']:.1f} [{plo:.1f}, {phi:.1f}]; variance "
            f"{-100 * doc['variance_reduction']:+.0f}%, intervals over {doc['interval_over']}"
            f"{'; the opponent corrected too' if doc.get('opponent_known') else ''}; {doc['seconds']:.1f} s)")


def _summary_path(log_path: Path, seat: int) -> Path:
    return log_path.with_suffix(f".player{seat + 1}.json")


def _player_summary(path: Path) -> tuple[dict[str, Any] | None, int | None]:
    """What a strategy player wrote at its end: its translation counts (with the repairs
    of its own actions) and the number of its actions the client legalized; (None, None)
    if it wrote nothing."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None, None
    if not isinstance(doc, dict):
        return None, None
    t, legalized = doc.get("translation"), doc.get("legalized")
    return (t if isinstance(t, dict) else None), (legalized if isinstance(legalized, int) else None)


class _HandCounter:
    """Counts STATE lines as the dealer appends them, reading only what is new."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.count = 0

    def __call__(self) -> int:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
        except FileNotFoundError:
            return self.count
        cut = data.rfind(b"\n") + 1  # count whole lines only
        self.count += data[:cut].count(b"STATE:")
        self.offset += cut
        return self.count
