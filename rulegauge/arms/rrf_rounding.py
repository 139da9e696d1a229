"""Rounding rules of printed fused scores, exact fused sums, and the check that a sum
prints as a score (used by :mod:`rulegauge.arms.rrf_decode` and the ruling tables).

``half_up`` (default): the printed ``s`` covers exact values in ``[s - h, s + h)``
with ``h = 0.5 * 10**-decimals``. This is what PostgreSQL ``round(numeric, 6)``,
Java ``RoundingMode.HALF_UP`` and JavaScript ``toFixed`` do for positive values.
``half_even`` (banker's rounding, Python's ``round``) covers ``[s - h, s + h]``
when the last printed digit is even and ``(s - h, s + h)`` when it is odd. The two
differ only on exact midpoints: every score of the real ruling page
(``../shared/rulings``) decodes identically under both, e.g. ``1/61 + 1/61 +
1/62 = 0.04891592...`` prints as ``0.048916`` either way. A midpoint needs a sum
with a terminating decimal ending in 5 at place 7, such as ``1/128 = 0.0078125``
(one arm, rank 68 at k=60): ``half_up`` prints ``0.007813``, ``half_even``
``0.007812``. Any candidate within ``1e-15`` of a midpoint raises the ``tie``
flag, because there the result depends on the rule (and on production's float
arithmetic).

Reference: IEEE 754-2019 rounding-direction attributes (roundTiesToAway,
roundTiesToEven) applied to decimal printing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from rulegauge.core.registry import Registry

Ranks = tuple[int | None, ...]
"""One rank per arm, None where the arm did not rank the chunk."""


@dataclass(frozen=True)
class RoundingRule:
    """Which exact values a printed score covers: ``(lo, hi, lo_closed, hi_closed)``."""

    name: str
    doc: str
    interval: Callable[[Fraction, int], tuple[Fraction, Fraction, bool, bool]]


def _half_up(s: Fraction, decimals: int) -> tuple[Fraction, Fraction, bool, bool]:
    h = Fraction(1, 2 * 10**decimals)
    return s - h, s + h, True, False


def _half_even(s: Fraction, decimals: int) -> tuple[Fraction, Fraction, bool, bool]:
    h = Fraction(1, 2 * 10**decimals)
    even = (s * 10**decimals).numerator % 2 == 0
    return s - h, s + h, even, even


ROUNDINGS: Registry[RoundingRule] = Registry("rounding rule")
ROUNDINGS.add("half_up", RoundingRule("half_up", "midpoints round up (PostgreSQL numeric, "
                                      "Java HALF_UP, JavaScript toFixed)", _half_up))
ROUNDINGS.add("half_even", RoundingRule("half_even", "midpoints round to the even digit "
                                        "(Python round, IEEE default)", _half_even))


def parse_score(score: float | str | Decimal | Fraction, decimals: int) -> Fraction:
    """The printed score as an exact fraction; more than ``decimals`` places raises.

    A float is read through its shortest repr (``0.048916`` stays ``0.048916``).
    """
    if isinstance(score, Fraction):
        value = score
    else:
        try:
            dec = Decimal(repr(score)) if isinstance(score, float) else Decimal(str(score).strip())
        except InvalidOperation:
            raise ValueError(f"score {score!r} is not a number") from None
        if not dec.is_finite():
            raise ValueError(f"score {score!r} is not finite")
        value = Fraction(dec)
    if (value * 10**decimals).denominator != 1:
        raise ValueError(f"score {score} has more than {decimals} decimals; pass decimals=N "
                         "with the number of places production printed")
    return value


def fused_value(ranks: Ranks, k: float = 60, weights: Sequence[float] | None = None) -> Fraction:
    """Exact ``sum_a w_a / (k + r_a)`` over the non-None ranks (in arm order)."""
    ws = [Fraction(1)] * len(ranks) if weights is None else [Fraction(w) for w in weights]
    kf = Fraction(k)
    return sum((w / (kf + r) for w, r in zip(ws, ranks, strict=True) if r is not None),
               Fraction(0))


def rounds_to(value: Fraction, score: float | str | Decimal | Fraction, decimals: int = 6,
              rounding: str = "half_up") -> bool:
    """Whether the exact ``value`` prints as ``score`` under ``rounding``."""
    lo, hi, lo_c, hi_c = ROUNDINGS.get(rounding).interval(parse_score(score, decimals), decimals)
    return (lo < value or (lo_c and value == lo)) and (value < hi or (hi_c and value == hi))
