"""Output hygiene: results on stdout, progress and logs on stderr, `--json` prints
nothing but JSON, third-party progress bars stay silent. Fresh processes throughout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.common import FIXTURES, LEXICAL, REPO

RULEGAUGE = str(Path(sys.executable).parent / "rulegauge")
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _rulegauge(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([RULEGAUGE, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600, env=ENV)


def test_run_json_prints_only_json_on_stdout(tmp_path: Path) -> None:
    res = _rulegauge("run", "--config", str(LEXICAL), "--json", "-o", str(tmp_path),
                   "--run-id", "r1")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)  # the whole of stdout is one JSON document
    assert data["run_id"] == "r1" and data["questions"] == 57
    assert {c["config_id"] for c in data["configs"]} >= {"arm-bm25"}
    assert all(set(c) >= {"hit@5", "recall@5"} for c in data["configs"])


def test_run_quiet_prints_the_run_directory_only(tmp_path: Path) -> None:
    res = _rulegauge("run", "--config", str(LEXICAL), "-q", "-o", str(tmp_path), "--run-id", "r2")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == str(tmp_path / "r2") and res.stderr == ""


def test_run_tables_on_stdout_progress_on_stderr(tmp_path: Path) -> None:
    res = _rulegauge("run", "--config", str(LEXICAL), "-o", str(tmp_path), "--run-id", "r3")
    assert res.returncode == 0, res.stderr
    assert "recall@5" in res.stdout and "searching" not in res.stdout
    assert "arm bm25: searching" in res.stderr


def test_list_json(tmp_path: Path) -> None:
    res = _rulegauge("list", "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert "bm25" in next(v for k, v in data.items() if "arm" in k)


def test_ingest_shows_progress_per_document_and_page(tmp_path: Path) -> None:
    from pypdf import PdfWriter

    pdf = tmp_path / "blank.pdf"
    w = PdfWriter()
    for _ in range(4):
        w.add_blank_page(width=300, height=400)
    with pdf.open("wb") as f:
        w.write(f)
    res = _rulegauge("ingest", str(FIXTURES / "corpus" / "lanterns.txt"), str(pdf), "--json",
                   "--language", "en")
    # the blank PDF may be reported as a problem; progress must be there either way
    assert "[1/2] lanterns" in res.stderr and "[2/2] blank" in res.stderr, res.stderr
    assert "4/4" in res.stderr
    if res.returncode == 0:
        json.loads(res.stdout)


@pytest.mark.slow
def test_run_with_the_dense_arm_leaks_no_progress_bar(tmp_path: Path) -> None:
    res = _rulegauge("run", "--json", "-o", str(tmp_path), "--run-id", "dense",
                   "--cache-dir", str(Path.home() / ".cache" / "rulegauge"))
    assert res.returncode == 0, res.stderr
    json.loads(res.stdout)
    assert "Loading weights" not in res.stdout + res.stderr
    assert "%|" not in res.stdout + res.stderr  # no tqdm bar anywhere


def test_answerers_json(tmp_path: Path) -> None:
    from tests.helpers.analysis import write_synthetic_run

    run = write_synthetic_run(tmp_path / "run-ans", seed=1, with_answers=True)
    res = _rulegauge("answerers", str(run), "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["baseline"] in {"extractive", "echo"}
    assert {r["answerer"] for r in data["answerers"]} == {"extractive", "echo"}
