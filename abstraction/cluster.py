"""Ray for the project's long jobs: connecting, identity, and the card abstraction's
feature stages as tasks over shards.

What every cluster job shares (:mod:`solver.training.cluster` trains on it too):
:func:`import_ray` (Ray is the optional ``cluster`` extra, imported only here and only
when a job asks), :func:`connect` (a running cluster, or ``'local'``: a Ray instance of
this machine started for the job) and :func:`code_digest` (the source a remote process
must share with the driver before its results are used).

:class:`FeatureCluster` runs the two feature stages of :func:`abstraction.build.build_abstraction`
on the cluster: the river's E[HS] (:func:`abstraction.features.river_part` over ranges of
canonical boards, whose classes never overlap) and each earlier street's histograms
(:func:`abstraction.features.tower_part` over ranges of canonical hands, the next
street's features sent once through the object store). Both are exact integer sums per
hand, so the driver's table is the local build's byte for byte, whatever the shards.

k-means's assignment steps run there too (:class:`ShardedAssignment`): each worker is an
actor owning a range of the points, with their labels and Yinyang bounds; every step the
driver sends the centres and their moves, and each worker sends back the labels that
changed. A point's step reads only its own bounds, so the labels, and with them the
centres the driver computes from them (the weighted means, in the local build's order),
are the local build's bit for bit. The seeding, the means and the history pair maps run
on the driver. Each task and actor runs its numba kernels on one thread (it holds one
CPU of the cluster) and reports the code it ran, which must be the driver's.
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from poker.game import Game, parse_game

from . import features as F
from . import kmeans as K

__all__ = [
    "CODE_PACKAGES",
    "INSTALL_HINT",
    "ClusterError",
    "FeatureCluster",
    "ShardedAssignment",
    "code_digest",
    "connect",
    "head_silence",
    "import_ray",
    "probe_head",
]

#: What a job without Ray prints.
INSTALL_HINT = "--cluster needs Ray: pip install -e '.[cluster]'"
#: The packages whose source a remote process must share with the driver.
CODE_PACKAGES = ("poker", "abstraction", "solver")
#: Shards per worker of a feature stage (a few each, so a slow node does not hold the
#: stage up for long).
SHARDS_PER_WORKER = 4
#: Seconds a Ray head has to answer before a job refuses its address.
PROBE_SECONDS = 5.0


class ClusterError(ValueError):
    """A cluster job that cannot start or go on; the message is one line."""


def import_ray() -> Any:
    """The ``ray`` module, or :class:`ClusterError` with :data:`INSTALL_HINT`."""
    try:
        import ray
    except ImportError:
        raise ClusterError(INSTALL_HINT) from None
    return ray


def connect(address: str, cpus: int, timeout: float = PROBE_SECONDS) -> bool:
    """Connect this process to the Ray cluster at ``address`` (``'local'``: start one on
    this machine with ``cpus`` CPUs) unless it already is, and check the cluster has
    ``cpus`` CPUs. Returns whether this call started the connection (the caller then
    shuts it down). Raises :class:`ClusterError` (one line), also when ``address`` does
    not answer as a Ray head within ``timeout`` seconds."""
    ray = import_ray()
    owns = False
    if not ray.is_initialized() and address not in ("local", "auto"):
        probe_head(address, timeout)
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {
            "logging_level": logging.ERROR,
            "log_to_driver": False,
            "include_dashboard": False,
            "namespace": "pokerbot",
        }
        try:
            if address == "local":
                ray.init(num_cpus=cpus, **kwargs)
            else:
                ray.init(address=address, **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ClusterError(f"cannot reach the Ray cluster at {address}: {first}") from None
        owns = True
    have = float(ray.cluster_resources().get("CPU", 0))
    if have < cpus:
        if owns:
            ray.shutdown()
        raise ClusterError(f"the Ray cluster has {have:g} CPUs; the job needs {cpus}")
    return owns


def probe_head(address: str, seconds: float = PROBE_SECONDS) -> None:
    """Refuse an address (HOST:PORT) whose port does not answer within ``seconds``, or
    answers but not as a Ray head, in one line (:class:`ClusterError`), before Ray (which
    would retry for minutes, printing as it goes, or wait on a silent port until killed)
    is asked to join it."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ClusterError(f"--cluster {address}: give HOST:PORT of the cluster's head, 'auto' or 'local'")
    why = head_silence(address, seconds)
    if why is not None:
        raise ClusterError(f"cannot reach the Ray cluster at {address}: {why}")


#: HTTP/2's client connection preface and an empty SETTINGS frame (RFC 9113, 3.4). The
#: head's GCS is a gRPC server, and an HTTP/2 server's first frame is SETTINGS.
_H2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


def head_silence(address: str, seconds: float = PROBE_SECONDS) -> str | None:
    """Why the Ray head at ``address`` (HOST:PORT of its GCS) does not answer, in a few
    words, or None when it answers within ``seconds`` as a gRPC server does (an HTTP/2
    SETTINGS frame in reply to the connection preface). A port that accepts and says
    nothing, closes, or answers in another protocol (an HTTP/1 server) is not a Ray head.
    With Ray's TLS (``RAY_USE_TLS``) a connection that opens is enough."""
    host, _, port = address.rpartition(":")
    deadline = time.monotonic() + seconds
    try:
        sock = socket.create_connection((host, int(port)), timeout=seconds)
    except OSError as exc:
        return exc.strerror or str(exc) or type(exc).__name__
    with sock:
        if os.environ.get("RAY_USE_TLS", "0").lower() not in ("0", "false", ""):
            return None
        reply = b""
        try:
            sock.sendall(_H2_HELLO)
            while len(reply) < 9:  # a frame's header: length (3), type (1), flags (1), stream (4)
                sock.settimeout(max(0.001, deadline - time.monotonic()))
                part = sock.recv(9 - len(reply))
                if not part:
                    return "the port closed the connection without answering as a Ray head does"
                reply += part
        except TimeoutError:
            return f"the port accepted a connection but said nothing in {seconds:g} s (not a Ray head)"
        except OSError as exc:
            return exc.strerror or str(exc) or type(exc).__name__
    if reply[3] != 4 or reply[4] & 1:  # not SETTINGS, or an acknowledgement
        return "the port answers, but not as a Ray head (a gRPC server) does"
    return None


_code_digest: str | None = None


def code_digest() -> str:
    """``sha256:...`` of every ``.py`` file of :data:`CODE_PACKAGES` (path and bytes, in
    path order): the code a remote process must share with the driver. Once a process."""
    global _code_digest
    if _code_digest is None:
        root = Path(__file__).resolve().parents[1]
        h = hashlib.sha256()
        for package in CODE_PACKAGES:
            for path in sorted((root / package).rglob("*.py")):
                h.update(str(path.relative_to(root)).encode())
                h.update(b"\0")
                h.update(path.read_bytes())
                h.update(b"\0")
        _code_digest = "sha256:" + h.hexdigest()
    return _code_digest


# -- the feature stages as tasks ------------------------------------------------------


def _one_thread() -> None:
    """Run this task's numba kernels on one thread: the task holds one CPU."""
    import numba

    numba.set_num_threads(1)


def _river_task(game_text: str, game_name: str, lo: int, hi: int) -> tuple[str, Any]:
    _one_thread()
    space = F.CardSpace.from_game(parse_game(game_text, name=game_name))
    return code_digest(), F.river_part(space, lo, hi)


def _tower_task(game_text: str, game_name: str, street: int, nxt: Any, bins: int, lo: int, hi: int) -> tuple[str, Any]:
    _one_thread()
    space = F.CardSpace.from_game(parse_game(game_text, name=game_name))
    return code_digest(), tuple(F.tower_part(space, street, nxt, bins, lo, hi))


def _same_code(code: str) -> None:
    """Refuse, in one line, a remote result computed by other code than the driver's."""
    if code != code_digest():
        raise ClusterError(
            f"a worker of the Ray cluster runs other code ({code[:19]}) than the driver "
            f"({code_digest()[:19]}): install the same pokerbot on every machine"
        )


def _shards(n: int, parts: int) -> list[tuple[int, int]]:
    """``0 .. n - 1`` in ``parts`` consecutive ranges (fewer if ``n`` is small)."""
    parts = max(1, min(parts, n))
    edges = np.linspace(0, n, parts + 1).round().astype(np.int64)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]


class FeatureCluster:
    """The feature stages of a build on ``workers`` CPUs of the Ray cluster at
    ``address`` (see the module docstring). :meth:`close` ends a connection it started."""

    def __init__(self, address: str, workers: int, say: Callable[[str], None] | None = None) -> None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ClusterError(f"--workers must be a whole number of at least 1, not {workers!r}")
        self.address = address
        self.workers = workers
        self.say = say or (lambda line: None)
        self.ray = import_ray()
        self._owns = connect(address, workers)
        self._river = self.ray.remote(num_cpus=1)(_river_task)
        self._tower = self.ray.remote(num_cpus=1)(_tower_task)
        self.tasks = 0
        self.bytes_in = 0
        self.assign_steps = 0  # k-means assignment steps run on the workers
        self._assigner = self.ray.remote(num_cpus=1)(_AssignWorker)
        self._assigners: list[Any] = []  # actors of the assignment steps, kept between runs

    def assignment(self, x: np.ndarray, t: int) -> ShardedAssignment:
        """k-means's assignment steps on this cluster (the ``assignment`` argument of
        :func:`abstraction.kmeans.kmeans`)."""
        return ShardedAssignment(self, x, t)

    def _assign_workers(self, count: int) -> list[Any]:
        """``count`` actors for assignment steps, started the first time they are needed."""
        while len(self._assigners) < count:
            self._assigners.append(self._assigner.remote())
        return self._assigners[:count]

    def _replace_assign_worker(self, slot: int) -> Any:
        """A new actor in place of the dead one at ``slot``."""
        self._assigners[slot] = self._assigner.remote()
        return self._assigners[slot]

    def _gather(self, refs: list[Any], place: Callable[[int, Any], None], progress: Callable[[int], None] | None) -> None:
        """Wait for ``refs``, placing each result (by its position) as it comes."""
        ray = self.ray
        where = {ref: k for k, ref in enumerate(refs)}
        pending = list(refs)
        done = 0
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                code, result = ray.get(ref)
                _same_code(code)
                place(where[ref], result)
                self.bytes_in += sum(int(a.nbytes) for a in result)
                done += 1
                self.tasks += 1
                if progress is not None:
                    progress(done)

    def river_table(self, game: Game, progress: F.ProgressFn | None = None) -> F.RiverTable:
        """:func:`abstraction.features.river_table`, its canonical boards shared out."""
        space = F.CardSpace.from_game(game)
        n_boards = F.canonical_boards(space, space.last).shape[0]
        n = space.indexer(space.last).count()
        values = np.zeros(n, np.uint16)
        weights = np.zeros(n, np.uint8)
        shards = _shards(n_boards, SHARDS_PER_WORKER * self.workers)
        text, name = game.to_text(), game.name
        refs = [self._river.remote(text, name, lo, hi) for lo, hi in shards]

        def place(k: int, part: Any) -> None:
            index, v, w = part
            values[index] = v
            weights[index] = w

        tick = None if progress is None else (lambda done: progress(done * n_boards // len(shards), n_boards))
        self._gather(refs, place, tick)
        return F.RiverTable(values, weights)

    def tower_features(
        self, game: Game, street: int, nxt: F.RiverTable | F.StreetFeatures, bins: int,
        progress: F.ProgressFn | None = None,
    ) -> F.StreetFeatures:
        """:func:`abstraction.features.tower_features`, its canonical hands shared out."""
        space = F.CardSpace.from_game(game)
        n = space.indexer(street).count()
        out = F._empty_features(n, bins)
        shards = _shards(n, SHARDS_PER_WORKER * self.workers)
        nxt_ref = self.ray.put(nxt)
        text, name = game.to_text(), game.name
        refs = [self._tower.remote(text, name, street, nxt_ref, bins, lo, hi) for lo, hi in shards]

        def place(k: int, part: Any) -> None:
            lo, hi = shards[k]
            for full, piece in zip(out, part):
                full[lo:hi] = piece

        tick = None if progress is None else (lambda done: progress(done * n // len(shards), n))
        self._gather(refs, place, tick)
        return out

    def close(self) -> None:
        """Stop the assignment workers and end the connection this object started, if it did."""
        for actor in self._assigners:
            self.ray.kill(actor)
        self._assigners = []
        if self._owns:
            self._owns = False
            self.ray.shutdown()


# -- k-means's assignment steps on actors ----------------------------------------------


class _AssignWorker:
    """A range of k-means's points on one worker: their labels and Yinyang bounds
    (:class:`abstraction.kmeans.LocalAssignment`), kept between steps. Each call returns
    the code digest and the labels that changed since the last call."""

    def __init__(self) -> None:
        self.a: K.LocalAssignment | None = None

    def load(self, x: np.ndarray | None, t: int) -> str:
        """Take a k-means run's points (``None``: drop the last run's)."""
        self.a = self.sent = None
        if x is not None:
            # arrays from the object store are read-only: numba would compile every
            # kernel again for that type, so the worker works on copies
            self.a = K.LocalAssignment(np.array(x), t)
            self.sent = self.a.labels.copy()
        return code_digest()

    def _changes(self) -> tuple[np.ndarray, np.ndarray]:
        index = np.flatnonzero(self.a.labels != self.sent).astype(np.int32)
        self.sent[index] = self.a.labels[index]
        return index, self.a.labels[index]

    def full(self, centres: tuple[Any, ...]) -> tuple[str, Any]:
        _one_thread()
        moved = self.a.full(_copies(centres)[1])
        return code_digest(), (*self._changes(), moved, 0)

    def step(self, centres: tuple[Any, ...]) -> tuple[str, Any]:
        _one_thread()
        moved, scanned = self.a.step(*_copies(centres))
        return code_digest(), (*self._changes(), moved, scanned)


def _copies(centres: tuple[Any, ...]) -> tuple[Any, ...]:
    """The step's arguments, their arrays copied out of the object store (writable)."""
    c, lay, *rest = centres
    lay = type(lay)(*(np.array(a) for a in lay))
    return (None if c is None else np.array(c), lay, *(np.array(a) for a in rest))


class ShardedAssignment:
    """:class:`abstraction.kmeans.Assignment` on a :class:`FeatureCluster`'s workers:
    the points ``x`` in one consecutive range per worker, each an actor holding its
    points, labels and bounds (see the module docstring); ``labels`` is kept current on
    the driver. A worker that dies is replaced by a new one, which scans its range
    fully against the current centres: the labels are those the step would have given
    (the bounds only ever skip a point whose centre cannot change), and the build says
    so through the cluster's ``say`` and goes on."""

    def __init__(self, cluster: FeatureCluster, x: np.ndarray, t: int) -> None:
        self.ray = cluster.ray
        self.cluster = cluster
        self.x = x
        self.t = t
        self.labels = np.zeros(x.shape[0], np.int32)
        self.shards = _shards(x.shape[0], cluster.workers)
        self._actors = cluster._assign_workers(len(self.shards))
        for code in self.ray.get([a.load.remote(x[lo:hi], t) for a, (lo, hi) in zip(self._actors, self.shards)]):
            _same_code(code)
        self.steps = 0
        self.replaced = 0
        self._points = 0  # points of the step under way whose worker has answered

    def _run(self, method: str, centres: tuple[Any, ...]) -> tuple[int, int]:
        """Every worker's ``method`` on the centres (sent once); the labels that changed
        go into ``labels``. Returns the points moved and the distances computed."""
        ray = self.ray
        ref = ray.put(centres)
        refs = [getattr(actor, method).remote(ref) for actor in self._actors]
        moved = scanned = 0
        for w, pending in enumerate(refs):
            lo, hi = self.shards[w]
            try:
                code, (index, values, m, sc) = ray.get(pending)
            except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError) as exc:
                self.cluster.say(f"k-means worker {w} died ({type(exc).__name__}); a replacement scans its {hi - lo:,} points fully")
                self.replaced += 1
                self._actors[w] = self.cluster._replace_assign_worker(w)
                ray.get(self._actors[w].load.remote(self.x[lo:hi], self.t))
                code, (index, values, _, _) = ray.get(self._actors[w].full.remote(ref))
                labels = np.zeros(hi - lo, np.int32)  # what the new worker reported, against zeros
                labels[index] = values
                index = np.flatnonzero(labels != self.labels[lo:hi]).astype(np.int32)
                values = labels[index]
                m, sc = index.size, (hi - lo) * int(np.count_nonzero(centres[1].order >= 0))
            _same_code(code)
            self.labels[lo + index] = values
            self.cluster.bytes_in += int(index.nbytes + values.nbytes)
            moved += int(m)
            scanned += int(sc)
            self._points += hi - lo
        self._points = 0  # no step under way
        self.steps += 1
        self.cluster.assign_steps += 1
        return moved, scanned

    def full(self, lay: Any) -> int:
        return self._run("full", (None, lay))[0]

    def step(self, c: np.ndarray, lay: Any, half: np.ndarray, move: np.ndarray, gmove: np.ndarray) -> tuple[int, int]:
        return self._run("step", (c, lay, half, move, gmove))

    def points_done(self) -> int:
        """Points of the step under way whose worker has answered (0 between steps)."""
        return self._points

    def close(self) -> None:
        """Free the workers' copies of the points (the workers stay, for the next run)."""
        self.ray.get([a.load.remote(None, 0) for a in self._actors])
        self._actors = []
