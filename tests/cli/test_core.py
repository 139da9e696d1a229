"""The core CLI commands through typer's CliRunner."""

from __future__ import annotations

from typer.testing import CliRunner

from harness.cli import app
from tests.helpers.common import LEXICAL, REPO

runner = CliRunner()


def test_help_lists_commands_with_examples():
    res = runner.invoke(app, ["--help"])
    assert res.exit_code == 0
    for cmd in ("run", "list", "validate", "export", "goldset"):
        assert cmd in res.output
    for cmd in ("run", "list", "validate", "export"):
        sub = runner.invoke(app, [cmd, "--help"])
        assert sub.exit_code == 0 and "Example:" in sub.output, cmd


def test_list_shows_registries():
    res = runner.invoke(app, ["list"])
    assert res.exit_code == 0
    for name in ("bm25", "boost", "external", "rrf", "recall@k", "nDCG@k", "questions", "fused"):
        assert name in res.output


def test_validate_ok_and_bad(tmp_path):
    res = runner.invoke(app, ["validate", str(REPO / "goldsets" / "sample.yaml")])
    assert res.exit_code == 0 and "OK" in res.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("goldset: x\nversion: 1\ndocuments: []\nquestions:\n"
                   "  - {id: a, language: en, question: '', pages: [nope]}\n")
    res = runner.invoke(app, ["validate", str(bad)])
    assert res.exit_code == 2
    assert "bad.yaml" in res.output


def test_run_prints_summary_and_writes_run(tmp_path):
    res = runner.invoke(app, ["run", "--config", str(LEXICAL), "--out", str(tmp_path), "--run-id", "cli"])
    assert res.exit_code == 0, res.output
    assert "rrf_k60_bm25+boost" in res.output and "recall@5" in res.output
    assert (tmp_path / "cli" / "fused.parquet").exists()


def test_run_bad_param_and_bad_config_exit_2(tmp_path):
    res = runner.invoke(app, ["run", "--config", str(LEXICAL), "--param", "bm25k1=3", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "NAME.KEY=VALUE" in res.output
    bad = tmp_path / "grid.toml"
    bad.write_text("[grid]\narms = [['nosuch']]\n")
    res = runner.invoke(app, ["run", "--config", str(bad), "--out", str(tmp_path)])
    assert res.exit_code == 2 and "unknown arm 'nosuch'" in res.output
