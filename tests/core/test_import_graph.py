"""Imports read from source (rulegauge.core.import_graph): module-level, deferred and relative."""

from __future__ import annotations

from pathlib import Path

from rulegauge.core.import_graph import closure, imports, source_file


def test_imports_sees_deferred_and_relative_imports(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text("import os.path\ndef f():\n    from rulegauge.answering.runner import answer_run\n"
                   "from .stages import STAGES\nfrom .. import core\n", encoding="utf-8")
    assert imports(src, "rulegauge.pipeline.m") == [
        "os.path", "rulegauge.pipeline.stages", "rulegauge.pipeline.stages.STAGES", "rulegauge", "rulegauge.core",
        "rulegauge.answering.runner", "rulegauge.answering.runner.answer_run"]


def test_closure_follows_the_package_s_own_modules_only(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    for rel, body in {"__init__.py": "", "a.py": "from pkg.sub import b\nimport numpy\n", "sub/__init__.py": "",
                      "sub/b.py": "def g():\n    from . import c\n", "sub/c.py": "from pkg import a\n",
                      "d.py": ""}.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(body, encoding="utf-8")
    assert closure(["pkg.a"], pkg) == ["pkg", "pkg.a", "pkg.sub", "pkg.sub.b", "pkg.sub.c"]
    assert source_file("pkg.sub", pkg) == pkg / "sub" / "__init__.py" and source_file("other.x", pkg) is None
