"""The team recipe, executed: every step of ``docs/ci/team-gate.yml``, parsed from the file
(:mod:`tests.helpers.workflow`), run in a scratch team repository as GitHub's runner would run it,
against the team's search service, which the recipe's own step starts (here rulegauge's reference
service, ``serve-search``, over the team's gold set, with the arms ``retrieval/arms.txt`` names).

The team repository holds what the recipe's header says to copy: the example grid and policy
(``docs/ci/team-grid.toml``, ``docs/ci/team-policy.toml``), a gold set (the sample's questions and
documents as ``goldsets/our-game.yaml``) and, once made with the header's commands, the committed
baseline. Each pull request is a fresh checkout of it with one change:

* the same retrieval: the gate passes, the summary says so;
* a service that drops its boost arm: the gate fails (exit 1), the summary names the metric;
* a service that exits at start: the job fails at once with the service's log, and the summary
  still says why;
* three new gold questions: the gate compares on the questions both runs share and lists the new
  ones (the "gold sets that grow" rule, docs/gate.md).

The job's settings are the team's (``RULEGAUGE_SPEC`` the built wheel's path, ``SERVICE_CMD``,
``SEARCH_BASE`` on a free port). Every checkout's ``.venv`` is the session's venv, where the wheel was
installed (:mod:`tests.team.conftest`), as a runner restores it from a cache: the install step keeps
it and runs pip there (pip finds the wheel installed; with ``RULEGAUGE_EXTRAS`` it resolves the
extra against it, as a dry run, so the bare venv stays bare).
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rulegauge import __version__
from tests.helpers.common import REPO
from tests.helpers.workflow import Job, JobRun, load_job, run_job
from tests.team.conftest import Bare

pytestmark = [pytest.mark.team, pytest.mark.slow]

RECIPE = REPO / "docs" / "ci" / "team-gate.yml"
INSTALL = "Install rulegauge (the core; an extra only when RULEGAUGE_EXTRAS names it)"
START = "Start the search service and wait for it"
SERVE = '''#!/usr/bin/env bash
# the team's search service (a stand-in): rulegauge's reference service over the team's corpus,
# fusing the arms retrieval/arms.txt names; a pull request that changes retrieval changes that file
exec .venv/bin/rulegauge serve-search -g goldsets/our-game.yaml --arms "$(cat retrieval/arms.txt)" --port "$1"
'''
NEW_QUESTIONS = "".join(
    f"  - {{id: {qid}, language: en, question: {question!r}, pages: {pages}}}\n" for qid, question, pages in (
        ("team-58", "How many bridges close when the tide die shows High Water?", "[[bw-rules#4, bw-rules#12]]"),
        ("team-59", "What do I get for selling an oil card worth 3?", "[bw-rules#6]"),
        ("team-60", "Which player takes the first turn of the game?", "[[bw-rules#3, bw-faq#1]]")))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def job() -> Job:
    return load_job(RECIPE, "gate")


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The team repository on main (without its baseline yet)."""
    root = tmp_path_factory.mktemp("team-repo")
    (root / "goldsets").mkdir()
    shutil.copy2(REPO / "goldsets" / "sample.yaml", root / "goldsets" / "our-game.yaml")
    shutil.copytree(REPO / "goldsets" / "sample", root / "goldsets" / "sample")
    (root / "retrieval").mkdir()
    shutil.copy2(REPO / "docs" / "ci" / "team-grid.toml", root / "retrieval" / "grid.toml")
    shutil.copy2(REPO / "docs" / "ci" / "team-policy.toml", root / "gate-policy.toml")
    (root / "retrieval" / "serve.sh").write_text(SERVE, encoding="utf-8")
    (root / "retrieval" / "arms.txt").write_text("bm25,boost\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def runner_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What actions/setup-python leaves: ``python`` on PATH (this interpreter's base Python)."""
    folder = tmp_path_factory.mktemp("runner-bin")
    (folder / "python").symlink_to(getattr(sys, "_base_executable", sys.executable))
    return folder


def _checkout(team: Path, bare: Bare, into: Path) -> Path:
    shutil.copytree(team, into)
    (into / ".venv").symlink_to(bare.installed.python.parents[1], target_is_directory=True)
    return into


def _run(job: Job, folder: Path, bare: Bare, runner_bin: Path, number: int, *, only: tuple[str, ...] | None = None,
         settings: dict[str, str] | None = None, runner_env: dict[str, str] | None = None) -> JobRun:
    """The job as pull request ``number`` on a runner: the team's settings (the wheel, the service on
    a free port; ``settings`` adds more), ``python`` on PATH (``runner_env`` adds to the environment)."""
    port = _free_port()
    env = {**bare.env(PATH=f"{runner_bin}:{bare.env()['PATH']}"), **(runner_env or {})}
    overrides = {"RULEGAUGE_SPEC": str(bare.wheel), "SERVICE_CMD": f"bash retrieval/serve.sh {port}",
                 "SEARCH_BASE": f"http://127.0.0.1:{port}", **(settings or {})}
    context = {"github": {"event": {"pull_request": {"number": number}}, "run_attempt": 1,
                          "ref": f"refs/pull/{number}/merge"}, "runner": {"os": "Linux"}}
    return run_job(job, folder, context=context, env=env, overrides=overrides, only=only)


def _baseline_commands() -> list[str]:
    """The header's baseline commands, as the recipe writes them."""
    text = RECIPE.read_text(encoding="utf-8")
    return [m.group(1) for m in re.finditer(r"^#\s+(\.venv/bin/rulegauge (?:run|baseline) .+)$", text, re.M)]


@pytest.fixture(scope="module")
def baseline(job: Job, team: Path, bare: Bare, runner_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The team's committed baseline, made on main as the recipe's header says: install, start the
    service, then the header's commands; ``baselines/our-game`` is then part of the repository."""
    main = _checkout(team, bare, tmp_path_factory.mktemp("main") / "repo")
    done = _run(job, main, bare, runner_bin, 0, only=("actions/checkout@v4", INSTALL, START))
    try:
        assert not done.failed, "\n".join(o.output for o in done.outcomes)[-3000:]
        commands = _baseline_commands()
        assert [c.split()[1] for c in commands] == ["run", "baseline"], commands
        for command in commands:
            res = subprocess.run(["bash", "-eo", "pipefail", "-c", command], cwd=main, capture_output=True, text=True,
                                 timeout=600, env=bare.env(SEARCH_BASE=done.settings["SEARCH_BASE"]))
            assert res.returncode == 0, f"{command}\n{res.stdout[-2000:]}{res.stderr[-2000:]}"
    finally:
        done.stop()
    assert (main / "baselines" / "our-game" / "manifest.json").is_file()
    shutil.copytree(main / "baselines", team / "baselines")  # committed
    return team / "baselines" / "our-game"


@pytest.fixture
def pull_request(job: Job, team: Path, baseline: Path, bare: Bare, runner_bin: Path,
                 tmp_path: Path) -> Iterator[tuple[Path, list[JobRun]]]:
    folder = _checkout(team, bare, tmp_path / "checkout")
    runs: list[JobRun] = []
    yield folder, runs
    for done in runs:
        done.stop()


def test_the_install_step_takes_the_wheel_and_resolves_an_extra_against_it(
        job: Job, team: Path, bare: Bare, runner_bin: Path, tmp_path: Path) -> None:
    folder = _checkout(team, bare, tmp_path / "checkout")
    plain = _run(job, folder, bare, runner_bin, 1, only=(INSTALL,))
    assert not plain.failed and f"rulegauge {__version__}" in plain.outcome(INSTALL).output, plain.outcome(INSTALL)
    # a wheel path with an extra used to be "No scheme supplied": a dry run (the bare venv stays bare)
    extra = _run(job, folder, bare, runner_bin, 1, only=(INSTALL,), settings={"RULEGAUGE_EXTRAS": "report"},
                 runner_env={"PIP_DRY_RUN": "1"})
    out = extra.outcome(INSTALL)
    assert out.code == 0 and "No scheme" not in out.output and f"rulegauge {__version__}" in out.output, out.output


def test_a_pull_request_that_keeps_retrieval_passes(job: Job, bare: Bare, runner_bin: Path,
                                                     pull_request: tuple[Path, list[JobRun]]) -> None:
    folder, runs = pull_request
    runs.append(done := _run(job, folder, bare, runner_bin, 2))
    assert not done.failed, "\n".join(f"{o.step.name}: {o.output[-1500:]}" for o in done.outcomes)
    assert "PASS" in done.summary and "rrf_k60_live" in done.summary, done.summary
    assert {"gate.md", "gate.xml", "service.log", "runs/pr-2-1/manifest.json"} <= set(done.uploaded)
    assert all((folder / p).exists() for p in done.uploaded)


def test_a_pull_request_that_worsens_retrieval_fails_with_its_summary(
        job: Job, bare: Bare, runner_bin: Path, pull_request: tuple[Path, list[JobRun]]) -> None:
    folder, runs = pull_request
    (folder / "retrieval" / "arms.txt").write_text("bm25\n", encoding="utf-8")  # the boost arm dropped
    runs.append(done := _run(job, folder, bare, runner_bin, 3))
    gate = done.outcome("Run the gold set and gate it")
    assert done.failed and gate.ran and gate.code == 1, gate.output[-3000:]
    assert "FAIL" in done.summary and "recall@5" in done.summary, done.summary
    assert done.outcome("Keep the outputs").ran and (folder / "gate.xml").is_file()


def test_a_service_that_exits_at_start_fails_the_job_at_once_saying_why(
        job: Job, bare: Bare, runner_bin: Path, pull_request: tuple[Path, list[JobRun]]) -> None:
    folder, runs = pull_request
    (folder / "retrieval" / "arms.txt").write_text("bm25,nosuch\n", encoding="utf-8")  # the service cannot start
    runs.append(done := _run(job, folder, bare, runner_bin, 4))
    start = done.outcome(START)
    assert start.code == 1 and "exited before answering" in start.output, start.output[-3000:]
    assert "nosuch" in start.output  # the service's own log, tailed into the step's
    assert not done.outcome("Run the gold set and gate it").ran and not (folder / "runs").exists()
    assert "the search service exited before answering" in done.summary, done.summary
    assert done.outcome("Keep the outputs").ran


def test_a_pull_request_adding_gold_questions_gates_on_the_shared_ones(
        job: Job, bare: Bare, runner_bin: Path, pull_request: tuple[Path, list[JobRun]]) -> None:
    folder, runs = pull_request
    gold = folder / "goldsets" / "our-game.yaml"
    gold.write_text(gold.read_text(encoding="utf-8") + NEW_QUESTIONS, encoding="utf-8")
    runs.append(done := _run(job, folder, bare, runner_bin, 5))
    gate = done.outcome("Run the gold set and gate it")
    assert gate.code == 0 and not done.failed, gate.output[-3000:]
    assert "PASS" in done.summary and all(q in done.summary for q in ("team-58", "team-59", "team-60")), done.summary
