"""Plug-ins: the one place arms, answerers, metrics and fusion methods are discovered.

Built-in components register when their modules are imported; :data:`GROUPS` names, per
plug-in group, the registry and those modules (this list replaces the hand-kept ones).
A team's own package adds components through Python entry points in the same groups::

    [project.entry-points."rulegauge.arms"]
    acme-search = "acme_rulegauge.arms:AcmeArm"       # a class, registered as "acme-search"
    [project.entry-points."rulegauge.metrics"]
    acme = "acme_rulegauge.metrics"                    # or a module that registers on import

An entry point's object is registered under the entry point's name (a fusion method class
is instantiated first: that registry holds instances), unless loading it already registered
that name (a module that calls ``ARMS.register`` / ``declare`` itself).
:func:`load` imports the built-ins, then every entry point of the group, once per process.
A plug-in that fails to import, or whose name is already taken, is not registered and is
recorded as broken (:func:`broken`), by name with its package and the error's last line;
nothing raises, so one broken package never stops a run that does not use it. A run that
names it gets an error saying so (:func:`describe_unknown`). :func:`origin` tells where a
name came from: ``builtin`` or ``package==version``.

The one core module that imports higher stages, and only by name when :func:`load` is
called (never at import time), as the registries' own modules did before.

Reference: Python packaging, "Entry points specification"; ``importlib.metadata``.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import sys
from dataclasses import dataclass
from typing import Any

from rulegauge.core.registry import Registry, add_unknown_hint


@dataclass(frozen=True)
class Group:
    label: str  # as ``rulegauge list`` names the registry
    module: str  # where the registry lives
    attribute: str
    builtins: tuple[str, ...]  # modules that register the built-in components
    instances: bool = False  # the registry holds instances: a class entry point is instantiated


GROUPS: dict[str, Group] = {
    "rulegauge.arms": Group("arms", "rulegauge.arms.base", "ARMS", tuple(f"rulegauge.arms.{m}" for m in (
        "bm25", "boost", "dense", "external", "http", "http_ranks", "sqlite_fts5", "tantivy_bm25", "postgres",
        "pgvector"))),
    "rulegauge.answerers": Group("answerers", "rulegauge.answering.answerers.base", "ANSWERERS", (
        *(f"rulegauge.answering.answerers.{m}" for m in ("extractive", "ollama", "openai", "replay", "llama_cpp")),
        "rulegauge.rulings.production")),
    "rulegauge.metrics": Group("metrics", "rulegauge.metrics.family", "METRICS",
                             ("rulegauge.metrics.ranking", "rulegauge.metrics.info")),
    "rulegauge.fusion": Group("fusion methods", "rulegauge.fusion.method", "FUSION_METHODS", ("rulegauge.fusion",),
                            instances=True),
    # the products' hooks and tables: loaded by name when a run, a table or a metric asks (the kernel imports none)
    "rulegauge.stages": Group("stages", "rulegauge.pipeline.stages", "STAGES", ("rulegauge.answering.stage",)),
    "rulegauge.tables": Group("tables", "rulegauge.store.schema", "TABLES", ("rulegauge.answering.tables",
                                                                          "rulegauge.rulings.tables")),
    "rulegauge.engines": Group("engines", "rulegauge.core.engines", "ENGINES", ("rulegauge.core.cluster",)),
}


@dataclass(frozen=True)
class BrokenPlugin:
    group: str
    name: str
    package: str  # ``name==version`` of the distribution that declares it
    error: str

    def __str__(self) -> str:
        return f"plug-in {self.name!r} ({self.group}, from {self.package}) is broken: {self.error}"


_loaded: set[str] = set()
_origins: dict[tuple[str, str], str] = {}
_broken: dict[tuple[str, str], BrokenPlugin] = {}


def registry(group: str) -> Registry[Any]:
    g = GROUPS[group]
    reg: Registry[Any] = getattr(importlib.import_module(g.module), g.attribute)
    return reg


def _last_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[-1] if text else ''}".rstrip(": ")


def _package(ep: md.EntryPoint) -> str:
    dist = ep.dist
    return f"{dist.name}=={dist.version}" if dist is not None else "an unknown package"


def _load_entry_point(group: str, ep: md.EntryPoint, reg: Registry[Any]) -> None:
    pkg = _package(ep)
    if ep.name in reg and _origins.get((group, ep.name), "builtin") != pkg:
        # a built-in (or another package's) name: refuse rather than shadow it
        _broken[(group, ep.name)] = BrokenPlugin(group, ep.name, pkg, f"the name {ep.name!r} is already "
                                                 f"registered ({origin(group, ep.name)})")
        return
    before = set(reg.names())
    try:
        obj = ep.load()
        if ep.name not in reg and not _is_module(obj):
            reg.add(ep.name, obj() if GROUPS[group].instances and isinstance(obj, type) else obj)
    except Exception as exc:
        _broken[(group, ep.name)] = BrokenPlugin(group, ep.name, pkg, _last_line(exc))
        return
    added = set(reg.names()) - before
    if ep.name not in reg:
        _broken[(group, ep.name)] = BrokenPlugin(group, ep.name, pkg, f"loading it registered no {ep.name!r}"
                                                 + (f" (it registered {', '.join(sorted(added))})" if added else ""))
    for name in added | {ep.name} & set(reg.names()):
        _origins[(group, name)] = pkg


def _is_module(obj: Any) -> bool:
    return type(obj).__name__ == "module"


def load(group: str) -> None:
    """Register the built-ins of ``group`` and its plug-ins (idempotent; module docstring)."""
    if group in _loaded:
        return
    _loaded.add(group)
    g = GROUPS[group]
    for mod in g.builtins:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:
                raise
    reg = registry(group)
    for ep in sorted(md.entry_points(group=group), key=lambda e: e.name):
        _load_entry_point(group, ep, reg)


def is_loaded(group: str) -> bool:
    """Whether :func:`load` has run for ``group`` in this process."""
    return group in _loaded


def load_all() -> None:
    for group in GROUPS:
        load(group)


def origin(group: str, name: str) -> str:
    """``builtin`` or the ``package==version`` that registered ``name`` in ``group``."""
    return _origins.get((group, name), "builtin")


def origins(group: str) -> dict[str, str]:
    """Every registered name of ``group`` -> :func:`origin`, in registration order."""
    load(group)
    return {n: origin(group, n) for n in registry(group).names()}


def broken() -> list[BrokenPlugin]:
    """Every plug-in that failed to load, by group then name."""
    return [_broken[k] for k in sorted(_broken)]


def describe_unknown(group: str, name: str) -> str | None:
    """Why ``name`` is missing from ``group`` when a plug-in of that name is broken, else None."""
    b = _broken.get((group, name))
    return str(b) if b is not None else None


def broken_hint(reg: Registry[Any], name: str) -> str:
    """``"; plug-in ... is broken: ..."`` when ``name`` is a broken plug-in of the group whose
    registry is ``reg`` (for the unknown-name message of :meth:`Registry.get`), else ``""``."""
    for group, g in GROUPS.items():
        module = sys.modules.get(g.module)
        if module is not None and getattr(module, g.attribute, None) is reg:
            why = describe_unknown(group, name)
            return f"; {why}" if why else ""
    return ""


add_unknown_hint(broken_hint)


def reset() -> None:
    """Forget what was loaded (tests that install a plug-in package at run time)."""
    _loaded.clear()
    _broken.clear()
