"""Which modules a module imports, read from its source: nothing is imported to find out.

:func:`imports` lists what one source file imports, at module level or deferred inside a
function alike (``import a.b``: ``a.b``; ``from a import b``: ``a`` and ``a.b``, since ``b`` may be
a module; relative imports resolved against the module's package). :func:`closure` follows them,
transitively, through one package's own modules (files under its folder), each with the packages
that contain it (their ``__init__`` runs first).

Edge cases: a name that is no file of the package (an attribute, a third-party module) is left
out; ``importlib.import_module(name)`` with a computed name is not seen (a plug-in door's
imports are by name, on purpose). Used by the page cache's code hash
(:mod:`rulegauge.corpus.page_cache`) and the kernel test.

Reference: Python's ``ast`` module; the import system's package semantics (PEP 328 for relative
imports).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path


def imports(path: Path, name: str) -> list[str]:
    """Every module ``path`` (module ``name``) imports, in source order (module docstring)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[str] = []
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


def source_file(name: str, folder: Path) -> Path | None:
    """The file of module ``name`` in the package whose folder is ``folder`` (``folder.name`` is
    the package's name), or None when the package has no such module."""
    parts = name.split(".")
    if parts[0] != folder.name:
        return None
    base = folder.joinpath(*parts[1:])
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def closure(roots: Iterable[str], folder: Path) -> list[str]:
    """``roots`` and every module of the package at ``folder`` they import, transitively, with
    the packages containing each; sorted."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        path = source_file(name, folder)
        if name in seen or path is None:
            continue
        seen.add(name)
        parts = name.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # its packages' __init__ run first
        todo += imports(path, name)
    return sorted(seen)
