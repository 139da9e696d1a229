"""What a local server accepts in a request body: a JSON object, finite, shallow, typed.

:func:`parse_json_body` refuses (:class:`RequestError`, answered 400 by
:mod:`rulegauge.core.localserver`) a body that is not UTF-8, not JSON, holds ``NaN`` or
``Infinity`` (not JSON, RFC 8259 section 6, though Python's ``json`` reads them) or a
number that overflows to infinity (``1e400``: Python reads it as ``inf``), is nested
more than :data:`MAX_DEPTH` deep (checked without recursion, and a ``RecursionError`` of
the parser caught), holds an integer beyond Python's digit limit, or is not an object.
:func:`text_field` and :func:`number_field` read one field with its type checked, so an
application never stores ``"judge": 5`` as a name or ``1e999`` as seconds.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

MAX_DEPTH = 32


class RequestError(Exception):
    """A request refused with ``status`` and a message (answered as ``{"error": ...}``)."""

    def __init__(self, message: str, status: int = HTTPStatus.BAD_REQUEST) -> None:
        super().__init__(message)
        self.status = int(status)


def text_field(body: Mapping[str, Any], name: str, default: str | None = None) -> str:
    """``body[name]`` as text; absent or null gives ``default`` (when one is given)."""
    value = body.get(name)
    if value is None and default is not None:
        return default
    if not isinstance(value, str):
        raise RequestError(f"field {name!r} must be text, got {_kind(value)}")
    return value


def number_field(body: Mapping[str, Any], name: str) -> float | None:
    """``body[name]`` as a finite number, or None when absent or null."""
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RequestError(f"field {name!r} must be a number, got {_kind(value)}")
    try:
        number = float(value)
    except OverflowError:  # an integer beyond any float
        number = math.inf
    if not math.isfinite(number):
        raise RequestError(f"field {name!r} must be a finite number")
    return number


def _kind(value: Any) -> str:
    names = {bool: "true/false", int: "a number", float: "a number", str: "text", list: "a list",
             dict: "an object", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise RequestError(f"number {text[:40]} is out of range (it overflows to infinity)")
    return value


def _constant(text: str) -> Any:
    raise RequestError(f"{text} is not a JSON number; send a finite number")


def _check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise RequestError(f"JSON nested more than {limit} deep")
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)


def parse_json_body(raw: bytes) -> dict[str, Any]:
    """A request body as a JSON object, refusing (:class:`RequestError`) non-UTF-8,
    invalid or non-finite JSON, nesting beyond :data:`MAX_DEPTH`, and non-objects."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RequestError(f"body is not UTF-8 (byte {exc.start + 1})") from None
    try:
        value = json.loads(text, parse_float=_finite, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise RequestError(f"body is not JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise RequestError(f"JSON nested more than {MAX_DEPTH} deep") from None
    except ValueError as exc:  # an integer beyond int's digit limit
        raise RequestError(f"body is not usable JSON: {str(exc)[:120]}") from None
    _check_depth(value)
    if not isinstance(value, dict):
        raise RequestError("body must be a JSON object")
    return value
