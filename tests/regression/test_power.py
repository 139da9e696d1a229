"""Power and MDE of the paired test: statsmodels' solver, grid neighbours, the gate's
MDE, ``rulegauge power``; the simulated detection rate of the real gate is in
test_power_simulation.py (and benchmarks/bench_power.py)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.regression import power as P

CASES = [(0.05, 0.3, 0.8, 0.05), (0.1, 0.22, 0.8, 0.05), (0.02, 0.57, 0.95, 0.01),
         (0.2, 0.3, 0.5, 0.05), (0.085, 0.22, 0.8, 0.05)]


@pytest.mark.parametrize(("delta", "sd", "power", "alpha"), CASES)
def test_against_statsmodels_ttest_power(delta: float, sd: float, power: float, alpha: float) -> None:
    sm = pytest.importorskip("statsmodels.stats.power", reason="statsmodels (dev extra) not installed")
    solver = sm.TTestPower()  # the paired t-test is the one-sample test on the differences
    n = P.sample_size(delta, sd, power, alpha)
    assert n == math.ceil(solver.solve_power(effect_size=delta / sd, power=power, alpha=alpha))
    assert P.ttest_power(delta, sd, 51, alpha) == pytest.approx(solver.power(delta / sd, 51, alpha), rel=1e-9)
    assert P.mde(sd, 51, power, alpha) == pytest.approx(
        solver.solve_power(nobs=51, power=power, alpha=alpha) * sd, rel=1e-5)
    assert P.ttest_power(delta, sd, n, alpha) >= power > P.ttest_power(delta, sd, n - 1, alpha)


def test_edge_cases() -> None:
    assert math.isnan(P.mde(0.0, 50)) and math.isnan(P.mde(0.3, 1))
    assert P.ttest_power(0.0, 0.3, 50) == pytest.approx(0.05)
    assert P.sample_size(0.1, 0.0) == 2 and P.sample_size(0.0, 0.3) is None
    assert P.normal_mde(0.3, 51) < P.mde(0.3, 51)
    with pytest.raises(RulegaugeError, match="power"):
        P.mde(0.3, 51, power=0.01, alpha=0.05)


def _configs(ids: list[tuple[str, float, list[str]]]) -> pd.DataFrame:
    import json

    return pd.DataFrame([{"config_id": c, "kind": "grid", "params": json.dumps(
        {"method": "rrf", "k": k, "arms": arms, "weights": [1.0] * len(arms),
         "depths": [100] * len(arms)})} for c, k, arms in ids]
        + [{"config_id": "arm-a", "kind": "arm", "params": "{}"}])


def test_neighbours_differ_in_one_parameter_nearest_value_only() -> None:
    cfg = _configs([("k10_ab", 10, ["a", "b"]), ("k20_ab", 20, ["a", "b"]), ("k30_ab", 30, ["a", "b"]),
                    ("k40_ab", 40, ["a", "b"]), ("k20_a", 20, ["a"]), ("k10_a", 10, ["a"])])
    assert set(P.neighbours(cfg, "k20_ab")) == {"k10_ab", "k30_ab", "k20_a"}
    assert P.neighbours(cfg, "arm-a") == ()
    rows = []
    for q in range(8):
        for c, shift in (("k20_ab", 0.0), ("k10_ab", 1.0 if q < 2 else 0.0), ("k30_ab", 0.0),
                         ("k20_a", -1.0 if q % 2 else 0.0)):
            rows.append({"question_id": f"q{q}", "config_id": c, "metric": "recall@5",
                         "value": 0.5 + shift / 2, "answerable": True})
    est = P.grid_sd(pd.DataFrame(rows), cfg, "k20_ab", "recall@5")
    assert est is not None and est.source == "grid"
    d1 = np.array([0.5, 0.5, 0, 0, 0, 0, 0, 0])
    d2 = np.array([0, -0.5] * 4)
    pooled = math.sqrt((np.sum((d1 - d1.mean()) ** 2) + np.sum((d2 - d2.mean()) ** 2)) / 14)
    assert est.sd == pytest.approx(pooled)  # k30_ab is identical: left out of the pool
    assert "pooled over 3 neighbour(s)" in est.describe()


@pytest.fixture(scope="module")
def grid_200(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample's 200-config grid run, made once for both adjustments."""
    from typer.testing import CliRunner

    from rulegauge.cli import app

    out = tmp_path_factory.mktemp("grid-200")
    res = CliRunner().invoke(app, ["run", "-c", "docs/grids/grid-200.toml", "--out", str(out),
                                   "--run-id", "g", "--fused-depth", "1"])
    assert res.exit_code == 0, res.output
    return out


@pytest.mark.slow
@pytest.mark.parametrize("adjustment", ["holm", "bh"])
def test_report_compare_and_gate_flag_the_same_configs_on_the_200_grid(
        grid_200: Path, tmp_path: Path, adjustment: str) -> None:
    """One multiplicity rule: on the sample's 200-config grid, the report's ``significant``,
    ``compare --reference`` and a ``family = "grid"`` gate flag the same configs."""
    import json

    from typer.testing import CliRunner

    from rulegauge.analysis.report import config_comparison
    from rulegauge.cli import app
    from rulegauge.regression.gate import run_gate
    from rulegauge.regression.policy import load_policy
    from rulegauge.store.rundir import open_run

    runner = CliRunner()
    svc = "rrf_k60_bm25+dense+boost"
    run = open_run(grid_200 / "g")
    rep = config_comparison(run, "recall@5", reference=svc, n_resamples=500, adjustment=adjustment)
    from_report = set(rep.loc[rep["significant"], "config_id"])
    r = runner.invoke(app, ["compare", str(grid_200 / "g"), str(grid_200 / "g"), "--reference", svc,
                            "-m", "recall@5", "--n-resamples", "500", "--adjustment", adjustment,
                            "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    from_compare = {m["config"]["candidate"] for m in data["metrics"] if m["significant"]}
    assert data["family"]["method"] == adjustment and len(data["family"]["members"]) == 202
    policy = tmp_path / "grid.toml"
    policy.write_text(f'[gate]\nconfig = "{svc}"\ncandidate_config = "arm-bm25"\nalpha = 0.05\n'
                      f'n_resamples = 500\nfamily = "grid"\nadjustment = "{adjustment}"\n'
                      '[metrics."recall@5"]\nalpha = 0.05\n', encoding="utf-8")
    g = run_gate(load_policy(policy), run, run)
    from_gate = {pair.split(" -> ")[1] for pair, _ in g.comparison.family.flagged}
    assert g.comparison.family.size == 202
    assert from_report == from_compare == from_gate


def test_power_command_answers_how_many_questions(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from rulegauge.cli import app
    from tests.helpers.analysis import grid_configs, write_synthetic_run

    path = write_synthetic_run(tmp_path / "r", seed=1, configs=grid_configs())
    runner = CliRunner()
    r = runner.invoke(app, ["power", str(path), "-m", "recall@5", "--delta", "0.05", "--sd", "0.3",
                            "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["estimate"]["source"] == "stated" and data["config"] == "rrf_k60_bm25+dense+boost"
    assert data["needed"] == P.sample_size(0.05, 0.3, 0.8, 0.05)
    assert data["mde"] == pytest.approx(P.mde(0.3, data["n"], 0.8, 0.05))
    table = runner.invoke(app, ["power", str(path), "-m", "recall@5", "--delta", "0.05", "--sd", "0.3"])
    assert table.exit_code == 0 and "questions needed" in table.output
    bad = runner.invoke(app, ["power", str(path), "--delta", "-1", "--sd", "0.3"])
    assert bad.exit_code == 2 and "--delta must be a positive drop" in bad.output
    median = runner.invoke(app, ["power", str(path), "-m", "first_rel_rank", "--sd", "0.3"])
    assert median.exit_code == 2 and "median" in median.output


def test_power_command_gives_the_permutation_tests_mde_from_the_grid(tmp_path: Path) -> None:
    """Without --sd the grid's centred differences are resampled: the JSON's
    ``resampled_mde`` is :func:`resampled_power`'s MDE with the command's --resamples,
    --draws and --seed, beside the t-test's; a stated --sd has none; bad counts exit 2."""
    import json

    from typer.testing import CliRunner

    from rulegauge.cli import app
    from rulegauge.regression.power_resample import resampled_power
    from rulegauge.store.rundir import open_run
    from tests.helpers.analysis import grid_configs, write_synthetic_run

    path = write_synthetic_run(tmp_path / "r", seed=1, configs=grid_configs())
    runner = CliRunner()
    args = ["power", str(path), "-m", "recall@5", "--delta", "0.05", "--resamples", "300",
            "--draws", "200", "--seed", "4", "--json"]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    run = open_run(path)
    est = P.grid_sd(run.table("metrics"), run.table("configs"), data["config"], "recall@5")
    assert est is not None and est.centred is not None and "centred" not in data["estimate"]
    found = resampled_power(est.centred, data["n"], 0.05, n_resamples=300, draws=200, seed=4)
    assert data["resampled_mde"] == found.mde(0.8)
    assert data["resampled_power_at_delta"] == found.power(0.05)
    assert data["mde"] == pytest.approx(P.mde(est.sd, data["n"], 0.8, 0.05))
    table = runner.invoke(app, args[:-1])
    assert table.exit_code == 0 and "permutation test, resampled" in table.output
    stated = json.loads(runner.invoke(app, ["power", str(path), "--sd", "0.3", "--json"]).output)
    assert stated["resampled_mde"] is None  # NaN: nothing to resample
    bad = runner.invoke(app, ["power", str(path), "--draws", "0"])
    assert bad.exit_code == 2 and "--draws" in bad.output
