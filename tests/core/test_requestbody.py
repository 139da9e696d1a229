"""Request bodies of the local servers (rulegauge.core.requestbody): finite, shallow, typed."""

from __future__ import annotations

import re

import pytest

from rulegauge.core.requestbody import RequestError, number_field, parse_json_body, text_field


@pytest.mark.parametrize(("raw", "message"), [
    (b'{"a": 1e400}', "out of range"),
    (b'{"a": [NaN]}', "NaN is not a JSON number"),
    (b'{"a": -Infinity}', "-Infinity is not a JSON number"),
    (b'{"a": ' + b"[" * 33 + b"]" * 33 + b"}", "nested more than 32 deep"),
    (b"[" * 100_000, "nested more than 32 deep"),
    (b"\xff{}", "not UTF-8"),
    (b'"text"', "must be a JSON object"),
])
def test_parse_json_body_refuses(raw: bytes, message: str) -> None:
    with pytest.raises(RequestError, match=re.escape(message)):
        parse_json_body(raw)


def test_parse_json_body_keeps_what_is_fine() -> None:
    body = parse_json_body('{"a": [1, 2.5e300, -1e-300, "\u2028"], "b": {"c": null}}'.encode())
    assert body == {"a": [1, 2.5e300, -1e-300, "\u2028"], "b": {"c": None}}


def test_typed_fields() -> None:
    body = {"s": "x", "n": 3, "f": 2.5, "b": True, "big": 10**400, "none": None}
    assert text_field(body, "s") == "x" and text_field(body, "none", "d") == "d"
    assert number_field(body, "n") == 3.0 and number_field(body, "none") is None
    assert number_field(body, "f") == 2.5
    for name, kind in (("b", "true/false"), ("s", "text")):
        with pytest.raises(RequestError, match=f"must be a number, got {kind}"):
            number_field(body, name)
    with pytest.raises(RequestError, match="must be a finite number"):
        number_field(body, "big")
    with pytest.raises(RequestError, match="'n' must be text, got a number"):
        text_field(body, "n")
