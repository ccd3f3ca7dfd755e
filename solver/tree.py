"""The public betting tree of the (abstract) game as flat numpy arrays.

Node 0 is the root, every node comes after its parent and the children of a node are
contiguous (``child[n] .. child[n] + n_child[n] - 1``), so kernels walk the tree with
integer arithmetic only. Node kinds:

* ``DECISION``: ``player`` acts; children are its actions in the order fold, call,
  raises by increasing raise-to. Fold is left out when a check is free (the state
  already forbids it) so every child is a legal ACPC action.
* ``CHANCE``: the street ``street`` ends and the board cards of ``street + 1`` are dealt;
  one child. An all-in before the last street is followed by one chance node per
  remaining street, so every showdown sits on the last street.
* ``FOLD``: terminal, ``player`` is the one who folded.
* ``SHOWDOWN``: terminal on the last street.

``action``/``amount`` label the edge into a node (``action`` is -1 for the root and for
the first node of a new street, else 0 fold, 1 call, 2 raise with ``amount`` the
raise-to). ``size`` labels a no-limit raise edge with the bet size that made it: its pot
fraction, or ``ALL_IN`` (-1) for a raise of the whole stack (NaN on every other edge and in
limit games): a translated player sizes its real raise from it and the real pot.
``spent`` holds the chips each player has put in at the node.

Legality comes from :class:`poker.state.State`: the builder only *chooses* among the
actions the state allows (limit games: all of them; no-limit games: the sizes of a
:class:`abstraction.betting.BettingAbstraction` inside ``[min_raise_to, max_raise_to]``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from abstraction.betting import BettingAbstraction, parse_betting
from poker.game import Game
from poker.state import Action, State

from ._kernels import CHANCE, DECISION, FOLD, SHOWDOWN, KTree

__all__ = [
    "CHANCE",
    "DECISION",
    "FOLD",
    "SHOWDOWN",
    "Tree",
    "TreeReport",
    "build_tree",
    "table_offsets",
    "tree_report",
]

KIND_NAMES = {DECISION: "decision", CHANCE: "chance", FOLD: "fold", SHOWDOWN: "showdown"}
_ACT_NONE, _ACT_FOLD, _ACT_CALL, _ACT_RAISE = -1, 0, 1, 2


@dataclass(frozen=True, eq=False)
class Tree:
    """Flat public betting tree (see the module docstring for the fields' meaning)."""

    game: Game
    betting: BettingAbstraction | None
    kind: np.ndarray  # int8[n]
    player: np.ndarray  # int8[n]
    street: np.ndarray  # int8[n]
    parent: np.ndarray  # int32[n]
    child: np.ndarray  # int32[n]
    n_child: np.ndarray  # int32[n]
    spent: np.ndarray  # int32[n, 2]
    action: np.ndarray  # int8[n]
    amount: np.ndarray  # int32[n]
    max_depth: int
    size: np.ndarray | None = None  # float32[n]: pot fraction / ALL_IN of a raise edge, else NaN

    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return int(self.kind.shape[0])

    @property
    def n_streets(self) -> int:
        """Number of streets (betting rounds)."""
        return self.game.num_rounds

    @property
    def betting_spec(self) -> str:
        """Canonical text of the betting abstraction ('' for exact limit betting)."""
        return self.betting.text() if self.betting is not None else ""

    @property
    def max_actions(self) -> int:
        """Largest number of actions at a decision node."""
        dec = self.kind == DECISION
        return int(self.n_child[dec].max()) if dec.any() else 1

    def decision_nodes(self, street: int | None = None, player: int | None = None) -> np.ndarray:
        """Indices of decision nodes, optionally of one street and/or one player."""
        mask = self.kind == DECISION
        if street is not None:
            mask &= self.street == street
        if player is not None:
            mask &= self.player == player
        return np.flatnonzero(mask)

    def path(self, node: int) -> list[int]:
        """Nodes from the root to ``node`` (both included)."""
        out = [int(node)]
        while self.parent[out[-1]] >= 0:
            out.append(int(self.parent[out[-1]]))
        return out[::-1]

    def actions_to(self, node: int) -> list[Action]:
        """The ACPC actions leading from the root to ``node``."""
        acts: list[Action] = []
        for n in self.path(node)[1:]:
            a = int(self.action[n])
            if a == _ACT_FOLD:
                acts.append(Action.fold())
            elif a == _ACT_CALL:
                acts.append(Action.call())
            elif a == _ACT_RAISE:
                acts.append(Action.raise_to(int(self.amount[n])))
        return acts

    def state_at(self, node: int) -> State:
        """The game state at ``node``, replayed (and so checked) by :class:`State`."""
        s = State.new_hand(self.game)
        for a in self.actions_to(node):
            s = s.apply(a)
        return s

    def betting_string(self, node: int) -> str:
        """ACPC betting string of ``node`` (as :meth:`State.betting_string` writes it)."""
        return self.state_at(node).betting_string()

    def action_label(self, node: int) -> str:
        """ACPC text of the action into ``node`` ('' for the root and street starts)."""
        a = int(self.action[node])
        if a == _ACT_FOLD:
            return "f"
        if a == _ACT_CALL:
            return "c"
        if a == _ACT_RAISE:
            return "r" if self.game.is_limit else f"r{int(self.amount[node])}"
        return ""

    def kernel(self, offset: np.ndarray) -> KTree:
        """The arrays the kernels take, with table offsets from :func:`table_offsets`."""
        return KTree(
            kind=self.kind,
            player=self.player,
            street=self.street,
            child=self.child,
            n_child=self.n_child,
            spent=self.spent,
            offset=offset,
        )


def _resolve_betting(
    game: Game, betting: BettingAbstraction | str | None
) -> BettingAbstraction | None:
    if isinstance(betting, str):
        betting = parse_betting(betting)
    if game.is_limit:
        if betting is not None:
            raise ValueError(
                f"{game.name or 'this game'} is a limit game: its betting is exact, give no betting abstraction"
            )
        return None
    if betting is None:
        raise ValueError(
            f"{game.name or 'this game'} is a no-limit game: give a betting abstraction such as '1p,a'"
        )
    return betting


def build_tree(game: Game, betting: BettingAbstraction | str | None = None) -> Tree:
    """Build the public betting tree of ``game`` (two players).

    Limit games use their exact betting and take no ``betting``; no-limit games need one
    (a :class:`BettingAbstraction` or its spec string).
    """
    if game.num_players != 2:
        raise ValueError(f"the public tree is built for 2 players, game has {game.num_players}")
    abst = _resolve_betting(game, betting)
    last = game.num_rounds - 1

    kind: list[int] = []
    player: list[int] = []
    street: list[int] = []
    parent: list[int] = []
    child: list[int] = []
    n_child: list[int] = []
    spent: list[tuple[int, int]] = []
    action: list[int] = []
    amount: list[int] = []
    size: list[float] = []
    depth: list[int] = []

    def add(
        k: int, p: int, s: int, par: int, sp: tuple[int, ...], a: int, amt: int, sz: float = math.nan
    ) -> int:
        kind.append(k)
        player.append(p)
        street.append(s)
        parent.append(par)
        child.append(-1)
        n_child.append(0)
        spent.append((sp[0], sp[1]))
        action.append(a)
        amount.append(amt)
        size.append(sz)
        depth.append(depth[par] + 1 if par >= 0 else 0)
        return len(kind) - 1

    # Work list of (node index, state); every node's children are allocated together.
    root_state = State.new_hand(game)
    if root_state.actor is None:
        raise ValueError("the game has no betting: every player is all-in from the blinds")
    root = add(DECISION, root_state.actor, 0, -1, root_state.spent, _ACT_NONE, 0)
    stack: list[tuple[int, State]] = [(root, root_state)]
    while stack:
        node, state = stack.pop()
        if kind[node] == CHANCE:
            # A chance node that ends street s leads either to the next street's first
            # decision or (after an all-in) to the next chance node / the showdown.
            s = street[node]
            if state.actor is not None and state.round == s + 1:
                nk, np_ = DECISION, state.actor
            elif s + 1 < last:
                nk, np_ = CHANCE, -1
            else:
                nk, np_ = SHOWDOWN, -1
            c = add(nk, np_, s + 1, node, state.spent, _ACT_NONE, 0)
            child[node], n_child[node] = c, 1
            if nk != SHOWDOWN:
                stack.append((c, state))
            continue
        # Decision node.
        s = street[node]
        moves: list[tuple[Action, int, int, float]] = []
        if state.can_fold():
            moves.append((Action.fold(), _ACT_FOLD, 0, math.nan))
        moves.append((Action.call(), _ACT_CALL, 0, math.nan))
        lo, hi = state.min_raise_to, state.max_raise_to
        if lo is not None and hi is not None:
            if abst is None:  # limit: the one raise the state allows
                items = [(lo, math.nan)]
            else:
                p = state.actor
                assert p is not None
                items = abst.raise_items(s, state.num_raises_in_round, state.spent, p, lo, hi)
            moves += [(Action.raise_to(to), _ACT_RAISE, to, sz) for to, sz in items]
        first = len(kind)
        pending: list[tuple[int, State]] = []
        for act, code, to, sz in moves:
            nxt = state.apply(act)  # the state checks legality
            if nxt.actor is None and sum(nxt.folded) == 1:
                folder = nxt.folded.index(True)
                c = add(FOLD, folder, s, node, nxt.spent, code, to, sz)
            elif nxt.actor is None:
                c = add(CHANCE if s < last else SHOWDOWN, -1, s, node, nxt.spent, code, to, sz)
                if s < last:
                    pending.append((c, nxt))
            elif nxt.round > s:
                c = add(CHANCE, -1, s, node, nxt.spent, code, to, sz)
                pending.append((c, nxt))
            else:
                c = add(DECISION, nxt.actor, s, node, nxt.spent, code, to, sz)
                pending.append((c, nxt))
        child[node], n_child[node] = first, len(moves)
        stack.extend(reversed(pending))

    tree = Tree(
        game=game,
        betting=abst,
        kind=np.asarray(kind, dtype=np.int8),
        player=np.asarray(player, dtype=np.int8),
        street=np.asarray(street, dtype=np.int8),
        parent=np.asarray(parent, dtype=np.int32),
        child=np.asarray(child, dtype=np.int32),
        n_child=np.asarray(n_child, dtype=np.int32),
        spent=np.asarray(spent, dtype=np.int32).reshape(-1, 2),
        action=np.asarray(action, dtype=np.int8),
        amount=np.asarray(amount, dtype=np.int32),
        max_depth=int(max(depth)),
        size=np.asarray(size, dtype=np.float32),
    )
    return tree


def table_offsets(tree: Tree, n_buckets: Sequence[int]) -> tuple[np.ndarray, int]:
    """Offset of every decision node in a regret/average table, and the table size.

    The entry of (node, bucket, action) is ``offset[node] + bucket * n_child[node] +
    action`` (the one canonical addressing; non-decision nodes get -1).
    """
    if len(n_buckets) != tree.n_streets:
        raise ValueError(f"{len(n_buckets)} bucket counts for {tree.n_streets} streets")
    nb = np.asarray(n_buckets, dtype=np.int64)
    sizes = np.where(
        tree.kind == DECISION, nb[tree.street.astype(np.int64)] * tree.n_child, 0
    ).astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    offset = np.where(tree.kind == DECISION, starts, -1).astype(np.int64)
    return offset, int(sizes.sum())


@dataclass(frozen=True)
class TreeReport:
    """Sizes of a tree for given per-street bucket counts.

    Per street ``s``: ``nodes[s]`` maps a kind name to its count, ``decisions[s][p]``
    counts player p's decision nodes, ``infosets[s][p]`` = decisions x buckets and
    ``entries[s]`` the table entries (infoset x action). ``bytes_float64`` /
    ``bytes_float32``: memory of a training run's regrets plus average sums.
    """

    n_nodes: int
    nodes: tuple[dict[str, int], ...]
    decisions: tuple[tuple[int, int], ...]
    infosets: tuple[tuple[int, int], ...]
    entries: tuple[int, ...]
    total_infosets: int
    total_entries: int
    bytes_float64: int
    bytes_float32: int

    def to_dict(self) -> dict[str, object]:
        """Plain data for ``--json``."""
        return {
            "nodes": self.n_nodes,
            "streets": [
                {
                    "nodes": self.nodes[s],
                    "decisions": list(self.decisions[s]),
                    "infosets": list(self.infosets[s]),
                    "entries": self.entries[s],
                }
                for s in range(len(self.nodes))
            ],
            "infosets": self.total_infosets,
            "entries": self.total_entries,
            "bytes_float64": self.bytes_float64,
            "bytes_float32": self.bytes_float32,
        }


def tree_report(tree: Tree, n_buckets: Sequence[int]) -> TreeReport:
    """Node, information-set and memory counts of ``tree`` with ``n_buckets[s]`` buckets on street s."""
    if len(n_buckets) != tree.n_streets:
        raise ValueError(f"{len(n_buckets)} bucket counts for {tree.n_streets} streets")
    nodes: list[dict[str, int]] = []
    decisions: list[tuple[int, int]] = []
    infosets: list[tuple[int, int]] = []
    entries: list[int] = []
    for s in range(tree.n_streets):
        on = tree.street == s
        nodes.append(
            {name: int(np.count_nonzero(on & (tree.kind == k))) for k, name in KIND_NAMES.items()}
        )
        d0, d1 = (
            int(np.count_nonzero(on & (tree.kind == DECISION) & (tree.player == p))) for p in (0, 1)
        )
        d = (d0, d1)
        decisions.append(d)
        infosets.append((d[0] * int(n_buckets[s]), d[1] * int(n_buckets[s])))
        entries.append(int(tree.n_child[on & (tree.kind == DECISION)].sum()) * int(n_buckets[s]))
    total = sum(entries)
    return TreeReport(
        n_nodes=tree.n_nodes,
        nodes=tuple(nodes),
        decisions=tuple(decisions),
        infosets=tuple(infosets),
        entries=tuple(entries),
        total_infosets=sum(a + b for a, b in infosets),
        total_entries=total,
        bytes_float64=2 * 8 * total,
        bytes_float32=2 * 4 * total,
    )
