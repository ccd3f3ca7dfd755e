"""Exact best response and exploitability by a public-tree walk over private-hand vectors.

Johanson, Waugh, Bowling and Zinkevich 2011, "Accelerating best response calculation in
large extensive games" (Section 4): walk the public tree once per best-responding player,
carrying the opponent's reach vector over its private hands (its strategy and chance);
at the responder's decision nodes the value of each of its hands is the maximum over
actions of the action values (its information set there is exactly (public state,
hand)); at the opponent's nodes the action values are summed; at terminals the values
against the opponent's vector come from an O(n) sweep over hands sorted by strength, with
card removal (Section 4.2). The opponent's strategy may be defined over buckets of a
card abstraction; the responder always sees its exact hand.

exploitability = (BR_0 + BR_1) / 2 in chips per game, where BR_i is the value of player
i's best response (Johanson et al. 2011, Eq. 1 halved, as OpenSpiel's
``exploitability`` reports it); mbb/g = 1000 * exploitability / big blind.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from poker.game import Game

from . import _kernels as K
from .cfr import Strategy
from .problem import as_game

__all__ = ["Result", "best_response_value", "exploitability", "profile_value"]


@dataclass(frozen=True)
class Result:
    """Exploitability of a strategy profile.

    ``exploitability``: (BR_0 + BR_1) / 2 in chips per game; ``mbb_per_game``: the same
    in milli-big-blinds; ``br``: (BR_0, BR_1), each player's best-response value against
    the other; ``value``: the first player's expected value when both follow the profile.
    """

    exploitability: float
    mbb_per_game: float
    br: tuple[float, float]
    value: float


def _walk(strategy: Strategy, player: int, mode: int) -> float:
    p = strategy.problem
    if strategy.policy.shape != (p.size,):
        raise ValueError(f"policy has shape {strategy.policy.shape}, the tree needs ({p.size},)")
    if player not in (0, 1):
        raise ValueError(f"player {player} is not 0 or 1")
    b = p.buffers()
    policy = np.ascontiguousarray(strategy.policy, dtype=np.float64)
    dummy = np.zeros(1)
    return float(
        K.root_value(
            p.ktree,
            p.kchance,
            player,
            mode,
            policy,
            dummy,
            dummy,
            0.0,
            b.vals,
            b.rbuf,
            b.cs,
            b.frames,
        )
    )


def best_response_value(strategy: Strategy, player: int) -> float:
    """Value (chips per game) of ``player``'s best response to the other player's part of ``strategy``."""
    return _walk(strategy, player, K.MODE_BR)


def profile_value(strategy: Strategy, player: int = 0) -> float:
    """Expected value (chips per game) of ``player`` when both players follow ``strategy``."""
    return _walk(strategy, player, K.MODE_EV)


def exploitability(game: Game | str | Path | None, strategy: Strategy) -> Result:
    """Exploitability of ``strategy`` (and both best-response values and the profile's value).

    ``game`` (or None) must be the game the strategy was made for.
    """
    if game is not None and as_game(game) != strategy.game:
        raise ValueError("the strategy was made for a different game")
    br0 = best_response_value(strategy, 0)
    br1 = best_response_value(strategy, 1)
    expl = (br0 + br1) / 2.0
    return Result(
        exploitability=expl,
        mbb_per_game=1000.0 * expl / strategy.game.big_blind,
        br=(br0, br1),
        value=profile_value(strategy, 0),
    )
