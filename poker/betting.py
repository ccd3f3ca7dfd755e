"""ACPC betting notation: actions, their text, and the one reader of betting strings.

An action is ``f`` (fold), ``c`` (check or call) or ``r`` (bet or raise); a no-limit
``r`` carries the raise-**to** total for the whole hand (``r300``), a limit ``r`` none.
A betting string is a hand's actions in order with a ``/`` where each round ends
(``r300c/cr600f``); a round that has just ended already shows its ``/`` and an all-in
jump one ``/`` per skipped round (SPEC §2.2).

:func:`read_betting` is the only code that scans such a string. It replays it on a
state (:class:`poker.state.State`), checking every action against the rules and
repairing none, in one of three explicit strictness modes (:class:`BettingSyntax`):

* ``CANONICAL``: exactly what :meth:`State.betting_string <poker.state.State.betting_string>`
  writes: the letters ``f c r``, a decimal raise-to without leading zeros after a no-limit
  ``r`` and nothing after a limit ``r``, and a ``/`` exactly where each round ends.
  :meth:`State.from_betting <poker.state.State.from_betting>` reads this by default.
* ``DEALER``: a MATCHSTATE's betting as a dealer may spell it: any letter of the
  reference dealer's action table (``f F``, ``c C k K``, ``r R b B``, SPEC §2.7), a
  decimal raise-to of at most 10 digits, and ``/`` exactly where each round ends, so that
  only the dealer's own history is read (a client reading the dealer's messages).
* ``LENIENT``: what the reference dealer's C state reader (``readMatchState``) accepts:
  the same letters, ``/`` skipped wherever it is, and a no-limit raise-to read as C's
  ``sscanf("%d")`` reads it (leading blanks and a sign allowed, the value wrapped to a
  32-bit int: :func:`scan_c_int`). Our dealer reads a client's echoed state this way, and
  ``State.from_betting(..., strict=False)`` reads logs and typed histories this way.

In every mode each action is checked (:meth:`State.apply <poker.state.State.apply>`);
text that cannot be read raises :class:`BettingSyntaxError`, an action the rules do not
allow :class:`IllegalActionError`, each naming the betting, the offset and the rule.

The module also holds the vocabulary the reader needs, which :mod:`poker.state` builds on
(:class:`Action`, :class:`ActionKind`, the two errors, the reference dealer's action
letters :data:`DEALER_LETTERS`), and the reference dealer's C number scans
(:func:`scan_c_int`, :func:`scan_c_unsigned`), which the protocol also uses for the
version line and an echoed state's position and hand number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Final, Protocol, TypeVar

from .game import Game

__all__ = [
    "Action",
    "ActionKind",
    "BettingSyntax",
    "BettingSyntaxError",
    "IllegalActionError",
    "DEALER_LETTERS",
    "read_betting",
    "scan_c_int",
    "scan_c_unsigned",
]


class IllegalActionError(ValueError):
    """An action the rules do not allow here; the message names the rule and the numbers."""


class BettingSyntaxError(ValueError):
    """A betting string that cannot be read (unknown character, missing amount, misplaced '/')."""


class ActionKind(Enum):
    """The three ACPC actions; the value is the ACPC letter."""

    FOLD = "f"
    CALL = "c"  # check or call
    RAISE = "r"  # bet or raise


_FOLD = ActionKind.FOLD
_CALL = ActionKind.CALL
_RAISE = ActionKind.RAISE
_LETTER = {kind: kind.value for kind in ActionKind}


@dataclass(frozen=True, slots=True)
class Action:
    """One action. ``amount`` is the raise-**to** total over the whole hand (SPEC §4.3).

    ``amount`` is ``None`` for fold and call, and may be ``None`` for a limit raise (the
    state fills in the raise-to it computes). Any integer is representable, so that a
    bad request such as ``r-5`` can be named in an error or repaired
    (:func:`poker.state.repair`).
    """

    kind: ActionKind
    amount: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, ActionKind):
            raise TypeError(f"action kind must be an ActionKind, not {self.kind!r}")
        if self.amount is not None:
            if self.kind is not _RAISE:
                raise ValueError(
                    f"only a raise has an amount ({self.kind.name.lower()} {self.amount})"
                )
            if isinstance(self.amount, bool) or not isinstance(self.amount, int):
                raise TypeError(f"raise amount must be an int, not {self.amount!r}")

    @staticmethod
    def fold() -> Action:
        """Fold."""
        return FOLD_ACTION

    @staticmethod
    def call() -> Action:
        """Check or call."""
        return CALL_ACTION

    @staticmethod
    def raise_to(amount: int | None = None) -> Action:
        """Bet or raise to ``amount`` chips in total for the hand (``None``: a limit raise)."""
        return Action(_RAISE, amount)

    @staticmethod
    def parse(text: str) -> Action:
        """Read one canonical ACPC action: ``f``, ``c``, ``r`` or ``r<digits>``."""
        m = _ACTION_RE.fullmatch(text)
        if m is None:
            raise BettingSyntaxError(f"{text!r} is not an ACPC action (f, c, r or r<raise-to>)")
        kind = ActionKind(m.group(1))
        if m.group(2):
            if kind is not _RAISE:
                raise BettingSyntaxError(f"{text!r}: only a raise takes an amount")
            return Action(_RAISE, int(m.group(2)))
        return Action(kind)

    def to_acpc(self, limit: bool = False) -> str:
        """ACPC text: ``f``, ``c``, ``r<amount>``; a limit raise is a bare ``r``."""
        if self.kind is _RAISE and self.amount is not None and not limit:
            return f"r{self.amount}"
        return _LETTER[self.kind]  # (an Enum's .value is a slow descriptor)

    def __str__(self) -> str:
        return self.to_acpc()


#: Fold and call carry no amount: one shared (immutable) object for each.
FOLD_ACTION: Final = Action(_FOLD)
CALL_ACTION: Final = Action(_CALL)
_LIMIT_RAISE: Final = Action(_RAISE)
_ACTION_RE = re.compile(r"([fcr])(\d*)")


# ---------------------------------------------------------------------- the reader


class BettingSyntax(Enum):
    """How strictly :func:`read_betting` reads (see the module docstring)."""

    CANONICAL = "canonical"
    DEALER = "dealer"
    LENIENT = "lenient"


_CANONICAL_LETTERS: Final = {"f": _FOLD, "c": _CALL, "r": _RAISE}
#: The reference dealer's 256-entry action table (SPEC §2.7): every other byte is invalid.
DEALER_LETTERS: Final = {
    "f": _FOLD, "F": _FOLD,
    "c": _CALL, "C": _CALL, "k": _CALL, "K": _CALL,
    "r": _RAISE, "R": _RAISE, "b": _RAISE, "B": _RAISE,
}
_DIGITS_RE: Final = re.compile(r"[0-9]+")
#: What C's strtol reads: blanks, a sign, decimal digits.
_C_NUMBER_RE: Final = re.compile(r"[ \t\n\v\f\r]*([+-]?)([0-9]+)")
#: Longest raise-to read in the strict modes (4294967295 has 10 digits).
_MAX_AMOUNT_DIGITS: Final = 10

S = TypeVar("S", bound="_Betting")


class _Betting(Protocol):
    """What the reader needs of a state (:class:`poker.state.State` has it; this module
    sits below it, so it names the shape, not the class)."""

    @property
    def game(self) -> Game: ...

    @property
    def round(self) -> int: ...

    @property
    def actor(self) -> int | None: ...

    def apply(self: S, action: Action) -> S: ...

    def betting_string(self) -> str: ...


def read_betting(state: S, text: str, start: int = 0, *, syntax: BettingSyntax) -> S:
    """Replay the actions written in ``text[start:]`` on ``state``; return the state after them.

    ``state`` is where ``text[:start]`` leaves the hand (the start of a hand for
    ``start=0``): a strict mode continues counting rounds from the ``/`` written there,
    so a caller that read a prefix before (a client whose next message extends the
    last one) reads only the new actions. ``syntax`` is the strictness (see the module
    docstring); nothing is repaired in any mode.

    Raises :class:`BettingSyntaxError` for text that cannot be read in that mode and
    :class:`IllegalActionError` for an action the rules do not allow (both name the
    betting, the offset and the reason).
    """
    lenient = syntax is BettingSyntax.LENIENT
    canonical = syntax is BettingSyntax.CANONICAL
    letters = _CANONICAL_LETTERS if canonical else DEALER_LETTERS
    # The '/' read so far: in the strict modes the hand must be in exactly that round
    # at every action, and at the end.
    group = text.count("/", 0, start) if start else 0
    limit: bool | None = None  # the game's is_limit, looked up at the first raise
    n = len(text)
    i = start
    while i < n:
        ch = text[i]
        if ch == "/":
            if not lenient:
                group += 1
                if state.round < group:
                    raise BettingSyntaxError(
                        f"betting {text!r} is not written canonically: '/' at offset {i} but "
                        f"round {state.round} has not ended"
                    )
            i += 1
            continue
        kind = letters.get(ch)
        if kind is None:
            raise BettingSyntaxError(
                f"betting {text!r}: unexpected character {ch!r} at offset {i} "
                f"(actions are f, c, r and rounds are separated by '/')"
            )
        begin = i
        i += 1
        if kind is not _RAISE:
            action = FOLD_ACTION if kind is _FOLD else CALL_ACTION
        else:
            if limit is None:
                limit = state.game.is_limit
            if limit:
                m = _DIGITS_RE.match(text, i)
                if m is not None:
                    raise BettingSyntaxError(
                        f"betting {text!r}: limit raise at offset {begin} has an amount "
                        f"({text[begin : m.end()]!r}); limit raises are written 'r'"
                    )
                action = _LIMIT_RAISE
            elif lenient:
                m = _C_NUMBER_RE.match(text, i)
                if m is None:
                    raise _no_amount(text, begin)
                action = Action(_RAISE, _c_int(m.group(1), m.group(2)))
                i = m.end()
            else:
                m = _DIGITS_RE.match(text, i)
                if m is None:
                    raise _no_amount(text, begin)
                digits = m.group()
                if len(digits) > _MAX_AMOUNT_DIGITS:
                    raise BettingSyntaxError(
                        f"betting {text!r}: raise amount {digits[:20]!r}... at offset {begin} is too long"
                    )
                if canonical and digits[0] == "0" and len(digits) > 1:
                    raise BettingSyntaxError(
                        f"betting {text!r} is not written canonically: raise amount {digits!r} at "
                        f"offset {begin} has a leading zero"
                    )
                action = Action(_RAISE, int(digits))
                i = m.end()
        if not lenient and state.round != group:
            raise BettingSyntaxError(
                f"betting {text!r} is not written canonically: the action at offset {begin} "
                f"follows {group} '/' but the hand is in round {state.round} there (each "
                "round's end is written as one '/')"
            )
        if state.actor is None:
            raise IllegalActionError(
                f"betting {text!r}: action {text[begin:i]!r} at offset {begin} comes after the "
                f"hand is over ({state.betting_string()!r})"
            )
        try:
            state = state.apply(action)
        except IllegalActionError as exc:
            raise IllegalActionError(
                f"betting {text!r}: action {text[begin:i]!r} at offset {begin} (position "
                f"{state.actor} after {state.betting_string()!r}): {exc}"
            ) from None
    if not lenient and state.round != group:
        raise BettingSyntaxError(
            f"betting {text!r} is not written canonically: these actions give "
            f"{state.betting_string()!r} ('/' must stand exactly where each round ends)"
        )
    return state


def _no_amount(text: str, at: int) -> BettingSyntaxError:
    return BettingSyntaxError(f"betting {text!r}: no-limit raise at offset {at} has no raise-to amount")


# ---------------------------------------------------------------------- C number scans


def scan_c_unsigned(text: str, i: int, bits: int) -> tuple[int | None, int]:
    """``sscanf(text + i, "%u")`` into a ``bits``-bit unsigned, as the reference dealer
    reads a version or a MATCHSTATE's position and hand number: strtoul (blanks, a sign,
    digits; saturating at 64 bits), then truncation. Returns the value (``None`` if no
    number starts there) and the offset after it."""
    m = _C_NUMBER_RE.match(text, i)
    if m is None:
        return None, i
    sign, digits = m.groups()
    if len(digits.lstrip("0")) > 20 or int(digits) > 2**64 - 1:
        value = 2**64 - 1  # strtoul saturates
    else:
        value = -int(digits) if sign == "-" else int(digits)
    return value % (1 << bits), m.end()


def scan_c_int(text: str, i: int) -> int | None:
    """``sscanf(text + i, "%d")`` into an ``int32_t``, as the reference dealer reads a
    raise-to: blanks, a sign and digits (strtol, saturating at 64 bits), then truncated to
    32 bits. ``None`` if no number starts there."""
    m = _C_NUMBER_RE.match(text, i)
    if m is None:
        return None
    return _c_int(m.group(1), m.group(2))


def _c_int(sign: str, digits: str) -> int:
    """:func:`scan_c_int`'s value from the sign and digits strtol read."""
    if len(digits.lstrip("0")) > 19 or int(digits) > 2**63 - (sign != "-"):
        value = -(2**63) if sign == "-" else 2**63 - 1
    else:
        value = -int(digits) if sign == "-" else int(digits)
    value &= 0xFFFFFFFF
    return value - 2**32 if value >= 2**31 else value
