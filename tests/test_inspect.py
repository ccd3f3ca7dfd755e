"""``pokerbot inspect``: metadata, the policy at a (translated) history, the preflop grid."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from abstraction.indexer import HandIndexer
from abstraction.translation import CALL, map_bet
from agent.cli import main
from agent.commands import inspect as insp
from agent.commands import strategy_tables
from poker.cards import card_from_str, deck_cards, format_cards, parse_cards
from poker.game import load_game
from poker.state import State
from solver.chance import lossless_bucket
from solver.play.player import bucket_fn, translated
from solver.play.policy import TranslatedPolicy
from solver.strategy_io import StrategyFile, open_strategy
from solver.tree import build_tree, table_offsets

ROOT = Path(__file__).resolve().parents[1]
LEDUC_DECK = [format_cards([c]) for c in deck_cards(3, 2)]


@pytest.fixture(scope="module")
def leduc(tmp_path_factory) -> Path:
    """A small leduc.nolimit.2p strategy trained by the real command (so its recipe is
    the command line)."""
    out = tmp_path_factory.mktemp("inspect") / "leduc.strategy"
    subprocess.run(
        [sys.executable, "-m", "agent", "train", "leduc.nolimit.2p", "--betting", "0.5p,1p,a",
         "--algo", "cfr+", "--iterations", "50", "--out", str(out), "--quiet"],
        cwd=ROOT, check=True, capture_output=True, timeout=120,
    )
    return out


def _json(capsys) -> dict:
    out = capsys.readouterr().out.strip().splitlines()
    return json.loads(out[-1])


def _row(f: StrategyFile, node: int, bucket: int) -> np.ndarray:
    """The stored row, dequantized by hand."""
    n = int(f.tree.n_child[node])
    o = int(f.offset[node]) + bucket * n
    return np.asarray(f.table[o : o + n], dtype=np.float64) / 255.0


def test_help_has_examples(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["inspect", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out and "--grid" in out


def test_metadata(leduc, capsys):
    assert main(["inspect", str(leduc), "--json"]) == 0
    doc = _json(capsys)
    f = open_strategy(leduc)
    assert doc["game"] == "leduc.nolimit.2p" and doc["betting"] == "0.5p,1p,a"
    assert doc["version"] == 3 and doc["file_bytes"] == leduc.stat().st_size
    assert doc["cards"] == {"abstraction": "lossless", "numbering": "canonical", "buckets": [3, 15]}
    assert doc["precision"] == "u8"
    assert doc["table_entries"] == f.table.shape[0] == table_offsets(f.tree, f.bucket_counts)[1]
    assert doc["tree_nodes"] == f.tree.n_nodes
    assert doc["arrays"]["policy"]["bytes"] == f.table.shape[0]
    t = doc["training"]
    assert t["algorithm"] == "cfr+" and t["iterations"] == 50
    assert t["recipe"].startswith("pokerbot train leduc.nolimit.2p --betting 0.5p,1p,a")
    assert doc["evaluation"]["precision"] == "u8" and doc["evaluation"]["mbb_per_game"] > 0
    assert main(["inspect", str(leduc)]) == 0
    text = capsys.readouterr().out
    for word in ("leduc.nolimit.2p", "0.5p,1p,a", "lossless buckets 3/15\n", "u8", "policy |u1",
                 "cfr+, 50 iterations", "recipe      pokerbot train", "mbb/g"):
        assert word in text, word


@pytest.mark.parametrize("hand", LEDUC_DECK)
def test_root_distribution_is_the_stored_row(leduc, hand, capsys):
    assert main(["inspect", str(leduc), "--history", "", "--hand", hand, "--json"]) == 0
    doc = _json(capsys)
    f = open_strategy(leduc)
    bucket = bucket_fn(f)(0, [card_from_str(hand)], ())
    assert doc["bucket"] == bucket == lossless_bucket(f.game, 0, [card_from_str(hand)], [])
    row = _row(f, 0, bucket)
    (path,) = doc["paths"]
    assert path["abstract"] == "" and path["weight"] == 1.0 and not path["fallback"]
    assert [a["probability"] for a in path["actions"]] == pytest.approx(row, abs=1e-12)
    assert [a["probability"] for a in doc["actions"]] == pytest.approx(row, abs=1e-12)
    assert [a["label"] for a in doc["actions"]] == ["check", "raise 0.5p", "raise 1p", "raise all-in"]
    assert [a["real"] for a in doc["actions"]] == ["c", "r2", "r3", "r20"]
    assert doc["history"] == "" and doc["actor"] == 0 and doc["hand"] == hand


def test_root_text(leduc, capsys):
    assert main(["inspect", str(leduc), "--hand", "Ks"]) == 0
    out = capsys.readouterr().out
    assert "raise 0.5p" in out and "r20" in out and "bucket" in out and "mixture" not in out


def test_off_tree_raise_shows_the_mapping_mixture(leduc, capsys):
    """r7 at the root (6 chips over a pot of 2: x = 3 pots) lies between the abstract 1p
    (raise to 3) and the all-in (raise to 20): both branches, weighted by map_bet."""
    assert main(["inspect", str(leduc), "--history", "r7", "--hand", "Ah", "--json"]) == 0
    doc = _json(capsys)
    f = open_strategy(leduc)
    pol = translated(f)
    kids, sizes = pol.raise_children(0)
    expected = {f.tree.action_label(kids[i]) if i != CALL else "c": p for i, p in map_bet(3.0, sizes)}
    assert set(expected) == {"r3", "r20"}
    got = {p["abstract"]: p["weight"] for p in doc["paths"]}
    assert got == pytest.approx(expected, abs=1e-12)
    assert sum(got.values()) == pytest.approx(1.0)
    for p in doc["paths"]:
        (step,) = p["steps"]
        assert step["real"] == "r7" and step["abstract"] == p["abstract"] and not step["exact"]
        assert step["probability"] == pytest.approx(expected[p["abstract"]])
    # the mixture: each path's stored row, weighted, combined by the real action it becomes
    state = State.from_betting(f.game, "r7")
    bucket = bucket_fn(f)(0, [card_from_str("Ah")], ())
    mix: dict[str, float] = {}
    for p in doc["paths"]:
        row = _row(f, p["node"], bucket)
        assert [a["probability"] for a in p["actions"]] == pytest.approx(row, abs=1e-12)
        for child, prob in zip(pol.children(p["node"]), row):
            real = pol.real_action(child, state).to_acpc()
            mix[real] = mix.get(real, 0.0) + p["weight"] * prob
    assert {a["real"]: a["probability"] for a in doc["actions"]} == pytest.approx(mix, abs=1e-12)
    assert sum(a["probability"] for a in doc["actions"]) == pytest.approx(1.0)
    # real raises are sized from the real pot: half a pot over r7 is r14
    assert "r14" in mix and "r20" in mix
    assert main(["inspect", str(leduc), "--history", "r7", "--hand", "Ah"]) == 0
    out = capsys.readouterr().out
    assert "'r3'" in out and "'r20'" in out and "mixture" in out and "r7->r3" in out


def test_on_tree_history_and_board(leduc, capsys):
    assert main(["inspect", str(leduc), "--history", "r3", "--hand", "Ks", "--json"]) == 0
    (path,) = _json(capsys)["paths"]
    assert path["abstract"] == "r3" and path["weight"] == 1.0 and path["steps"][0]["exact"]
    # street 1: the board is checked and bucketed with the hand; '/' may be left out
    assert main(["inspect", str(leduc), "--history", "cc", "--hand", "Ks", "--board", "Qh",
                 "--json"]) == 0
    doc = _json(capsys)
    f = open_strategy(leduc)
    bucket = lossless_bucket(f.game, 1, parse_cards("Ks"), parse_cards("Qh"))
    assert doc["history"] == "cc/" and doc["street"] == 1 and doc["bucket"] == bucket
    (path,) = doc["paths"]
    assert [a["probability"] for a in path["actions"]] == pytest.approx(_row(f, path["node"], bucket))


def _damaged(leduc: Path, tmp_path: Path) -> Path:
    data = bytearray(leduc.read_bytes())
    data[-1] ^= 0xFF
    out = tmp_path / "damaged.strategy"
    out.write_bytes(bytes(data))
    return out


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--history", "r7x", "--hand", "Ks"], "not legal"),
        (["--history", "r2r1", "--hand", "Ks"], "below the minimum"),
        (["--history", "r20c", "--hand", "Ks"], "ends the hand"),
        (["--history", "r7"], "--hand"),
        (["--hand", "Kx"], "suit"),
        (["--hand", "2s"], "not in leduc.nolimit.2p's deck"),
        (["--hand", "KsKh"], "1 hole card"),
        (["--history", "cc", "--hand", "Ks"], "1 board card"),
        (["--history", "cc", "--hand", "Ks", "--board", "KhQh"], "1 board card"),
        (["--history", "cc", "--hand", "Ks", "--board", "Ks"], "both"),
        (["--hand", "Ks", "--board", "Qh"], "0 board card"),
        (["--grid"], "hold'em"),
        (["--png", "x.png"], "--grid"),
        (["DAMAGED"], "checksum"),
        (["MISSING"], "cannot read"),
    ],
)
def test_errors_are_one_line(leduc, tmp_path, extra, message, capsys):
    path = str(leduc)
    if extra == ["DAMAGED"]:
        path, extra = str(_damaged(leduc, tmp_path)), []
    elif extra == ["MISSING"]:
        path, extra = str(tmp_path / "nothing.strategy"), []
    assert main(["inspect", path, *extra]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("pokerbot inspect: error:") and message in err[0]


# ------------------------------------------------------------------ the preflop grid

HOLDEM = "holdem.nolimit.2p.reverse_blinds"


@pytest.fixture(scope="module")
def holdem():
    """The real hold'em tree, a random float table over 169 preflop buckets (one bucket on
    later streets) and the suit-isomorphism indexer as bucket function."""
    tree = build_tree(load_game(HOLDEM), "1p,a;1p,a")
    offset, size = table_offsets(tree, [169, 1, 1, 1])
    table = np.random.default_rng(7).random(size)
    idx = HandIndexer(rounds=[2])

    def bucket(street, hole, board):
        assert street == 0 and tuple(board) == ()
        return idx.index(list(hole))

    return tree, offset, table, bucket


def test_grid_classes_are_the_169():
    classes = insp.grid_classes()
    idx = HandIndexer(rounds=[2])
    assert len(classes) == 169 and len({idx.index(c) for *_, c in classes}) == 169
    names = {(r, c): n for r, c, n, _ in classes}
    assert names[(0, 0)] == "AA" and names[(0, 1)] == "AKs" and names[(1, 0)] == "AKo"
    assert names[(12, 12)] == "22" and names[(11, 12)] == "32s" and names[(12, 11)] == "32o"
    for r, c, n, cards in classes:
        suited = cards[0] % 4 == cards[1] % 4
        assert (r < c) == suited and (r == c) == (cards[0] // 4 == cards[1] // 4)


def test_preflop_grid_at_the_root(holdem):
    tree, offset, table, bucket = holdem
    doc = insp.preflop_grid(tree, offset, table, bucket, "")
    assert doc["history"] == "" and doc["actor"] == 1 and len(doc["grid"]) == 169
    (path,) = doc["paths"]
    assert path["weight"] == 1.0
    n = int(tree.n_child[0])
    for e in doc["grid"]:
        b = bucket(0, parse_cards(e["cards"]), ())
        row = table[offset[0] + b * n : offset[0] + (b + 1) * n]
        assert e["bucket"] == b
        assert [a["probability"] for a in e["actions"]] == pytest.approx(row / row.sum())
        assert e["fold"] + e["call"] + e["raise"] == pytest.approx(1.0)
        assert e["raise"] == pytest.approx(row[2:].sum() / row.sum())


def test_preflop_grid_off_tree(holdem):
    """r450 facing the big blind (350 over a pot of 200 after calling: 1.75 pots) maps to
    the pot raise (r300) and the all-in."""
    tree, offset, table, bucket = holdem
    doc = insp.preflop_grid(tree, offset, table, bucket, "r450")
    weights = {p["abstract"]: p["weight"] for p in doc["paths"]}
    kids, sizes = TranslatedPolicy(tree, offset, table, bucket).raise_children(0)
    assert [tree.action_label(k) for k in kids] == ["r300", "r20000"] and sizes == [1.0, 99.5]
    expected = {tree.action_label(kids[i]): p for i, p in map_bet(1.75, sizes)}
    assert len(expected) == 2
    assert weights == pytest.approx(expected)
    for e in doc["grid"]:
        assert sum(a["probability"] for a in e["actions"]) == pytest.approx(1.0)
    with pytest.raises(insp.UserError, match="preflop"):
        insp.preflop_grid(tree, offset, table, bucket, "r300c")
    leduc_tree = build_tree(load_game("leduc.nolimit.2p"), "1p,a")
    with pytest.raises(insp.UserError, match="hold'em"):
        insp.preflop_grid(leduc_tree, offset, table, bucket, "")


class _HoldemFile(StrategyFile):
    """A strategy 'file' over the real hold'em tree with the indexer as buckets: no
    hold'em strategy could be trained in a test."""

    bucket: object = None


@pytest.fixture
def holdem_file(holdem, monkeypatch, tmp_path):
    tree, offset, table, bucket = holdem
    f = _HoldemFile(
        source=str(tmp_path / "holdem.strategy"), version=3, game=tree.game, betting="1p,a;1p,a",
        cards={"abstraction": "card", "buckets": [169, 1, 1, 1]}, precision="f32",
        training={"algorithm": "test", "iterations": 0}, evaluation={}, table=table,
        header={"tree": {"nodes": tree.n_nodes}, "arrays": {}}, file_bytes=0,
        _tree=tree, _offset=offset,
    )
    f.bucket = bucket
    monkeypatch.setattr(strategy_tables, "open_playable", lambda path, **kw: f)
    monkeypatch.setattr(insp, "bucket_fn", lambda sf: sf.bucket)
    return f


def test_grid_command_text_json_and_png(holdem_file, tmp_path, capsys, monkeypatch):
    assert main(["inspect", "h.strategy", "--grid", "--history", "r450", "--json"]) == 0
    doc = _json(capsys)
    assert len(doc["grid"]) == 169 and doc["game"] == HOLDEM and len(doc["paths"]) == 2
    assert main(["inspect", "h.strategy", "--grid", "--show", "top"]) == 0
    out = capsys.readouterr().out
    assert "\x1b[" not in out  # not a terminal: no colours
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.split() == list(insp.GRID_RANKS))
    assert [line.split()[0] for line in lines[head + 1 : head + 14]] == list(insp.GRID_RANKS)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["inspect", "h.strategy", "--grid"]) == 0
    assert "\x1b[3" in capsys.readouterr().out
    assert main(["inspect", "h.strategy", "--grid", "--no-color"]) == 0
    assert "\x1b[" not in capsys.readouterr().out
    png = tmp_path / "grid.png"
    assert main(["inspect", "h.strategy", "--grid", "--png", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {png}" in capsys.readouterr().out


def test_png_without_matplotlib_is_one_clear_line(holdem_file, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    out = tmp_path / "grid.png"
    assert main(["inspect", "h.strategy", "--grid", "--png", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"pokerbot inspect: error: {insp.PLOT_HINT}"]
    assert not out.exists()


def test_grid_needs_no_hand(holdem_file, capsys):
    assert main(["inspect", "h.strategy", "--grid", "--hand", "AsKd"]) == 2
    assert "--hand" in capsys.readouterr().err
    assert main(["inspect", "h.strategy", "--grid", "--history", "r300c"]) == 2
    assert "preflop" in capsys.readouterr().err


def test_grid_of_a_short_deck(capsys) -> None:
    """20-card hold'em plays T to A: a 5 x 5 grid whose cells are the shipped file's root
    distribution for each class's cards (read here straight from the table), in text and
    JSON, with its order line."""
    path = ROOT / "strategies" / "holdem.nolimit.2p.short20.strategy"
    assert main(["inspect", str(path), "--grid", "--json"]) == 0
    doc = _json(capsys)
    grid = doc["grid"]
    assert [e["hand"] for e in grid[:6]] == ["AA", "AKs", "AQs", "AJs", "ATs", "AKo"]
    assert len(grid) == 25 and grid[-1]["hand"] == "TT"
    sf = open_strategy(path)
    policy, bucket, tree = translated(sf), bucket_fn(sf), sf.tree
    deck = set(deck_cards(5, 4))
    children = range(int(tree.child[0]), int(tree.child[0]) + int(tree.n_child[0]))
    for e in grid:
        cards = parse_cards(e["cards"])
        assert set(cards) <= deck
        p = policy.probabilities(0, bucket(0, cards, ()))
        assert e["raise"] == pytest.approx(sum(q for c, q in zip(children, p) if tree.action[c] >= 2))
        assert e["fold"] == pytest.approx(sum(q for c, q in zip(children, p) if tree.action[c] == 0))
    equity = {e["hand"]: e["equity"] for e in grid}
    assert max(equity, key=equity.get) == "AA" and equity["AKs"] > equity["KQs"] > equity["JTs"]
    assert -1.0 <= doc["order"]["raise_vs_equity"] <= 1.0
    assert main(["inspect", str(path), "--grid", "--no-color"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(i for i, ln in enumerate(lines) if ln.split() == ["A", "K", "Q", "J", "T"])
    assert [ln.split()[0] for ln in lines[header + 1 : header + 6]] == ["A", "K", "Q", "J", "T"]
    assert all(len(ln.split()) == 6 for ln in lines[header + 1 : header + 6])
    assert any(ln.startswith("order: Spearman") for ln in lines)


@pytest.mark.parametrize("path", sorted((ROOT / "strategies").glob("*.strategy")), ids=lambda p: p.name)
def test_every_shipped_file_inspects(path: Path, capsys) -> None:
    """Text and --json, with whatever evaluation the file stores (the 20-card file stores
    a null abstract exploitability: its evaluation was skipped)."""
    assert main(["inspect", str(path)]) == 0
    text = capsys.readouterr().out
    assert "evaluation" in text and "Traceback" not in text
    assert main(["inspect", str(path), "--json"]) == 0
    meta = _json(capsys)
    ev = meta.get("evaluation") or {}
    if "mbb_per_game" in ev and ev["mbb_per_game"] is None:
        assert "not measured in the abstract game" in text


def test_evaluation_lines_with_skipped_figures() -> None:
    """A stored null is "not measured", a number keeps its precision."""
    assert insp._figure(None, None) == "not measured"
    assert insp._figure(12.3456, 0.0246912) == "12.346 mbb/g (0.024691 chips/game)"
    assert insp._figure(1.0, None) == "1.000 mbb/g"
