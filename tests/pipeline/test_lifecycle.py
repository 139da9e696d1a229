"""The one run lifecycle: a run from a gold set and a run ``--from`` a stored run take the
same steps: answering on the engine given, status ``failed`` on any error, writer closed."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rulegauge.cli import app
from rulegauge.core.errors import RulegaugeError
from rulegauge.pipeline import lifecycle
from rulegauge.pipeline.options import RunOptions
from rulegauge.pipeline.rescore import rescore
from rulegauge.pipeline.retrieval import run
from tests.helpers.common import LEXICAL
from tests.helpers.ray_cluster import RAY_MISSING, local_cluster


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return run(RunOptions(config=LEXICAL, runs_dir=tmp_path_factory.mktemp("runs"), run_id="src"))


def _manifest(path: Path) -> dict:
    return json.loads((path / "manifest.json").read_text(encoding="utf-8"))


def _unlocked(path: Path) -> bool:
    """No writer holds the run's lock (flock conflicts across open files, even in one process)."""
    fd = os.open(path / ".lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _failing_scoring(*args, **kwargs):
    raise RulegaugeError("scoring broke (test)")


@pytest.mark.parametrize("kind", ["goldset", "from"])
def test_an_error_in_any_step_records_failed_and_closes_the_writer(source, tmp_path, monkeypatch,
                                                                   kind):
    monkeypatch.setattr(lifecycle, "grid_tables", _failing_scoring)
    opts = RunOptions(config=LEXICAL, runs_dir=tmp_path, run_id="broken",
                      source_run=source.path if kind == "from" else None)
    with pytest.raises(RulegaugeError, match="scoring broke"):
        (rescore if kind == "from" else run)(opts)
    m = _manifest(tmp_path / "broken")
    assert m["status"] == "failed" and m["error"] == "scoring broke (test)"
    assert "finished" not in m
    assert _unlocked(tmp_path / "broken")


def test_from_refuses_an_existing_run_before_touching_it(source, tmp_path):
    opts = RunOptions(config=LEXICAL, runs_dir=source.path.parent, run_id="src",
                      source_run=source.path)
    before = (source.path / "manifest.json").read_bytes()
    with pytest.raises(RulegaugeError, match="needs a new --run-id"):
        rescore(opts)
    assert (source.path / "manifest.json").read_bytes() == before


def test_both_sources_record_the_same_manifest_sections(source, tmp_path):
    again = _manifest(rescore(RunOptions(config=LEXICAL, runs_dir=tmp_path, run_id="again",
                                         source_run=source.path)).path)
    first = _manifest(source.path)
    assert set(first) == set(again) - {"source_run"}
    assert again["engine"]["name"] == "local" and again["status"] == "complete"
    assert again["arms"] == first["arms"] and again["fused_rows"] == first["fused_rows"]


@pytest.mark.slow
@pytest.mark.skipif(RAY_MISSING is not None, reason=str(RAY_MISSING))
def test_run_from_answers_on_the_engine_given(source, tmp_path):
    with local_cluster():
        r = CliRunner().invoke(app, ["run", "--from", str(source.path), "-c", str(LEXICAL),
                                     "-o", str(tmp_path), "--run-id", "on-ray", "--engine", "ray",
                                     "-a", "extractive", "--quiet"])
    assert r.exit_code == 0, r.output
    m = _manifest(tmp_path / "on-ray")
    assert m["status"] == "complete"
    assert m["engine"]["name"] == "ray" and m["answering"]["engine"] == m["engine"]
    assert (tmp_path / "on-ray" / "answers.parquet").exists()
