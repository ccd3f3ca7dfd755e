"""Exact best response and exploitability by a public-tree walk over private-hand vectors.

Johanson, Waugh, Bowling and Zinkevich 2011, "Accelerating best response calculation in
large extensive games" (Section 4): walk the public tree once per best-responding player,
carrying the opponent's reach vector over its private hands (its strategy and chance);
at the responder's decision nodes the value of each of its hands is the maximum over
actions of the action values (its information set there is exactly (public state,
hand)); at the opponent's nodes the action values are summed; at terminals the values
against the opponent's vector come from an O(n) sweep over hands sorted by strength, with
card removal (Section 4.2). The opponent's strategy may be defined over buckets of a
card abstraction; this responder always sees its exact hand and the board, so it measures
the strategy in the real card game (with the same betting tree): :func:`exploitability`.

In the *abstract* game (:func:`abstract_exploitability`) the responder is limited to the
same information sets as the strategy: (decision node, bucket of its cards on that
street). Its strategy is built by backward induction over those information sets: in
order of how many of its own decisions can still follow (none first), each information
set takes the action with the highest counterfactual value summed over every (board,
hand) in its bucket (Zinkevich et al. 2007, Eq. 7: the same sums CFR's regret update
makes, hence one ``MODE_CFR`` walk per level), the deeper choices already fixed; its
value is one more walk. With buckets that remember everything earlier streets showed
(perfect recall: lossless buckets, suit-isomorphic classes) this is the abstract game's
best response. With imperfect-recall buckets an exact best response is NP-hard in
general; the value is then that of the best responder found this way, a lower bound on
the abstract best response. Either way it is the value of a responder that sees only
buckets, so it never exceeds the real-game best response.

exploitability = (BR_0 + BR_1) / 2 in chips per game, where BR_i is the value of player
i's best response (Johanson et al. 2011, Eq. 1 halved, as OpenSpiel's
``exploitability`` reports it); mbb/g = 1000 * exploitability / big blind.

The walks of an evaluation are independent (each player's best response, and the
profile's value), so with ``threads`` above 1 they run side by side (the walk releases
the GIL), each with its own scratch space; the figures are the same either way. They run
off the calling thread (:func:`poker._stop.run_stoppable`) and read a stop flag as they
enter each (public node, board state) pair, so SIGINT or SIGTERM (through
:func:`poker._stop.stop_all`) ends an evaluation within a second, even one whose walks
take minutes; it then raises :class:`poker._stop.Interrupted` and returns no figure.
Those pairs are the unit of progress: :func:`walk_units` per walk, known before the
walks start, and ``progress`` hears (pairs done, pairs in all) of the whole evaluation
about ten times a second while it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from poker._compile import cold
from poker._stop import Interrupted, counter, run_stoppable, stoppable
from poker.game import Game

from .. import _kernels as K
from ..problem import Buffers, Problem, as_game
from ..strategy import Strategy

__all__ = [
    "NodeProgress",
    "Result",
    "abstract_and_real_exploitability",
    "abstract_best_response_value",
    "abstract_walks",
    "abstract_exploitability",
    "best_response_value",
    "evaluation_units",
    "exploitability",
    "profile_value",
    "walk_units",
    "walks_cold",
]


#: Told (units done, units in all) of an evaluation's walks, a unit being a (public node,
#: board state) pair a walk enters (:func:`walk_units`), from the thread that waits on them.
NodeProgress = Callable[[int, int], None]
#: A walk of an evaluation: ``job(flag, visited)`` reads the stop ``flag`` and counts its
#: units in ``visited[0]``; its value is meaningless once the flag is set.
_Job = Callable[[np.ndarray, np.ndarray], float]


@dataclass(frozen=True)
class Result:
    """Exploitability of a strategy profile.

    ``exploitability``: (BR_0 + BR_1) / 2 in chips per game; ``mbb_per_game``: the same
    in milli-big-blinds; ``br``: (BR_0, BR_1), each player's best-response value against
    the other; ``value``: the first player's expected value when both follow the profile.
    """

    exploitability: float
    mbb_per_game: float
    br: tuple[float, float]
    value: float


def _checked_policy(strategy: Strategy, player: int) -> np.ndarray:
    p = strategy.problem
    if strategy.policy.shape != (p.size,):
        raise ValueError(f"policy has shape {strategy.policy.shape}, the tree needs ({p.size},)")
    if player not in (0, 1):
        raise ValueError(f"player {player} is not 0 or 1")
    return np.ascontiguousarray(strategy.policy, dtype=np.float64)


def _root(
    p: Problem, player: int, mode: int, policy: np.ndarray, acc: np.ndarray, b: Buffers,
    flag: np.ndarray, visited: np.ndarray,
) -> float:
    dummy = np.zeros(1)
    return float(
        K.root_value(
            p.ktree,
            p.kchance,
            player,
            mode,
            policy,
            acc,
            dummy,
            0.0,
            b.vals,
            b.rbuf,
            b.cs,
            b.frames,
            flag,
            visited,
        )
    )


def _walk(strategy: Strategy, player: int, mode: int, flag: np.ndarray, visited: np.ndarray) -> float:
    policy = _checked_policy(strategy, player)
    p = strategy.problem
    return _root(p, player, mode, policy, np.zeros(1), p.buffers(), flag, visited)


def _alone(job: _Job) -> float:
    """One walk (or one responder's walks) as an evaluation of its own: off the calling
    thread, stopped by :func:`poker._stop.stop_all`, raising
    :class:`~poker._stop.Interrupted` when stopped."""
    with stoppable() as stop:
        return run_stoppable(lambda: job(stop.flag, counter()), stop)


def walk_units(problem: Problem) -> int:
    """The units of progress of one walk from the root (:func:`solver._kernels.root_value`):
    the (public node, board state) pairs it enters, every node of a street once per board
    state of that street the walk reaches (every first-street state, then the children of
    a reached state on which some hand is alive)."""
    c = problem.kchance
    live = (np.asarray(c.bucket) >= 0).any(axis=1)
    reached: list[int] = []
    states = np.asarray(c.root_states, dtype=np.int64)
    while states.size:
        reached.append(int(states.size))
        n = np.asarray(c.bs_n_child, dtype=np.int64)[states]
        first = np.asarray(c.bs_child, dtype=np.int64)[states]
        # every child of every reached state: first + 0 .. n - 1, run by run
        kids = np.repeat(first - np.cumsum(n) + n, n) + np.arange(int(n.sum()))
        states = kids[live[kids]]
    per_street = np.bincount(problem.tree.street, minlength=len(reached))
    return int(sum(int(per_street[s]) * r for s, r in enumerate(reached)))


def walks_cold() -> bool:
    """Whether the walk kernel compiles before it runs (numba's cache is cold): an
    evaluation then spends its first seconds compiling (first run only)."""
    return cold(K.root_value)


def _buckets_identify_hands(problem: Problem) -> bool:
    """True if the responder limited to buckets does as well as the real one: no bucket
    holds two (board state, hand) pairs (identity maps, the raw lossless numbering), or
    the buckets are lossless suit-isomorphism classes (every hand of a class has the
    same counterfactual values against a strategy over classes, so a best response over
    classes is a real one)."""
    ch = problem.chance
    if ch.lossless:
        return True
    bucket = ch.kernel.bucket
    for s, nb in enumerate(ch.n_buckets):
        rows = bucket[ch.board_street == s]
        if np.bincount(rows[rows >= 0], minlength=nb).max(initial=0) > 1:
            return False
    return True


def _levels(problem: Problem, player: int) -> list[list[int]]:
    """``player``'s decision nodes grouped by level: the most decisions of ``player`` on a
    path strictly below the node (nodes come after their parents, so one backward pass)."""
    tree = problem.tree
    kind = tree.kind.tolist()
    actor = tree.player.tolist()
    parent = tree.parent.tolist()
    below = [0] * tree.n_nodes  # most player decisions in the subtree strictly below
    out: list[list[int]] = []
    for node in range(tree.n_nodes - 1, -1, -1):
        mine = kind[node] == K.DECISION and actor[node] == player
        if mine:
            lev = below[node]
            while len(out) <= lev:
                out.append([])
            out[lev].append(node)
        up = parent[node]
        if up >= 0:
            below[up] = max(below[up], below[node] + int(mine))
    return out


def _abstract_best_response(strategy: Strategy, player: int, flag: np.ndarray, visited: np.ndarray) -> float:
    """:func:`abstract_best_response_value` as a job of an evaluation (see :data:`_Job`)."""
    policy = _checked_policy(strategy, player)
    p = strategy.problem
    if _buckets_identify_hands(p):
        return _walk(strategy, player, K.MODE_BR, flag, visited)
    tree = p.tree
    b = p.buffers()
    pure = policy.copy()
    acc = np.zeros(p.size)
    for nodes in _levels(p, player):
        # Counterfactual regrets of the profile in which the responder's deeper
        # decisions are already fixed: their argmax per bucket is the action with the
        # highest counterfactual value (the node's own policy term is common to all).
        acc[:] = 0.0
        _root(p, player, K.MODE_CFR, pure, acc, b, flag, visited)
        if flag[0]:
            return float("nan")  # stopped: the sums are partial
        for node in nodes:
            n_act = int(tree.n_child[node])
            nb = int(p.chance.n_buckets[tree.street[node]])
            o = int(p.offset[node])
            best = acc[o : o + nb * n_act].reshape(nb, n_act).argmax(axis=1)
            block = np.zeros((nb, n_act))
            block[np.arange(nb), best] = 1.0
            pure[o : o + nb * n_act] = block.ravel()
    return _root(p, player, K.MODE_EV, pure, np.zeros(1), b, flag, visited)


def abstract_best_response_value(strategy: Strategy, player: int) -> float:
    """Value (chips per game) of ``player``'s best response limited to the strategy's
    buckets, found by backward induction (see the module docstring; exact for
    perfect-recall buckets, a lower bound on the abstract best response otherwise). Its
    walks (:func:`abstract_walks` of them) stop as an evaluation's do."""
    return _alone(lambda flag, visited: _abstract_best_response(strategy, player, flag, visited))


def abstract_walks(strategy: Strategy, player: int) -> int:
    """How many tree walks :func:`abstract_best_response_value` makes for ``player``: one
    per level of its decisions and one for the value, or one where the buckets tell
    every hand apart."""
    p = strategy.problem
    return 1 if _buckets_identify_hands(p) else len(_levels(p, player)) + 1


def best_response_value(strategy: Strategy, player: int) -> float:
    """Value (chips per game) of ``player``'s best response to the other player's part of ``strategy``."""
    return _alone(lambda flag, visited: _walk(strategy, player, K.MODE_BR, flag, visited))


def profile_value(strategy: Strategy, player: int = 0) -> float:
    """Expected value (chips per game) of ``player`` when both players follow ``strategy``."""
    return _alone(lambda flag, visited: _walk(strategy, player, K.MODE_EV, flag, visited))


def exploitability(
    game: Game | str | Path | None, strategy: Strategy, *, threads: int = 1,
    progress: NodeProgress | None = None,
) -> Result:
    """Exploitability of ``strategy`` in the real card game (both best-response values and
    the profile's value): each best responder sees its exact cards and the board, the
    strategy is looked up through its buckets, the betting tree is the strategy's.

    ``game`` (or None) must be the game the strategy was made for. ``threads``: walks
    at once (up to 3); ``progress``: (units done, units in all), see the module
    docstring. Raises :class:`~poker._stop.Interrupted` if stopped (SIGINT, SIGTERM).
    """
    _check_game(game, strategy)
    real = _evaluate(strategy, threads, progress, abstract=False)[1]
    assert real is not None
    return real


def abstract_exploitability(
    game: Game | str | Path | None, strategy: Strategy, *, threads: int = 1,
    progress: NodeProgress | None = None,
) -> Result:
    """Exploitability of ``strategy`` in its abstract game: each best responder is limited
    to the strategy's buckets (:func:`abstract_best_response_value`). Without a card
    abstraction this equals :func:`exploitability`.

    ``game`` (or None) must be the game the strategy was made for. ``threads`` and
    ``progress`` as for :func:`exploitability`.
    """
    _check_game(game, strategy)
    abstract = _evaluate(strategy, threads, progress, real=False)[0]
    assert abstract is not None
    return abstract


def abstract_and_real_exploitability(
    strategy: Strategy, *, threads: int = 1, progress: NodeProgress | None = None
) -> tuple[Result, Result]:
    """(:func:`abstract_exploitability`, :func:`exploitability`) of ``strategy``; the
    walks are made once when the buckets tell every hand apart (then both are equal),
    and the profile's value once. ``threads`` and ``progress`` as for
    :func:`exploitability`."""
    abstract, real = _evaluate(strategy, threads, progress)
    assert abstract is not None and real is not None
    return abstract, real


def _check_game(game: Game | str | Path | None, strategy: Strategy) -> None:
    if game is not None and as_game(game) != strategy.game:
        raise ValueError("the strategy was made for a different game")


def _jobs(strategy: Strategy, abstract: bool, real: bool) -> tuple[dict[str, _Job], int, bool]:
    """The walks of an evaluation: its jobs by name (the longest first, so that threads
    finish together: an abstract responder makes a walk per level of its decisions), how
    many walks they make, and whether the abstract responder is the real one (then only
    the real one runs)."""
    same = _buckets_identify_hands(strategy.problem)
    if same:
        abstract, real = False, abstract or real
    jobs: dict[str, _Job] = {}
    walks = 1
    if abstract:
        for i in (0, 1):
            jobs[f"abstract{i}"] = lambda f, v, i=i: _abstract_best_response(strategy, i, f, v)
            walks += abstract_walks(strategy, i)
    if real:
        for i in (0, 1):
            jobs[f"real{i}"] = lambda f, v, i=i: _walk(strategy, i, K.MODE_BR, f, v)
        walks += 2
    jobs["value"] = lambda f, v: _walk(strategy, 0, K.MODE_EV, f, v)
    return jobs, walks, same


def evaluation_units(strategy: Strategy, *, abstract: bool = True, real: bool = True) -> int:
    """The units of progress (:func:`walk_units`) of an evaluation of ``strategy`` in the
    abstract game, the real game or both (:func:`abstract_and_real_exploitability`):
    what its ``progress`` counts to."""
    return _jobs(strategy, abstract, real)[1] * walk_units(strategy.problem)


def _evaluate(
    strategy: Strategy, threads: int, progress: NodeProgress | None, *, abstract: bool = True,
    real: bool = True,
) -> tuple[Result | None, Result | None]:
    """The abstract and real results asked for (None where not), their walks run
    ``threads`` at a time off the calling thread; the profile's value is walked once for
    both. A stop (:func:`poker._stop.stop_all`) ends every walk at its next node and
    raises :class:`~poker._stop.Interrupted`; a walk that fails, or a ``progress`` that
    raises (how a caller stops the evaluation itself), stops the others the same way and
    its error is raised."""
    if isinstance(threads, bool) or int(threads) != threads or threads < 1:
        raise ValueError(f"threads {threads!r} must be a whole number of at least 1")
    jobs, walks, same = _jobs(strategy, abstract, real)
    if same:
        abstract, real = False, abstract or real
    total = walks * walk_units(strategy.problem)
    names = list(jobs)
    visited = {n: counter() for n in names}  # one counter a walk: each has one writer
    failed: list[BaseException] = []  # the first error of a walk or of progress

    if progress is not None:
        progress(0, total)
    with stoppable() as stop:

        def run(name: str) -> float:
            if stop:
                return float("nan")
            try:
                return jobs[name](stop.flag, visited[name])
            except BaseException as exc:
                failed.append(exc)
                stop.set()  # the other walks end at their next node
                raise

        def work() -> dict[str, float]:
            if threads == 1:
                return {n: run(n) for n in names}
            with ThreadPoolExecutor(min(int(threads), len(names))) as pool:
                futures = [pool.submit(run, n) for n in names]
                wait(futures)
            if failed:
                raise failed[0]
            return {n: f.result() for n, f in zip(names, futures)}

        def poll() -> None:
            if progress is None or failed:
                return
            try:
                progress(sum(int(v[0]) for v in visited.values()), total)
            except BaseException as exc:
                failed.append(exc)
                stop.set()

        try:
            figures = run_stoppable(work, stop, on_poll=poll)
        except Interrupted:
            if failed:  # stopped by the progress callback's error, not by a signal
                raise failed[0] from None
            raise

    def result(prefix: str) -> Result:
        br0, br1 = figures[f"{prefix}0"], figures[f"{prefix}1"]
        expl = (br0 + br1) / 2.0
        return Result(
            exploitability=expl,
            mbb_per_game=1000.0 * expl / strategy.game.big_blind,
            br=(br0, br1),
            value=figures["value"],
        )

    real_result = result("real") if real else None
    abstract_result = result("abstract") if abstract else None
    if same:
        abstract_result = real_result
    return abstract_result, real_result
