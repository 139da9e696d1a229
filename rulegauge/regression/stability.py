"""How stable a chosen config is: its share of bootstrap resamples at the top, and its ties.

Naming one best config of many on a few dozen questions overstates what the data can
separate. :func:`stability` answers two questions about a chosen config:

* **stays best**: resample the questions with replacement ``n_resamples`` times
  (seeded local generator), aggregate every config over each resample and count the
  resamples where the chosen config's aggregate is the best (``stays_best``, ties at the
  top included) and where it is best alone (``sole_best``). The bootstrap of a selection
  (Efron & Tibshirani 1993, ch. 6; Hall & Miller, "Using the bootstrap to quantify the
  authority of an empirical ranking", Ann. Statist. 37, 2009).
* **statistically tied**: every other config is compared with the chosen one by the
  paired sign-flip permutation test (:func:`rulegauge.metrics.stats.permutation_test`);
  the p-values form one family adjusted by the multiplicity rule
  (:mod:`rulegauge.metrics.multiplicity`, Holm by default); a config is tied when its
  difference is not flagged (adjusted p >= alpha). Configs with identical per-question
  values have p = 1 and are always tied. A median aggregate, or non-finite values, has no
  permutation test here: tied then means an equal aggregate, and the rule says so.

Ties are listed in config order (:mod:`rulegauge.core.config_order`). Means use
:func:`math.fsum` per resample through exact integer counts, so configs equal on every
question tie exactly in every resample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rulegauge.core.config_order import sort_configs
from rulegauge.core.errors import RulegaugeError
from rulegauge.core.limits import count_problem
from rulegauge.metrics.multiplicity import DEFAULT_ADJUSTMENT, DEFAULT_ALPHA, CorrectionFamily, family_of
from rulegauge.metrics.stats import permutation_test

if TYPE_CHECKING:
    import pandas as pd

_TIE = 1e-12  # aggregates this close (relative) count as equal at the top


@dataclass(frozen=True)
class Stability:
    """The chosen config's stability (module docstring); ``tied`` excludes it."""

    chosen: str
    n_configs: int
    n_questions: int
    n_resamples: int
    seed: int
    stays_best: float
    sole_best: float
    tied: tuple[str, ...]
    rule: str
    family: CorrectionFamily | None = None
    metric: str = ""

    def describe(self) -> str:
        ties = (f"tied with {len(self.tied)} other(s): {', '.join(self.tied[:8])}"
                f"{' ...' if len(self.tied) > 8 else ''}" if self.tied else "no config tied with it")
        on = f"on {self.metric}, " if self.metric else ""
        return (f"{on}{self.chosen} stays best in {self.stays_best:.0%} of {self.n_resamples} bootstrap "
                f"resamples of {self.n_questions} questions (alone at the top in "
                f"{self.sole_best:.0%}, seed {self.seed}); {ties} ({self.rule})")


def _at_top(agg: np.ndarray, sign: float, col: int) -> tuple[np.ndarray, np.ndarray]:
    """Per resample: is ``col`` at the top (ties included), and alone there."""
    scored = sign * agg
    top = scored.max(axis=1)
    tol = _TIE * np.maximum(1.0, np.abs(top))
    at = scored[:, col] >= top - tol
    n_top = np.count_nonzero(scored >= (top - tol)[:, None], axis=1)
    return at, at & (n_top == 1)


def stability(values: dict[str, np.ndarray], chosen: str, *, higher_is_better: bool,
              aggregate: str = "mean", n_resamples: int = 1000, seed: int = 0,
              adjustment: str = DEFAULT_ADJUSTMENT, alpha: float = DEFAULT_ALPHA,
              test_resamples: int = 10_000, metric: str = "") -> Stability:
    """The stability of ``chosen`` among ``values`` (config id -> per-question values,
    the same questions in the same order for every config)."""
    if chosen not in values:
        raise RulegaugeError(f"stability: {chosen!r} is not among the {len(values)} configs")
    problem = count_problem("resamples", n_resamples)
    if problem or n_resamples < 1:
        raise RulegaugeError(f"stability: {problem or 'resamples must be >= 1'}")
    ids = sort_configs(values)
    matrix = np.column_stack([np.asarray(values[c], dtype=np.float64) for c in ids])
    n = matrix.shape[0]
    if n == 0:
        raise RulegaugeError("stability: no questions")
    sign = 1.0 if higher_is_better else -1.0
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_resamples, n))
    finite = bool(np.all(np.isfinite(matrix)))
    if aggregate == "mean" and finite:
        counts = np.zeros((n_resamples, n), dtype=np.int64)
        np.add.at(counts, (np.repeat(np.arange(n_resamples), n), idx.ravel()), 1)
        agg = counts @ matrix / n  # exact counts: equal columns give equal sums
    else:
        agg = np.stack([np.median(matrix[row], axis=0) if aggregate == "median"
                        else np.mean(matrix[row], axis=0) for row in idx])
    col = ids.index(chosen)
    at, alone = _at_top(agg, sign, col)
    others = [c for c in ids if c != chosen]
    family = None
    if aggregate == "mean" and finite and others:
        base = matrix[:, col]
        ps = [permutation_test(matrix[:, ids.index(c)] - base, test_resamples, seed).p_value
              for c in others]
        _, family = family_of([(f"{chosen} -> {c}", metric) for c in others], ps, adjustment, alpha,
                              f"every config against {chosen}")
        flagged = {pair for pair, _ in family.flagged}
        tied = tuple(c for c in others if f"{chosen} -> {c}" not in flagged)
        rule = (f"tied: paired permutation test against it not flagged by {adjustment} over "
                f"{len(others)} tests at alpha {alpha:g}")
    else:
        full = np.median(matrix, axis=0) if aggregate == "median" else matrix.mean(axis=0)
        tied = tuple(c for c in others if math.isclose(full[ids.index(c)], full[col],
                                                        rel_tol=_TIE, abs_tol=_TIE))
        rule = f"tied: equal {aggregate} (no paired test for a {aggregate} or non-finite values)"
    return Stability(chosen, len(ids), n, n_resamples, seed, float(at.mean()),
                     float(alone.mean()), tied, rule, family, metric)


def best_config(values: dict[str, float], *, higher_is_better: bool) -> str:
    """The best config id by ``values`` (aggregates of one metric), ties (within
    :data:`_TIE` of the best, relative) in numeric config order
    (:func:`rulegauge.core.config_order.config_sort_key`: ``rrf_k6`` before ``rrf_k100``),
    never as text: the first of ``rulegauge.metrics.selection.rank_configs``, the order of
    tune and the report, for the kernel's ``compare --reference``. NaN values never win."""
    sign = 1.0 if higher_is_better else -1.0
    finite = {c: sign * v for c, v in values.items() if math.isfinite(v)}
    if not finite:
        raise RulegaugeError("best config: no config has a finite value")
    top = max(finite.values())
    tied = [c for c, v in finite.items() if abs(top - v) <= _TIE * max(1.0, abs(top))]
    return sort_configs(tied)[0]


def best_stability(metrics: pd.DataFrame, metric: str, best: str, *, n_resamples: int = 1000,
                   test_resamples: int = 10_000, seed: int = 0) -> Stability:
    """:func:`stability` of ``best`` among every config of
    ``metrics`` on ``metric`` (its scope: answerable questions for ranking metrics)."""
    from rulegauge.metrics.info import scored_rows

    info, rows = scored_rows(metrics, metric)
    wide = rows.pivot(index="question_id", columns="config_id", values="value").sort_index()
    values = {str(c): wide[c].to_numpy(np.float64) for c in wide.columns if wide[c].notna().all()}
    return stability(values, best, higher_is_better=info.higher_is_better,
                     aggregate=info.aggregate, n_resamples=n_resamples, seed=seed,
                     test_resamples=test_resamples, metric=info.name)
