"""Name -> object registries (arms, metrics, fusion methods, answerers, loaders...).

A registry replaces if/elif chains: components register under a canonical name,
duplicate names raise, and lookups of unknown names raise an error that lists
every valid choice. CLI choices and help texts are read from here.

A registry that is a plug-in door (``Registry("arm", group="rulegauge.arms",
door=plugins.DOOR)``) is built from its group's entry-point metadata
(:mod:`rulegauge.core.plugins`, handed in by the registry's owner, as :class:`Door`):
:meth:`Registry.names` lists what the metadata declares without importing a component's
module; :meth:`Registry.get` and ``in`` import the one component a name asks for;
:meth:`Registry.items` (objects) imports them all. Registering never loads.

Every registration records the module that made it (:meth:`Registry.source`: the module
whose import was running, None for a registration made at run time), so a door can say
which entry point a name came from, however its module was first imported.

The owner also says what the registry holds (``accepts``: object -> the reason it is not
one, None when it is; :func:`kind_check` builds the usual ones): :meth:`Registry.add`
refuses anything else, so an entry point naming ``42`` where an arm class belongs is
refused at load (:mod:`rulegauge.core.plugins` records it as broken, by name), never
listed and then failing in a run.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import FrameType
from typing import Any, Generic, Protocol, TypeVar

from rulegauge.core.errors import RegistryError

T = TypeVar("T")
Accepts = Callable[[Any], str | None]
"""``object -> None`` when a registry may hold it, else why not (module docstring)."""
UnknownHint = Callable[[Any, str], str]
"""``(registry, name) -> text`` appended to the unknown-name message ("" for none)."""
_HINTS: list[UnknownHint] = []


class Door(Protocol):
    """What a plug-in door does for a registry of its group (module docstring)."""

    def find(self, registry: Registry[Any], name: str) -> None:
        """Register ``name`` if an entry point provides it, importing only what it needs; a
        name nothing declares imports every component (what works is then known)."""

    def names(self, registry: Registry[Any]) -> list[str]:
        """Every name of the group, in its one deterministic order, from the metadata."""

    def load(self, registry: Registry[Any]) -> None:
        """Register every component of the group."""

    def claim(self, registry: Registry[Any], name: str, module: str | None) -> str | None:
        """Why ``module`` may not register ``name`` (another entry point's), None when it may
        (the door then records which entry point the name comes from)."""


def shown(obj: Any) -> str:
    """``obj`` as a refusal names it: its repr (cut at 60 characters) and its type."""
    text = repr(obj)
    text = text if len(text) <= 60 else text[:57] + "..."
    if isinstance(obj, type):
        return f"{text} (a class)"
    kind = type(obj).__name__
    return f"{text} ({'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind})"


def kind_check(what: str, *, base: type | None = None, methods: tuple[str, ...] = (),
               classes: bool = False, ref: str = "") -> Accepts:
    """An ``accepts`` (module docstring): an instance of ``base`` (or, ``classes``, a class,
    a subclass of ``base`` when given) with every one of ``methods`` callable; ``what``
    names the kind in the refusal (``"an arm class"``), ``ref`` where it is described."""

    def accepts(obj: Any) -> str | None:
        if classes and not isinstance(obj, type):
            ok = False
        elif base is not None:
            ok = issubclass(obj, base) if classes else isinstance(obj, base)
        else:
            ok = True
        missing = [m for m in methods if not callable(getattr(obj, m, None))] if ok else []
        if ok and not missing:
            return None
        needs = f": it lacks {', '.join(missing)}" if missing else ""
        return f"{shown(obj)} is not {what}{needs}" + (f" ({ref})" if ref else "")

    return accepts


def add_unknown_hint(hint: UnknownHint) -> None:
    """Let a higher module explain unknown names (:mod:`rulegauge.core.plugins` says
    when the name is a plug-in that failed to load), without this module importing it."""
    if hint not in _HINTS:
        _HINTS.append(hint)


def registering_module() -> str | None:
    """The module whose import is running here: the innermost frame executing a module body
    (a decorator or ``declare(...)`` at a module's top level), None when the registration is
    made at run time (from ``__main__``: a script, a test)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "<module>":
            name = frame.f_globals.get("__name__")
            return None if name in (None, "__main__") else str(name)
        frame = frame.f_back
    return None


class Registry(Generic[T]):
    """An ordered mapping of unique names to registered objects.

    >>> fruits: Registry[int] = Registry("fruit")
    >>> fruits.add("apple", 1)
    1
    >>> fruits.get("apple")
    1
    """

    def __init__(self, kind: str, *, group: str | None = None, door: Door | None = None,
                 accepts: Accepts | None = None) -> None:
        if (group is None) != (door is None):
            raise RegistryError(f"{kind} registry: a group needs its door and a door its group")
        self.kind = kind
        self.group = group
        """The entry-point group that fills this registry (module docstring), if any."""
        self._door = door  # given by the registry's owner (plugins.DOOR): this module imports no door
        self._accepts = accepts
        self._items: dict[str, T] = {}
        self._sources: dict[str, str | None] = {}

    def refusal(self, obj: Any) -> str | None:
        """Why ``obj`` may not be registered here (the owner's ``accepts``), None when it may."""
        return self._accepts(obj) if self._accepts is not None else None

    def add(self, name: str, obj: T, *, source: str | None = None) -> T:
        """Register ``obj`` under ``name``; a second registration of a name raises, and so
        does a name another entry point of the group declares (the door's claim).
        ``source``: the module registering (default: the one whose import is running)."""
        if not name or name != name.strip():
            raise RegistryError(f"invalid {self.kind} name {name!r}")
        why = self.refusal(obj)
        if why is not None:
            raise RegistryError(f"{self.kind} {name!r}: {why}")
        module = source if source is not None else registering_module()
        taken = self._door.claim(self, name, module) if self._door is not None else None
        if taken is not None:
            raise RegistryError(f"duplicate {self.kind} name {name!r}: {taken}")
        if name in self._items:
            raise RegistryError(f"duplicate {self.kind} name {name!r}: already registered")
        self._items[name] = obj
        self._sources[name] = module
        return obj

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of :meth:`add`."""

        def deco(obj: T) -> T:
            return self.add(name, obj)

        return deco

    def source(self, name: str) -> str | None:
        """The module that registered ``name`` (None: registered at run time, or not at all)."""
        return self._sources.get(name)

    def withdraw(self, names: Iterable[str]) -> None:
        """Remove ``names`` (the door withdraws what a plug-in registered before its import
        failed: a broken plug-in leaves nothing behind)."""
        for name in names:
            self._items.pop(name, None)
            self._sources.pop(name, None)

    def registered(self) -> list[str]:
        """The names registered so far in this process, in registration order (no loading)."""
        return list(self._items)

    def _find(self, name: str) -> None:
        if name not in self._items and self._door is not None:
            self._door.find(self, name)

    def get(self, name: str) -> T:
        """Return the object registered as ``name`` or raise listing the choices."""
        self._find(name)
        try:
            return self._items[name]
        except KeyError:
            choices = ", ".join(self.names()) or "(none registered)"
            hints = "".join(h(self, name) for h in _HINTS)
            raise RegistryError(f"unknown {self.kind} {name!r}; choose one of: {choices}{hints}") from None

    def names(self) -> list[str]:
        """Every name, in order: a door's from its group's metadata (module docstring),
        else in registration order."""
        return self._door.names(self) if self._door is not None else list(self._items)

    def items(self) -> list[tuple[str, T]]:
        """``(name, object)`` of every component, in :meth:`names` order (a door loads them all)."""
        if self._door is not None:
            self._door.load(self)
        return [(n, self._items[n]) for n in self.names() if n in self._items]

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        self._find(name)
        return name in self._items

    def view(self) -> Mapping[str, T]:
        """This registry as a read-only mapping (for code that takes one): ``in`` and ``[name]``
        import only the component named, iteration lists :meth:`names`."""
        return _View(self)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())


class _View(Mapping[str, T]):
    """:meth:`Registry.view`."""

    def __init__(self, registry: Registry[T]) -> None:
        self._registry = registry

    def __getitem__(self, name: str) -> T:
        if name not in self._registry:
            raise KeyError(name)
        return self._registry.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._registry

    def __iter__(self) -> Iterator[str]:
        return iter(self._registry.names())

    def __len__(self) -> int:
        return len(self._registry.names())
