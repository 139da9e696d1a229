"""rulegauge.regression.effect_size: the mean difference with its t margin of error and
Cohen's d_z, against a published worked example and two other implementations (scipy's
paired t-test, statsmodels' t interval), and in what compare prints."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.regression.effect_size import effect_cells, effect_head, paired_effect

# Lakens (2013), Frontiers in Psychology 4:863, the worked example of a within-subjects
# design: ten paired ratings whose differences are these; the paper reports
# t(9) = 4.74 and Cohen's d_z = 1.50 (eq. 6: d_z = M_diff / SD_diff = t / sqrt(n)).
LAKENS_DIFFERENCES = [0, 1, 1, 1, 1, 0, 1, 2, 1, 2]


def test_lakens_worked_example() -> None:
    e = paired_effect(LAKENS_DIFFERENCES)
    assert e.n == 10 and e.mean == 1.0
    assert e.sd == pytest.approx(math.sqrt(4 / 9))  # squared deviations 1+1+1+1 over n - 1
    assert round(e.d_z, 2) == 1.50
    assert round(e.d_z * math.sqrt(10), 2) == 4.74  # the paper's t(9)
    # 95% MOE = t_{0.975, 9} * SD / sqrt(n), t_{0.975, 9} = 2.2622 (any t table)
    assert e.moe == pytest.approx(2.262157 * math.sqrt(4 / 9) / math.sqrt(10), rel=1e-6)
    assert (round(e.low, 2), round(e.high, 2)) == (0.52, 1.48)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("confidence", [0.95, 0.9, 0.99])
def test_equals_scipy_paired_t_test_and_statsmodels_interval(seed: int, confidence: float) -> None:
    scipy_stats = pytest.importorskip("scipy.stats", reason="scipy (dev extra) not installed")
    weightstats = pytest.importorskip("statsmodels.stats.weightstats",
                                      reason="statsmodels (dev extra) not installed")
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 3, size=40) / 2.0  # recall-like values: many ties
    cand = np.clip(base + rng.choice([-0.5, 0.0, 0.0, 0.5], size=40), 0.0, 1.0)
    e = paired_effect(cand - base, confidence)
    res = scipy_stats.ttest_rel(cand, base)
    assert e.d_z == pytest.approx(res.statistic / math.sqrt(40), rel=1e-12)
    ci = res.confidence_interval(confidence_level=confidence)
    assert (e.low, e.high) == (pytest.approx(ci.low, rel=1e-9), pytest.approx(ci.high, rel=1e-9))
    lo, hi = weightstats.DescrStatsW(cand - base).tconfint_mean(alpha=1.0 - confidence)
    assert e.moe == pytest.approx((hi - lo) / 2.0, rel=1e-9)


def test_edge_cases_are_nan_never_a_plausible_number() -> None:
    one = paired_effect([0.5])
    assert one.mean == 0.5 and math.isnan(one.moe) and math.isnan(one.d_z)
    flat = paired_effect([0.0, 0.0, 0.0])
    assert flat.moe == 0.0 and math.isnan(flat.d_z)  # no spread: no standardized size
    assert effect_cells(flat) == ("0 ± 0", "n/a") and effect_cells(None) == ("n/a", "n/a")
    for bad in ([], [1.0, math.inf], [[1.0, 2.0]]):
        with pytest.raises(RulegaugeError, match="effect size"):
            paired_effect(bad)
    with pytest.raises(RulegaugeError, match="confidence"):
        paired_effect([1.0, 2.0], confidence=1.0)
    d = np.array([1.0, -2.0, 0.5])
    paired_effect(d)
    assert d.tolist() == [1.0, -2.0, 0.5]  # never mutated


def test_cells_and_heads() -> None:
    e = paired_effect([-1.0, 0.0, -0.5, -0.5])
    assert effect_head(0.9) == ("mean Δ ± MOE (90% t)", "d_z")
    mean, dz = effect_cells(e)
    assert mean.startswith("-0.5 ± ") and dz == f"{-0.5 / np.std([-1.0, 0.0, -0.5, -0.5], ddof=1):.2g}"


def test_compare_gives_every_test_its_effect(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rulegauge.cli import app
    from rulegauge.regression.compare import compare_runs
    from rulegauge.store.rundir import Run
    from tests.helpers.comparison import base_lists, move, write_run

    base = Run(write_run(tmp_path / "base", base_lists()))
    lists = move(move(base_lists(), "q07", "rb#7", 7), "q03", "rb#3", 9)
    cand = Run(write_run(tmp_path / "cand", lists))
    c = compare_runs(base, cand, n_resamples=500)
    for m in c.metrics:
        finite = all(math.isfinite(b) and math.isfinite(v) for _, b, v in m.values)
        assert (m.effect is not None) == (finite and m.n > 0), m.metric
        if m.effect is not None:
            d = np.array([v - b for _, b, v in m.values])
            assert m.effect.mean == pytest.approx(d.mean()) and m.effect.n == m.n
            assert m.effect == paired_effect(d, c.confidence)
    r = CliRunner().invoke(app, ["compare", str(tmp_path / "base"), str(tmp_path / "cand"), "-m",
                                 "MRR@10", "--n-resamples", "500", "--json"])
    assert r.exit_code == 0, r.output
    (row,) = json.loads(r.output)["metrics"]
    assert row["effect"]["d_z"] == pytest.approx(c.find("MRR@10", c.pairs[0]).effect.d_z)  # type: ignore[union-attr]
    md = CliRunner().invoke(app, ["compare", str(tmp_path / "base"), str(tmp_path / "cand"), "-m",
                                  "MRR@10", "--n-resamples", "500", "--format", "markdown"])
    assert "| 95% CI (BCa) | mean Δ ± MOE (95% t) | d_z |" in md.output
