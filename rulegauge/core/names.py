"""Names that become paths, and ids that users compare: checked once, here.

Every name rulegauge turns into a file or folder name (run ids, arm names,
config ids, answerer labels) goes through :func:`check_name`: letters, digits,
``.``, ``_``, ``-`` (and ``+`` where the kind allows it, as config ids use it),
not starting with a dot, no ``..``, at most 128 characters. A name that fails
raises :class:`~rulegauge.core.errors.ConfigError` naming the kind and the value.

Ids of gold questions and documents are free text but compared as strings, so
:func:`normalize_id` returns their Unicode NFC form (``café`` typed with a
combining accent equals the precomposed one) and :func:`invisible_characters`
lists the invisible code points (zero-width space, joiners, BOM, bidi controls,
other format characters: Unicode category ``Cf``, and control characters ``Cc``)
an id must not hold, by code point and name.

Reference: Unicode Standard Annex #15 (normalization forms); Unicode general
categories (UAX #44).
"""

from __future__ import annotations

import re
import unicodedata

from rulegauge.core.errors import ConfigError

MAX_NAME = 128
_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_PLUS = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")

NAME_KINDS = {"run id": _PLAIN, "arm name": _PLAIN, "answerer label": _PLAIN,
              "config id": _PLUS, "table name": _PLAIN}
"""Kinds of path-forming names and the pattern each must match."""


def name_problem(kind: str, name: object) -> str | None:
    """Why ``name`` cannot be a ``kind`` (a key of :data:`NAME_KINDS`), or None."""
    pattern = NAME_KINDS[kind]
    if not isinstance(name, str):
        return f"bad {kind} {name!r}: must be text"
    if len(name) > MAX_NAME or not pattern.match(name) or ".." in name:
        extra = ", '+'" if pattern is _PLUS else ""
        return (f"bad {kind} {name!r}: use letters, digits, '.', '_', '-'{extra} "
                f"(not starting with '.', no '..', at most {MAX_NAME} characters); "
                f"a {kind} becomes a file or folder name")
    return None


def check_name(kind: str, name: object) -> str:
    """``name`` when it is a safe ``kind`` name (see module docstring), else raise."""
    problem = name_problem(kind, name)
    if problem:
        raise ConfigError(problem)
    return str(name)


def invisible_characters(text: str) -> list[str]:
    """The invisible or control code points in ``text``, as ``U+200B ZERO WIDTH SPACE``."""
    found = []
    for ch in text:
        if unicodedata.category(ch) in ("Cf", "Cc", "Zl", "Zp"):
            label = f"U+{ord(ch):04X} {unicodedata.name(ch, 'control character')}"
            if label not in found:
                found.append(label)
    return found


def normalize_id(text: str) -> str:
    """The NFC form of an id (what rulegauge stores and compares)."""
    return unicodedata.normalize("NFC", text)


def id_problem(kind: str, value: str) -> str | None:
    """Why ``value`` cannot be a ``kind`` id (invisible characters), or None."""
    bad = invisible_characters(value)
    if bad:
        return (f"{kind} {value!r} holds invisible characters ({', '.join(bad)}); "
                "ids that look alike must be alike: remove them")
    return None
