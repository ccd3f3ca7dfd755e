"""Bet-size abstraction for no-limit games: which raise-to amounts the abstract game keeps.

A no-limit game allows every integer raise-to between the minimum raise and the stack;
the abstract game keeps a few sizes per street, expressed as fractions of the pot, plus
optionally all-in (the usual "pot-fraction" abstraction, e.g. Schnizlein, Bowling and
Szafron 2009, "Probabilistic state translation in extensive games with large action
sets", Section 2). Limit games are never abstracted: their betting is already small.

Spec syntax
-----------
A spec is a short string, one clause per street separated by ``;``. The last clause is
repeated for later streets, so ``"1p,a"`` means "pot and all-in on every street"::

    spec    := street (';' street)* ['|' option (',' option)*]
    street  := items ['/' items]      # opening-bet sizes '/' raise sizes (default: same)
    items   := ε | item (',' item)*
    item    := <x>p                   # raise by x times the pot after calling (0.5p, 1p, 2p)
             | a                      # all-in
             | cap<N>                 # at most N bets+raises on this street (cap0 = no betting)
    option  := snap=<f>               # sizes whose raise-to is >= (1 - f) * all-in become all-in

Examples: ``"1p,a"``; ``"0.5p,1p,a;1p,a"`` (half-pot only on the first street);
``"0.5p,1p/1p,a,cap3"`` (open half or full pot, later raises pot or all-in, at most three
bets per street); ``"1p,a|snap=0.15"``. An empty street (``"1p,a;"``) allows only
check/call and fold there.

A pot-fraction size on a node where the actor has spent ``mine`` and faces ``max_spent``
with pot ``P = sum(spent)``: the pot after calling is ``P + (max_spent - mine)`` and the
raise-to is ``max_spent + round(x * (P + max_spent - mine))``, clamped into the legal
range ``[min_raise_to, max_raise_to]`` that :class:`poker.state.State` reports. The rules
themselves (minimum raise, stacks, who may raise) always come from the state.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = [
    "ALL_IN",
    "BettingAbstraction",
    "BettingSpecError",
    "StreetBets",
    "parse_betting",
    "pot_after_call",
    "size_to_raise_to",
]


class BettingSpecError(ValueError):
    """A betting-abstraction spec that cannot be parsed; the message names the bad part."""


@dataclass(frozen=True)
class StreetBets:
    """Sizes allowed on one street.

    ``first``: pot fractions for the opening bet of the street; ``later``: for raises after
    a bet; ``all_in_first`` / ``all_in_later``: whether all-in is allowed as opening bet /
    raise; ``cap``: at most this many bets and raises on the street (``None`` = only the
    game's own limit).
    """

    first: tuple[float, ...] = ()
    later: tuple[float, ...] = ()
    all_in_first: bool = False
    all_in_later: bool = False
    cap: int | None = None

    def text(self) -> str:
        """This street's clause in spec syntax (round-trips through :func:`parse_betting`)."""

        def items(fracs: tuple[float, ...], all_in: bool) -> list[str]:
            out = [f"{_fmt(f)}p" for f in fracs]
            if all_in:
                out.append("a")
            return out

        a = items(self.first, self.all_in_first)
        b = items(self.later, self.all_in_later)
        body = ",".join(a) if a == b else ",".join(a) + "/" + ",".join(b)
        if self.cap is not None:
            body = f"{body},cap{self.cap}" if body else f"cap{self.cap}"
        return body


def _fmt(x: float) -> str:
    return repr(float(x)).rstrip("0").rstrip(".") if x != int(x) else str(int(x))


@dataclass(frozen=True)
class BettingAbstraction:
    """Per-street bet sizes; street ``i`` uses ``streets[min(i, len(streets) - 1)]``.

    ``snap``: a pot-fraction size whose raise-to is at least ``(1 - snap) * max_raise_to``
    is replaced by all-in (so nobody keeps a useless "bet all but 3 chips").
    """

    streets: tuple[StreetBets, ...]
    snap: float = 0.0
    spec: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.streets:
            raise BettingSpecError("a betting abstraction needs at least one street")
        if not 0.0 <= self.snap < 1.0:
            raise BettingSpecError(f"snap {self.snap} is not in [0, 1)")

    def street(self, round_: int) -> StreetBets:
        """Sizes for 0-based street ``round_`` (the last clause repeats)."""
        return self.streets[min(round_, len(self.streets) - 1)]

    def text(self) -> str:
        """Canonical spec string; ``parse_betting(a.text()) == a``."""
        s = ";".join(st.text() for st in self.streets)
        if self.snap:
            s += f"|snap={_fmt(self.snap)}"
        return s

    def raise_items(
        self,
        round_: int,
        raises_this_street: int,
        spent: Sequence[int],
        actor: int,
        min_raise_to: int,
        max_raise_to: int,
    ) -> list[tuple[int, float]]:
        """Abstract raise-to amounts with the size that made each: ``(raise_to, size)``,
        ascending by raise-to and distinct, all in ``[min_raise_to, max_raise_to]``.

        ``size`` is the pot fraction of the smallest item giving that raise-to, or
        :data:`ALL_IN` where the raise-to is the whole stack (the ``a`` item, or a pot
        fraction clamped or snapped to all-in). The legal range comes from the game
        state; this only picks sizes inside it.
        """
        st = self.street(round_)
        if st.cap is not None and raises_this_street >= st.cap:
            return []
        opening = raises_this_street == 0
        fracs = st.first if opening else st.later
        all_in = st.all_in_first if opening else st.all_in_later
        out: dict[int, float] = {}
        for f in fracs:  # ascending: the first fraction to reach a raise-to labels it
            to = size_to_raise_to(f, spent, actor, min_raise_to, max_raise_to, self.snap)
            out.setdefault(to, f)
        if all_in:
            out[max_raise_to] = ALL_IN
        if max_raise_to in out:
            out[max_raise_to] = ALL_IN
        return sorted(out.items())

    def raise_tos(
        self,
        round_: int,
        raises_this_street: int,
        spent: Sequence[int],
        actor: int,
        min_raise_to: int,
        max_raise_to: int,
    ) -> list[int]:
        """Abstract raise-to amounts, ascending and distinct, all in ``[min_raise_to, max_raise_to]``
        (the raise-tos of :meth:`raise_items`)."""
        items = self.raise_items(round_, raises_this_street, spent, actor, min_raise_to, max_raise_to)
        return [to for to, _ in items]


#: The ``size`` of an all-in raise in :meth:`BettingAbstraction.raise_items`.
ALL_IN = -1.0


def pot_after_call(spent: Sequence[int], actor: int) -> int:
    """The pot once ``actor`` has called the largest bet: what pot fractions are of."""
    max_spent = max(spent)
    return sum(spent) + (max_spent - spent[actor])


def size_to_raise_to(
    size: float,
    spent: Sequence[int],
    actor: int,
    min_raise_to: int,
    max_raise_to: int,
    snap: float = 0.0,
) -> int:
    """The raise-to of a bet of ``size`` pots (or :data:`ALL_IN`) by ``actor`` facing
    ``spent``: ``max(spent) + round(size * pot after calling)``, clamped into the legal
    range ``[min_raise_to, max_raise_to]``; with ``snap`` a raise-to of at least
    ``(1 - snap) * max_raise_to`` becomes all-in; ``size`` NaN (a limit raise) is
    ``min_raise_to``, the one raise a limit game allows. The same rule builds the abstract
    tree and sizes a real raise from the real pot (:mod:`abstraction.translation`).

    >>> size_to_raise_to(1.0, (2, 1), 1, 4, 200)  # pot raise facing the big blind
    6
    >>> size_to_raise_to(1.0, (300, 100), 1, 500, 20000)  # pot after calling 600
    900
    """
    if math.isnan(size):
        return min_raise_to
    if size == ALL_IN:
        return max_raise_to
    to = max(spent) + math.floor(size * pot_after_call(spent, actor) + 0.5)
    to = min(max(to, min_raise_to), max_raise_to)
    if snap and to >= (1.0 - snap) * max_raise_to:
        to = max_raise_to
    return to


_ITEM = re.compile(r"^(?:(?P<frac>\d+(?:\.\d*)?|\.\d+)p|(?P<allin>a)|cap(?P<cap>\d+))$")


def _parse_items(text: str, where: str) -> tuple[list[float], bool, int | None]:
    fracs: list[float] = []
    all_in = False
    cap: int | None = None
    if not text.strip():
        return fracs, all_in, cap
    for raw in text.split(","):
        item = raw.strip().lower()
        m = _ITEM.match(item)
        if not m:
            raise BettingSpecError(
                f"{where}: item {raw.strip()!r} is not <x>p (pot fraction), a (all-in) or cap<N>"
            )
        if m.group("frac") is not None:
            f = float(m.group("frac"))
            if not f > 0:
                raise BettingSpecError(f"{where}: pot fraction {raw.strip()!r} must be positive")
            if f in fracs:
                raise BettingSpecError(f"{where}: pot fraction {raw.strip()!r} is listed twice")
            fracs.append(f)
        elif m.group("allin") is not None:
            all_in = True
        else:
            if cap is not None:
                raise BettingSpecError(f"{where}: cap given twice")
            cap = int(m.group("cap"))
    return sorted(fracs), all_in, cap


def parse_betting(spec: str) -> BettingAbstraction:
    """Parse a spec string (syntax in the module docstring) into a :class:`BettingAbstraction`.

    >>> parse_betting("0.5p,1p,a;1p,a").street(3).text()
    '1p,a'
    >>> parse_betting("0.5p,1p/1p,a,cap3").text()
    '0.5p,1p/1p,a,cap3'
    """
    if not isinstance(spec, str):
        raise BettingSpecError(f"betting spec must be a string, got {type(spec).__name__}")
    body, _, opts = spec.partition("|")
    snap = 0.0
    if opts.strip():
        for raw in opts.split(","):
            key, eq, val = raw.strip().partition("=")
            if key.strip().lower() != "snap" or not eq:
                raise BettingSpecError(f"option {raw.strip()!r} is not snap=<fraction>")
            try:
                snap = float(val)
            except ValueError:
                raise BettingSpecError(f"snap value {val!r} is not a number") from None
    streets: list[StreetBets] = []
    for i, clause in enumerate(body.split(";")):
        where = f"street {i} ({clause.strip()!r})"
        first_txt, slash, later_txt = clause.partition("/")
        f1, a1, c1 = _parse_items(first_txt, where)
        if slash:
            f2, a2, c2 = _parse_items(later_txt, where)
            if c1 is not None and c2 is not None:
                raise BettingSpecError(f"{where}: cap given twice")
        else:
            f2, a2, c2 = f1, a1, None
        streets.append(
            StreetBets(
                first=tuple(f1),
                later=tuple(f2),
                all_in_first=a1,
                all_in_later=a2,
                cap=c1 if c1 is not None else c2,
            )
        )
    return BettingAbstraction(streets=tuple(streets), snap=snap, spec=spec)
