"""Reference bots for ``pokerbot play --bot NAME``, and the bot registry.

A player spec names one of these or a strategy file (:mod:`agent.players`).

A bot is any object with ``act(match_state) -> Action`` (or an ``async def act``): it gets
a :class:`agent.protocol.codec.MatchState` (``.state`` for the betting, ``.hole`` and ``.board``
for its cards) whenever it is to act, and whatever it returns is made legal before it is
sent (:func:`agent.protocol.codec.legalize`). Randomness comes from a ``random.Random`` seeded
by the caller, never from the global generator.

* ``random``: the reference ``example_player`` (SPEC §11.2): fold 0.06 (only when folding
  is legal), call 0.47, raise 0.47 (only when raising is legal), normalised over the legal
  ones; no-limit raise-to uniform over ``[min, max]``.
* ``call``: always check or call.
* ``raise``: a pot-sized raise (raise-to = largest bet + the pot after calling), or the
  minimum raise where the pot size is not a legal raise-to; a limit raise in limit games.
* ``allin``: raise as much as allowed.
* ``equity``: Monte-Carlo equity against random hands (as many as there are opponents
  still in) with :func:`poker.evaluator.evaluate`; raises pot with a strong hand, calls
  when the equity beats the pot odds, folds the rest.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Protocol

from poker.cards import deck_cards
from poker.state import Action, State
from solver.play.blind import CALL_WEIGHT, FOLD_WEIGHT, RAISE_WEIGHT, blind_action

from .protocol.codec import MatchState


class Bot(Protocol):
    """What ``pokerbot play`` drives: ``act`` may also be ``async``."""

    def act(self, match_state: MatchState) -> Action:  # pragma: no cover - protocol
        """The action for the state ``match_state``, in which this bot is to act."""
        ...


class CallBot:
    """Always checks or calls."""

    def act(self, match_state: MatchState) -> Action:
        """Check or call."""
        return Action.call()


class RandomBot:
    """The reference ``example_player``: fold 0.06 / call 0.47 / raise 0.47 over the legal ones."""

    FOLD, CALL, RAISE = FOLD_WEIGHT, CALL_WEIGHT, RAISE_WEIGHT

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def act(self, match_state: MatchState) -> Action:
        """A random legal action with example_player's weights (:mod:`solver.play.blind`)."""
        action = blind_action("random", match_state.state, self.rng)
        assert action is not None  # only 'fold' answers None
        return action


def pot_raise_to(state: State) -> int | None:
    """The pot-sized raise-to if it is legal, else the minimum raise-to; ``None`` where
    raising is not legal (:attr:`poker.state.State.pot_raise_to`)."""
    return state.pot_raise_to


class RaiseBot:
    """Raises the pot whenever it may (the minimum where the pot is not a legal size)."""

    def act(self, match_state: MatchState) -> Action:
        """Pot raise, else call."""
        to = pot_raise_to(match_state.state)
        return Action.call() if to is None else Action.raise_to(to)


class AllInBot:
    """Raises as much as it may, else calls."""

    def act(self, match_state: MatchState) -> Action:
        """All-in (the largest legal raise-to), else call."""
        hi = match_state.state.max_raise_to
        return Action.call() if hi is None else Action.raise_to(hi)


class EquityBot:
    """Monte-Carlo equity against random hands; raise strong, call with odds, else fold.

    ``samples`` deals of the unseen cards per decision (opponents still in get random
    hole cards, the board is completed). A tie counts half. With equity at least
    ``raise_equity`` it raises the pot; with equity above the pot odds (``to_call / (pot
    + to_call)``) it calls; otherwise it folds (checks when checking is free).
    """

    def __init__(self, rng: random.Random, samples: int = 200, raise_equity: float = 0.7) -> None:
        self.rng = rng
        self.samples = samples
        self.raise_equity = raise_equity
        self._evaluate: Callable[[Sequence[int]], int] | None = None

    def equity(self, match_state: MatchState) -> float:
        """Estimated share of the pot won at a showdown against random hands."""
        if self._evaluate is None:
            from poker import evaluator

            self._evaluate = evaluator.evaluate
        evaluate = self._evaluate
        state = match_state.state
        game = state.game
        me = match_state.position
        opponents = sum(1 for p in range(game.num_players) if p != me and not state.folded[p])
        hole = list(match_state.hole)
        board = list(match_state.board)
        missing = game.total_board_cards - len(board)
        known = set(hole) | set(board)
        deck = [c for c in deck_cards(game.num_ranks, game.num_suits) if c not in known]
        need = missing + opponents * game.num_hole_cards
        if opponents == 0 or need > len(deck):
            return 1.0
        h = game.num_hole_cards
        sample = self.rng.sample
        won = 0.0
        for _ in range(self.samples):
            cards = sample(deck, need)
            full_board = board + cards[:missing]
            mine = evaluate(hole + full_board)
            ties = 0
            lost = False
            for o in range(opponents):
                theirs = evaluate(cards[missing + o * h : missing + (o + 1) * h] + full_board)
                if theirs > mine:
                    lost = True
                    break
                if theirs == mine:
                    ties += 1
            if not lost:
                won += 1.0 / (ties + 1)
        return won / self.samples

    def act(self, match_state: MatchState) -> Action:
        """Raise with equity >= ``raise_equity``, call with pot odds, else fold."""
        state = match_state.state
        eq = self.equity(match_state)
        if eq >= self.raise_equity:
            to = pot_raise_to(state)
            if to is not None:
                return Action.raise_to(to)
            return Action.call()
        to_call = state.to_call
        if to_call == 0 or eq >= to_call / (state.pot + to_call):
            return Action.call()
        return Action.fold()


def _seeded(seed: int | None) -> random.Random:
    return random.Random(seed)


#: Bot name -> factory taking the seed (``None``: seeded from the system).
BOTS: dict[str, Callable[[int | None], Bot]] = {
    "random": lambda seed: RandomBot(_seeded(seed)),
    "call": lambda seed: CallBot(),
    "raise": lambda seed: RaiseBot(),
    "allin": lambda seed: AllInBot(),
    "equity": lambda seed: EquityBot(_seeded(seed)),
}


class UnknownBotError(ValueError):
    """A bot name that is not in the registry."""


def make_bot(name: str, seed: int | None = None) -> Bot:
    """A new bot by registry name; raises :class:`UnknownBotError` naming the choices."""
    try:
        factory = BOTS[name]
    except KeyError:
        raise UnknownBotError(f"unknown bot {name!r}; choose one of {', '.join(sorted(BOTS))}") from None
    return factory(seed)
