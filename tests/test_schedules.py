"""Discounting (Linear and Discounted CFR per batch, Brown & Sandholm 2019) and pruning
(MCCFR-P, Pluribus) in the sampled solvers: the schedule, what it does to the tables,
that it is neutral when it never fires, and what it costs on Leduc."""

from __future__ import annotations

import numpy as np
import pytest

from solver._kernels import CHANCE, DECISION
from solver.evaluation.best_response import exploitability
from solver.problem import make_problem
from solver.strategy import Strategy
from solver.training.algorithms import make_training_solver
from solver.training.sampled import SamplingOptions as SO
from solver.training.schedules import Discounting, Pruning, discount_tables


@pytest.fixture(scope="module")
def leduc():
    return make_problem("leduc.limit.2p")


@pytest.fixture(scope="module")
def nl_leduc():
    return make_problem("leduc.nolimit.2p", "0.5p,1p,a")


def test_discount_factors_are_the_papers():
    lin = Discounting("linear", every=10)
    assert lin.factors(1) == (0.5, 0.5, 0.5) and lin.factors(3) == (0.75, 0.75, 0.75)
    dcfr = Discounting("dcfr", every=10)
    t = 4.0
    pos, neg, avg = dcfr.factors(4)
    assert pos == pytest.approx(t**1.5 / (t**1.5 + 1)) and neg == 0.5
    assert avg == pytest.approx((t / (t + 1)) ** 2)
    # Linear CFR's weights: after T batches, batch t's contribution is worth t / T
    w = 1.0
    for b in range(3, 8):
        w *= lin.factors(b)[0]
    assert w == pytest.approx(3 / 8)
    # a big power over a long run: t^beta is beyond a float, and the share is 1
    big = Discounting("dcfr", every=10, alpha=1.0, beta=100.0, gamma=1.0)
    assert big.factors(2) == pytest.approx((2 / 3, 2.0**100 / (2.0**100 + 1), 2 / 3))
    assert big.factors(100_000) == pytest.approx((100_000 / 100_001, 1.0, 100_000 / 100_001))


def test_discount_schedule_counts_batches_to_the_horizon():
    d = Discounting("dcfr", every=100, until=350)
    assert [d.due(n) for n in (0, 99, 100, 200, 300, 350, 400)] == [False, False, True, True, True, False, False]
    assert (d.until_next(0), d.until_next(150), d.until_next(300)) == (100, 50, None)
    assert (d.applied(99), d.applied(300), d.applied(10_000)) == (0, 3, 3)
    assert Discounting.from_record(d.record()) == d
    p = Pruning(-30.0, after=5)
    assert p.floor == pytest.approx(-31.0) and Pruning.from_record(p.record()) == p


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda: Discounting("cubic"), "is not one of linear, dcfr"),
        (lambda: Discounting("dcfr", every=0), "at least 1 iteration"),
        (lambda: Discounting("linear", alpha=2.0), "the linear discount takes none"),
        (lambda: Pruning(5.0), "must be negative"),
        (lambda: Pruning(-5.0, share=0.0), "must be in (0, 1]"),
        (lambda: Pruning(-5.0, floor=-4.0), "at or below its threshold"),
        (lambda: SO(discount=Discounting(), averaging="linear"), "leave averaging uniform"),
        (lambda: SO(pruning=Pruning(-5.0), floor=True), "cannot run with the regret floor"),
    ],
)
def test_schedule_errors(make, message):
    with pytest.raises(ValueError) as exc:
        make()
    assert message in str(exc.value)


def test_outcome_sampling_refuses_pruning(leduc):
    with pytest.raises(ValueError, match="es and tcfr only"):
        make_training_solver(leduc, "os", SO(pruning=Pruning(-5.0)))


def test_discount_pass_multiplies_by_sign():
    r = np.array([2.0, -4.0, 0.0, 8.0])
    a = np.array([1.0, 3.0, 0.0, 5.0])
    discount_tables(r, a, 0.5, 0.25, 0.1)
    np.testing.assert_allclose(r, [1.0, -1.0, 0.0, 4.0])
    np.testing.assert_allclose(a, [0.1, 0.3, 0.0, 0.5])


@pytest.mark.parametrize("algo", ["es", "tcfr"])
def test_a_discounted_run_is_the_plain_run_discounted_after_each_batch(leduc, algo):
    d = Discounting("dcfr", every=700, until=2100)
    run = make_training_solver(leduc, algo, SO(seed=2, discount=d))
    by_hand = make_training_solver(leduc, algo, SO(seed=2))
    for n in (300, 1000, 50, 1650):  # calls that do not line up with the batches
        run.iterate(n)
    for batch in range(1, 4):
        by_hand.iterate(700)
        discount_tables(by_hand.regrets, by_hand.avg_sums, *d.factors(batch))
    by_hand.iterate(900)  # past the horizon: no more discounts
    assert run.iterations == by_hand.iterations == 3000 and run.discounts == 3
    np.testing.assert_array_equal(run.regrets, by_hand.regrets)
    np.testing.assert_array_equal(run.avg_sums, by_hand.avg_sums)


@pytest.mark.parametrize("algo", ["es", "tcfr"])
def test_schedules_that_never_fire_leave_the_run_as_it_was(nl_leduc, algo):
    plain = make_training_solver(nl_leduc, algo, SO(seed=7))
    never = SO(seed=7, discount=Discounting("linear", every=10, until=0),
               pruning=Pruning(-1e30, floor=-1e31))  # fmt: skip
    quiet = make_training_solver(nl_leduc, algo, never)
    assert plain._general is None and quiet._general == 1  # the pruning kernel ran
    plain.iterate(4000)
    quiet.iterate(4000)
    np.testing.assert_array_equal(plain.regrets, quiet.regrets)
    np.testing.assert_array_equal(plain.avg_sums, quiet.avg_sums)
    assert plain.nodes == quiet.nodes


def _prunable(problem, solver, threshold: float) -> np.ndarray:
    """Entries (in the solver's layout) MCCFR-P skips now: regret below the threshold,
    not on the last street, not ending the hand, in a row where some action is explored."""
    tree = problem.tree
    out = np.zeros(problem.size, dtype=bool)
    last = tree.n_streets - 1
    for node in tree.decision_nodes():
        if tree.street[node] == last:
            continue
        n = int(tree.n_child[node])
        kinds = [int(tree.kind[tree.child[node] + a]) for a in range(n)]
        ends = np.array([k not in (DECISION, CHANCE) for k in kinds])
        entries = solver.layout.node_entries(node).reshape(-1, n)
        regret = solver.regrets[entries]
        skip = (regret < threshold) & ~ends[None, :]
        skip[skip.all(axis=1)] = False  # every action would be skipped: all are explored
        out[entries[skip]] = True
    return out


def test_pruning_never_touches_what_it_skips_and_keeps_the_rest(nl_leduc):
    threshold = -10.0
    solver = make_training_solver(nl_leduc, "es", SO(seed=3, pruning=Pruning(threshold, share=1.0)))
    plain = make_training_solver(nl_leduc, "es", SO(seed=3))
    solver.iterate(20_000)
    plain.iterate(20_000)
    assert solver.nodes < 0.95 * plain.nodes  # pruning walks less
    before = solver.regrets.copy()
    skipped = _prunable(nl_leduc, solver, threshold)
    assert skipped.sum() > 50
    solver.iterate(3_000)  # every iteration prunes (share 1): skipped entries stay skipped
    np.testing.assert_array_equal(solver.regrets[skipped], before[skipped])
    assert solver.regrets.min() >= Pruning(threshold).floor
    # below the threshold on the last street, and on actions that end the hand, regrets move
    tree = nl_leduc.tree
    low_kept = np.zeros(nl_leduc.size, dtype=bool)
    low_kept[(before < threshold) & ~skipped] = True
    assert (solver.regrets[low_kept] != before[low_kept]).any()
    river = np.concatenate(
        [solver.layout.node_entries(n) for n in tree.decision_nodes() if tree.street[n] == tree.n_streets - 1]
    )
    moved = (solver.regrets[river] != before[river]) & (before[river] < threshold)
    assert moved.any()


def _exploitability(problem, solver) -> float:
    return exploitability(None, Strategy(problem, solver.average_policy())).exploitability


@pytest.mark.parametrize(
    "options",
    [
        {"discount": Discounting("linear", every=10_000)},
        {"discount": Discounting("dcfr", every=10_000, until=100_000)},
        {"pruning": Pruning(-5000.0)},
    ],
    ids=["linear", "dcfr", "pruning"],
)
def test_each_option_stays_within_a_fifth_of_external_sampling(leduc, options):
    """At equal iterations (200,000, seeds 1 to 3) the mean exploitability of external
    sampling with the option is at most 1.2 times plain external sampling's."""
    plain, scheduled = [], []
    for seed in (1, 2, 3):
        for out, opts in ((plain, {}), (scheduled, options)):
            s = make_training_solver(leduc, "es", SO(seed=seed, **opts))
            s.iterate(200_000)
            out.append(_exploitability(leduc, s))
    assert np.mean(scheduled) <= 1.2 * np.mean(plain), (scheduled, plain)


def test_train_takes_the_schedules_from_a_config_file(tmp_path, monkeypatch):
    """The TOML keys reach the run; the strategy file's training record keeps them and
    the metrics count the discounts and the nodes per deal."""
    import json

    from agent.cli import main
    from solver.strategy_io import open_strategy

    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.toml").write_text(
        'game = "leduc.limit.2p"\nalgo = "es"\niterations = 20000\nout = "l.strategy"\n'
        'discount = "dcfr"\ndiscount_every = 3000\ndiscount_until = 12000\ndcfr_gamma = 3\n'
        'prune_threshold = -40\nprune_after = 5000\nmetrics = "m.jsonl"\neval_every = 0\n',
        encoding="utf-8",
    )
    assert main(["train", "--config", "run.toml", "--quiet"]) == 0
    options = open_strategy(tmp_path / "l.strategy").training["options"]
    assert options["discount"] == {"rule": "dcfr", "every": 3000, "until": 12000, "alpha": 1.5, "beta": 0.0, "gamma": 3.0}
    assert options["pruning"]["threshold"] == -40.0 and options["pruning"]["after"] == 5000
    last = json.loads((tmp_path / "m.jsonl").read_text().splitlines()[-1])
    assert last["discounts"] == 4 and 0 < last["nodes_per_deal"] < 100
    (tmp_path / "bad.toml").write_text(
        'game = "leduc.limit.2p"\nalgo = "os"\niterations = 10\nout = "b.strategy"\nprune_threshold = -4\n',
        encoding="utf-8",
    )
    assert main(["train", "--config", "bad.toml", "--quiet"]) == 2
    assert not (tmp_path / "b.strategy").exists()


def test_unaveraged_rows_play_the_current_strategy(nl_leduc):
    """A row whose average sums are all zero plays the current strategy with the
    'current' fallback, the normalised average elsewhere; the counts are per street."""
    s = make_training_solver(nl_leduc, "tcfr", SO(seed=1))
    s.iterate(300)  # few full iterations: many rows were reached but never averaged
    uniform, current = s.average_policy(), s.average_policy("current")
    now = s.current_policy()
    avg = s.layout.to_canonical(s.avg_sums)
    reg = s.layout.to_canonical(s.regrets)
    tree = nl_leduc.tree
    counts = {"rows": [0, 0], "unaveraged": [0, 0], "untouched": [0, 0]}
    for node in tree.decision_nodes():
        n = int(tree.n_child[node])
        nb = int(nl_leduc.chance.n_buckets[tree.street[node]])
        o = int(nl_leduc.offset[node])
        st = int(tree.street[node])
        for b in range(nb):
            row = slice(o + b * n, o + (b + 1) * n)
            counts["rows"][st] += 1
            if avg[row].any():
                np.testing.assert_array_equal(current[row], uniform[row])
                continue
            counts["unaveraged"][st] += 1
            counts["untouched"][st] += int(not reg[row].any())
            np.testing.assert_array_equal(current[row], now[row])
            np.testing.assert_allclose(uniform[row], 1.0 / n)
    assert s.unaveraged_rows() == counts
    assert counts["unaveraged"][1] > counts["untouched"][1] > 0  # both kinds occur
    with pytest.raises(ValueError, match="fallback"):
        s.average_policy("best")


def test_the_training_record_counts_unaveraged_rows(tmp_path, capsys):
    from agent.cli import main
    from solver.strategy_io import load_strategy, open_strategy

    runs = {}
    for plays in ("current", "uniform"):
        out = tmp_path / f"{plays}.strategy"
        argv = ["train", "leduc.nolimit.2p", "--betting", "0.5p,1p,a", "--algo", "tcfr", "--iterations", "300",
                "--seed", "1", "--out", str(out), "--quiet", "--unaveraged", plays, "--precision", "f32"]  # fmt: skip
        assert main(argv) == 0
        record = open_strategy(out).training["unaveraged_rows"]
        assert record["plays"] == plays and record["rows"] == [180, 5100]
        runs[plays] = (record, load_strategy(out).policy)
    assert runs["current"][0]["unaveraged"] == runs["uniform"][0]["unaveraged"]
    capsys.readouterr()
    assert main(["inspect", str(tmp_path / "current.strategy")]) == 0
    u = runs["current"][0]
    assert (f"unaveraged rows per street {u['unaveraged'][0]}/180, {u['unaveraged'][1]:,}/5,100 "
            "(they play the current strategy") in capsys.readouterr().out
    s = make_training_solver(make_problem("leduc.nolimit.2p", "0.5p,1p,a"), "tcfr", SO(seed=1, dtype="float32"))
    s.iterate(300)
    np.testing.assert_allclose(runs["current"][1], s.average_policy("current"), atol=1e-6)
    np.testing.assert_allclose(runs["uniform"][1], s.average_policy("uniform"), atol=1e-6)
