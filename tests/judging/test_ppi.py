"""Prediction-powered intervals (rulegauge.judging.ppi): the paper's formulas, equality with
the reference implementation ppi_py, and coverage by simulation on planted judges of
known error (quick: per-unit values; the label-level simulation through the metrics is
in test_ppi_coverage.py, slow)."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.judging.ppi import MeanInterval, classical_interval, ppi_interval, tuned_lambda

Y = [1.0, 0.0, 0.5, 1.0, 0.0]
YHAT = [1.0, 0.5, 0.5, 0.5, 0.0]
UNL = [1.0, 0.0, 0.5, 0.5, 1.0, 1.0, 0.0, 0.5]


def test_the_papers_formulas_on_a_small_case() -> None:
    z = NormalDist().inv_cdf(0.975)
    r = ppi_interval(Y, YHAT, UNL)
    rect = [a - b for a, b in zip(Y, YHAT, strict=True)]  # 0, -0.5, 0, 0.5, 0
    theta = sum(UNL) / 8 + sum(rect) / 5  # 4.5/8 + 0
    var_u = sum((u - 4.5 / 8) ** 2 for u in UNL) / 8
    var_r = sum(x ** 2 for x in rect) / 5  # mean 0
    se = math.sqrt(var_u / 8 + var_r / 5)
    assert r == MeanInterval(pytest.approx(theta), pytest.approx(theta - z * se),  # type: ignore[arg-type]
                             pytest.approx(theta + z * se), pytest.approx(se), 5, 8, 1.0, 0.95)
    c = classical_interval(Y)
    sd = math.sqrt(sum((y - 0.5) ** 2 for y in Y) / 5)
    assert (c.estimate, c.high) == (0.5, pytest.approx(0.5 + z * sd / math.sqrt(5)))
    assert (c.labelled, c.unlabelled, c.lam) == (5, 0, 0.0)


@pytest.mark.parametrize("lam", [1.0, 0.4, None])
def test_equal_to_ppi_py(lam: float | None) -> None:
    ppi_py = pytest.importorskip("ppi_py", reason="ppi-python (dev extra) is the reference")
    rng = np.random.default_rng(3)
    y = rng.integers(0, 4, 60) / 3
    yhat = np.clip(y + rng.normal(0, 0.3, 60), 0, 1)
    unl = np.clip(rng.integers(0, 4, 400) / 3 + rng.normal(0, 0.3, 400), 0, 1)
    for level in (0.95, 0.9):
        ours = ppi_interval(y, yhat, unl, level=level, lam=lam)
        lo, hi = ppi_py.ppi_mean_ci(y, yhat, unl, alpha=1 - level, lam=lam)
        assert (ours.low, ours.high) == (pytest.approx(float(lo[0]), abs=1e-12),
                                         pytest.approx(float(hi[0]), abs=1e-12))
        point = ppi_py.ppi_mean_pointestimate(y, yhat, unl, lam=lam)
        assert ours.estimate == pytest.approx(float(np.ravel(point)[0]), abs=1e-12)
        clo, chi = ppi_py.classical_mean_ci(y, alpha=1 - level)
        c = classical_interval(y, level=level)
        assert (c.low, c.high) == (pytest.approx(float(clo)), pytest.approx(float(chi)))


def test_tuning_drops_a_useless_judge_and_edge_cases() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200).astype(float)
    noise = rng.integers(0, 2, 200).astype(float)  # a judge unrelated to Y
    unl = rng.integers(0, 2, 2000).astype(float)
    assert tuned_lambda(y, noise, unl) < 0.15
    tuned = ppi_interval(y, noise, unl, lam=None)
    assert tuned.width <= ppi_interval(y, noise, unl).width  # never wider than lam = 1
    assert tuned_lambda(y, np.ones(200), np.ones(2000)) == 0.0  # constant labels: no weight
    assert ppi_interval(Y, YHAT, []) == classical_interval(Y)  # nothing unlabelled
    with pytest.raises(RulegaugeError, match="at least 2 human-labelled units, got 1"):
        ppi_interval([1.0], [1.0], UNL)
    with pytest.raises(RulegaugeError, match="5 human values but 4 automatic"):
        ppi_interval(Y, YHAT[:4], UNL)
    with pytest.raises(RulegaugeError, match="finite"):
        ppi_interval(Y, [*YHAT[:4], float("nan")], UNL)
    with pytest.raises(RulegaugeError, match=r"in \[0, 1\]"):
        ppi_interval(Y, YHAT, UNL, lam=1.5)
    with pytest.raises(RulegaugeError, match="level"):
        classical_interval(Y, level=1.0)


def planted(rng: np.random.Generator, size: int, error: float, bias: float
            ) -> tuple[np.ndarray, np.ndarray]:
    """Per-question values in {0, 1/3, 2/3, 1} (true), and a judge's: with probability
    ``error`` a value drawn afresh, skewed upwards by ``bias`` (a lenient judge)."""
    y = rng.choice([0.0, 1 / 3, 2 / 3, 1.0], size=size, p=[0.3, 0.2, 0.2, 0.3])
    wrong = rng.random(size) < error
    guess = np.clip(rng.choice([0.0, 1 / 3, 2 / 3, 1.0], size=size) + bias, 0.0, 1.0)
    return y, np.where(wrong, guess, y)


TRUE_MEAN = 0.2 * 1 / 3 + 0.2 * 2 / 3 + 0.3


@pytest.mark.parametrize(("error", "bias"), [(0.1, 0.0), (0.3, 1 / 3), (0.8, 2 / 3)])
def test_simulated_coverage_is_at_least_94_percent_at_95(error: float, bias: float) -> None:
    """2,000 draws of 100 human-labelled and 900 automatic-only questions from a known
    distribution, the judge wrong on ``error`` of them and lenient by ``bias``: the PPI
    interval covers the true mean in >= 94% of draws (nominal 95%), the tuned one too,
    while the mean of the automatic labels alone is biased whenever the judge is."""
    rng = np.random.default_rng(46)
    covered = {"ppi": 0, "tuned": 0, "classical": 0}
    widths = {"ppi": 0.0, "classical": 0.0}
    draws = 2000
    auto_only_error = 0.0
    for _ in range(draws):
        y, yhat = planted(rng, 100, error, bias)
        _, unl = planted(rng, 900, error, bias)
        for name, iv in (("ppi", ppi_interval(y, yhat, unl)),
                         ("tuned", ppi_interval(y, yhat, unl, lam=None)),
                         ("classical", classical_interval(y))):
            covered[name] += iv.low <= TRUE_MEAN <= iv.high
            if name in widths:
                widths[name] += iv.width / draws
        auto_only_error += (unl.mean() - TRUE_MEAN) / draws
    assert min(covered.values()) / draws >= 0.94, covered
    if error <= 0.1:  # a good judge narrows the interval
        assert widths["ppi"] < 0.6 * widths["classical"]
    if bias > 0:  # what filling the holes without a correction would report
        assert auto_only_error > 0.05
