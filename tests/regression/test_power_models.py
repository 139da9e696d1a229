"""The whole-question-loss power model (``rulegauge.regression.power_models``): each draw's
decision is the gate's permutation test's with the same patterns, the curve by hand where
only the lost questions differ, the real gate on planted losses (sample; Secret Hitler
when ../shared is present), the model printed by ``rulegauge power`` and the gate, and the
bounds: questions needed never below the test's smallest n, a drop beyond the range."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from rulegauge.cli import app
from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.resample import flip_batches
from rulegauge.metrics.stats import permutation_test
from rulegauge.regression.gate import Status, run_gate
from rulegauge.regression.power_models import QuestionPool, _detected, loss_power, question_pool
from rulegauge.regression.power_resample import largest_count
from rulegauge.testing.power_simulation import DifferencePool, _lost, _policy, _side, loss_pool
from tests.helpers.common import SHARED
from tests.helpers.grids import LEXICAL_GRID, LEXICAL_SERVICE

GRID, CONFIG = LEXICAL_GRID, LEXICAL_SERVICE


@pytest.mark.parametrize(("n", "n_resamples"), [(8, 500), (14, 300), (30, 999)])
def test_each_draw_decides_as_the_gates_permutation_test_with_its_patterns(
        n: int, n_resamples: int) -> None:
    """Differences of a discrete metric with some questions lost (value to 0, difference
    -1 or -0.5) beside small noise: the count over the gate's own patterns (seed s) says
    what ``permutation_test(d, n_resamples, s)`` says, exact (n = 8) and drawn."""
    rng = np.random.default_rng(5)
    noise = np.array([-0.5, 0.0, 0.0, 0.0, 0.0, 0.5]) - 0.02
    alpha, seen = 0.1, set()
    for s in range(30):
        d = noise[rng.integers(0, noise.size, n)]
        lost = rng.random(n) < rng.random() * 0.6
        d = np.where(lost, -rng.choice([0.5, 1.0], n), d)
        batches, exact = flip_batches(n, n_resamples, np.random.default_rng(s), 10_000)
        allowed = largest_count(alpha, 2 ** n if exact else n_resamples, 0 if exact else 1)
        mine = bool(_detected(d[None, :], np.concatenate(list(batches)), allowed)[0])
        gate = bool(d.mean() < 0 and permutation_test(d, n_resamples, s).p_value < alpha)
        assert mine == gate, (s, d)
        seen.add(gate)
    assert seen == {True, False}  # both outcomes met: the check is not vacuous


def test_only_lost_questions_differ_the_curve_by_hand() -> None:
    """Every question at 1, no noise: ``k`` lost questions are the only non-zero
    differences, and the exact test (n = 10, 2**10 <= 2000 patterns) counts the 2**(10-k)
    patterns that flip none of them, p = 2**(1-k): detected from k = 6 at alpha 0.05 (a
    p of 1/32), from k = 8 at 0.05 / 6 (1/128 < 0.00833), for every draw."""
    pool = QuestionPool(np.ones(40), np.zeros(40), 0.0)
    one = loss_power(pool, 10, 0.05, n_resamples=2000, draws=50, seed=1)
    assert set(one.first) == {6.0} and one.mde_k(0.95) == 6.0 and one.mde(0.8) == pytest.approx(0.6)
    assert one.power(5) == 0.0 and one.power(6) == 1.0
    six = loss_power(pool, 10, 0.05 / 6, n_resamples=2000, draws=50, seed=1)
    assert set(six.first) == {8.0}
    never = loss_power(pool, 5, 0.05, n_resamples=2000, draws=20)  # 2/32 >= 0.05: never
    assert all(math.isinf(k) for k in never.first) and math.isinf(never.mde(0.5))


def test_loss_drops_and_seed() -> None:
    pool = QuestionPool(np.array([1.0, 0.5, 0.0, 1.0]), np.array([0.1, -0.1, 0.0, 0.0]), 0.0)
    assert pool.mean_loss == pytest.approx(2.5 / 3)  # the question at the floor has nothing to lose
    a = loss_power(pool, 20, 0.05, n_resamples=300, draws=40, seed=2)
    assert a == loss_power(pool, 20, 0.05, n_resamples=300, draws=40, seed=2)
    assert a.questions_for(0.1) == math.ceil(0.1 * 20 / (2.5 / 3))
    assert a.power_at_drop(0.1) == a.power(a.questions_for(0.1))
    assert a.drop(4) == pytest.approx(4 * (2.5 / 3) / 20)
    for bad in (QuestionPool(np.zeros(3), np.zeros(3), 0.0), QuestionPool(np.ones(2), np.ones(3), 0.0)):
        with pytest.raises(RulegaugeError, match="whole-question loss"):
            loss_power(bad, 10, 0.05)


@pytest.fixture(scope="module")
def lexical_run(tmp_path_factory: pytest.TempPathFactory):
    return _run(tmp_path_factory.mktemp("lexical"))


def _run(tmp_path: Path, goldset: Path | None = None):
    from rulegauge.store.rundir import open_run

    grid = tmp_path / "grid.toml"
    grid.write_text(GRID, encoding="utf-8")
    args = ["run", "-c", str(grid), "--out", str(tmp_path), "--run-id", "r", "--fused-depth", "1"]
    r = CliRunner().invoke(app, args + (["-g", str(goldset), "--allow-outside"] if goldset else []))
    assert r.exit_code == 0, r.output
    return open_run(tmp_path / "r")


def _gate_decides_as_the_loss_model(pool: DifferencePool, target: float, replicates: int = 40) -> None:
    """The real gate on replicates with the model's k at ``target`` planted (k drawn
    questions above the floor set to it) decides on every one as the model's count with
    the gate's own patterns (seed i for replicate i) says."""
    from rulegauge.testing.power_simulation import simulate_loss

    n_resamples, alpha = 500, 0.05
    qpool = loss_pool(pool)
    found = loss_power(qpool, pool.n, alpha, n_resamples=n_resamples, draws=1000, seed=0)
    k = found.mde_k(target)
    assert found.power(int(k)) >= target > found.power(int(k) - 1)
    policy = _policy(pool, alpha, n_resamples)
    man = {"goldset": {"sha256": "s"}, "corpus": {"content_hash": "s"}, "status": "complete"}
    qids = [f"q{i:05d}" for i in range(pool.n)]
    b, c = _lost(pool, qpool.floor, k, np.random.default_rng(11), replicates)
    assert np.all(np.sum(c == qpool.floor, axis=1) >= np.minimum(k, np.sum(b > qpool.floor, axis=1)))
    decided = []
    for i in range(replicates):
        result = run_gate(replace(policy, seed=i), _side("base", man, pool, b[i], qids),
                          _side("candidate", man, pool, c[i], qids))
        gate = any(ch.kind == "alpha" and ch.status is Status.FAIL for ch in result.checks)
        batches, exact = flip_batches(pool.n, n_resamples, np.random.default_rng(i), 10_000)
        allowed = largest_count(alpha, 2 ** pool.n if exact else n_resamples, 0 if exact else 1)
        assert gate == bool(_detected((c[i] - b[i])[None, :], np.concatenate(list(batches)),
                                      allowed)[0]), i
        decided.append(gate)
    assert 0 < sum(decided) < replicates  # both outcomes met: the check is not vacuous
    (sim,) = simulate_loss(pool, (target,), n_sims=5)
    assert sim.lost == loss_power(qpool, pool.n, alpha, n_resamples=2000, draws=2000).mde_k(target)


def test_the_gate_decides_every_planted_loss_as_the_model_on_the_sample(lexical_run) -> None:
    """Sample (51 answerable questions), recall@5 around rrf_k60_bm25+boost, at 0.8."""
    from rulegauge.testing.power_simulation import difference_pool

    _gate_decides_as_the_loss_model(difference_pool(lexical_run, "recall@5", CONFIG), 0.8)


@pytest.mark.shared
def test_the_gate_decides_every_planted_loss_as_the_model_on_secret_hitler(tmp_path: Path) -> None:
    """Secret Hitler (36 answerable questions, ../shared), MRR@10 at 0.5."""
    from rulegauge.testing.power_simulation import difference_pool

    run = _run(tmp_path, SHARED / "goldsets" / "secret-hitler.yaml")
    _gate_decides_as_the_loss_model(difference_pool(run, "MRR@10", CONFIG), 0.5)


def test_question_pool_pairs_values_with_the_grid_sds_differences(lexical_run) -> None:
    from rulegauge.regression.power import grid_sd
    from rulegauge.testing.power_simulation import difference_pool

    metrics, configs = lexical_run.table("metrics"), lexical_run.table("configs")
    pool = question_pool(metrics, configs, CONFIG, "MRR@10")
    est = grid_sd(metrics, configs, CONFIG, "MRR@10")
    sim = difference_pool(lexical_run, "MRR@10", CONFIG)
    assert pool is not None and est is not None and pool.floor == 0.0
    assert np.array_equal(pool.centred, est.centred) and np.array_equal(pool.centred, sim.differences)
    assert np.array_equal(pool.values, sim.base)


def test_power_prints_each_model_and_bounds_what_it_promises(lexical_run, tmp_path: Path) -> None:
    """``rulegauge power``: both models, with the loss model's k and drop; questions needed
    never below the sign-flip test's smallest n (6 at 0.05, 8 with 6 tests), and a drop
    beyond the metric's range (recall@5 lies in [0, 1]) is exit 2."""
    from rulegauge.metrics.reach import smallest_n

    path, runs = str(lexical_run.path), CliRunner()
    env = {"RULEGAUGE_CACHE": str(tmp_path / "cache")}
    r = runs.invoke(app, ["power", path, "-c", CONFIG, "-m", "MRR@10", "--delta", "0.5", "--json"],
                    env=env)
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert [m[0] for m in data["models"]] == ["shift", "loss"]
    assert data["min_questions"] == smallest_n(0.05, 10_000) == 6 and data["needed"] >= 6
    assert all(n is None or n >= 6 for _, _, n in data["sizes"])
    assert 0 < data["loss_k"] <= data["n"] and data["loss_mde"] > data["resampled_mde"]
    assert 0.0 <= data["loss_power_at_shift_mde"] < 0.8  # the shift MDE, made of lost questions
    six = json.loads(runs.invoke(app, ["power", path, "-c", CONFIG, "-m", "MRR@10", "--delta", "0.5",
                                       "--tests", "6", "--json"], env=env).output)
    assert six["min_questions"] == 8 and six["needed"] >= 8
    table = runs.invoke(app, ["power", path, "-c", CONFIG, "-m", "MRR@10"], env=env)
    assert "whole-question loss" in table.output and "uniform shift" in table.output
    assert "questions lose all their relevant pages" in table.output
    bad = runs.invoke(app, ["power", path, "-c", CONFIG, "--delta", "2"], env=env)
    assert bad.exit_code == 2 and "beyond the range of recall@5" in bad.output
    assert "Traceback" not in bad.output


def test_gate_prints_the_loss_mde_and_keeps_it_per_baseline(lexical_run, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The gate's power table: the whole-question-loss MDE beside the shift's, from the
    baseline's grid; a second gate reads both models from the cache (same figures)."""
    from rulegauge.regression import power_cache
    from rulegauge.regression.gate_report import GATE_FORMATS
    from rulegauge.regression.policy import parse_policy

    monkeypatch.setenv("RULEGAUGE_CACHE", str(tmp_path / "cache"))
    policy = parse_policy({"gate": {"config": CONFIG, "alpha": 0.05, "n_resamples": 500},
                           "metrics": {"recall@5": {"max_drop": 0.02}}}, "<test>")
    first = run_gate(policy, lexical_run, lexical_run)
    (w,) = first.power
    pool = question_pool(lexical_run.table("metrics"), lexical_run.table("configs"), CONFIG, "recall@5")
    assert pool is not None
    found = loss_power(pool, w.n, w.alpha_test, n_resamples=500, seed=0)
    assert w.loss_k == found.mde_k(0.8) and w.loss_mde == found.mde(0.8)
    assert "MDE, lost questions" in GATE_FORMATS.get("table")(first)
    assert f"({int(w.loss_k)} questions lost)" in GATE_FORMATS.get("markdown")(first)
    # the two models, the t-test's MDE and its questions for max_drop
    assert len(list((tmp_path / "cache" / power_cache.FOLDER).glob("*.json"))) == 4

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("computed again: the cache was not read")

    monkeypatch.setattr("rulegauge.regression.power_models.loss_power", refuse)
    monkeypatch.setattr(power_cache, "resampled_power", refuse)
    monkeypatch.setattr("rulegauge.regression.power.mde", refuse)
    monkeypatch.setattr("rulegauge.regression.power.sample_size", refuse)
    again = run_gate(policy, lexical_run, lexical_run)
    assert again.power == first.power
