"""Sampled CFR on a Ray cluster: a parameter server around the unchanged kernel.

The driver (the ``pokerbot train`` process) keeps the run's tables in its
:class:`~solver.training.sampled.SampledCFRSolver`, whose :meth:`iterate` hands each batch
of iterations to a :class:`ClusterRunner` instead of its own threads. A batch is one
*round*:

1. The driver puts its regret and average tables into Ray's object store once.
2. Each of ``workers`` Ray actors (:class:`_Worker`, ``threads`` CPUs each) copies them
   into tables of its own and runs its share of the round with the same kernel as a
   single machine (:func:`solver.training._sampling_kernels.run_iterations`, with its
   own Hogwild threads): worker k runs the global iterations ``start + k * per`` to
   ``start + (k + 1) * per - 1``, so the kernel's iteration-keyed choices (the deal of
   iteration t, Targeted CFR's targeting, pruning's start, linear averaging's weight t)
   are those of the driver's global count. Its action streams are keyed by the run's
   seed and the first global iteration of its share, so a share gives the same result
   on any worker that runs it.
3. Each worker returns what its copy gained, the *deltas* of both tables, divided by
   the number of workers in the round, as float32: dense, or as (index, value) pairs
   where fewer than half the entries changed (smaller on the wire: 8 bytes a changed
   entry against 4 an entry).
4. The driver adds the deltas in worker order (so a run with ``sync_iterations`` and one
   thread a worker repeats bit for bit), re-applies the regret floor where the run has
   one, and the next round starts. Discounting (:mod:`solver.training.schedules`) runs on
   the driver between rounds, at the same global iteration counts as on one machine: the
   solver's :meth:`iterate` ends rounds at its batch boundaries.

**Why the mean of the deltas, not their sum.** Regret matching and the average strategy
are the same for any uniform scale of a row, so between rounds the mean adds what the sum
adds (every sample at weight 1/W instead of 1). They differ inside a round, in the copy a
worker samples against: with the sum it holds the worker's own progress but none of the
others' (up to a round stale); with the mean its own progress counts W times against the
scaled history, standing in for the others' where a row is hot (the W workers' samples of
it are alike), and where a worker visits a row once a round nothing changes. Measured
with two workers, external sampling (``bench/cluster_merge.py``): on Leduc at 400,000
iterations, the sum gave 25, 51 and 199 mbb/g with 100, 1,000 and 10,000 iterations a
worker and round, the mean 16.7, 21.3 and 15.7 (one machine, seeds 1 to 3: 13.7 to
15.1); on 20-card hold'em (lossless, ``1p,cap1``) at 10 M iterations and 250,000 a worker
and round, the sum 1,298, the mean 1,182 (one machine: 1,139 and 1,154). What the mean
leaves is staleness, and it grows with the round: on Leduc at 60,000 iterations, over
seeds 1 to 12, rounds of 5, 10, 25 and 150 iterations a worker gave 43.8, 45.7, 46.6 and
48.5 mbb/g on average (standard errors 1 to 1.7) against one machine's 41.6 (1.0). On
the full deck's shipped betting, after 180 s, two workers' strategy lost 90 mbb/g to two
Hogwild threads' stopped at the same deal count (``bench/cluster.py``, README).

**Hot rows.** With ``hot_syncs`` S, a worker runs its share in S steps and after each
sends the deltas of the hot rows (the preflop's and the flop's in hold'em:
:func:`~solver.training.cluster_deltas.hot_entries`) to a small asynchronous actor
(:class:`~solver.training.cluster_deltas.HotRows`), which hands every worker of the
round their sum once all have sent theirs; each adds it to the hot rows it started the
step with. Those rows are then at most a step stale, and they take the sum, as one
machine's threads would add their samples (a fixed set of rows, so each keeps one
scale). At the round's end every worker holds the same hot rows, so the driver's mean of
the deltas adds their change once. Measured on the shipped betting at equal deals
against Hogwild: -90 mbb/g without, -56 and -45 with 4 and 10 exchanges a 5-s round
(README). Each exchange waits for the slowest worker (about 85 ms a worker on one
machine); with ``hot_async`` none waits: a worker posts its gain since its last post and
takes the sum of the round's posts so far (:meth:`HotRows.post`), and at the round's end
the driver sets the hot rows to their start plus the sum of every post (``take``), which
is what the waiting exchanges add, whatever each worker happened to see.

**Faults.** A worker that dies (its process killed, its node lost) is replaced by a new
actor, which runs the dead worker's share again: the round loses the time, not the
share's result (with hot syncs, the whole round: the others wait on the dead worker's
rows, so the driver frees them and runs the round again). The run says so on its log.
The driver's own state is the solver's: checkpoints (written atomically by the driver,
:mod:`solver.training.checkpoint`) resume
a run whose driver died, as on one machine. A head that stops answering is another
matter: nothing can be replaced without it, and Ray ends a driver whose head has been
gone for 60 s. So whenever it waits (in slices of :data:`POLL_SECONDS`), before it
replaces a worker and before a round's tables go out, the driver asks the head's GCS
(:func:`~abstraction.cluster.head_silence`); once it has not answered for
``ClusterOptions.timeout`` seconds the run ends with :class:`ClusterLost` (as it does
when a worker keeps dying), its tables those of the last round merged whole (a round's
results are all in before the first is added), which
:func:`solver.training.run.run_training` writes as the checkpoint.

**Identity.** Before it joins, every worker builds the game, the betting tree and the
card buckets itself and compares a digest of each, and of the code that runs the kernel
(every source file of the ``poker``, ``abstraction`` and ``solver`` packages), with the
driver's; any difference is refused in one line naming it. A card abstraction travels as
its directory's files, once per machine: a worker keeps them in its cache
(``<cache root>/cluster/<content hash>``, :func:`abstraction.table_cache.cache_root`) and
checks them against their content hash before use.

Ray (``pip install -e '.[cluster]'``) is imported only when a cluster run starts.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from abstraction.cluster import (
    INSTALL_HINT,
    ClusterError,
    code_digest,
    connect,
    head_silence,
    import_ray,
    probe_head,
)

from .cluster_deltas import HotRows, decode_delta, delta_bytes, encode_delta, hot_entries
from .cluster_identity import abstraction_files, cluster_cache, problem_digest, write_abstraction
from .cluster_plan import SYNC_SECONDS, cluster_estimate
from .memory import estimate_training_memory, format_bytes
from .sampled import SampledCFRSolver, SamplingOptions, _splitmix64, seed_streams

__all__ = [
    "CLUSTER_ALGORITHMS",
    "INSTALL_HINT",
    "ClusterError",
    "ClusterLost",
    "ClusterOptions",
    "ClusterRunner",
    "ClusterStats",
    "SYNC_SECONDS",
    "WorkerSpec",
    "check_head",
    "code_digest",
    "split_shares",
]

#: The algorithms a cluster trains: the sampled ones, whose tables take the workers' deltas.
CLUSTER_ALGORITHMS = ("es", "os", "as", "tcfr")
#: A replaced worker that is not ready within this many seconds ends the run.
READY_TIMEOUT = 300.0
#: Replacements a run tolerates per worker before it gives up.
MAX_REPLACEMENTS = 3
#: Seconds the driver waits for a Ray head that does not answer before the run ends.
HEAD_TIMEOUT = 10.0
#: The most ``ClusterOptions.timeout`` may be: Ray itself ends a driver whose head has
#: been gone for 60 s (``gcs_rpc_server_reconnect_timeout_s``), before the checkpoint.
MAX_HEAD_TIMEOUT = 45.0
#: The driver's waits on the workers are cut into slices this long, the head asked
#: between them.
POLL_SECONDS = 1.0

log = logging.getLogger(__name__)


class ClusterLost(ClusterError):
    """The cluster cannot go on (its head stopped answering, a worker kept dying or a
    replacement never got ready): the driver's tables are those of the last round merged
    whole, and its solver counts exactly those iterations."""


@dataclass(frozen=True)
class ClusterOptions:
    """Where and how a run trains on Ray.

    ``address``: ``'local'`` (a Ray instance of this machine, started for the run) or a
    running cluster's address (``HOST:PORT`` of its head, or ``'auto'``); ``workers``:
    worker actors (each with the run's ``--threads`` Hogwild threads and as many CPUs);
    ``sync_seconds``: the length of a round the driver aims at (the first rounds are
    short and grow by four times at most, as the single-machine batches do);
    ``sync_iterations``: instead, a fixed count of iterations per worker and round (a run
    then repeats bit for bit with one thread a worker, whatever the machines' speed);
    ``hot_syncs``: times a round the workers exchange the deltas of the hot rows
    (:func:`~solver.training.cluster_deltas.hot_entries`) through a small actor and add
    their sum, so that the rows every deal visits go stale for a fraction of a round (0:
    only at the round's end); ``hot_async``: those exchanges do not wait for the other
    workers (each adds, a step later, what the others had sent; the run no longer
    repeats bit for bit); ``timeout``: seconds a head that does not answer is waited for,
    when the run joins it (a port that answers in another protocol, or not at all, is
    refused then) and whenever it goes quiet mid-run (the run then ends with
    :class:`ClusterLost`); at most :data:`MAX_HEAD_TIMEOUT`."""

    address: str
    workers: int
    sync_seconds: float = SYNC_SECONDS
    sync_iterations: int | None = None
    hot_syncs: int = 0
    hot_async: bool = False
    timeout: float = HEAD_TIMEOUT

    def __post_init__(self) -> None:
        if not isinstance(self.address, str) or not self.address.strip():
            raise ClusterError("--cluster needs an address: 'local', HOST:PORT or 'auto'")
        w = self.workers
        if isinstance(w, bool) or not isinstance(w, int) or w < 1:
            raise ClusterError(f"--workers must be a whole number of at least 1, not {w!r}")
        if not isinstance(self.sync_seconds, (int, float)) or not self.sync_seconds > 0:
            raise ClusterError(f"--sync-seconds must be positive, not {self.sync_seconds!r}")
        n = self.sync_iterations
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise ClusterError(f"--sync-iterations must be a whole number of at least 1, not {n!r}")
        h = self.hot_syncs
        if isinstance(h, bool) or not isinstance(h, int) or h < 0:
            raise ClusterError(f"--hot-syncs must be a whole number of at least 0, not {h!r}")
        if not isinstance(self.hot_async, bool):
            raise ClusterError(f"hot_async must be true or false, not {self.hot_async!r}")
        if self.hot_async and not h:
            raise ClusterError("--hot-async needs --hot-syncs: the exchanges it makes asynchronous")
        t = self.timeout
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t <= MAX_HEAD_TIMEOUT:
            raise ClusterError(
                f"--cluster-timeout must be more than 0 and at most {MAX_HEAD_TIMEOUT:g} seconds "
                f"(Ray ends a driver whose head has been gone for 60 s), not {t!r}"
            )

    def record(self) -> dict[str, Any]:
        """What the strategy file's training record keeps of it."""
        out: dict[str, Any] = {"workers": self.workers}
        if self.sync_iterations is not None:
            out["sync_iterations"] = self.sync_iterations
        else:
            out["sync_seconds"] = self.sync_seconds
        if self.hot_syncs:
            out["hot_syncs"] = self.hot_syncs
        if self.hot_async:
            out["hot_async"] = True
        return out


# -- shares --------------------------------------------------------------------------


def split_shares(start: int, n: int, workers: int) -> list[tuple[int, int]]:
    """Global iterations ``start .. start + n - 1`` split into ``workers`` consecutive
    shares, (first iteration, count) each, the remainder on the first ones."""
    per, rest = divmod(n, workers)
    out, at = [], start
    for k in range(workers):
        count = per + (1 if k < rest else 0)
        out.append((at, count))
        at += count
    return out


def share_streams(seed: int, first: int, threads: int) -> np.ndarray:
    """The action streams of the share starting at global iteration ``first``: keyed by
    the run's seed and ``first`` alone, so any worker running it draws the same."""
    # two rounds of splitmix64: keys of neighbouring shares must not give related streams
    # (one linear mix of seed and first before seed_streams did, and cost Leduc 18%)
    key = _splitmix64(_splitmix64(seed ^ 0x5851F42D4C957F2D) ^ (first & ((1 << 64) - 1)))
    return seed_streams(key >> 1, threads)


def share_order(seed: int, first: int, count: int, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Where the threads of a share start in the listed deals (``shape``: threads x
    deals; no deals: dealt from the deck). The run's deals are one shuffled pass after
    another, pass p keyed by the seed and p: a thread whose first iteration is t starts
    at place t mod N of pass t // N, so the shares of a round together deal without
    replacement, as one machine's threads do (which halves external sampling's
    exploitability on Leduc)."""
    threads, n = shape[0], shape[1] if len(shape) > 1 else 0
    cursor = np.zeros(threads, np.int64)
    if n == 0:
        return np.zeros(shape, np.int64), cursor
    order = np.empty((threads, n), np.int64)
    per = count // threads if threads > 1 else 0
    for k in range(threads):
        t = first + k * per
        key = int(share_streams(seed, -1 - t // n, 1)[0])  # pass p: first = -1 - p
        order[k] = np.random.Generator(np.random.PCG64(key)).permutation(n)
        cursor[k] = t % n
    return order, cursor


# -- the worker ----------------------------------------------------------------------


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker builds its solver from (all plain data, sent once).

    ``game_text``/``game_name``: the game definition; ``betting``: the betting spec;
    ``algorithm`` and ``solver_options``: as :func:`solver.training.algorithms.make_training_solver`
    takes them; ``sampling``: :meth:`SamplingOptions.record` without the discount (the
    driver discounts), with ``seed`` and ``threads`` beside it; ``abstraction``: None
    (lossless) or ``{"content_hash": ...}`` of the driver's directory; ``digests``: the
    driver's :func:`problem_digest` and ``code``."""

    game_text: str
    game_name: str
    betting: str | None
    algorithm: str
    solver_options: Mapping[str, Any]
    sampling: Mapping[str, Any]
    seed: int
    threads: int
    abstraction: Mapping[str, Any] | None
    digests: Mapping[str, str]


class _Worker:
    """One worker's solver (a Ray actor: see :class:`ClusterRunner`)."""

    def __init__(self, spec: WorkerSpec, slot: int) -> None:
        self.spec = spec
        self.slot = slot
        self.solver: SampledCFRSolver | None = None
        self._hot: slice | np.ndarray | None = None

    def needs_abstraction(self) -> bool:
        """Whether this machine lacks the run's card abstraction (so the driver sends it)."""
        ab = self.spec.abstraction
        if ab is None:
            return False
        d = cluster_cache(str(ab["content_hash"]))
        return not (d / "meta.json").is_file()

    def receive_abstraction(self, files: Mapping[str, bytes]) -> str:
        """Keep the driver's abstraction files in this machine's cache; what it took."""
        ab = self.spec.abstraction
        assert ab is not None
        t0 = time.perf_counter()
        write_abstraction(cluster_cache(str(ab["content_hash"])), files)
        size = sum(len(v) for v in files.values())
        took = time.perf_counter() - t0
        return f"received {format_bytes(size)} of card abstraction from the driver in {took:.2f} s"

    def setup(self) -> dict[str, Any]:
        """Build the game, tree, buckets and solver; compare their digests with the
        driver's. Returns ``{"ok": True, ...}`` or ``{"ok": False, "why": line}``."""
        from ..problem import check_card_abstraction
        from .algorithms import make_training_solver, warm_up
        from .dealt import load_training_abstraction, make_training_problem

        from poker.game import parse_game

        spec = self.spec
        where = f"worker {self.slot} on {socket.gethostname()}"
        t0 = time.perf_counter()
        code = code_digest()
        if code != spec.digests["code"]:
            return {"ok": False, "why": f"{where} runs other code ({code[:19]}) than the driver ({spec.digests['code'][:19]}): install the same pokerbot on every machine"}
        game = parse_game(spec.game_text, name=spec.game_name)
        abstraction = None
        note = "lossless buckets"
        if spec.abstraction is not None:
            want = str(spec.abstraction["content_hash"])
            d = cluster_cache(want)
            if not (d / "meta.json").is_file():
                return {"ok": False, "why": f"{where} has no copy of the card abstraction {want[:19]}"}
            try:
                abstraction = load_training_abstraction(d)
            except ValueError as exc:
                return {"ok": False, "why": f"{where}: its copy of the card abstraction is damaged ({exc})"}
            if abstraction.content_hash != want:
                return {"ok": False, "why": f"{where} has card abstraction {abstraction.content_hash[:19]}, the driver {want[:19]}"}
            check_card_abstraction(game, abstraction)
            note = f"card abstraction {want[:19]} from {d}"
        problem = make_training_problem(game, spec.betting, spec.algorithm, abstraction=abstraction)
        digests = problem_digest(problem)
        for what in ("game", "tree", "cards"):
            if digests[what] != spec.digests[what]:
                return {"ok": False, "why": f"{where} builds another {what} ({digests[what][:19]}) than the driver ({spec.digests[what][:19]})"}
        sampling = SamplingOptions.from_record(spec.sampling, seed=spec.seed, threads=spec.threads)
        # this machine must hold a single machine's run and a round's copies (the
        # estimate of pokerbot tree --workers) before the tables are allocated
        from poker._sysinfo import available_memory_gib

        memory = estimate_training_memory(
            game, spec.betting, abstraction_dir=None if abstraction is None else abstraction.directory,
            algorithm=spec.algorithm, dtype=sampling.dtype, threads=spec.threads, tree=problem.tree,
        )  # fmt: skip
        need, have = cluster_estimate(memory, 1).worker_total, available_memory_gib() * (1 << 30)
        if need > have:
            return {"ok": False, "why": f"{where} needs {format_bytes(need)} (the tables and a round's copies) but has {format_bytes(have)} available"}
        warm_up(spec.algorithm, sampling)
        self.solver = make_training_solver(problem, spec.algorithm, sampling, **dict(spec.solver_options))
        return {
            "ok": True,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "seconds": round(time.perf_counter() - t0, 3),
            "cards": note,
        }

    def run(
        self, regrets: np.ndarray, avg_sums: np.ndarray, first: int, count: int, scale: float,
        hot: Any = None, round_key: int = 0, syncs: int = 0, active: int = 1, wait: bool = True,
    ) -> dict[str, Any]:  # fmt: skip
        """Run global iterations ``first .. first + count - 1`` from the given tables;
        return their deltas times ``scale`` and what it took. With ``hot`` (a
        :class:`~solver.training.cluster_deltas.HotRows` actor) and ``syncs``, the share
        runs in ``syncs`` steps, after each of which the hot rows add the sum of the
        ``active`` workers' steps (``wait``), or of what the other workers had posted when
        the actor answered this worker's post of the step before (not ``wait``: the driver
        then sets the hot rows from the actor's sum); the round
        is ``{"aborted": True}`` if the actor says another worker died."""
        s = self.solver
        assert s is not None, "setup first"
        t_in = time.perf_counter()
        np.copyto(s.regrets, regrets, casting="same_kind")
        np.copyto(s.avg_sums, avg_sums, casting="same_kind")
        copy = time.perf_counter() - t_in
        order, cursor = share_order(s.sampling.seed, first, count, s.random_state()["order"].shape)
        s.set_random_state(share_streams(s.sampling.seed, first, s.sampling.threads), order, cursor)
        s.iterations = first
        t0 = time.perf_counter()
        solve = 0.0
        if hot is None or syncs <= 0:
            nodes = s.iterate(count)
            solve = time.perf_counter() - t0
        else:
            import ray

            if self._hot is None:
                self._hot = hot_entries(s.layout)
            sel = self._hot
            base_r, base_a = s.regrets[sel].copy(), s.avg_sums[sel].copy()
            steps = split_shares(0, count, syncs)
            nodes = 0
            if wait:
                for step, part in enumerate(steps):
                    t1 = time.perf_counter()
                    nodes += s.iterate(part[1]) if part[1] else 0
                    solve += time.perf_counter() - t1
                    # base: the rows every worker holds after the last exchange
                    dr = (s.regrets[sel] - base_r).astype(np.float32, copy=False)
                    da = (s.avg_sums[sel] - base_a).astype(np.float32, copy=False)
                    merged = ray.get(hot.exchange.remote((round_key, step), active, self.slot, dr, da))
                    if merged is None:
                        return {"aborted": True}
                    base_r += merged[0]
                    base_a += merged[1]
                    s.regrets[sel] = base_r
                    s.avg_sums[sel] = base_a
            else:
                # each post's answer is read a step later, so no step waits for the actor;
                # an answer is the others' posts so far (``seen``: those already added), and
                # ``ref`` the rows after this worker's last post and adjustment, from which
                # its next gain is measured. The average sums travel only with the last
                # post unless the sampling reads them (average strategy sampling): the
                # round's sum of them is the same, for half the bytes a step
                steer = self.spec.algorithm == "as"
                ref_r, ref_a = base_r, base_a
                seen_r: Any = 0.0
                seen_a: Any = 0.0
                pending = None
                for step, part in enumerate(steps):
                    t1 = time.perf_counter()
                    nodes += s.iterate(part[1]) if part[1] else 0
                    solve += time.perf_counter() - t1
                    last = step == len(steps) - 1
                    rows_r, rows_a = s.regrets[sel], s.avg_sums[sel]
                    gain_r = (rows_r - ref_r).astype(np.float32, copy=False)
                    gain_a = (rows_a - ref_a).astype(np.float32, copy=False) if steer or last else None
                    call = hot.post.remote(round_key, self.slot, gain_r, gain_a)
                    if last:
                        # the driver takes the posts' sum when every worker is back: the
                        # last must be in; this worker's own rows no longer matter
                        answers = ray.get([call] if pending is None else [pending, call])
                        if any(x is None for x in answers):
                            return {"aborted": True}
                        break
                    if pending is not None:
                        others = ray.get(pending)
                        if others is None:
                            return {"aborted": True}
                        s.regrets[sel] = rows_r + (others[0] - seen_r)
                        seen_r = others[0]
                        if steer:
                            s.avg_sums[sel] = rows_a + (others[1] - seen_a)
                            seen_a = others[1]
                    ref_r = s.regrets[sel].copy()
                    if steer:
                        ref_a = s.avg_sums[sel].copy()
                    pending = call
        t_out = time.perf_counter()
        deltas = (encode_delta(s.regrets, regrets, scale), encode_delta(s.avg_sums, avg_sums, scale))
        encode = time.perf_counter() - t_out
        return {"nodes": int(nodes), "deltas": deltas, "solve_seconds": solve, "copy_seconds": copy,
                "encode_seconds": encode, "exchange_seconds": t_out - t0 - solve}


# -- the driver's side ---------------------------------------------------------------


@dataclass
class ClusterStats:
    """What the run's rounds did: for the log, ``--json`` and the training record."""

    rounds: int = 0
    iterations: int = 0
    bytes_out: int = 0  # tables sent to the workers (once per round, object store)
    bytes_in: int = 0  # deltas received
    round_seconds: float = 0.0  # wall time of the rounds
    solve_seconds: float = 0.0  # summed over workers: time in the kernel
    merge_seconds: float = 0.0
    put_seconds: float = 0.0  # the driver's copies of its tables into the object store
    copy_seconds: float = 0.0  # summed over workers: reading the round's tables
    encode_seconds: float = 0.0  # summed over workers: making their deltas
    exchange_seconds: float = 0.0  # summed over workers: the hot rows' exchanges
    replaced: int = 0
    workers: list[dict[str, Any]] = field(default_factory=list)
    events: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """The figures a strategy file's training record keeps (no per-worker detail)."""
        d = self.to_dict()
        return {k: d[k] for k in ("rounds", "bytes_per_round", "kernel_share", "replaced")}

    def to_dict(self) -> dict[str, Any]:
        busy = self.solve_seconds / max(1e-9, self.round_seconds * max(1, len(self.workers)))
        return {
            "rounds": self.rounds,
            "iterations": self.iterations,
            "bytes_out": self.bytes_out,
            "bytes_in": self.bytes_in,
            "bytes_per_round": (self.bytes_out + self.bytes_in) / self.rounds if self.rounds else None,
            "bytes_per_s": (self.bytes_out + self.bytes_in) / self.round_seconds if self.round_seconds else None,
            "round_seconds": round(self.round_seconds, 3),
            "merge_seconds": round(self.merge_seconds, 3),
            "put_seconds": round(self.put_seconds, 3),
            "copy_seconds": round(self.copy_seconds, 3),
            "encode_seconds": round(self.encode_seconds, 3),
            "exchange_seconds": round(self.exchange_seconds, 3),
            "kernel_share": round(busy, 4),
            "replaced": self.replaced,
            "workers": self.workers,
            "events": self.events,
        }


class ClusterRunner:
    """The driver's side of a cluster run: it starts the workers, runs rounds for the
    solver (``solver.runner``, see :meth:`SampledCFRSolver.iterate`) and replaces a
    worker that dies. ``say`` gets one line per event worth a user's attention (a worker
    joined, received the abstraction, died and was replaced)."""

    def __init__(
        self,
        options: ClusterOptions,
        spec: WorkerSpec,
        solver: SampledCFRSolver,
        *,
        abstraction_dir: Path | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.options = options
        self.spec = spec
        self.solver = solver
        self.abstraction_dir = abstraction_dir
        self.say = say or (lambda line: log.info("%s", line))
        self.stats = ClusterStats()
        self.ray = import_ray()
        self._owns_ray = False
        self._actor_class: Any = None
        self._actors: list[Any] = [None] * options.workers
        self._files_ref: Any = None
        self._hot_actor: Any = None
        self._hot_sel: slice | np.ndarray | None = None
        self._round_key = 0
        self._closed = False
        self._head_address: str | None = None  # the GCS's HOST:PORT, asked by _head
        self._lost = False
        self._connect()
        try:
            self._actor_class = self.ray.remote(_Worker)
            self._start(list(range(options.workers)))
        except BaseException:
            self.close()
            raise

    # connection and workers

    def _connect(self) -> None:
        k = self.options
        self._owns_ray = connect(k.address, k.workers * self.spec.threads, timeout=k.timeout)
        self._head_address = self.ray.get_runtime_context().gcs_address

    # the head's watch

    def _head(self) -> None:
        """Return once the Ray head answers; raise :class:`ClusterLost` when it has not
        for ``options.timeout`` seconds."""
        address, limit = self._head_address, self.options.timeout
        if address is None:
            return
        since = time.monotonic()
        while True:
            why = head_silence(address, min(POLL_SECONDS, limit))
            now = time.monotonic()
            if why is None:
                return
            if now - since >= limit:
                self._lost = True
                raise ClusterLost(f"the Ray head at {address} has not answered for {limit:g} s ({why})")
            time.sleep(min(0.2, max(0.0, since + limit - now)))

    def _wait_one(self, refs: list[Any]) -> Any:
        """The first of ``refs`` to be ready, the head asked while none is."""
        while True:
            done, _ = self.ray.wait(refs, num_returns=1, timeout=POLL_SECONDS)
            if done:
                return done[0]
            self._head()

    def _get(self, refs: Any, limit: float | None = None) -> Any:
        """``ray.get(refs)``, the head asked while they are not ready; a
        :class:`ClusterLost` after ``limit`` seconds."""
        ray, t0 = self.ray, time.monotonic()
        while True:
            try:
                return ray.get(refs, timeout=POLL_SECONDS)
            except ray.exceptions.GetTimeoutError:
                self._head()
                if limit is not None and time.monotonic() - t0 > limit:
                    raise ClusterLost(f"the Ray workers were not ready within {limit:g} s") from None

    def _new_actor(self, slot: int) -> Any:
        return self._actor_class.options(
            num_cpus=self.spec.threads,
            max_restarts=0,
            scheduling_strategy="SPREAD",
        ).remote(self.spec, slot)

    def _abstraction_ref(self) -> Any:
        """The abstraction's files in the object store (put once, when first needed)."""
        if self._files_ref is None:
            d = self.abstraction_dir
            if d is None:
                raise ClusterError("a worker needs the card abstraction, but the driver has no directory to send")
            files = {name: (d / name).read_bytes() for name in abstraction_files(d)}
            self._files_ref = self.ray.put(files)
        return self._files_ref

    def _start(self, slots: Iterable[int]) -> None:
        """Start (or restart) the workers of ``slots`` and wait until each is ready."""
        slots = list(slots)
        for slot in slots:
            self._actors[slot] = self._new_actor(slot)
        if self.spec.abstraction is not None:
            needs = self._get([self._actors[s].needs_abstraction.remote() for s in slots], READY_TIMEOUT)
            lacking = [s for s, n in zip(slots, needs) if n]
            sends = [self._actors[s].receive_abstraction.remote(self._abstraction_ref()) for s in lacking]
            for slot, line in zip(lacking, self._get(sends, READY_TIMEOUT)):
                self.say(f"worker {slot}: {line}")
        infos = self._get([self._actors[s].setup.remote() for s in slots], READY_TIMEOUT)
        for slot, info in zip(slots, infos):
            if not info["ok"]:
                raise ClusterError(str(info["why"]))
            entry = {"slot": slot, "host": info["host"], "pid": info["pid"], "setup_seconds": info["seconds"]}
            self.stats.workers = [w for w in self.stats.workers if w["slot"] != slot] + [entry]
            self.say(f"worker {slot} ready on {info['host']} (pid {info['pid']}, {info['cards']}, {info['seconds']:.1f} s)")
        self.stats.workers.sort(key=lambda w: w["slot"])

    # rounds

    def __call__(self, start: int, n: int) -> int:
        """Run global iterations ``start .. start + n - 1`` on the workers and add their
        deltas to the solver's tables, in rounds of ``sync_iterations`` a worker if the
        options fix them (rounds ending at multiples of ``workers x sync_iterations``),
        else in one; return the nodes they touched."""
        per = self.options.sync_iterations
        if per is None:
            return self._round(start, n)
        # rounds on a grid of the global count, so that a run resumed from a checkpoint
        # (written between rounds) meets the rounds of the run never stopped
        step = per * self.options.workers
        nodes, first, end = 0, start, start + n
        try:
            while first < end:
                stop = min(end, (first // step + 1) * step)
                nodes += self._round(first, stop - first)
                first = stop
        except ClusterLost:
            # the solver counts a call's iterations when it returns: it must count the
            # rounds merged before the head was lost, and no more, for its checkpoint
            self.solver.iterations = first
            self.solver.nodes += nodes
            raise
        return nodes

    def _round(self, start: int, n: int) -> int:
        """One round: iterations ``start .. start + n - 1``, shared by the workers."""
        ray, s = self.ray, self.solver
        # a put into the object store of a node that went down with the head ends this
        # process (Ray's own exit): ask first (a millisecond)
        self._head()
        t0 = time.perf_counter()
        shares = split_shares(start, n, self.options.workers)
        regrets_ref = ray.put(s.regrets)
        avg_ref = ray.put(s.avg_sums)
        self.stats.put_seconds += time.perf_counter() - t0
        self.stats.bytes_out += int(s.regrets.nbytes + s.avg_sums.nbytes)
        active = sum(1 for _, count in shares if count > 0)
        scale = 1.0 / active
        syncs = self.options.hot_syncs
        if syncs and self._hot_actor is None:
            self._hot_actor = ray.remote(HotRows).options(num_cpus=0).remote()
        hot = self._hot_actor if syncs else None

        wait = not self.options.hot_async
        if hot is not None and not wait:
            if self._hot_sel is None:
                self._hot_sel = hot_entries(s.layout)
            hot_start = (s.regrets[self._hot_sel].copy(), s.avg_sums[self._hot_sel].copy())

        def launch(slot: int) -> Any:
            first, count = shares[slot]
            return self._actors[slot].run.remote(regrets_ref, avg_ref, first, count, scale,
                                                 hot, self._round_key, syncs, active, wait)  # fmt: skip

        self._round_key += 1
        pending = {slot: launch(slot) for slot, (_, count) in enumerate(shares) if count > 0}
        results: dict[int, dict[str, Any]] = {}
        replaced: dict[int, int] = {}
        while pending:
            # whichever worker ends first, so that a death is seen while the others wait
            # on its hot rows
            done = self._wait_one(list(pending.values()))
            slot = next(k for k, r in pending.items() if r == done)
            ref = pending[slot]
            try:
                results[slot] = self._get(ref)
                del pending[slot]
            except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError) as exc:
                # a worker on the head's node dies with it: then there is nothing to
                # replace it with, and the run ends here
                self._head()
                replaced[slot] = replaced.get(slot, 0) + 1
                if replaced[slot] > MAX_REPLACEMENTS:
                    raise ClusterLost(f"worker {slot} died {replaced[slot]} times in one round; giving up") from None
                why = type(exc).__name__
                what = f"its {shares[slot][1]:,}" if hot is None else f"the round's {n:,}"
                self.say(f"worker {slot} died ({why}); starting a replacement to run {what} iterations again")
                self.stats.events.append(f"round {self.stats.rounds + 1}: worker {slot} died and was replaced")
                self.stats.replaced += 1
                if hot is not None:
                    # the others wait on the dead worker's hot rows: free them, then run the
                    # whole round again from the same tables under a new key
                    self._get(hot.abort.remote(self._round_key))
                    for other, r in pending.items():
                        if other != slot:
                            try:
                                self._get(r)
                            except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError):
                                pass
                    self._start([slot])
                    self._round_key += 1
                    results.clear()
                    pending = {k: launch(k) for k, (_, c) in enumerate(shares) if c > 0}
                    continue
                self._start([slot])
                pending[slot] = launch(slot)
        # all that can fail comes before the first delta is added: a run that ends here
        # keeps the tables of the last round, not half of this one
        for slot in sorted(results):
            if results[slot].get("aborted"):
                raise ClusterLost(f"worker {slot} gave up a round that no worker died in")
        posted = None
        if hot is not None and not wait:
            posted = self._get(hot.take.remote(self._round_key))
        t1 = time.perf_counter()
        nodes = 0
        for slot in sorted(results):  # worker order: the sum does not depend on timing
            r = results[slot]
            dr, da = r["deltas"]
            decode_delta(s.regrets, dr)
            decode_delta(s.avg_sums, da)
            self.stats.bytes_in += delta_bytes(dr) + delta_bytes(da)
            self.stats.solve_seconds += r["solve_seconds"]
            self.stats.copy_seconds += r["copy_seconds"]
            self.stats.encode_seconds += r["encode_seconds"]
            self.stats.exchange_seconds += r["exchange_seconds"]
            nodes += r["nodes"]
        if hot is not None and not wait:
            # the workers' hot rows saw different shares of the others' posts; the round
            # adds all of them, summed, as the waiting exchanges do
            if posted is not None:
                s.regrets[self._hot_sel] = hot_start[0] + posted[0]
                if posted[1] is not None:
                    s.avg_sums[self._hot_sel] = hot_start[1] + posted[1]
        floor = s.config.floor_at if s.config.floor else None
        if floor is not None:
            np.maximum(s.regrets, floor, out=s.regrets)
        t2 = time.perf_counter()
        self.stats.rounds += 1
        self.stats.iterations += n
        self.stats.merge_seconds += t2 - t1
        self.stats.round_seconds += t2 - t0
        return nodes

    def close(self) -> None:
        """Detach from the solver and stop the workers (and the Ray instance the run
        started)."""
        if self._closed:
            return
        self._closed = True
        if getattr(self.solver, "runner", None) is self:
            self.solver.runner = None  # its own threads run it again
        ray = self.ray
        # with the head lost there is no one to ask: the job's end takes its actors
        actors = [] if self._lost else [*self._actors, self._hot_actor]
        for actor in actors:
            if actor is not None:
                try:
                    ray.kill(actor)
                except Exception:  # noqa: BLE001 - a dead worker is already gone
                    pass
        self._actors = []
        if self._owns_ray:
            ray.shutdown()


def worker_spec(
    problem: Any,
    algorithm: str,
    solver_options: Mapping[str, Any],
    sampling: SamplingOptions,
    threads: int,
) -> WorkerSpec:
    """The :class:`WorkerSpec` of a run over ``problem`` (the driver's, digests computed)."""
    record = dict(sampling.record())
    record.pop("discount", None)  # the driver discounts between rounds
    ab = problem.abstraction
    abstraction = None
    if ab is not None:
        abstraction = {"content_hash": ab.content_hash}
    digests = {**problem_digest(problem), "code": code_digest()}
    return WorkerSpec(
        game_text=problem.game.to_text(),
        game_name=problem.game.name,
        betting=problem.tree.betting_spec or None,
        algorithm=algorithm,
        solver_options=dict(solver_options),
        sampling=record,
        seed=sampling.seed,
        threads=threads,
        abstraction=abstraction,
        digests=digests,
    )


def check_head(options: ClusterOptions) -> None:
    """Refuse, in one line (:class:`ClusterError`), a run whose Ray is not installed or
    whose address no Ray head answers at within ``options.timeout`` seconds: called
    before a run's setup, which may build or compile for minutes first."""
    ray = import_ray()
    if not ray.is_initialized() and options.address not in ("local", "auto"):
        probe_head(options.address, options.timeout)


def start_cluster(
    options: ClusterOptions,
    solver: SampledCFRSolver,
    algorithm: str,
    solver_options: Mapping[str, Any],
    *,
    threads: int = 1,
    abstraction_dir: Path | None = None,
    say: Callable[[str], None] | None = None,
) -> ClusterRunner:
    """Start the workers of ``options`` for ``solver`` and attach them (its
    :meth:`~SampledCFRSolver.iterate` then runs rounds on them); :meth:`ClusterRunner.close`
    detaches and stops them. Raises :class:`ClusterError` (one line) when Ray is missing,
    the cluster cannot be reached or is too small, or a worker refuses to join."""
    if algorithm not in CLUSTER_ALGORITHMS:
        raise ClusterError(f"--cluster trains the sampled algorithms ({', '.join(CLUSTER_ALGORITHMS)}), not {algorithm}")
    spec = worker_spec(solver.problem, algorithm, solver_options, solver.sampling, threads)
    runner = ClusterRunner(options, spec, solver, abstraction_dir=abstraction_dir, say=say)
    solver.runner = runner
    return runner
