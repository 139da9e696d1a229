"""Agreement between judges: Cohen's and Fleiss' kappa, a bootstrap interval, a confusion matrix.

* Cohen's kappa (Cohen 1960) of two label lists on the 0-3 grades:
  ``(p_o - p_e) / (1 - p_e)``, computed by ``sklearn.metrics.cohen_kappa_score``
  (``labels=[0, 1, 2, 3]``). When both judges give one and the same label to every
  item, kappa is 0/0: reported as ``None`` (undefined), never as a plausible number.
* The bootstrap interval resamples with replacement (``numpy.random.default_rng(seed)``,
  a local generator; same seed, same interval) and takes the percentile interval of the
  kappas; undefined resamples are dropped (their count is returned). Given ``groups``
  (the question of each pair, as ``judges agreement`` does) it resamples *questions*,
  each drawn question bringing all its pairs (a cluster bootstrap: a question's pages are
  judged with one reading of the question, so its pairs are not independent and a
  bootstrap over pairs would be too narrow); without, it resamples pairs.
* The **always-most-common baseline**: a judge that gives every item the reference's
  most common grade agrees on that grade's share of items, with kappa 0 by definition.
* Fleiss' kappa (Fleiss 1971) for any number of judges over the items at least two of
  them judged (items with different numbers of raters, as in Fleiss' own
  generalisation: per-item agreement ``sum n_ij (n_ij - 1) / (n_i (n_i - 1))``, chance
  agreement from the pooled category shares).
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from rulegauge.goldset.records import GRADES


def cohen(a: Sequence[int], b: Sequence[int]) -> float | None:
    """Cohen's kappa on the 0-3 grades; None when undefined (no variation at all)."""
    if len(a) == 0:
        return None
    if len(set(a) | set(b)) == 1:
        return None  # p_e = 1: 0/0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = float(cohen_kappa_score(list(a), list(b), labels=list(GRADES)))
    return None if np.isnan(value) else value


@dataclass(frozen=True)
class Interval:
    low: float | None
    high: float | None
    resamples: int
    undefined: int
    """Resamples whose kappa is undefined (left out of the percentiles)."""


def bootstrap_kappa(a: Sequence[int], b: Sequence[int], *, seed: int = 0,
                    resamples: int = 1000, level: float = 0.95,
                    groups: Sequence[str] | None = None) -> Interval:
    """Percentile bootstrap interval of Cohen's kappa over the pairs, or over the
    ``groups`` (questions) when given (module docstring)."""
    if len(a) == 0:
        return Interval(None, None, resamples, resamples)
    rng = np.random.default_rng(seed)
    x, y = np.asarray(a), np.asarray(b)
    members: dict[str, list[int]] = {}
    for i, g in enumerate(groups if groups is not None else range(len(x))):
        members.setdefault(str(g), []).append(i)
    clusters = [np.asarray(v) for v in members.values()]  # first-seen order: seeded draws repeat
    values = []
    for _ in range(resamples):
        drawn = rng.integers(0, len(clusters), len(clusters))
        idx = np.concatenate([clusters[int(k)] for k in drawn])
        k = cohen(x[idx].tolist(), y[idx].tolist())
        if k is not None:
            values.append(k)
    if not values:
        return Interval(None, None, resamples, resamples)
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(values, [tail, 100 - tail])
    return Interval(float(lo), float(hi), resamples, resamples - len(values))


def most_common_baseline(reference: Sequence[int]) -> tuple[int | None, float]:
    """(the reference's most common grade, the share of items it agrees on); ties -> the
    lower grade."""
    if not reference:
        return None, 0.0
    counts = Counter(reference)
    grade = min(counts, key=lambda g: (-counts[g], g))
    return grade, counts[grade] / len(reference)


def confusion(a: Sequence[int], b: Sequence[int]) -> list[list[int]]:
    """4 x 4 counts: row = grade from ``a``, column = grade from ``b``."""
    if not a:
        return [[0] * len(GRADES) for _ in GRADES]
    m = confusion_matrix(list(a), list(b), labels=list(GRADES))
    return [[int(v) for v in row] for row in m]


def fleiss(items: Mapping[Any, Sequence[int]]) -> float | None:
    """Fleiss' kappa over the items with at least two grades; None when undefined."""
    rated = [list(v) for v in items.values() if len(v) >= 2]
    if not rated:
        return None
    counts = np.array([[r.count(g) for g in GRADES] for r in rated], dtype=float)
    n = counts.sum(axis=1)
    p_item = ((counts * (counts - 1)).sum(axis=1) / (n * (n - 1))).mean()
    shares = counts.sum(axis=0) / counts.sum()
    p_chance = float((shares ** 2).sum())
    if p_chance == 1.0:
        return None
    return float((p_item - p_chance) / (1 - p_chance))


def accuracy(a: Sequence[int], b: Sequence[int]) -> float | None:
    """Share of pairs with the same grade; None without pairs (nothing to agree on)."""
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a) if a else None
