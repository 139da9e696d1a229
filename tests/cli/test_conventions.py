"""Conventions a team expects of the command line (issue 45 item 5): ``python -m rulegauge``, shell
completion, flags without a ``<bool>`` placeholder, ``--json`` on validate, export, pool and
baseline save (``{"ok": true, ...}``, or ``{"ok": false, "error", "problems"}`` with exit 2), and
the top-level Python API, imported lazily."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from rulegauge import __version__
from rulegauge.cli import app
from tests.helpers.common import FIXTURES, LEXICAL, REPO

ROOT = typer.main.get_command(app)
GOLD = FIXTURES / "goldsets" / "sample-three.yaml"


def _commands(group: object = ROOT, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for name, cmd in sorted(getattr(group, "commands", {}).items()):
        out += _commands(cmd, (*prefix, name)) if hasattr(cmd, "commands") else [(*prefix, name)]
    return out


def test_python_m_rulegauge_is_the_command() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    res = subprocess.run([sys.executable, "-m", "rulegauge", "--version"], capture_output=True, text=True,
                         timeout=120, env=env, cwd=REPO)
    assert res.returncode == 0 and res.stdout.strip() == f"rulegauge {__version__}", res.stderr


def test_shell_completion_completes_commands_and_flags() -> None:
    shown = CliRunner().invoke(app, ["--show-completion", "bash"])
    assert shown.exit_code == 0 and "_RULEGAUGE_COMPLETE=complete_bash" in shown.output, shown.output
    env = {**os.environ, "_RULEGAUGE_COMPLETE": "complete_bash", "COMP_WORDS": "rulegauge gate --pol",
           "COMP_CWORD": "2", "PYTHONPATH": str(REPO)}
    script = Path(sys.executable).parent / "rulegauge"  # completion keys on the program's name
    res = subprocess.run([str(script)], capture_output=True, text=True, timeout=120, env=env)
    assert res.stdout.split() == ["--policy"], res.stdout + res.stderr


@pytest.mark.parametrize("path", [("run",), ("validate",), ("gate",), ("baseline", "save"), ("report",)], ids=" ".join)
def test_flags_show_no_value_placeholder(path: tuple[str, ...]) -> None:
    out = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "300"}).output
    assert "<bool>" not in out and "--help" in out
    assert "<integer>" in out or "<path>" in out or "<text>" in out  # options that take a value keep theirs


def test_every_command_help_has_no_bool_placeholder() -> None:
    for path in _commands():
        out = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "300"}).output
        assert "<bool>" not in out, path


@pytest.fixture(scope="module")
def lexical_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    res = CliRunner().invoke(app, ["run", "-g", str(GOLD), "-c", str(LEXICAL), "-o", str(runs), "--run-id", "a",
                                   "--allow-outside", "-q"])
    assert res.exit_code == 0, res.output
    return runs


def _json(args: list[str], code: int = 0) -> dict[str, object]:
    res = CliRunner().invoke(app, args, env={"COLUMNS": "250"})
    assert res.exit_code == code, res.output
    return json.loads(res.stdout)


def test_json_on_validate_export_pool_and_baseline_save(lexical_run: Path, tmp_path: Path) -> None:
    got = _json(["validate", str(REPO / "goldsets" / "sample.yaml"), "--json"])
    assert got == {"ok": True, "goldset": str(REPO / "goldsets" / "sample.yaml"), "questions": 57, "documents": 4,
                   "unanswerable": 6, "chunks": 53}
    exported = _json(["export", "a", "--runs-dir", str(lexical_run), "-o", str(tmp_path / "trec"), "--json"])
    assert exported["ok"] is True and exported["run_id"] == "a" and exported["questions"] == 2
    assert all(Path(f).is_file() for f in exported["files"]) and len(exported["files"]) >= 4  # type: ignore[union-attr]
    pooled = _json(["pool", "a", "--runs-dir", str(lexical_run), "-c", "rrf_k60_bm25+boost", "-k", "3",
                    "-o", str(tmp_path / "pool.jsonl"), "--json"])
    assert pooled["ok"] is True and pooled["out"] == str(tmp_path / "pool.jsonl") and pooled["depth"] == 3
    assert pooled["configs"] == ["rrf_k60_bm25+boost"] and (tmp_path / "pool.jsonl").is_file()
    saved = _json(["baseline", "save", "a", "mine", "--dir", str(tmp_path / "b"), "--runs-dir", str(lexical_run),
                   "--json"])
    assert saved["ok"] is True and saved["path"] == str(tmp_path / "b" / "mine") and "manifest.json" in saved["files"]


def test_json_on_bad_input_is_every_problem_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "g.yaml"
    bad.write_text("goldset: x\nquestions: 3\n", encoding="utf-8")
    got = _json(["validate", str(bad), "--json"], code=2)
    assert got["ok"] is False and len(got["problems"]) == 3  # type: ignore[arg-type]
    assert {"where": f"{bad}:1", "message": "gold set: missing required field 'version'"} in got["problems"]  # type: ignore[operator]
    saved = _json(["baseline", "save", "nosuch", "mine", "--dir", str(tmp_path / "b"), "--runs-dir", str(tmp_path),
                   "--json"], code=2)
    assert saved["ok"] is False and saved["problems"] == [] and "nosuch" in str(saved["error"])


def test_the_top_level_api_is_lazy_and_gates_like_the_command(tmp_path: Path) -> None:
    code = ("import sys, rulegauge; print(sorted(m for m in ('pandas', 'pyarrow', 'numpy') if m in sys.modules)); "
            "print(sorted(rulegauge.__all__))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    lines = res.stdout.splitlines()
    assert lines[0] == "[]", res.stdout + res.stderr
    assert {"compare", "gate", "open_run", "load_goldset"} <= set(eval(lines[1]))
    from rulegauge import compare, gate

    base = REPO / "runs" / "baselines" / "sample"
    result = gate(base, base, REPO / "docs" / "ci" / "gate-policy.toml")
    assert result.passed and result.exit_code == 0 and result.checks
    comparison = compare(base, base, metrics=["recall@5"], configs=["rrf_k60_bm25+dense+boost"])
    assert [m.metric for m in comparison.metrics] == ["recall@5"] and comparison.metrics[0].difference == 0.0
