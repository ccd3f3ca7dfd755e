"""What a cluster run holds and moves each round, before it starts: :func:`cluster_estimate`.

A cluster run (:mod:`solver.training.cluster`) trains a sampled algorithm on ``workers``
Ray actors. Each round the driver puts its regret and average tables into Ray's object
store; each worker copies them into tables of its own, runs its share of the iterations
and returns the deltas of both tables as float32, dense (4 bytes an entry) or sparse
(an int32 index and a float32 value, 8 bytes a changed entry, chosen only when fewer than
half the entries changed, so always smaller than dense). The figures here are the worst
case: dense deltas, and one node per worker (each worker's node fetches the tables).

* **a worker** holds what a single-machine run of the same algorithm, dtype and threads
  holds (:func:`solver.training.memory.estimate_training_memory`: tables, bucket tables,
  indexers, per-thread scratch), plus, during a round, the incoming tables (in its node's
  object store: ``2 x entries x dtype`` bytes) and its outgoing deltas (``2 x entries x
  4``; the encoder counts the changed entries, then writes them, with no other scratch);
* **the driver** holds a single-machine run's memory (its solver is one), the put copy
  of both tables and every worker's deltas (it gathers them all before adding them);
* **the network** carries, each round, the tables to every worker node
  (``workers x 2 x entries x dtype`` out) and the deltas back (``workers x 2 x entries x
  4`` in), all through the driver's link. Over rounds of ``sync_seconds`` that is a rate
  the driver's link must carry; :meth:`ClusterEstimate.transfer_seconds` is what a round's
  bytes take at a given link speed, time the round spends waiting instead of solving;
* **hot syncs** (``hot_syncs`` S, with the ``hot_entries`` of :func:`hot_streets`): S
  times a round every worker sends the hot rows' deltas of both tables (``2 x hot x 4``
  bytes) to a small actor and gets their sum back, so the actor's link carries ``16 x S x
  workers x hot`` bytes a round; the actor holds every worker's deltas and their sum
  (``(workers + 1) x 2 x hot x 4``), and a worker the hot rows at the step's start, its
  step's deltas and the sum (``2 x hot x (dtype + 8)``). That is the waiting exchanges'
  cost and a bound for the asynchronous ones (``--hot-async``), whose posts carry the
  regrets alone, but for a round's last, where the sampling does not read the average
  sums (all but average strategy sampling): about half the bytes.

Nothing here imports Ray or the kernels: it is arithmetic on a
:class:`~solver.training.memory.MemoryEstimate`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .memory import DTYPES, SAMPLED, MemoryEstimate, format_bytes

__all__ = [
    "DELTA_BYTES",
    "LINKS_GBIT",
    "SYNC_SECONDS",
    "ClusterEstimate",
    "cluster_estimate",
    "format_seconds",
    "hot_streets",
]

#: The default length of a cluster run's round, in seconds.
SYNC_SECONDS = 5.0
#: Bytes of a dense delta entry (float32).
DELTA_BYTES = 4
#: The link speeds, in Gbit/s, a round's transfer is timed at.
LINKS_GBIT = (1.0, 10.0)


def hot_streets(n_streets: int) -> int:
    """The hot rows' streets of a game of ``n_streets`` betting rounds: ``0 ..
    hot_streets(n) - 1``, every street before the last two (the preflop and the flop of
    hold'em) and at least the first, the rows nearly every deal visits."""
    return max(1, n_streets - 2)


def format_seconds(seconds: float) -> str:
    """``seconds`` with three significant digits in a fitting unit: ``'85 µs'``,
    ``'4.2 ms'``, ``'1.35 s'``, ``'2.5 min'``, ``'3.1 h'``."""
    for least, unit, size in ((7200.0, "h", 3600.0), (120.0, "min", 60.0), (1.0, "s", 1.0), (1e-3, "ms", 1e-3)):
        if seconds >= least:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds / 1e-6:.3g} µs"


def _rate(x: float) -> str:
    """A rate with three significant digits, whole from 100 up: ``'0.0123'``, ``'4.56'``, ``'1,230'``."""
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


@dataclass(frozen=True)
class ClusterEstimate:
    """A cluster run's memory per worker and driver and its bytes per round, worst case
    (see the module docstring). Every ``*_bytes`` field is bytes; ``single_machine`` is
    the total of :attr:`memory`."""

    memory: MemoryEstimate
    workers: int
    sync_seconds: float
    single_machine: int
    incoming_tables: int  # a worker: both tables, in its node's object store
    outgoing_deltas: int  # a worker: both deltas, dense float32
    put_tables: int  # the driver: the put copy of both tables
    gathered_deltas: int  # the driver: every worker's deltas
    bytes_out: int  # a round: the tables to every worker node
    bytes_in: int  # a round: every worker's deltas
    hot_entries: int = 0  # entries of the hot rows (hot_streets)
    hot_syncs: int = 0  # hot-row exchanges a round

    @property
    def hot_worker(self) -> int:
        """A worker's memory for the hot-row exchanges (0 without)."""
        if not self.hot_syncs:
            return 0
        return 2 * self.hot_entries * (DTYPES[self.memory.dtype] + 2 * DELTA_BYTES)

    @property
    def hot_actor(self) -> int:
        """The hot-row actor's memory: every worker's step deltas and their sum."""
        return (self.workers + 1) * 2 * self.hot_entries * DELTA_BYTES if self.hot_syncs else 0

    @property
    def hot_bytes_per_round(self) -> int:
        """Bytes through the hot-row actor's link each round: each worker's deltas in and
        the sum out, ``hot_syncs`` times."""
        return self.hot_syncs * self.workers * 2 * (2 * self.hot_entries * DELTA_BYTES)

    @property
    def worker_total(self) -> int:
        """A worker's memory during a round."""
        return self.single_machine + self.incoming_tables + self.outgoing_deltas + self.hot_worker

    @property
    def driver_total(self) -> int:
        """The driver's memory during a round."""
        return self.single_machine + self.put_tables + self.gathered_deltas

    @property
    def bytes_per_round(self) -> int:
        """Bytes in and out of the driver's link each round."""
        return self.bytes_out + self.bytes_in

    @property
    def bytes_per_second(self) -> float:
        """:attr:`bytes_per_round` over a round of :attr:`sync_seconds`."""
        return self.bytes_per_round / self.sync_seconds

    @property
    def megabytes_per_second(self) -> float:
        """:attr:`bytes_per_second` in MB/s (10^6 bytes)."""
        return self.bytes_per_second / 1e6

    @property
    def gigabits_per_second(self) -> float:
        """:attr:`bytes_per_second` in Gbit/s (10^9 bits)."""
        return self.bytes_per_second * 8 / 1e9

    def transfer_seconds(self, gbit: float) -> float:
        """Seconds a round's bytes take on a link of ``gbit`` Gbit/s."""
        return self.bytes_per_round * 8 / (gbit * 1e9)

    def hot_transfer_seconds(self, gbit: float) -> float:
        """Seconds a round's hot-row exchanges take on the actor's link of ``gbit`` Gbit/s
        (bandwidth only: each exchange also waits on the slowest worker and a round trip)."""
        return self.hot_bytes_per_round * 8 / (gbit * 1e9)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (for ``--json``): the settings, every part in bytes, the totals and
        the network figures (``transfer_seconds`` keyed by link speed in Gbit/s)."""
        m = self.memory
        return {
            "workers": self.workers,
            "threads": m.threads,
            "algorithm": m.algorithm,
            "dtype": m.dtype,
            "entries": m.entries,
            "sync_seconds": self.sync_seconds,
            "worker": {
                "single_machine_bytes": self.single_machine,
                "incoming_tables_bytes": self.incoming_tables,
                "outgoing_deltas_bytes": self.outgoing_deltas,
                "hot_rows_bytes": self.hot_worker,
                "total_bytes": self.worker_total,
            },
            "driver": {
                "single_machine_bytes": self.single_machine,
                "put_tables_bytes": self.put_tables,
                "gathered_deltas_bytes": self.gathered_deltas,
                "total_bytes": self.driver_total,
            },
            "bytes_out_per_round": self.bytes_out,
            "bytes_in_per_round": self.bytes_in,
            "bytes_per_round": self.bytes_per_round,
            "bytes_per_second": self.bytes_per_second,
            "megabytes_per_second": self.megabytes_per_second,
            "gigabits_per_second": self.gigabits_per_second,
            "transfer_seconds": {f"{g:g}": self.transfer_seconds(g) for g in LINKS_GBIT},
            "hot_syncs": self.hot_syncs,
            "hot_entries": self.hot_entries,
            "hot_actor_bytes": self.hot_actor,
            "hot_bytes_per_round": self.hot_bytes_per_round,
            "hot_transfer_seconds": {f"{g:g}": self.hot_transfer_seconds(g) for g in LINKS_GBIT},
        }

    def lines(self) -> list[str]:
        """Readable lines: the settings, one line per figure."""
        m, n = self.memory, self.workers
        threads = f"{m.threads} thread{'s' if m.threads != 1 else ''}"
        nodes = f"{n} worker node{'s' if n != 1 else ''}"
        rows = [
            ("worker: as one machine", self.single_machine, f"{m.algorithm}, {m.dtype}, {threads}: the total above"),
            ("worker: tables in", self.incoming_tables, "both tables, in its node's object store"),
            ("worker: deltas out", self.outgoing_deltas, "both tables' deltas, dense float32"),
            *(
                [("worker: hot rows", self.hot_worker, f"{self.hot_entries:,} entries: a step's start, deltas and sum")]
                if self.hot_syncs
                else []
            ),
            ("worker total", self.worker_total, ""),
            ("driver total", self.driver_total,
             f"as one machine, + put tables {format_bytes(self.put_tables)}, "
             f"+ {n} x deltas {format_bytes(self.gathered_deltas)}"),
            ("round out", self.bytes_out, f"both tables to each of {nodes}"),
            ("round in", self.bytes_in, f"{n} x dense deltas; sparse deltas are smaller"),
        ]
        out = [
            f"cluster: {n} worker{'s' if n != 1 else ''} x {threads}, rounds of "
            f"{self.sync_seconds:g} s; worst case: dense deltas, one node per worker"
        ]
        for label, size, note in rows:
            out.append(f"  {label:<22} {format_bytes(size):>11}" + (f"  ({note})" if note else ""))
        out.append(
            f"  {'network':<22} {format_bytes(self.bytes_per_round):>11}  (a round: "
            f"{_rate(self.megabytes_per_second)} MB/s = {_rate(self.gigabits_per_second)} Gbit/s "
            f"through the driver's link)"
        )
        for g in LINKS_GBIT:
            t = self.transfer_seconds(g)
            share = t / self.sync_seconds
            when = (
                f"{100 * share:.2g}% of a {self.sync_seconds:g} s round"
                if share < 1
                else f"{share:.3g} x a {self.sync_seconds:g} s round: the network sets the pace"
            )
            out.append(f"  {f'a round at {g:g} Gbit/s':<22} {format_seconds(t):>11}  ({when})")
        if self.hot_syncs:
            out.append(
                f"  {'hot-row actor':<22} {format_bytes(self.hot_actor):>11}  ({n} x a step's deltas and their sum)"
            )
            out.append(
                f"  {'hot rows a round':<22} {format_bytes(self.hot_bytes_per_round):>11}  "
                f"({self.hot_syncs} exchanges, in and out through the actor's link)"
            )
            for g in LINKS_GBIT:
                t = self.hot_transfer_seconds(g)
                out.append(
                    f"  {f'hot rows at {g:g} Gbit/s':<22} {format_seconds(t):>11}  "
                    f"({100 * t / self.sync_seconds:.2g}% of a {self.sync_seconds:g} s round, "
                    "plus a round trip an exchange)"
                )
        return out


def cluster_estimate(
    memory: MemoryEstimate,
    workers: int,
    sync_seconds: float = SYNC_SECONDS,
    hot_syncs: int = 0,
    hot_entries: int = 0,
) -> ClusterEstimate:
    """The worst-case memory and traffic of a cluster run of ``workers`` workers and
    rounds of ``sync_seconds``, each worker holding what ``memory`` (a single-machine
    estimate of a sampled algorithm, with the workers' threads and dtype) holds, and
    exchanging ``hot_entries`` entries (:func:`hot_streets`) ``hot_syncs`` times a round.

    Raises ``ValueError`` (one line) if ``memory`` is not of a sampled algorithm, or
    ``workers`` is not a whole number of at least 1, or ``sync_seconds`` not a finite
    positive number.
    """
    if memory.algorithm not in SAMPLED:
        raise ValueError(
            f"a cluster trains the sampled algorithms ({', '.join(SAMPLED)}), not {memory.algorithm}"
        )
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a whole number of at least 1, not {workers!r}")
    if (
        isinstance(sync_seconds, bool)
        or not isinstance(sync_seconds, (int, float))
        or not 0 < sync_seconds < math.inf
    ):
        raise ValueError(f"sync seconds must be a positive number, not {sync_seconds!r}")
    for name, value in (("hot syncs", hot_syncs), ("hot entries", hot_entries)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a whole number of at least 0, not {value!r}")
    entries, width = memory.entries, DTYPES[memory.dtype]
    tables = 2 * entries * width
    deltas = 2 * entries * DELTA_BYTES
    return ClusterEstimate(
        memory=memory,
        workers=workers,
        sync_seconds=float(sync_seconds),
        single_machine=memory.total,
        incoming_tables=tables,
        outgoing_deltas=deltas,
        put_tables=tables,
        gathered_deltas=workers * deltas,
        bytes_out=workers * tables,
        bytes_in=workers * deltas,
        hot_entries=hot_entries,
        hot_syncs=hot_syncs,
    )
