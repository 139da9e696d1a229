"""The kernel imports no product (docs/design.md "The kernel and its products").

Which module is kernel, product or shell is read from docs/design.md's layout table (one row per
side, by package), never listed here. Two checks: every kernel module's imports, module-level and
deferred alike (:mod:`rulegauge.core.import_graph`), name no product module; and, each in a fresh process, an
ordinary bm25 + boost ``rulegauge run`` (its summary printed), ``baseline save`` and ``gate``,
and the run again with the fixture plug-in packages installed, never have in ``sys.modules`` a
product module, a module an entry point of rulegauge names that the command did not ask for, a
module of an optional extra or a plug-in's module.
"""

from __future__ import annotations

import fnmatch
import importlib.metadata as md
import json
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from rulegauge.core.entry_points import own_declared
from rulegauge.core.extras import EXTRAS
from rulegauge.core.import_graph import imports
from tests.helpers.common import LEXICAL, REPO
from tests.helpers.fault_cases_h_door import door_site

RULEGAUGE = REPO / "rulegauge"
SIDES = ("kernel", "product", "shell")
_ROW = re.compile(r"^\| (kernel|product|shell) \| (.+) \|$", flags=re.MULTILINE)


@cache
def layout() -> dict[str, tuple[str, ...]]:
    """Side -> its dotted patterns (``rulegauge.arms.pg_*``), from docs/design.md's table."""
    text = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
    rows = {side: tuple("rulegauge." + item.replace("/", ".").removesuffix(".__init__")
                        for item in re.findall(r"`([^`]+)`", cells)) for side, cells in _ROW.findall(text)}
    assert set(rows) == set(SIDES), f"docs/design.md's layout table needs rows {SIDES}, found {sorted(rows)}"
    return rows


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")


def side(name: str) -> str | None:
    """The side of module ``name``: its most specific pattern's (a product winning a tie); the
    top package (``rulegauge``, its version only) is kernel; None when no pattern covers it."""
    if name == "rulegauge":
        return "kernel"
    found = [(p.count("."), s == "product", s) for s, patterns in layout().items() for p in patterns
             if fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(name, p + ".*")]
    return max(found)[2] if found else None


def modules(of: str) -> dict[str, Path]:
    """Every module of side ``of`` by dotted name."""
    return {module_name(p): p for p in sorted(RULEGAUGE.rglob("*.py")) if side(module_name(p)) == of}


def test_every_module_is_on_one_side_and_every_entry_names_a_module() -> None:
    names = {module_name(p) for p in RULEGAUGE.rglob("*.py")}
    assert sorted(n for n in names if side(n) is None) == []  # a new package: give it a row in the table
    for patterns in layout().values():
        for p in patterns:  # a typo in the table would silently classify nothing
            assert any(fnmatch.fnmatchcase(n, p) or n.startswith(p + ".") for n in names), p
    kernel = modules("kernel")
    assert "rulegauge.pipeline.lifecycle" in kernel and "rulegauge.regression.compare" in kernel
    assert "rulegauge.arms.bm25" in kernel and "rulegauge.cli.core" in kernel
    assert side("rulegauge.arms.sqlite_fts5") == side("rulegauge.arms.pg_cluster") == "product"
    assert side("rulegauge.core.cluster") == "product" and side("rulegauge.cli.analysis") == "shell"


def test_no_kernel_module_imports_a_product() -> None:
    bad = sorted({f"{name} -> {target}" for name, path in modules("kernel").items()
                  for target in imports(path, name) if target.startswith("rulegauge.") and side(target) == "product"})
    assert bad == []


def test_the_sides_of_what_a_deferred_or_relative_import_names() -> None:
    assert side("rulegauge.answering.runner") == "product" and side("rulegauge.pipeline.stages") == "kernel"


# --- at run time ---------------------------------------------------------------------------------

ASKED = {("rulegauge.arms", "bm25"), ("rulegauge.arms", "boost"), ("rulegauge.fusion", "rrf"),
         ("rulegauge.metrics", "ranking")}
"""The components a bm25 + boost run of lexical.toml asks for (its arms, its method, its metrics)."""


def not_asked() -> set[str]:
    """Modules an entry point of rulegauge names that the commands below do not ask for (the
    command groups aside: every one registers when the CLI starts)."""
    return {value.partition(":")[0] for group, name, value in own_declared()
            if group != "rulegauge.commands" and (group, name) not in ASKED}


def extra_modules() -> set[str]:
    """Top-level modules of the optional extras that no core dependency provides."""
    core = {re.split(r"[ ;<>=!~\[]", r, maxsplit=1)[0].lower().replace("_", "-")
            for r in md.requires("rulegauge") or [] if "extra ==" not in r}
    found = md.packages_distributions()
    return {m for e in EXTRAS.values() for m in e.modules
            if not {d.lower().replace("_", "-") for d in found.get(m, [])} & core}


def offending(loaded: list[str], *, plugin_modules: tuple[str, ...] = ()) -> list[str]:
    """What a kernel command must not have imported (module docstring)."""
    others, extras = not_asked(), extra_modules()
    return sorted(m for m in loaded if (m.startswith("rulegauge.") and side(m) == "product") or m in others
                  or m.split(".")[0] in extras or m.split(".")[0] in plugin_modules)


WRAPPER = """
import json, sys
sys.path[:0] = [p for p in sys.argv[2].split(":") if p]
from rulegauge.cli import app
try:
    app(sys.argv[3:], standalone_mode=False)
finally:
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump(sorted(sys.modules), f)
"""
POLICY = ('[gate]\nconfig = "rrf_k60_bm25+boost"\n[metrics."recall@5"]\nmax_drop = 0.05\n'
          '[metrics."MRR@10"]\nmax_drop = 0.05\n')


def run_traced(tmp_path: Path, name: str, *args: str, site: str = "") -> list[str]:
    """``rulegauge ARGS`` in a fresh process (``site`` first on ``sys.path``); its ``sys.modules``."""
    script, dump = tmp_path / "wrap.py", tmp_path / f"{name}.json"
    script.write_text(WRAPPER, encoding="utf-8")
    env = {**os.environ, "RULEGAUGE_CACHE": str(tmp_path / "cache"), "COLUMNS": "200"}
    proc = subprocess.run([sys.executable, str(script), str(dump), site, *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    loaded: list[str] = json.loads(dump.read_text(encoding="utf-8"))
    assert "rulegauge.cli.core" in loaded  # the dump is of the command's process
    return loaded


@pytest.fixture(scope="module")
def kernel_commands(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    tmp = tmp_path_factory.mktemp("kernel")
    (tmp / "policy.toml").write_text(POLICY, encoding="utf-8")
    runs = str(tmp / "runs")
    loaded = {"run": run_traced(tmp, "run", "run", "-c", str(LEXICAL), "--out", runs, "--run-id", "k"),
              "baseline save": run_traced(tmp, "save", "baseline", "save", "k", "base", "--runs-dir", runs,
                                          "--dir", str(tmp / "baselines")),
              "gate": run_traced(tmp, "gate", "gate", "--baseline", str(tmp / "baselines" / "base"), "--run", "k",
                                 "--runs-dir", runs, "--policy", str(tmp / "policy.toml"))}
    return tmp, loaded


@pytest.mark.parametrize("command", ["run", "baseline save", "gate"])
def test_a_kernel_command_loads_nothing_it_did_not_ask_for(kernel_commands, command: str) -> None:
    tmp, loaded = kernel_commands
    assert (tmp / "runs" / "k" / "metrics.parquet").is_file() and (tmp / "baselines" / "base").is_dir()
    assert offending(loaded[command]) == []
    if command == "run":  # what it asked for is there: the check sees the run's own imports
        assert {"rulegauge.arms.bm25", "rulegauge.fusion.rrf", "rulegauge.cli.summary"} <= set(loaded[command])


def test_the_check_names_what_a_command_did_not_ask_for() -> None:
    assert offending(["rulegauge.arms.dense", "rulegauge.fusion.borda", "rulegauge.analysis",
                      "rulegauge.core.cluster", "torch.nn", "ray", "rulegauge.arms.bm25", "acme_rulegauge.x"],
                     plugin_modules=("acme_rulegauge",)) == [
        "acme_rulegauge.x", "ray", "rulegauge.analysis", "rulegauge.arms.dense", "rulegauge.core.cluster",
        "rulegauge.fusion.borda", "torch.nn"]


def test_a_run_with_plugins_installed_imports_none_of_them(tmp_path: Path) -> None:
    """The fixture packages (good, hostile, door: modules that exit or raise at import among them)
    are on the path, their command groups left out; a run that names none of their components
    never imports them."""
    door_site(tmp_path, commands=False)  # command groups register when the CLI starts (docs/plugins.md)
    loaded = run_traced(tmp_path, "run", "run", "-c", str(LEXICAL), "--out", str(tmp_path / "runs"),
                        "--run-id", "p", site=str(tmp_path / "site"))
    assert offending(loaded, plugin_modules=("acme_rulegauge",)) == []
