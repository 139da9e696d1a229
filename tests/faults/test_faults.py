"""The fault tier (``-m faults``): every row of :data:`tests.helpers.fault_cases.CASES`
replayed in a process of its own with a timeout: a ``rulegauge`` row in a child forked by
the fork server (:mod:`tests.helpers.zygote`: a fresh interpreter that imported the CLI and
pandas once), any other row (``python -c ...``: plug-ins on ``sys.path``) in a new interpreter.

Each case must exit with its code, print its fragment, print no traceback, write
nothing outside its case folder and, when the row says so, leave no run folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import nullcontext
from pathlib import Path

import pytest

from tests.helpers.common import REPO
from tests.helpers.fault_case import Case
from tests.helpers.fault_cases import CASES
from tests.helpers.hostile_server import hostile_server
from tests.helpers.zygote import Zygote, zygote

pytestmark = pytest.mark.faults

RULEGAUGE = ("-c", "from rulegauge.cli import main; main()")
BASE_ENV = {"PYTHONPATH": str(REPO), "COLUMNS": "250", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


@pytest.fixture(scope="module")
def forks(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    with zygote(tmp_path_factory.mktemp("zygote"), {**os.environ, **BASE_ENV}) as z:
        yield z


def _argv(case: Case, root: Path, url: str) -> list[str]:
    host = url.split("://", 1)[-1]
    args = [a.replace("{root}", str(root)).replace("{url}", url).replace("{host}", host)
            for a in case.argv]
    head = list(RULEGAUGE) if args[0] == "rulegauge" else []
    return [sys.executable, *head, *args[1:]]


def _listing(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_fault(case: Case, tmp_path: Path, forks: Zygote) -> None:
    root = tmp_path / "case"
    root.mkdir()
    case.build(root)
    outside_before = _listing(tmp_path) - {p for p in _listing(tmp_path) if p.startswith("case")}
    env = {**os.environ, **BASE_ENV, "RULEGAUGE_CACHE": str(tmp_path / "cache")}
    server = hostile_server(case.server) if case.server else nullcontext("")
    with server as url:
        argv = _argv(case, root, url)
        if case.argv[0] == "rulegauge":
            proc = forks.run(argv[1 + len(RULEGAUGE):], cwd=root, env=env, timeout_s=case.timeout_s)
        else:
            proc = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True,
                                  timeout=case.timeout_s)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out, out
    assert proc.returncode == case.exit, out
    assert case.fragment in out, out
    outside_after = {p for p in _listing(tmp_path) if not p.startswith("case")}
    assert outside_after <= outside_before | {"cache"} | {p for p in outside_after
                                                          if p.startswith("cache")}, outside_after
    if case.after is not None:
        case.after(root)
    if case.absent is not None:
        assert case.absent not in out, out
        stored = [p for p in (root / "runs").rglob("*") if p.is_file() and not p.is_symlink()
                  and case.absent.encode() in p.read_bytes()] if (root / "runs").exists() else []
        assert not stored, stored
    if case.no_runs:
        assert not (root / "runs").exists() or not any((root / "runs").iterdir()), \
            _listing(root / "runs")
    assert not [p for p in _listing(root) if ".tmp-" in p], _listing(root)
