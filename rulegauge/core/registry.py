"""Name -> object registries (arms, metrics, fusion methods, answerers, loaders...).

A registry replaces if/elif chains: components register under a canonical name,
duplicate names raise, and lookups of unknown names raise an error that lists
every valid choice. CLI choices and help texts are read from here.

A registry that is a plug-in door (``Registry("arm", group="rulegauge.arms",
loader=plugins.load)``) loads its group's entry points (:func:`rulegauge.core.plugins.load`,
handed in by the registry's owner) on the first lookup, so a
component is there whoever asks first; registering never loads.

The owner also says what the registry holds (``accepts``: object -> the reason it is not
one, None when it is; :func:`kind_check` builds the usual ones): :meth:`Registry.add`
refuses anything else, so an entry point naming ``42`` where an arm class belongs is
refused at load (:mod:`rulegauge.core.plugins` records it as broken, by name), never
listed and then failing in a run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from rulegauge.core.errors import RegistryError

T = TypeVar("T")
Accepts = Callable[[Any], str | None]
"""``object -> None`` when a registry may hold it, else why not (module docstring)."""
UnknownHint = Callable[[Any, str], str]
"""``(registry, name) -> text`` appended to the unknown-name message ("" for none)."""
_HINTS: list[UnknownHint] = []


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


class Registry(Generic[T]):
    """An ordered mapping of unique names to registered objects.

    >>> fruits: Registry[int] = Registry("fruit")
    >>> fruits.add("apple", 1)
    1
    >>> fruits.get("apple")
    1
    """

    def __init__(self, kind: str, *, group: str | None = None,
                 loader: Callable[[str], None] | None = None, accepts: Accepts | None = None) -> None:
        if (group is None) != (loader is None):
            raise RegistryError(f"{kind} registry: a group needs its loader and a loader its group")
        self.kind = kind
        self.group = group
        """The entry-point group that fills this registry (module docstring), if any."""
        self._loader = loader  # given by the registry's owner (plugins.load): this module imports no loader
        self._accepts = accepts
        self._items: dict[str, T] = {}
        self._opened = group is None

    def refusal(self, obj: Any) -> str | None:
        """Why ``obj`` may not be registered here (the owner's ``accepts``), None when it may."""
        return self._accepts(obj) if self._accepts is not None else None

    def _open(self) -> None:
        if not self._opened and self._loader is not None and self.group is not None:
            self._opened = True  # first: the loader's own lookups must not load again
            self._loader(self.group)

    def add(self, name: str, obj: T) -> T:
        """Register ``obj`` under ``name``; a second registration of a name raises."""
        if not name or name != name.strip():
            raise RegistryError(f"invalid {self.kind} name {name!r}")
        if name in self._items:
            raise RegistryError(f"duplicate {self.kind} name {name!r}: already registered")
        why = self.refusal(obj)
        if why is not None:
            raise RegistryError(f"{self.kind} {name!r}: {why}")
        self._items[name] = obj
        return obj

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator form of :meth:`add`."""

        def deco(obj: T) -> T:
            return self.add(name, obj)

        return deco

    def get(self, name: str) -> T:
        """Return the object registered as ``name`` or raise listing the choices."""
        self._open()
        try:
            return self._items[name]
        except KeyError:
            choices = ", ".join(self.names()) or "(none registered)"
            hints = "".join(h(self, name) for h in _HINTS)
            raise RegistryError(f"unknown {self.kind} {name!r}; choose one of: {choices}{hints}") from None

    def names(self) -> list[str]:
        """Registered names in registration order."""
        self._open()
        return list(self._items)

    def items(self) -> list[tuple[str, T]]:
        self._open()
        return list(self._items.items())

    def __contains__(self, name: object) -> bool:
        self._open()
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        self._open()
        return iter(self._items)

    def __len__(self) -> int:
        self._open()
        return len(self._items)
