"""``pokerbot inspect``: look inside a strategy file.

Without options: the file's metadata (game, betting, card buckets, precision, sizes,
arrays, training record and the evaluation figures stored in it). With ``--history`` and
``--hand``: the action distribution the player would play at that real betting history
with those cards. With ``--grid``: the preflop grid of a hold'em strategy (13 x 13 on the
full deck, one row and column per rank the deck has).

A real history is followed through the abstract tree the way the player follows it
(:class:`solver.play.policy.HandWalk` with ``own=False``: every action, the player's own too,
is translated), but instead of drawing one mapping outcome the walk keeps them all:
where a real bet maps to two abstract sizes, both branches are followed with their
mapping probabilities, and the distribution shown is the mixture, with each abstract
path listed beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from abstraction.translation import MAPPINGS
from poker.cards import CardError, deck_cards, format_cards, parse_cards
from poker.game import Game
from poker.state import ActionKind, State
from solver.evaluation.preflop import EQUITY_SAMPLES, equity_vs_random, rank_correlation
from solver.play.player import bucket_fn, translated
from solver.play.policy import Branch, BucketFn, TranslatedPolicy, abstract_label, follow
from solver.play.rows import uniform_rows
from solver.strategy_io import StrategyFile, describe_cards
from solver.training.checkpoint import CheckpointError, is_checkpoint, load_checkpoint
from solver.tree import Tree

from ..players import ResolveSpec
from .options import UserError, add_resolve_options, resolve_spec
from .strategy_tables import add_tables_option, open_with_tables

__all__ = [
    "GRID_RANKS",
    "PLOT_HINT",
    "distribution",
    "grid_classes",
    "grid_ranks",
    "parse_history",
    "preflop_grid",
    "register",
    "run",
]

#: The line printed when ``--png`` is asked for without matplotlib.
PLOT_HINT = "install the plot extra: pip install -e '.[plot]'"
#: Grid rows and columns, highest rank first.
GRID_RANKS = "AKQJT98765432"
_SUITS_HIGH = "shdc"
_KIND_NAME = {ActionKind.FOLD: "fold", ActionKind.CALL: "call", ActionKind.RAISE: "raise"}
_KIND_ORDER = {"fold": 0, "call": 1, "raise": 2}
_SHOW = ("raise", "call", "fold", "top")
_ANSI = {"raise": "\033[31m", "call": "\033[32m", "fold": "\033[34m"}
_ANSI_RESET = "\033[0m"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``inspect`` subcommand."""
    p = sub.add_parser(
        "inspect",
        help="look inside a strategy file: metadata, the policy at a history, preflop grid",
        description=(
            "Show what a strategy file written by 'pokerbot train' holds. Without options: "
            "game, betting abstraction, card buckets, precision, sizes, arrays, the training "
            "record (with the command that made it) and the evaluation figures stored in the "
            "file. With --history H --hand CARDS: the action distribution at the real ACPC "
            "betting history H for the acting player holding CARDS, each abstract action "
            "with the real action it becomes from the real pot and its probability. The "
            "history is translated as the player would translate it; where a real bet maps "
            "to two abstract sizes, both are followed and the mixture is shown, with each "
            "abstract path and its weight. With --grid (hold'em): the preflop grid, 13x13 "
            "on the full deck, a row and a column per rank of a short deck "
            "(pairs on the diagonal, suited above, offsuit below) at a preflop history. "
            "Given a training checkpoint instead: the run it continues and how far it went."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "examples:\n"
            "  pokerbot inspect leduc.strategy\n"
            "  pokerbot inspect leduc.strategy --history '' --hand Ks\n"
            "  pokerbot inspect leduc.strategy --history r7 --hand Ah --json\n"
            "  pokerbot inspect leduc.strategy --history cc/r4 --hand Qs --board Kh\n"
            "  pokerbot inspect holdem.strategy --history r300c/cr900 --hand AsKd --board 7h8c2d\n"
            "  pokerbot inspect holdem.strategy --grid --history r300 --show top\n"
            "  pokerbot inspect holdem.strategy --grid --png grid.png   (needs the plot extra)\n"
            "  pokerbot inspect run.ckpt   (a checkpoint: game, algorithm, iterations, seconds)\n"
            "JSON (last line): the metadata; with --hand also history, hand, board, bucket, "
            "actions [{label, real, probability}] (the mixture) and paths [{abstract, "
            "weight, steps, actions}]; with --grid, grid (169 entries on the full deck, row by row)."
        ),
    )
    p.add_argument("file", help="strategy file (or training checkpoint) written by 'pokerbot train'")
    p.add_argument(
        "--history",
        metavar="H",
        help="real ACPC betting, e.g. 'r300c/cr900', 'cc/r4' or '' for the first decision",
    )
    p.add_argument("--hand", metavar="CARDS", help="the acting player's hole cards, e.g. AsKd or Ks")
    p.add_argument(
        "--board", metavar="CARDS", default="", help="board cards in dealing order, past preflop"
    )
    p.add_argument("--grid", action="store_true", help="hold'em: the preflop grid (13x13 on the full deck)")
    p.add_argument(
        "--show",
        choices=_SHOW,
        default="raise",
        help="grid cell: raise, call or fold probability, or top (the most likely action); "
        "default raise",
    )
    p.add_argument("--png", type=Path, metavar="OUT", help="draw the grid to a PNG (matplotlib)")
    p.add_argument("--no-color", action="store_true", help="no ANSI colours in the grid")
    p.add_argument(
        "--mapping",
        choices=MAPPINGS,
        default=MAPPINGS[0],
        help=f"action translation of real bets (default {MAPPINGS[0]})",
    )
    add_tables_option(p, "cached")
    p.add_argument("--resolve", action="store_true",
                   help="with --history and --hand: also what the re-solving player (resolve:FILE) plays "
                        "there, with the --resolve-* options")
    add_resolve_options(p, flag=False)
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    p.set_defaults(func=run)


# ------------------------------------------------------------------ following a history


def parse_history(game: Game, text: str) -> State:
    """The real state after ACPC betting ``text`` (``/`` optional between streets); raises
    :class:`UserError` for text that is not a legal history of ``game`` or that ends the
    hand."""
    try:
        state = State.from_betting(game, text.strip(), strict=False)
    except ValueError as exc:
        raise UserError(f"--history {text!r} is not legal in {game.name or 'this game'}: {exc}") from None
    if state.actor is None:
        raise UserError(f"--history {text!r} ends the hand: nobody is to act")
    return state


def _real_entry(state: State, action: Any) -> tuple[str, str]:
    """(kind name, ACPC text) of a real action at ``state``."""
    return _KIND_NAME[action.kind], action.to_acpc(state.game.is_limit)


def _actions_at(policy: TranslatedPolicy, state: State, node: int, bucket: int) -> list[dict[str, Any]]:
    """Each abstract action of decision ``node`` for ``bucket``: label, abstract and real
    action, pot fraction, probability."""
    tree = policy.tree
    probs = policy.probabilities(node, bucket)
    out = []
    for i, child in enumerate(policy.children(node)):
        label, size = abstract_label(tree, node, child)
        kind, real = _real_entry(state, policy.real_action(child, state))
        out.append({
            "label": label,
            "abstract": tree.action_label(child),
            "real": real,
            "kind": kind,
            "size": size,
            "probability": float(probs[i]),
        })
    return out


def _fallback(state: State) -> list[dict[str, Any]]:
    label = "check" if state.to_call == 0 else "call"
    return [{"label": f"{label} (fallback: the tree cannot follow)", "abstract": None, "real": "c",
             "kind": "call", "size": None, "probability": 1.0}]


def _mix(paths: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The paths' actions combined by real action, weighted by the paths' weights."""
    acc: dict[str, dict[str, Any]] = {}
    for path in paths:
        for a in path["actions"]:
            e = acc.get(a["real"])
            if e is None:
                e = acc[a["real"]] = {"label": a["label"], "real": a["real"], "kind": a["kind"],
                                      "probability": 0.0, "_labels": [a["label"]]}
            elif a["label"] not in e["_labels"]:
                e["_labels"].append(a["label"])
                e["label"] = " | ".join(e["_labels"])
            e["probability"] += path["weight"] * a["probability"]
    out = sorted(acc.values(), key=lambda e: (_KIND_ORDER[e["kind"]], _raise_amount(e["real"])))
    for e in out:
        del e["_labels"]
    return out


def _raise_amount(real: str) -> int:
    return int(real[1:]) if real.startswith("r") and len(real) > 1 else 0


def distribution(
    policy: TranslatedPolicy, state: State, branches: Sequence[Branch], bucket: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(actions, paths)`` at ``state`` for ``bucket``: the mixture over ``branches``
    (by real action) and each branch with its own abstract actions."""
    tree = policy.tree
    paths = []
    for b in branches:
        live = not b.lost
        paths.append({
            "abstract": tree.betting_string(b.node) if live else None,
            "node": int(b.node),
            "weight": b.weight,
            "fallback": not live,
            "steps": b.steps,
            "actions": _actions_at(policy, state, b.node, bucket) if live else _fallback(state),
        })
    return _mix(paths), paths


# ------------------------------------------------------------------ the preflop grid


def grid_ranks(num_ranks: int = 13) -> str:
    """The grid's ranks, highest first: a short deck keeps the highest ranks (20-card
    hold'em plays T to A)."""
    return GRID_RANKS[:num_ranks]


def grid_classes(num_ranks: int = 13) -> list[tuple[int, int, str, list[int]]]:
    """The preflop classes row by row (169 on the full deck): ``(row, col, name,
    representative cards)``; pairs on the diagonal, suited above it (row rank higher),
    offsuit below."""
    out = []
    ranks = grid_ranks(num_ranks)
    for i, r1 in enumerate(ranks):
        for j, r2 in enumerate(ranks):
            if i == j:
                name, cards = r1 + r1, f"{r1}s{r1}h"
            elif j > i:
                name, cards = f"{r1}{r2}s", f"{r1}s{r2}s"
            else:
                name, cards = f"{r2}{r1}o", f"{r2}s{r1}h"
            out.append((i, j, name, parse_cards(cards)))
    return out


def _check_holdem(game: Game) -> None:
    if game.num_hole_cards != 2 or not 2 <= game.num_ranks <= 13 or game.num_suits != 4:
        raise UserError(
            f"--grid needs a hold'em game (2 hole cards, 2 to 13 ranks, 4 suits); {game.name or 'this game'} "
            f"has {game.num_hole_cards} hole card(s), {game.num_ranks} ranks, {game.num_suits} suits"
        )


def preflop_grid(
    tree: Tree,
    offset: np.ndarray,
    table: np.ndarray,
    bucket_fn: BucketFn,
    history: str | State = "",
    *,
    mapping: str = MAPPINGS[0],
) -> dict[str, Any]:
    """The preflop grid of a hold'em strategy at the real preflop ``history``:
    ``{"history", "actor", "paths", "grid"}`` where ``grid`` holds the classes row by
    row (:func:`grid_classes`: 169 on the full deck), each with its representative ``cards``, ``bucket``
    (``bucket_fn(0, hole, ())``), the mixed ``actions`` and the ``fold``, ``call`` and
    ``raise`` probabilities. Raises :class:`UserError` for a game that is not hold'em or
    a history that is not preflop."""
    game = tree.game
    _check_holdem(game)
    state = parse_history(game, history) if isinstance(history, str) else history
    if state.round != 0:
        raise UserError(
            f"--grid shows preflop decisions, but history {state.betting_string()!r} reaches street {state.round}"
        )
    policy = TranslatedPolicy(tree, offset, table, bucket_fn, mapping=mapping)
    branches = follow(policy, state)
    grid = []
    paths: list[dict[str, Any]] = []
    for row, col, name, cards in grid_classes(game.num_ranks):
        bucket = int(bucket_fn(0, cards, ()))
        actions, paths = distribution(policy, state, branches, bucket)
        kinds = {k: sum(a["probability"] for a in actions if a["kind"] == k) for k in _KIND_ORDER}
        grid.append({"hand": name, "cards": format_cards(cards), "row": row, "col": col,
                     "bucket": bucket, "actions": actions, **kinds})
    for p in paths:  # the per-hand actions of the last class mean nothing here
        p.pop("actions", None)
    equity = _class_equity(state.game)
    for e, q in zip(grid, equity):
        e["equity"] = round(float(q), 4)
    order = {"raise_vs_equity": rank_correlation([e["raise"] for e in grid], equity),
             "equity_samples": EQUITY_SAMPLES}
    return {"history": state.betting_string(), "actor": state.actor, "paths": paths, "grid": grid,
            "order": order}


#: Each grid class's equity against a random hand, per (ranks, suits, board cards).
_CLASS_EQUITY: dict[tuple[int, int, int], np.ndarray] = {}


def _class_equity(game: Game) -> np.ndarray:
    """The grid classes' equities against a random hand (computed once per deck shape)."""
    key = (game.num_ranks, game.num_suits, game.total_board_cards)
    if key not in _CLASS_EQUITY:
        _CLASS_EQUITY[key] = equity_vs_random(game, [c[3] for c in grid_classes(game.num_ranks)])
    return _CLASS_EQUITY[key]


def _grid_size(doc: dict[str, Any]) -> int:
    """Rows (and columns) of a grid document: one per rank."""
    return 1 + max(e["row"] for e in doc["grid"])


def _cell(entry: dict[str, Any], show: str) -> tuple[str, str]:
    """(text, dominant kind) of one grid cell, 4 characters wide."""
    kind = max(_KIND_ORDER, key=lambda k: entry[k])
    if show == "top":
        return f"{kind[0]}{round(100 * entry[kind]):>3}", kind
    return f"{round(100 * entry[show]):>4}", kind


def _print_grid(doc: dict[str, Any], show: str, color: bool) -> None:
    cells = {(e["row"], e["col"]): e for e in doc["grid"]}
    ranks = grid_ranks(_grid_size(doc))
    print("     " + " ".join(f"{r:>4}" for r in ranks))
    for i, r in enumerate(ranks):
        parts = []
        for j in range(len(ranks)):
            text, kind = _cell(cells[(i, j)], show)
            parts.append(f"{_ANSI[kind]}{text}{_ANSI_RESET}" if color else text)
        print(f"{r:>4} " + " ".join(parts))
    what = "most likely action (f/c/r, all sizes of a raise together) and its %" if show == "top" \
        else f"{show} probability in % (all sizes of a raise together)" if show == "raise" \
        else f"{show} probability in %"
    legend = f"cells: {what}; suited above the diagonal, offsuit below, pairs on it"
    if color:
        legend += "; colour: " + ", ".join(f"{_ANSI[k]}{k}{_ANSI_RESET}" for k in ("raise", "call", "fold")) \
            + " most likely"
    print(legend)


def _draw_png(doc: dict[str, Any], show: str, out: Path, title: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib.figure import Figure
    except ImportError:
        raise UserError(PLOT_HINT) from None
    n = _grid_size(doc)
    values = np.zeros((n, n))
    labels = [["" for _ in range(n)] for _ in range(n)]
    for e in doc["grid"]:
        text, _ = _cell(e, show)
        if show == "top":
            values[e["row"], e["col"]] = {"fold": 0.0, "call": 0.5, "raise": 1.0}[
                max(_KIND_ORDER, key=lambda k: e[k])]
        else:
            values[e["row"], e["col"]] = e[show]
        labels[e["row"]][e["col"]] = f"{e['hand']}\n{text.strip()}"
    fig = Figure(figsize=(9, 9))
    ax = fig.add_subplot(1, 1, 1)
    ax.imshow(values, cmap="RdYlGn" if show != "top" else "coolwarm", vmin=0.0, vmax=1.0)
    for i in range(n):
        for j in range(n):
            ax.text(j, i, labels[i][j], ha="center", va="center", fontsize=7)
    ax.set_xticks(range(n), list(grid_ranks(n)))
    ax.set_yticks(range(n), list(grid_ranks(n)))
    what = "most likely action (f/c/r) and %" if show == "top" else f"{show} probability (%)"
    ax.set_title(f"{title}\n{what}", fontsize=10)
    fig.tight_layout()
    try:
        fig.savefig(out, format="png", dpi=100)
    except OSError as exc:
        raise UserError(f"--png {out}: cannot write ({exc.strerror or exc})") from None


# ------------------------------------------------------------------ cards


def _cards(text: str, flag: str, game: Game) -> list[int]:
    raw = text.replace(" ", "").replace(",", "")
    try:
        cards = parse_cards(raw)
    except CardError as exc:
        raise UserError(f"{flag} {text!r}: {exc}") from None
    deck = set(deck_cards(game.num_ranks, game.num_suits))
    for c in cards:
        if c not in deck:
            raise UserError(
                f"{flag} {text!r}: card {format_cards([c])} is not in {game.name or 'the game'}'s deck "
                f"({' '.join(format_cards([d]) for d in sorted(deck))})"
            )
    if len(set(cards)) != len(cards):
        raise UserError(f"{flag} {text!r}: a card is given twice")
    return cards


def _hand_and_board(args: argparse.Namespace, game: Game, state: State) -> tuple[list[int], list[int]]:
    hole = _cards(args.hand, "--hand", game)
    if len(hole) != game.num_hole_cards:
        raise UserError(
            f"--hand {args.hand!r} has {len(hole)} card(s), {game.name or 'the game'} deals "
            f"{game.num_hole_cards} hole card(s)"
        )
    board = _cards(args.board, "--board", game)
    want = sum(game.num_board_cards[: state.round + 1])
    if len(board) != want:
        raise UserError(
            f"--board {args.board!r} has {len(board)} card(s), but history "
            f"{state.betting_string()!r} is on street {state.round}, which has {want} board card(s)"
        )
    both = set(hole) & set(board)
    if both:
        raise UserError(f"card {format_cards(sorted(both))} is both in --hand and on --board")
    return hole, board


# ------------------------------------------------------------------ metadata


def _inspect_checkpoint(path: str, as_json: bool) -> int:
    """What a training checkpoint records: the run it continues and how far it went."""
    try:
        ckpt = load_checkpoint(path)
    except CheckpointError as exc:
        raise UserError(str(exc)) from None
    doc = {
        "file": str(path),
        "kind": "checkpoint",
        "file_bytes": Path(path).stat().st_size,
        "game": ckpt.game_name,
        "betting": ckpt.betting,
        "cards": ckpt.cards,
        "algorithm": ckpt.algorithm,
        "options": ckpt.options,
        "iterations": ckpt.iterations,
        "nodes": ckpt.nodes,
        "seconds": ckpt.seconds,
        "seed": ckpt.seed,
        "threads": ckpt.threads,
        "arrays": {k: {"dtype": a.dtype.str, "shape": list(a.shape)} for k, a in ckpt.arrays.items()},
    }
    if as_json:
        print(json.dumps(doc, default=str))
        return 0
    tables = ", ".join(f"{k} {a.dtype.name} x {a.size:,}" for k, a in ckpt.arrays.items() if k in ("regrets", "avg_sums"))
    print("\n".join([
        f"{path}: pokerbot training checkpoint, {doc['file_bytes']:,} bytes",
        f"game        {ckpt.game_name or '(unnamed)'}",
        f"betting     {ckpt.betting or '(limit: exact betting)'}",
        f"cards       {describe_cards(ckpt.cards)}",
        f"training    {ckpt.algorithm}: {ckpt.iterations:,} iterations in {ckpt.seconds:,.1f} s of solving, "
        f"seed {ckpt.seed}, {ckpt.threads} thread(s)",
        f"options     {json.dumps(ckpt.options, sort_keys=True)}",
        f"tables      {tables or '(none: ' + ', '.join(ckpt.arrays) + ')'}",
        f"resume      the command that made it, with --resume {path} (a budget already reached "
        f"writes the strategy file and exits)",
    ]))  # fmt: skip
    return 0


def _metadata_lines(f: StrategyFile, meta: dict[str, Any]) -> list[str]:
    g = f.game
    kind = "limit" if g.is_limit else "no-limit"
    lines = [
        f"{meta['file']}: pokerbot strategy, format {meta['version']}, {meta['file_bytes']:,} bytes",
        f"game        {g.name or '(unnamed)'}: {kind}, {g.num_players} players, {g.num_rounds} streets, "
        f"stacks {'/'.join(str(s) for s in g.stack)}, blinds {'/'.join(str(b) for b in g.blind)}, "
        f"{g.num_ranks} ranks x {g.num_suits} suits, {g.num_hole_cards} hole card(s), "
        f"board {'/'.join(str(b) for b in g.num_board_cards)}",
        f"betting     {meta['betting'] or '(limit: exact betting)'}",
    ]
    cards = meta["cards"]
    counts = "/".join(str(b) for b in cards.get("buckets", []))
    if cards.get("abstraction") == "card":
        lines.append(f"cards       card abstraction, buckets {counts}")
        for key in ("model_hash", "content_hash", "directory"):
            if cards.get(key):
                lines.append(f"            {key} {cards[key]}")
        if cards.get("params"):
            lines.append(f"            params {json.dumps(cards['params'], sort_keys=True)}")
    else:
        older = " (raw (board, hand) numbering: a file older than suit classes)" if "numbering" not in cards else ""
        lines.append(f"cards       lossless buckets {counts}{older}")
    precision = {
        "u8": "u8 (one byte per probability, rows sum to 255)",
        "f32": "f32 (float32)",
        "f64": "f64 (float64, an older format)",
    }.get(meta["precision"], meta["precision"])
    lines.append(f"precision   {precision}")
    nodes = meta.get("tree_nodes")
    lines.append(
        f"table       {meta['table_entries']:,} entries over "
        f"{f'{nodes:,}' if isinstance(nodes, int) else '?'} tree nodes"
    )
    for i, (name, a) in enumerate(meta["arrays"].items()):
        shape = "x".join(str(s) for s in a.get("shape") or []) or "scalar"
        b = a.get("bytes")
        size = f"{b:,} bytes" if isinstance(b, int) else "? bytes"
        lines.append(f"{'arrays' if i == 0 else '':<12}{name} {a.get('dtype')} [{shape}] {size}")
    t = dict(meta["training"])
    if t:
        head = [str(t.pop("algorithm", "") or "?")]
        if "iterations" in t:
            head.append(f"{t.pop('iterations'):,} iterations")
        if isinstance(t.get("seconds"), (int, float)):
            head.append(f"{t.pop('seconds'):g} s")
        for key in ("seed", "threads"):
            if t.get(key) is not None:
                head.append(f"{key} {t.pop(key)}")
            else:
                t.pop(key, None)
        lines.append("training    " + ", ".join(head))
        recipe = t.pop("recipe", None)
        if t.get("options"):
            lines.append(f"            options {json.dumps(t.pop('options'), sort_keys=True)}")
        else:
            t.pop("options", None)
        rows = t.pop("unaveraged_rows", None)
        if isinstance(rows, dict):
            lines.append("            " + _unaveraged_line(rows))
        for key, value in t.items():
            text = json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else value
            lines.append(f"            {key} {text}")
        if recipe:
            lines.append(f"recipe      {recipe}")
    if "uniform_rows" in meta:
        lines.append("rows        " + _uniform_line(meta["uniform_rows"]))
    ev = dict(meta["evaluation"])
    if ev:
        parts = []
        if "mbb_per_game" in ev:
            parts.append("exploitability " + _figure(ev.pop("mbb_per_game"), ev.pop("exploitability", None))
                         + " in the abstract game")
        if "real_mbb_per_game" in ev:
            parts.append(_figure(ev.pop("real_mbb_per_game"), ev.pop("real_exploitability", None))
                         + " in the real game")
        if "precision" in ev:
            parts.append(f"measured on the stored {ev.pop('precision')} policy")
        parts += [f"{k} {v}" for k, v in ev.items()]
        lines.append("evaluation  " + "; ".join(parts))
    else:
        lines.append("evaluation  (none stored)")
    return lines


def _unaveraged_line(rows: dict[str, Any]) -> str:
    """The training record's count of information sets whose average was never updated."""
    try:
        per = ", ".join(f"{u:,}/{r:,}" for u, r in zip(rows["unaveraged"], rows["rows"]))
        never = ", ".join(f"{n:,}" for n in rows["untouched"])
    except (KeyError, TypeError):
        return f"unaveraged rows {rows}"
    return (f"unaveraged rows per street {per} (they play the {rows.get('plays', '?')} strategy; "
            f"never updated at all: {never})")


def _uniform_line(rows: dict[str, Any]) -> str:
    """The share of stored rows that play every action alike, per street."""
    per = ", ".join(f"{s:.1%} ({u:,}/{r:,})" for s, u, r in zip(rows["shares"], rows["uniform"], rows["rows"]))
    return f"uniform (every action within one step of equal) per street: {per}"


def _figure(mbb: float | None, chips: float | None) -> str:
    """An exploitability figure as stored: ``None`` where the evaluation was skipped (a
    ``--final-eval`` run stores null when the game is too large to evaluate exactly)."""
    if mbb is None:
        return "not measured"
    text = f"{mbb:.3f} mbb/g"
    return text if chips is None else f"{text} ({chips:.6f} chips/game)"


# ------------------------------------------------------------------ the command


def _fmt_action(a: dict[str, Any]) -> str:
    size = a.get("size")
    frac = "" if size is None else ("all-in" if size == "all-in" else f"{size:g} pot")
    return f"  {a['label']:<24} {a['real']:>8} {frac:>8} {a['probability']:>8.4f}"


def _paths_text(paths: list[dict[str, Any]]) -> list[str]:
    lines = []
    for p in paths:
        steps = ", ".join(
            f"{s['real']}->{s['abstract']}" + (f" ({s['probability']:.4f})" if s["probability"] < 1 else "")
            if s["abstract"] is not None else f"{s['real']} ({s.get('note')})"
            for s in p["steps"]
        ) or "(root)"
        where = repr(p["abstract"]) if not p["fallback"] else "none (the tree cannot follow)"
        lines.append(f"  weight {p['weight']:.4f}: abstract {where}  [{steps}]")
    return lines


def run(args: argparse.Namespace) -> int:
    """Print the metadata, a distribution or the grid."""
    if args.png is not None and not args.grid:
        raise UserError("--png draws the grid: give --grid too")
    if args.grid and args.hand is not None:
        raise UserError("--grid shows every preflop hand: leave out --hand")
    if args.board and args.hand is None:
        raise UserError("--board goes with --hand")
    if args.resolve and (args.hand is None or args.grid):
        raise UserError("--resolve shows the re-solving player at --history for --hand CARDS (not with --grid)")
    if args.history is not None and args.hand is None and not args.grid:
        raise UserError("--history needs --hand CARDS (or --grid for hold'em)")
    if is_checkpoint(args.file):
        if args.grid or args.hand is not None:
            raise UserError(f"{args.file} is a training checkpoint, which holds tables, not a strategy: the "
                            f"command that made it with --resume {args.file} --out FILE writes one")  # fmt: skip
        return _inspect_checkpoint(args.file, args.json)
    f = open_with_tables(args.file, args.tables, quiet=args.json)
    meta = f.describe()
    game = f.game
    if not (args.grid or args.hand is not None):
        meta["uniform_rows"] = uniform_rows(f.tree, f.offset, f.table, f.bucket_counts).to_dict()
        if args.json:
            print(json.dumps(meta, default=str))
        else:
            print("\n".join(_metadata_lines(f, meta)))
        return 0

    history = args.history if args.history is not None else ""
    if args.grid:
        _check_holdem(game)
    state = parse_history(game, history)
    title = f"{game.name} {f.betting}  history {state.betting_string()!r}, player {state.actor} to act"
    if args.grid:
        doc = preflop_grid(f.tree, f.offset, f.table, bucket_fn(f), state, mapping=args.mapping)
        if args.png is not None:
            _draw_png(doc, args.show, args.png, title)
        if args.json:
            print(json.dumps({**meta, **doc, "png": str(args.png) if args.png else None}, default=str))
            return 0
        color = not args.no_color and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        print(f"{game.name}  betting {f.betting or '(limit)'}  ({args.file})")
        print(f"history {doc['history']!r}: player {doc['actor']} to act, preflop; translated as")
        print("\n".join(_paths_text(doc["paths"])))
        _print_grid(doc, args.show, color)
        print(f"order: Spearman correlation of the raise probability (all sizes) with the hand's equity "
              f"against a random hand ({EQUITY_SAMPLES:,} boards): {doc['order']['raise_vs_equity']:.3f}")
        if args.png is not None:
            print(f"wrote {args.png}")
        return 0

    hole, board = _hand_and_board(args, game, state)
    policy = translated(f, args.mapping)
    try:
        bucket = int(policy.bucket(state.round, hole, board))
    except ValueError as exc:
        raise UserError(f"cannot bucket {format_cards(hole)} on {format_cards(board) or 'no board'}: {exc}") from None
    branches = follow(policy, state)
    actions, paths = distribution(policy, state, branches, bucket)
    doc = {
        **meta,
        "history": state.betting_string(),
        "actor": state.actor,
        "street": state.round,
        "pot": state.pot,
        "to_call": state.to_call,
        "hand": format_cards(hole),
        "board": format_cards(board),
        "bucket": bucket,
        "mapping": args.mapping,
        "actions": actions,
        "paths": paths,
    }
    if args.resolve:
        doc["resolving"] = resolved_distribution(policy, resolve_spec(args), state, hole, board, quiet=args.json)
    if args.json:
        print(json.dumps(doc, default=str))
        return 0
    print(f"{game.name}  betting {f.betting or '(limit)'}  ({args.file})")
    print(
        f"history {doc['history']!r}: player {state.actor} to act on street {state.round}, "
        f"pot {state.pot}, to call {state.to_call}; hand {doc['hand']}"
        + (f", board {doc['board']}" if board else "")
        + f", bucket {bucket}"
    )
    print(f"translated ({args.mapping}) as")
    print("\n".join(_paths_text(paths)))
    header = f"  {'action':<24} {'real':>8} {'size':>8} {'prob':>8}"
    if len(paths) > 1:
        for p in paths:
            where = repr(p["abstract"]) if not p["fallback"] else "fallback"
            print(f"at {where} (weight {p['weight']:.4f}):")
            print(header)
            for a in p["actions"]:
                print(_fmt_action(a))
        print("mixture (what the player plays):")
    else:
        print(f"at {paths[0]['abstract']!r}:" if not paths[0]["fallback"] else "fallback:")
    print(f"  {'action':<24} {'real':>8} {'':>8} {'prob':>8}" if len(paths) > 1 else header)
    for a in (actions if len(paths) > 1 else paths[0]["actions"]):
        print(_fmt_action(a))
    if args.resolve:
        r = doc["resolving"]
        how = {"solved": f"re-solved in {r['seconds']:.2f} s" + (", to the street's end" if r["limited"] else ""),
               "followed": "from the last solution",
               "blueprint": "nothing to re-solve here: the blueprint plays, as above"}[r["source"]]
        print(f"re-solving player ({how}):")
        for a in r["actions"]:
            print(f"  {a['action']:<24} {a['real']:>8} {a['prob']:>8.4f}")
    return 0


#: Seconds a re-solve runs before ``--resolve`` shows a bar of its iterations (a quick one shows none).
RESOLVE_BAR_AFTER = 1.0


def resolved_distribution(policy: TranslatedPolicy, spec: ResolveSpec, state: State, hole: list[int],
                          board: list[int], *, quiet: bool = True) -> dict[str, Any]:
    """What the re-solving player with ``spec`` plays at ``state`` holding ``hole`` on
    ``board`` (its own earlier actions taken as the history has them): ``{"source":
    "solved" | "followed" | "blueprint", "limited", "seconds", "counts", "actions":
    [{"action", "real", "prob"}]}``; where nothing triggers a re-solve the blueprint plays and
    ``actions`` is empty (its distribution is the one printed above). The re-solve runs off
    the main thread, so that a signal stops it at once (:mod:`poker._stop`), with a bar of
    its iterations on stderr unless ``quiet``."""
    from poker._compile import COMPILING, cold
    from poker._stop import run_stoppable, stoppable
    from solver.resolve import subgame
    from solver.resolve.player import ResolveCounts, ResolvingWalk

    from ..progress import Progress

    counts = ResolveCounts()
    actor = state.actor
    assert actor is not None
    options = spec.options()
    solving: list[tuple[subgame.SubgameSolver, float]] = []  # the re-solve under way and its start
    bar: Progress | None = None
    compiling = cold(*subgame.KERNELS)
    if compiling and not quiet:
        bar = Progress(options.iterations, "re-solving", unit=" iterations")
        bar.phase(COMPILING)

    counted = False  # the bar has counted some of the solve

    def poll() -> None:
        nonlocal bar, counted
        if not solving or quiet:
            return
        solver, t0 = solving[-1]
        if bar is None:  # drawn once the solve has run a while; its rate measured from the start
            bar = Progress(options.iterations, "re-solving", unit=" iterations", enabled=False)
        show = bar.enabled or time.monotonic() - t0 >= RESOLVE_BAR_AFTER
        # iterations done, to the node: each iteration passes work_per_iteration nodes
        done = min(int(solver.done[0]) / solver.work_per_iteration, options.iterations)
        # the first count is not drawn: the rate is measured from it, and drawn with it a
        # compile before it would count as solving time
        bar.enabled = show and counted
        bar.update(done)
        bar.enabled = show
        counted = counted or done > 0

    with stoppable() as stop:
        walk = ResolvingWalk(policy, actor, 0, 0, options, resolve_counts=counts, stop=stop,
                             started=lambda solver: solving.append((solver, time.monotonic())))

        def work() -> tuple[Any, np.ndarray | None]:
            if compiling:
                subgame.warm_up(policy.game)
            return walk.decide(state, hole, board)

        try:
            _, probs = run_stoppable(work, stop, on_poll=poll)
        finally:
            if bar is not None:
                bar.close()
    entries: list[dict[str, Any]] = []
    source = "blueprint"
    sol = walk.solution
    if (counts.resolves or counts.followed) and sol is not None and probs is not None:
        source = "solved" if counts.resolves else "followed"
        solver, node = sol
        entries = [dict(zip(("action", "real"), _real_entry(state, a)), prob=float(q))
                   for a, q in zip(solver.tree.actions[node], probs)]
    return {"source": source, "limited": bool(counts.limited), "seconds": counts.seconds,
            "counts": counts.to_dict(), "actions": entries}
