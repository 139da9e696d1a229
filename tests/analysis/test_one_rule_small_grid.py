"""Issue 34's done-when lines on a cheap real run (the sample, lexical arms, 9 grid configs):
report, compare and gate flag the same configs and each names its family and adjustment;
gate prints an MDE per gated metric (its SD from the grid, its level alpha / family size).
The same agreement on the 200-config grid, Holm and BH: tests/regression/test_power.py
(slow); the stability line and the headline's "best, or tied with N others":
tests/regression/test_stability.py, tests/analysis/test_report_grid.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rulegauge.cli import app
from rulegauge.store.rundir import Run, open_run
from tests.helpers.grids import LEXICAL_GRID, LEXICAL_SERVICE

GRID, REF = LEXICAL_GRID, LEXICAL_SERVICE


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    tmp = tmp_path_factory.mktemp("one-rule")
    (tmp / "grid.toml").write_text(GRID, encoding="utf-8")
    r = CliRunner().invoke(app, ["run", "-c", str(tmp / "grid.toml"), "--out", str(tmp),
                                 "--run-id", "g", "--fused-depth", "1"])
    assert r.exit_code == 0, r.output
    return open_run(tmp / "g")


def _policy(tmp_path: Path, adjustment: str, family: str = "grid") -> Path:
    p = tmp_path / f"policy-{adjustment}-{family}.toml"
    p.write_text(f'[gate]\nconfig = "{REF}"\ncandidate_config = "arm-bm25"\nalpha = 0.05\n'
                 f'n_resamples = 500\nfamily = "{family}"\nadjustment = "{adjustment}"\n'
                 '[metrics."recall@5"]\nalpha = 0.05\nmax_drop = 0.02\n'
                 '[metrics."MRR@10"]\nalpha = 0.05\n', encoding="utf-8")
    return p


def test_report_compare_and_gate_flag_the_same_configs_and_name_the_family(
        run: Run, tmp_path: Path) -> None:
    from rulegauge.analysis.report import config_comparison
    from rulegauge.regression.gate import run_gate
    from rulegauge.regression.policy import load_policy

    adjustment = "bh"  # Holm and BH both on the 200-config grid: tests/regression/test_power.py
    rep = config_comparison(run, "recall@5", reference=REF, n_resamples=500, adjustment=adjustment)
    from_report = set(rep.loc[rep["significant"], "config_id"])
    n_others = len(rep) - 1
    assert rep.attrs["family"].method == adjustment and rep.attrs["family"].size == n_others
    runner = CliRunner()
    args = ["compare", str(run.path), str(run.path), "--reference", REF, "-m", "recall@5",
            "--n-resamples", "500", "--adjustment", adjustment]
    data = json.loads(runner.invoke(app, [*args, "--json"]).output)
    from_compare = {m["config"]["candidate"] for m in data["metrics"] if m["significant"]}
    table = runner.invoke(app, args)
    assert table.exit_code == 0 and f"p ({adjustment}) family: {adjustment} over {n_others}" in table.output
    policy = _policy(tmp_path, adjustment)
    fam = run_gate(load_policy(policy), run, run).comparison.family
    assert fam.method == adjustment and fam.size == 2 * n_others
    from_gate = {pair.split(" -> ")[1] for pair, metric in fam.flagged if metric == "recall@5"}
    assert from_report == from_compare == from_gate
    text = runner.invoke(app, ["gate", "--baseline", str(run.path), "--run", str(run.path),
                               "--policy", str(policy)]).output
    assert f"p ({adjustment}) family: {adjustment} over {2 * n_others} test(s)" in text


def test_gate_prints_an_mde_per_gated_metric(run: Run, tmp_path: Path) -> None:
    from rulegauge.regression.gate import run_gate
    from rulegauge.regression.policy import load_policy
    from rulegauge.regression.power import grid_sd, mde
    from rulegauge.regression.power_resample import resampled_power

    policy = _policy(tmp_path, "holm", family="gated")
    r = CliRunner().invoke(app, ["gate", "--baseline", str(run.path), "--run", str(run.path),
                                 "--policy", str(policy), "--config", REF])
    assert r.exit_code == 0, r.output
    assert "detectable drops" in r.output
    g = run_gate(load_policy(policy), run, run, config=REF)
    assert [w.metric for w in g.power] == ["recall@5", "MRR@10"]
    for w in g.power:
        est = grid_sd(run.table("metrics"), run.table("configs"), REF, w.metric)
        assert est is not None and w.estimate == est
        assert w.t_mde == pytest.approx(mde(est.sd, w.n, 0.8, 0.05 / 2))  # alpha / family size
        # the MDE the gate stands on: its permutation test's, by resampling the same differences
        assert est.centred is not None and w.method == "resampled"
        found = resampled_power(est.centred, w.n, 0.05 / 2, n_resamples=load_policy(policy).n_resamples,
                                seed=load_policy(policy).seed)
        assert w.mde == found.mde(0.8)
        assert f"{w.mde:.3g}" in r.output and f"{w.t_mde:.3g}" in r.output
