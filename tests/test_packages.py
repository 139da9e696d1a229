"""Package layout: every stage package has a docstring, the design map is the generated one
(tests/testing/test_doc_tables.py), and no package imports a higher stage."""

from __future__ import annotations

import ast
import importlib
import re

import pytest

from rulegauge.testing.doc_tables import STAGES
from tests.helpers.common import REPO

RULEGAUGE = REPO / "rulegauge"
PACKAGES = (*STAGES, "answering.answerers")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_has_a_docstring(package: str) -> None:
    mod = importlib.import_module(f"rulegauge.{package}")
    assert mod.__doc__ and len(mod.__doc__.strip()) > 40, f"rulegauge.{package} needs a docstring"


def test_every_stage_package_is_in_the_stage_order() -> None:
    on_disk = {p.parent.name for p in RULEGAUGE.glob("*/__init__.py")}
    assert on_disk == set(STAGES)


def _stage(module: str) -> int | None:
    parts = module.split(".")
    return STAGES.index(parts[1]) if len(parts) > 1 and parts[1] in STAGES else None


def test_no_import_from_a_higher_stage() -> None:
    """Module-level and deferred imports alike: lower stages never import higher ones."""
    known: set[str] = set()  # none: an exception would be listed here and in docs/design.md
    bad = []
    for path in sorted(RULEGAUGE.rglob("*.py")):
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


# --- size and privacy limits: docs/design.md "Limits", exceptions listed there -----------

MAX_LINES = 400
MAX_PARAMS = 8
_LIMIT_ROW = re.compile(r"^\| (lines|params|private|reexport) \| `([^`]+)` \| (.+?) \|$", flags=re.MULTILINE)


def _exceptions(kind: str) -> dict[str, str]:
    """``{where: why}`` of the rows of docs/design.md's limits table of this kind."""
    text = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
    return {where: why for k, where, why in _LIMIT_ROW.findall(text) if k == kind}


def _module_name(path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")


def _functions(tree: ast.AST, prefix: str = ""):
    """(qualified name, node) of every function, methods as ``Class.name``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield prefix + node.name, node
            yield from _functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = fn.args
    names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return len([n for n in names if n not in ("self", "cls")])


def _found(kind: str) -> dict[str, str]:
    """Every violation of limit ``kind`` in ``rulegauge/``: ``{where: what}``."""
    out = {}
    for path in sorted(RULEGAUGE.rglob("*.py")):
        name = _module_name(path)
        short = str(path.relative_to(RULEGAUGE).with_suffix(""))
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if kind == "lines" and lines > MAX_LINES:
            out[short] = f"{lines} lines"
        if kind == "lines":
            continue
        tree = ast.parse(text)
        if kind == "params" and "cli" not in path.relative_to(RULEGAUGE).parts:
            for qual, fn in _functions(tree):
                if _params(fn) > MAX_PARAMS:
                    out[f"{name.removeprefix('rulegauge.')}.{qual}"] = f"{_params(fn)} parameters"
        if kind == "private":
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rulegauge") \
                        and node.module != name:
                    for alias in node.names:
                        if alias.name.startswith("_") and not alias.name.startswith("__"):  # dunders are public
                            where = f"{name.removeprefix('rulegauge.')} -> {node.module}.{alias.name}"
                            out[where] = "private import"
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        if any(p.startswith("_") and not p.startswith("__")
                               for p in alias.name.split(".")):
                            out[f"{name.removeprefix('rulegauge.')} -> {alias.name}"] = "private import"
    return out


@pytest.mark.parametrize("kind", ["lines", "params", "private"])
def test_limits_hold_or_docs_design_says_why(kind: str) -> None:
    """No module over 400 lines, no function over 8 parameters outside ``rulegauge/cli/``, no
    private (``_name``) import across modules, unless docs/design.md's limits table names
    it with a reason; a row whose exception no longer exists is stale and fails too."""
    found, listed = _found(kind), _exceptions(kind)
    assert sorted(set(found) - set(listed)) == [], f"over the {kind} limit: {found}"
    assert sorted(set(listed) - set(found)) == [], "stale rows in docs/design.md's limits table"


def _rulegauge_imports(module: str) -> set[str]:
    """Every ``rulegauge.*`` module ``module`` imports (module level and deferred)."""
    path = REPO.joinpath(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("rulegauge.")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rulegauge."):
            out.add(str(node.module))
            out |= {f"{node.module}.{a.name}" for a in node.names
                    if REPO.joinpath(*f"{node.module}.{a.name}".split(".")).with_suffix(".py").exists()}
    return out


def test_answering_arrows_point_one_way() -> None:
    """The helpers the answerers use (prompt, requests, http helpers, gguf...) never import
    ``answering.answerers``, directly or through another module."""
    answerers = "rulegauge.answering.answerers"
    helpers = {m for p in sorted((RULEGAUGE / "answering" / "answerers").glob("*.py"))
               for m in _rulegauge_imports(f"{answerers}.{p.stem}")
               if m.startswith("rulegauge.answering.") and not m.startswith(answerers)}
    assert helpers, "the answerers import no helper: the test reads the wrong folder"
    bad, seen, todo = [], set(), sorted(helpers)
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        for t in _rulegauge_imports(m):
            if t.startswith(answerers):
                bad.append(f"{m} -> {t}")
            elif t.startswith("rulegauge.answering.") and t not in seen:
                todo.append(t)
    assert bad == []


def _reexports() -> dict[str, str]:
    """``from M import x as x`` outside package ``__init__`` files: a name kept importable
    from a module that does not define it (a shim), ``{where: what}``."""
    out = {}
    for path in sorted(RULEGAUGE.rglob("*.py")):
        if path.name == "__init__.py":
            continue  # a package's __init__ names its public API on purpose
        name = _module_name(path).removeprefix("rulegauge.")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rulegauge"):
                for alias in node.names:
                    if alias.asname == alias.name:
                        out[f"{name} -> {node.module}.{alias.name}"] = "re-export"
    return out


def test_no_reexport_shims_or_docs_design_says_why() -> None:
    """Import a name from the module that defines it: no ``import x as x`` shims (the
    limits table of docs/design.md lists the ones still to fold, kind ``reexport``)."""
    found, listed = _reexports(), _exceptions("reexport")
    assert sorted(set(found) - set(listed)) == [], f"re-export shims: {found}"
    assert sorted(set(listed) - set(found)) == [], "stale rows in docs/design.md's limits table"
