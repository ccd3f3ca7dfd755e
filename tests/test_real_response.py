"""Exact real-game exploitability of a translated player (solver.evaluation.real_response).

Oracles: (a) in a limit game nothing is translated, so the real best response equals
solver.evaluation.best_response's; (b) on a tiny no-limit game, a brute force that drives the
player's own HandWalk through every combination of mapping outcomes (each combination a
deterministic translation), sums the player's terminal reaches over the combinations
with their probabilities, and best-responds to those sums by explicit backward induction
over the responder's information sets.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from collections import defaultdict
from typing import Any

import numpy as np
import pytest

import solver.play.policy as policy_mod
from poker.cards import deck_cards
from poker.game import Game, load_game, parse_game
from poker.state import Action, ActionKind, Deal, State
from solver.training.algorithms import solve
from solver.evaluation.best_response import exploitability, profile_value
from solver.chance import lossless_bucket
from solver.play.policy import HandWalk, TranslatedPolicy
from solver.problem import make_problem
from solver.evaluation.real_response import (
    Responder,
    predict_walk,
    real_best_response_value,
    real_exploitability,
    real_self_play_value,
    real_tree_size,
)

# Two streets, four cards of one suit, stacks of 4 chips, an ante of 1 each: 161 real nodes.
TINY = """GAMEDEF
nolimit
numPlayers = 2
numRounds = 2
stack = 4 4
blind = 1 1
firstPlayer = 1 1
numSuits = 1
numRanks = 4
numHoleCards = 1
numBoardCards = 0 1
END GAMEDEF
"""


def _tiny() -> Game:
    return parse_game(TINY, name="tiny.nolimit.2p")


def _policy_of(strategy: Any, game: Game, mapping: str = "pseudo_harmonic") -> TranslatedPolicy:
    p = strategy.problem
    return TranslatedPolicy(
        p.tree, p.offset, strategy.policy,
        lambda street, hole, board: lossless_bucket(game, street, hole, board), mapping=mapping,
    )


def _random_policy(game: Game, betting: str, mapping: str, seed: int = 1) -> TranslatedPolicy:
    """Every abstract action with positive probability: every rule gets exercised."""
    p = make_problem(game, betting)
    table = np.random.default_rng(seed).uniform(0.05, 1.0, p.size)
    return TranslatedPolicy(
        p.tree, p.offset, table,
        lambda street, hole, board: lossless_bucket(game, street, hole, board), mapping=mapping,
    )


# ---------------------------------------------------------------- (a) limit: no translation


def test_limit_game_equals_the_abstract_best_response():
    game = load_game("leduc.limit.2p")
    strategy = solve(game, "cfr+", iterations=50)
    pol = _policy_of(strategy, game)
    real = real_exploitability(pol)
    ref = exploitability(game, strategy)
    assert real.exploitability == pytest.approx(ref.exploitability, abs=1e-9)
    assert real.br[0] == pytest.approx(ref.br[0], abs=1e-9)
    assert real.br[1] == pytest.approx(ref.br[1], abs=1e-9)
    assert real.value == pytest.approx(profile_value(strategy, 0), abs=1e-9)
    assert real.tree_nodes == 85 and real.nodes > 0
    assert real.mbb_per_game == pytest.approx(1000 * real.exploitability / game.big_blind)


# ---------------------------------------------------------------- (b) brute force


class _Script:
    """Drives HandWalk's random choices: mapping outcomes from a realization (a dict
    from mapping point to outcome index), its own draw forced to one abstract child."""

    def __init__(self) -> None:
        self.history: tuple[Any, ...] = ()
        self.realization: dict[Any, int] = {}
        self.points: dict[Any, list[float]] = {}  # point -> its outcomes' probabilities
        self.forced = 0


def _install(monkeypatch: pytest.MonkeyPatch, script: _Script) -> None:
    def uniform(seed: int, hand: int, index: int, stream: int = 0) -> float:
        return float(index)  # the place in the hand, read back by _pick

    def pick(outcomes: list[tuple[int, float]], u: float) -> int:
        if len(outcomes) == 1:
            return outcomes[0][0]
        # A mapping point: the real history before the action and the abstract node
        # (its children name it).
        point = (script.history[: int(u) + 1], tuple(c for c, _ in outcomes))
        script.points.setdefault(point, [p for _, p in outcomes])
        return outcomes[script.realization.get(point, 0)][0]

    def draw(probs: np.ndarray, u: float) -> int:
        return script.forced

    monkeypatch.setattr(policy_mod, "uniform", uniform)
    monkeypatch.setattr(policy_mod, "_pick", pick)
    monkeypatch.setattr(policy_mod, "_draw", draw)


def _legal(state: State) -> list[Action]:
    out = [Action.fold()] if state.can_fold() else []
    out.append(Action.call())
    if state.min_raise_to is not None and state.max_raise_to is not None:
        out += [Action.raise_to(t) for t in range(state.min_raise_to, state.max_raise_to + 1)]
    return out


def _deals(game: Game) -> list[tuple[int, int, tuple[int, ...]]]:
    deck = deck_cards(game.num_ranks, game.num_suits)
    n_board = game.total_board_cards
    return [
        (a, b, rest)
        for a, b in itertools.permutations(deck, 2)
        for rest in itertools.permutations([c for c in deck if c not in (a, b)], n_board)
    ]


def _player_reach(
    pol: TranslatedPolicy, game: Game, seat: int, script: _Script, stats: dict[str, int]
) -> dict[tuple[Any, ...], float]:
    """(real betting history, full board, hand) -> the player's probability of playing
    that history, under the script's realization (summed over its own draws)."""
    out: dict[tuple[Any, ...], float] = defaultdict(float)
    deck = deck_cards(game.num_ranks, game.num_suits)
    n_board = game.total_board_cards

    def dfs(state: State, walk: HandWalk, prob: float, hole: int, board: tuple[int, ...]) -> None:
        if state.actor is None:
            out[(state.history, board, hole)] += prob
            stats["lost"] += walk.lost
            return
        if state.actor != seat:
            for a in _legal(state):
                dfs(state.apply(a), walk, prob, hole, board)
            return
        seen = board[: game.board_cards_through(state.round)]
        script.history = state.history
        probe = walk.copy()
        script.forced = 0
        action, probs = probe.decide(state, (hole,), seen)
        if probs is None:  # a fallback: check or call
            stats["fallback"] += 1
            dfs(state.apply(action), probe, prob, hole, board)
            return
        for i, q in enumerate(probs.tolist()):
            if q > 0.0:
                w = walk.copy()
                script.history = state.history
                script.forced = i
                a, _ = w.decide(state, (hole,), seen)
                dfs(state.apply(a), w, prob * q, hole, board)

    for hole in deck:
        for board in itertools.permutations([c for c in deck if c != hole], n_board):
            dfs(State.new_hand(game), HandWalk(pol, seat, seed=0, hand=0), 1.0, hole, board)
    return out


def _mixture_reach(
    pol: TranslatedPolicy, game: Game, seat: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[tuple[Any, ...], float], int, dict[str, int]]:
    """The player's reach summed over every realization of the mapping points, weighted
    by its probability; the points are found by repeating until none is new."""
    script = _Script()
    _install(monkeypatch, script)
    stats = {"fallback": 0, "lost": 0}
    known = -1
    while known != len(script.points):
        known = len(script.points)
        points = list(script.points)
        total: dict[tuple[Any, ...], float] = defaultdict(float)
        for choice in itertools.product(*(range(len(script.points[p])) for p in points)):
            script.realization = dict(zip(points, choice))
            weight = math.prod(script.points[p][i] for p, i in zip(points, choice))
            for k, v in _player_reach(pol, game, seat, script, stats).items():
                total[k] += weight * v
    return total, len(script.points), stats


def _brute_br(game: Game, seat: int, reach: dict[tuple[Any, ...], float]) -> float:
    """Best response of ``seat`` to the player's terminal reaches: backward induction
    over (betting, revealed board, own card), every deal equally likely."""
    deals = _deals(game)
    chance = 1.0 / len(deals)

    def value(state: State, card: int, revealed: tuple[int, ...]) -> float:
        if state.actor is None:
            v = 0.0
            for a, b, board in deals:
                if a != card or board[: len(revealed)] != revealed:
                    continue
                r = reach.get((state.history, board, b), 0.0)
                if r:
                    holes = [(a,), (b,)] if seat == 0 else [(b,), (a,)]
                    boards = tuple(board[sum(game.num_board_cards[:s]) : sum(game.num_board_cards[: s + 1])]
                                   for s in range(game.num_rounds))
                    u = state.with_deal(Deal(tuple(holes), boards)).values()[seat]
                    v += chance * r * u
            return v
        kids = []
        for act in _legal(state):
            nxt = state.apply(act)
            n_seen = game.board_cards_through(nxt.round)
            if n_seen == len(revealed):
                kids.append(value(nxt, card, revealed))
            else:  # the board cards of the streets reached: summed over
                deck = deck_cards(game.num_ranks, game.num_suits)
                free = [c for c in deck if c != card and c not in revealed]
                kids.append(sum(value(nxt, card, revealed + more)
                                for more in itertools.permutations(free, n_seen - len(revealed))))
        return max(kids) if state.actor == seat else sum(kids)

    deck = deck_cards(game.num_ranks, game.num_suits)
    return sum(value(State.new_hand(game), c, ()) for c in deck)


@pytest.mark.parametrize(
    "betting,mapping,lost",
    [
        ("0.5p,1p", "pseudo_harmonic", True),  # a walk gets lost: calls for the rest
        ("1p,cap1", "pseudo_harmonic", False),  # raises past the cap mapped to a call
        ("0.5p,a", "geometric", True),
    ],
)
def test_brute_force_over_mapping_realizations(betting, mapping, lost, monkeypatch):
    game = _tiny()
    pol = _random_policy(game, betting, mapping)
    for seat in (0, 1):
        exact = real_best_response_value(pol, seat)
        reach, n_points, stats = _mixture_reach(pol, game, 1 - seat, monkeypatch)
        assert n_points >= 2  # the mapping randomized, at several places
        assert stats["fallback"] > 0  # HandWalk's fallback call was exercised
        assert (stats["lost"] > 0) == lost
        assert exact == pytest.approx(_brute_br(game, seat, reach), abs=1e-9)


def test_memo_and_self_play_are_exact():
    game = _tiny()
    pol = _random_policy(game, "1p,a", "pseudo_harmonic", seed=3)
    with_memo = real_exploitability(pol)
    without = real_exploitability(pol, memo=False, self_play=False)
    assert with_memo.br == pytest.approx(without.br, abs=1e-12)
    assert with_memo.exploitability >= 0.0
    assert with_memo.tree_nodes == real_tree_size(game) == 161
    assert with_memo.value == real_self_play_value(pol)


def test_pseudo_harmonic_on_leduc_nolimit_is_finite():
    game = load_game("leduc.nolimit.2p")
    strategy = solve(game, "cfr+", iterations=100, betting="1p,a")
    res = real_exploitability(_policy_of(strategy, game), count_tree=False)
    assert math.isfinite(res.exploitability) and res.exploitability >= 0.0
    assert math.isfinite(res.mbb_per_game) and res.nodes > 0
    # in self-play every action is on the tree: the abstract profile's value
    assert res.value == pytest.approx(profile_value(strategy, 0), abs=1e-9)


# ---------------------------------------------------------------- a restricted responder


def test_hand_values_match_brute_force():
    """The per-hand terminal sums (fold: disjoint reach; showdown: won minus lost) against
    the pair-by-pair definition, ties included, on 2-card and 1-card hands."""
    import random

    from poker.evaluator import evaluate
    from solver.evaluation._terminal import HandValues

    rng = random.Random(1)
    for deck, k, nb in ((list(range(32, 52)), 2, 3), ([0, 1, 4, 5, 8, 9], 1, 1)):
        hands = np.array(list(itertools.combinations(deck, k)))
        boards = np.array([rng.sample(deck, nb) for _ in range(3)])
        live = np.array([[not set(h) & set(b) for h in hands.tolist()] for b in boards.tolist()])
        r = np.random.default_rng(2).random((3, len(hands))) * live
        values = HandValues(hands, boards)
        d, s = values.disjoint(r), values.showdown(r)
        for b, board in enumerate(boards.tolist()):
            rank = [evaluate(h + board) if live[b, i] else 0 for i, h in enumerate(hands.tolist())]
            for i, h in enumerate(hands.tolist()):
                if not live[b, i]:
                    continue
                pairs = [j for j, g in enumerate(hands.tolist()) if live[b, j] and not set(h) & set(g)]
                assert d[b, i] == pytest.approx(sum(r[b, j] for j in pairs), abs=1e-12)
                assert s[b, i] == pytest.approx(sum(r[b, j] * np.sign(rank[i] - rank[j]) for j in pairs), abs=1e-12)


def test_showdown_rows_equal_one_row_at_a_time_bit_for_bit():
    """Many reach rows on one board in one sweep (the subgame's showdowns that share a
    final board) give each row's showdown sums exactly as one row at a time, on 2-card
    and 1-card hands, rows with zeros and the hands that hold a board card included; and
    the pair-by-pair definition."""
    from poker.evaluator import evaluate
    from solver.evaluation._terminal import HandValues, _showdown_rows

    gen = np.random.default_rng(3)
    for deck, k, board in ((list(range(32, 52)), 2, [33, 38, 44, 47, 51]), ([0, 1, 4, 5, 8, 9], 1, [4])):
        hands = np.array(list(itertools.combinations(deck, k)))
        values = HandValues(hands, np.array([board]))
        assert values.order is not None and values._sorted is not None
        live = np.array([not set(h) & set(board) for h in hands.tolist()])
        rows = gen.random((7, len(hands))) * live
        rows[gen.random(rows.shape) < 0.3] = 0.0
        got = np.empty_like(rows)
        _showdown_rows(values.hands, values.order[0], values._sorted[0], rows, got)
        one = np.vstack([values.showdown(rows[m : m + 1]) for m in range(rows.shape[0])])
        assert np.array_equal(got[:, live], one[:, live])
        rank = {i: evaluate(hands[i].tolist() + board) for i in np.flatnonzero(live)}
        for i in np.flatnonzero(live)[::3]:
            pairs = [j for j in np.flatnonzero(live) if not set(hands[i]) & set(hands[j])]
            want = [sum(rows[m, j] * np.sign(rank[i] - rank[j]) for j in pairs) for m in range(rows.shape[0])]
            assert got[:, i] == pytest.approx(want, abs=1e-12)


def _states(game: Game) -> list[State]:
    out: list[State] = []

    def walk(state: State) -> None:
        if state.actor is None:
            return
        out.append(state)
        for a in _legal(state):
            walk(state.apply(a))

    walk(State.new_hand(game))
    return out


def test_a_responder_with_every_size_is_the_any_size_best_response():
    game = _tiny()
    every = Responder(sizes=tuple(round(0.05 * i, 2) for i in range(1, 100)), past_cap=None)
    for state in _states(game):  # the sizes reach every legal raise-to of this small game
        assert set(every.actions(state, None)) == set(_legal(state))
    pol = _random_policy(game, "0.5p,1p", "pseudo_harmonic")
    for seat in (0, 1):
        assert real_best_response_value(pol, seat, responder=every) == pytest.approx(
            real_best_response_value(pol, seat), abs=1e-12)


def test_a_restricted_responder_wins_less_and_its_actions_are_legal():
    game = load_game("leduc.nolimit.2p")
    from solver.play.player import translated
    from solver.strategy_io import open_strategy

    pol = translated(open_strategy(Path(__file__).resolve().parent.parent / "strategies" / "leduc.nolimit.2p.strategy",
                                   game=game))
    rich, pot_only = Responder(), Responder(sizes=(1.0,))
    for state in _states(game)[:2000]:
        legal = set(_legal(state))
        assert set(rich.actions(state, None)) <= legal and Action.call() in rich.actions(state, None)
    for seat in (0, 1):
        anything = real_best_response_value(pol, seat)
        restricted = real_best_response_value(pol, seat, responder=rich)
        assert real_best_response_value(pol, seat, responder=pot_only) <= restricted + 1e-12
        assert restricted <= anything + 1e-12


def test_one_raise_past_the_players_cap():
    game = load_game("leduc.nolimit.2p")
    responder = Responder(sizes=(1.0,), past_cap=1)
    state = State.new_hand(game)
    for _ in range(2):  # two raises: the cap of a "cap1" tree, and one past it
        assert any(a.kind is ActionKind.RAISE for a in responder.actions(state, 1))
        state = state.apply(Action.raise_to(state.min_raise_to))
    assert state.num_raises_in_round == 2
    assert [a.kind for a in responder.actions(state, 1)] == [ActionKind.FOLD, ActionKind.CALL]
    assert any(a.kind is ActionKind.RAISE for a in responder.actions(state, 2))
    assert any(a.kind is ActionKind.RAISE for a in Responder(past_cap=None).actions(state, 1))
    # against a capped tree, the raise past the cap is worth something to the responder
    pol = _random_policy(_tiny(), "1p,cap1", "pseudo_harmonic", seed=2)
    for seat in (0, 1):
        at_cap = real_best_response_value(pol, seat, responder=Responder(past_cap=0))
        past = real_best_response_value(pol, seat, responder=Responder(past_cap=1))
        assert past >= at_cap - 1e-12
    assert any(real_best_response_value(pol, seat, responder=Responder(past_cap=1))
               > real_best_response_value(pol, seat, responder=Responder(past_cap=0)) + 1e-9 for seat in (0, 1))


def test_the_prediction_bounds_the_walk():
    game = load_game("leduc.nolimit.2p")
    pol = _random_policy(game, "0.5p,1p,a/1p,a,cap2", "pseudo_harmonic", seed=5)
    cost = predict_walk(pol, Responder())
    assert cost.rows == (6, 18)  # 3 flops up to suits (of 6), 6 hands each
    result = real_exploitability(pol, responder=Responder(), count_tree=False, self_play=False)
    assert 0 < result.nodes <= sum(cost.nodes)
    assert cost.bytes > 0 and cost.seconds > 0 and cost.elements > 0


def test_pokerbot_eval_translated(capsys):
    import json

    from agent.cli import main

    leduc = str(Path(__file__).resolve().parent.parent / "strategies" / "leduc.nolimit.2p.strategy")
    assert main(["eval", "translated", leduc, "--responder", "any", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    game = load_game("leduc.nolimit.2p")
    from solver.play.player import translated
    from solver.strategy_io import open_strategy

    want = real_exploitability(translated(open_strategy(Path(leduc), game=game)), count_tree=False)
    assert doc["mbb_per_game"] == pytest.approx(want.mbb_per_game, abs=1e-9)
    assert doc["prediction"]["nodes"] and doc["responder"] == "every legal amount"
    assert main(["eval", "translated", leduc, "--json"]) == 0
    rich = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert rich["mbb_per_game"] <= doc["mbb_per_game"] + 1e-9 and "+ all-in" in rich["responder"]
    assert main(["eval", "translated", leduc, "--predict", "--json"]) == 0
    assert "mbb_per_game" not in json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert main(["eval", "translated", leduc, "--responder", "0.5,x"]) == 2
    assert "cannot read 'x'" in capsys.readouterr().err
    assert Responder.parse("1,a,+cap") == Responder((1.0,), True, None)
    assert Responder.parse("0.5p,2") == Responder((0.5, 2.0), False, 1)


def test_one_board_per_suit_class_is_exact():
    """Walking one board per suit class (the hands' suits permuted when values are summed
    back) gives the values of walking every board; a bucket function that names suits
    is detected and every board walked."""
    from solver.evaluation.real_response import _Walker

    game = load_game("leduc.nolimit.2p")
    pol = _random_policy(game, "0.5p,1p,a/1p,a,cap2", "pseudo_harmonic", seed=6)
    sym, full = _Walker(pol, game), _Walker(pol, game, symmetric=False)
    assert sym.cards.symmetric and not full.cards.symmetric
    assert [len(b) for b in sym.cards.boards] == [1, 3] and [len(b) for b in full.cards.boards] == [1, 6]
    for seat in (0, 1):
        assert sym.best_response(seat) == pytest.approx(full.best_response(seat), abs=1e-12)
    ones = np.ones(6)
    root = State.new_hand(game)
    assert sym.self_play(root, 0, ({0: ones}, {0: ones.copy()})) == pytest.approx(
        full.self_play(root, 0, ({0: ones}, {0: ones.copy()})), abs=1e-12)

    def suited(street, hole, board):  # the bucket depends on a suit's name
        b = lossless_bucket(game, street, hole, board)
        return b if hole[0] % 4 == 3 else 0

    named = TranslatedPolicy(pol.tree, pol.offset, pol.table, suited)
    walker = _Walker(named, game)
    assert not walker.cards.symmetric
    assert walker.best_response(0) == pytest.approx(_Walker(named, game, symmetric=False).best_response(0), abs=1e-12)


def test_eval_translated_refuses_a_walk_that_cannot_fit(capsys, monkeypatch):
    import poker._sysinfo as sysinfo
    from agent.cli import main

    monkeypatch.setattr(sysinfo, "available_memory_gib", lambda: 0.001)
    leduc = str(Path(__file__).resolve().parent.parent / "strategies" / "leduc.nolimit.2p.strategy")
    assert main(["eval", "translated", leduc]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "GiB are free" in err[0]


def test_responder_values_from_inside_a_hand():
    """From the hand's start they are the whole walk's values (per deal: divided by the
    30 deals of two hands); from the second street of no-limit Leduc, on one board, they
    are the whole walk's rows of that board (per deal: divided by the 120 deals)."""
    from solver.evaluation.real_response import _Walker, responder_values

    game = load_game("leduc.nolimit.2p")
    pol = _random_policy(game, "0.5p,1p,a/1p,a,cap2", "pseudo_harmonic", seed=9)
    for seat in (0, 1):
        hands, values = responder_values(pol, State.new_hand(game), (), {0: np.ones(6)}, seat, Responder())
        assert values.sum() / 30 == pytest.approx(real_best_response_value(pol, seat, responder=Responder()), abs=1e-12)
    full = _Walker(pol, game, symmetric=False, responder=Responder())
    state = State.new_hand(game)
    seat = 1  # the responder; the translated player sits at 0
    ms = {0: np.ones(6)}
    for a in (Action.raise_to(3), Action.call()):  # the player raises, the responder calls
        ms = full.own_moves(ms, state)[a] if state.actor == 0 else full.after_opponent(ms, state, a)
        state = state.apply(a)
    assert state.round == 1 and state.actor is not None
    rows = {k: full.cards.expand(r, 0, 1) for k, r in ms.items()}
    whole = full.br(state, 1, rows, seat).reshape(-1, 6)
    for b, board in enumerate(full.cards.boards[1]):
        mine = {k: r.reshape(-1, 6)[b] for k, r in rows.items()}
        hands, values = responder_values(pol, state, board, mine, seat, Responder())
        assert values == pytest.approx(whole[b] * 120, abs=1e-12)


def test_pokerbot_eval_translated_resolve(capsys):
    """``eval translated --resolve`` is the exact evaluation of the re-solving player
    with the --resolve-* options (the same figure as solver.resolve.exact computes), and
    refuses a seconds cap in one line."""
    import json

    from agent.cli import main
    from solver.play.player import translated
    from solver.resolve.exact import resolved_exploitability
    from solver.resolve.player import ResolveOptions
    from solver.strategy_io import open_strategy

    leduc = str(Path(__file__).resolve().parent.parent / "strategies" / "leduc.nolimit.2p.strategy")
    flags = ["--responder", "0.75,a", "--resolve", "--resolve-iterations", "5", "--resolve-sizes", "1"]
    assert main(["eval", "translated", leduc, *flags, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    game = load_game("leduc.nolimit.2p")
    policy = translated(open_strategy(Path(leduc), game=game))
    want, info = resolved_exploitability(policy, ResolveOptions(iterations=5, sizes=(1.0,)),
                                         responder=Responder.parse("0.75,a"))
    assert info["resolves"] > 0 and doc["resolve"]["resolves"] == info["resolves"]
    assert doc["mbb_per_game"] == pytest.approx(want.mbb_per_game, abs=1e-9)
    assert "against_blueprint_mbb_per_game" in doc
    assert main(["eval", "translated", leduc, *flags, "--resolve-seconds", "1"]) == 2
    assert "iteration budgets" in capsys.readouterr().err


def test_a_branch_the_player_never_reaches_is_worth_nothing():
    """A walk into a branch with no mapping state left (every reach zero) values it at
    zero for the responder instead of failing (the exact re-solving walk makes such
    branches when a solution's action has no weight for any row it still holds)."""
    from solver.evaluation.real_response import _Walker

    game = load_game("leduc.nolimit.2p")
    pol = _random_policy(game, "0.5p,1p,a/1p,a,cap2", "pseudo_harmonic", seed=9)
    walker = _Walker(pol, game, symmetric=False)
    state = State.new_hand(game)
    assert not walker.br(state, 0, {}, 1).any() and walker.br(state, 0, {}, 1).shape == (6,)
    assert not walker.play_values(state, 0, {}, {0: np.ones(6)}, 1).any()
