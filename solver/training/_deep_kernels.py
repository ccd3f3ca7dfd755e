"""Deep CFR's numba kernels: external-sampling traversals that fill reservoir memories.

Deep CFR (Brown, Lerer, Gross & Sandholm 2019, ICML, Algorithm 1 and its TRAVERSE
procedure) samples a deal and walks the tree once per traversal: every action at the
traverser's nodes, one action drawn from the current strategy at the opponent's, with
chance sampled (external sampling, Lanctot et al. 2009). At each of the traverser's
information sets it stores the sampled instantaneous regret r~(I, a) = v~(a) - sum_b
sigma(I, b) v~(b) in the traverser's advantage memory, and at each of the opponent's the
opponent's strategy sigma(I) in the strategy memory, each tagged with the iteration t
(the loss weights of linear weighting). Both memories are reservoirs (Vitter 1985):
the n-th sample offered replaces a uniform slot with probability capacity / n, so each
holds a uniform sample of all it was offered.

The current strategy arrives as a table in vector CFR's layout (``sigma[offset[node] +
bucket * n_actions + a]``): the networks are fixed during an iteration's traversals, so
evaluating them once per information set gives the same strategy as a forward pass at
every visit, at a fraction of the cost. A memory stores the information set's row number
(``row_of[entry]``), whose features live in one table.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._kernels import CHANCE, FOLD, SHOWDOWN, KChance, KTree, deal_hand, leaf_payoff

__all__ = ["deep_traversals", "reservoir_slot"]


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

    ``counts[0]``/``counts[1]``: samples ever offered to the advantage/strategy memory
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
