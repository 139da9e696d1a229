"""Gate checks that cannot fail: a significance check whose test can never be flagged.

A gate's ``alpha`` check fails on a worsening whose adjusted p-value is below alpha. The
sign-flip test over ``n`` questions cannot give a p below its floor
(:func:`rulegauge.metrics.reach.smallest_p`: ``2 / 2**n``, or ``2 / (n_resamples + 1)``),
and the family's adjustment cannot take it lower than
:func:`rulegauge.metrics.reach.adjusted_floor` (Holm: the family size times the smallest
floor). When that bound reaches the check's alpha, the check passes whatever the
candidate does: a gate on 5 questions (floor 0.0625) or on 7 with six gated metrics
(6 x 2/128 = 0.094) never fails on significance. :func:`unfailable` names every such
check with the reason; the gate prints it in its summary (terminal, Markdown), its JSON
(``cannot_fail``) and its JUnit properties, so a passing gate never hides it.

Members of a ``family = "grid"`` gate outside the gated pair are not in the result: their
floor is taken as the smallest any test can have (``2 / (n_resamples + 1)``), so the bound
stays a lower bound.
"""

from __future__ import annotations

import math

from rulegauge.metrics.reach import adjusted_floor, resamples_needed, smallest_n, smallest_p
from rulegauge.regression.gate import GateResult


def unfailable(result: GateResult) -> tuple[str, ...]:
    """One line per significance check of ``result`` that cannot fail (module docstring)."""
    c = result.comparison
    family = c.family
    tested = [m for m in c.metrics if m.config == result.pair and not math.isnan(m.p_value)]
    floors = [smallest_p(m.n, c.n_resamples) for m in tested]
    if family.size > len(tested):  # members the result does not hold: the lowest floor there is
        floors += [2.0 / (c.n_resamples + 1)] * (family.size - len(tested))
    out = []
    for check in result.checks:
        if check.kind != "alpha" or check.expected_value is None:
            continue
        m = next((x for x in tested if x.metric == check.metric), None)
        if m is None:
            continue
        own = smallest_p(m.n, c.n_resamples)
        bound = adjusted_floor(family.method, floors, own)
        if bound >= check.expected_value:
            size = family.size if family.method == "holm" else 1
            need = smallest_n(check.expected_value / size, c.n_resamples)
            how = (f"x {family.size} tests (Holm's first step) = {bound:.3g}"
                   if family.method == "holm" and bound > own else "")
            fix = (f"at least {need} questions per test" if need is not None and need > m.n else
                   f"n_resamples >= {resamples_needed(size, check.expected_value):,} or a smaller family")
            out.append(f"{m.label} significance cannot fail: with {m.n} questions and "
                       f"{c.n_resamples} resamples the smallest p is {own:.3g} {how}".rstrip()
                       + f" >= alpha {check.expected_value:g}; it needs {fix}")
    return tuple(out)
