"""Plug-ins: the one door through which arms, answerers, metrics, fusion methods, engines and
command groups enter rulegauge, built-in or from a team's own package.

Every component is an entry point of its group (:mod:`rulegauge.core.entry_points`: the metadata
and the one load order); :data:`GROUPS` says, per group, only where its registry lives.

Loading is lazy and names come from the metadata (:data:`DOOR`, the
:class:`~rulegauge.core.registry.Door` of every group's registry): an entry point
``module:object`` declares one name, its own, and asking for it imports that one module and
registers the object under it (a fusion method class instantiated: that registry holds
instances), unless the import registered it already. A module entry point (``module``) may
register several names, known only once imported: a group's module entry points are imported, in
load order, when a name is asked for that nothing declares or registered, when the group's names
are listed, and before any ``module:object`` entry point that follows them, so who keeps a
contested name never depends on what was asked first. A command that enumerates objects
(``rulegauge list``, the conformance suites, the generated docs) loads the whole group (:func:`load`).

A name belongs to one entry point: a second ``module:object`` entry point of that name is
refused from the metadata alone, a module registering a name that an earlier ``module:object``
entry point declares is refused when it does. :func:`origin` is the entry point whose module
registered a name, however that module was first imported. A plug-in that fails to import,
whose name is taken, whose object is of the wrong kind or that registers nothing is recorded
broken (:func:`broken`, :func:`describe_unknown`), never raised: one broken package never stops a
command that does not use it (a built-in raises, as a bug of rulegauge's own, unless a module of
an optional dependency is missing). What a plug-in's code raises while rulegauge runs it is a
:class:`PluginFailed` naming it (:func:`guarded`). docs/plugins.md says all this for users.

The one core module that imports higher stages, only by name and only when asked.

Reference: Python packaging, "Entry points specification"; ``importlib.metadata``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from rulegauge.core import entry_points as meta
from rulegauge.core.entry_points import Entry
from rulegauge.core.errors import RegistryError, RulegaugeError
from rulegauge.core.registry import Registry, add_unknown_hint

BUILTIN = meta.BUILTIN
"""The origin of rulegauge's own components (:func:`origin`)."""


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
    "rulegauge.aligners": Group("page aligners", "rulegauge.goldset.align", "ALIGNERS"),
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


_loaded: set[str] = set()  # groups loaded whole (load)
_tried: dict[str, set[int]] = {}  # group -> indexes of the entries imported (or refused) so far
_claims: dict[str, dict[str, Entry]] = {}  # group -> name -> the module:object entry point it belongs to
_owners: dict[tuple[str, str], Entry | None] = {}  # (group, name) -> the entry point that registered it
_loading: list[Entry] = []  # the entry points being imported, innermost last
_broken: dict[tuple[str, str], BrokenPlugin] = {}
_failed: set[tuple[str, int]] = set()  # (group, entry index) of every entry recorded broken


def registry(group: str) -> Registry[Any]:
    g = GROUPS[group]
    reg: Registry[Any] = getattr(importlib.import_module(g.module), g.attribute)
    return reg


def declared() -> tuple[tuple[str, str, str], ...]:
    """rulegauge's own entry points ``(group, name, value)``, sorted by group and name."""
    return meta.own_declared()


def record_broken(entry: Entry, error: str) -> None:
    """Record ``entry`` as broken (what :func:`broken` lists), with ``error`` as its cause."""
    _broken[(entry.group, entry.name)] = BrokenPlugin(entry.group, entry.name, entry.package, error)
    _failed.add((entry.group, entry.index))


def last_line(exc: BaseException) -> str:
    """``Type: the last line of its message`` (how a broken plug-in's cause is shown)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[-1] if text else ''}".rstrip(": ")


def _tried_of(group: str) -> set[int]:
    return _tried.setdefault(group, set())


def claims(group: str) -> dict[str, Entry]:
    """Name -> the ``module:object`` entry point it belongs to: the first of that name in load
    order; a later one of the same name is recorded broken here, from the metadata alone."""
    found = _claims.get(group)
    if found is None:
        found = _claims[group] = {}
        for e in meta.entries(group):
            if not e.attribute:
                continue
            first = found.setdefault(e.name, e)
            if first is not e:
                _tried_of(group).add(e.index)
                record_broken(e, f"the name {e.name!r} is already registered ({first.package})")
    return found


def import_entry(entry: Entry) -> tuple[bool, Any]:
    """``(True, object)`` of ``entry``, or ``(False, None)`` with it recorded as broken: whatever
    its import raised, ``SystemExit`` and other ``BaseException`` subclasses included (a plug-in
    calling ``sys.exit()`` at import must not end the program), but ``KeyboardInterrupt``, which
    is the user's. A built-in's error raises (a bug of rulegauge's own) unless it is a module
    not found (an optional dependency not installed)."""
    _loading.append(entry)
    try:
        return True, entry.point().load()
    except KeyboardInterrupt:
        raise
    except ModuleNotFoundError as exc:
        record_broken(entry, last_line(exc))
    except BaseException as exc:  # nothing a plug-in raises ends the program (docstring)
        if entry.package == BUILTIN:
            raise
        record_broken(entry, last_line(exc) + (" (sys.exit at import)" if isinstance(exc, SystemExit) else ""))
    finally:
        _loading.pop()
    return False, None


def _entry_of(group: str, name: str, module: str | None) -> Entry | None:
    """The entry point of ``group`` a registration of ``name`` by ``module`` comes from: the one
    of that name and module, else one of that module (a module entry point), else, for a plug-in's
    module, the entry point being imported whose package it is in (a module it imports), else None."""
    if module is None:
        return None
    mine = [e for e in meta.entries(group) if e.module == module]
    exact = [e for e in mine if e.name == name]
    if exact or mine:
        return (exact or mine)[0]
    top = module.split(".")[0]
    if top == meta.DISTRIBUTION:  # rulegauge's own modules: only an entry point naming the module itself
        return None
    return next((e for e in reversed(_loading) if e.group == group and e.module.split(".")[0] == top), None)


def owner(group: str, name: str) -> Entry | None:
    """The entry point that registered ``name`` in ``group`` (None: rulegauge's own or a
    registration made by hand)."""
    if (group, name) in _owners:
        return _owners[(group, name)]
    reg = registry(group)
    return _entry_of(group, name, reg.source(name)) if name in reg.registered() else None


def _load_entry(reg: Registry[Any], e: Entry) -> None:
    """Import ``e`` and register what it declares (module docstring); a failure is recorded."""
    group = e.group
    if e.attribute and e.name in reg.registered():
        if owner(group, e.name) != e:  # taken by an earlier module entry point, or by hand
            record_broken(e, f"the name {e.name!r} is already registered ({origin(group, e.name)})")
        return
    before = set(reg.registered())
    ok, obj = import_entry(e)
    added = set(reg.registered()) - before
    if not ok:  # a broken plug-in leaves nothing behind (what other modules it imported registered stays)
        gone = [n for n in added if owner(group, n) == e]
        reg.withdraw(gone)
        for n in gone:
            _owners.pop((group, n), None)
        return
    if e.attribute and e.name in reg.registered():
        return
    if e.attribute and type(obj).__name__ != "module":
        why = reg.refusal(obj)  # the registry's owner says what it holds: an arm class, a FusionMethod...
        if why is not None:
            if e.package == BUILTIN:
                raise RegistryError(f"{group} entry point {e.name!r}: {why}")
            record_broken(e, f"refused: {why}")
            return
        if GROUPS[group].instances and isinstance(obj, type):
            try:
                obj = obj()
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # as in import_entry
                if e.package == BUILTIN:
                    raise
                record_broken(e, f"building it raised {last_line(exc)}")
                return
        reg.add(e.name, obj, source=e.module)
        return
    if not added and not any(owner(group, n) == e for n in reg.registered()):
        record_broken(e, "loading it registered nothing" + (f" named {e.name!r}" if e.attribute else ""))


def _import(group: str, reg: Registry[Any], e: Entry) -> None:
    """Import entry ``e`` once, after the group's module entry points that precede it."""
    tried = _tried_of(group)
    if e.index in tried:
        return
    _modules(group, reg, before=e.index)
    tried.add(e.index)
    _load_entry(reg, e)


def _modules(group: str, reg: Registry[Any], before: int | None = None) -> None:
    """Import the group's module entry points (those before index ``before``), in load order."""
    tried = _tried_of(group)
    for e in meta.entries(group)[:before]:
        if not e.attribute and e.index not in tried:
            tried.add(e.index)
            _load_entry(reg, e)


def _load_group(group: str, reg: Registry[Any]) -> None:
    claims(group)
    for e in meta.entries(group):
        _import(group, reg, e)


class _Door:
    """The :class:`~rulegauge.core.registry.Door` of every group's registry (module docstring)."""

    def find(self, reg: Registry[Any], name: str) -> None:
        group = _group(reg)
        claim = claims(group).get(name)
        if claim is not None:
            _import(group, reg, claim)
        if name not in reg.registered():
            _modules(group, reg)
        if name not in reg.registered():  # unknown: every component, so the choices are what works
            _load_group(group, reg)

    def load(self, reg: Registry[Any]) -> None:
        _load_group(_group(reg), reg)

    def names(self, reg: Registry[Any]) -> list[str]:
        group = _group(reg)
        _modules(group, reg)  # what module entry points register is known once they are imported
        registered = reg.registered()
        pending = [n for n, e in claims(group).items() if n not in registered and (group, e.index) not in _failed]
        order = {n: i for i, n in enumerate(registered)}

        def key(name: str) -> tuple[int, str, int]:
            # by entry point; what no entry point of the group registered first, by module (whatever
            # imported it first), each module's names in the order it registered them
            e = owner(group, name) if name in order else claims(group)[name]
            return (e.index, "", order.get(name, 0)) if e is not None else (-1, reg.source(name) or "", order[name])

        return sorted([*registered, *pending], key=key)

    def claim(self, reg: Registry[Any], name: str, module: str | None) -> str | None:
        group = _group(reg)
        e = _entry_of(group, name, module)
        first = claims(group).get(name)
        if first is not None and first != e:
            ours = module is None or module.split(".")[0] == meta.DISTRIBUTION
            if (e is None and not ours) or (e is not None and e.index > first.index):
                return f"entry point {first.name!r} ({group}, from {first.package}) declares it"
        if name not in reg.registered():  # a duplicate is the registry's to refuse; the name keeps its owner
            _owners[(group, name)] = e
        return None


def _group(reg: Registry[Any]) -> str:
    assert reg.group is not None  # a door serves registries of a group only (Registry.__init__)
    return reg.group


DOOR = _Door()
"""The door handed to every group's registry (``Registry(..., group=..., door=plugins.DOOR)``)."""


def load(group: str) -> None:
    """Register every component of ``group``, built-in and plug-in (idempotent; module docstring)."""
    if group in _loaded:
        return
    _loaded.add(group)
    _load_group(group, registry(group))


def is_loaded(group: str) -> bool:
    """Whether :func:`load` has run for ``group`` in this process."""
    return group in _loaded


def load_all() -> None:
    for group in GROUPS:
        load(group)


class PluginFailed(RulegaugeError):
    """A plug-in's code raised while rulegauge ran it (:func:`guarded`); names the plug-in."""


def failure(group: str, name: str, doing: str, exc: BaseException) -> PluginFailed:
    """The :class:`PluginFailed` of a plug-in ``name`` of ``group`` that raised ``exc`` ``doing``."""
    return PluginFailed(f"plug-in {name!r} ({group}, from {origin(group, name)}) failed {doing}: {last_line(exc)}")


@contextmanager
def guarded(group: str, name: str, doing: str) -> Iterator[None]:
    """Run a component's code (an arm's search, a fusion method's fuse, an engine's start): what
    a plug-in's code raises, but a :class:`RulegaugeError` (already a message) and
    ``KeyboardInterrupt`` (the user's), becomes :class:`PluginFailed` naming it, its package and
    ``doing`` (exit 2, no traceback; ``SystemExit`` included: a plug-in does not end a run). A
    built-in's error raises as it is, a bug of rulegauge's own."""
    try:
        yield
    except (RulegaugeError, KeyboardInterrupt):
        raise
    except BaseException as exc:  # as in import_entry
        if origin(group, name) == BUILTIN:
            raise
        raise failure(group, name, doing, exc) from None


def origin(group: str, name: str) -> str:
    """``builtin`` or the ``package==version`` whose entry point registered ``name`` in
    ``group`` (module docstring); a name not loaded yet: the entry point that declares it."""
    e = owner(group, name)
    if e is not None:
        return e.package
    reg = registry(group)
    if name in reg.registered():
        return meta.package_of_module(reg.source(name))
    claim = claims(group).get(name)
    return claim.package if claim is not None else BUILTIN


def origins(group: str) -> dict[str, str]:
    """Every name of ``group`` -> :func:`origin`, in the registry's order (from the metadata; a
    registry without a door, filled by module entry points only, is loaded first)."""
    reg = registry(group)
    if reg.group is None:
        load(group)
    return {n: origin(group, n) for n in reg.names()}


def broken() -> list[BrokenPlugin]:
    """Every plug-in found broken so far, by group then name (:func:`load_all` finds them all)."""
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
        if reg.group == group or (module is not None and getattr(module, g.attribute, None) is reg):
            why = describe_unknown(group, name)
            return f"; {why}" if why else ""
    return ""


add_unknown_hint(broken_hint)


def reset() -> None:
    """Forget what was loaded and read the metadata again (tests that install a plug-in package
    at run time; components already registered stay)."""
    for state in (_loaded, _tried, _claims, _owners, _broken, _failed):
        state.clear()
    meta.clear()
