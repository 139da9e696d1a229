"""The bare core as a team installs it: rulegauge's wheel built from this tree, installed into a
fresh virtual environment with no extra (tests/team/ and benchmarks/bench_install.py).

:func:`build_wheel` copies what the wheel is made of (``pyproject.toml``, ``setup.py``,
``README.md``, ``rulegauge/``, the sample in ``goldsets/``, ...) out of the tree first, so building
writes nothing into the checkout (setuptools leaves ``build/`` and ``*.egg-info`` beside its sources).
It builds without isolation when this Python's setuptools is new enough (offline, seconds), else in
pip's isolated environment.
:func:`fresh_venv` makes a virtual environment; :func:`pip_install` installs into it through
pip's ordinary client (its cache and index settings as configured), returning the process
and the wall seconds it took. :func:`site_packages_size` and :func:`distributions` are what
the install benchmark compares.
"""

from __future__ import annotations

import importlib.metadata as md
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.common import REPO

WHEEL_SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE", "CHANGELOG.md", "rulegauge",
                 "goldsets")  # goldsets/: the sample the build copies into the wheel (setup.py)
PIP_TIMEOUT_S = 900  # a cold pip cache over a slow index; a warm one takes seconds


@dataclass(frozen=True)
class Installed:
    python: Path
    seconds: float
    returncode: int
    output: str  # pip's stdout and stderr

    @property
    def bin(self) -> Path:
        return self.python.parent

    def last_line(self) -> str:
        lines = [ln for ln in self.output.splitlines() if ln.strip() and not ln.startswith("WARNING: Location")]
        return lines[-1] if lines else f"exit {self.returncode}"


def _setuptools_ok() -> bool:
    try:
        major = int(md.version("setuptools").split(".")[0])
    except (md.PackageNotFoundError, ValueError):
        return False
    return major >= 77  # pyproject's build-system: `license` as an SPDX expression


def build_wheel(dest: Path, repo: Path = REPO) -> Path:
    """rulegauge's wheel, built from a copy of ``repo``'s sources into ``dest`` (module docstring)."""
    src = dest / "src"
    src.mkdir(parents=True)
    for name in WHEEL_SOURCES:
        if (repo / name).is_dir():
            shutil.copytree(repo / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(repo / name, src / name)
    isolation = ["--no-build-isolation"] if _setuptools_ok() else []
    out = dest / "wheel"
    # an absolute path: a bare name (`src`) is a requirement pip would look up in its indexes
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *isolation,
                          "-w", str(out), str(src.resolve())],
                         capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
    wheels = sorted(out.glob("rulegauge-*.whl"))
    if res.returncode != 0 or len(wheels) != 1:
        raise RuntimeError(f"building the wheel failed (exit {res.returncode}): {res.stderr[-2000:]}")
    return wheels[0]


def fresh_venv(path: Path) -> Path:
    """A new virtual environment at ``path`` (with pip); its Python."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, capture_output=True,
                   timeout=PIP_TIMEOUT_S)
    return path / "bin" / "python"


def pip_install(python: Path, *specs: str | Path) -> Installed:
    """``python -m pip install SPECS`` (pip's own cache and index settings), timed."""
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    start = time.perf_counter()
    res = subprocess.run([str(python), "-m", "pip", "install", "-q", *map(str, specs)], capture_output=True,
                         text=True, timeout=PIP_TIMEOUT_S, env=env)
    return Installed(python, time.perf_counter() - start, res.returncode, res.stdout + res.stderr)


def site_packages(python: Path) -> Path:
    res = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True, timeout=60)
    return Path(res.stdout.strip())


def site_packages_size(python: Path) -> int:
    """Bytes of every regular file under the environment's site-packages (links not followed)."""
    total = 0
    for root, _dirs, files in os.walk(site_packages(python)):
        for name in files:
            p = Path(root) / name
            if not p.is_symlink():
                total += p.stat().st_size
    return total


def distributions(python: Path) -> list[str]:
    """Names of the distributions installed in the environment, sorted (pip and setuptools too)."""
    code = ("import importlib.metadata as md; "
            "print('\\n'.join(sorted({d.metadata['Name'] for d in md.distributions()})))")
    res = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True, timeout=60)
    return [ln for ln in res.stdout.splitlines() if ln]
