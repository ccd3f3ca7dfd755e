"""The card-abstraction build stops when asked and says what it does (issue 58).

The feature kernels (the river's E[HS] sweep, the towers) and k-means's (k-means++, the
full and the Yinyang assignment, the nearest centroid) read a stop flag while they run
and count their work: a flag set from another thread ends each of them mid-walk, and the
public calls raise Interrupted, never a partial result. ``pokerbot abstract`` ends within
2 s of SIGTERM or SIGINT sent while a features stage or a k-means stage runs, with one
line and status 143 or 130; the stages finished stay on disk and the next run resumes at
the stopped one. ``--dry-run`` counts compiling only where numba's cache is cold.
"""

from __future__ import annotations

import json
import re
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from abstraction import features as F
from abstraction import kmeans as K
from abstraction import plan as P
from abstraction.build import CACHE_DIR, STAGES_FILE, _Builder, build_abstraction
from abstraction.plan import AbstractionParams, plan_build, plan_tables
from agent.cli import main
from poker._compile import COMPILING
from poker._stop import Interrupted, Stop, counter, stop_all
from poker.game import load_game

from ._signals import LONG, UNDER_WAY, signal_when

ROOT = Path(__file__).resolve().parents[1]
FULL = "holdem.nolimit.2p.reverse_blinds"
SHORT20 = "holdem.nolimit.2p.short20"
SHORT24 = "holdem.nolimit.2p.short24"
#: The command line's tests run numba on one thread, as a rate measured on one holds.
ONE_THREAD = {"NUMBA_NUM_THREADS": "1"}


# ------------------------------------------------------------------ the plan


def _cold_only(monkeypatch: pytest.MonkeyPatch, groups: list[str]) -> None:
    """Make the plan's cache check report the kernels of ``groups`` (and no others) cold."""
    kernels = {id(k) for g in groups for k in P.compile_kernels(g)}
    monkeypatch.setattr(P, "cold", lambda *dispatchers: any(id(d) in kernels for d in dispatchers))


@pytest.mark.parametrize("history", [False, True])
def test_the_plan_counts_compiling_where_the_cache_is_cold(monkeypatch: pytest.MonkeyPatch, history: bool) -> None:
    game = load_game(SHORT20)
    params = AbstractionParams((25, 60, 60, 60), history=history)
    _cold_only(monkeypatch, [])
    warm = plan_build(game, params)
    assert warm.compile_seconds == 0 and all(s.compile_seconds == 0 for s in warm.streets)
    _cold_only(monkeypatch, list(P._COMPILE_S))
    cold = plan_build(game, params)
    c = P._COMPILE_S
    # each group where the build first calls it: the river's E[HS] and then its buckets
    # (vectors, k-means, nearest centroids) on the river, the towers from the turn's
    # features down, the pair weights in the flop's history stage
    expected = [0.0, c["pairs"] if history else 0.0, c["tower"], c["river"] + c["vectors"] + c["kmeans"] + c["nearest"]]
    assert [s.compile_seconds for s in cold.streets] == pytest.approx(expected)
    assert cold.compile_seconds == pytest.approx(sum(expected)) and sum(expected) > 0
    assert cold.seconds == pytest.approx(warm.seconds + sum(expected))
    assert [a.seconds - a.compile_seconds for a in cold.streets] == pytest.approx([b.seconds for b in warm.streets])
    # only k-means's kernels cold: its figure alone, where the river's buckets cluster
    _cold_only(monkeypatch, ["kmeans"])
    one = plan_build(game, params)
    assert [s.compile_seconds for s in one.streets] == pytest.approx([0, 0, 0, c["kmeans"]])
    # a model's tables: the feature stages and nearest centroids, no k-means, no pairs
    _cold_only(monkeypatch, list(P._COMPILE_S))
    ab = SimpleNamespace(game=game, params=params, space=F.CardSpace.from_game(game))
    tables = plan_tables(ab)
    assert tables.compile_seconds == pytest.approx(c["river"] + c["tower"] + c["vectors"] + c["nearest"])
    _cold_only(monkeypatch, [])
    assert plan_tables(ab).compile_seconds == 0
    assert tables.seconds == pytest.approx(plan_tables(ab).seconds + tables.compile_seconds)


def test_the_dry_run_says_what_compiling_costs_only_when_it_will(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["abstract", SHORT20, "--buckets", "25,60,60,60", "--dry-run"]
    _cold_only(monkeypatch, list(P._COMPILE_S))
    assert main(argv) == 0
    total = plan_build(load_game(SHORT20), AbstractionParams((25, 60, 60, 60)))
    out = capsys.readouterr().out
    assert total.compile_seconds > 0
    assert f"total   ~{total.seconds:.0f} s ({total.compile_seconds:.0f} s of it compiling kernels, first run only)" in out
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert doc["compile_seconds"] == total.compile_seconds and doc["seconds"] == total.seconds
    _cold_only(monkeypatch, [])
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "compiling" not in out and "total   ~0 s," in out


# ------------------------------------------------------------------ what the bars show


def test_stages_say_when_they_compile_and_k_means_counts_its_updates(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every kernel reported cold: each stage shows COMPILING before it counts work; the
    feature stages count hands of their street; a k-means stage counts only its updates,
    of max_iter, and ends full at the updates it made (its seeding and first assignment,
    and compiling, are phases: none is the first counted item, whose rate the bar's ETA
    starts from)."""
    import abstraction.build as B

    monkeypatch.setattr(B, "cold", lambda *kernels: True)
    monkeypatch.setattr(K, "cold", lambda *kernels: True)
    events: list[tuple[str, str, object]] = []
    report = build_abstraction(
        SHORT20, AbstractionParams((25, 60, 60, 60)), tmp_path / "a",
        progress=lambda stage, done, total: events.append((stage, "count", (done, total))),
        phase=lambda stage, text: events.append((stage, "phase", text)),
    )
    stages = [s["stage"] for s in report.stages]
    space = F.CardSpace.from_game(load_game(SHORT20))
    for stage in stages:
        mine = [(kind, what) for s, kind, what in events if s == stage]
        assert mine[0] == ("count", (0, 1)), (stage, mine)
        if stage == "preflop buckets":  # lossless: nothing to compile or count
            assert mine == [("count", (0, 1))]
            continue
        assert mine[1] == ("phase", COMPILING), (stage, mine)
        counted = [what for kind, what in mine if kind == "count" and what[0] > 0]
        assert counted, stage
        if stage == "turn features":
            assert {t for _, t in counted} == {space.count(2)} and counted[-1][0] == space.count(2)
        if stage.endswith("buckets"):
            street = ("preflop", "flop", "turn", "river").index(stage.split()[0])
            made = json.loads((tmp_path / "a" / CACHE_DIR / f"street{street}.kmeans.json").read_text())["iterations"]
            assert all(t == 60 for _, t in counted[:-1]) and counted[-1] == (made, made), (stage, counted)
            # no phase once updates count, until k-means ends (then the river's E[HS] values
            # get their nearest centroid, whose kernel compiles too)
            updates = mine[mine.index(("count", counted[0])):mine.index(("count", counted[-1]))]
            assert all(kind == "count" for kind, _ in updates), (stage, mine)


def test_the_bar_never_draws_a_rate_from_the_first_item_after_a_phase(capsys: pytest.CaptureFixture[str]) -> None:
    """80 s of compiling, then the first update counted: the bar draws the phase one last
    time (and how long it took) instead of an ETA of 59 x 80 s."""
    from agent.commands.abstract import _Bars

    bars = _Bars(enabled=True)
    bars("turn buckets", 0, 60)
    bars.phase("turn buckets", COMPILING)
    assert bars.bar is not None
    bars.bar.start -= 80.0
    bars.bar._last -= 10.0  # the last draw is old: this update would draw
    bars("turn buckets", 1, 60)
    last = capsys.readouterr().err.splitlines()[-1]
    assert COMPILING in last and "elapsed 01:20" in last and "eta" not in last, last


# ------------------------------------------------------------------ kernels stop mid-walk


def _full_space() -> F.CardSpace:
    return F.CardSpace.from_game(load_game(FULL))


def _river_case() -> tuple[np.ndarray, Callable[[], object], Callable[[], int], int]:
    """The full deck's river E[HS]: 134,459 canonical boards (tens of seconds)."""
    sp = _full_space()
    ix = sp.indexer(sp.last)
    boards = F.canonical_boards(sp, sp.last)
    values = np.zeros(ix.count(), np.uint16)
    weights = np.zeros(ix.count(), np.uint8)
    flag, done = np.zeros(1, np.int64), F._thread_slots()

    def run() -> object:
        return F._river_scatter(ix.tables, ix.num_rounds - 1, boards, sp.deck, sp.hole, sp.perm_maps, values, weights,
                                flag, done)

    return flag, run, lambda: int(done.sum()), boards.shape[0]


def _tower_case() -> tuple[np.ndarray, Callable[[], object], Callable[[], int], int]:
    """The full deck's flop histograms from the turn's (all zero here: the lookups cost
    the same): 1,286,792 hands of 47 lookups each (seconds)."""
    sp = _full_space()
    n_turn, n = sp.count(2), sp.count(1)
    # calloc'd zeros: the walk reads them through the zero page, the memory is never used
    turn = F.StreetFeatures(np.zeros((n_turn, 32), np.uint32), np.zeros(n_turn, np.int64), np.zeros(n_turn, np.int64),
                            np.zeros(n_turn, np.uint8))
    nxt = F._next_arg(turn, 32)
    out = F._empty_features(n, 32)
    flag, done = np.zeros(1, np.int64), F._thread_slots()
    return flag, lambda: F._tower_into(sp, 1, nxt, 0, out, flag, done), lambda: int(done.sum()), n


def _points(n: int, d: int) -> np.ndarray:
    return np.random.default_rng(7).random((n, d), dtype=np.float32)


def _seeding_case() -> tuple[np.ndarray, Callable[[], object], Callable[[], int], int]:
    """k-means++: 3,000 centres, each a pass over 100,000 points (seconds)."""
    x, k = _points(100_000, 32), 3_000
    uniforms = np.random.default_rng(1).random(k)
    centres, chosen = np.zeros((k, 32), np.float32), np.full(k, -1, np.int64)
    flag, done = np.zeros(1, np.int64), counter()
    run = lambda: K._pp_seed(x, np.ones(x.shape[0]), k, uniforms, centres, chosen, flag, done)  # noqa: E731
    return flag, run, lambda: int(done[0]), k


def _layout(c: np.ndarray, groups: int) -> K._Layout:
    gof = np.arange(c.shape[0], dtype=np.int64) % groups
    order, gstart = K._group_layout(gof, groups)
    pos = np.zeros(c.shape[0], np.int64)
    pos[order[order >= 0]] = np.flatnonzero(order >= 0)
    return K._Layout(K._columns(c, order), order, gstart, pos, gof)


def _chunk_counts(n: int) -> np.ndarray:
    return counter((n + K._CHUNK - 1) // K._CHUNK)


def _full_assignment_case() -> tuple[np.ndarray, Callable[[], object], Callable[[], int], int]:
    """Every one of 200,000 points against 1,000 centres (seconds)."""
    x = _points(200_000, 32)
    a = K.LocalAssignment(x, 32)
    lay = _layout(np.ascontiguousarray(x[:1_000]), 32)
    flag, done, changed = np.zeros(1, np.int64), _chunk_counts(x.shape[0]), _chunk_counts(x.shape[0])
    run = lambda: K._full_assign(x, lay, a.labels, a.upper, a.lb, changed, flag, done)  # noqa: E731
    return flag, run, lambda: int(done.sum()), x.shape[0]


def _yinyang_case() -> tuple[np.ndarray, Callable[[], object], Callable[[], int], int]:
    """A Yinyang step of 200,000 points after every one of 512 centres moved to another's
    place (the bounds fail nearly everywhere: about a full scan)."""
    x, k, t = _points(200_000, 32), 512, 32
    a = K.LocalAssignment(x, t)
    c = np.ascontiguousarray(x[:k])
    a.full(_layout(c, t))
    moved = np.ascontiguousarray(c[::-1])
    move = np.sqrt(((moved.astype(np.float64) - c) ** 2).sum(axis=1))
    lay = _layout(moved, t)
    gmove = np.zeros(t)
    np.maximum.at(gmove, lay.gof, move)
    half = np.zeros(k)
    K._centre_gaps(moved, half)
    flag, done = np.zeros(1, np.int64), _chunk_counts(x.shape[0])
    changed, scanned = _chunk_counts(x.shape[0]), _chunk_counts(x.shape[0])

    def run() -> object:
        return K._yinyang_assign(x, moved, lay, half, move, gmove, a.labels, a.upper, a.lb, changed, scanned, flag,
                                 done)

    return flag, run, lambda: int(done.sum()), x.shape[0]


def _nearest_case() -> tuple[np.ndarray, Callable[[], object], Callable[[], int], int]:
    """The nearest of 1,000 centroids of 200,000 points (seconds)."""
    x = _points(200_000, 32)
    ct = np.ascontiguousarray(x[:1_000].T)
    labels, d1 = np.empty(x.shape[0], np.int32), np.empty(x.shape[0], np.float32)
    flag, done = np.zeros(1, np.int64), _chunk_counts(x.shape[0])
    return flag, lambda: K._nearest_kernel(x, ct, labels, d1, flag, done), lambda: int(done.sum()), x.shape[0]


@pytest.mark.parametrize(
    "case", [_river_case, _tower_case, _seeding_case, _full_assignment_case, _yinyang_case, _nearest_case],
    ids=["river E[HS]", "tower", "k-means++", "full assignment", "yinyang step", "nearest"],
)
def test_a_kernel_reads_the_flag_while_it_runs(case: Callable[[], tuple]) -> None:
    """A flag set from another thread ends the kernel mid-walk, and its counter moves while
    it runs: a parallel loop takes its arrays as not aliasing one another, so a plain load
    of the flag would be made once, before the loop, and the counter's stores kept for its
    end. Stopped after its first counted unit, it has done some of its units, not all."""
    flag, run, count, total = case()
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    deadline = time.monotonic() + UNDER_WAY
    while count() == 0 and worker.is_alive() and time.monotonic() < deadline:
        time.sleep(0.0005)
    flag[0] = signal.SIGINT
    worker.join(60.0)
    assert not worker.is_alive()
    assert 0 < count() < total, (count(), total)


# ------------------------------------------------------------------ the public calls


def test_a_stopped_kmeans_or_feature_walk_raises_interrupted() -> None:
    x = _points(150_000, 32)
    steps: list[str] = []

    def stop_when_assigning(at: K.KMeansProgress) -> None:
        steps.append(at.step)
        if at.step == "assigning" and at.done > 0:
            stop_all(signal.SIGTERM)  # as the command line's handlers do

    with pytest.raises(Interrupted) as info:
        K.kmeans(x, 1_500, init=x[:1_500], watch=stop_when_assigning)
    assert info.value.signum == signal.SIGTERM and steps[-1] == "assigning"
    for stopped in (
        lambda stop: K.kmeans(x[:5_000], 50, seed=1, stop=stop),
        lambda stop: K.kmeans_plus_plus(x[:5_000], 50, seed=1, stop=stop),
        lambda stop: K.nearest(x[:5_000], x[:50], stop=stop),
        lambda stop: F.river_table(F.CardSpace.from_game(load_game(SHORT20)), stop=stop),
    ):
        stop = Stop()
        stop.set(signal.SIGINT)
        with pytest.raises(Interrupted):
            stopped(stop)

    sp = _full_space()
    heard: list[tuple[float, float]] = []

    def stop_once_under_way(done: float, total: float) -> None:
        heard.append((done, total))
        if done > 0:
            stop_all(signal.SIGINT)

    with pytest.raises(Interrupted) as info:
        F.river_table(sp, stop_once_under_way)
    assert info.value.signum == signal.SIGINT
    assert heard[-1][0] > 0 and all(t == 134_459 for _, t in heard)


def test_a_build_stopped_by_the_flag_keeps_its_finished_stages_and_resumes(tmp_path: Path) -> None:
    params = AbstractionParams((25, 30, 30, 30), seed=1)
    clean = build_abstraction(SHORT20, params, tmp_path / "clean").abstraction
    out = tmp_path / "run"

    def stop_in_turn_features(stage: str, done: float, total: float) -> None:
        if stage == "turn features" and done > 0:
            stop_all(signal.SIGTERM)

    with pytest.raises(Interrupted) as info:
        build_abstraction(SHORT20, params, out, progress=stop_in_turn_features)
    assert info.value.signum == signal.SIGTERM
    assert list(json.loads((out / CACHE_DIR / STAGES_FILE).read_text())) == ["river E[HS]"]
    assert not list((out / CACHE_DIR).glob("street2.*")) and not list(out.rglob("*.tmp"))
    assert not (out / "meta.json").exists()
    report = build_abstraction(SHORT20, params, out)
    assert [s["stage"] for s in report.stages if s["reused"]] == ["river E[HS]"]
    assert report.abstraction.content_hash == clean.content_hash


# ------------------------------------------------------------------ the command line


def _leftovers(out: Path) -> list[Path]:
    """Temporary files a stopped write would leave."""
    return list(out.rglob("*.tmp"))


def test_sigterm_while_a_features_stage_runs(tmp_path: Path) -> None:
    """The full deck's turn histograms: 13,960,050 hands of 46 lookups each, about 110,000
    hands a second on one thread here (2-vCPU machine, shared): two minutes; the signal
    comes in its first seconds. The river's E[HS] stage, which the turn's reads, is on disk as
    finished (its tables all zero, made sparse in no time: the lookups cost the same), so
    the run starts at the turn's features, as a rerun of a build stopped there would."""
    game, buckets = load_game(FULL), (169, 1000, 1000, 1000)
    out = tmp_path / "full"
    builder = _Builder(game, plan_build(game, AbstractionParams(buckets)), out, None)
    last = builder.space.last
    (out / CACHE_DIR).mkdir(parents=True)
    for name, dtype in (("river.values.npy", np.uint16), ("river.weights.npy", np.uint8)):
        np.lib.format.open_memmap(out / CACHE_DIR / name, mode="w+", dtype=dtype, shape=(builder.space.count(last),))
    (out / CACHE_DIR / STAGES_FILE).write_text(json.dumps({"river E[HS]": builder.feature_key(last)}))
    under_way = re.compile(r"^turn features +\[[#.]+\] ([\d,]+)/([\d,]+) ([\d.,]+)/s elapsed")
    got = signal_when(["abstract", FULL, "--buckets", ",".join(map(str, buckets)), "--out", str(out)],
                      signal.SIGTERM, wanted=under_way, env=ONE_THREAD)
    done, total, rate = (float(got.match.group(i).replace(",", "")) for i in (1, 2, 3))
    assert total == 13_960_050 and (total - done) / rate > LONG, (done, total, rate)
    got.check("abstract", signal.SIGTERM)
    err = got.lines
    assert not any(line.startswith("river E[HS]") for line in err)  # finished: not run again
    assert list(json.loads((out / CACHE_DIR / STAGES_FILE).read_text())) == ["river E[HS]"]
    assert not list((out / CACHE_DIR).glob("street2.*")) and not _leftovers(out)
    assert not (out / "meta.json").exists()


def test_sigterm_while_k_means_runs_and_the_rerun_resumes_at_its_stage(tmp_path: Path) -> None:
    """24-card hold'em's turn (93,750 hands) into 10,000 buckets of 128-bin histograms:
    k-means++ places 10,000 centres, each a pass over the 93,750 points of 127 values (47 MB
    a pass, 470 GB of memory read in all), then the first assignment scans every point
    against every centre (1.2e11 multiply-adds); here on one thread (2-vCPU machine,
    shared) the seeding alone placed 50 to 80 centres a second (2 to 3 minutes). The stages
    before it take seconds. The signal comes while it seeds; a rerun starts at the turn's
    buckets."""
    out = tmp_path / "km"
    argv = ["abstract", SHORT24, "--buckets", "36,40,10000,40", "--bins", "128", "--out", str(out)]
    seeding = re.compile(r"^turn buckets +\[[#.]+\] .*k-means\+\+ seeding ([\d,]+)/([\d,]+) centres, "
                         r"(?:(\d+):)?(\d+):(\d\d) left")
    got = signal_when(argv, signal.SIGTERM, wanted=seeding, env=ONE_THREAD)
    m = got.match
    hours, minutes, seconds = (int(m.group(i) or 0) for i in (3, 4, 5))
    assert m.group(2) == "10,000" and 3600 * hours + 60 * minutes + seconds > LONG, m.group(0)
    got.check("abstract", signal.SIGTERM)
    finished = ["river E[HS]", "turn features", "flop features", "river buckets"]
    stages = out / CACHE_DIR / STAGES_FILE
    assert sorted(json.loads(stages.read_text())) == sorted(finished)
    assert not list(out.glob("street2.*")) and not _leftovers(out) and not (out / "meta.json").exists()
    # the same command again: the finished stages are reused (no bar), the turn's buckets
    # start over; stopped as soon as k-means starts seeding again
    got = signal_when(argv, signal.SIGINT, wanted=re.compile(r"^turn buckets .* k-means\+\+ seeding "), env=ONE_THREAD)
    got.check("abstract", signal.SIGINT)
    assert not any(line.startswith(stage) for stage in finished for line in got.lines), got.lines
    assert sorted(json.loads(stages.read_text())) == sorted(finished)
    assert not list(out.glob("street2.*")) and not _leftovers(out)
