"""The kernel imports no product (docs/design.md "The kernel and its products").

Two checks: every kernel module's imports, module-level and deferred alike (read with
``ast``), name no product module; and a bm25 + boost ``rulegauge run`` in a fresh process
never has answering, judging, rulings, analysis, torch or Ray in ``sys.modules`` (the arms
group still imports every built-in arm module, the embedding modules of ``dense`` among them,
without torch).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.common import LEXICAL, REPO

RULEGAUGE = REPO / "rulegauge"

KERNEL = ("rulegauge.core", "rulegauge.corpus", "rulegauge.goldset", "rulegauge.store", "rulegauge.interop",
          "rulegauge.arms", "rulegauge.fusion", "rulegauge.metrics", "rulegauge.pipeline", "rulegauge.regression",
          "rulegauge.cli.core", "rulegauge.cli.compare", "rulegauge.cli.errors", "rulegauge.cli.output",
          "rulegauge.cli.progress")
"""Module paths of the kernel (a prefix names a package and everything under it)."""

PRODUCTS = ("rulegauge.answering", "rulegauge.judging", "rulegauge.rulings", "rulegauge.analysis",
            "rulegauge.embedding", "rulegauge.core.cluster", "rulegauge.core.ray_start",
            "rulegauge.arms.dense", "rulegauge.arms.sqlite_fts5",
            "rulegauge.arms.tantivy_bm25", "rulegauge.arms.pg_cluster", "rulegauge.arms.pg_base",
            "rulegauge.arms.postgres", "rulegauge.arms.pgvector",
            "torch", "ray", "tantivy", "psycopg", "sentence_transformers", "transformers")
"""Module paths of the products (inside a kernel package, a product module is not kernel)."""

KNOWN: set[str] = set()
"""Imports still to invert, each named in docs/design.md (none)."""


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def kernel_modules() -> dict[str, Path]:
    """Every kernel module by dotted name (products inside kernel packages left out)."""
    out = {}
    for path in sorted(RULEGAUGE.rglob("*.py")):
        name = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        if _under(name, KERNEL) and not _under(name, PRODUCTS):
            out[name] = path
    return out


def imported(path: Path, name: str) -> list[str]:
    """Every module ``path`` imports, at module level or deferred (``from a import b``: a and a.b)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            out += [base, *(f"{base}.{a.name}" for a in node.names)]
    return out


def test_the_kernel_is_every_package_it_names() -> None:
    mods = kernel_modules()
    assert "rulegauge.pipeline.lifecycle" in mods and "rulegauge.regression.compare" in mods
    assert "rulegauge.arms.bm25" in mods and "rulegauge.arms.sqlite_fts5" not in mods
    assert not any(_under(m, ("rulegauge.answering", "rulegauge.analysis")) for m in mods)


def test_no_kernel_module_imports_a_product() -> None:
    bad = sorted({f"{name} -> {target}" for name, path in kernel_modules().items()
                  for target in imported(path, name) if _under(target, PRODUCTS)
                  and not any(f"{name} -> {target}".startswith(k) for k in KNOWN)})
    assert bad == []


def test_the_check_sees_deferred_and_relative_imports(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from rulegauge.answering.runner import answer_run\n"
                   "from .stages import STAGES\n", encoding="utf-8")
    found = imported(src, "rulegauge.pipeline.m")
    assert "rulegauge.answering.runner" in found and "rulegauge.pipeline.stages.STAGES" in found


WRAPPER = """
import json, sys
from rulegauge.cli import app
try:
    app(sys.argv[2:], standalone_mode=False)
finally:
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump(sorted(sys.modules), f)
"""


def test_a_lexical_run_never_loads_a_product(tmp_path: Path) -> None:
    script, dump = tmp_path / "wrap.py", tmp_path / "modules.json"
    script.write_text(WRAPPER, encoding="utf-8")
    env = {**os.environ, "RULEGAUGE_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, str(script), str(dump), "run", "-c", str(LEXICAL),
                           "--out", str(tmp_path / "runs"), "--run-id", "k", "-q"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "runs" / "k" / "metrics.parquet").is_file()
    loaded = json.loads(dump.read_text(encoding="utf-8"))
    assert "rulegauge.pipeline.lifecycle" in loaded  # the dump is of the run's process
    products = ("rulegauge.answering", "rulegauge.judging", "rulegauge.rulings", "rulegauge.analysis",
                "torch", "ray")
    assert [m for m in loaded if _under(m, products)] == []
