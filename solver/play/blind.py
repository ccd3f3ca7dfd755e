"""Card-blind policies: the reference bots that never look at their cards, as functions
of the real betting state.

``agent.bots`` plays them over the wire and :mod:`solver.evaluation.lbr` plays local best response
against them without sockets; both take the rules from here, so a bot's behaviour has
one definition.

* ``fold``: folds at its first decision, even where a check is free (``None`` is
  returned there: the caller ends the hand, as a dealer would not let it fold);
* ``call``: always checks or calls;
* ``raise``: the pot-sized raise where it is legal, the minimum raise otherwise
  (:attr:`poker.state.State.pot_raise_to`), else a call;
* ``allin``: the largest legal raise, else a call;
* ``random``: the reference ``example_player`` (ACPC): fold 0.06 (only where folding is
  legal), call 0.47, raise 0.47 (only where raising is legal), normalised over the legal
  ones; a no-limit raise-to uniform over the legal range.
"""

from __future__ import annotations

import random

from poker.state import Action, State

__all__ = ["BLIND_BOTS", "CALL_WEIGHT", "FOLD_WEIGHT", "RAISE_WEIGHT", "blind_action", "fold_probability"]

BLIND_BOTS = ("fold", "call", "raise", "allin", "random")
#: ``example_player``'s weights of folding, calling and raising.
FOLD_WEIGHT, CALL_WEIGHT, RAISE_WEIGHT = 0.06, 0.47, 0.47


def blind_action(name: str, state: State, rng: random.Random) -> Action | None:
    """The action of card-blind bot ``name`` at ``state`` (its turn); ``rng`` is drawn from
    only by ``random`` (one number, and one more for a no-limit raise size). ``None``:
    ``fold`` where folding is not legal."""
    if name == "fold":
        return Action.fold() if state.can_fold() else None
    if name == "call":
        return Action.call()
    if name == "raise":
        to = state.pot_raise_to
        return Action.call() if to is None else Action.raise_to(to)
    if name == "allin":
        hi = state.max_raise_to
        return Action.call() if hi is None else Action.raise_to(hi)
    if name != "random":
        raise ValueError(f"unknown bot {name!r}; choose one of {', '.join(BLIND_BOTS)}")
    fold = FOLD_WEIGHT if state.can_fold() else 0.0
    lo, hi = state.min_raise_to, state.max_raise_to
    raise_ = RAISE_WEIGHT if lo is not None else 0.0
    x = rng.random() * (fold + CALL_WEIGHT + raise_)
    if x < fold:
        return Action.fold()
    if x < fold + CALL_WEIGHT or lo is None or hi is None:
        return Action.call()
    if state.game.is_limit:
        return Action.raise_to(lo)
    return Action.raise_to(rng.randint(lo, hi))


def fold_probability(name: str, state: State) -> float:
    """The probability that card-blind bot ``name`` folds at ``state`` (its turn)."""
    if name == "fold":
        return 1.0
    if name == "random" and state.can_fold():
        return FOLD_WEIGHT / (FOLD_WEIGHT + CALL_WEIGHT + (RAISE_WEIGHT if state.can_raise() else 0.0))
    return 0.0
