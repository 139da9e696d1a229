"""The team path, as docs/ci/team-gate.yml runs it: the wheel of this tree installed into a fresh
virtual environment with the bare core (no extra), an ``http`` arm run of the sample against a
search endpoint started here, ``baseline save``, then ``gate``: passing against the same service,
failing (exit 1) against a degraded one. Also: no extra's module is importable there, a component
whose extra is missing exits 2 with its ``pip install``, and the kernel's unit tests pass there.

The wheel and its venv are made once per session (:mod:`tests.team.conftest`).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rulegauge import __version__
from rulegauge.arms import load_builtin_arms
from rulegauge.core.extras import EXTRAS
from rulegauge.pipeline.retrieval import SAMPLE_GOLDSET
from rulegauge.pipeline.search_service import SearchService, build_service, serving
from tests.helpers.bare_venv import pip_install
from tests.helpers.common import REPO
from tests.helpers.reference_service import http_grid
from tests.team.conftest import Bare, cannot_install

pytestmark = [pytest.mark.team, pytest.mark.slow]

ARMS = ("bm25", "boost")
DROPPED = 3  # the degraded service loses its top 3 hits: recall@5 falls far beyond max_drop
POLICY = '''[gate]
config = "rrf_k60_live"
[metrics."recall@5"]
max_drop = 0.02
[metrics."hit@5"]
max_drop = 0.02
'''
# unit tests of core, fusion and metrics that import only core modules (no oracle, no repo files)
KERNEL_TESTS = (
    *(f"tests/core/test_{m}.py" for m in ("atomic", "digest", "journal", "jsonl", "limits", "names", "redact",
                                          "registry_ordering", "text", "tablerows", "config_order")),
    *(f"tests/fusion/test_{m}.py" for m in ("exact", "fuse", "kernel", "rrf", "planes")),
    *(f"tests/metrics/test_{m}.py" for m in ("page_lists", "ranking", "stats")),
)


@dataclass
class _Degraded(SearchService):
    """The reference service with its first :data:`DROPPED` hits lost (a regression)."""

    def search(self, req: Mapping[str, Any]) -> dict[str, Any]:
        reply = super().search(req)
        return {**reply, "hits": reply["hits"][DROPPED:]}


@pytest.fixture(scope="module")
def lexical() -> SearchService:
    load_builtin_arms()
    return build_service(SAMPLE_GOLDSET, ARMS)


@pytest.fixture
def service(lexical: SearchService) -> Iterator[str]:
    with serving(lexical) as url:
        yield f"{url}/search"


@pytest.fixture
def degraded(lexical: SearchService) -> Iterator[str]:
    with serving(_Degraded(lexical.corpus, lexical.arms, lexical.k, lexical.depth)) as url:
        yield f"{url}/search"


def test_the_wheel_gives_the_command_and_no_extra(bare: Bare) -> None:
    res = bare.rulegauge("--version")
    assert res.returncode == 0 and res.stdout.strip() == f"rulegauge {__version__}", res.stderr
    modules = sorted({m for e in EXTRAS.values() for m in e.modules} | {"faiss", "httpx"})
    probe = bare.python("-c", "import importlib.util, sys; "
                        "print(' '.join(m for m in sys.argv[1:] if importlib.util.find_spec(m)))", *modules)
    assert probe.returncode == 0 and probe.stdout.split() == [], probe.stdout + probe.stderr


def _run(bare: Bare, grid: Path, run_id: str) -> None:
    res = bare.rulegauge("run", "-g", SAMPLE_GOLDSET, "-c", grid, "--out", bare.root / "runs", "--run-id", run_id,
                         "--quiet")
    assert res.returncode == 0, res.stderr


def _gate(bare: Bare, run_id: str) -> subprocess.CompletedProcess[str]:
    return bare.rulegauge("gate", "--baseline", bare.root / "baselines" / "team", "--run", run_id,
                          "--policy", bare.root / "policy.toml", "--runs-dir", bare.root / "runs",
                          "--markdown", bare.root / f"{run_id}.md", "--junit", bare.root / f"{run_id}.xml")


def test_http_run_then_gate_passes_on_the_same_service_and_fails_on_a_degraded_one(
        bare: Bare, service: str, degraded: str) -> None:
    (bare.root / "policy.toml").write_text(POLICY, encoding="utf-8")
    good = http_grid(bare.root / "good.toml", service, arms=",".join(ARMS), grid='[["live"]]')
    bad = http_grid(bare.root / "bad.toml", degraded, arms=",".join(ARMS), grid='[["live"]]')
    _run(bare, good, "base")
    saved = bare.rulegauge("baseline", "save", "base", "team", "--dir", bare.root / "baselines",
                           "--runs-dir", bare.root / "runs")
    assert saved.returncode == 0, saved.stderr
    _run(bare, good, "same")
    passed = _gate(bare, "same")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "PASS" in passed.stdout and (bare.root / "same.md").is_file() and (bare.root / "same.xml").is_file()
    _run(bare, bad, "worse")
    failed = _gate(bare, "worse")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "FAIL" in failed.stdout and "recall@5" in (bare.root / "worse.md").read_text(encoding="utf-8")


def test_a_component_whose_extra_is_missing_exits_2_naming_it(bare: Bare) -> None:
    res = bare.rulegauge("run", "-g", SAMPLE_GOLDSET, "--out", bare.root / "runs-dense", "--run-id", "d")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "the dense arm needs the [dense] extra" in res.stderr and "pip install 'rulegauge[dense]'" in res.stderr
    assert "Traceback" not in res.stderr and not (bare.root / "runs-dense" / "d").exists()
    report = bare.rulegauge("report", "latest", "-o", bare.root / "r.html")
    assert report.returncode == 2 and "pip install 'rulegauge[report]'" in report.stderr, report.stderr
    listed = bare.rulegauge("list", "--format", "tsv")
    assert listed.returncode == 0, listed.stderr
    assert "arms\tdense\tbuiltin\tdense" in listed.stdout and "arms\thttp\tbuiltin\tnone (core)" in listed.stdout


def test_the_kernel_tests_pass_without_any_extra(bare: Bare, tmp_path: Path) -> None:
    """:data:`KERNEL_TESTS` in the bare venv, from a copy of the tests, so ``rulegauge`` is the
    installed wheel's (pytest alone added; the project's warning filters name numba, not there)."""
    # pytest is no extra's module: the probe of the bare venv (first test) is not changed by it
    tools = pip_install(bare.installed.python, "pytest>=8")
    if tools.returncode != 0:
        cannot_install(tools.last_line())
    work = tmp_path / "work"
    (work / "tests").mkdir(parents=True)
    shutil.copy2(REPO / "pyproject.toml", work / "pyproject.toml")
    for name in ("__init__.py", "conftest.py"):
        shutil.copy2(REPO / "tests" / name, work / "tests" / name)
    for package in ("helpers", "core", "fusion", "metrics"):
        shutil.copytree(REPO / "tests" / package, work / "tests" / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    res = bare.python("-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "filterwarnings=error",
                      "-m", "not slow", *KERNEL_TESTS, cwd=work)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert " passed" in res.stdout and "failed" not in res.stdout
    where = bare.python("-c", "import rulegauge; print(rulegauge.__file__)", cwd=work)
    assert str(bare.installed.python.parents[1]) in where.stdout
