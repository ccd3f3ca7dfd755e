"""The sampled training methods the benchmarks compare, by name: the algorithm, its own
options and the :class:`~solver.training.sampled.SamplingOptions` it adds
(:mod:`solver.training.schedules`: discounting and pruning).

``es`` external sampling; ``es_linear`` Linear CFR's discount and ``es_dcfr`` Discounted
CFR's (3/2, 0, 2) after every ``every`` iterations; ``es_linear_q`` Linear CFR's regret
discount with DCFR's quadratic average weights (alpha = beta = 1, gamma = 2, the same
batches); ``es_linear_h`` and ``es_dcfr_h`` Linear CFR's and DCFR's discounts up to
iteration ``until`` only; ``es_prune`` MCCFR-P with ``threshold`` after ``after``
iterations; ``tcfr`` Targeted CFR with the paper's targeting of the game (``game1`` on
20-card hold'em, ``game2`` on the full deck) and ``tcfr_dcfr`` the same discounted;
``es_dcfr:A,B,G`` external sampling with Discounted CFR's discount of parameters alpha =
A, beta = B, gamma = G (:func:`check_method` accepts it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

METHODS = ("es", "es_linear", "es_linear_q", "es_linear_h", "es_dcfr", "es_dcfr_h", "es_prune", "tcfr", "tcfr_dcfr")


@dataclass(frozen=True)
class Schedule:
    """The numbers the discount and pruning methods take."""

    every: int = 1_000_000
    until: int = 30_000_000
    threshold: float = -200_000.0
    after: int = 5_000_000


def _dcfr_parameters(name: str) -> tuple[float, float, float] | None:
    """(alpha, beta, gamma) of a name ``es_dcfr:A,B,G``, else None."""
    if not name.startswith("es_dcfr:"):
        return None
    parts = name.split(":", 1)[1].split(",")
    if len(parts) != 3:
        raise ValueError(f"method {name!r}: es_dcfr:A,B,G takes three numbers")
    try:
        a, b, g = (float(x) for x in parts)
    except ValueError:
        raise ValueError(f"method {name!r}: es_dcfr:A,B,G takes three numbers") from None
    return a, b, g


def check_method(name: str) -> str:
    """``name`` if it names a method (one of :data:`METHODS` or ``es_dcfr:A,B,G``), else
    ``ValueError`` (an argparse ``type``)."""
    if name not in METHODS and _dcfr_parameters(name) is None:
        raise ValueError(f"method {name!r} is not one of {', '.join(METHODS)} or es_dcfr:A,B,G")
    return name


def method(name: str, targeting: str, schedule: Schedule = Schedule()) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(algorithm, solver keywords, SamplingOptions keywords) of method ``name``;
    ``targeting``: Targeted CFR's for this game."""
    from solver.training.schedules import Discounting, Pruning

    check_method(name)
    abg = _dcfr_parameters(name)
    if abg is not None:
        a, b, g = abg
        return "es", {}, {"discount": Discounting("dcfr", every=schedule.every, alpha=a, beta=b, gamma=g)}
    algo = "tcfr" if name.startswith("tcfr") else "es"
    solver = {"targeting": targeting} if algo == "tcfr" else {}
    sampling: dict[str, Any] = {}
    if name == "es_linear":
        sampling["discount"] = Discounting("linear", every=schedule.every)
    elif name == "es_linear_q":
        sampling["discount"] = Discounting("dcfr", every=schedule.every, alpha=1.0, beta=1.0, gamma=2.0)
    elif name == "es_linear_h":
        sampling["discount"] = Discounting("linear", every=schedule.every, until=schedule.until)
    elif name in ("es_dcfr", "tcfr_dcfr"):
        sampling["discount"] = Discounting("dcfr", every=schedule.every)
    elif name == "es_dcfr_h":
        sampling["discount"] = Discounting("dcfr", every=schedule.every, until=schedule.until)
    elif name == "es_prune":
        sampling["pruning"] = Pruning(schedule.threshold, after=schedule.after)
    return algo, solver, sampling
