"""Training and evaluating over a card abstraction (``--abstraction DIR``).

An identity bucket map reproduces lossless training bit for bit (every algorithm) and
suit-isomorphic classes reproduce it to rounding; the bucket every kernel uses is the
abstraction's bucket computed from the cards; the abstract-game best response equals a
plain-Python backward induction over every deal and never beats the real-game one;
strategy files and checkpoints record the abstraction and refuse another one, with one
line and exit status 2 on the command line.
"""

from __future__ import annotations

import json
from functools import cache, lru_cache
from pathlib import Path

import msgpack
import numpy as np
import pytest

from abstraction.build import build_abstraction
from abstraction.card_abstraction import CardAbstraction
from abstraction.plan import AbstractionParams
from agent.cli import main
from poker.game import load_game, write_game_file
from solver.evaluation.best_response import (
    abstract_and_real_exploitability,
    abstract_best_response_value,
    abstract_exploitability,
    best_response_value,
    exploitability,
)
from solver.training.algorithms import make_training_solver
from solver.training.cfr import CFRPlusSolver, CFRSolver
from solver.chance import build_chance
from solver.training.checkpoint import CheckpointError, load_checkpoint, restore_checkpoint, save_checkpoint
from solver.training.mccfr import ExternalSamplingSolver
from solver.problem import make_problem
from solver.training.sampled import SamplingOptions
from solver.strategy import Strategy
from solver.strategy_io import StrategyFileError, dumps, load_strategy, loads, loads_file

from ._solver_twins import TWO_CARD_LEDUC, HNode, build_history_tree, random_policy

LEDUC = "leduc.limit.2p"
V1_FILE = Path(__file__).parent / "data" / "strategies" / "kuhn.cfr+.v1.strategy"


# ------------------------------------------------------------------ fixtures and helpers


@pytest.fixture(scope="module")
def abstractions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CardAbstraction]:
    """Small abstractions (each builds in well under a second)."""
    specs = {
        "leduc33": (LEDUC, AbstractionParams((3, 3))),
        "leduc23": (LEDUC, AbstractionParams((2, 3), seed=1)),
        "leduc23h": (LEDUC, AbstractionParams((2, 3), history=True)),
        "leduc_iso": (LEDUC, AbstractionParams((3, 15))),  # every street lossless: suit classes
        "two33": (TWO_CARD_LEDUC, AbstractionParams((3, 3))),
        "kuhn2": ("kuhn.limit.2p", AbstractionParams((2,))),
    }
    out = {}
    for name, (game, params) in specs.items():
        d = tmp_path_factory.mktemp(name)
        out[name] = build_abstraction(game, params, d).abstraction
    return out


@pytest.fixture(scope="module")
def problems(abstractions):
    """One problem per abstraction (and the lossless Leduc problem)."""
    out = {name: make_problem(ab.game, abstraction=ab) for name, ab in abstractions.items()}
    out["lossless"] = make_problem(LEDUC)
    return out


def _cards(problem, bs: int, h: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """ACPC hole cards of hand ``h`` and the board of board state ``bs`` (dealing order)."""
    ch = problem.chance
    hole = tuple(ch.deck[x] for x in ch.hands[h])
    board = tuple(ch.deck[x] for x in ch.board_cards[bs] if x >= 0)
    return hole, board


def _identity_map(lossless):
    """A bucket function giving every (board, hand) the lossless layout's own bucket."""
    ch = lossless.chance
    table = {}
    for bs in range(ch.n_board_states):
        for h in range(ch.n_hands):
            b = int(ch.kernel.bucket[bs, h])
            if b >= 0:
                hole, board = _cards(lossless, bs, h)
                table[int(ch.board_street[bs]), hole, board] = b
    return lambda street, hole, board: table[street, tuple(hole), tuple(board)]


def _expand(abstract, lossless, policy: np.ndarray) -> np.ndarray:
    """The abstract ``policy`` written out per (board, hand) in the lossless layout."""
    out = np.zeros(lossless.size)
    ch = lossless.chance
    tree = lossless.tree
    for n in tree.decision_nodes():
        k = int(tree.n_child[n])
        for bs in np.flatnonzero(ch.board_street == tree.street[n]):
            for h in np.flatnonzero(ch.kernel.bucket[bs] >= 0):
                src = abstract.entry(int(n), int(abstract.kchance.bucket[bs, h]), 0)
                dst = lossless.entry(int(n), int(ch.kernel.bucket[bs, h]), 0)
                out[dst : dst + k] = policy[src : src + k]
    return out


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


# ------------------------------------------------------------------ lossless and identity maps


@pytest.mark.parametrize("algo", ["cfr", "cfr+", "es", "os", "tcfr"])
def test_identity_map_trains_exactly_like_no_abstraction(problems, algo):
    lossless = problems["lossless"]
    counts = lossless.chance.n_buckets
    ident = make_problem(LEDUC, bucket_fn=_identity_map(lossless), bucket_counts=counts)
    assert not ident.chance.lossless
    np.testing.assert_array_equal(ident.kchance.bucket, lossless.kchance.bucket)
    sampling = None if algo in ("cfr", "cfr+") else SamplingOptions(seed=5)
    a = make_training_solver(lossless, algo, sampling)
    b = make_training_solver(ident, algo, sampling)
    for n in (3, 40 if algo in ("cfr", "cfr+") else 3000):
        a.iterate(n)
        b.iterate(n)
        np.testing.assert_array_equal(a.regrets, b.regrets)
        np.testing.assert_array_equal(a.avg_sums, b.avg_sums)
    ra = exploitability(None, a.average_strategy())
    abstract, real = abstract_and_real_exploitability(b.average_strategy())
    assert abstract == real == ra
    assert abstract_best_response_value(b.average_strategy(), 1) == ra.br[1]


@pytest.mark.parametrize("cls", [CFRSolver, CFRPlusSolver])
def test_suit_isomorphic_abstraction_follows_the_lossless_trajectory(problems, cls):
    """Buckets = canonical hand classes (``pokerbot abstract`` with every street at its
    canonical count): the same strategies, iteration by iteration, up to rounding (the
    merged regrets are sums of equal regrets), and the same exploitability."""
    iso, lossless = problems["leduc_iso"], problems["lossless"]
    assert iso.chance.n_buckets == (3, 15)
    a, b = cls(lossless), cls(iso)
    for _ in range(4):
        a.iterate(8)
        b.iterate(8)
        np.testing.assert_allclose(
            _expand(iso, lossless, b.current_policy()), a.current_policy(), atol=1e-10
        )
        np.testing.assert_allclose(
            _expand(iso, lossless, b.average_policy()), a.average_policy(), atol=1e-10
        )
    ra = exploitability(None, a.average_strategy())
    abstract, real = abstract_and_real_exploitability(b.average_strategy())
    for r in (abstract, real):
        assert r.br == pytest.approx(ra.br, abs=1e-10)
        assert r.value == pytest.approx(ra.value, abs=1e-12)


def test_cli_lossless_abstraction_matches_no_abstraction(abstractions, tmp_path, capsys):
    iso = str(abstractions["leduc_iso"].directory)
    base = ["train", LEDUC, "--algo", "cfr+", "--iterations", "30", "--quiet", "--json"]
    assert main([*base, "--out", str(tmp_path / "a.strategy")]) == 0
    plain = _json(capsys)
    assert main([*base, "--out", str(tmp_path / "b.strategy"), "--abstraction", iso]) == 0
    doc = _json(capsys)
    assert plain["abstraction"] is None and doc["abstraction"]["buckets"] == [3, 15]
    for key in ("exploitability", "real_exploitability"):
        assert doc[key] == pytest.approx(plain["exploitability"], abs=1e-10)
    assert plain["real_exploitability"] == plain["exploitability"]


# ------------------------------------------------------------------ the buckets the kernels use


@pytest.mark.parametrize("name", ["leduc33", "leduc23h", "two33"])
def test_vector_buckets_are_the_abstraction_buckets(abstractions, problems, name):
    """Every (board, hand) of the chance layer gets the bucket the abstraction computes
    from the cards alone (features and centroids, not its tables)."""
    ab, problem = abstractions[name], problems[name]
    bucket = problem.kchance.bucket
    pairs = np.argwhere(bucket >= 0)
    assert problem.chance.n_buckets == tuple(ab.bucket_counts)
    for bs, h in pairs[np.random.default_rng(0).permutation(len(pairs))[:150]]:
        hole, board = _cards(problem, int(bs), int(h))
        street = int(problem.chance.board_street[bs])
        assert bucket[bs, h] == ab.bucket(hole, board, street), (hole, board)


@pytest.mark.parametrize("name", ["leduc23h", "two33"])
def test_sampled_deals_use_the_abstraction_buckets(abstractions, problems, name):
    """The buckets external sampling used on its last deal (read from the kernel's scratch
    space) are the abstraction's for that deal's cards, on every street."""
    ab, problem = abstractions[name], problems[name]
    s = ExternalSamplingSolver(problem, SamplingOptions(seed=2))
    deals = s._deal.deals
    assert deals.shape[0] > 0
    for _ in range(60):
        s.iterate(1)
        state = s.random_state()
        row = state["order"][0, (int(state["cursor"][0]) - 1) % deals.shape[0]]
        final, h0, h1 = (int(x) for x in deals[row])
        path = s._scratch.path[0]
        assert path[-1] == final
        for street in range(problem.tree.n_streets):
            for p, h in ((0, h0), (1, h1)):
                hole, board = _cards(problem, int(path[street]), h)
                assert s._scratch.bk[0, p, street] == ab.bucket(hole, board, street)


def test_bucket_batch_is_checked():
    game = load_game(LEDUC)
    with pytest.raises(ValueError, match="outside 0..2"):
        build_chance(game, bucket_counts=[3, 3], bucket_batch=lambda s, c: np.full(len(c), 3))
    with pytest.raises(ValueError, match="buckets for"):
        build_chance(game, bucket_counts=[3, 3], bucket_batch=lambda s, c: np.zeros(1))
    with pytest.raises(ValueError, match="not both"):
        build_chance(
            game, bucket_counts=[3, 3], bucket_fn=lambda *a: 0, bucket_batch=lambda s, c: c
        )


# ------------------------------------------------------------------ best responses


def _twin_best_response(game, strategy, responder: int, bucket_of) -> float:
    """Backward induction over the responder's information sets (betting, bucket) on the
    full history tree (every deal, plain Python): in order of how many of its decisions
    can still follow, each information set takes the action with the highest expected
    value summed over its histories, the deeper ones already fixed. ``bucket_of(street,
    hole, board)`` gives the responder's information; the opponent plays ``strategy``
    through the abstraction's buckets computed from its cards."""
    problem = strategy.problem
    tree = problem.tree
    node_of = {tree.betting_string(int(n)): int(n) for n in tree.decision_nodes()}
    ab = problem.abstraction
    root = build_history_tree(game)

    def street_of(key) -> int:
        return int(tree.street[node_of[key[3]]])

    @cache
    def opponent_policy(key) -> np.ndarray:
        _, hole, board, betting = key
        n = node_of[betting]
        return strategy.probabilities(n, ab.bucket(hole, board, int(tree.street[n])))

    bucket_of = lru_cache(maxsize=None)(bucket_of)

    below: dict[str, int] = {}  # most responder decisions strictly below, per betting string

    def depth(node: HNode) -> int:
        deepest = max((depth(c) for _, c in node.children), default=0)
        if node.kind == "decision" and node.player == responder:
            below[node.key[3]] = max(below.get(node.key[3], 0), deepest)
            return deepest + 1
        return deepest

    depth(root)
    members: dict[tuple, list[tuple[HNode, float]]] = {}

    def collect(node: HNode, reach: float) -> None:
        if node.kind == "chance":
            for prob, c in node.children:
                collect(c, reach * prob)
        elif node.kind == "decision" and node.player != responder:
            for pa, (_, c) in zip(opponent_policy(node.key), node.children):
                collect(c, reach * pa)
        elif node.kind == "decision":
            _, hole, board, betting = node.key
            info = (betting, bucket_of(street_of(node.key), hole, board))
            members.setdefault(info, []).append((node, reach))
            for _, c in node.children:
                collect(c, reach)

    collect(root, 1.0)
    choice: dict[tuple, int] = {}

    def value(node: HNode) -> float:
        if node.kind == "terminal":
            return node.values[responder]
        if node.kind == "chance":
            return sum(prob * value(c) for prob, c in node.children)
        if node.player != responder:
            pol = opponent_policy(node.key)
            return sum(pa * value(c) for pa, (_, c) in zip(pol, node.children))
        _, hole, board, betting = node.key
        info = (betting, bucket_of(street_of(node.key), hole, board))
        return value(node.children[choice[info]][1])

    for level in range(max(below.values()) + 1):
        for info, hist in members.items():
            if below[info[0]] != level:
                continue
            n_act = len(hist[0][0].children)
            q = [sum(r * value(h.children[a][1]) for h, r in hist) for a in range(n_act)]
            choice[info] = int(np.argmax(q))
    return value(root)


@pytest.mark.parametrize("name", ["leduc23", "leduc33", "leduc23h", "two33"])
def test_abstract_best_response_matches_brute_force(abstractions, problems, name):
    ab, problem = abstractions[name], problems[name]
    game = ab.game
    strategy = Strategy(problem, random_policy(problem, np.random.default_rng(4)))
    r = abstract_exploitability(None, strategy)
    for player in (0, 1):
        twin = _twin_best_response(
            game, strategy, player, lambda s, hole, board: ab.bucket(hole, board, s)
        )
        assert r.br[player] == pytest.approx(twin, abs=1e-12)
    # The same twin with the exact cards as information is the real-game best response.
    exact = _twin_best_response(game, strategy, 0, lambda s, hole, board: (hole, board))
    assert best_response_value(strategy, 0) == pytest.approx(exact, abs=1e-12)


@pytest.fixture(scope="module")
def strategies(problems):
    """Strategies over several abstractions: random ones and trained ones."""
    out = []
    for name in ("leduc33", "leduc23h", "two33"):
        p = problems[name]
        out.append((name, "random", Strategy(p, random_policy(p, np.random.default_rng(8)))))
        solver = CFRPlusSolver(p)
        solver.iterate(100)
        out.append((name, "cfr+", solver.average_strategy()))
        es = make_training_solver(p, "es", SamplingOptions(seed=3))
        es.iterate(5000)
        out.append((name, "es", es.average_strategy()))
    return out


def test_real_best_response_beats_the_abstract_one(strategies):
    """A responder that sees its exact cards can copy any bucket-limited responder, so its
    value is at least as high, for each player; on these abstractions it is higher."""
    gaps = []
    for name, how, strategy in strategies:
        abstract, real = abstract_and_real_exploitability(strategy)
        for p in (0, 1):
            assert real.br[p] >= abstract.br[p] - 1e-12, (name, how, p)
            gaps.append(real.br[p] - abstract.br[p])
        assert real.value == abstract.value
        assert real.exploitability >= abstract.exploitability - 1e-12
    assert min(gaps) > 1e-6


# ------------------------------------------------------------------ files and checkpoints


def test_strategy_file_records_the_abstraction(abstractions, problems, strategies):
    ab = abstractions["leduc33"]
    s = next(st for name, how, st in strategies if (name, how) == ("leduc33", "cfr+"))
    data = dumps(s, "f32")
    cards = loads_file(data).cards
    assert cards["abstraction"] == "card" and cards["content_hash"] == ab.content_hash
    assert cards["buckets"] == [3, 3] and cards["params"]["buckets"] == [3, 3]
    assert cards["model_hash"] == ab.model_hash
    back = loads(data, abstraction=ab)
    np.testing.assert_allclose(back.policy, s.policy, atol=1e-7)
    assert back.problem.abstraction is ab
    # the file carries the abstraction's model: it loads without the directory, and
    # buckets the same (the same exploitability)
    alone = loads(data)
    assert alone.problem.abstraction.model_hash == ab.model_hash
    assert abstract_exploitability(None, alone).exploitability == pytest.approx(
        abstract_exploitability(None, back).exploitability, abs=1e-12
    )
    with pytest.raises(StrategyFileError, match="but .* is sha256:"):
        loads(data, abstraction=abstractions["leduc23"])
    lossless = dumps(CFRPlusSolver(problems["lossless"]).average_strategy())
    with pytest.raises(StrategyFileError, match="without a card abstraction"):
        loads(lossless, abstraction=ab)
    bare = make_problem(LEDUC, bucket_fn=lambda s, h, b: 0, bucket_counts=[1, 1])
    with pytest.raises(ValueError, match="bare bucket function"):
        dumps(Strategy(bare, np.full(bare.size, 0.5)))


def test_version_1_files_still_load():
    """A lossless file written before card abstractions (format version 1)."""
    data = V1_FILE.read_bytes()
    assert msgpack.unpackb(data)["version"] == 1
    s = load_strategy(V1_FILE)
    assert (s.algorithm, s.iterations, s.problem.chance.lossless) == ("cfr+", 10, True)
    assert exploitability(None, s).exploitability > 0
    doc = msgpack.unpackb(data)
    doc["cards"] = {"abstraction": "card", "buckets": [3], "content_hash": "sha256:00"}
    with pytest.raises(StrategyFileError, match="version 1 files hold lossless"):
        loads(msgpack.packb(doc, use_bin_type=True))


def test_checkpoint_records_the_abstraction(abstractions, problems, tmp_path):
    ab = abstractions["leduc23h"]
    path = tmp_path / "run.ckpt"
    a = make_training_solver(problems["leduc23h"], "tcfr", SamplingOptions(seed=4))
    a.iterate(300)
    save_checkpoint(path, a)
    a.iterate(200)
    ckpt = load_checkpoint(path)
    assert ckpt.cards["content_hash"] == ab.content_hash
    with pytest.raises(CheckpointError, match="give that abstraction"):
        ckpt.problem()
    b = make_training_solver(ckpt.problem(ab), "tcfr", SamplingOptions(seed=4))
    restore_checkpoint(b, ckpt)
    b.iterate(200)
    np.testing.assert_array_equal(a.regrets, b.regrets)
    np.testing.assert_array_equal(a.avg_sums, b.avg_sums)
    with pytest.raises(CheckpointError, match="this run uses lossless buckets"):
        restore_checkpoint(make_training_solver(problems["lossless"], "tcfr", SamplingOptions(seed=4)), ckpt)
    with pytest.raises(CheckpointError, match="this run uses card abstraction"):
        restore_checkpoint(make_training_solver(problems["leduc33"], "tcfr", SamplingOptions(seed=4)), ckpt)


# ------------------------------------------------------------------ command line


@pytest.mark.parametrize("algo", ["cfr+", "cfr", "es", "os", "tcfr"])
def test_cli_train_and_eval_with_abstraction(abstractions, tmp_path, capsys, algo):
    ab = abstractions["leduc33"]
    out = tmp_path / f"{algo}.strategy"
    n = "50" if algo in ("cfr", "cfr+") else "20000"
    argv = ["train", LEDUC, "--algo", algo, "--iterations", n, "--seed", "2"]
    argv += ["--abstraction", str(ab.directory), "--out", str(out), "--quiet", "--json"]
    assert main(argv) == 0
    doc = _json(capsys)
    assert doc["table_entries"] == 252 and doc["abstraction"]["content_hash"] == ab.content_hash
    assert doc["real_exploitability"] >= doc["exploitability"] - 1e-12
    ev_argv = ["eval", "exploitability", LEDUC, str(out), "--abstraction", str(ab.directory)]
    assert main([*ev_argv, "--json"]) == 0
    ev = _json(capsys)
    # the file stores one byte per probability: eval measures what it stores
    assert ev["exploitability"] == pytest.approx(doc["stored_exploitability"], abs=1e-12)
    assert ev["real_exploitability"] == pytest.approx(doc["stored_real_exploitability"], abs=1e-12)
    assert abs(doc["stored_exploitability"] - doc["exploitability"]) < 0.05
    assert ev["mbb_per_game"] == pytest.approx(1000 * ev["exploitability"])
    assert ev["real_mbb_per_game"] == pytest.approx(1000 * ev["real_exploitability"])
    assert ev["real_exploitability"] == pytest.approx(sum(ev["real_br"]) / 2)
    assert all(r >= a - 1e-12 for r, a in zip(ev["real_br"], ev["br"]))
    assert set(ev) >= {"exploitability", "mbb_per_game", "br", "value"}
    assert main(ev_argv) == 0
    text = capsys.readouterr().out
    assert "abstract game" in text and "real game" in text


def test_cli_nolimit_game_with_a_limit_games_abstraction(abstractions, tmp_path, capsys):
    """The abstraction depends on the cards only: Leduc's serves no-limit Leduc."""
    ab = str(abstractions["leduc33"].directory)
    out = str(tmp_path / "nl.strategy")
    base = ["leduc.nolimit.2p", "--betting", "1p,a", "--algo", "es", "--iterations", "3000"]
    assert main(["train", *base, "--abstraction", ab, "--out", out, "--quiet", "--json"]) == 0
    doc = _json(capsys)
    assert doc["real_exploitability"] >= doc["exploitability"] - 1e-12
    ev_argv = ["eval", "exploitability", "leduc.nolimit.2p", out, "--abstraction", ab]
    assert main([*ev_argv, "--json"]) == 0
    assert _json(capsys)["betting"] == "1p,a"


def test_cli_mismatches_fail_with_one_line(abstractions, tmp_path, capsys):
    leduc33 = str(abstractions["leduc33"].directory)
    out = tmp_path / "s.strategy"
    train = ["train", LEDUC, "--algo", "cfr", "--iterations", "3", "--quiet"]
    assert main([*train, "--out", str(out), "--abstraction", leduc33]) == 0
    capsys.readouterr()

    def fails(argv: list[str], *words: str) -> None:
        assert main(argv) == 2
        line = _error(capsys)
        assert line.startswith(f"pokerbot {argv[0]}: error:"), line
        for w in words:
            assert w in line, line

    # An abstraction built for another game's cards.
    kuhn2 = str(abstractions["kuhn2"].directory)
    fails([*train, "--out", str(tmp_path / "x.strategy"), "--abstraction", kuhn2],
          "built for kuhn.limit.2p", "not for leduc.limit.2p")
    two = tmp_path / "leduc2.game"
    write_game_file(TWO_CARD_LEDUC, two)
    fails(["train", str(two), "--algo", "es", "--iterations", "3", "--abstraction", leduc33,
           "--out", str(tmp_path / "x.strategy")], "2 hole cards")
    assert not (tmp_path / "x.strategy").exists()
    # The strategy file's abstraction: missing, another one, or given for a lossless file.
    ev = ["eval", "exploitability", LEDUC, str(out)]
    assert main(ev) == 0  # the file carries the abstraction's model
    capsys.readouterr()
    fails([*ev, "--abstraction", str(abstractions["leduc23"].directory)], "but", "is sha256:")
    fails([*ev, "--abstraction", kuhn2], "but", "is sha256:")
    lossless = tmp_path / "lossless.strategy"
    assert main([*train, "--out", str(lossless)]) == 0
    capsys.readouterr()
    fails(["eval", "exploitability", LEDUC, str(lossless), "--abstraction", leduc33],
          "without a card abstraction")
    # The wrong game, and a directory that holds no abstraction.
    fails(["eval", "exploitability", "leduc.nolimit.2p", str(out), "--abstraction", leduc33],
          "trained for leduc.limit.2p")
    fails(["eval", "exploitability", LEDUC, str(out), "--abstraction", str(tmp_path)], "meta.json")


def test_cli_resume_with_abstraction(abstractions, tmp_path, capsys):
    ab = str(abstractions["leduc23h"].directory)
    whole, part, ckpt = tmp_path / "whole.strategy", tmp_path / "part.strategy", tmp_path / "r.ckpt"
    base = ["train", LEDUC, "--algo", "os", "--seed", "7", "--quiet", "--json"]
    assert main([*base, "--abstraction", ab, "--iterations", "9000", "--out", str(whole)]) == 0
    capsys.readouterr()
    assert main([*base, "--abstraction", ab, "--iterations", "4000", "--out", str(part),
                 "--checkpoint", str(ckpt)]) == 0
    capsys.readouterr()
    assert main([*base, "--abstraction", ab, "--iterations", "9000", "--out", str(part),
                 "--resume", str(ckpt)]) == 0
    doc = _json(capsys)
    assert (doc["iterations"], doc["iterations_this_run"]) == (9000, 5000)
    a = load_strategy(whole, abstractions["leduc23h"])
    b = load_strategy(part, abstractions["leduc23h"])
    np.testing.assert_array_equal(a.policy, b.policy)
    # Resuming without the abstraction, or with another one, is refused.
    assert main([*base, "--iterations", "9000", "--out", str(part), "--resume", str(ckpt)]) == 2
    assert "this run uses lossless buckets" in _error(capsys)
    other = str(abstractions["leduc23"].directory)
    assert main([*base, "--abstraction", other, "--iterations", "9000", "--out", str(part),
                 "--resume", str(ckpt)]) == 2
    assert "--abstraction" in _error(capsys)
