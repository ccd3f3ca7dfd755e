"""Deep CFR (Brown, Lerer, Gross & Sandholm 2019, ICML): CFR with networks in place of
the regret and average-strategy tables.

Each iteration t and each player p (Algorithm 1): K external-sampling traversals
(:func:`solver._kernels.deep_traversals`) under the strategy the advantage
networks give, storing sampled regrets in p's advantage memory and the opponent's
strategies in the strategy memory; then p's advantage network is trained from scratch on
its whole memory with the squared error weighted by the samples' iterations (linear
weighting). The strategy at an information set is regret matching on the predicted
advantages (Eq. 5), and where no advantage is positive the highest-advantage action
with probability 1 (the paper's Section 4). The average strategy is a strategy network
trained on the strategy memory with the same weighting (Section 4, Theorem 1's Pi).

The input encoding is the paper's (Section 5) scaled to our games: per card slot (hole
cards, then each street's board cards) a one-hot rank and a one-hot suit over the ranks
and suits of the deck, zero before the card is dealt; per street and betting position a
flag that an action was taken and its chips as a fraction of the pot before it; the
actor. Information sets are enumerated once (the games where Deep CFR runs here list
every information set: lossless cards and a listed chance layer), so the networks are
evaluated once per information set and iteration, and a strategy file stores the
strategy network's output. The networks live in :mod:`solver.training.networks` (JAX,
the ``deep`` extra).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..problem import Problem
from ..strategy import Strategy
from ..tree import DECISION, tree_report
from .._kernels import deep_traversals

__all__ = [
    "DEEP_MAX_ROWS",
    "DeepCFROptions",
    "DeepCFRSolver",
    "deep_refusal",
    "encode_infosets",
    "warm_traversals",
]

#: Deep CFR here enumerates the information sets; past this many it is refused.
DEEP_MAX_ROWS = 2_000_000


@dataclass(frozen=True)
class DeepCFROptions:
    """Deep CFR's parameters (defaults scaled to Leduc from the paper's Section 5).

    ``traversals``: per player per iteration (K); ``memory``: capacity of each reservoir
    (each player's advantage memory and the strategy memory); ``hidden``/``layers``: the
    networks' width and depth; ``sgd_steps``/``batch``: Adam steps and minibatch size of
    each advantage network's training, ``policy_steps`` of the strategy network's
    (default: ``sgd_steps``); ``lr``: Adam's learning rate; ``seed``: every draw."""

    traversals: int = 1000
    memory: int = 1_000_000
    hidden: int = 64
    layers: int = 3
    sgd_steps: int = 1000
    batch: int = 1024
    policy_steps: int = 0
    lr: float = 1e-3
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("traversals", "memory", "hidden", "layers", "sgd_steps", "batch"):
            if getattr(self, name) < 1:
                raise ValueError(f"deep {name} {getattr(self, name)} must be at least 1")
        if self.policy_steps < 0 or not self.lr > 0:
            raise ValueError("deep policy_steps must not be negative and lr must be positive")

    @property
    def strategy_steps(self) -> int:
        """Adam steps of the strategy network."""
        return self.policy_steps or self.sgd_steps

    def record(self) -> dict[str, Any]:
        """The options as a training record's map (without the seed, recorded apart)."""
        d = asdict(self)
        del d["seed"]
        return d


def deep_refusal(problem: Problem) -> str | None:
    """Why Deep CFR cannot run on ``problem`` (one line), or None."""
    name = problem.game.name or "this game"
    if problem.cards is not None:
        return f"deep enumerates the information sets, and {name} deals from the deck: too big to list"
    if not problem.chance.lossless:
        return "deep learns from the cards themselves: train it without a card abstraction"
    rows = tree_report(problem.tree, problem.chance.n_buckets).total_infosets
    if rows > DEEP_MAX_ROWS:
        return f"deep enumerates the information sets: {name} has {rows:,}, over {DEEP_MAX_ROWS:,}"
    return None


@dataclass(frozen=True)
class Infosets:
    """Every information set as a row: ``entry[r]`` its first table entry, ``node[r]``,
    ``n_act[r]``, ``player[r]``; ``feats[r]`` the network input, ``masks[r, a]`` 1 on
    legal actions; ``row_of[entry]`` the row whose first entry it is (-1 elsewhere)."""

    entry: np.ndarray
    node: np.ndarray
    n_act: np.ndarray
    player: np.ndarray
    feats: np.ndarray
    masks: np.ndarray
    row_of: np.ndarray

    def uniform(self) -> np.ndarray:
        """Per row, the uniform strategy over its legal actions."""
        return self.masks / self.n_act[:, None]

    def scatter(self, values: np.ndarray, table: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Write ``values[i, a]`` into ``table`` (vector CFR's layout) at row ``rows[i]``'s
        entry for action a, for its legal actions (every row in order if ``rows`` is None);
        returns ``table``."""
        rows = np.arange(self.entry.size) if rows is None else rows
        n_act = self.n_act[rows]
        for a in range(values.shape[1]):
            live = n_act > a
            table[self.entry[rows[live]] + a] = values[live, a]
        return table


def _card_reps(problem: Problem, street: int) -> tuple[np.ndarray, np.ndarray]:
    """Per bucket of ``street``: one (hand, board state) holding it."""
    ch = problem.chance
    states = np.flatnonzero(ch.board_street == street)
    bucket = ch.kernel.bucket[states]
    n = int(ch.n_buckets[street])
    flat = bucket.ravel()
    valid = np.flatnonzero(flat >= 0)
    _, first = np.unique(flat[valid], return_index=True)
    pick = valid[first]
    if pick.size != n:
        raise ValueError(f"street {street}: {pick.size} of {n} buckets hold a hand")
    return pick % bucket.shape[1], states[pick // bucket.shape[1]]


def _betting_features(problem: Problem) -> tuple[np.ndarray, int]:
    """Per node: per street and betting position (taken, chips / pot before) of the
    actions that led to it; and the positions per street."""
    t = problem.tree
    n_streets = t.n_streets
    if np.any(t.parent[1:] >= np.arange(1, t.n_nodes)):
        raise ValueError("the tree does not number parents before their children")
    depth = np.zeros(t.n_nodes, dtype=np.int64)  # actions so far on the node's street
    for node in range(1, t.n_nodes):
        par = int(t.parent[node])
        depth[node] = depth[par] + 1 if t.kind[par] == DECISION else 0
    width = int(depth.max())
    feats = np.zeros((t.n_nodes, n_streets, width, 2), dtype=np.float32)
    for node in range(1, t.n_nodes):
        par = int(t.parent[node])
        feats[node] = feats[par]
        if t.kind[par] == DECISION:
            actor = int(t.player[par])
            chips = int(t.spent[node, actor]) - int(t.spent[par, actor])
            pot = int(t.spent[par, 0]) + int(t.spent[par, 1])
            feats[node, t.street[par], depth[par]] = (1.0, chips / max(pot, 1))
    return feats.reshape(t.n_nodes, -1), width


def encode_infosets(problem: Problem) -> Infosets:
    """Every information set of ``problem`` (lossless cards, a listed chance layer) and
    its network input (see the module docstring)."""
    t, ch = problem.tree, problem.chance
    deck = np.asarray(ch.deck, dtype=np.int64)
    ranks = np.unique(deck // 4)
    suits = np.unique(deck % 4)
    rank_ix = {int(r): i for i, r in enumerate(ranks)}
    suit_ix = {int(s): i for i, s in enumerate(suits)}
    per_card = len(ranks) + len(suits)
    slots = ch.hands.shape[1] + ch.board_cards.shape[1]
    n_card = slots * per_card

    def card_block(hand: int, state: int) -> np.ndarray:
        out = np.zeros(n_card, dtype=np.float32)
        cards = list(ch.hands[hand]) + list(ch.board_cards[state])
        for i, c in enumerate(cards):
            if c >= 0:
                card = int(deck[c])
                out[i * per_card + rank_ix[card // 4]] = 1.0
                out[i * per_card + len(ranks) + suit_ix[card % 4]] = 1.0
        return out

    blocks = []
    for s in range(t.n_streets):
        hands, states = _card_reps(problem, s)
        blocks.append(np.stack([card_block(int(h), int(b)) for h, b in zip(hands, states)]))
    betting, _ = _betting_features(problem)
    dec = np.flatnonzero(t.kind == DECISION)
    nb = np.asarray(ch.n_buckets, dtype=np.int64)
    counts = nb[t.street[dec]]
    node = np.repeat(dec, counts)
    bucket = np.concatenate([np.arange(k) for k in counts]) if dec.size else np.zeros(0, np.int64)
    n_act = t.n_child[node].astype(np.int64)
    entry = problem.offset[node] + bucket * n_act
    player = t.player[node].astype(np.int64)
    cards_rows = np.zeros((node.size, n_card), dtype=np.float32)
    for s in range(t.n_streets):
        on = t.street[node] == s
        cards_rows[on] = blocks[s][bucket[on]]
    actor = np.zeros((node.size, 2), dtype=np.float32)
    actor[np.arange(node.size), player] = 1.0
    feats = np.concatenate([cards_rows, betting[node], actor], axis=1).astype(np.float32)
    width = t.max_actions
    masks = (np.arange(width)[None, :] < n_act[:, None]).astype(np.float32)
    row_of = np.full(problem.size, -1, dtype=np.int32)
    row_of[entry] = np.arange(node.size, dtype=np.int32)
    return Infosets(entry, node, n_act, player, feats, masks, row_of)


def warm_traversals(problem: Problem) -> None:
    """Compile (or load from numba's cache) the traversal kernel, with one traversal of
    ``problem`` into a memory of one sample (its types do not depend on the game)."""
    r = encode_infosets(problem)
    t = problem.tree
    width, depth, n_streets = t.max_actions, t.max_depth + 2, t.n_streets
    sigma = r.scatter(r.uniform(), np.zeros(problem.size))
    one = np.zeros(1, dtype=np.int32)
    deep_traversals(
        problem.ktree, problem.chance.kernel, 0, 1, 0, 1, sigma, r.row_of,
        one, np.zeros((1, width), np.float32), one.copy(),
        one.copy(), np.zeros((1, width), np.float32), one.copy(), np.zeros(2, np.int64),
        np.zeros((depth, width)), np.zeros((depth, width)), np.zeros((depth, 2), np.int64),
        np.full(n_streets, -1, np.int32), np.zeros((2, n_streets), np.int32),
    )  # fmt: skip


def _regret_matching(adv: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Regret matching on predicted advantages (Brown et al. 2019, Eq. 5), and where none
    is positive the highest-advantage legal action with probability 1 (Section 4)."""
    pos = np.maximum(adv, 0.0) * masks
    total = pos.sum(axis=1, keepdims=True)
    out = np.divide(pos, total, out=np.zeros_like(pos), where=total > 0)
    none = total[:, 0] <= 0
    if none.any():
        best = np.argmax(np.where(masks[none] > 0, adv[none], -np.inf), axis=1)
        out[np.flatnonzero(none), best] = 1.0
    return out


class DeepCFRSolver:
    """Deep CFR over a problem whose information sets can be listed (see
    :func:`deep_refusal`). ``iterate(n)`` runs n iterations; :meth:`average_strategy`
    trains the strategy network and returns its strategy as a :class:`Strategy`."""

    algorithm = "deep"

    def __init__(self, problem: Problem, options: DeepCFROptions | None = None) -> None:
        from .networks import NetSpec, require_jax, trainer

        require_jax()
        refusal = deep_refusal(problem)
        if refusal is not None:
            raise ValueError(refusal)
        self.problem = problem
        self.opts = options or DeepCFROptions()
        self.rows = encode_infosets(problem)
        r = self.rows
        width = problem.tree.max_actions
        o = self.opts
        spec = NetSpec(r.feats.shape[1], width, o.hidden, o.layers)
        self.specs = (spec, NetSpec(spec.inputs, width, o.hidden, o.layers, policy=True))
        self._adv_trainer = trainer(self.specs[0], o.sgd_steps, o.batch, o.lr)
        self._pol_trainer = trainer(self.specs[1], o.strategy_steps, o.batch, o.lr)
        cap = o.memory
        self.adv_rows = np.zeros((2, cap), dtype=np.int32)
        self.adv_vals = np.zeros((2, cap, width), dtype=np.float32)
        self.adv_iter = np.zeros((2, cap), dtype=np.int32)
        self.strat_rows = np.zeros(cap, dtype=np.int32)
        self.strat_vals = np.zeros((cap, width), dtype=np.float32)
        self.strat_iter = np.zeros(cap, dtype=np.int32)
        #: samples ever offered to each player's advantage memory and to the strategy memory
        self.offered = np.zeros(3, dtype=np.int64)
        #: the current strategy in table layout (uniform before any network is trained)
        self.sigma = r.scatter(r.uniform(), np.zeros(problem.size, dtype=np.float64))
        self.regrets = np.zeros(problem.size, dtype=np.float64)  # predicted advantages
        self.adv_params: list[Any] = [None, None]
        self.iterations = 0
        self.nodes = 0
        self.sgd_steps = 0
        self.traversals = 0
        self._avg: tuple[int, Strategy] | None = None
        n_streets = problem.tree.n_streets
        depth = problem.tree.max_depth + 2
        self._sig = np.zeros((depth, width))
        self._vals = np.zeros((depth, width))
        self._frames = np.zeros((depth, 2), dtype=np.int64)
        self._path = np.full(n_streets, -1, dtype=np.int32)
        self._bk = np.zeros((2, n_streets), dtype=np.int32)

    def compile(self) -> None:
        """Compile the networks' training and prediction for this game and these memories
        (JAX compiles per shape), so a timed loop does not pay for it: a fit of each
        network on the memories as they are (weights thrown away, nothing else changed)
        and a prediction on each player's information sets and on all of them."""
        r = self.rows
        adv, _ = self._adv_trainer.fit(0, r.feats, r.masks, self.adv_rows[0], self.adv_vals[0], self.adv_iter[0], 1)
        for player in range(2):
            mine = r.player == player
            self._adv_trainer.predict(adv, r.feats[mine], r.masks[mine])
        pol, _ = self._pol_trainer.fit(0, r.feats, r.masks, self.strat_rows, self.strat_vals, self.strat_iter, 1)
        self._pol_trainer.predict(pol, r.feats, r.masks)

    # -- one iteration -------------------------------------------------------------

    def _seed(self, t: int, player: int, what: int) -> int:
        """The seed of iteration ``t``'s draws for ``player`` (``what``: 0 traversals,
        1 advantage network, 2 strategy network): a run repeats, and resumes, exactly."""
        return (self.opts.seed * 1_000_003 + t * 7 + player * 3 + what) % (2**31 - 1)

    def _traverse(self, t: int, player: int) -> int:
        counts = np.array([self.offered[player], self.offered[2]], dtype=np.int64)
        nodes = deep_traversals(
            self.problem.ktree, self.problem.chance.kernel, player, self.opts.traversals,
            self._seed(t, player, 0), t, self.sigma, self.rows.row_of,
            self.adv_rows[player], self.adv_vals[player], self.adv_iter[player],
            self.strat_rows, self.strat_vals, self.strat_iter, counts,
            self._sig, self._vals, self._frames, self._path, self._bk,
        )  # fmt: skip
        self.offered[player] = counts[0]
        self.offered[2] = counts[1]
        self.traversals += self.opts.traversals
        return int(nodes)

    def _fit_advantages(self, t: int, player: int) -> None:
        r = self.rows
        n = int(min(self.offered[player], self.opts.memory))
        if n == 0:
            return
        params, _ = self._adv_trainer.fit(
            self._seed(t, player, 1), r.feats, r.masks,
            self.adv_rows[player], self.adv_vals[player], self.adv_iter[player], n,
        )  # fmt: skip
        self.sgd_steps += self.opts.sgd_steps
        self.adv_params[player] = params
        self._refresh(player)

    def _refresh(self, player: int) -> None:
        """Write ``player``'s strategy from its advantage network into :attr:`sigma`."""
        r = self.rows
        mine = np.flatnonzero(r.player == player)
        adv = self._adv_trainer.predict(self.adv_params[player], r.feats[mine], r.masks[mine])
        r.scatter(_regret_matching(adv, r.masks[mine]), self.sigma, mine)
        r.scatter(adv, self.regrets, mine)

    def iterate(self, n: int) -> int:
        """Run ``n`` iterations (both players each); returns the nodes the traversals visited."""
        nodes = 0
        for _ in range(n):
            t = self.iterations + 1
            for player in range(2):
                nodes += self._traverse(t, player)
                self._fit_advantages(t, player)
            self.iterations = t
        self.nodes += nodes
        return nodes

    # -- the average strategy ----------------------------------------------------

    def average_strategy(self) -> Strategy:
        """The strategy network's strategy, trained on the strategy memory now (once per
        iteration count); uniform before any iteration."""
        if self._avg is not None and self._avg[0] == self.iterations:
            return self._avg[1]
        r = self.rows
        n = int(min(int(self.offered[2]), self.opts.memory))
        if n == 0:
            probs = r.uniform()
        else:
            params, _ = self._pol_trainer.fit(
                self._seed(self.iterations, 0, 2), r.feats, r.masks,
                self.strat_rows, self.strat_vals, self.strat_iter, n,
            )  # fmt: skip
            probs = self._pol_trainer.predict(params, r.feats, r.masks)
            probs /= probs.sum(axis=1, keepdims=True)
        policy = r.scatter(probs, np.zeros(self.problem.size, dtype=np.float64))
        s = Strategy(self.problem, policy, self.iterations, self.algorithm)
        self._avg = (self.iterations, s)
        return s

    def current_strategy(self) -> Strategy:
        """The strategy the advantage networks give now (the last iteration's)."""
        return Strategy(self.problem, self.sigma.copy(), self.iterations, self.algorithm)

    # -- records and checkpoints -----------------------------------------------------

    def options(self) -> dict[str, Any]:
        """The run's options as recorded (see :meth:`DeepCFROptions.record`)."""
        return self.opts.record()

    def record(self) -> dict[str, Any]:
        """What the run did: traversals, memory fill, SGD steps, weights."""
        cap = self.opts.memory
        return {
            "traversals": int(self.traversals),
            "sgd_steps": int(self.sgd_steps),
            "advantage_memory": [int(min(self.offered[p], cap)) for p in range(2)],
            "advantage_samples": [int(self.offered[p]) for p in range(2)],
            "strategy_memory": int(min(int(self.offered[2]), cap)),
            "strategy_samples": int(self.offered[2]),
            "network_weights": self.specs[0].count(),
            "information_sets": int(self.rows.entry.size),
        }

    def state_arrays(self) -> dict[str, np.ndarray]:
        """Everything a resumed run needs: the memories (their filled part), the counts,
        the current strategy and the advantage networks' weights."""
        from .networks import params_to_arrays

        cap = self.opts.memory
        out: dict[str, np.ndarray] = {"offered": self.offered.copy(), "sigma": self.sigma,
                                      "regrets": self.regrets,
                                      "counters": np.array([self.nodes, self.sgd_steps, self.traversals], np.int64)}
        for p in range(2):
            n = int(min(self.offered[p], cap))
            out[f"adv{p}_rows"] = self.adv_rows[p, :n]
            out[f"adv{p}_vals"] = self.adv_vals[p, :n]
            out[f"adv{p}_iter"] = self.adv_iter[p, :n]
            if self.adv_params[p] is not None:
                out.update(params_to_arrays(self.adv_params[p], f"net{p}_"))
        n = int(min(int(self.offered[2]), cap))
        out["strat_rows"] = self.strat_rows[:n]
        out["strat_vals"] = self.strat_vals[:n]
        out["strat_iter"] = self.strat_iter[:n]
        return out

    def restore_arrays(self, arrays: dict[str, np.ndarray], iterations: int) -> None:
        """Load what :meth:`state_arrays` wrote (``ValueError`` if it does not fit)."""
        from .networks import params_from_arrays

        cap = self.opts.memory
        try:
            offered = arrays["offered"].astype(np.int64).reshape(3)
            if arrays["sigma"].shape != self.sigma.shape:
                raise ValueError("its strategy table does not fit this game")
            for p in range(2):
                n = int(min(offered[p], cap))
                for name, dst in (("rows", self.adv_rows), ("vals", self.adv_vals), ("iter", self.adv_iter)):
                    src = arrays[f"adv{p}_{name}"]
                    if src.shape[0] != n or src.shape[1:] != dst.shape[2:]:
                        raise ValueError(f"its advantage memory {p} does not fit")
                    dst[p, :n] = src
                if f"net{p}_w0" in arrays:
                    self.adv_params[p] = params_from_arrays(arrays, f"net{p}_", self.specs[0])
            n = int(min(offered[2], cap))
            for name, dst in (("rows", self.strat_rows), ("vals", self.strat_vals), ("iter", self.strat_iter)):
                src = arrays[f"strat_{name}"]
                if src.shape[0] != n or src.shape[1:] != dst.shape[1:]:
                    raise ValueError("its strategy memory does not fit")
                dst[:n] = src
            self.sigma[:] = arrays["sigma"]
            self.regrets[:] = arrays["regrets"]
            self.nodes, self.sgd_steps, self.traversals = (int(x) for x in arrays["counters"])
        except KeyError as exc:
            raise ValueError(f"array {exc.args[0]} is missing") from None
        self.offered[:] = offered
        self.iterations = iterations
        self._avg = None
