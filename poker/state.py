"""The state of one hand, as the reference ACPC dealer's state machine defines it (SPEC §4-5).

A :class:`State` is a small immutable value: the game, the cards (optional) and the
action log; everything else (chips put in, folds, the round, who acts, the no-limit
minimum raise) follows from the log and is cached on the object. Transitions follow
pokerkit's "verify, can, apply": :meth:`State.verify` raises
:class:`IllegalActionError` naming the rule and the numbers, ``can_*`` are booleans and
:meth:`State.apply` returns a new state. The ACPC betting string is derived from the
log (:meth:`State.betting_string`) and read back by :meth:`State.from_betting`.

The rules, as the reference dealer applies them (N players, p = the player to act):

* ``spent[p]`` starts at ``blind[p]``; all-in means ``spent[p] >= stack[p]``; active
  means neither folded nor all-in.
* The no-limit minimum raise-to (the dealer's ``minNoLimitRaiseTo``, here
  :attr:`State.raise_floor`) is ``2 * max(blind)`` (1 if every blind is 0) at the start
  of the hand, and ``max(1, max(blind)) + maxSpent`` at the start of every later round.
* Call is always legal: ``spent[p] = min(maxSpent, stack[p])``. Fold is legal only if
  ``spent[p] < maxSpent``.
* Raise is legal only if fewer than ``maxRaises[round]`` raises were made this round,
  (actions this round) + N <= 64, at least two players are active, and the actor's stack
  exceeds ``maxSpent``. No-limit sizes are raise-to totals in ``[floor, stack[p]]``
  (just ``stack[p]`` when the floor is above it); a raise to S sets the floor to
  ``2S - maxSpent`` if that is larger. A limit raise is to ``maxSpent + raiseSize[round]``,
  capped at the stack.
* Who acts: the first active player at or after ``firstPlayer[round]`` when the round
  has no actions yet, else the first active player after the last actor.
* After each action: if all but one folded, the hand is over. Otherwise ``called`` is
  counted back through the round's actions (each call by a player not all-in counts 1;
  the most recent raise counts 1 if its maker is not all-in, and stops the walk); when
  ``called >= active`` the round ends: next round if at least 2 are active and a round
  is left, showdown after the last round, and a jump straight to the last round
  (showdown) when fewer than 2 are active.
* Values (§5.1): a folder loses what it put in; a lone survivor wins everything else;
  a showdown is settled one pot layer at a time, the best hand among the non-folded
  players in the layer splitting it equally.

One deliberate difference: the reference dealer lets a limit player "raise" when the
largest bet already covers their stack, which would *lower* the largest bet. Here that
raise is illegal (a call puts the same chips in). No shipped game can reach the case.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from .betting import (
    CALL_ACTION,
    FOLD_ACTION,
    Action,
    ActionKind,
    BettingSyntax,
    BettingSyntaxError,
    IllegalActionError,
    read_betting,
)
from .cards import DECK_SIZE, card_to_str, deck_cards, format_cards
from .game import Game

__all__ = [
    "MAX_ACTIONS_PER_ROUND",
    "Action",
    "ActionKind",
    "BettingSyntaxError",
    "Deal",
    "IllegalActionError",
    "LoggedAction",
    "State",
    "repair",
]

_FOLD = ActionKind.FOLD
_CALL = ActionKind.CALL
_RAISE = ActionKind.RAISE
_FOLD_ACTION = FOLD_ACTION
_CALL_ACTION = CALL_ACTION

#: The reference dealer's MAX_NUM_ACTIONS: the most actions one round can hold.
MAX_ACTIONS_PER_ROUND = 64


class LoggedAction(NamedTuple):
    """One entry of a hand's log: who acted (position) and the canonical action applied."""

    actor: int
    action: Action

    @property
    def kind(self) -> ActionKind:
        """The action's kind."""
        return self.action.kind

    @property
    def amount(self) -> int | None:
        """The raise-to total (also filled in for limit raises), or ``None``."""
        return self.action.amount


@dataclass(frozen=True, slots=True)
class Deal:
    """The cards of one hand, all drawn at the start (SPEC §9.3).

    ``holes[p]`` are position p's hole cards; ``boards[r]`` the board cards revealed in
    round r (possibly empty, e.g. hold'em's round 0).
    """

    holes: tuple[tuple[int, ...], ...]
    boards: tuple[tuple[int, ...], ...]

    def __post_init__(self) -> None:
        # Accept lists for convenience but store tuples, so that deals hash and compare.
        object.__setattr__(self, "holes", tuple(tuple(int(c) for c in h) for h in self.holes))
        object.__setattr__(self, "boards", tuple(tuple(int(c) for c in b) for b in self.boards))
        cards = [c for h in self.holes for c in h] + [c for b in self.boards for c in b]
        if any(not 0 <= c < 52 for c in cards):
            raise ValueError(f"deal has a card outside 0..51: {cards}")
        if len(set(cards)) != len(cards):
            raise ValueError(f"deal repeats a card: {format_cards(cards)}")

    @staticmethod
    def _trusted(holes: tuple[tuple[int, ...], ...], boards: tuple[tuple[int, ...], ...]) -> Deal:
        """A deal from tuples already known to be distinct cards (skips the checks)."""
        d = object.__new__(Deal)
        object.__setattr__(d, "holes", holes)
        object.__setattr__(d, "boards", boards)
        return d

    def board_through(self, round_: int) -> tuple[int, ...]:
        """Board cards revealed in rounds ``0..round_``."""
        return tuple(c for b in self.boards[: round_ + 1] for c in b)

    def check_fits(self, game: Game) -> None:
        """Raise ``ValueError`` unless the deal has the shape ``game`` needs."""
        if len(self.holes) != game.num_players or any(
            len(h) != game.num_hole_cards for h in self.holes
        ):
            raise ValueError(
                f"deal has hole cards {[len(h) for h in self.holes]}, the game needs "
                f"{game.num_hole_cards} for each of {game.num_players} players"
            )
        if tuple(len(b) for b in self.boards) != game.num_board_cards:
            raise ValueError(
                f"deal has board cards {[len(b) for b in self.boards]} per round, "
                f"the game needs {list(game.num_board_cards)}"
            )
        deck = _deck_set(game.num_ranks, game.num_suits)
        if len(deck) == DECK_SIZE:
            return  # a deal's cards are cards (0..51): all in the full deck
        outside = [c for h in self.holes for c in h if c not in deck] + [
            c for b in self.boards for c in b if c not in deck
        ]
        if outside:
            raise ValueError(
                f"cards {' '.join(card_to_str(c) for c in outside)} are not in this game's "
                f"{game.num_ranks}x{game.num_suits} deck"
            )

    def __str__(self) -> str:
        """The ACPC cards field with every card: ``7d3d|2hAc/5sKs7s/9s/6h``."""
        return "|".join(format_cards(h) for h in self.holes) + "/".join(
            format_cards(b) for b in self.boards
        )


@functools.cache
def _deck_set(num_ranks: int, num_suits: int) -> frozenset[int]:
    return frozenset(deck_cards(num_ranks, num_suits))


@dataclass(frozen=True, slots=True)
class State:
    """One hand's state: the game, the cards and the action log; the rest is derived.

    Build one with :meth:`new_hand` (blinds posted) and move with :meth:`apply`; or
    :meth:`from_betting` to replay an ACPC betting string. Constructing ``State(game,
    actions, deal)`` directly replays and checks the whole log.

    Only ``game``, ``actions`` and ``deal`` take part in equality and hashing; the other
    fields are the log's consequences:

    * ``round``: the current round (0-based); for a finished hand, the round it ended in
      (the last round after an all-in jump or a showdown).
    * ``spent``: chips each position has put in this hand (blinds included).
    * ``folded``: per position.
    * ``max_spent``: ``max(spent)``.
    * ``raise_floor``: the dealer's no-limit minimum raise-to (``minNoLimitRaiseTo``);
      :attr:`min_raise_to` is what the actor may actually raise to.
    * ``actor``: the position to act, ``None`` when the hand is over.
    * ``is_terminal``: the hand is over.

    >>> from poker.game import load_game
    >>> s = State.new_hand(load_game("holdem.nolimit.2p.reverse_blinds"))
    >>> s.actor, s.spent, s.min_raise_to, s.max_raise_to
    (1, (100, 50), 200, 20000)
    >>> s = s.raise_to(300).call()
    >>> s.betting_string(), s.round, s.actor, s.min_raise_to
    ('r300c/', 1, 0, 400)
    >>> State.from_betting(s.game, "r300c/r20000f").values()
    (300.0, -300.0)
    >>> State.from_betting(s.game, "r300c/r20000c//").values()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: the hand ends in a showdown (betting 'r300c/r20000c//') and this state has no ...
    """

    game: Game
    #: One tuple per round 0..round; a round just reached has an empty tuple.
    actions: tuple[tuple[LoggedAction, ...], ...] = ((),)
    deal: Deal | None = None
    round: int = field(init=False, compare=False)
    spent: tuple[int, ...] = field(init=False, compare=False, repr=False)
    folded: tuple[bool, ...] = field(init=False, compare=False, repr=False)
    max_spent: int = field(init=False, compare=False, repr=False)
    raise_floor: int = field(init=False, compare=False, repr=False)
    actor: int | None = field(init=False, compare=False, repr=False)
    is_terminal: bool = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        # Validation at construction: replay the log from the blinds and check that every
        # entry names the player who was to act and that the rounds break where they must.
        replay = State.new_hand(self.game, self.deal)
        actions = tuple(tuple(r) for r in self.actions) or ((),)
        for r, round_actions in enumerate(actions):
            for entry in round_actions:
                actor, action = entry
                if replay.round != r:
                    raise IllegalActionError(
                        f"the log has an action in round {r} but the hand is in round "
                        f"{replay.round} there (betting {replay.betting_string()!r})"
                    )
                if replay.actor != actor:
                    raise IllegalActionError(
                        f"the log has position {actor} acting after {replay.betting_string()!r}, "
                        f"but position {replay.actor} is to act there"
                    )
                replay = replay.apply(action)
        if replay.round != len(actions) - 1:
            raise IllegalActionError(
                f"the log ends in round {len(actions) - 1} but its actions bring the hand to "
                f"round {replay.round} (betting {replay.betting_string()!r})"
            )
        for name in (
            "actions",
            "round",
            "spent",
            "folded",
            "max_spent",
            "raise_floor",
            "actor",
            "is_terminal",
        ):
            object.__setattr__(self, name, getattr(replay, name))

    # ------------------------------------------------------------------ construction

    @staticmethod
    def _make(
        game: Game,
        actions: tuple[tuple[LoggedAction, ...], ...],
        deal: Deal | None,
        round_: int,
        spent: tuple[int, ...],
        folded: tuple[bool, ...],
        max_spent: int,
        raise_floor: int,
        actor: int | None,
    ) -> State:
        """Build a state from already-checked parts (skips the replay of ``__init__``).

        Every dealt action goes through here (dealer and client alike), so the fields are
        set through their slot descriptors: a third cheaper than ``object.__setattr__``.
        """
        s = _new_object(State)
        _set_game(s, game)
        _set_actions(s, actions)
        _set_deal(s, deal)
        _set_round(s, round_)
        _set_spent(s, spent)
        _set_folded(s, folded)
        _set_max_spent(s, max_spent)
        _set_raise_floor(s, raise_floor)
        _set_actor(s, actor)
        _set_is_terminal(s, actor is None)
        return s

    def with_deal(self, deal: Deal | None) -> State:
        """This state (the same betting) with other cards, e.g. a client's state once the
        showdown has shown them. Only the deal's shape is checked (betting never depends
        on the cards); much cheaper than replaying the log through the constructor.
        """
        if deal is not None:
            deal.check_fits(self.game)
        return State._make(
            self.game, self.actions, deal, self.round, self.spent, self.folded,
            self.max_spent, self.raise_floor, self.actor,
        )

    @staticmethod
    def new_hand(game: Game, deal: Deal | None = None) -> State:
        """The state at the start of a hand: blinds posted, nobody has acted."""
        if deal is not None:
            deal.check_fits(game)
        spent = tuple(game.blind)
        folded = (False,) * game.num_players
        max_spent = max(spent)
        floor = 2 * max_spent if max_spent > 0 else 1
        actor = _first_actor(game, 0, spent, folded)
        if actor is None:
            # Every player is all-in from the blinds. The reference dealer would loop for
            # ever looking for someone to act; here the hand goes straight to a showdown.
            rounds = game.num_rounds
            return State._make(
                game, ((),) * rounds, deal, rounds - 1, spent, folded, max_spent, floor, None
            )
        return State._make(game, ((),), deal, 0, spent, folded, max_spent, floor, actor)

    # ------------------------------------------------------------------ derived facts

    @property
    def num_players(self) -> int:
        """Players in the hand."""
        return self.game.num_players

    @property
    def pot(self) -> int:
        """Chips put in by everyone so far."""
        return sum(self.spent)

    @property
    def all_in(self) -> tuple[bool, ...]:
        """Per position: has put in its whole stack."""
        return tuple(s >= st for s, st in zip(self.spent, self.game.stack))

    @property
    def active(self) -> tuple[bool, ...]:
        """Per position: neither folded nor all-in (can still act)."""
        return tuple(not f and s < st for f, s, st in zip(self.folded, self.spent, self.game.stack))

    @property
    def num_active(self) -> int:
        """Players who can still act."""
        return _num_active(self.game, self.spent, self.folded)

    @property
    def num_folded(self) -> int:
        """Players who folded."""
        return sum(self.folded)

    @property
    def round_actions(self) -> tuple[LoggedAction, ...]:
        """The actions of the current round so far."""
        return self.actions[-1]

    @property
    def history(self) -> tuple[LoggedAction, ...]:
        """Every action of the hand, in order."""
        return tuple(a for r in self.actions for a in r)

    @property
    def num_raises_in_round(self) -> int:
        """Raises made in the current round (blinds are not raises)."""
        return sum(1 for a in self.actions[-1] if a.action.kind is _RAISE)

    def stack_left(self, position: int) -> int:
        """Chips ``position`` has not yet put in."""
        return self.game.stack[position] - self.spent[position]

    @property
    def to_call(self) -> int:
        """Chips the actor must add to call (0 for a check, or when the hand is over)."""
        p = self.actor
        if p is None:
            return 0
        return min(self.max_spent, self.game.stack[p]) - self.spent[p]

    # ------------------------------------------------------------------ can

    def can_fold(self) -> bool:
        """Folding is legal: someone to act who faces a bet (never when a check is free)."""
        p = self.actor
        return p is not None and self.spent[p] < self.max_spent

    def can_call(self) -> bool:
        """Checking or calling is legal: always, while the hand is on."""
        return self.actor is not None

    def can_raise(self) -> bool:
        """Raising is legal for the actor (some raise-to is allowed)."""
        return self._raise_block() is None

    def _raise_block(self) -> str | None:
        """Why the actor may not raise (a message naming the rule), or ``None`` if it may."""
        p = self.actor
        if p is None:
            return "the hand is over"
        game = self.game
        round_actions = self.actions[-1]
        raises = 0
        for a in round_actions:
            if a.action.kind is _RAISE:
                raises += 1
        cap = game.max_raises[self.round]
        if raises >= cap:
            return f"{raises} raises were already made in round {self.round}; the game allows {cap}"
        n = game.num_players
        if len(round_actions) + n > MAX_ACTIONS_PER_ROUND:
            return (
                f"round {self.round} already has {len(round_actions)} actions; with {n} players "
                f"the dealer allows a raise only up to {MAX_ACTIONS_PER_ROUND - n}"
            )
        if _num_active(game, self.spent, self.folded) < 2:
            return "fewer than 2 players can still act (the others folded or are all-in)"
        stack = game.stack[p]
        if self.max_spent >= stack:
            return f"the largest bet {self.max_spent} already covers position {p}'s stack {stack}"
        return None

    @property
    def pot_raise_to(self) -> int | None:
        """The pot-sized raise-to (largest bet + the pot after calling) where it is legal,
        else the minimum raise-to; the limit raise in limit games; ``None`` where raising
        is not legal."""
        bounds = self._raise_bounds()
        if bounds is None:
            return None
        lo, hi = bounds
        if self.game.is_limit:
            return lo
        target = self.max_spent + self.pot + self.to_call
        return target if lo <= target <= hi else lo

    @property
    def min_raise_to(self) -> int | None:
        """The smallest legal raise-to for the actor, ``None`` if raising is not legal.

        For a limit game it is the one raise-to allowed (``maxSpent + raiseSize``, capped
        at the stack).
        """
        bounds = self._raise_bounds()
        return None if bounds is None else bounds[0]

    @property
    def max_raise_to(self) -> int | None:
        """The largest legal raise-to for the actor (its stack in no-limit), or ``None``."""
        bounds = self._raise_bounds()
        return None if bounds is None else bounds[1]

    def _raise_bounds(self) -> tuple[int, int] | None:
        """(:attr:`min_raise_to`, :attr:`max_raise_to`), or ``None`` if raising is not legal."""
        if self._raise_block() is not None:
            return None
        p = self.actor
        assert p is not None
        game = self.game
        stack = game.stack[p]
        if game.is_limit:
            to = min(self.max_spent + game.raise_size[self.round], stack)
            return to, to
        return min(self.raise_floor, stack), stack

    def legal_actions(self) -> list[ActionKind]:
        """The legal kinds of action, in the order fold, call, raise (empty when over)."""
        if self.actor is None:
            return []
        kinds = []
        if self.can_fold():
            kinds.append(_FOLD)
        kinds.append(_CALL)
        if self.can_raise():
            kinds.append(_RAISE)
        return kinds

    # ------------------------------------------------------------------ verify, apply

    def verify(self, action: Action) -> Action:
        """Check ``action`` for the player to act; return its canonical form.

        The canonical form of a limit raise carries the raise-to the game dictates. Raises
        :class:`IllegalActionError` naming the rule and the numbers.
        """
        if not isinstance(action, Action):
            raise TypeError(f"expected an Action, got {action!r}")
        p = self.actor
        if p is None:
            raise IllegalActionError(
                f"the hand is over (betting {self.betting_string()!r}); no action can be applied"
            )
        kind = action.kind
        if kind is _CALL:
            return action
        if kind is _FOLD:
            if self.spent[p] >= self.max_spent:
                raise IllegalActionError(
                    f"fold is not allowed when checking is free: position {p} has put in "
                    f"{self.spent[p]}, as much as the largest bet {self.max_spent}"
                )
            return action
        block = self._raise_block()
        if block is not None:
            raise IllegalActionError(f"raise is not allowed: {block}")
        game = self.game
        stack = game.stack[p]
        amount = action.amount
        if game.is_limit:
            size = game.raise_size[self.round]
            to = min(self.max_spent + size, stack)
            if amount is not None and amount != to:
                raise IllegalActionError(
                    f"a limit raise here is to {to} (largest bet {self.max_spent} + raise size "
                    f"{size}, capped at the stack {stack}), not to {amount}"
                )
            return action if amount is not None else Action(_RAISE, to)
        if amount is None:
            raise IllegalActionError("a no-limit raise needs a raise-to amount")
        lo = min(self.raise_floor, stack)
        if amount < lo:
            if lo == stack:
                raise IllegalActionError(
                    f"raise to {amount} is below the minimum {lo} (the minimum raise-to "
                    f"{self.raise_floor} is above position {p}'s stack {stack}, so only all-in "
                    f"for {stack} is allowed)"
                )
            raise IllegalActionError(f"raise to {amount} is below the minimum {lo}")
        if amount > stack:
            raise IllegalActionError(
                f"raise to {amount} is above the maximum {stack} (position {p}'s stack)"
            )
        return action

    def apply(self, action: Action) -> State:
        """Verify ``action`` and return the state after it (this state is unchanged)."""
        p = self.actor
        # A check or call is legal whenever someone is to act, so the common case skips
        # verify(); anything else (and any Action subclass) is verified in full.
        if p is None or action.__class__ is not Action or action.kind is not _CALL:
            action = self.verify(action)
            p = self.actor
            assert p is not None
        game = self.game
        stacks = game.stack
        spent = self.spent
        folded = self.folded
        max_spent = self.max_spent
        floor = self.raise_floor
        kind = action.kind
        if kind is _CALL:
            to = min(max_spent, stacks[p])
            if spent[p] != to:
                spent = spent[:p] + (to,) + spent[p + 1 :]
        elif kind is _FOLD:
            folded = folded[:p] + (True,) + folded[p + 1 :]
        else:
            raised = action.amount
            assert raised is not None and raised > max_spent
            to = raised
            if not game.is_limit and 2 * to - max_spent > floor:
                floor = 2 * to - max_spent
            max_spent = to
            spent = spent[:p] + (to,) + spent[p + 1 :]
        round_ = self.round
        actions = self.actions
        round_actions = actions[-1] + (_logged(LoggedAction, (p, action)),)
        actions = actions[:-1] + (round_actions,)

        n = game.num_players
        if sum(folded) + 1 >= n:
            # Everyone else folded: over at once, no showdown.
            return State._make(
                game, actions, self.deal, round_, spent, folded, max_spent, floor, None
            )
        called = 0
        for q, a in reversed(round_actions):
            k = a.kind
            if k is _RAISE:
                if spent[q] < stacks[q]:
                    called += 1
                break
            if k is _CALL and spent[q] < stacks[q]:
                called += 1
        active = 0  # (_num_active, inlined: this runs for every action dealt)
        for q in range(n):
            if not folded[q] and spent[q] < stacks[q]:
                active += 1
        if called < active:
            nxt = _next_active(game, p, spent, folded)
            return State._make(
                game, actions, self.deal, round_, spent, folded, max_spent, floor, nxt
            )
        if active > 1 and round_ + 1 < game.num_rounds:
            round_ += 1
            big = max(game.blind)
            floor = max(1, big) + max_spent
            actions = actions + ((),)
            actor = _first_actor(game, round_, spent, folded)
            return State._make(
                game, actions, self.deal, round_, spent, folded, max_spent, floor, actor
            )
        if active <= 1:
            # Fewer than two can act: deal out the remaining rounds, straight to showdown.
            last = game.num_rounds - 1
            actions = actions + ((),) * (last - round_)
            round_ = last
        return State._make(game, actions, self.deal, round_, spent, folded, max_spent, floor, None)

    def fold(self) -> State:
        """Apply a fold."""
        return self.apply(_FOLD_ACTION)

    def call(self) -> State:
        """Apply a check or call."""
        return self.apply(_CALL_ACTION)

    def raise_to(self, amount: int | None = None) -> State:
        """Apply a bet or raise to ``amount`` (``None`` in limit games: the fixed size)."""
        return self.apply(Action(_RAISE, amount))

    # ------------------------------------------------------------------ notation

    def betting_string(self) -> str:
        """The ACPC betting string: ``cr200c/cc/r250``, one ``/`` per round reached (SPEC §2.2).

        A round that has just ended already shows its ``/``; an all-in jump shows one ``/``
        per skipped round; limit raises are a bare ``r``.
        """
        limit = self.game.is_limit
        return "/".join(["".join([action.to_acpc(limit) for _, action in r]) for r in self.actions])

    @staticmethod
    def from_betting(
        game: Game, betting: str, deal: Deal | None = None, strict: bool = True
    ) -> State:
        """Replay an ACPC betting string from the start of a hand
        (:func:`poker.betting.read_betting`).

        ``strict`` (the default) accepts only the canonical string :meth:`betting_string`
        writes (``BettingSyntax.CANONICAL``): letters ``f c r``, a decimal raise-to after
        every no-limit ``r`` and none after a limit ``r``, and a ``/`` exactly where each
        round ends. ``strict=False`` reads the way the reference dealer's state reader does
        (``BettingSyntax.LENIENT``): ``/`` is skipped wherever it is, the letters
        ``F C k K R b B`` are also accepted, and a no-limit amount is read as C's ``%d``
        reads it (leading blanks, a sign, wrapped to 32 bits). Either way every action is
        checked and none is repaired.

        Raises :class:`BettingSyntaxError` for text that cannot be read and
        :class:`IllegalActionError` for an action the rules do not allow.
        """
        syntax = BettingSyntax.CANONICAL if strict else BettingSyntax.LENIENT
        return read_betting(State.new_hand(game, deal), betting, syntax=syntax)

    # ------------------------------------------------------------------ cards, values

    def board(self) -> tuple[int, ...]:
        """Board cards revealed so far (through the current round); needs the deal."""
        if self.deal is None:
            raise ValueError("this state has no deal, so it has no cards")
        return self.deal.board_through(self.round)

    def hole(self, position: int) -> tuple[int, ...]:
        """``position``'s hole cards; needs the deal."""
        if self.deal is None:
            raise ValueError("this state has no deal, so it has no cards")
        return self.deal.holes[position]

    @property
    def is_showdown(self) -> bool:
        """The hand is over with at least two players who did not fold."""
        return self.actor is None and sum(self.folded) + 1 < self.game.num_players

    def values(self, ranks: Sequence[int] | None = None) -> tuple[float, ...]:
        """Per position: chips won minus chips put in, for a finished hand (SPEC §5.1).

        A showdown needs the deal; hands are ranked with :func:`poker.evaluator.evaluate`
        on the hole cards plus the whole board. Split pots give fractional values.
        ``ranks``: each position's rank so computed, where the caller knows them already
        (the dealer ranks a deal's hands while it waits): the showdown then needs no deal.
        """
        if self.actor is not None:
            raise ValueError(
                f"the hand is not over (betting {self.betting_string()!r}, position "
                f"{self.actor} to act); it has no values yet"
            )
        n = self.game.num_players
        spent = self.spent
        folded = self.folded
        if sum(folded) + 1 >= n:
            pot = sum(spent)
            return tuple(float(-spent[p]) if folded[p] else float(pot - spent[p]) for p in range(n))
        if ranks is not None:
            if len(ranks) != n:
                raise ValueError(f"{len(ranks)} ranks given for {n} players")
            known: list[int | None] = [None if folded[p] else ranks[p] for p in range(n)]
        elif self.deal is None:
            raise ValueError(
                f"the hand ends in a showdown (betting {self.betting_string()!r}) and this "
                f"state has no deal to rank the hands"
            )
        else:
            evaluate = _evaluator()
            board = self.deal.board_through(self.round)
            known = [None if folded[p] else evaluate(self.deal.holes[p] + board) for p in range(n)]
        return tuple(
            float(-spent[p]) if folded[p] else _showdown_value(spent, known, p) for p in range(n)
        )


# ---------------------------------------------------------------------- helpers

# Slot setters for State._make (the class is frozen, so its fields are set from outside).
_new_object = object.__new__
_logged = tuple.__new__  # LoggedAction(p, a) without the NamedTuple constructor's frame
(
    _set_game,
    _set_actions,
    _set_deal,
    _set_round,
    _set_spent,
    _set_folded,
    _set_max_spent,
    _set_raise_floor,
    _set_actor,
    _set_is_terminal,
) = (
    State.__dict__[name].__set__
    for name in (
        "game", "actions", "deal", "round", "spent", "folded", "max_spent", "raise_floor",
        "actor", "is_terminal",
    )
)

def _num_active(game: Game, spent: tuple[int, ...], folded: tuple[bool, ...]) -> int:
    stacks = game.stack
    count = 0
    for p in range(game.num_players):
        if not folded[p] and spent[p] < stacks[p]:
            count += 1
    return count


def _next_active(
    game: Game, p: int, spent: tuple[int, ...], folded: tuple[bool, ...]
) -> int | None:
    """The first active position after ``p`` in position order (``None`` if nobody is)."""
    n = game.num_players
    stacks = game.stack
    for step in range(1, n + 1):
        q = (p + step) % n
        if not folded[q] and spent[q] < stacks[q]:
            return q
    return None


def _first_actor(
    game: Game, round_: int, spent: tuple[int, ...], folded: tuple[bool, ...]
) -> int | None:
    """The first active position at or after the round's configured first player."""
    return _next_active(game, game.first_player[round_] - 1, spent, folded)


def _showdown_value(spent: tuple[int, ...], ranks: list[int | None], player: int) -> float:
    """Value of ``player`` (not folded) at a showdown, one pot layer at a time (SPEC §5.1).

    Mirrors the reference dealer's ``valueOfState`` step by step so that the floating
    point results (split pots) are the same.
    """
    if spent[player] == 0:
        return 0.0  # only when nobody put anything in (all blinds 0, checked through)
    if len(spent) == 2 and spent[0] == spent[1] and ranks[0] is not None and ranks[1] is not None:
        # Heads-up with equal stakes (every heads-up showdown of an equal-stack game): the
        # single layer below, without its machinery (a match values one per hand).
        mine, theirs = ranks[player], ranks[1 - player]
        return float(spent[player]) if mine > theirs else -float(spent[player]) if mine < theirs else 0.0
    # Players with chips in; folded players (rank None) are in the layers but cannot win.
    layer = [(spent[p], ranks[p], p) for p in range(len(spent)) if spent[p] > 0]
    value = 0.0
    while True:
        size = min(s for s, _, _ in layer)
        best = max(r for _, r, _ in layer if r is not None)
        winners = sum(1 for _, r, _ in layer if r == best)
        if ranks[player] == best:
            value += (size * (len(layer) - winners)) / winners
        else:
            value -= size
        nxt = []
        for s, r, p in layer:
            s -= size
            if s == 0:
                if p == player:
                    return value
                continue
            nxt.append((s, r, p))
        layer = nxt


_evaluate: Callable[[Sequence[int]], int] | None = None


def _evaluator() -> Callable[[Sequence[int]], int]:
    """The evaluator for a deal's cards, imported on first use (only showdowns need it).

    A :class:`Deal` holds distinct cards of the deck by construction, so the unchecked
    :func:`poker.evaluator.evaluate_trusted` ranks its hands."""
    global _evaluate
    if _evaluate is None:
        from .evaluator import evaluate_trusted

        _evaluate = evaluate_trusted
    return _evaluate


# ---------------------------------------------------------------------- repair


def repair(state: State, action: Action) -> tuple[Action, str | None]:
    """The action the reference dealer applies for ``action``, and its warning (SPEC §6.1).

    * fold when a check is free -> call, ``'invalid action, changed to call'``;
    * raise when no raise is legal -> call, the same warning;
    * no-limit raise without an amount -> call,
      ``'bad action format in response, changed to call'``;
    * no-limit raise-to below the minimum -> the minimum, ``'raise of S increased to MIN'``;
    * above the stack -> all-in, ``'raise of S decreased to STACK'``;
    * a limit raise's amount is ignored (no warning).

    The returned action is canonical (it passes :meth:`State.verify`). The warning is the
    dealer's text without its ``WARNING: `` prefix. Raises :class:`IllegalActionError` if
    the hand is over.
    """
    if state.actor is None:
        raise IllegalActionError(
            f"the hand is over (betting {state.betting_string()!r}); there is nothing to repair"
        )
    kind = action.kind
    if kind is _CALL:
        return _CALL_ACTION, None
    if kind is _FOLD:
        if state.can_fold():
            return _FOLD_ACTION, None
        return _CALL_ACTION, "invalid action, changed to call"
    bounds = state._raise_bounds()
    if bounds is None:
        return _CALL_ACTION, "invalid action, changed to call"
    lo, hi = bounds
    if state.game.is_limit:
        return Action(_RAISE, lo), None
    amount = action.amount
    if amount is None:
        return _CALL_ACTION, "bad action format in response, changed to call"
    if amount < lo:
        return Action(_RAISE, lo), f"raise of {amount} increased to {lo}"
    if amount > hi:
        return Action(_RAISE, hi), f"raise of {amount} decreased to {hi}"
    return action, None
