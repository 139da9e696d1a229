"""The one multiplicity rule: which tests form a family, how their p-values are adjusted.

Every command that prints a p-value or a "significant" flag over several tests
(``report``, ``compare``, ``tune``, ``answerers``, ``gate``) adjusts through
:func:`adjust` and describes the family with :class:`CorrectionFamily`, so the same
tests at the same level are flagged the same way everywhere.

* **Family**: the tests one call makes at once, every (config pair, answerer, metric)
  with a p-value. ``compare`` and the report: every config against the reference on the
  metrics asked; the gate: the policy's metrics for the gated pair, or with
  ``[gate] family = "grid"`` every candidate config against the base config (the family
  the report of that run uses). Tests without a p-value (e.g. +inf values) are listed
  as untested and do not count towards the family size m.
* **Adjustment** (:data:`ADJUSTMENTS`): ``holm`` (the default) controls the
  family-wise error rate, the chance of any false flag (Holm 1979); ``bh`` controls
  the false discovery rate, the expected share of false flags among the flags
  (Benjamini & Hochberg 1995), more flags for the same data. A test is flagged when its
  adjusted p-value is below alpha (0.05 unless a policy says otherwise).

Edge cases: NaN p-values stay NaN and are never flagged; an empty family adjusts to
an empty array. References: Holm, Scand. J. Statist. 6 (1979) 65-70; Benjamini &
Hochberg, J. R. Statist. Soc. B 57 (1995) 289-300.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rulegauge.core.errors import RulegaugeError
from rulegauge.core.registry import Registry
from rulegauge.metrics.stats import checked_p_values, holm

DEFAULT_ADJUSTMENT = "holm"
DEFAULT_ALPHA = 0.05
_LISTED = 6  # family members named in a one-line description; the record keeps all


def benjamini_hochberg(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values), in the input order.

    With the m finite p-values sorted ascending, the adjusted value of the i-th is
    ``min_{j>=i} min(1, m * p(j) / j)``; flag where it is below alpha. NaN entries stay
    NaN and do not count towards m. Equals ``scipy.stats.false_discovery_control(p,
    method="bh")`` on finite input (checked in the tests).

    Reference: Benjamini & Hochberg (1995), J. R. Statist. Soc. B 57(1):289-300.
    """
    p = checked_p_values(p_values, "benjamini-hochberg")
    out = np.full(p.shape, np.nan)
    idx = np.flatnonzero(~np.isnan(p))
    m = idx.size
    if m == 0:
        return out
    order = idx[np.argsort(p[idx], kind="stable")]
    scaled = np.minimum(1.0, p[order] * m / np.arange(1, m + 1))
    out[order] = np.minimum.accumulate(scaled[::-1])[::-1]
    return out


Adjustment = Callable[[Sequence[float] | np.ndarray], np.ndarray]
ADJUSTMENTS: Registry[Adjustment] = Registry("p-value adjustment")
ADJUSTMENTS.add("holm", holm)
ADJUSTMENTS.add("bh", benjamini_hochberg)

ADJUSTMENT_NAMES = {"holm": "Holm (family-wise error rate)",
                    "bh": "Benjamini-Hochberg (false discovery rate)"}


def adjust(p_values: Sequence[float] | np.ndarray, adjustment: str = DEFAULT_ADJUSTMENT
           ) -> np.ndarray:
    """The family's adjusted p-values by ``adjustment`` (a name in :data:`ADJUSTMENTS`)."""
    return ADJUSTMENTS.get(adjustment)(checked_p_values(p_values, adjustment))


def flagged(p_adjusted: float, alpha: float) -> bool:
    """The one flag rule: an adjusted p-value strictly below alpha (NaN never)."""
    return bool(p_adjusted < alpha)  # NaN compares False


Member = tuple[str, str]  # (config pair label, metric label)


@dataclass(frozen=True)
class CorrectionFamily:
    """The tests one adjustment covers: ``members`` are the (config pair label, metric
    label) of every test with a p-value, in report order; ``untested`` those without one
    (e.g. +inf values), which do not count; ``flagged`` the members whose adjusted
    p-value is below ``alpha``."""

    method: str
    members: tuple[Member, ...]
    untested: tuple[Member, ...] = ()
    alpha: float = DEFAULT_ALPHA
    flagged: tuple[Member, ...] = ()
    scope: str = ""  # what the family is, in words (e.g. "every config against X")
    limit: str = ""  # what it can never flag, and why (rulegauge.metrics.reach.limited)

    @property
    def size(self) -> int:
        return len(self.members)

    def line(self) -> str:
        """The line printed under every table of p-values: ``p (holm) family: ...``."""
        return f"p ({self.method}) family: {self.describe()}"

    def describe(self) -> str:
        """``holm over 5 test(s) at alpha 0.05: rrf_k60 (hit@5, recall@5, ...); flagged 1: ...``
        (one line; long lists are cut, the record keeps every member)."""
        def grouped(items: tuple[Member, ...]) -> str:
            by: dict[str, list[str]] = {}
            for pair, metric in items:
                by.setdefault(pair, []).append(metric)
            listed = [f"{p} ({', '.join(ms)})" for p, ms in by.items()]
            more = f"; ... {len(listed) - _LISTED} more" if len(listed) > _LISTED else ""
            return "; ".join(listed[:_LISTED]) + more

        scope = f" [{self.scope}]" if self.scope else ""
        out = (f"{self.method} over {self.size} test(s){scope} at alpha {self.alpha:g}: "
               f"{grouped(self.members) or '(none)'}")
        if self.untested:
            out += f"; untested, not counted: {grouped(self.untested)}"
        out += f"; flagged (p_adj < {self.alpha:g}): {len(self.flagged)}"
        if self.flagged:
            out += f": {grouped(self.flagged)}"
        return out + (f"; {self.limit}" if self.limit else "")


NO_FAMILY = CorrectionFamily(DEFAULT_ADJUSTMENT, ())  # a comparison that tested nothing


def family_of(labels: Sequence[Member], p_values: Sequence[float] | np.ndarray,
              adjustment: str = DEFAULT_ADJUSTMENT, alpha: float = DEFAULT_ALPHA,
              scope: str = "") -> tuple[np.ndarray, CorrectionFamily]:
    """Adjust one family's p-values and describe it: (adjusted p-values in input order,
    the :class:`CorrectionFamily`)."""
    if not 0.0 < alpha < 1.0:
        raise RulegaugeError(f"alpha must be in (0, 1), got {alpha!r}")
    p = checked_p_values(p_values, adjustment)
    adjusted = adjust(p, adjustment)
    tested = tuple(m for m, x in zip(labels, p, strict=True) if not np.isnan(x))
    untested = tuple(m for m, x in zip(labels, p, strict=True) if np.isnan(x))
    hits = tuple(m for m, a in zip(labels, adjusted, strict=True) if flagged(float(a), alpha))
    return adjusted, CorrectionFamily(adjustment, tested, untested, alpha, hits, scope)
