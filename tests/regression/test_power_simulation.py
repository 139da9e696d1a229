"""The simulation check of the power prediction, on a small scale: the real gate
(``run_gate``) on drops planted in resampled questions of a real run (lexical arms,
three values of k, three arm subsets), with the paired t-test on the same and on many
more replicates as control variate (``rulegauge.testing.power_simulation``; the full
figures come from ``benchmarks/bench_power.py``, docs/gate.md)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from rulegauge.metrics.resample import flip_batches
from rulegauge.regression.gate import Status, run_gate
from rulegauge.regression.power import FEW_DIFFERING, Resampling, grid_sd
from rulegauge.regression.power_resample import resampled_power, thresholds
from rulegauge.testing.power_simulation import (
    DifferencePool,
    _policy,
    _side,
    difference_pool,
    simulate,
    t_detections,
)
from tests.helpers.common import SHARED
from tests.helpers.grids import LEXICAL_GRID, LEXICAL_SERVICE

GRID, CONFIG = LEXICAL_GRID, LEXICAL_SERVICE


def _run(tmp_path: Path, goldset: Path | None = None):
    from typer.testing import CliRunner

    from rulegauge.cli import app
    from rulegauge.store.rundir import open_run

    grid = tmp_path / "grid.toml"
    grid.write_text(GRID, encoding="utf-8")
    args = ["run", "-c", str(grid), "--out", str(tmp_path), "--run-id", "r", "--fused-depth", "1"]
    r = CliRunner().invoke(app, args + (["-g", str(goldset)] if goldset else []))
    assert r.exit_code == 0, r.output
    return open_run(tmp_path / "r")


def test_t_detections_is_the_one_sided_worse_paired_t_test() -> None:
    import scipy.stats

    rng = np.random.default_rng(3)
    d = rng.normal(-0.05, 0.3, size=(200, 40))
    res = scipy.stats.ttest_1samp(d, 0.0, axis=1)
    expected = (res.pvalue < 0.05) & (d.mean(axis=1) < 0)
    assert np.array_equal(t_detections(d, 0.05), expected)
    assert not t_detections(np.full((1, 5), -1.0), 0.05)[0]  # SD 0: no t-test


def test_the_gate_detects_a_planted_drop_at_the_predicted_rate_on_the_sample(tmp_path: Path) -> None:
    """Sample (51 answerable questions), recall@5 around rrf_k60_bm25+boost: 19 of 102
    neighbour differences non-zero. Per target power the t-test's detection rate over
    50,000 replicates drawn from the run's differences is within 5 points of the
    prediction, and the real gate, run 30 times, decides as the t-test on at least 90% of
    the same replicates (a direct 5-point check of the gate's own rate needs hundreds of
    runs per target: benchmarks/bench_power.py, 1,000)."""
    run = _run(tmp_path)
    pool = difference_pool(run, "recall@5", CONFIG)
    est = grid_sd(run.table("metrics"), run.table("configs"), CONFIG, "recall@5")
    assert est is not None and est.reliable and est.differing == pool.differing >= FEW_DIFFERING
    assert est.sd == pytest.approx(pool.sd * math.sqrt(pool.n / (pool.n - 1)))  # ddof 1 vs 0
    for r in simulate(pool, n_sims=30, resampling=Resampling(500, 1), n_control=50_000,
                      method="t-test"):
        assert abs(r.t_control / r.n_control - r.predicted) <= 0.05, r
        assert r.discordant <= 3, r  # the gate's permutation test decides as the t-test


@pytest.mark.shared
def test_on_secret_hitler_few_differing_questions_are_flagged_and_miss(tmp_path: Path) -> None:
    """Secret Hitler (36 answerable questions), recall@5: only 4 questions differ between
    the config and its one neighbour, so the t-test's prediction is flagged unreliable
    (docs/gate.md) and the t-test's rate indeed misses it; the resampled prediction, the
    one the gate prints, is one step there (power 1 just above 1/9), and on MRR@10 (11
    of 72 differ) decides every replicate as the real gate."""
    run = _run(tmp_path, SHARED / "goldsets" / "secret-hitler.yaml")
    est = grid_sd(run.table("metrics"), run.table("configs"), CONFIG, "recall@5")
    assert est is not None and not est.reliable and est.differing < FEW_DIFFERING
    assert "unreliable" in est.describe()
    pool = difference_pool(run, "recall@5", CONFIG)
    (r,) = simulate(pool, (0.5,), n_sims=30, resampling=Resampling(500, 1), n_control=50_000,
                    method="t-test")
    assert r.t_control / r.n_control < r.predicted - 0.05, r
    # the resampled power curve of this pool (4 of 36 differ, all by -1) is one step: a
    # draw without a changed question is all +1/9 and detected at any drop above 1/9
    found = resampled_power(pool.differences, pool.n, 0.05, n_resamples=500, seed=0)
    assert found.mde(0.5) == found.mde(0.95) == pytest.approx(1 / 9)
    assert found.power(found.inside(0.5)) == 1.0 and found.power(found.mde(0.5)) < 0.5
    _gate_decides_as_predicted(difference_pool(run, "MRR@10", CONFIG), 0.5)


def _gate_decides_as_predicted(pool: DifferencePool, target: float, replicates: int = 40) -> None:
    """The real gate (compare, permutation test, family of one, flag) on replicates with
    the resampled MDE at ``target`` planted decides on every one as the prediction's
    threshold from the gate's own sign patterns (seed i for replicate i) says."""
    n_resamples, alpha = 500, 0.05
    found = resampled_power(pool.differences, pool.n, alpha, n_resamples=n_resamples,
                            draws=2000, seed=0)
    delta = found.inside(target)
    assert found.power(delta) >= target > found.power(found.mde(target))
    policy = _policy(pool, alpha, n_resamples)
    man = {"goldset": {"sha256": "s"}, "corpus": {"content_hash": "s"}, "status": "complete"}
    qids = [f"q{i:05d}" for i in range(pool.n)]
    rng = np.random.default_rng(11)
    decided = []
    for i in range(replicates):
        idx = rng.integers(0, pool.differences.size, pool.n)
        b = pool.base[idx]
        c = b + pool.differences[idx] - delta
        result = run_gate(replace(policy, seed=i), _side("base", man, pool, b, qids),
                          _side("candidate", man, pool, c, qids))
        gate = any(ch.kind == "alpha" and ch.status is Status.FAIL for ch in result.checks)
        batches, exact = flip_batches(pool.n, n_resamples, np.random.default_rng(i), 10_000)
        (t,) = thresholds((c - b)[None, :], batches, exact=exact, n_resamples=n_resamples,
                          alpha_test=alpha)
        assert gate == (t < 0), (i, t)
        decided.append(gate)
    assert 0 < sum(decided) < replicates  # both outcomes met: the check is not vacuous


def test_the_gate_decides_every_replicate_as_the_resampled_prediction(tmp_path: Path) -> None:
    """Sample, recall@5 around rrf_k60_bm25+boost: :func:`_gate_decides_as_predicted`."""
    _gate_decides_as_predicted(difference_pool(_run(tmp_path), "recall@5", CONFIG), 0.8)
