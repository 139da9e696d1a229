"""Credentials out of everything rulegauge stores or prints.

One place for the rule: before a URL, a header, a parameter mapping or a piece of
text (an error body, an answer) goes into a manifest, a journal, a table, a report
or a message, it passes through here.

* :func:`redact_url`: a URL without ``user:password@``, query or fragment;
* :func:`redact_text`: in free text, ``user:password@`` of URLs becomes ``***@``,
  ``Bearer <token>`` / ``Basic <token>`` become ``Bearer ***``, OpenAI-style keys
  (``sk-...``), ``api_key=...``/``token=...``/``password: ...`` values become ``***``
  (applied to error messages and bodies, not to answer text: "place the token" is
  rules text);
* :func:`redact_params`: a parameter mapping with secret-named keys (``api_key``,
  ``token``, ``password``, ``secret``, ``authorization``...) set to ``***``, URLs
  through :func:`redact_url`, header mappings and nested values redacted too.

Secrets given by environment variable are never stored: only the variable's name is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

MASK = "***"
_SECRET_KEY = re.compile(r"^(.*[_-])?(api[_-]?key|key|token|secret|password|passwd|"
                         r"authorization|proxy-authorization|cookie|credentials?|auth)$",
                         re.IGNORECASE)
_PATTERNS = (
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/@:]*:[^\s/@]*@"), r"\1" + MASK + "@"),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}"), r"\1 " + MASK),
    (re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_-]{8,}"), r"\1-" + MASK),
    (re.compile(r"(?i)\b(api[_-]?key|access[_-]?token|password|passwd|secret)"
                r"(\"?\s*[=:]\s*[\"']?)[^\s\"'&,;}]+"), r"\1\2" + MASK),
    (re.compile(r"(?i)\b(token)=[^\s\"'&,;}]+"), r"\1=" + MASK),
)


def redact_url(url: str) -> str:
    """``url`` without user:password, query or fragment (safe for manifests)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.port is not None:
            host = f"{host}:{parts.port}"
    except ValueError:  # a malformed port or bracket: show nothing of it
        return redact_text(url)
    if not parts.scheme:
        return redact_text(url)
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def redact_text(text: str) -> str:
    """``text`` with the credentials of the module docstring masked."""
    for pattern, repl in _PATTERNS:
        text = pattern.sub(repl, text)
    return text


def is_secret_key(key: str) -> bool:
    """True when a parameter or header name says it holds a secret."""
    return bool(_SECRET_KEY.match(key))


def redact_value(key: str, value: Any) -> Any:
    """One parameter value as it may be stored (see :func:`redact_params`)."""
    if isinstance(value, Mapping):
        return redact_params(value)
    if isinstance(value, str):
        if is_secret_key(key):
            return MASK
        return redact_url(value) if "://" in value and key.lower().endswith("url") \
            else redact_text(value)
    if isinstance(value, (list, tuple)):
        return [redact_value(key, v) for v in value]
    return value


def redact_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` safe to store: secret-named keys masked, URLs and text redacted."""
    return {str(k): redact_value(str(k), v) for k, v in params.items()}
