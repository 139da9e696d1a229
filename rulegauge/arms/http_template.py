"""Request templates of the ``http`` arm: placeholders filled from each question.

Placeholders are ``{question}``, ``{question_id}``, ``{game}``, ``{edition}``,
``{language}``, ``{depth}`` (:data:`PLACEHOLDERS`) and ``{env:NAME}`` (an environment
variable); ``{{`` and ``}}`` are literal braces. A string that is exactly one
placeholder keeps the value's type (``k = "{depth}"`` sends the number 100; a
question without a game sends ``null`` for ``"{game}"``, and a query-string field
whose value is null is left out); inside a longer string a missing value is empty.
Tables and arrays are filled recursively; numbers and booleans are sent as written.

Every unknown placeholder is a :class:`ConfigError` naming the allowed ones, and so
is an environment variable that is not set (by name, never by value). Two
renderings: :func:`render` with the real values, for sending, and with
``masked=True``, where ``{env:NAME}`` stays as written: that one keys the journal and
is what a record shows, so a secret never reaches a file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from rulegauge.goldset.records import Question

PLACEHOLDERS = ("question", "question_id", "game", "edition", "language", "depth")
_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")


def _names(text: str) -> list[str]:
    return [m.group(1) for m in _TOKEN.finditer(text) if m.group(1) is not None]


def check_template(value: Any, where: str) -> list[str]:
    """Problems of one template value (unknown placeholders, unset variables, types)."""
    if isinstance(value, Mapping):
        return [p for k, v in value.items() for p in check_template(v, f"{where}.{k}")]
    if isinstance(value, list | tuple):
        return [p for i, v in enumerate(value) for p in check_template(v, f"{where}[{i}]")]
    if isinstance(value, bool | int | float) or value is None:
        return []
    if not isinstance(value, str):
        return [f"{where}: must be a string, number, boolean, table or array, got {value!r}"]
    problems = []
    for name in _names(value):
        if name.startswith("env:"):
            var = name[4:]
            if not var:
                problems.append(f"{where}: {{env:}} needs a variable name, e.g. {{env:SEARCH_TOKEN}}")
            elif var not in os.environ:
                problems.append(f"{where}: environment variable {var} is not set")
        elif name not in PLACEHOLDERS:
            problems.append(f"{where}: unknown placeholder {{{name}}}; allowed: "
                            + ", ".join(f"{{{p}}}" for p in PLACEHOLDERS) + ", {env:NAME}")
    if "{" in _TOKEN.sub("", value) or "}" in _TOKEN.sub("", value):
        problems.append(f"{where}: unbalanced brace in {value!r} (write {{{{ or }}}} for a literal one)")
    return problems


def env_names(value: Any) -> list[str]:
    """Environment variables a template reads (their values are secrets to scrub)."""
    if isinstance(value, Mapping):
        return [n for v in value.values() for n in env_names(v)]
    if isinstance(value, list | tuple):
        return [n for v in value for n in env_names(v)]
    if not isinstance(value, str):
        return []
    return [n[4:] for n in _names(value) if n.startswith("env:")]


def question_values(question: Question, depth: int) -> dict[str, Any]:
    """The placeholder values of one question at one depth."""
    return {"question": question.question, "question_id": question.question_id,
            "game": question.game, "edition": question.edition,
            "language": question.language, "depth": depth}


def render(value: Any, values: Mapping[str, Any], *, masked: bool = False) -> Any:
    """``value`` with its placeholders filled (module docstring)."""
    if isinstance(value, Mapping):
        return {k: render(v, values, masked=masked) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [render(v, values, masked=masked) for v in value]
    if not isinstance(value, str):
        return value
    whole = _TOKEN.fullmatch(value)
    if whole and whole.group(1) in PLACEHOLDERS:
        return values[whole.group(1)]

    def fill(m: re.Match[str]) -> str:
        name = m.group(1)
        if name is None:
            return m.group(0)[0]
        if name.startswith("env:"):
            return m.group(0) if masked else os.environ.get(name[4:], "")
        got = values.get(name)
        return "" if got is None else str(got)

    return _TOKEN.sub(fill, value)


def secrets(templates: list[Any]) -> list[str]:
    """The values of every environment variable the templates read."""
    return [os.environ[n] for t in templates for n in env_names(t) if n in os.environ]
