"""Property tests of the state machine on every shipped game (hypothesis).

Random legal play always ends; chips are conserved; the no-limit raise range is exactly
what :meth:`State.verify` accepts; folds are refused when a check is free; betting
strings round-trip; ``legal_actions`` agrees with the ``can_*`` methods; and
:func:`repair` always produces a legal action, leaving legal ones alone.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from poker.game import load_game, shipped_games
from poker.rng import MT19937, deal_hand
from poker.state import (
    MAX_ACTIONS_PER_ROUND,
    Action,
    ActionKind,
    BettingSyntaxError,
    IllegalActionError,
    State,
    repair,
)

GAMES = {name: load_game(name) for name in shipped_games()}
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_invariants(s: State) -> None:
    game = s.game
    assert s.pot == sum(s.spent) and s.max_spent == max(s.spent)
    assert all(b <= x <= st for b, x, st in zip(game.blind, s.spent, game.stack))
    assert len(s.actions) == s.round + 1
    kinds = s.legal_actions()
    assert (ActionKind.FOLD in kinds) == s.can_fold()
    assert (ActionKind.CALL in kinds) == s.can_call()
    assert (ActionKind.RAISE in kinds) == s.can_raise()
    assert (s.min_raise_to is not None) == s.can_raise() == (s.max_raise_to is not None)
    if s.is_terminal:
        assert s.actor is None and kinds == []
        return
    p = s.actor
    assert p is not None and not s.folded[p] and s.spent[p] < game.stack[p]
    assert ActionKind.CALL in kinds
    assert s.can_fold() == (s.spent[p] < s.max_spent)
    if not s.can_fold():
        with pytest.raises(IllegalActionError, match="checking is free"):
            s.verify(Action.fold())
    if s.can_raise():
        lo, hi = s.min_raise_to, s.max_raise_to
        assert lo is not None and hi is not None
        assert s.max_spent < lo <= hi <= game.stack[p]
        assert len(s.round_actions) + game.num_players <= MAX_ACTIONS_PER_ROUND
        if game.is_limit:
            assert lo == hi == min(s.max_spent + game.raise_size[s.round], game.stack[p])
    else:
        with pytest.raises(IllegalActionError, match="raise is not allowed"):
            s.verify(Action.raise_to(s.max_spent + 1))


def check_nolimit_sizes(data: st.DataObject, s: State) -> None:
    """Every raise-to in [min, max] is accepted; integers outside are refused by number."""
    lo, hi = s.min_raise_to, s.max_raise_to
    assert lo is not None and hi is not None
    inside = {lo, hi, data.draw(st.integers(lo, hi), label="inside")}
    for amount in inside:
        assert s.verify(Action.raise_to(amount)) == Action.raise_to(amount)
        assert repair(s, Action.raise_to(amount)) == (Action.raise_to(amount), None)
    outside = {
        0,
        -1,
        lo - 1,
        hi + 1,
        2**31,
        data.draw(st.integers(max_value=lo - 1), label="below"),
        data.draw(st.integers(min_value=hi + 1), label="above"),
    }
    for amount in outside:
        with pytest.raises(IllegalActionError) as err:
            s.verify(Action.raise_to(amount))
        message = str(err.value)
        assert f"raise to {amount} " in message
        assert (str(lo) if amount < lo else str(hi)) in message
        fixed, warning = repair(s, Action.raise_to(amount))
        assert fixed == Action.raise_to(lo if amount < lo else hi)
        assert (
            warning
            == f"raise of {amount} {'increased' if amount < lo else 'decreased'} to {fixed.amount}"
        )


def random_hand(data: st.DataObject, game, check_sizes: bool) -> State:
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    s = State.new_hand(game, deal_hand(MT19937(seed), game))
    bound = game.num_rounds * MAX_ACTIONS_PER_ROUND
    steps = 0
    while not s.is_terminal:
        check_invariants(s)
        kind = data.draw(st.sampled_from(s.legal_actions()), label="kind")
        if kind is ActionKind.RAISE and not game.is_limit:
            if check_sizes:
                check_nolimit_sizes(data, s)
            # Mostly the extremes and small raises, so that long hands happen too.
            lo, hi = s.min_raise_to, s.max_raise_to
            amount = data.draw(
                st.one_of(
                    st.sampled_from([lo, hi]),
                    st.integers(lo, min(hi, lo + 3 * game.big_blind)),
                    st.integers(lo, hi),
                ),
                label="raise to",
            )
            action = Action.raise_to(amount)
        else:
            action = Action(kind)
        before = s
        s = s.apply(action)
        assert len(s.history) == len(before.history) + 1 and before.actor is not None
        steps += 1
        assert steps <= bound, "the hand did not end"
    check_invariants(s)
    return s


@pytest.mark.parametrize("name", sorted(GAMES))
@SETTINGS
@given(data=st.data())
def test_random_play(name, data):
    game = GAMES[name]
    s = random_hand(data, game, check_sizes=True)

    # Chips are conserved and nobody loses more than their stack.
    values = s.values()
    assert math.isclose(sum(values), 0.0, abs_tol=1e-6)
    for p, v in enumerate(values):
        assert v >= -game.stack[p] and v >= -s.spent[p] - 1e-9
        if s.folded[p]:
            assert v == -s.spent[p]
    assert s.is_showdown == (sum(s.folded) + 1 < game.num_players)
    if s.is_showdown:
        assert s.round == game.num_rounds - 1

    # The betting string round-trips to an equal state, at the end and part way.
    betting = s.betting_string()
    assert State.from_betting(game, betting, s.deal) == s
    assert State(game, s.actions, s.deal) == s
    history = s.history
    cut = data.draw(st.integers(0, len(history)), label="cut")
    part = State.new_hand(game, s.deal)
    for entry in history[:cut]:
        part = part.apply(entry.action)
    again = State.from_betting(game, part.betting_string(), s.deal)
    assert again == part and again.actor == part.actor and again.spent == part.spent

    # Without slashes the string is not canonical (when it had any), but the dealer's
    # lenient reader still gets the same hand.
    flat = betting.replace("/", "")
    if flat != betting:
        with pytest.raises(BettingSyntaxError):
            State.from_betting(game, flat, s.deal)
    assert State.from_betting(game, flat, s.deal, strict=False) == s


@pytest.mark.parametrize("name", sorted(GAMES))
@SETTINGS
@given(data=st.data())
def test_repair_always_gives_a_legal_action(name, data):
    game = GAMES[name]
    s = random_hand(data, game, check_sizes=False)
    cut = data.draw(st.integers(0, max(len(s.history) - 1, 0)), label="cut")
    part = State.new_hand(game, s.deal)
    for entry in s.history[:cut]:
        part = part.apply(entry.action)
    if part.is_terminal:
        return
    kind = data.draw(st.sampled_from(list(ActionKind)), label="kind")
    amount = (
        data.draw(st.none() | st.integers(-(2**31), 2**31), label="amount")
        if kind is ActionKind.RAISE
        else None
    )
    action = Action(kind, amount)
    fixed, warning = repair(part, action)
    assert part.verify(fixed) == fixed  # canonical and legal
    try:
        canonical = part.verify(action)
    except IllegalActionError:
        assert warning is not None or (game.is_limit and kind is ActionKind.RAISE)
    else:
        assert (fixed, warning) == (canonical, None)
