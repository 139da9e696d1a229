"""Entry-point metadata: every component a plug-in group declares, in the one load order,
read without importing anything.

An :class:`Entry` is one entry point of a ``rulegauge.*`` group: its name, its value
(``module:object``, one component under the entry point's name; or ``module``, a module that
registers what it declares on import, possibly several names), the distribution that declares
it (``builtin``: rulegauge's own, else ``package==version``) and its place in the load order.

Load order: rulegauge's own entry points first, sorted by name (read from ``pyproject.toml``
when rulegauge runs from its source tree, an edit counting without a reinstall, else from the
installed distribution's metadata, which setuptools writes sorted: so both give one order),
then every other distribution's, sorted by name and package. A distribution found twice on
the path counts once (the first, as :func:`importlib.metadata.entry_points` does).

Reference: Python packaging, "Entry points specification"; ``importlib.metadata``.
"""

from __future__ import annotations

import functools
import importlib.metadata as md
import tomllib
from dataclasses import dataclass
from pathlib import Path

DISTRIBUTION = "rulegauge"
BUILTIN = "builtin"
PREFIX = "rulegauge."
"""Every plug-in group's name starts with it."""


@dataclass(frozen=True)
class Entry:
    """One entry point of a group (module docstring)."""

    group: str
    name: str
    value: str
    package: str  # ``builtin`` or ``name==version`` of the distribution that declares it
    index: int  # its place in the group's load order

    @property
    def module(self) -> str:
        return self.value.partition(":")[0].strip()

    @property
    def attribute(self) -> bool:
        """Names one object (``module:object``), registered under the entry point's name;
        else the entry point is a module that registers on import."""
        return ":" in self.value

    def point(self) -> md.EntryPoint:
        return md.EntryPoint(self.name, self.value, self.group)


def _normal(name: str) -> str:
    return name.lower().replace("_", "-")


@functools.cache
def own_declared() -> tuple[tuple[str, str, str], ...]:
    """rulegauge's own entry points ``(group, name, value)``, sorted by group and name: from the
    source tree's ``pyproject.toml`` when rulegauge runs from one, else from the installed
    distribution's metadata (module docstring)."""
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


@functools.cache
def _others() -> tuple[tuple[str, str, str, str], ...]:
    """``(group, name, value, package)`` of every other distribution's ``rulegauge.*`` entry point."""
    out, seen = [], {DISTRIBUTION}
    for dist in md.distributions():
        name = dist.metadata["Name"] or ""
        if _normal(name) in seen:
            continue
        seen.add(_normal(name))
        out += [(ep.group, ep.name, ep.value, f"{name}=={dist.version}") for ep in dist.entry_points
                if ep.group.startswith(PREFIX)]
    return tuple(out)


@functools.cache
def entries(group: str) -> tuple[Entry, ...]:
    """Every entry point of ``group`` in the load order (module docstring)."""
    own = [(name, value, BUILTIN) for g, name, value in own_declared() if g == group]
    others = sorted((name, value, pkg) for g, name, value, pkg in _others() if g == group)
    others.sort(key=lambda e: (e[0], e[2]))
    return tuple(Entry(group, name, value, pkg, i) for i, (name, value, pkg) in enumerate([*own, *others]))


def groups() -> list[str]:
    """Every group any distribution declares an entry point in, sorted."""
    return sorted({g for g, _, _ in own_declared()} | {g for g, _, _, _ in _others()})


def package_of_module(module: str | None) -> str:
    """The distribution a registering module belongs to: rulegauge's own (or a registration
    made at run time, ``None``) is ``builtin``; else the package of the first entry point, of
    any group in load order, naming that module, else one naming a module of the same
    top-level package; ``builtin`` when none does (a module no distribution declares)."""
    if module is None or module.split(".")[0] == DISTRIBUTION:
        return BUILTIN
    every = [e for g in groups() for e in entries(g)]
    for e in every:
        if e.module == module:
            return e.package
    top = module.split(".")[0]
    return next((e.package for e in every if e.module.split(".")[0] == top), BUILTIN)


def clear() -> None:
    """Read the metadata again (a test that installs a distribution at run time)."""
    for cached in (own_declared, _others, entries):
        cached.cache_clear()
