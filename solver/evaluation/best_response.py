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
the GIL), each with its own scratch space; the figures are the same either way.
``progress`` hears of each walk as it ends: (walks done, walks in all).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from poker.game import Game

from .. import _kernels as K
from ..problem import Buffers, Problem, as_game
from ..strategy import Strategy

__all__ = [
    "WalkProgress",
    "Result",
    "abstract_and_real_exploitability",
    "abstract_best_response_value",
    "abstract_walks",
    "abstract_exploitability",
    "best_response_value",
    "exploitability",
    "profile_value",
]


#: Told (walks done, walks in all) as each walk of an evaluation ends, from any thread.
WalkProgress = Callable[[int, int], None]
#: What a walk calls when it ends (internal: counts towards a :data:`WalkProgress`).
_Tick = Callable[[], None]


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


class _Abandoned(Exception):
    """A walk stopped at a level because another failed or the caller was interrupted."""


def _checked_policy(strategy: Strategy, player: int) -> np.ndarray:
    p = strategy.problem
    if strategy.policy.shape != (p.size,):
        raise ValueError(f"policy has shape {strategy.policy.shape}, the tree needs ({p.size},)")
    if player not in (0, 1):
        raise ValueError(f"player {player} is not 0 or 1")
    return np.ascontiguousarray(strategy.policy, dtype=np.float64)


def _root(
    p: Problem, player: int, mode: int, policy: np.ndarray, acc: np.ndarray, b: Buffers
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
        )
    )


def _walk(strategy: Strategy, player: int, mode: int, tick: _Tick | None = None) -> float:
    policy = _checked_policy(strategy, player)
    p = strategy.problem
    value = _root(p, player, mode, policy, np.zeros(1), p.buffers())
    if tick is not None:
        tick()
    return value


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


def abstract_best_response_value(strategy: Strategy, player: int, tick: _Tick | None = None) -> float:
    """Value (chips per game) of ``player``'s best response limited to the strategy's
    buckets, found by backward induction (see the module docstring; exact for
    perfect-recall buckets, a lower bound on the abstract best response otherwise).
    ``tick`` is called after each of its walks (:func:`abstract_walks` of them)."""
    policy = _checked_policy(strategy, player)
    p = strategy.problem
    if _buckets_identify_hands(p):
        return best_response_value(strategy, player, tick)
    tree = p.tree
    b = p.buffers()
    pure = policy.copy()
    acc = np.zeros(p.size)
    for nodes in _levels(p, player):
        # Counterfactual regrets of the profile in which the responder's deeper
        # decisions are already fixed: their argmax per bucket is the action with the
        # highest counterfactual value (the node's own policy term is common to all).
        acc[:] = 0.0
        _root(p, player, K.MODE_CFR, pure, acc, b)
        if tick is not None:
            tick()
        for node in nodes:
            n_act = int(tree.n_child[node])
            nb = int(p.chance.n_buckets[tree.street[node]])
            o = int(p.offset[node])
            best = acc[o : o + nb * n_act].reshape(nb, n_act).argmax(axis=1)
            block = np.zeros((nb, n_act))
            block[np.arange(nb), best] = 1.0
            pure[o : o + nb * n_act] = block.ravel()
    value = _root(p, player, K.MODE_EV, pure, np.zeros(1), b)
    if tick is not None:
        tick()
    return value


def abstract_walks(strategy: Strategy, player: int) -> int:
    """How many tree walks :func:`abstract_best_response_value` makes for ``player``: one
    per level of its decisions and one for the value, or one where the buckets tell
    every hand apart."""
    p = strategy.problem
    return 1 if _buckets_identify_hands(p) else len(_levels(p, player)) + 1


def best_response_value(strategy: Strategy, player: int, tick: _Tick | None = None) -> float:
    """Value (chips per game) of ``player``'s best response to the other player's part of ``strategy``."""
    return _walk(strategy, player, K.MODE_BR, tick)


def profile_value(strategy: Strategy, player: int = 0, tick: _Tick | None = None) -> float:
    """Expected value (chips per game) of ``player`` when both players follow ``strategy``."""
    return _walk(strategy, player, K.MODE_EV, tick)


def exploitability(
    game: Game | str | Path | None, strategy: Strategy, *, threads: int = 1,
    progress: WalkProgress | None = None,
) -> Result:
    """Exploitability of ``strategy`` in the real card game (both best-response values and
    the profile's value): each best responder sees its exact cards and the board, the
    strategy is looked up through its buckets, the betting tree is the strategy's.

    ``game`` (or None) must be the game the strategy was made for. ``threads``: walks
    at once (up to 3); ``progress``: see the module docstring.
    """
    _check_game(game, strategy)
    real = _evaluate(strategy, threads, progress, abstract=False)[1]
    assert real is not None
    return real


def abstract_exploitability(
    game: Game | str | Path | None, strategy: Strategy, *, threads: int = 1,
    progress: WalkProgress | None = None,
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
    strategy: Strategy, *, threads: int = 1, progress: WalkProgress | None = None
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


def _evaluate(
    strategy: Strategy, threads: int, progress: WalkProgress | None, *, abstract: bool = True,
    real: bool = True,
) -> tuple[Result | None, Result | None]:
    """The abstract and real results asked for (None where not), their walks run
    ``threads`` at a time; the profile's value is walked once for both."""
    if isinstance(threads, bool) or int(threads) != threads or threads < 1:
        raise ValueError(f"threads {threads!r} must be a whole number of at least 1")
    same = _buckets_identify_hands(strategy.problem)
    if same:  # the abstract responder is the real one
        abstract, real = False, abstract or real
    # the longest first, so that threads finish together: the abstract responders make
    # a walk per level of their decisions
    jobs: dict[str, Callable[[_Tick | None], float]] = {}
    walks = 1
    if abstract:
        for i in (0, 1):
            jobs[f"abstract{i}"] = lambda t, i=i: abstract_best_response_value(strategy, i, t)
            walks += abstract_walks(strategy, i)
    if real:
        for i in (0, 1):
            jobs[f"real{i}"] = lambda t, i=i: best_response_value(strategy, i, t)
        walks += 2
    jobs["value"] = lambda t: profile_value(strategy, 0, t)
    done = 0
    lock = threading.Lock()
    # Once a walk fails, its progress callback raises (to stop the evaluation) or the
    # caller is interrupted (Ctrl-C), no walk starts and the walks under way stop at
    # their next level; the first error is raised when they have.
    failed: list[BaseException] = []

    def tick() -> None:
        nonlocal done
        if failed:
            raise _Abandoned
        with lock:  # walks end on any thread; the caller hears of them one at a time
            done += 1
            if progress is not None:
                progress(done, walks)

    if progress is not None:
        progress(0, walks)
    names = list(jobs)
    if threads > 1:

        def run(name: str) -> float:
            if failed:
                return float("nan")
            try:
                return jobs[name](tick)
            except BaseException as exc:
                with lock:
                    failed.append(exc)
                raise

        pool = ThreadPoolExecutor(min(int(threads), len(names)))
        try:
            futures = [pool.submit(run, n) for n in names]
            for f in futures:
                f.exception()  # waits; a Ctrl-C ends the wait
        except BaseException as exc:
            failed.append(exc)
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        if failed:
            raise failed[0]
        figures = {n: f.result() for n, f in zip(names, futures)}
    else:
        figures = {n: jobs[n](tick) for n in names}

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
