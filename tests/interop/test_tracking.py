"""MLflow export (rulegauge.interop.tracking, `rulegauge export --format mlflow`): logged
offline with MLflow itself and read back with MlflowClient; bad input exits 2."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.interop.tracking import config_means, config_params, log_run, mlflow_name
from rulegauge.store.rundir import Run
from tests.helpers.analysis import write_synthetic_run
from tests.helpers.common import LEXICAL, REPO

pytest.importorskip("mlflow", reason="the [mlflow] extra is not installed")
from mlflow.tracking import MlflowClient

RULEGAUGE = str(Path(sys.executable).parent / "rulegauge")
# MLFLOW_ALLOW_FILE_STORE is left unset: the export sets it for file: URIs itself
ENV = {k: v for k, v in {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}.items()
       if k != "MLFLOW_ALLOW_FILE_STORE"}


def _rulegauge(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RULEGAUGE, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600, env=ENV)


def _read_back(uri: str, run_id: str) -> dict[str, Any]:
    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("rulegauge")
    assert exp is not None
    found = client.search_runs([exp.experiment_id],
                               filter_string=f"tags.`rulegauge.run_id` = '{run_id}'")
    return {r.data.tags["rulegauge.config_id"]: r for r in found}


def test_mlflow_names_are_safe_and_distinct() -> None:
    assert mlflow_name("recall@5") == "recall_at_5"
    assert mlflow_name("nDCG(judged_only=True)@10") == "nDCG_judged_only_True__at_10"
    assert mlflow_name("first_rel_rank") == "first_rel_rank"


def test_logged_runs_equal_the_run_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    run = Run(write_synthetic_run(tmp_path / "syn", seed=3))
    (run.path / "report.html").write_text("<html>report</html>", encoding="utf-8")
    uri = (tmp_path / "mlruns").as_uri()
    logged = log_run(run, uri)
    configs = run.table("configs")
    assert [c for c, _ in logged.runs] == list(configs["config_id"])
    by_config = _read_back(uri, run.run_id)
    assert set(by_config) == set(configs["config_id"])
    metrics = run.table("metrics")
    ans = metrics[metrics["answerable"]]
    client = MlflowClient(tracking_uri=uri)
    for row in configs.to_dict(orient="records"):
        got = by_config[row["config_id"]]
        assert got.data.params["method"] == row["method"]
        assert float(got.data.params["k"]) == row["k"]
        assert got.data.params["arms"] == ",".join(row["arms"])
        assert [float(w) for w in got.data.params["weights"].split(",")] == list(row["weights"])
        assert [int(d) for d in got.data.params["depths"].split(",")] == list(row["depths"])
        assert got.data.tags["rulegauge.run_id"] == run.run_id
        assert got.data.tags["rulegauge.goldset"] == run.manifest.get("goldset", {}).get("name", "")
        mine = ans[ans["config_id"] == row["config_id"]].groupby("metric")["value"].mean()
        assert len(got.data.metrics) == len(mine) > 0
        for metric, mean in mine.items():
            value = got.data.metrics[mlflow_name(str(metric))]
            assert value == mean or (math.isinf(value) and math.isinf(mean))
        artifacts = {a.path for a in client.list_artifacts(got.info.run_id)}
        assert artifacts == {"manifest.json", "metric-names.json", "report.html"}
        assert got.info.status == "FINISHED"
    assert config_params(run) and config_means(run)
    with pytest.raises(RulegaugeError, match="already logged"):
        log_run(run, uri)
    again = log_run(run, uri, replace=True)
    assert again.replaced == len(configs)
    assert len(_read_back(uri, run.run_id)) == len(configs)  # the earlier ones are deleted


def test_export_mlflow_cli_logs_the_sample_run_and_refuses_bad_input(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # for the reader in this process
    res = _rulegauge("run", "--config", str(LEXICAL), "-q", "-o", str(tmp_path), "--run-id", "s")
    assert res.returncode == 0, res.stderr
    res = _rulegauge("export", str(tmp_path / "s"), "--format", "mlflow", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""  # no third-party warning leaks
    assert "logged 3 configs of run s" in res.stdout
    by_config = _read_back((tmp_path / "mlruns").as_uri(), "s")  # ./mlruns by default
    assert set(by_config) == {"rrf_k60_bm25+boost", "arm-bm25", "arm-boost"}
    tags = by_config["arm-bm25"].data.tags
    assert tags["rulegauge.goldset"] == "sample" and len(tags["rulegauge.commit"]) == 40
    names = json.loads((Path(by_config["arm-bm25"].info.artifact_uri.removeprefix("file://"))
                        / "metric-names.json").read_text(encoding="utf-8"))
    assert names["recall_at_5"] == "recall@5"
    missing = _rulegauge("export", "no-such-run", "--format", "mlflow", "--runs-dir",
                       str(tmp_path), cwd=tmp_path)
    assert missing.returncode == 2 and "no-such-run" in missing.stderr
    assert "Traceback" not in missing.stderr
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    unwritable = _rulegauge("export", str(tmp_path / "s"), "--format", "mlflow", "--tracking-uri",
                          (blocker / "mlruns").as_uri(), cwd=tmp_path)
    assert unwritable.returncode == 2 and "Traceback" not in unwritable.stderr, unwritable.stderr
    assert str(blocker) in unwritable.stderr


_KILLABLE = """
import sys, time
from pathlib import Path
from mlflow.tracking import MlflowClient
from rulegauge.interop.tracking import log_run
from rulegauge.store.rundir import Run

marker, stop_after = Path(sys.argv[3]), int(sys.argv[4])
real = MlflowClient.set_terminated
calls = []

def slow(self, *args, **kwargs):  # the n-th config finished: say so, then hang until killed
    real(self, *args, **kwargs)
    calls.append(1)
    if len(calls) == stop_after:
        marker.write_text("x")
        time.sleep(600)

MlflowClient.set_terminated = slow
log_run(Run(Path(sys.argv[1])), sys.argv[2])
"""


def _kill_export(run: Run, uri: str, tmp_path: Path, stop_after: int) -> None:
    """Export ``run`` in a child process and SIGKILL it once ``stop_after`` configs are finished."""
    marker = tmp_path / f"marker-{stop_after}"
    env = {**ENV, "MLFLOW_ALLOW_FILE_STORE": "true"}
    log = tmp_path / f"child-{stop_after}.log"
    with log.open("w", encoding="utf-8") as err:
        child = subprocess.Popen([sys.executable, "-c", _KILLABLE, str(run.path), uri, str(marker),
                                  str(stop_after)], cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=err)
    try:
        for _ in range(6000):  # up to 10 minutes on a loaded machine; ends as soon as the marker is there
            if marker.exists() or child.poll() is not None:
                break
            time.sleep(0.1)
        assert marker.exists(), log.read_text(encoding="utf-8")
    finally:
        child.kill()
        child.wait()


def _complete_runs(uri: str, run_id: str) -> list[Any]:
    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name("rulegauge")
    assert exp is not None
    return list(client.search_runs([exp.experiment_id], filter_string=f"tags.`rulegauge.run_id` = '{run_id}'"))


@pytest.mark.faults
def test_a_killed_export_is_incomplete_and_the_rerun_completes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """#33 (7): SIGKILL part-way leaves no run tagged complete; the rerun says the earlier export
    is incomplete, keeps the finished configs, and ends with exactly one complete run per config."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    run = Run(write_synthetic_run(tmp_path / "syn", seed=5))
    configs = list(run.table("configs")["config_id"])
    assert len(configs) >= 3
    uri = (tmp_path / "mlruns").as_uri()
    _kill_export(run, uri, tmp_path, stop_after=2)
    left = _complete_runs(uri, run.run_id)
    assert 2 <= len(left) < len(configs) + 1
    assert not any(r.data.tags.get("rulegauge.export_complete") for r in left)  # none counts as exported
    assert {r.info.status for r in left} <= {"FINISHED", "RUNNING"}
    logged = log_run(run, uri)
    assert logged.resumed == 2
    assert any("incomplete" in n and "completing it" in n for n in logged.notes)
    final = _complete_runs(uri, run.run_id)
    assert sorted(r.data.tags["rulegauge.config_id"] for r in final) == sorted(configs)
    assert all(r.info.status == "FINISHED" and r.data.tags["rulegauge.export_complete"] == "true" for r in final)
    with pytest.raises(RulegaugeError, match="already logged"):  # complete now: a third export is refused
        log_run(run, uri)


@pytest.mark.faults
def test_a_torn_meta_yaml_is_set_aside_not_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run folder whose meta.yaml a kill left torn is removed, said in a note, and the export
    completes."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    run = Run(write_synthetic_run(tmp_path / "syn", seed=6))
    uri = (tmp_path / "mlruns").as_uri()
    _kill_export(run, uri, tmp_path, stop_after=1)
    metas = sorted((tmp_path / "mlruns").glob("*/*/meta.yaml"))
    assert metas
    torn = metas[0]
    text = torn.read_text(encoding="utf-8")
    torn.write_text(text[: len(text) // 3] + "\n  - [", encoding="utf-8")
    logged = log_run(run, uri)
    assert any("torn" in n and str(torn.parent) in n for n in logged.notes)
    assert not torn.parent.exists()
    final = _complete_runs(uri, run.run_id)
    assert len(final) == len(run.table("configs"))
    assert all(r.data.tags.get("rulegauge.export_complete") == "true" for r in final)
