"""The reference bots: legal actions everywhere, the advertised frequencies and sizes.

Sampled checks use fixed seeds; the tolerances are several standard deviations wide
(e.g. 20,000 draws of a 0.47 frequency have a standard deviation of 0.0035, the
tolerance is 0.02).
"""

from __future__ import annotations

import random
import statistics

import pytest

from agent.bots import (
    BOTS,
    AllInBot,
    CallBot,
    EquityBot,
    RaiseBot,
    RandomBot,
    UnknownBotError,
    make_bot,
    pot_raise_to,
)
from agent.protocol.codec import MatchState
from poker.cards import parse_cards
from poker.game import load_game, shipped_games
from poker.rng import MT19937, deal_hand
from poker.state import Action, ActionKind, Deal, State

NL2 = load_game("holdem.nolimit.2p.reverse_blinds")
L2 = load_game("holdem.limit.2p.reverse_blinds")


def view(state: State, deal: Deal, hand: int = 0) -> MatchState:
    """What the player to act sees: its own cards and the board so far."""
    me = state.actor
    assert me is not None
    holes = tuple(h if p == me else () for p, h in enumerate(deal.holes))
    return MatchState(me, hand, state, holes, deal.boards[: state.round + 1])


def random_decisions(game, count: int, seed: int):
    """``count`` (state, deal) decision points from random play in ``game``."""
    rng = random.Random(seed)
    cards = MT19937(seed)
    out = []
    while len(out) < count:
        deal = deal_hand(cards, game)
        state = State.new_hand(game)
        while not state.is_terminal:
            out.append((state, deal))
            lo, hi = state.min_raise_to, state.max_raise_to
            x = rng.random()
            if x < 0.1 and state.can_fold():
                state = state.fold()
            elif x < 0.45 and lo is not None:
                state = state.raise_to(rng.randint(lo, hi) if not game.is_limit else None)
            else:
                state = state.call()
    return out[:count]


def test_registry():
    assert set(BOTS) == {"random", "call", "raise", "allin", "equity"}
    for name in BOTS:
        assert hasattr(make_bot(name, 1), "act")
    with pytest.raises(UnknownBotError, match="choose one of"):
        make_bot("nope")
    assert issubclass(UnknownBotError, ValueError)  # the CLI reports it as a user error


@pytest.mark.parametrize("game_name", shipped_games())
def test_every_bot_acts_legally_everywhere(game_name: str) -> None:
    game = load_game(game_name)
    bots = [make_bot(name, 3) for name in sorted(BOTS)]
    for bot in bots:
        if isinstance(bot, EquityBot):
            bot.samples = 20
    for state, deal in random_decisions(game, 300, seed=len(game_name)):
        ms = view(state, deal)
        for bot in bots:
            state.verify(bot.act(ms))  # raises if illegal: our bots never need legalizing


def test_call_bot():
    state = State.new_hand(NL2)
    assert CallBot().act(view(state, deal_hand(MT19937(1), NL2))) == Action.call()


def _frequencies(bot: RandomBot, ms: MatchState, n: int) -> dict[ActionKind, float]:
    kinds = [bot.act(ms).kind for _ in range(n)]
    return {k: kinds.count(k) / n for k in ActionKind}


def test_random_bot_matches_example_player():
    deal = deal_hand(MT19937(2), NL2)
    facing = State.from_betting(NL2, "r300")  # fold, call and raise all legal
    freq = _frequencies(RandomBot(random.Random(1)), view(facing, deal), 20000)
    assert freq[ActionKind.FOLD] == pytest.approx(0.06, abs=0.01)
    assert freq[ActionKind.CALL] == pytest.approx(0.47, abs=0.02)
    assert freq[ActionKind.RAISE] == pytest.approx(0.47, abs=0.02)
    free = State.from_betting(NL2, "c")  # folding is not legal: call and raise share evenly
    freq = _frequencies(RandomBot(random.Random(2)), view(free, deal), 20000)
    assert freq[ActionKind.FOLD] == 0 and freq[ActionKind.CALL] == pytest.approx(0.5, abs=0.02)
    capped = State.from_betting(L2, "rrr")  # no raise left: fold 0.06 / call 0.47, normalised
    freq = _frequencies(RandomBot(random.Random(3)), view(capped, deal), 20000)
    assert freq[ActionKind.FOLD] == pytest.approx(0.06 / 0.53, abs=0.02) and freq[ActionKind.RAISE] == 0


def test_random_bot_sizes_are_uniform_and_seeded():
    deal = deal_hand(MT19937(2), NL2)
    ms = view(State.from_betting(NL2, "r300"), deal)
    bot = RandomBot(random.Random(4))
    sizes = [a.amount for a in (bot.act(ms) for _ in range(20000)) if a.kind is ActionKind.RAISE]
    lo, hi = ms.state.min_raise_to, ms.state.max_raise_to
    assert min(sizes) >= lo and max(sizes) <= hi
    assert statistics.mean(sizes) == pytest.approx((lo + hi) / 2, rel=0.02)
    one = [RandomBot(random.Random(9)).act(ms) for _ in range(1)]
    two = [RandomBot(random.Random(9)).act(ms) for _ in range(1)]
    assert one == two


@pytest.mark.parametrize(
    ("betting", "expected"),
    [
        ("", 300),  # small blind first in: 100 + pot 150 + 50 to call
        ("r300", 900),  # 300 + pot 400 + 200 to call
        ("cc/", 300),  # flop, pot 200: bet the pot
        ("r300c/r600", 1800),  # a flop bet of 300 (to 600): 600 + pot 900 + 300 to call
        ("r300r900r2700r8100", 13500),  # the pot size 24300 is above the stack: min-raise
    ],
)
def test_raise_bot_sizes(betting: str, expected: int) -> None:
    state = State.from_betting(NL2, betting)
    assert pot_raise_to(state) == expected
    assert RaiseBot().act(view(state, deal_hand(MT19937(1), NL2))) == Action.raise_to(expected)


def test_raise_and_allin_call_when_raising_is_over():
    state = State.from_betting(NL2, "r20000")
    ms = view(state, deal_hand(MT19937(1), NL2))
    assert RaiseBot().act(ms) == Action.call() and AllInBot().act(ms) == Action.call()
    assert AllInBot().act(view(State.new_hand(NL2), ms_deal := deal_hand(MT19937(1), NL2))) == Action.raise_to(20000)
    assert RaiseBot().act(view(State.from_betting(L2, ""), ms_deal)) == Action.raise_to(20)


def _deal_with(game, hole: str, opp: str = "", board: str = "") -> Deal:
    """A deal where the player at position 1 (small blind, first to act) holds ``hole``."""
    used = set(parse_cards(hole + opp + board))
    rest = [c for c in range(52) if c not in used]
    opp_cards = parse_cards(opp) or rest[:2]
    rest = [c for c in rest if c not in opp_cards]
    boards = parse_cards(board) + rest[: 5 - len(parse_cards(board))]
    return Deal((tuple(opp_cards), tuple(parse_cards(hole))), ((), tuple(boards[:3]), (boards[3],), (boards[4],)))


def test_equity_bot():
    bot = EquityBot(random.Random(1), samples=2000)
    aces = view(State.new_hand(NL2), _deal_with(NL2, "AsAh"))
    assert bot.equity(aces) == pytest.approx(0.85, abs=0.03)  # AA against a random hand
    assert bot.act(aces).kind is ActionKind.RAISE
    junk = view(State.from_betting(NL2, "r300r20000"), _deal_with(NL2, "7c2d"))
    assert junk.position == 1 and bot.act(junk) == Action.fold()  # 7-2 facing all-in: no odds
    # a free check is never folded
    deal = _deal_with(NL2, "7c2d")
    checked = State.from_betting(NL2, "c")
    ms = MatchState(0, 0, checked, ((deal.holes[0]), ()), ((),))
    assert bot.act(ms).kind in (ActionKind.CALL, ActionKind.RAISE)


def test_equity_bot_is_seeded():
    ms = view(State.new_hand(NL2), _deal_with(NL2, "KsQd"))
    a = EquityBot(random.Random(5), samples=300).equity(ms)
    b = EquityBot(random.Random(5), samples=300).equity(ms)
    assert a == b
