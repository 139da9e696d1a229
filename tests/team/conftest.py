"""The team tier's one wheel and one bare venv per test session (:func:`bare`).

Building the wheel and installing it into a fresh virtual environment takes about 30 s; every
team test reads the same install, so it is made once per session: under pytest-xdist the first
worker to get here builds it in the session's shared temporary folder, under a file lock, and the
others wait for it and reuse it (``ready.json`` says how the install went). Nothing a test does
changes the install: tests that add packages (pytest for the kernel tests) get their own venv.

The install needs a package index (PyPI in CI; pip's cache and index settings as configured):
when pip cannot install, the tier skips saying why, unless ``RULEGAUGE_REQUIRE_TEAM=1``
(``.ci/run``) makes that a failure.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.bare_venv import Installed, build_wheel, fresh_venv, pip_install


@dataclass(frozen=True)
class Bare:
    """The wheel (``wheel``) installed with no extra into the venv of ``installed``; ``root`` a
    folder of the session's own for runs and files."""

    root: Path
    wheel: Path
    installed: Installed

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        return {**env, "COLUMNS": "200", **extra}

    def rulegauge(self, *args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.installed.bin / "rulegauge"), *map(str, args)], cwd=cwd or self.root,
                              capture_output=True, text=True, timeout=600, env=self.env())

    def python(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.installed.python), *args], cwd=cwd or self.root, capture_output=True,
                              text=True, timeout=600, env=self.env())


def cannot_install(why: str) -> None:
    if os.environ.get("RULEGAUGE_REQUIRE_TEAM") == "1":
        pytest.fail(f"RULEGAUGE_REQUIRE_TEAM=1 but the team tier cannot install the core: {why}")
    pytest.skip(f"the bare core cannot be installed here: {why}")


def _shared_folder(factory: pytest.TempPathFactory) -> Path:
    base = factory.getbasetemp()
    # xdist: each worker's basetemp is <session temp>/popen-gwN; the session's folder is its parent
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "team-wheel"


def _install(folder: Path) -> dict[str, object]:
    wheel = build_wheel(folder / "build")
    installed = pip_install(fresh_venv(folder / "venv"), wheel)
    return {"wheel": str(wheel), "python": str(installed.python), "seconds": installed.seconds,
            "returncode": installed.returncode, "output": installed.output}


@pytest.fixture(scope="session")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Bare:
    folder = _shared_folder(tmp_path_factory)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / "team-wheel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the first worker builds; the others wait here
        ready = folder / "ready.json"
        if not ready.exists():
            ready.write_text(json.dumps(_install(folder)), encoding="utf-8")
        made = json.loads(ready.read_text(encoding="utf-8"))
    installed = Installed(Path(made["python"]), made["seconds"], made["returncode"], made["output"])
    if installed.returncode != 0:
        cannot_install(installed.last_line())
    return Bare(tmp_path_factory.mktemp("team"), Path(made["wheel"]), installed)
