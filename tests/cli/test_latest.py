"""``latest`` is the newest complete run of what a command reads: ``answerers latest``
opens the newest run with answers, not a newer run without."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from rulegauge.cli import app
from tests.helpers.common import FIXTURES, LEXICAL

GOLD = FIXTURES / "goldsets" / "sample-three.yaml"


def test_answerers_latest_skips_a_newer_run_without_answers(tmp_path: Path) -> None:
    runner = CliRunner()
    for rid, extra in (("a", ["-a", "extractive"]), ("b", [])):
        res = runner.invoke(app, ["run", "-g", str(GOLD), "-c", str(LEXICAL), "-o", str(tmp_path),
                                  "--run-id", rid, "--allow-outside", "-q", *extra])
        assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["answerers", "latest", "--runs-dir", str(tmp_path), "--format", "json"],
                        env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    assert "extractive" in res.output
    empty = tmp_path / "none"
    empty.mkdir()
    res = runner.invoke(app, ["answerers", "latest", "--runs-dir", str(empty)])
    assert res.exit_code == 2 and "no complete retrieval run with an answers table" in res.output
