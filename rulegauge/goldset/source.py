"""Where gold-set problems are placed: the parsed file, its YAML nodes and field readers.

:class:`Source` collects problems (``file:line``, plus the question id) and notes;
:func:`child` and :func:`items` find the YAML node of a value, so a problem names the
line of the value itself; :func:`text_field` reads a required or optional string field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from rulegauge.core.errors import Problem

REF = re.compile(r"^(?P<doc>[^#\s]+)#(?P<page>[^#\s]+)$")
LANGUAGE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
DOC_ID = re.compile(r"^[^#\s]+$")


class Source:
    """The parsed file: display name, problem list and helpers to place problems."""

    def __init__(self, path: Path, *, allow_outside: bool = False) -> None:
        self.path = path
        self.allow_outside = allow_outside
        self.problems: list[Problem] = []
        self.notes: list[Problem] = []

    def where(self, node: yaml.Node | None, qid: str | None = None) -> str:
        where = str(self.path) if node is None else f"{self.path}:{node.start_mark.line + 1}"
        return where if qid is None else f"{where}: question {qid}"

    def add(self, node: yaml.Node | None, message: str, qid: str | None = None) -> None:
        self.problems.append(Problem(self.where(node, qid), message))

    def as_text(self, value: Any, node: yaml.Node, key: str, qid: str | None) -> Any:
        """A scalar YAML read as a number, date or boolean where text is expected
        (``edition: 3.22``, ``id: 12``) becomes its source text, with a note."""
        if isinstance(value, str) or value is None or not isinstance(node, yaml.ScalarNode):
            return value
        if isinstance(value, list | dict) or not node.value.strip():
            return value
        self.notes.append(Problem(self.where(node, qid), f"{key!r} read as text {node.value!r} "
                                  f"(YAML would read {type(value).__name__} {value!r}; quote it "
                                  "to silence this note)"))
        return node.value


def child(node: yaml.Node, key: str) -> yaml.Node:
    """The value node of ``key`` in a mapping node, or the node itself when absent."""
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if k.value == key and isinstance(v, yaml.Node):
                return v
    return node


def items(node: yaml.Node, n: int) -> list[yaml.Node]:
    return list(node.value) if isinstance(node, yaml.SequenceNode) else [node] * n


def text_field(raw: dict[str, Any], key: str, node: yaml.Node, src: Source, what: str,
          qid: str | None = None, *, required: bool = True) -> str | None:
    """A non-empty string field; records a problem when missing, empty or not a string.
    ``what`` prefixes the message unless the question id already says where it is."""
    value = raw.get(key)
    if key in raw:
        value = src.as_text(value, child(node, key), key, qid)
    prefix = "" if qid is not None else f"{what}: "
    if value is None:
        if required:
            src.add(node, f"{prefix}missing required field {key!r}", qid)
        return None
    if not isinstance(value, str) or not value.strip():
        src.add(child(node, key), f"{prefix}{key!r} must be a non-empty string, got {value!r}",
                qid)
        return None
    return value.strip()
