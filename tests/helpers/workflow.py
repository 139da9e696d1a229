"""A GitHub Actions job run here, step by step, as the runner would: the team recipe's test
(tests/team/test_team_recipe.py) reads ``docs/ci/team-gate.yml`` with this and runs it.

:func:`load_job` parses the workflow file; :meth:`Job.run` runs its steps in a working folder (the
checkout): a ``run:`` step through ``bash --noprofile --norc -eo pipefail`` (the runner's default
shell) with the job's and the step's ``env`` (``${{ ... }}`` expressions filled from a context of
``github``/``runner``/``env`` values), ``GITHUB_STEP_SUMMARY`` and ``GITHUB_WORKSPACE`` set, in a
process group of its own. A step runs while no earlier step failed, or when its ``if:`` is
``always()``; another ``if:`` is refused (the test would not know what the runner does). A ``uses:``
step must be one this module knows (:data:`ACTIONS`): checkout and setup-python (done by the
caller: the folder, ``python`` on ``PATH``), cache (nothing to restore here) and upload-artifact
(its paths are recorded, :attr:`JobRun.uploaded`). Background processes a step leaves (the
service) are stopped, by their process group, when the job ends (:meth:`JobRun.stop`).

Reference: GitHub Actions, "Workflow syntax" (jobs.<id>.steps, env, if) and "Contexts".
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ACTIONS = ("actions/checkout", "actions/setup-python", "actions/cache", "actions/upload-artifact")
EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")
STEP_TIMEOUT_S = 600


@dataclass(frozen=True)
class Step:
    name: str
    run: str | None
    uses: str | None
    env: dict[str, str]
    condition: str | None
    with_: dict[str, Any]


@dataclass(frozen=True)
class Job:
    env: dict[str, str]
    steps: tuple[Step, ...]

    def step(self, name: str) -> Step:
        return next(s for s in self.steps if s.name == name)


@dataclass(frozen=True)
class Outcome:
    step: Step
    ran: bool
    code: int
    output: str


@dataclass
class JobRun:
    folder: Path
    outcomes: list[Outcome] = field(default_factory=list)
    uploaded: list[str] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)
    settings: dict[str, str] = field(default_factory=dict)  # the job's env as the steps saw it

    @property
    def failed(self) -> bool:
        return any(o.ran and o.code != 0 for o in self.outcomes)

    @property
    def summary(self) -> str:
        p = self.folder / ".github-step-summary.md"
        return p.read_text(encoding="utf-8") if p.exists() else ""

    def outcome(self, name: str) -> Outcome:
        return next(o for o in self.outcomes if o.step.name == name)

    def stop(self) -> None:
        """Stop what the steps left running (each step's own process group)."""
        for pgid in self.groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGTERM)


def _name(raw: Mapping[str, Any]) -> str:
    return str(raw.get("name") or raw.get("uses") or raw.get("run", "").splitlines()[0])


def load_job(path: Path, job: str) -> Job:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    raw = doc["jobs"][job]
    steps = tuple(Step(_name(s), s.get("run"), s.get("uses"), {k: str(v) for k, v in (s.get("env") or {}).items()},
                       s.get("if"), dict(s.get("with") or {})) for s in raw["steps"])
    return Job({k: str(v) for k, v in (raw.get("env") or {}).items()}, steps)


def fill(text: str, context: Mapping[str, Any]) -> str:
    """``${{ a.b.c }}`` replaced by the context's value; an expression it cannot read is an error."""
    def one(m: re.Match[str]) -> str:
        value: Any = context
        for part in m.group(1).split("."):
            if not isinstance(value, Mapping) or part not in value:
                raise KeyError(f"workflow expression {m.group(0)!r}: not in the test's context")
            value = value[part]
        return str(value)

    return EXPRESSION.sub(one, text)


def _should_run(step: Step, failed: bool) -> bool:
    if step.condition is None:
        return not failed
    if step.condition.strip() == "always()":
        return True
    raise ValueError(f"step {step.name!r}: if: {step.condition!r} is not one the test can evaluate")


def run_job(job: Job, folder: Path, *, context: Mapping[str, Any], env: Mapping[str, str],
            overrides: Mapping[str, str] = (), only: tuple[str, ...] | None = None,
            skip: tuple[str, ...] = ()) -> JobRun:
    """Run ``job``'s steps in ``folder`` (module docstring). ``env`` is the runner's environment
    (``PATH`` with ``python``); ``overrides`` replace values of the job's ``env`` as a team sets them;
    ``only``/``skip`` name steps to run or leave out (a skipped step counts as not run)."""
    done = JobRun(folder)
    job_env: dict[str, str] = {}
    for key, value in job.env.items():
        job_env[key] = overrides[key] if key in overrides else fill(value, {**context, "env": job_env})
    done.settings = dict(job_env)
    summary = folder / ".github-step-summary.md"
    for step in job.steps:
        chosen = (only is None or step.name in only) and step.name not in skip
        if not chosen or not _should_run(step, done.failed):
            done.outcomes.append(Outcome(step, False, 0, ""))
            continue
        if step.uses is not None:
            action = step.uses.split("@")[0]
            if action not in ACTIONS:
                raise ValueError(f"step {step.name!r} uses {step.uses}: not an action the test knows")
            if action == "actions/upload-artifact":
                done.uploaded += [fill(p.strip(), {**context, "env": job_env})
                                  for p in str(step.with_.get("path", "")).splitlines() if p.strip()]
            done.outcomes.append(Outcome(step, True, 0, ""))
            continue
        step_env = {k: fill(v, {**context, "env": job_env}) for k, v in step.env.items()}
        full = {**env, **job_env, **step_env, "CI": "true", "GITHUB_ACTIONS": "true",
                "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_WORKSPACE": str(folder)}
        script = fill(step.run or "", {**context, "env": job_env})
        proc = subprocess.Popen(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=folder,
                                env=full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        done.groups.append(proc.pid)  # its own group: what it leaves running is stopped with the job
        try:
            out, _ = proc.communicate(timeout=STEP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            out += f"\n[step timed out after {STEP_TIMEOUT_S} s]"
        done.outcomes.append(Outcome(step, True, proc.returncode if proc.returncode is not None else -1, out))
    return done
