"""Checking keyword parameters against the signature of what they configure.

Arm and answerer parameters come from config files and ``-p NAME.KEY=VALUE``; they
are checked here, before any run folder is created, against the constructor's
signature: every key must be a parameter (the message lists the accepted ones),
and every value must fit the annotation.

Conventions (annotation -> accepted values):

* ``float``: an int or a float, finite (``nan``, ``inf`` refused); never a bool;
* ``int``: an int, never a bool (``2.5`` and ``"3"`` refused);
* ``bool``: ``true``/``false``;
* ``str`` / ``Path``: a string; ``X | None`` also accepts nothing (TOML has no null,
  so this only matters for defaults);
* ``dict`` / ``list`` / ``tuple``: a table / an array; any other annotation
  is not checked here (the constructor checks it).

Reference: :func:`inspect.signature`, :func:`typing.get_type_hints`.
"""

from __future__ import annotations

import inspect
import math
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

_KIND = {float: "a number", int: "an integer", bool: "true or false", str: "a string",
         Path: "a string", dict: "a table", list: "a list", tuple: "a list"}


def accepted(target: Callable[..., Any]) -> list[str]:
    """Keyword parameter names of ``target`` (a class: its ``__init__``)."""
    fn = getattr(target, "__init__") if isinstance(target, type) else target  # noqa: B009 (the class's own)
    return [p.name for p in inspect.signature(fn).parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def _hints(target: Callable[..., Any]) -> dict[str, Any]:
    fn = getattr(target, "__init__") if isinstance(target, type) else target  # noqa: B009 (the class's own)
    try:
        return typing.get_type_hints(fn)
    except Exception:  # an unresolvable annotation: leave the value checks to the constructor
        return {}


def _fits(value: Any, hint: Any) -> str | None:
    """None when ``value`` fits ``hint``, else what was expected."""
    options = (typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType)
               else (hint,))
    kinds = [typing.get_origin(o) or o for o in options]
    if type(None) in kinds and value is None:
        return None
    known = [k for k in kinds if k in _KIND]
    if len(known) < len([k for k in kinds if k is not type(None)]):
        return None  # some option we do not check
    for k in known:
        if k is bool and isinstance(value, bool):
            return None
        if k is int and isinstance(value, int) and not isinstance(value, bool):
            return None
        if k is float and isinstance(value, int | float) and not isinstance(value, bool):
            return None if math.isfinite(value) else "a finite number"
        if k in (str, Path) and isinstance(value, str):
            return None
        if k is dict and isinstance(value, Mapping):
            return None
        if k in (list, tuple) and isinstance(value, list | tuple):
            return None
    return " or ".join(dict.fromkeys(_KIND[k] for k in known))


def check_params(target: Callable[..., Any], params: Mapping[str, Any], what: str,
                 skip: tuple[str, ...] = ()) -> list[str]:
    """Problems of ``params`` for ``target`` (empty when they fit), each prefixed
    with ``what`` (e.g. ``"arm bm25"``); keys in ``skip`` are not parameters of
    ``target`` but allowed (e.g. an arm's ``kind``)."""
    names = accepted(target)
    hints = _hints(target)
    problems = []
    for key in params:
        if key in skip:
            continue
        if key not in names:
            problems.append(f"{what}: unknown parameter {key!r}; it accepts: "
                            + (", ".join([*names, *skip]) or "(none)"))
            continue
        expected = _fits(params[key], hints.get(key, Any))
        if expected is not None:
            problems.append(f"{what}: {key} must be {expected}, got {params[key]!r}")
    return problems
