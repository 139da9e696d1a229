"""Package layout: every stage package lists its modules in ``__all__``, the design
map has exactly one line per module, and no package imports a higher stage."""

from __future__ import annotations

import ast
import importlib
import re

import pytest

from tests.helpers.common import REPO

HARNESS = REPO / "harness"
STAGES = ("core", "corpus", "goldset", "store", "interop", "embedding", "arms", "fusion", "metrics",
          "answering", "rulings", "pipeline", "regression", "analysis", "judging", "cli")
PACKAGES = (*STAGES, "answering.answerers")


def _modules_on_disk(package: str) -> set[str]:
    folder = HARNESS.joinpath(*package.split("."))
    files = {p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")}
    subpackages = {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
    return files | subpackages


@pytest.mark.parametrize("package", PACKAGES)
def test_package_all_lists_every_module_and_has_a_docstring(package: str) -> None:
    mod = importlib.import_module(f"harness.{package}")
    assert mod.__doc__ and len(mod.__doc__.strip()) > 40, f"harness.{package} needs a docstring"
    exported = set(mod.__all__)
    on_disk = _modules_on_disk(package)
    assert on_disk <= exported, f"missing from __all__: {sorted(on_disk - exported)}"
    for name in exported - on_disk:  # re-exported names must exist
        assert hasattr(mod, name), f"harness.{package}.__all__ names unknown {name!r}"
    assert len(mod.__all__) == len(exported), "duplicate names in __all__"


def test_design_map_has_one_line_per_module() -> None:
    text = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([\w./]+)` \|", text, flags=re.MULTILINE)
    on_disk = sorted(str(p.relative_to(HARNESS).with_suffix("")) for p in HARNESS.rglob("*.py")
                     if p.stem != "__init__" and "data" not in p.parts)
    assert sorted(rows) == on_disk
    assert len(rows) == len(set(rows)), "a module has two homes in docs/design.md"


def _stage(module: str) -> int | None:
    parts = module.split(".")
    return STAGES.index(parts[1]) if len(parts) > 1 and parts[1] in STAGES else None


def test_no_import_from_a_higher_stage() -> None:
    """Module-level and deferred imports alike: lower stages never import higher ones."""
    known: set[str] = set()  # none: an exception would be listed here and in docs/design.md
    bad = []
    for path in sorted(HARNESS.rglob("*.py")):
        name = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        own = _stage(name)
        if own is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = ([a.name for a in node.names] if isinstance(node, ast.Import)
                       else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for t in targets:
                other = _stage(t)
                if other is not None and other > own and f"{name} -> {t}" not in known:
                    bad.append(f"{name} -> {t}")
    assert bad == []
