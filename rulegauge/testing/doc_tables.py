"""The docs' generated tables: the module map and every registry's component table.

``python -m rulegauge.testing.doc_tables`` rewrites each table between its markers::

    <!-- generated: NAME (python -m rulegauge.testing.doc_tables) -->
    ...
    <!-- end generated: NAME -->

and ``--check`` exits 1 naming every file whose table is not what the code says now
(``tests/testing/test_doc_tables.py`` runs it). The tables:

* ``module-map`` (docs/design.md): one row per module of ``rulegauge/``, packages by stage
  (:data:`STAGES`), the concept being the first paragraph of the module's docstring;
* ``arms`` (docs/arms.md), ``fusion-methods`` (docs/fusion.md), ``ranking-metrics``
  (docs/metrics.md), ``answerers`` (docs/answerers.md): one row per built-in component of
  the registry, from the facts on the component (docstring, declared parameters, ceiling,
  order rule, source). Plug-ins are left out: a table documents this distribution;
* ``peer-names`` (docs/metrics.md): every ranx, ir_measures and trec_eval name, with the
  rulegauge metric it is or why it is refused (:mod:`rulegauge.metrics.peer_names`).

A table cell never holds a raw ``|`` (escaped ``\\|``). Edge case: a module without a
docstring gets ``(no docstring)``, which :func:`module_rows` callers treat as a problem.
"""

from __future__ import annotations

import ast
import inspect
import math
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import rulegauge
from rulegauge.core import plugins

STAGES = ("core", "corpus", "goldset", "store", "interop", "embedding", "arms", "fusion", "metrics",
          "pipeline", "regression", "answering", "rulings", "analysis", "judging", "cli", "testing")
"""Packages by stage: a package imports only from packages to its left (tests/test_packages.py)."""
PACKAGE = Path(rulegauge.__file__).resolve().parent
REPO = PACKAGE.parent
NO_DOC = "(no docstring)"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def first_paragraph(doc: str | None) -> str:
    """The first paragraph of a docstring, on one line, without its final full stop."""
    if not doc or not doc.strip():
        return NO_DOC
    return _cell(doc.strip().split("\n\n")[0]).removesuffix(".")


def modules() -> list[Path]:
    """Every module file of the package (``__init__`` files and ``data/`` aside), by stage."""
    found = [p for p in PACKAGE.rglob("*.py")
             if p.stem != "__init__" and "data" not in p.relative_to(PACKAGE).parts]

    def key(p: Path) -> tuple[int, str]:
        top = p.relative_to(PACKAGE).parts[0]
        return (STAGES.index(top) if top in STAGES else len(STAGES), str(p.relative_to(PACKAGE)))
    return sorted(found, key=key)


def module_rows() -> list[tuple[str, str]]:
    """``(package/module, concept)`` of every module."""
    return [(str(p.relative_to(PACKAGE).with_suffix("")),
             first_paragraph(ast.get_docstring(ast.parse(p.read_text(encoding="utf-8")))))
            for p in modules()]


def _table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def module_map() -> str:
    return _table(("module", "concept"), [(f"`{m}`", c) for m, c in module_rows()])


def _builtin(group: str) -> list[tuple[str, Any]]:
    """The components this distribution declares as entry points in ``group`` (not whatever
    else a process registered at run time: a test's stand-ins have no entry point)."""
    plugins.load(group)
    reg = plugins.registry(group)
    declared = {name for g, name, _ in plugins.declared() if g == group}
    return [(n, obj) for n, obj in reg.items() if n in declared and plugins.origin(group, n) == plugins.BUILTIN]


def _params(cls: type) -> str:
    sig = inspect.signature(cls)  # the constructor's parameters
    names = [p.name for p in sig.parameters.values()
             if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    return ", ".join(f"`{n}`" for n in names) or "none"


def arms_table() -> str:
    rows = [(f"`{n}`", f"`{cls.__module__.removeprefix('rulegauge.')}`", first_paragraph(cls.__doc__),
             _params(cls), f"`{getattr(cls, 'order_rule', 'score')}`") for n, cls in _builtin("rulegauge.arms")]
    return _table(("kind", "module", "what", "parameters (`[arms.NAME]`)", "order rule"), rows)


def answerers_table() -> str:
    rows = [(f"`{n}`", f"`{cls.__module__.removeprefix('rulegauge.')}`", first_paragraph(cls.__doc__), _params(cls))
            for n, cls in _builtin("rulegauge.answerers")]
    return _table(("answerer", "module", "what", "parameters (`-p NAME.KEY=VALUE`)"), rows)


def _ceiling_of(method: Any) -> str:
    from rulegauge.testing.synthetic import config

    c = method.ceiling(config(method.name))
    return "none" if c is None or (isinstance(c, float) and math.isnan(c)) else f"{c:.6g}"


def fusion_table() -> str:
    rows = []
    for n, m in _builtin("rulegauge.fusion"):
        params = ", ".join(f"`{p.name}` ({' / '.join(p.choices)}; default `{p.default}`)" if p.choices
                           else f"`{p.name}` (default `{p.default}`)" for p in m.params) or "weights, depths only"
        rows.append((f"`{n}`", _cell(m.description), params, _ceiling_of(m),
                     "exact rationals" if m.rank_based else "float64, ties by chunk id", _cell(m.source)))
    return _table(("method", "what", "parameters", "ceiling, 3 arms of weight 1", "order", "source"), rows)


def ranking_metrics_table() -> str:
    from rulegauge.metrics.family import METRICS

    rows = []
    for n, f in METRICS.items():
        if f.kind not in ("ranking", "score") or plugins.origin("rulegauge.metrics", n) != plugins.BUILTIN:
            continue
        params = ", ".join(f"`{p.name}` ({p.type.__name__}, default `{p.spell(p.default)}`)" for p in f.params)
        rows.append((f"`{f.label}`", f.direction, f.scope, f.aggregate, params or "none", _cell(f.description),
                     _cell(f.reference) or ""))
    return _table(("metric", "direction", "scope", "aggregate", "parameters", "definition", "reference"), rows)


def peer_names_table() -> str:
    """Every other tool's name: what rulegauge computes for it, or why it is refused (metrics/peer_names)."""
    from rulegauge.metrics.family import METRICS, OTHER_NAMES
    from rulegauge.metrics.peer_names import REFUSED, SHARED, WHOLE_LIST, shown

    plugins.load("rulegauge.metrics")  # the aliases are declared with the families
    rows = []
    for a in OTHER_NAMES:
        fam = METRICS.get(a.family)
        if plugins.origin("rulegauge.metrics", fam.name) == plugins.BUILTIN:
            rows.append((f"`{shown(a.name, cutoff=fam.takes_cutoff)}`", a.source, f"`{fam.label}`",
                         _cell(a.note) or "the same definition"))
    rows += [(f"`{n}` (no cutoff)", tool, f"`{family}`", "the whole list, as the tool reads it")
             for n, (family, tool) in ((n.upper(), v) for n, v in WHOLE_LIST.items())]
    rows += [(f"`{name}`", tool, f"`{ours}` (rulegauge's own name)", _cell(note)) for name, tool, ours, note in SHARED]
    rows += [(f"`{r.name}{'@k' if r.with_cutoff else ''}`", r.tool, "refused",
              _cell(f"{r.why}; nearest: {r.nearest}")) for r in REFUSED]
    return _table(("name", "tool", "rulegauge", "how it relates"), rows)


TABLES: dict[str, tuple[str, Callable[[], str]]] = {
    "module-map": ("docs/design.md", module_map),
    "arms": ("docs/arms.md", arms_table),
    "fusion-methods": ("docs/fusion.md", fusion_table),
    "ranking-metrics": ("docs/metrics.md", ranking_metrics_table),
    "peer-names": ("docs/metrics.md", peer_names_table),
    "answerers": ("docs/answerers.md", answerers_table),
}
"""Table name -> (the docs file it lives in, its generator)."""


def _block(name: str) -> re.Pattern[str]:
    n = re.escape(name)
    return re.compile(rf"(<!-- generated: {n} [^\n]*-->\n)(.*?)(<!-- end generated: {n} -->)", flags=re.S)


def render(text: str, name: str, table: str) -> str | None:
    """``text`` with the table ``name`` replaced by ``table``; None when its markers are missing."""
    pattern = _block(name)
    if not pattern.search(text):
        return None
    return pattern.sub(lambda m: m.group(1) + table + "\n" + m.group(3), text, count=1)


def stale(root: Path = REPO) -> list[str]:
    """One line per table that is missing or not current under ``root``."""
    out = []
    for name, (doc, make) in TABLES.items():
        text = (root / doc).read_text(encoding="utf-8")
        new = render(text, name, make())
        if new is None:
            out.append(f"{doc}: no markers for the generated table {name!r}")
        elif new != text:
            out.append(f"{doc}: the table {name!r} is not current: python -m rulegauge.testing.doc_tables")
    return out


def write(root: Path = REPO) -> list[str]:
    """Rewrite every table in place; returns the files changed."""
    changed = []
    for name, (doc, make) in TABLES.items():
        path = root / doc
        text = path.read_text(encoding="utf-8")
        new = render(text, name, make())
        if new is not None and new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(doc)
    return changed


def main(argv: list[str]) -> int:
    if "--check" in argv:
        problems = stale()
        print("\n".join(problems) or "every generated table is current")
        return 1 if problems else 0
    print("\n".join(write()) or "nothing changed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
