"""The wheel alone, as README's "From the wheel" promises: in a fresh environment with only the
wheel installed (no clone, no extra), from an empty folder, ``rulegauge run`` runs the embedded
sample (package data; on the lexical grid, saying why, as the [dense] extra is not there),
``python -m rulegauge`` works, and ``rulegauge.testing``'s conformance check runs on the packaged
sample. The wheel and venv are the session's (:mod:`tests.team.conftest`).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from rulegauge import __version__
from tests.team.conftest import Bare

pytestmark = [pytest.mark.team, pytest.mark.slow]


@pytest.fixture(scope="module")
def empty(bare: Bare, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("empty-folder")


def test_run_in_an_empty_folder_runs_the_packaged_sample(bare: Bare, empty: Path) -> None:
    res = bare.rulegauge("run", "--json", cwd=empty)
    assert res.returncode == 0, res.stderr[-3000:]
    summary = json.loads(res.stdout)
    assert summary["questions"] == 57 and summary["unanswerable"] == 6, summary
    # no dense arm without the extra: the lexical grid, and the warning saying so and how to get it
    configs = {c["config_id"] for c in summary["configs"]}
    assert {"rrf_k60_bm25+boost", "rrf_k20_bm25+boost", "arm-bm25", "arm-boost"} == configs, configs
    assert "the [dense] extra is not installed" in res.stderr and "pip install 'rulegauge[dense]'" in res.stderr
    runs = [p for p in (empty / "runs").iterdir() if p.is_dir()]
    assert len(runs) == 1 and (runs[0] / "manifest.json").is_file()
    manifest = json.loads((runs[0] / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["status"] == "complete" and manifest["goldset"]["questions"] == 57
    # the packaged copy, inside the installed package, is what the run read
    assert "site-packages/rulegauge/data/sample/sample.yaml" in manifest["goldset"]["path"]
    assert sorted(p.name for p in empty.iterdir()) == ["runs"]  # nothing else written


def test_python_m_rulegauge_and_the_version(bare: Bare, empty: Path) -> None:
    helped = bare.python("-m", "rulegauge", "--help", cwd=empty)
    assert helped.returncode == 0 and "run" in helped.stdout and "gate" in helped.stdout, helped.stderr
    assert "<bool>" not in helped.stdout  # flags take no value
    version = bare.python("-m", "rulegauge", "--version", cwd=empty)
    assert version.stdout.strip() == f"rulegauge {__version__}", version.stderr
    validated = bare.rulegauge("validate", "--json", bare.installed.python.parents[1] / "lib", cwd=empty)
    assert validated.returncode == 2 and json.loads(validated.stdout)["ok"] is False


def test_serve_search_serves_the_packaged_sample(bare: Bare, empty: Path) -> None:
    with subprocess.Popen([str(bare.installed.bin / "rulegauge"), "serve-search", "--arms", "bm25", "--port", "0"],
                          cwd=empty, env=bare.env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True) as proc:
        try:
            assert proc.stderr is not None
            line = proc.stderr.readline()  # "serving 53 chunks of <the packaged sample> ... ; Ctrl-C stops"
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    assert line.startswith("serving 53 chunks of ") and "rulegauge/data/sample/sample.yaml" in line, line


def test_the_conformance_suite_runs_on_the_packaged_sample(bare: Bare, empty: Path) -> None:
    code = ("from rulegauge.testing.arms import check_arm, sample_inputs\n"
            "gs, corpus = sample_inputs()\n"
            "res = check_arm('bm25', inputs=(gs, corpus))\n"
            "print(len(gs.questions), len(corpus.chunks), res.problems, res.skipped)\n")
    res = bare.python("-c", code, cwd=empty)
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.split() == ["57", "53", "()", "None"], res.stdout
