"""Match statistics from recorded reference-dealer logs."""

import math
from pathlib import Path

import pytest

from agent.results import match_results, mean_ci95
from poker.log import parse_log

LOGS = Path(__file__).parent / "data" / "acpc" / "logs"


def test_mean_ci95_by_hand():
    mean, lo, hi = mean_ci95([1.0, 2.0, 3.0, 4.0])
    sd = math.sqrt(sum((x - 2.5) ** 2 for x in [1, 2, 3, 4]) / 3)
    assert mean == 2.5
    assert hi - mean == pytest.approx(1.959964 * sd / 2, rel=1e-6)
    assert mean_ci95([5.0]) == (5.0, 5.0, 5.0)


def test_results_match_the_score_line():
    log = parse_log((LOGS / "holdem.nolimit.2p.reverse_blinds.example_vs_example.log").read_text())
    res = {r.name: r for r in match_results(log, big_blind=100)}
    assert log.score is not None
    for name, total in zip(log.score.names, log.score.values):
        assert res[name].chips == pytest.approx(total)
        assert res[name].hands == 200
        assert res[name].mbb_per_game == pytest.approx(1000 * total / 100 / 200)
        lo, hi = res[name].ci95
        assert lo < res[name].mbb_per_game < hi
    # Zero-sum heads-up: the two players' figures mirror each other.
    a, b = res.values()
    assert a.mbb_per_game == pytest.approx(-b.mbb_per_game)


def test_duplicate_pairs_cancel_card_luck():
    # The recorded match and its seat-swapped twin (same seed) form one duplicate match.
    first = (LOGS / "holdem.nolimit.2p.reverse_blinds.example_vs_example.log").read_text()
    second = (LOGS / "holdem.nolimit.2p.reverse_blinds.example_vs_example.swapped.log").read_text()
    a, b = parse_log(first), parse_log(second)
    shifted = [h.__class__(**{**h.__dict__, "hand_no": h.hand_no + 200}) for h in b.hands]
    header = a.headers[0].__class__(**{**a.headers[0].__dict__, "num_hands": 400})
    both = a.__class__((header,), a.hands + tuple(shifted), None)
    res = {r.name: r for r in match_results(both, big_blind=100, passes=2)}
    assert res["ExampleA"].hands == 400
    total = sum(h.values[h.names.index("ExampleA")] for h in both.hands)
    assert res["ExampleA"].mbb_per_game == pytest.approx(1000 * total / 100 / 400)
    lo, hi = res["ExampleA"].ci95
    assert lo < res["ExampleA"].mbb_per_game < hi


def test_bad_arguments():
    log = parse_log((LOGS / "kuhn.limit.3p.example_x3.log").read_text())
    with pytest.raises(ValueError, match="big blind"):
        match_results(log, big_blind=0)
    assert len(match_results(log, big_blind=1)) == 3
