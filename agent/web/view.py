"""What the page shows, computed from ACPC states alone (no I/O): the JSON of the table.

Every figure comes from the rules engine (:class:`poker.state.State`): the legal range
of a raise, the amount to call, the pot, the stacks; the page only draws it. Amounts are
chips, raise amounts are raise-to (the player's total in the pot this hand, as ACPC and
the rules count them), each also in big blinds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from poker.cards import card_to_str
from poker.game import Game
from poker.state import ActionKind, LoggedAction, State

from ..protocol.codec import MatchState

__all__ = [
    "action_text",
    "button_position",
    "cards",
    "game_view",
    "hand_result",
    "legal_view",
    "seat_views",
    "street_name",
    "streets_view",
]

#: Pot fractions offered as shortcuts for a no-limit raise (of the pot after calling).
POT_SHORTCUTS: tuple[tuple[str, float], ...] = (("½ pot", 0.5), ("¾ pot", 0.75), ("pot", 1.0), ("2× pot", 2.0))


def cards(seq: Sequence[int]) -> list[str]:
    """Cards as two-character strings (``"As"``)."""
    return [card_to_str(c) for c in seq]


def street_name(game: Game, round_: int) -> str:
    """``preflop``, ``flop``, ``turn``, ``river`` for hold'em's four rounds; Leduc's two are
    ``preflop`` and ``flop``; other round counts are numbered."""
    names = ("preflop", "flop", "turn", "river")
    return names[round_] if game.num_rounds <= 4 else f"round {round_ + 1}"


def button_position(game: Game) -> int:
    """The heads-up button: the position that acts last after the first round (ACPC's
    reverse blinds: the small blind)."""
    last_first = game.first_player[-1]
    return (last_first + game.num_players - 1) % game.num_players


def game_view(game: Game, label: str | None = None) -> dict[str, Any]:
    """The game's facts the page needs."""
    blinds = sorted(set(game.blind))
    return {
        "name": game.name,
        "label": label or game.name,
        "limit": game.is_limit,
        "big_blind": game.big_blind,
        "small_blind": blinds[0] if len(blinds) > 1 else game.big_blind,
        "stack": game.stack[0] if not game.is_limit else None,
        "unit": "chips",
    }


def _bb(game: Game, chips: float) -> float:
    return round(chips / game.big_blind, 2)


def _facing_a_bet(state: State) -> bool:
    """A raise here raises a bet (someone raised this round, or the first round's blinds
    stand); otherwise it is the round's first bet."""
    return any(a.action.kind is ActionKind.RAISE for a in state.actions[-1]) or (
        state.round == 0 and state.max_spent > 0)


def action_text(before: State, logged: LoggedAction) -> str:
    """How a player would say an action: ``folds``, ``checks``, ``calls 200``, ``bets 300``,
    ``raises to 900``, ``goes all-in for 20000`` (amounts are raise-to, the hand's total)."""
    kind = logged.action.kind
    if kind is ActionKind.FOLD:
        return "folds"
    p = logged.actor
    if kind is ActionKind.CALL:
        owed = min(before.max_spent, before.game.stack[p]) - before.spent[p]
        return "checks" if owed == 0 else f"calls {owed}"
    to = logged.action.amount
    if to is None:  # a limit raise as logged without its amount
        to = min(before.max_spent + before.game.raise_size[before.round], before.game.stack[p])
    if not before.game.is_limit and to >= before.game.stack[p]:
        return f"goes all-in for {to}"
    return f"raises to {to}" if _facing_a_bet(before) else f"bets {to}"


def streets_view(ms: MatchState, who: Sequence[str]) -> list[dict[str, Any]]:
    """The hand's actions street by street: ``who[position]`` names each actor."""
    game = ms.game
    state = State.new_hand(game)
    out: list[dict[str, Any]] = []
    board: list[int] = []
    for r, round_actions in enumerate(ms.state.actions):
        if r < len(ms.boards):
            board += ms.boards[r]
        entry: dict[str, Any] = {"name": street_name(game, r), "board": cards(board), "actions": []}
        for logged in round_actions:
            after = state.apply(logged.action)
            p = logged.actor
            # a call: the chips it put in, as its text says; a raise: its raise-to; a fold: the chips in
            chips = after.spent[p] - state.spent[p] if logged.action.kind is ActionKind.CALL else after.spent[p]
            entry["actions"].append({"who": who[p], "text": action_text(state, logged), "chips": chips,
                                     "bb": _bb(game, chips)})
            state = after
        out.append(entry)
    return out


def legal_view(state: State) -> dict[str, Any] | None:
    """The actor's legal actions, as the action bar offers them; None when nobody acts."""
    p = state.actor
    if p is None:
        return None
    game = state.game
    owed = state.to_call
    lo, hi = state.min_raise_to, state.max_raise_to
    view: dict[str, Any] = {
        "fold": state.can_fold(),
        "call": True,
        "call_text": "check" if owed == 0 else f"call {owed}",
        "raise": lo is not None,
        "raise_text": "raise" if _facing_a_bet(state) else "bet",
        "min_to": lo,
        "max_to": hi,
        "limit": game.is_limit,
        "shortcuts": [],
    }
    if lo is None or hi is None or game.is_limit:
        return view
    pot_after_call = state.pot + owed
    seen: set[int] = set()
    shortcuts = []
    for label, fraction in POT_SHORTCUTS:
        to = state.max_spent + int(round(fraction * pot_after_call))
        if lo <= to < hi and to not in seen:
            seen.add(to)
            shortcuts.append({"label": label, "to": to})
    shortcuts.append({"label": "all-in", "to": hi})
    if lo < hi and lo not in seen:
        shortcuts.insert(0, {"label": "min", "to": lo})
    view["shortcuts"] = shortcuts
    return view


def seat_views(ms: MatchState, who: Sequence[str], names: Sequence[str], seat_of: Sequence[int]) -> list[dict[str, Any]]:
    """Both seats as the page draws them, in seat order (``seat_of[position]``): the
    person's own cards always, another's only once shown."""
    game = ms.game
    state = ms.state
    button = button_position(game)
    big = game.big_blind
    out: list[dict[str, Any] | None] = [None] * game.num_players
    for p in range(game.num_players):
        blind = game.blind[p]
        blind_name = "big blind" if blind == big and blind > 0 and len(set(game.blind)) > 1 else (
            "small blind" if 0 < blind < big else ("ante" if blind > 0 else ""))
        out[seat_of[p]] = {
            "who": who[p],
            "name": names[p],
            "button": p == button,
            "blind": blind,
            "blind_name": blind_name,
            "cards": cards(ms.holes[p]),
            "stack": game.stack[p] - state.spent[p],
            "bet": state.spent[p],
            "folded": state.folded[p],
            "all_in": state.spent[p] >= game.stack[p],
        }
    return [s for s in out if s is not None]


def _says(name: str, verb: str) -> str:
    """``"you win"`` but ``"bot wins"``."""
    return f"{name} {verb}" if name == "you" else f"{name} {verb}s"


def hand_result(ms: MatchState, value: float | None, who: Sequence[str]) -> dict[str, Any]:
    """The finished hand from the receiver's side: ``value`` its chips won (the client's
    count), what was shown and who took the pot."""
    game = ms.game
    state = ms.state
    me = ms.position
    board = ms.board
    pot = state.pot
    shown = [p for p in range(game.num_players) if ms.holes[p] and not state.folded[p]]
    showdown = []
    if len(shown) > 1:
        from poker.hand_names import hand_name  # the evaluator's tables, built on first use
        showdown = [{"who": who[p], "cards": cards(ms.holes[p]),
                     "hand_name": hand_name(ms.holes[p] + board)} for p in shown]
    chips = float(value) if value is not None else 0.0
    other = next(p for p in range(game.num_players) if p != me)
    if chips > 0:
        winner = who[me]
    elif chips < 0:
        winner = who[other]
    else:
        winner = "split"
    if state.folded[me] or state.folded[other]:
        folder, taker = (me, other) if state.folded[me] else (other, me)
        text = f"{_says(who[folder], 'fold')}; {_says(who[taker], 'win')} {pot}"
    elif winner == "split":
        named = showdown[0]["hand_name"] if showdown else "equal hands"
        text = f"split pot of {pot}: both have {named}"
    else:
        w = me if winner == who[me] else other
        named = next((s["hand_name"] for s in showdown if s["who"] == who[w]), None)
        if named and len(shown) == 2:  # the same name on both sides: the card that decided
            from poker.hand_names import kicker

            loser = other if w == me else me
            deciding = kicker(ms.holes[w] + board, ms.holes[loser] + board)
            named += f", {deciding} kicker" if deciding else ""
        text = f"{_says(who[w], 'win')} {pot}" + (f" with {named}" if named else "")
    return {
        "hand": ms.hand_number + 1,
        "chips": chips,
        "text": text,
        "showdown": showdown,
        "board": cards(board),
        "pot": pot,
        "winner": winner,
    }
