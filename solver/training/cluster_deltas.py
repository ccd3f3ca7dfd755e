"""What a cluster's workers send: their tables' deltas, encoded dense or sparse as float32,
and the hot rows they exchange several times a round (:mod:`solver.training.cluster`
explains when and why)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from abstraction.cluster import ClusterError

from .cluster_plan import hot_streets

__all__ = ["HotRows", "decode_delta", "delta_bytes", "encode_delta", "hot_entries"]


@njit(cache=True)
def _gather_changed(new: np.ndarray, old: np.ndarray, scale: Any, index: np.ndarray, value: np.ndarray) -> int:
    """The nonzero entries of ``(new - old) * scale`` as float32: their positions into
    ``index`` and their values into ``value``; returns how many, or -1 as soon as there
    are more than ``index.size - 1`` (the last slot is scratch)."""
    k = 0
    cap = index.size - 1
    for i in range(new.size):
        v = np.float32((new[i] - old[i]) * scale)
        # written always, kept only if nonzero: no branch to mispredict on which
        # entries changed (twice as fast on a table where one in seven did)
        index[k] = i
        value[k] = v
        k += v != 0
        if k > cap:
            return -1
    return k


@njit(cache=True)
def _dense_changed(new: np.ndarray, old: np.ndarray, scale: Any, out: np.ndarray) -> None:
    """``(new - old) * scale`` as float32 into ``out``."""
    for i in range(new.size):
        out[i] = np.float32((new[i] - old[i]) * scale)


def encode_delta(new: np.ndarray, old: np.ndarray, scale: float = 1.0) -> tuple[str, Any, Any]:
    """What ``new`` gained over ``old``, times ``scale``, as float32: ``("dense", values,
    None)``, or ``("sparse", indices, values)`` where that is smaller (fewer than half
    the entries changed: 8 bytes a changed entry against 4 an entry).

    One pass over both tables for a sparse delta, into buffers of half the table that
    the operating system commits only as far as they are written, and a second pass only
    where the delta turns out dense: on the full deck's shipped betting (33 M entries)
    numpy's subtract, scale, nonzero and gather took 0.34 to 0.69 s a table, and a count
    before the gather still left encoding 7.6% of a round's worker time. The difference is
    taken in the tables' own dtype (a float32 cast first would cancel digits) and scaled
    in it, as numpy's in-place product would."""
    if new.shape != old.shape or new.dtype != old.dtype:
        raise ValueError(f"tables differ: {new.dtype}{new.shape} against {old.dtype}{old.shape}")
    a, b = new.reshape(-1), old.reshape(-1)
    s = new.dtype.type(scale)
    cap = max(0, (a.size - 1) // 2)  # sparse while 2 x changed < entries
    index = np.empty(cap + 1, np.int32 if a.size < (1 << 31) else np.int64)
    value = np.empty(cap + 1, np.float32)
    changed = _gather_changed(a, b, s, index, value)
    if changed >= 0:
        return "sparse", index[:changed], value[:changed]
    del index, value
    out = np.empty(a.size, np.float32)
    _dense_changed(a, b, s, out)
    return "dense", out.reshape(new.shape), None


@njit(cache=True)
def _scatter_add(table: np.ndarray, index: np.ndarray, value: np.ndarray) -> None:
    """``table[index] += value`` for distinct indices, in the table's dtype (numpy's
    fancy-indexed add does the same arithmetic four times slower: the driver adds every
    worker's deltas while the workers wait)."""
    for k in range(index.size):
        table[index[k]] += value[k]


def decode_delta(table: np.ndarray, delta: tuple[str, Any, Any]) -> None:
    """Add an :func:`encode_delta` result to ``table`` in place."""
    kind, a, b = delta
    if kind == "dense":
        table += a.reshape(table.shape)
    elif kind == "sparse":
        _scatter_add(table.reshape(-1), a, b)
    else:
        raise ClusterError(f"unknown delta encoding {kind!r}")


def delta_bytes(delta: tuple[str, Any, Any]) -> int:
    """Bytes an encoded delta occupies (what it moves over the network)."""
    return sum(int(x.nbytes) for x in delta[1:] if x is not None)


def hot_entries(layout: Any) -> slice | np.ndarray:
    """The table entries of the *hot* rows of a sampled solver's ``layout``
    (:class:`~solver.training.sampled.TableLayout`): every row of the streets before the
    last two (the preflop and the flop of hold'em; the first street of a game of one or
    two), which nearly every deal visits. A slice where they lead the table (the bucket
    layout lays streets out in order), else their indices."""
    problem = layout.problem
    tree = problem.tree
    end = hot_streets(tree.n_streets)
    if layout.kind == "bucket":
        stop = int(layout.block_base[end, 0]) if end < tree.n_streets else int(problem.size)
        return slice(0, stop)
    nodes = [int(n) for n in tree.decision_nodes() if int(tree.street[n]) < end]
    if not nodes:
        return np.zeros(0, dtype=np.int64)
    return np.sort(np.concatenate([layout.node_entries(n) for n in nodes]))


class HotRows:
    """A Ray actor (asynchronous) through which a round's workers exchange their hot
    rows' deltas. ``exchange``: each sends its own for a step and gets back the sum of
    all of them, added in worker order, once every worker of the round has sent it.
    ``post`` (exchanges that do not wait): each sends what it gained since its last post
    and gets back at once the sum of what the other workers have posted in the round so
    far; ``take`` hands the driver that sum at the round's end. ``abort`` frees the
    workers of a round in which one died (they get None)."""

    def __init__(self) -> None:
        self._steps: dict[tuple[int, int], dict[str, Any]] = {}
        # posts' sums by (round, table) and each worker's own by (round, slot, table);
        # table 0 the regrets, 1 the average sums
        self._sums: dict[tuple[int, int], np.ndarray] = {}
        self._own: dict[tuple[int, int, int], np.ndarray] = {}
        self._aborted: set[int] = set()

    @staticmethod
    def _add(into: dict[Any, np.ndarray], key: Any, x: np.ndarray) -> np.ndarray:
        acc = into.get(key)
        if acc is None:
            acc = into[key] = np.zeros(x.shape, np.float32)
        acc += x
        return acc

    def _forget(self, round_key: int) -> None:
        for key in [k for k in self._own if k[0] == round_key]:
            del self._own[key]

    async def post(
        self, round_key: int, slot: int, regrets: np.ndarray, avg: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray | None] | None:
        """Add worker ``slot``'s gain to the round's sum; return what the *other* workers
        have posted so far (None: round aborted). Not its own: an asynchronous actor may
        run one worker's posts out of order, so a worker adds its own gains itself.
        ``avg`` None: no average sums this time (and none back)."""
        if round_key in self._aborted:
            return None
        out: list[np.ndarray | None] = []
        for table, x in enumerate((regrets, avg)):
            if x is None:
                out.append(None)
                continue
            total = self._add(self._sums, (round_key, table), x)
            mine = self._add(self._own, (round_key, slot, table), x)
            # a new array: Ray may serialize a result after the next post has begun adding
            out.append(total - mine)
        return out[0], out[1]

    async def take(self, round_key: int) -> tuple[np.ndarray, np.ndarray | None] | None:
        """The round's sum of posts, forgotten here (None if nothing was posted)."""
        self._forget(round_key)
        regrets = self._sums.pop((round_key, 0), None)
        avg = self._sums.pop((round_key, 1), None)
        return None if regrets is None else (regrets, avg)

    async def exchange(
        self, key: tuple[int, int], workers: int, slot: int, regrets: np.ndarray, avg: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray] | None:
        import asyncio

        if key[0] in self._aborted:
            return None
        step = self._steps.get(key)
        if step is None:
            step = self._steps[key] = {"in": {}, "done": asyncio.Event(), "out": None, "read": 0}
        step["in"][slot] = (regrets, avg)
        if len(step["in"]) == workers:
            order = sorted(step["in"])
            r = np.array(step["in"][order[0]][0], dtype=np.float32)
            a = np.array(step["in"][order[0]][1], dtype=np.float32)
            for k in order[1:]:
                r += step["in"][k][0]
                a += step["in"][k][1]
            step["out"] = (r, a)
            step["done"].set()
        await step["done"].wait()
        out = step["out"]
        step["read"] += 1
        if step["read"] == len(step["in"]):
            self._steps.pop(key, None)
        return out

    async def abort(self, round_key: int) -> None:
        self._aborted.add(round_key)
        self._sums.pop((round_key, 0), None)
        self._sums.pop((round_key, 1), None)
        self._forget(round_key)
        for key, step in list(self._steps.items()):
            if key[0] == round_key:
                step["out"] = None
                step["done"].set()
                self._steps.pop(key, None)
