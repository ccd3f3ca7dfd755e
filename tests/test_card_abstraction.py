"""Card abstraction (abstraction.plan, abstraction.build, abstraction.card_abstraction)
and ``pokerbot abstract``.

The bucket computed from the cards alone equals the stored table's on 100,000 random
hands per street (short decks, both families); builds resume at the stage they were in;
bad input fails with one clear line; ``--dry-run --json`` reports the indexer's counts.
"""

from __future__ import annotations

import json
from itertools import combinations, permutations
from pathlib import Path

import numpy as np
import pytest

from abstraction.build import build_abstraction
from abstraction.card_abstraction import CardAbstraction
from abstraction.plan import AbstractionParams, plan_build
from abstraction.indexer import HandIndexer
from agent.cli import main
from poker.cards import parse_cards
from poker.game import load_game

SHORT24 = "holdem.nolimit.2p.short24"
SHORT20 = "holdem.nolimit.2p.short20"
LEDUC = "leduc.limit.2p"
FULL = "holdem.nolimit.2p.reverse_blinds"
N_HANDS = 100_000


def _random_hands(ab: CardAbstraction, street: int, n: int, seed: int) -> np.ndarray:
    sp = ab.space
    k = sp.hole + sp.board_through[street]
    order = np.argsort(np.random.default_rng(seed).random((n, sp.deck_size)), axis=1)[:, :k]
    return sp.deck[order]


@pytest.fixture(scope="module")
def short24(tmp_path_factory: pytest.TempPathFactory) -> CardAbstraction:
    out = tmp_path_factory.mktemp("short24")
    return build_abstraction(SHORT24, AbstractionParams((36, 40, 40, 40), seed=3), out).abstraction


@pytest.fixture(scope="module")
def short24_history(tmp_path_factory: pytest.TempPathFactory) -> CardAbstraction:
    out = tmp_path_factory.mktemp("short24h")
    return build_abstraction(SHORT24, AbstractionParams((20, 40, 40, 40), history=True), out).abstraction


@pytest.mark.parametrize("street", [0, 1, 2, 3])
def test_function_equals_table_on_random_hands(short24: CardAbstraction, street: int) -> None:
    ab = short24
    hands = _random_hands(ab, street, N_HANDS, seed=street)
    table = ab.lookup_batch(hands)
    # every hand's features computed from its own cards; the flop (171 run-outs x 136
    # opponents per hand) once per suit-isomorphism class in the batch, plus a sample
    # of hands each on its own
    computed = ab.bucket_batch(hands, dedupe=street <= 1)
    np.testing.assert_array_equal(computed, table)
    if street <= 1:
        np.testing.assert_array_equal(ab.bucket_batch(hands[:3000], dedupe=False), table[:3000])
    assert table.min() >= 0 and table.max() < ab.num_buckets(street)
    assert np.unique(ab.table(street)).size == ab.num_buckets(street)


@pytest.mark.parametrize("street", [0, 1, 2, 3])
def test_history_function_equals_tables(short24_history: CardAbstraction, street: int) -> None:
    ab = short24_history
    hands = _random_hands(ab, street, 30_000, seed=10 + street)
    np.testing.assert_array_equal(ab.bucket_batch(hands, dedupe=street <= 1), ab.lookup_batch(hands))
    if street > 0:
        pm = ab.pair_map(street)
        assert pm is not None and pm.shape == (ab.num_buckets(street - 1), 40)
        assert np.unique(pm).size == ab.num_buckets(street)


def test_history_pair_weights_count_every_real_deal(tmp_path: Path) -> None:
    """The pair weights (from canonical hands x board orderings) equal a count over every
    real deal of short20, its previous-street bucket looked up on the ordered board."""
    ab = build_abstraction(SHORT20, AbstractionParams((25, 30, 30, 30), history=True), tmp_path).abstraction
    sp = ab.space
    deck = [int(c) for c in sp.deck]
    deals = np.array([(a, b, *board) for a, b in combinations(deck, 2)
                      for board in permutations([c for c in deck if c not in (a, b)], 3)], np.uint8)
    for s in (1, 2, 3):
        hands = np.ascontiguousarray(deals[:, : 2 + s])
        # distinct hands only (the board cards beyond street s repeat each prefix)
        hands = np.unique(hands, axis=0)
        prev = ab.lookup_batch(np.ascontiguousarray(hands[:, : 1 + s]), s - 1)
        own = ab.table(s)[ab.indexer(s).index_batch(hands)].astype(np.int64)
        k_own = ab.table(s).max() + 1
        brute = np.bincount(prev * k_own + own, minlength=ab.num_buckets(s - 1) * k_own)
        got = np.load(tmp_path / "cache" / f"street{s}.pairweights.npy")
        np.testing.assert_array_equal(got.ravel(), brute)


def test_history_depends_on_the_order_of_the_board(short24_history: CardAbstraction) -> None:
    ab = short24_history
    hands = _random_hands(ab, 3, 20_000, seed=99)
    swapped = hands.copy()
    swapped[:, [2, 6]] = swapped[:, [6, 2]]  # a flop card becomes the river card
    assert (ab.lookup_batch(hands) != ab.lookup_batch(swapped)).any()


@pytest.mark.parametrize("name,buckets,history", [(SHORT20, (10, 30, 30, 30), False),
                                                   (SHORT20, (25, 30, 30, 30), True),
                                                   (LEDUC, (3, 3), False), (LEDUC, (2, 3), True)])
def test_other_games(tmp_path: Path, name: str, buckets: tuple[int, ...], history: bool) -> None:
    ab = build_abstraction(name, AbstractionParams(buckets, history=history), tmp_path).abstraction
    for s in range(ab.num_streets):
        hands = _random_hands(ab, s, 20_000, seed=s)
        np.testing.assert_array_equal(ab.bucket_batch(hands), ab.lookup_batch(hands))
        assert np.unique(ab.lookup_batch(hands)).size == ab.num_buckets(s)


def test_single_hand_api_and_reload(short24: CardAbstraction) -> None:
    ab = CardAbstraction.load(short24.directory, verify=True)
    hole, board = parse_cards("AsKs"), parse_cards("QsJsTh")
    assert ab.bucket(hole, board) == ab.lookup(hole, board) == short24.lookup(hole, board)
    assert ab.bucket(hole) == ab.indexer(0).index(hole)  # lossless preflop: the class index
    assert ab.bucket_fn(1, tuple(hole), tuple(board)) == ab.lookup(hole, board)  # solver.chance plug-in
    assert ab.bucket_counts == [36, 40, 40, 40]
    with pytest.raises(ValueError, match="repeats a card"):
        ab.bucket(hole, parse_cards("AsJsTh"))
    with pytest.raises(ValueError, match="not in the"):
        ab.bucket(parse_cards("2c3c"), board)  # deuces are not in the 24-card deck
    with pytest.raises(ValueError, match="board cards"):
        ab.bucket(hole, parse_cards("QsJs"))
    meta = json.loads((ab.directory / "meta.json").read_text())
    assert meta["content_hash"] == ab.content_hash == ab.compute_hash()
    assert meta["params"]["seed"] == 3 and [s["buckets"] for s in meta["streets"]] == [36, 40, 40, 40]
    assert np.load(ab.directory / "street3.table.npy", mmap_mode="r").shape == (ab.indexer(3).count(),)


class _Interrupt:
    """A progress callback that raises KeyboardInterrupt when a stage starts."""

    def __init__(self, stage: str) -> None:
        self.stage = stage
        self.seen: list[str] = []

    def __call__(self, stage: str, done: float, total: float) -> None:
        if stage not in self.seen:
            self.seen.append(stage)
        if stage == self.stage:
            raise KeyboardInterrupt


@pytest.mark.parametrize("stage", ["flop features", "turn buckets", "flop history"])
def test_interrupted_build_resumes_at_its_stage(tmp_path: Path, stage: str) -> None:
    params = AbstractionParams((25, 30, 30, 30), history=True, seed=1)
    clean = build_abstraction(SHORT20, params, tmp_path / "clean").abstraction
    out = tmp_path / "run"
    first = _Interrupt(stage)
    with pytest.raises(KeyboardInterrupt):
        build_abstraction(SHORT20, params, out, progress=first)
    assert not (out / "meta.json").exists()
    with pytest.raises(ValueError, match="did not finish"):
        CardAbstraction.load(out)
    second = _Interrupt("no such stage")
    report = build_abstraction(SHORT20, params, out, progress=second)
    done_before = first.seen[:-1]
    assert second.seen[0] == stage  # restarted at the stage it was in
    assert not set(done_before) & set(second.seen)
    assert [s["stage"] for s in report.stages if s["reused"]] == done_before
    assert report.abstraction.content_hash == clean.content_hash
    assert not list(out.glob("**/*.tmp"))


def test_rebuild_with_other_buckets_reuses_features(tmp_path: Path) -> None:
    build_abstraction(SHORT20, AbstractionParams((25, 30, 30, 30)), tmp_path)
    report = build_abstraction(SHORT20, AbstractionParams((25, 20, 30, 30)), tmp_path)
    reused = {s["stage"] for s in report.stages if s["reused"]}
    assert {"river E[HS]", "turn features", "flop features", "river buckets", "turn buckets"} <= reused
    assert "flop buckets" not in reused
    assert report.abstraction.num_buckets(1) == 20


def test_bad_input(tmp_path: Path) -> None:
    g = load_game(SHORT24)
    with pytest.raises(ValueError, match="has 4 streets"):
        plan_build(g, AbstractionParams((36, 40, 40)))
    with pytest.raises(ValueError, match="only 21,150 canonical hands"):
        plan_build(g, AbstractionParams((36, 30_000, 40, 40)))
    with pytest.raises(ValueError, match="at least 1"):
        plan_build(g, AbstractionParams((36, 0, 40, 40)))
    with pytest.raises(ValueError, match="2 players"):
        plan_build(load_game("holdem.nolimit.3p"), AbstractionParams((10, 10, 10, 10)))
    with pytest.raises(ValueError, match="exceeds"):
        build_abstraction(g, AbstractionParams((36, 40, 40, 40)), tmp_path / "a", memory_limit_gib=0.01)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ValueError, match="not writable"):
        build_abstraction(g, AbstractionParams((36, 40, 40, 40)), blocker / "sub")
    with pytest.raises(ValueError, match="only 3 distinct E\\[HS\\] values; use at most 3"):
        build_abstraction(LEDUC, AbstractionParams((3, 5)), tmp_path / "leduc")
    # the river's E[HS] against 990 opponent hands takes at most 1,981 values: refused
    # before any work (the full deck has 1,950 of them; the build says so after E[HS])
    full = load_game(FULL)
    with pytest.raises(ValueError, match=r"river: 5,000 buckets but the river's E\[HS\] \(wins and half ties "
                                         r"against 990 opponent hands\) takes at most 1,981 distinct values"):
        plan_build(full, AbstractionParams((169, 5000, 5000, 5000)))
    assert plan_build(full, AbstractionParams((169, 5000, 5000, 1981))).streets[3].own_buckets == 1981


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["abstract", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_dry_run_json_reports_indexer_counts(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, FULL, "--buckets", "169,200,200,200", "--dry-run", "--json")
    assert code == 0
    doc = json.loads(out.strip().splitlines()[-1])
    streets = doc["streets"]
    assert [s["canonical_hands"] for s in streets] == [169, 1_286_792, 13_960_050, 123_156_254]
    assert [s["buckets"] for s in streets] == [169, 200, 200, 200]
    assert [s["kind"] for s in streets] == ["lossless", "emd", "emd", "ehs"]
    assert all(s["seconds"] >= 0 and s["peak_gib"] > 0 for s in streets)
    code, out, _ = _cli(capsys, FULL, "--buckets", "169,1000,1000,1000", "--history", "--dry-run", "--json")
    hist = json.loads(out.strip().splitlines()[-1])["streets"]
    counts = [HandIndexer(rounds=r).count() for r in ([2], [2, 3], [2, 3, 1], [2, 3, 1, 1])]
    assert [s["canonical_hands"] for s in hist] == counts == [169, 1_286_792, 55_190_538, 2_428_287_420]
    code, out, _ = _cli(capsys, SHORT24, "--buckets", "36,40,40,40", "--dry-run", "--json")
    short = json.loads(out.strip().splitlines()[-1])["streets"]
    sp = [HandIndexer(rounds=r, num_ranks=6).count() for r in ([2], [2, 3], [2, 4], [2, 5])]
    assert [s["canonical_hands"] for s in short] == sp


def test_cli_build_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(capsys, LEDUC, "--buckets", "3,3", "--out", str(tmp_path / "l"), "--json", "--quiet")
    assert code == 0
    doc = json.loads(out.strip().splitlines()[-1])
    assert doc["content_hash"] == CardAbstraction.load(tmp_path / "l").content_hash
    assert doc["peak_gib"] > 0 and [s["buckets"] for s in doc["streets"]] == [3, 3]
    for argv, message in [
        ((SHORT24, "--buckets", "36,40,40", "--dry-run"), "has 4 streets"),
        ((SHORT24, "--buckets", "a,b", "--dry-run"), "comma-separated"),
        ((SHORT24, "--buckets", "36,40,40,40"), "--out"),
        ((SHORT24, "--buckets", "36,40,40,40", "--out", str(tmp_path / "m"), "--memory-limit", "0.01"), "exceeds"),
        (("no.such.game", "--buckets", "1", "--dry-run"), "unknown game"),
    ]:
        code, out, err = _cli(capsys, *argv)
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1
