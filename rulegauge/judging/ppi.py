"""Prediction-powered inference for a mean: a few human labels plus automatic ones, a valid interval.

Angelopoulos, Bates, Fannjiang, Jordan & Zrnic, "Prediction-powered inference", Science
382 (2023), the mean-estimation interval. ``n`` units carry a human value ``Y`` and an
automatic one ``Yhat``; ``N`` other units carry only ``Yhat``. With the tuning weight
``lam`` (1 in the paper; PPI++, Angelopoulos, Duchi & Zrnic 2023, chooses it)::

    theta = lam * mean(Yhat_unlabelled) + mean(Y - lam * Yhat)
    se    = sqrt( var(lam * Yhat_unlabelled) / N + var(Y - lam * Yhat) / n )
    interval = theta -+ z_(1 - alpha/2) * se

The interval covers ``E[Y]`` at ``1 - alpha`` (asymptotically) whatever the automatic
labels' errors, as long as the labelled units are a uniform random sample of all units
(labelled and unlabelled come from one distribution): a bad judge widens the interval,
it never biases it. The *classical* interval on the human sample alone is
``mean(Y) -+ z * sd(Y) / sqrt(n)``: what one would state without the automatic labels.

Conventions, as the reference implementation ``ppi_py`` (``ppi_mean_ci``,
``classical_mean_ci``; tests hold this module equal to it): variances are population
variances (``ddof=0``); the normal quantile (``statistics.NormalDist``). The tuned
``lam`` is ``ppi_py``'s ``_calc_lam_glm`` for a mean: the labelled covariance of ``Y``
and ``Yhat`` (``ddof=0``) over ``(1 + n/N)`` times the variance of every ``Yhat``
(``ddof=1``), clipped to [0, 1] (0 is the classical interval, so a useless judge cannot
make the interval wider than the human sample's own). Fewer than 2 labelled units is
an error (no variance); no unlabelled unit (``N = 0``) gives the classical interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from rulegauge.core.errors import RulegaugeError


@dataclass(frozen=True)
class MeanInterval:
    """A point estimate of a mean with its two-sided interval at ``level``."""

    estimate: float
    low: float
    high: float
    se: float
    labelled: int
    """Units with a human value (``n``)."""
    unlabelled: int
    """Units with an automatic value only (``N``; 0 for the classical interval)."""
    lam: float
    """The weight of the automatic labels (1: the paper's PPI; 0: classical)."""
    level: float

    @property
    def width(self) -> float:
        return self.high - self.low


def _z(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise RulegaugeError(f"confidence level must be between 0 and 1, got {level}")
    return NormalDist().inv_cdf(1.0 - (1.0 - level) / 2.0)


def _arrays(*xs: npt.ArrayLike) -> list[npt.NDArray[np.float64]]:
    out = [np.asarray(x, dtype=float) for x in xs]
    for x in out:
        if x.ndim != 1 or not np.isfinite(x).all():
            raise RulegaugeError("PPI takes one finite value per unit")
    return out


def classical_interval(y: npt.ArrayLike, *, level: float = 0.95) -> MeanInterval:
    """The CLT interval of the mean of the human values alone (``ppi_py.classical_mean_ci``)."""
    (ys,) = _arrays(y)
    if len(ys) < 2:
        raise RulegaugeError(f"an interval needs at least 2 human-labelled units, got {len(ys)}")
    se = float(ys.std() / np.sqrt(len(ys)))
    mean, z = float(ys.mean()), _z(level)
    return MeanInterval(mean, mean - z * se, mean + z * se, se, len(ys), 0, 0.0, level)


def tuned_lambda(y: npt.ArrayLike, yhat: npt.ArrayLike,
                 yhat_unlabelled: npt.ArrayLike) -> float:
    """PPI++'s variance-minimising weight for a mean, clipped to [0, 1] (module docstring)."""
    ys, hs, us = _arrays(y, yhat, yhat_unlabelled)
    n, big_n = len(ys), len(us)
    if big_n == 0:
        return 0.0
    cov = float(((ys - ys.mean()) * (hs - hs.mean())).mean())
    var = float(np.var(np.concatenate([hs, us]), ddof=1))
    if var == 0.0:
        return 0.0  # constant automatic labels carry no information
    return float(np.clip(cov / ((1.0 + n / big_n) * var), 0.0, 1.0))


def ppi_interval(y: npt.ArrayLike, yhat: npt.ArrayLike, yhat_unlabelled: npt.ArrayLike,
                 *, level: float = 0.95, lam: float | None = 1.0) -> MeanInterval:
    """The prediction-powered estimate of the mean of ``Y`` and its interval (module
    docstring); ``lam`` None: PPI++'s tuned weight. ``y[i]`` and ``yhat[i]`` are one unit."""
    ys, hs, us = _arrays(y, yhat, yhat_unlabelled)
    if len(ys) != len(hs):
        raise RulegaugeError(f"{len(ys)} human values but {len(hs)} automatic ones on the "
                             "labelled units")
    if len(ys) < 2:
        raise RulegaugeError(f"an interval needs at least 2 human-labelled units, got {len(ys)}")
    if len(us) == 0:
        return classical_interval(ys, level=level)
    weight = tuned_lambda(ys, hs, us) if lam is None else float(lam)
    if not 0.0 <= weight <= 1.0:
        raise RulegaugeError(f"the weight of the automatic labels must be in [0, 1], got {lam}")
    rectifier = ys - weight * hs
    estimate = float(weight * us.mean() + rectifier.mean())
    se = float(np.sqrt((weight * us).var() / len(us) + rectifier.var() / len(ys)))
    z = _z(level)
    return MeanInterval(estimate, estimate - z * se, estimate + z * se, se, len(ys), len(us),
                        weight, level)
