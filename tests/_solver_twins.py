"""Plain-Python slow twins of the solver kernels (tests only).

:func:`build_history_tree` gives the full game tree of a small two-player game, one node per history
(cards and betting), built from :class:`poker.state.State` and valued with
:meth:`State.values`; ``SlowCFR`` runs textbook scalar CFR / CFR+ on it, one history at a
time, in the way OpenSpiel's ``python/algorithms/cfr.py`` does (chance probabilities
multiplied along the path, alternating updates, regret-matching(+), linear averaging).
Information sets are keyed ``(player, hole cards, visible board, betting string)``.
Nothing here shares code with ``solver._kernels``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from poker.cards import deck_cards
from poker.game import Game, parse_game
from poker.state import Action, Deal, State

# Two hole cards from a 6-card deck and one board card: exercises the two-card
# card-removal corrections (inclusion-exclusion) at fold and showdown leaves. From its
# second iteration on, some regrets are exact ties in real arithmetic (e.g. KK on an ace
# board against {QQ, QA, QA}) that rounding breaks differently in the twin, so only the
# first iteration is compared exactly (see EXACT_UP_TO in test_cfr.py).
TWO_CARD_LEDUC = parse_game(
    "GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 2\nblind = 1 1\nraiseSize = 2 4\n"
    "firstPlayer = 1 1\nmaxRaises = 2 2\nnumSuits = 2\nnumRanks = 3\nnumHoleCards = 2\n"
    "numBoardCards = 0 1\nEND GAMEDEF\n",
    name="leduc2",
)


@dataclass
class HNode:
    """One history. kind: 'chance', 'decision' or 'terminal'."""

    kind: str
    player: int = -1
    key: tuple = ()
    children: list = field(default_factory=list)  # [(prob or action index, HNode)]
    values: tuple = (0.0, 0.0)


def _actions(state: State) -> list[Action]:
    acts = []
    if state.can_fold():
        acts.append(Action.fold())
    acts.append(Action.call())
    if state.min_raise_to is not None:
        acts.append(Action.raise_to(state.min_raise_to))
    return acts


def build_history_tree(game: Game) -> HNode:
    """Deal hole cards one player at a time, then bet; deal each street's board as it comes
    (limit games only: the twin takes every legal action)."""
    assert game.is_limit and game.num_players == 2
    deck = deck_cards(game.num_ranks, game.num_suits)
    k = game.num_hole_cards

    def betting(state: State, holes: tuple, boards: tuple) -> HNode:
        if state.actor is None:
            if sum(state.folded) == 1:
                vals = state.values()
            else:
                deal = Deal(holes=holes, boards=boards)
                vals = State.from_betting(game, state.betting_string(), deal).values()
            return HNode("terminal", values=(float(vals[0]), float(vals[1])))
        if state.round >= len(boards):
            return deal_board(state, holes, boards)
        p = state.actor
        visible = tuple(c for b in boards[: state.round + 1] for c in b)
        node = HNode("decision", player=p, key=(p, holes[p], visible, state.betting_string()))
        for a in _actions(state):
            node.children.append((a, betting(state.apply(a), holes, boards)))
        return node

    def deal_board(state: State, holes: tuple, boards: tuple) -> HNode:
        used = {c for h in holes for c in h} | {c for b in boards for c in b}
        rest = [c for c in deck if c not in used]
        opts = list(combinations(rest, game.num_board_cards[len(boards)]))
        node = HNode("chance")
        for b in opts:
            node.children.append((1.0 / len(opts), betting(state, holes, boards + (tuple(b),))))
        return node

    def deal_holes(holes: tuple) -> HNode:
        used = {c for h in holes for c in h}
        rest = [c for c in deck if c not in used]
        opts = list(combinations(rest, k))
        node = HNode("chance")
        for h in opts:
            nh = holes + (tuple(h),)
            child = deal_holes(nh) if len(nh) < 2 else betting(State.new_hand(game), nh, ((),))
            node.children.append((1.0 / len(opts), child))
        return node

    if game.num_board_cards[0] != 0:
        raise NotImplementedError("twin deals no board on the first street")
    return deal_holes(())


class SlowCFR:
    """Scalar CFR / CFR+ over a :class:`HNode` tree (OpenSpiel-style, for cross-checks)."""

    def __init__(self, root: HNode, plus: bool) -> None:
        self.root = root
        self.plus = plus
        self.regrets: dict[tuple, list[float]] = {}
        self.avg: dict[tuple, list[float]] = {}
        self.policy: dict[tuple, list[float]] = {}
        self.t = 0
        self._collect(root)

    def _collect(self, node: HNode) -> None:
        if node.kind == "decision" and node.key not in self.regrets:
            n = len(node.children)
            self.regrets[node.key] = [0.0] * n
            self.avg[node.key] = [0.0] * n
            self.policy[node.key] = [1.0 / n] * n
        for _, c in node.children:
            self._collect(c)

    def _walk(self, node: HNode, reach: list[float], player: int) -> list[float]:
        if node.kind == "terminal":
            return list(node.values)
        if node.kind == "chance":
            v = [0.0, 0.0]
            for prob, c in node.children:
                r = reach[:]
                r[2] *= prob
                cv = self._walk(c, r, player)
                v[0] += prob * cv[0]
                v[1] += prob * cv[1]
            return v
        p = node.player
        pol = self.policy[node.key]
        v = [0.0, 0.0]
        child_vals = []
        for a, (_, c) in enumerate(node.children):
            r = reach[:]
            r[p] *= pol[a]
            cv = self._walk(c, r, player)
            child_vals.append(cv)
            v[0] += pol[a] * cv[0]
            v[1] += pol[a] * cv[1]
        if p == player:
            cf = reach[1 - p] * reach[2]
            reg = self.regrets[node.key]
            avg = self.avg[node.key]
            w = self.t if self.plus else 1.0
            for a in range(len(pol)):
                reg[a] += cf * (child_vals[a][p] - v[p])
                avg[a] += w * reach[p] * pol[a]
        return v

    def _match(self, player: int | None) -> None:
        for key, reg in self.regrets.items():
            if player is not None and key[0] != player:
                continue
            pos = [max(r, 0.0) for r in reg]
            s = sum(pos)
            self.policy[key] = [x / s for x in pos] if s > 0 else [1.0 / len(reg)] * len(reg)

    def iterate(self) -> None:
        """One iteration: player 0 then player 1 (alternating updates)."""
        self.t += 1
        for player in (0, 1):
            self._walk(self.root, [1.0, 1.0, 1.0], player)
            if self.plus:
                for key, reg in self.regrets.items():
                    if key[0] == player:
                        for a in range(len(reg)):
                            reg[a] = max(reg[a], 0.0)
            self._match(player)

    def average(self) -> dict[tuple, list[float]]:
        """Normalised average strategy per information-set key."""
        out = {}
        for key, s in self.avg.items():
            tot = sum(s)
            out[key] = [x / tot for x in s] if tot > 0 else [1.0 / len(s)] * len(s)
        return out


def profile_values(root: HNode, policy: dict[tuple, list[float]]) -> tuple[float, float]:
    """Expected values of both players when both follow ``policy``."""

    def walk(node: HNode) -> tuple[float, float]:
        if node.kind == "terminal":
            return node.values
        if node.kind == "chance":
            v0 = v1 = 0.0
            for prob, c in node.children:
                a, b = walk(c)
                v0 += prob * a
                v1 += prob * b
            return (v0, v1)
        pol = policy[node.key]
        v0 = v1 = 0.0
        for a, (_, c) in enumerate(node.children):
            x, y = walk(c)
            v0 += pol[a] * x
            v1 += pol[a] * y
        return (v0, v1)

    return walk(root)


def infoset_keys(root: HNode, player: int) -> list[tuple]:
    """Information-set keys of ``player`` in first-visit order."""
    seen: dict[tuple, None] = {}

    def walk(node: HNode) -> None:
        if node.kind == "decision" and node.player == player:
            seen.setdefault(node.key, None)
        for _, c in node.children:
            walk(c)

    walk(root)
    return list(seen)


def raw_problem(game, betting=None):
    """The problem of ``game`` over the raw lossless numbering (every (board, hand) pair
    its own information set, as the twin and OpenSpiel key them): what
    :func:`solver.problem.make_problem` built before lossless buckets became suit classes."""
    from solver.chance import build_chance
    from solver.problem import Problem, as_game
    from solver.tree import build_tree, table_offsets

    g = as_game(game)
    tree = build_tree(g, betting)
    chance = build_chance(g, numbering="raw")
    offset, size = table_offsets(tree, chance.n_buckets)
    return Problem(tree=tree, chance=chance, offset=offset, size=size, ktree=tree.kernel(offset))


def entry_map(problem) -> dict[tuple, tuple[int, int]]:
    """Information-set key -> (table offset, number of actions) in a lossless ``problem``
    (with canonical buckets, the keys of suit-isomorphic hands share an offset).

    The key is built from the tree's betting string and the chance layer's cards, so the
    twin and the kernels meet only through ACPC text and ACPC cards.
    """
    import numpy as np

    tree, ch = problem.tree, problem.chance
    out: dict[tuple, tuple[int, int]] = {}
    for n in tree.decision_nodes():
        betting = tree.betting_string(int(n))
        player, street = int(tree.player[n]), int(tree.street[n])
        for bs in np.flatnonzero(ch.board_street == street):
            board = tuple(ch.deck[x] for x in ch.board_cards[bs] if x >= 0)
            for h in range(ch.n_hands):
                b = int(ch.kernel.bucket[bs, h])
                if b >= 0:
                    key = (player, tuple(ch.deck[x] for x in ch.hands[h]), board, betting)
                    out[key] = (problem.entry(int(n), b, 0), int(tree.n_child[n]))
    return out


def random_policy(problem, rng: np.random.Generator) -> np.ndarray:
    """A policy over ``problem``'s table with an independent Dirichlet(1) distribution at
    every (decision node, bucket): a strategy with no structure, for best-response checks."""
    pol = np.zeros(problem.size)
    tree = problem.tree
    for n in tree.decision_nodes():
        k = int(tree.n_child[n])
        for b in range(problem.chance.n_buckets[tree.street[n]]):
            o = problem.entry(int(n), b, 0)
            pol[o : o + k] = rng.dirichlet(np.ones(k))
    return pol


def player_entries(problem, player: int) -> np.ndarray:
    """A mask of the table entries (vector CFR's layout) of ``player``'s information sets
    (decision nodes are those with a table offset)."""
    mask = np.zeros(problem.size, dtype=bool)
    t = problem.tree
    for node in range(len(t.kind)):
        if problem.offset[node] >= 0 and t.player[node] == player:
            o = int(problem.offset[node])
            size = int(problem.chance.n_buckets[t.street[node]]) * int(t.n_child[node])
            mask[o : o + size] = True
    return mask
