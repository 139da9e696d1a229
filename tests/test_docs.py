"""Docs stay true: the schema reference is generated from the table registry, and the
README's commands exist."""

from __future__ import annotations

import re

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
