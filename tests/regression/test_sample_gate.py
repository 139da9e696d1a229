"""The project's own regression gate: the sample's retrieval against the committed
baseline (runs/baselines/sample) under docs/ci/gate-policy.toml.

A change that hurts the sample's retrieval fails this test, and so CI. When a change
is *meant* to move the numbers (or changes chunking, which changes the corpus hash),
re-save the baseline: `harness run --run-id new && harness baseline save new sample
--overwrite` and commit runs/baselines/sample.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.pipeline.retrieval import RunOptions, run
from tests.helpers.common import REPO

BASELINE = REPO / "runs" / "baselines" / "sample"
POLICY = REPO / "docs" / "ci" / "gate-policy.toml"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def fresh_run(tmp_path_factory):
    if not BASELINE.exists():
        pytest.fail(f"committed baseline {BASELINE} is missing")
    out = tmp_path_factory.mktemp("runs")
    return run(RunOptions(runs_dir=out, run_id="candidate")).path


def gate(*args):
    return CliRunner().invoke(app, ["gate", "--baseline", str(BASELINE), "--policy", str(POLICY), *args])


def test_unchanged_sample_passes_the_gate(fresh_run, tmp_path):
    res = gate("--run", str(fresh_run), "--junit", str(tmp_path / "g.xml"))
    assert res.exit_code == 0, res.output
    assert (tmp_path / "g.xml").exists()


def test_dropping_the_dense_arm_fails_naming_metrics_and_questions(fresh_run):
    res = gate("--run", str(fresh_run), "--candidate-config", "rrf_k60_bm25+boost")
    assert res.exit_code == 1, res.output
    assert "FAIL" in res.output and "MRR@10" in res.output
    assert "bw-" in res.output  # the regressed questions are named


def test_missing_policy_exits_2(fresh_run, tmp_path):
    res = CliRunner().invoke(app, ["gate", "--baseline", str(BASELINE), "--run", str(fresh_run),
                                   "--policy", str(tmp_path / "nope.toml")])
    assert res.exit_code == 2
    assert "nope.toml" in res.output
