"""Plug-ins: the one door through which arms, answerers, metrics, fusion methods and command
groups enter rulegauge, built-in or from a team's own package.

Every component is declared as a Python entry point in its group. rulegauge's own are in its
``pyproject.toml`` (``[project.entry-points."rulegauge.arms"]`` ...); a team's package declares
its own the same way::

    [project.entry-points."rulegauge.arms"]
    acme-search = "acme_rulegauge.arms:AcmeArm"       # a class, registered as "acme-search"
    [project.entry-points."rulegauge.metrics"]
    acme = "acme_rulegauge.metrics"                    # or a module that registers on import

:data:`GROUPS` says, per group, only where its registry lives (no list of modules). An entry
point's object is registered under the entry point's name (a fusion method class is
instantiated first: that registry holds instances), unless loading it already registered that
name; a module entry point must register something on import (a module that calls
``ARMS.register`` / ``declare`` itself). A group without a registry (``rulegauge.commands``:
``register(app)`` functions) is read with :func:`entry_objects`.

Load order is deterministic: rulegauge's own entry points first, sorted by name (read from
``pyproject.toml`` when rulegauge runs from its source tree, an edit counting without a
reinstall, else from the installed distribution's metadata, which setuptools writes sorted:
so both give one order), then every other distribution's, sorted by name and package.
:func:`load` does it once per process per group; a :class:`~rulegauge.core.registry.Registry`
created with ``group=`` calls it on first lookup, so no caller has to remember.

A plug-in that fails to import, or whose name is already taken, is not registered and is
recorded as broken (:func:`broken`), by name with its package and the error's last line;
nothing raises, so one broken package never stops a run that does not use it. A built-in whose
import fails for a missing module (an optional dependency not installed) is recorded the same
way (package ``builtin``); any other error of a built-in raises, as a bug of rulegauge's own.
A run that names a broken component gets an error saying so (:func:`describe_unknown`).
:func:`origin` tells where a name came from: ``builtin`` or ``package==version``.

The one core module that imports higher stages, and only by name when :func:`load` is
called (never at import time).

Reference: Python packaging, "Entry points specification"; ``importlib.metadata``.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata as md
import sys
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rulegauge.core.errors import RegistryError, RulegaugeError
from rulegauge.core.registry import Registry, add_unknown_hint, shown

DISTRIBUTION = "rulegauge"
BUILTIN = "builtin"


@dataclass(frozen=True)
class Group:
    label: str  # as ``rulegauge list`` names the registry
    module: str  # where the registry lives
    attribute: str
    instances: bool = False  # the registry holds instances: a class entry point is instantiated


GROUPS: dict[str, Group] = {
    "rulegauge.arms": Group("arms", "rulegauge.arms.base", "ARMS"),
    "rulegauge.answerers": Group("answerers", "rulegauge.answering.answerers.base", "ANSWERERS"),
    "rulegauge.metrics": Group("metrics", "rulegauge.metrics.family", "METRICS"),
    "rulegauge.fusion": Group("fusion methods", "rulegauge.fusion.method", "FUSION_METHODS", instances=True),
    # the products' hooks, tables and engines: modules that register on import, loaded by name when a
    # run, a table or a metric asks (the kernel imports none of them)
    "rulegauge.stages": Group("stages", "rulegauge.pipeline.stages", "STAGES"),
    "rulegauge.tables": Group("tables", "rulegauge.store.schema", "TABLES"),
    "rulegauge.engines": Group("engines", "rulegauge.core.engines", "ENGINES"),
}
"""Registry groups: entry-point group -> where its registry lives (one line per group)."""


@dataclass(frozen=True)
class BrokenPlugin:
    group: str
    name: str
    package: str  # ``name==version`` of the distribution that declares it (``builtin``: rulegauge's own)
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


@functools.cache
def _own_declared() -> tuple[tuple[str, str, str], ...]:
    """rulegauge's own entry points ``(group, name, value)``, sorted by group and name: from the
    source tree's ``pyproject.toml`` when rulegauge runs from one (an edit counts without a
    reinstall), else from the installed distribution's metadata (module docstring)."""
    import rulegauge  # the top package: only its location

    project = Path(rulegauge.__file__).resolve().parent.parent / "pyproject.toml"
    if project.is_file():
        data = tomllib.loads(project.read_text(encoding="utf-8")).get("project", {})
        if data.get("name") == DISTRIBUTION:
            return tuple(sorted((group, name, str(value)) for group, eps in data.get("entry-points", {}).items()
                                for name, value in eps.items()))
    try:
        eps = md.distribution(DISTRIBUTION).entry_points
    except md.PackageNotFoundError:
        return ()
    return tuple(sorted((ep.group, ep.name, ep.value) for ep in eps))


def declared() -> tuple[tuple[str, str, str], ...]:
    """rulegauge's own entry points ``(group, name, value)``, sorted by group and name."""
    return _own_declared()


def _is_own(ep: md.EntryPoint) -> bool:
    dist = ep.dist
    return dist is not None and dist.name.lower().replace("_", "-") == DISTRIBUTION


def entry_points(group: str) -> list[md.EntryPoint]:
    """Every entry point of ``group``: rulegauge's own sorted by name, then every other
    distribution's sorted by name and package (the one load order)."""
    own = [md.EntryPoint(name, value, g) for g, name, value in _own_declared() if g == group]
    others = [ep for ep in md.entry_points(group=group) if not _is_own(ep)]
    return own + sorted(others, key=lambda ep: (ep.name, _package(ep)))


def _last_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[-1] if text else ''}".rstrip(": ")


def _package(ep: md.EntryPoint) -> str:
    dist = ep.dist
    if dist is None:
        return BUILTIN  # declared by rulegauge itself (_own_declared)
    return f"{dist.name}=={dist.version}"


def _record(group: str, name: str, pkg: str, error: str) -> None:
    _broken[(group, name)] = BrokenPlugin(group, name, pkg, error)


def _import(group: str, ep: md.EntryPoint, pkg: str) -> tuple[bool, Any]:
    """``(True, object)`` of ``ep``, or ``(False, None)`` with ``ep`` recorded as broken: whatever
    its import raised, ``SystemExit`` and other ``BaseException`` subclasses included (a plug-in
    calling ``sys.exit()`` at import must not end the program), but ``KeyboardInterrupt``, which
    is the user's. A built-in's error raises (a bug of rulegauge's own) unless it is a module
    not found (an optional dependency not installed)."""
    try:
        return True, ep.load()
    except KeyboardInterrupt:
        raise
    except ModuleNotFoundError as exc:
        _record(group, ep.name, pkg, _last_line(exc))
    except BaseException as exc:  # nothing a plug-in raises ends the program (docstring)
        if pkg == BUILTIN:
            raise
        _record(group, ep.name, pkg, _last_line(exc) + (" (sys.exit at import)" if isinstance(exc, SystemExit) else ""))
    return False, None


def _load_entry_point(group: str, ep: md.EntryPoint, reg: Registry[Any]) -> None:
    pkg = _package(ep)
    if ep.name in reg and _origins.get((group, ep.name), BUILTIN) != pkg:
        # a built-in (or another package's) name: refuse rather than shadow it
        _record(group, ep.name, pkg, f"the name {ep.name!r} is already registered ({origin(group, ep.name)})")
        return
    before = set(reg.names())
    fresh = ep.module not in sys.modules
    ok, obj = _import(group, ep, pkg)
    added = set(reg.names()) - before
    for name in added:  # what an import registered before failing is still named by its origin
        _origins.setdefault((group, name), pkg)
    if not ok:
        return
    if ep.name not in reg and not _is_module(obj):
        why = reg.refusal(obj)  # the registry's owner says what it holds: an arm class, a FusionMethod...
        if why is not None:
            if pkg == BUILTIN:
                raise RegistryError(f"{group} entry point {ep.name!r}: {why}")
            _record(group, ep.name, pkg, f"refused: {why}")
            return
        made = _instantiate(group, ep, pkg, obj)
        if made is None:
            return
        reg.add(ep.name, made[0])
        added.add(ep.name)
    if ep.name not in reg and ((fresh and not added) or not _is_module(obj)):
        _record(group, ep.name, pkg, f"loading it registered no {ep.name!r}"
                + (f" (it registered {', '.join(sorted(added))})" if added else ""))
    for name in added | ({ep.name} & set(reg.names())):
        _origins.setdefault((group, name), pkg)


def _instantiate(group: str, ep: md.EntryPoint, pkg: str, obj: Any) -> tuple[Any] | None:
    """``(what the registry holds,)``: ``obj``, or an instance of it for a registry of
    instances; None when building it raised (recorded as broken, as :func:`_import` does)."""
    if not (GROUPS[group].instances and isinstance(obj, type)):
        return (obj,)
    try:
        return (obj(),)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # as in _import
        if pkg == BUILTIN:
            raise
        _record(group, ep.name, pkg, f"building it raised {_last_line(exc)}")
        return None


def _is_module(obj: Any) -> bool:
    return type(obj).__name__ == "module"


def load(group: str) -> None:
    """Register every component of ``group``, built-in and plug-in (idempotent; module docstring)."""
    if group in _loaded:
        return
    _loaded.add(group)
    reg = registry(group)
    for ep in entry_points(group):
        _load_entry_point(group, ep, reg)


def is_loaded(group: str) -> bool:
    """Whether :func:`load` has run for ``group`` in this process."""
    return group in _loaded


def load_all() -> None:
    for group in GROUPS:
        load(group)


def entry_objects(group: str) -> list[tuple[str, Any]]:
    """``(name, object)`` of every entry point of a group without a registry (the CLI's
    ``rulegauge.commands``: ``register(app)`` functions), in the load order; broken ones are
    recorded (:func:`broken`) and left out. Not cached: its one caller builds the CLI once."""
    out = []
    for ep in entry_points(group):
        pkg = _package(ep)
        ok, obj = _import(group, ep, pkg)
        if ok and not callable(obj):
            if pkg == BUILTIN:
                raise RegistryError(f"{group} entry point {ep.name!r}: {shown(obj)} is not callable")
            _record(group, ep.name, pkg, f"refused: {shown(obj)} is not a register(app) function")
            continue
        if ok:
            _origins[(group, ep.name)] = pkg
            out.append((ep.name, obj))
    return out


def contained(group: str, name: str, call: Callable[[], None]) -> bool:
    """Call a plug-in's ``call()`` (a command group's ``register(app)``); what it raises, but
    ``KeyboardInterrupt``, records ``name`` as broken instead (False). A built-in's raises."""
    pkg = origin(group, name)
    try:
        call()
        return True
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # as in _import
        if pkg == BUILTIN:
            raise
        _record(group, name, pkg, f"{_last_line(exc)} (raised by register)")
        return False


class PluginFailed(RulegaugeError):
    """A plug-in's code raised while rulegauge ran it (:func:`guarded`); names the plug-in."""


@contextmanager
def guarded(group: str, name: str, doing: str) -> Iterator[None]:
    """Run a component's code (an arm's search, a fusion method's fuse): what a plug-in's code
    raises, but a :class:`RulegaugeError` (already a message) and ``KeyboardInterrupt`` (the
    user's), becomes :class:`PluginFailed` naming it, its package and ``doing`` (exit 2, no
    traceback; ``SystemExit`` included: a plug-in does not end a run). A built-in's error
    raises as it is, a bug of rulegauge's own."""
    try:
        yield
    except (RulegaugeError, KeyboardInterrupt):
        raise
    except BaseException as exc:  # as in _import
        pkg = origin(group, name)
        if pkg == BUILTIN:
            raise
        raise PluginFailed(f"plug-in {name!r} ({group}, from {pkg}) failed {doing}: {_last_line(exc)}") from None


def origin(group: str, name: str) -> str:
    """``builtin`` or the ``package==version`` that registered ``name`` in ``group``."""
    return _origins.get((group, name), BUILTIN)


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
