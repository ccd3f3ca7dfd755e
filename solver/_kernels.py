"""Numba kernels shared by vector-form CFR and best response, and the walks of one dealt hand.

Everything here walks the flat public betting tree (``solver.tree``) once per public
state, carrying one reach vector per player over all private hands, as in vector-form
("public chance sampling" without the sampling) CFR: Johanson, Bard, Lanctot, Gibson and
Bowling 2012, "Efficient Nash equilibrium approximation through Monte Carlo
counterfactual regret minimization", Section 3, and the public-tree best response of
Johanson, Waugh, Bowling and Zinkevich 2011, "Accelerating best response calculation in
large extensive games", Section 4. Showdowns cost O(n) in the number of hands by
sweeping hands sorted by strength, with card-removal corrections done by
inclusion-exclusion over per-card reach sums (same paper, Section 4.2).

Counterfactual values carry the chance probability of the deal so far (``weight[s]`` =
1 / number of deals of both hands and the board through street s, the same for every
such deal), applied once at the leaves, so regrets here equal the textbook
counterfactual regrets of Zinkevich et al. 2007, Eq. 7.

The kernels take two bundles of flat arrays (:class:`KTree`, :class:`KChance`) and
scalars only, so they cache across processes; variants are chosen by integer flags.

Beside the vector walks, the walks of one dealt hand over the same bundles: chance
sampling (:func:`cs_iterations`) and Deep CFR's traversals (:func:`deep_traversals`,
Brown, Lerer, Gross & Sandholm 2019, Algorithm 1's TRAVERSE: external sampling, every
action at the traverser's nodes and one drawn from the current strategy at the
opponent's; the sampled regrets r~(I, a) = v~(a) - sum_b sigma(I, b) v~(b) go to the
traverser's advantage memory and the opponent's strategies to the strategy memory, each
tagged with its iteration, both reservoirs (Vitter 1985) holding a uniform sample of all
they were offered). They share the dealing (:func:`deal_hand`) and the leaf payoffs with
the vector walks' board sampling, and stay in this file because numba's cache notices
edits only to the file of the function it caches: a kernel calling one kept in another
file could run stale compiled code after an edit.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

# Node kinds of the public tree.
DECISION = 0
CHANCE = 1
FOLD = 2
SHOWDOWN = 3

# Walk modes.
MODE_CFR = 0  # traverser's regrets and average sums are updated
MODE_BR = 1  # traverser best-responds (max over actions per hand)
MODE_EV = 2  # traverser plays ``strat`` too: value of the profile

# Average-strategy weighting.
AVG_UNIFORM = 0
AVG_LINEAR = 1

# Regret discounting of vector CFR (:func:`_after_walk`).
DISCOUNT_NONE = 0
DISCOUNT_LINEAR = 1
DISCOUNT_DCFR = 2

#: Uniforms an iteration of public chance or chance sampling draws (board events, then
#: the two private hands), whatever the game uses of them.
SAMPLE_UNIFORMS = 8


class KTree(NamedTuple):
    """The public betting tree as the kernels see it (see ``solver.tree.Tree``)."""

    kind: np.ndarray  # int8[n]
    player: np.ndarray  # int8[n]: actor at decisions, folder at folds, -1 otherwise
    street: np.ndarray  # int8[n]
    child: np.ndarray  # int32[n]: first child
    n_child: np.ndarray  # int32[n]
    spent: np.ndarray  # int32[n, 2]
    offset: np.ndarray  # int64[n]: table offset of a decision node, -1 otherwise


class KChance(NamedTuple):
    """Private hands, board states and the per-street bucket map (see ``solver.chance``)."""

    hand_cards: np.ndarray  # int32[H, k]: deck indices of each hand's cards
    bs_child: np.ndarray  # int32[B]: first board state of the next street
    bs_n_child: np.ndarray  # int32[B]
    root_states: np.ndarray  # int32[r]: board states of the first street
    bucket: np.ndarray  # int32[B, H]: bucket of hand on board state, -1 if the cards clash
    n_buckets: np.ndarray  # int64[streets]
    sd_first: int  # index of the first board state of the last street
    sd_order: np.ndarray  # int32[Bf, H]: valid hands, weakest first
    sd_key: np.ndarray  # int64[Bf, H]: their strengths
    sd_len: np.ndarray  # int32[Bf]
    n_cards: int
    weight: np.ndarray  # float64[streets]: chance probability of one deal through street s


@njit(cache=True, inline="always")
def _match_row(src: np.ndarray, o: int, n_act: int, dst: np.ndarray, do: int) -> None:
    """``dst[do:do + n_act]`` = regret matching of ``src[o:o + n_act]``: positive parts
    normalised, uniform where none is positive (Zinkevich et al. 2007, Eq. 8)."""
    total = 0.0
    for a in range(n_act):
        if src[o + a] > 0.0:
            total += src[o + a]
    if total > 0.0:
        for a in range(n_act):
            dst[do + a] = src[o + a] / total if src[o + a] > 0.0 else 0.0
    else:
        for a in range(n_act):
            dst[do + a] = 1.0 / n_act


@njit(cache=True)
def regret_match(t: KTree, c: KChance, src: np.ndarray, dst: np.ndarray, player: int) -> None:
    """``dst`` = regret matching of ``src`` at every infoset of ``player`` (-1: both).

    Positive parts normalised; uniform where none is positive (Zinkevich et al. 2007,
    Eq. 8). Applied to average-strategy sums it normalises them.
    """
    for node in range(t.kind.shape[0]):
        if t.kind[node] != DECISION or (player >= 0 and t.player[node] != player):
            continue
        n_act = t.n_child[node]
        base = t.offset[node]
        for b in range(c.n_buckets[t.street[node]]):
            o = base + b * n_act
            _match_row(src, o, n_act, dst, o)


@njit(cache=True)
def _fold_value(
    c: KChance, reach_o: np.ndarray, out: np.ndarray, bs: int, pay: float, cs: np.ndarray
) -> None:
    """out[h] = pay * (opponent reach over hands sharing no card with h)."""
    n_h = reach_o.shape[0]
    k = c.hand_cards.shape[1]
    cs[:] = 0.0
    total = 0.0
    for h in range(n_h):
        r = reach_o[h]
        if r != 0.0:
            total += r
            for j in range(k):
                cs[c.hand_cards[h, j]] += r
    for h in range(n_h):
        if c.bucket[bs, h] < 0:
            out[h] = 0.0
            continue
        v = total
        for j in range(k):
            v -= cs[c.hand_cards[h, j]]
        if k == 2:  # h itself was subtracted twice (inclusion-exclusion)
            v += reach_o[h]
        out[h] = pay * v


@njit(cache=True)
def _showdown_value(
    c: KChance, reach_o: np.ndarray, out: np.ndarray, bs: int, stake: float, cs: np.ndarray
) -> None:
    """out[h] = stake * (reach of weaker disjoint hands - reach of stronger disjoint hands).

    Two sweeps over hands sorted by strength; ties are handled group by group, so a
    hand never counts hands of equal strength. Hands sharing a card with h are removed
    through per-card sums (h itself is never strictly weaker or stronger, so no
    pair correction is needed).
    """
    loc = bs - c.sd_first
    n = c.sd_len[loc]
    order = c.sd_order[loc]
    key = c.sd_key[loc]
    k = c.hand_cards.shape[1]
    for h in range(out.shape[0]):
        out[h] = 0.0
    # Ascending: wins against strictly weaker hands.
    cs[:] = 0.0
    acc = 0.0
    i = 0
    while i < n:
        j = i
        while j < n and key[j] == key[i]:
            j += 1
        for m in range(i, j):
            h = order[m]
            v = acc
            for q in range(k):
                v -= cs[c.hand_cards[h, q]]
            out[h] = v
        for m in range(i, j):
            h = order[m]
            r = reach_o[h]
            acc += r
            for q in range(k):
                cs[c.hand_cards[h, q]] += r
        i = j
    # Descending: losses against strictly stronger hands.
    cs[:] = 0.0
    acc = 0.0
    i = n - 1
    while i >= 0:
        j = i
        while j >= 0 and key[j] == key[i]:
            j -= 1
        for m in range(i, j, -1):
            h = order[m]
            v = acc
            for q in range(k):
                v -= cs[c.hand_cards[h, q]]
            out[h] = stake * (out[h] - v)
        for m in range(i, j, -1):
            h = order[m]
            r = reach_o[h]
            acc += r
            for q in range(k):
                cs[c.hand_cards[h, q]] += r
        i = j


@njit(cache=True)
def walk(
    t: KTree,
    c: KChance,
    bs0: int,
    trav: int,
    mode: int,
    strat: np.ndarray,
    regrets: np.ndarray,
    avg: np.ndarray,
    avg_w: float,
    vals: np.ndarray,
    rbuf: np.ndarray,
    cs: np.ndarray,
    frames: np.ndarray,
    stop: np.ndarray,
    visited: np.ndarray,
) -> None:
    """Walk the public tree from the root on first-street board state ``bs0``.

    Leaves the traverser's counterfactual value per hand in ``rbuf[0, 2]``. Frame d of
    the explicit stack (``frames[d]`` = node, board state, next child) owns
    ``rbuf[d, 0]`` / ``rbuf[d, 1]`` (traverser's / opponent's reach of their own actions,
    chance excluded), ``rbuf[d, 2]`` (its value) and ``vals[d, a]`` (child a's value).
    ``strat`` is the strategy both players follow: the current strategy for CFR, the
    evaluated profile for BR/EV. No recursion (numba cannot cache recursive kernels)
    and no allocation.

    ``visited[0]`` counts the (node, board state) pairs the walk enters, its unit of
    progress; as it enters each it reads ``stop[0]`` (a :class:`poker._stop.Stop`'s flag)
    and returns at once if it is nonzero, its values then incomplete. A pair costs at
    most a few passes over the hands, so a stop acts within microseconds to milliseconds.
    """
    n_h = rbuf.shape[2]
    for h in range(n_h):
        live = 1.0 if c.bucket[bs0, h] >= 0 else 0.0
        rbuf[0, 0, h] = live
        rbuf[0, 1, h] = live
    frames[0, 0] = 0
    frames[0, 1] = bs0
    frames[0, 2] = -1
    d = 0
    while True:
        if frames[d, 2] < 0:  # entering (node, board state): count it, stop here if asked
            # the count is a store in the same loop as the read, so the read stays inside it
            visited[0] += 1
            if stop[0] != 0:
                return
        node = frames[d, 0]
        bs = frames[d, 1]
        kind = t.kind[node]
        reach_t = rbuf[d, 0]
        reach_o = rbuf[d, 1]
        out = rbuf[d, 2]
        done = False
        if kind == FOLD:
            folder = t.player[node]
            if folder == trav:
                pay = -float(t.spent[node, trav])
            else:
                pay = float(t.spent[node, folder])
            _fold_value(c, reach_o, out, bs, pay * c.weight[t.street[node]], cs)
            done = True
        elif kind == SHOWDOWN:
            stake = float(min(t.spent[node, 0], t.spent[node, 1]))
            _showdown_value(c, reach_o, out, bs, stake * c.weight[t.street[node]], cs)
            done = True
        elif kind == CHANCE:
            pos = frames[d, 2]
            if pos < 0:
                for h in range(n_h):
                    out[h] = 0.0
            else:
                child_out = rbuf[d + 1, 2]
                for h in range(n_h):
                    out[h] += child_out[h]
            first = c.bs_child[bs]
            end = first + c.bs_n_child[bs]
            # Next board state that leaves some hand alive.
            nbs = first + pos + 1
            while nbs < end:
                live = False
                for h in range(n_h):
                    if c.bucket[nbs, h] >= 0:
                        live = True
                        break
                if live:
                    break
                nbs += 1
            if nbs >= end:
                done = True
            else:
                frames[d, 2] = nbs - first
                nt = rbuf[d + 1, 0]
                no = rbuf[d + 1, 1]
                for h in range(n_h):
                    if c.bucket[nbs, h] >= 0:
                        nt[h] = reach_t[h]
                        no[h] = reach_o[h]
                    else:
                        nt[h] = 0.0
                        no[h] = 0.0
                frames[d + 1, 0] = t.child[node]
                frames[d + 1, 1] = nbs
                frames[d + 1, 2] = -1
                d += 1
                continue
        else:
            actor = t.player[node]
            n_act = t.n_child[node]
            off = t.offset[node]
            bk = c.bucket[bs]
            pos = frames[d, 2]
            if pos >= 0:
                child_out = rbuf[d + 1, 2]
                v = vals[d, pos]
                for h in range(n_h):
                    v[h] = child_out[h]
            pos += 1
            if pos < n_act:
                frames[d, 2] = pos
                nt = rbuf[d + 1, 0]
                no = rbuf[d + 1, 1]
                if actor != trav:
                    for h in range(n_h):
                        b = bk[h]
                        nt[h] = reach_t[h]
                        no[h] = reach_o[h] * strat[off + b * n_act + pos] if b >= 0 else 0.0
                elif mode == MODE_CFR:
                    for h in range(n_h):
                        b = bk[h]
                        nt[h] = reach_t[h] * strat[off + b * n_act + pos] if b >= 0 else 0.0
                        no[h] = reach_o[h]
                else:
                    for h in range(n_h):
                        nt[h] = reach_t[h]
                        no[h] = reach_o[h]
                frames[d + 1, 0] = t.child[node] + pos
                frames[d + 1, 1] = bs
                frames[d + 1, 2] = -1
                d += 1
                continue
            done = True
            if actor != trav:
                for h in range(n_h):
                    acc = 0.0
                    for a in range(n_act):
                        acc += vals[d, a, h]
                    out[h] = acc
            elif mode == MODE_BR:
                for h in range(n_h):
                    best = vals[d, 0, h]
                    for a in range(1, n_act):
                        best = max(best, vals[d, a, h])
                    out[h] = best
            else:
                for h in range(n_h):
                    b = bk[h]
                    if b < 0:
                        out[h] = 0.0
                        continue
                    o = off + b * n_act
                    v0 = 0.0
                    for a in range(n_act):
                        v0 += strat[o + a] * vals[d, a, h]
                    out[h] = v0
                    if mode == MODE_CFR:
                        # Eq. 7 of Zinkevich et al. 2007: r(I, a) += v(I, a) - v(I), summed
                        # over the hands that share bucket b; average sums by own reach.
                        for a in range(n_act):
                            regrets[o + a] += vals[d, a, h] - v0
                        if avg_w != 0.0:
                            w = avg_w * reach_t[h]
                            for a in range(n_act):
                                avg[o + a] += w * strat[o + a]
        if done:
            if d == 0:
                return
            d -= 1


@njit(cache=True, nogil=True)  # nogil: the best-response walks of both players run side by side
def root_value(
    t: KTree,
    c: KChance,
    trav: int,
    mode: int,
    strat: np.ndarray,
    regrets: np.ndarray,
    avg: np.ndarray,
    avg_w: float,
    vals: np.ndarray,
    rbuf: np.ndarray,
    cs: np.ndarray,
    frames: np.ndarray,
    stop: np.ndarray,
    visited: np.ndarray,
) -> float:
    """Walk from the root for every first-street board state; return the traverser's
    expected value (the sum of its counterfactual values, which already carry chance).

    ``stop`` and ``visited`` as for :func:`walk`: once ``stop[0]`` is nonzero the walk
    returns early and the value is meaningless (the caller checks the flag)."""
    total = 0.0
    for i in range(c.root_states.shape[0]):
        walk(t, c, c.root_states[i], trav, mode, strat, regrets, avg, avg_w, vals, rbuf, cs, frames, stop, visited)
        if stop[0] != 0:
            return total
        for h in range(rbuf.shape[2]):
            total += rbuf[0, 2, h]
    return total


@njit(cache=True, inline="always")
def _avg_weight(step: int, averaging: int, delay: int) -> float:
    """Iteration ``step``'s (1-based) weight in the average: 0 up to ``delay``, then 1
    (uniform) or ``step - delay`` (linear)."""
    if step <= delay:
        return 0.0
    if averaging == AVG_LINEAR:
        return float(step - delay)
    return 1.0


@njit(cache=True)
def _after_walk(
    t: KTree,
    c: KChance,
    regrets: np.ndarray,
    trav: int,
    plus: int,
    discount: int,
    step: int,
    alpha: float,
    beta: float,
) -> None:
    """What follows the traverser's walk of iteration ``step``: CFR+'s floor of its
    cumulative regrets at 0 (Tammelin 2014); Linear CFR's discount of them by
    step / (step + 1) (Brown & Sandholm 2019, AAAI, "Regret discounting for CFR and its
    variants": iteration t's regrets then weigh t, as regret matching only needs their
    proportions); or Discounted CFR's (DISCOUNT_DCFR, the same section): positive ones
    times t^alpha / (t^alpha + 1), negative ones times t^beta / (t^beta + 1), t = ``step``."""
    if not plus and discount == DISCOUNT_NONE:
        return
    up = down = step / (step + 1.0)
    if discount == DISCOUNT_DCFR:
        ta = float(step) ** alpha
        tb = float(step) ** beta
        # a power beyond a float's range is a factor of 1, not inf / inf
        up = 1.0 if ta == np.inf else ta / (ta + 1.0)
        down = 1.0 if tb == np.inf else tb / (tb + 1.0)
    for node in range(t.kind.shape[0]):
        if t.kind[node] != DECISION or t.player[node] != trav:
            continue
        o = t.offset[node]
        size = c.n_buckets[t.street[node]] * t.n_child[node]
        for e in range(o, o + size):
            r = regrets[e]
            if plus and r < 0.0:
                r = 0.0
            if discount != DISCOUNT_NONE:
                r *= up if r > 0.0 else down
            regrets[e] = r


@njit(cache=True)
def cfr_iterations(
    t: KTree,
    c: KChance,
    regrets: np.ndarray,
    avg: np.ndarray,
    strat: np.ndarray,
    vals: np.ndarray,
    rbuf: np.ndarray,
    cs: np.ndarray,
    frames: np.ndarray,
    done: int,
    iterations: int,
    plus: int,
    averaging: int,
    delay: int,
    discount: int,
    alpha: float,
    beta: float,
    gamma: float,
) -> None:
    """Run ``iterations`` CFR iterations after ``done`` ones, with alternating updates.

    Per iteration t (1-based) and player i = 0 then 1: current strategy by regret
    matching of the latest regrets (so player 1 meets player 0's updated strategy),
    walk the tree updating i's regrets and average sums, then for CFR+ floor i's
    cumulative regrets at 0 (Tammelin 2014, regret-matching+) and for Linear and
    Discounted CFR discount them (:func:`_after_walk`; ``alpha`` and ``beta`` are
    DCFR's). The average weight is :func:`_avg_weight` raised to ``gamma`` (1 but for
    DCFR, whose average sums, multiplied by (t / (t + 1))^gamma after each iteration t,
    leave iteration t's contribution weighted in proportion to t^gamma: linear averaging
    raised to gamma).
    """
    never = np.zeros(1, dtype=np.int64)  # training stops between batches, not in a walk
    seen = np.zeros(1, dtype=np.int64)
    for it in range(iterations):
        step = done + it + 1
        w = _avg_weight(step, averaging, delay)
        if gamma != 1.0 and w > 0.0:
            w = w**gamma
        for trav in range(2):
            regret_match(t, c, regrets, strat, -1)
            root_value(t, c, trav, MODE_CFR, strat, regrets, avg, w, vals, rbuf, cs, frames, never, seen)
            _after_walk(t, c, regrets, trav, plus, discount, step, alpha, beta)


@njit(cache=True, inline="always")
def _below(u: float, n: int) -> int:
    """floor(u * n) for u in [0, 1), kept below n against rounding."""
    k = int(u * n)
    return k if k < n else n - 1


@njit(cache=True)
def _sample_board(base: KChance, u: np.ndarray, path: np.ndarray) -> None:
    """Draw one board from ``base``'s board-state tree, uniformly at each chance event,
    with uniforms ``u[0..]``: ``path[s]`` = the board state on street s (-1 past the
    game's last street)."""
    n_root = base.root_states.shape[0]
    bs = base.root_states[_below(u[0], n_root)]
    path[:] = -1
    path[0] = bs
    for s in range(1, path.shape[0]):
        n = base.bs_n_child[bs]
        if n == 0:
            break
        bs = base.bs_child[bs] + _below(u[s], n)
        path[s] = bs


@njit(cache=True)
def _match_path(t: KTree, c: KChance, path: np.ndarray, src: np.ndarray, dst: np.ndarray) -> None:
    """Regret matching (:func:`_match_row`) of the rows a walk over the board ``path``
    can read: at every decision node, the buckets of the hands alive on its street's
    board state. Public chance sampling touches only these, so it matches only these."""
    n_h = c.bucket.shape[1]
    for node in range(t.kind.shape[0]):
        if t.kind[node] != DECISION:
            continue
        bs = path[t.street[node]]
        n_act = t.n_child[node]
        off = t.offset[node]
        for h in range(n_h):
            b = c.bucket[bs, h]
            if b >= 0:
                _match_row(src, off + b * n_act, n_act, dst, off + b * n_act)


@njit(cache=True)
def pcs_iterations(
    t: KTree,
    base: KChance,
    c: KChance,
    uniforms: np.ndarray,
    regrets: np.ndarray,
    avg: np.ndarray,
    strat: np.ndarray,
    vals: np.ndarray,
    rbuf: np.ndarray,
    cs: np.ndarray,
    frames: np.ndarray,
    path: np.ndarray,
    done: int,
    averaging: int,
    delay: int,
) -> None:
    """Public chance sampling CFR (Johanson, Bard, Lanctot, Gibson & Bowling 2012, AAMAS,
    Section 3.1): iteration t draws one board (:func:`_sample_board`, uniforms
    ``uniforms[t - done - 1]``) and walks the public tree over it as vector CFR does,
    with one reach vector per player over every private hand and the O(n) showdown.

    ``c`` is a copy of ``base`` whose board-state tree the kernel narrows, for the
    iteration, to the drawn board (one child at each chance node) and whose chance
    weights it multiplies by the number of boards the draw stands for, so that every
    counterfactual value is an unbiased estimate of vector CFR's (Eq. 7 of Zinkevich et
    al. 2007 in expectation). Updates alternate between the players as in
    :func:`cfr_iterations`; regret matching covers the rows the walk can read
    (:func:`_match_path`)."""
    n_streets = path.shape[0]
    never = np.zeros(1, dtype=np.int64)  # training stops between batches, not in a walk
    seen = np.zeros(1, dtype=np.int64)
    for it in range(uniforms.shape[0]):
        step = done + it + 1
        _sample_board(base, uniforms[it], path)
        c.root_states[0] = path[0]
        factor = float(base.root_states.shape[0])
        c.weight[0] = base.weight[0] * factor
        for s in range(1, n_streets):
            if path[s] < 0:
                break
            prev = path[s - 1]
            c.bs_child[prev] = path[s]
            c.bs_n_child[prev] = 1
            factor *= base.bs_n_child[prev]
            c.weight[s] = base.weight[s] * factor
        w = _avg_weight(step, averaging, delay)
        for trav in range(2):
            _match_path(t, c, path, regrets, strat)
            walk(t, c, path[0], trav, MODE_CFR, strat, regrets, avg, w, vals, rbuf, cs, frames, never, seen)
        for s in range(1, n_streets):
            if path[s] < 0:
                break
            prev = path[s - 1]
            c.bs_child[prev] = base.bs_child[prev]
            c.bs_n_child[prev] = base.bs_n_child[prev]


@njit(cache=True)
def _sample_hands(c: KChance, bs: int, u0: float, u1: float) -> tuple[int, int]:
    """Two private hands, uniformly among the pairs alive on board state ``bs`` that
    share no card: the first among the hands alive there, the second among those that
    share no card with it (as many for every first hand, so the pair is uniform)."""
    n_h = c.bucket.shape[1]
    k = c.hand_cards.shape[1]
    alive = 0
    for h in range(n_h):
        if c.bucket[bs, h] >= 0:
            alive += 1
    pick = _below(u0, alive)
    h0 = -1
    for h in range(n_h):
        if c.bucket[bs, h] >= 0:
            if pick == 0:
                h0 = h
                break
            pick -= 1
    free = 0
    for h in range(n_h):
        if c.bucket[bs, h] >= 0 and _disjoint(c, h, h0, k):
            free += 1
    pick = _below(u1, free)
    for h in range(n_h):
        if c.bucket[bs, h] >= 0 and _disjoint(c, h, h0, k):
            if pick == 0:
                return h0, h
            pick -= 1
    return h0, -1


@njit(cache=True, inline="always")
def _disjoint(c: KChance, h: int, g: int, k: int) -> bool:
    for i in range(k):
        for j in range(k):
            if c.hand_cards[h, i] == c.hand_cards[g, j]:
                return False
    return True


@njit(cache=True)
def _strength(c: KChance, bs: int, h: int) -> int:
    """Hand ``h``'s showdown strength on last-street board state ``bs``."""
    loc = bs - c.sd_first
    for m in range(c.sd_len[loc]):
        if c.sd_order[loc, m] == h:
            return c.sd_key[loc, m]
    return -1


@njit(cache=True)
def deal_hand(c: KChance, u: np.ndarray, path: np.ndarray, bk: np.ndarray) -> float:
    """Deal one whole hand from the uniforms ``u``: the board (:func:`_sample_board`,
    into ``path``), then both private hands (:func:`_sample_hands`), their buckets per
    street into ``bk[p, s]``; returns the showdown's result for player 0 (+1 a win, -1 a
    loss, 0 a split)."""
    n_streets = path.shape[0]
    _sample_board(c, u, path)
    last = 0
    for s in range(n_streets):
        if path[s] >= 0:
            last = s
    h0, h1 = _sample_hands(c, path[last], u[n_streets], u[n_streets + 1])
    for s in range(n_streets):
        bs = path[s] if path[s] >= 0 else path[last]
        bk[0, s] = c.bucket[bs, h0]
        bk[1, s] = c.bucket[bs, h1]
    k0 = _strength(c, path[last], h0)
    k1 = _strength(c, path[last], h1)
    return 1.0 if k0 > k1 else (-1.0 if k0 < k1 else 0.0)


@njit(cache=True, inline="always")
def leaf_payoff(t: KTree, node: int, trav: int, result: float) -> float:
    """The traverser's payoff at fold or showdown ``node`` of a dealt hand whose
    showdown ``result`` (:func:`deal_hand`) is player 0's."""
    if t.kind[node] == FOLD:
        folder = t.player[node]
        return -float(t.spent[node, trav]) if folder == trav else float(t.spent[node, folder])
    stake = float(min(t.spent[node, 0], t.spent[node, 1]))
    return stake * result if trav == 0 else -stake * result


@njit(cache=True)
def _cs_walk(
    t: KTree,
    trav: int,
    bk: np.ndarray,
    result: float,
    regrets: np.ndarray,
    avg: np.ndarray,
    avg_w: float,
    sig: np.ndarray,
    vals: np.ndarray,
    reach: np.ndarray,
    frames: np.ndarray,
) -> tuple[float, int]:
    """One walk of the betting tree over one deal, every action of both players
    followed; returns the traverser's expected payoff under the current strategy and
    the nodes visited.

    ``bk[p, s]``: player p's bucket on street s; ``result``: +1 if player 0 wins the
    showdown, -1 if player 1 does, 0 for a split. Frame d: ``frames[d]`` = (node, last
    child walked), ``reach[d]`` = each player's probability of its own actions so far,
    ``sig[d]`` the actor's current strategy (regret matching of its row), ``vals[d, a]``
    child a's value. At the traverser's nodes r(I, a) += pi_-i * (v(a) - v) and
    s(I, a) += w * pi_i * sigma(a) (Zinkevich et al. 2007, Eqs. 7 and 4: chance is
    sampled, so it is left out of both, a constant factor). A subtree neither player
    reaches is worth nothing and is skipped."""
    frames[0, 0] = 0
    frames[0, 1] = -1
    reach[0, 0] = 1.0
    reach[0, 1] = 1.0
    d = 0
    ret = 0.0
    nodes = 0
    while True:
        node = frames[d, 0]
        kind = t.kind[node]
        if frames[d, 1] < 0:
            nodes += 1
        if kind == FOLD or kind == SHOWDOWN:
            ret = leaf_payoff(t, node, trav, result)
        elif kind == CHANCE:
            if frames[d, 1] < 0:  # the deal fixed the cards: straight on to the next street
                frames[d, 1] = 0
                frames[d + 1, 0] = t.child[node]
                frames[d + 1, 1] = -1
                reach[d + 1, 0] = reach[d, 0]
                reach[d + 1, 1] = reach[d, 1]
                d += 1
                continue
        else:
            actor = t.player[node]
            n_act = t.n_child[node]
            o = t.offset[node] + bk[actor, t.street[node]] * n_act
            pos = frames[d, 1]
            if pos < 0:
                _match_row(regrets, o, n_act, sig[d], 0)
            else:
                vals[d, pos] = ret
            pos += 1
            pushed = False
            while pos < n_act:
                r_actor = reach[d, actor] * sig[d, pos]
                if r_actor == 0.0 and reach[d, 1 - actor] == 0.0:
                    vals[d, pos] = 0.0
                    pos += 1
                    continue
                frames[d, 1] = pos
                frames[d + 1, 0] = t.child[node] + pos
                frames[d + 1, 1] = -1
                reach[d + 1, actor] = r_actor
                reach[d + 1, 1 - actor] = reach[d, 1 - actor]
                pushed = True
                break
            if pushed:
                d += 1
                continue
            u = 0.0
            for a in range(n_act):
                u += sig[d, a] * vals[d, a]
            if actor == trav:
                r_opp = reach[d, 1 - trav]
                for a in range(n_act):
                    regrets[o + a] += r_opp * (vals[d, a] - u)
                if avg_w != 0.0:
                    w = avg_w * reach[d, trav]
                    for a in range(n_act):
                        avg[o + a] += w * sig[d, a]
            ret = u
        if d == 0:
            return ret, nodes
        d -= 1


@njit(cache=True)
def cs_iterations(
    t: KTree,
    c: KChance,
    uniforms: np.ndarray,
    regrets: np.ndarray,
    avg: np.ndarray,
    sig: np.ndarray,
    vals: np.ndarray,
    reach: np.ndarray,
    frames: np.ndarray,
    path: np.ndarray,
    bk: np.ndarray,
    done: int,
    averaging: int,
    delay: int,
) -> int:
    """Chance-sampled CFR (Zinkevich, Johanson, Bowling & Piccione 2007, Section 4;
    Lanctot et al. 2009's chance sampling): iteration t deals one whole hand (the board,
    :func:`_sample_board`, then both private hands, :func:`_sample_hands`, from
    ``uniforms[t - done - 1]``) and walks every action of both players over it
    (:func:`_cs_walk`), once per player with alternating updates. Every deal is equally
    likely, so the sampled counterfactual values are unbiased up to one constant factor,
    which regret matching and the normalised average ignore. Returns the nodes the walks
    visited."""
    nodes = 0
    for it in range(uniforms.shape[0]):
        u = uniforms[it]
        step = done + it + 1
        result = deal_hand(c, u, path, bk)
        w = _avg_weight(step, averaging, delay)
        for trav in range(2):
            nodes += _cs_walk(t, trav, bk, result, regrets, avg, w, sig, vals, reach, frames)[1]
    return nodes


@njit(cache=True, inline="always")
def reservoir_slot(count: int, capacity: int) -> int:
    """The slot of the ``count``-th sample offered (0-based) to a reservoir of
    ``capacity``: itself while there is room, then a uniform slot with probability
    capacity / (count + 1), else -1 (dropped). Draws from numba's seeded generator."""
    if count < capacity:
        return count
    j = np.random.randint(0, count + 1)
    return j if j < capacity else -1


@njit(cache=True, inline="always")
def _offer(
    rows: np.ndarray,
    vals: np.ndarray,
    iters: np.ndarray,
    count: int,
    row: int,
    step: int,
    src: np.ndarray,
    base: int,
    n_act: int,
    minus: float,
) -> None:
    """Offer the ``count``-th sample to a reservoir: information set ``row``, iteration
    ``step``, values ``src[base + a] - minus`` for each action (zeros past ``n_act``)."""
    slot = reservoir_slot(count, rows.shape[0])
    if slot >= 0:
        rows[slot] = row
        iters[slot] = step
        for a in range(vals.shape[1]):
            vals[slot, a] = src[base + a] - minus if a < n_act else 0.0


@njit(cache=True)
def deep_traversals(
    t: KTree,
    c: KChance,
    trav: int,
    n_traversals: int,
    seed: int,
    step: int,
    sigma: np.ndarray,
    row_of: np.ndarray,
    adv_rows: np.ndarray,
    adv_vals: np.ndarray,
    adv_iter: np.ndarray,
    strat_rows: np.ndarray,
    strat_vals: np.ndarray,
    strat_iter: np.ndarray,
    counts: np.ndarray,
    sig: np.ndarray,
    vals: np.ndarray,
    frames: np.ndarray,
    path: np.ndarray,
    bk: np.ndarray,
) -> int:
    """``n_traversals`` traversals for player ``trav`` at iteration ``step``, drawing
    from numba's generator seeded with ``seed``; returns the nodes visited.

    ``sigma``: the current strategy in vector CFR's layout (the networks are fixed during
    an iteration, so one evaluation per information set serves every visit);
    ``row_of[entry]``: the row number (into one feature table) of the information set
    whose first entry it is, which the memories store. ``counts[0]``/``counts[1]``: samples ever offered to the advantage/strategy memory
    (updated). Advantage samples go to ``adv_rows``/``adv_vals``/``adv_iter`` (regrets
    padded with zeros past the node's actions), strategy samples to ``strat_*``. Frame
    d: ``frames[d]`` = (node, last child walked), ``sig[d]`` the actor's strategy,
    ``vals[d, a]`` child a's sampled value."""
    np.random.seed(seed)
    n_streets = path.shape[0]
    u = np.empty(n_streets + 2)
    nodes = 0
    for _ in range(n_traversals):
        for k in range(n_streets + 2):
            u[k] = np.random.random()
        result = deal_hand(c, u, path, bk)

        frames[0, 0] = 0
        frames[0, 1] = -1
        d = 0
        ret = 0.0
        while True:
            node = frames[d, 0]
            kind = t.kind[node]
            if frames[d, 1] < 0:
                nodes += 1
            if kind == FOLD or kind == SHOWDOWN:
                ret = leaf_payoff(t, node, trav, result)
            elif kind == CHANCE:
                if frames[d, 1] < 0:  # the deal fixed the board: on to the next street
                    frames[d, 1] = 0
                    frames[d + 1, 0] = t.child[node]
                    frames[d + 1, 1] = -1
                    d += 1
                    continue
            else:
                actor = t.player[node]
                n_act = t.n_child[node]
                o = t.offset[node] + bk[actor, t.street[node]] * n_act
                pos = frames[d, 1]
                if actor != trav:
                    if pos < 0:  # store sigma(I), draw one action and follow it
                        _offer(strat_rows, strat_vals, strat_iter, counts[1], row_of[o], step, sigma, o, n_act, 0.0)
                        counts[1] += 1
                        x = np.random.random()
                        pick = n_act - 1
                        acc = 0.0
                        for a in range(n_act):
                            acc += sigma[o + a]
                            if x < acc:
                                pick = a
                                break
                        frames[d, 1] = pick
                        frames[d + 1, 0] = t.child[node] + pick
                        frames[d + 1, 1] = -1
                        d += 1
                        continue
                    # the sampled child's value passes up unchanged (ret holds it)
                else:
                    if pos < 0:
                        for a in range(n_act):
                            sig[d, a] = sigma[o + a]
                    else:
                        vals[d, pos] = ret
                    pos += 1
                    if pos < n_act:
                        frames[d, 1] = pos
                        frames[d + 1, 0] = t.child[node] + pos
                        frames[d + 1, 1] = -1
                        d += 1
                        continue
                    v = 0.0
                    for a in range(n_act):
                        v += sig[d, a] * vals[d, a]
                    _offer(adv_rows, adv_vals, adv_iter, counts[0], row_of[o], step, vals[d], 0, n_act, v)
                    counts[0] += 1
                    ret = v
            if d == 0:
                break
            d -= 1
    return nodes
