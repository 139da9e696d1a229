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
  through :func:`redact_url`, header mappings and nested values redacted too;
* :func:`mask_url`: a URL as a record may show it: ``user:password@`` and the values
  of secret-named query keys become ``***``, the rest (path, other query keys) stays;
* :class:`Secrets`: the values one request carries (:meth:`Secrets.of_request`: the
  URL's user, password and ``user:password`` with its Basic form, secret-named query
  values, credential-bearing header values and the token after their scheme, each
  cookie's value, configured secrets such as environment values), removed from any
  text or JSON value a server sent back (an endpoint may echo them anywhere), always
  *before* a text is cut (:meth:`Secrets.excerpt`): a secret straddling a cut would
  otherwise survive in part.

Patterns never eat a line number: ``secret:12:`` (a file named ``secret`` at line 12)
is a place, not a credential, and an ``sk-``/``pk-``/``rk-`` word with no letter
(``pk-20241203``, a dated run id) is not a key.

Secrets given by environment variable are never stored: only the variable's name is.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlencode, urlsplit, urlunsplit

MASK = "***"
MIN_SECRET = 4
"""Shorter values are not scrubbed as secrets: they would mask ordinary words."""
SCRUB_WINDOW = 4096
"""Characters past a cut scrubbed with the text: a secret straddling the cut is found whole."""
_SECRET_KEY = re.compile(r"^(.*[_-])?(api[_-]?key|key|token|secret|password|passwd|"
                         r"authorization|proxy-authorization|cookie|credentials?|auth)$",
                         re.IGNORECASE)
_LINE = re.compile(r"\d+:?")


def _key_value(m: re.Match[str]) -> str:
    # ``secret:12:`` is line 12 of a file named ``secret``: a place, never a credential
    if m.group(2) == ":" and _LINE.fullmatch(m.group(3)):
        return m.group(0)
    return m.group(1) + m.group(2) + MASK


_PATTERNS: tuple[tuple[re.Pattern[str], Any], ...] = (
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/@:]*:[^\s/@]*@"), r"\1" + MASK + "@"),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}"), r"\1 " + MASK),
    # a key has a letter after its prefix: ``pk-20241203`` (a dated run id) is none
    (re.compile(r"\b(sk|pk|rk)-(?=[0-9_-]*[A-Za-z])[A-Za-z0-9_-]{8,}"), r"\1-" + MASK),
    (re.compile(r"(?i)\b(api[_-]?key|access[_-]?token|password|passwd|secret)"
                r"(\"?\s*[=:]\s*[\"']?)([^\s\"'&,;}]+)"), _key_value),
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


def mask_url(url: str) -> str:
    """``url`` as a record may show it (module docstring): user:password and the values
    of secret-named query keys masked; scheme, host, path and other query keys kept
    (they tell requests apart). A malformed URL goes through :func:`redact_text`."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_text(url)
    if not parts.scheme:
        return redact_text(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(is_secret_key(k) for k, _ in pairs):
            query = urlencode([(k, MASK if is_secret_key(k) else v) for k, v in pairs], safe="*{}")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _forms(value: str) -> set[str]:
    """The ways ``value`` may come back in a reply: as it is, URL-encoded, JSON-escaped."""
    out = {value, quote(value, safe=""), quote_plus(value), json.dumps(value)[1:-1],
           json.dumps(value, ensure_ascii=False)[1:-1]}
    return {f for f in out if len(f) >= MIN_SECRET}


def _header_secrets(name: str, value: str) -> list[str]:
    """A credential-bearing header's value, the token after its scheme (``Bearer X``), a
    Basic pair decoded with its password, and each cookie's value."""
    out = [value]
    scheme, _, token = value.strip().partition(" ")
    if token:
        out.append(token.strip())
        if scheme.lower() == "basic":
            try:
                pair = base64.b64decode(token.strip(), validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                pair = ""
            out += [pair, pair.partition(":")[2]] if pair else []
    if name.lower() in ("cookie", "set-cookie"):
        out += [c.partition("=")[2].strip() for c in value.split(";")]
    return out


@dataclass(frozen=True)
class Secrets:
    """Secret values to remove from what a server sent back (module docstring).

    Every value of at least :data:`MIN_SECRET` characters is kept with its URL-encoded
    and JSON-escaped forms, longest first, so a longer secret is masked before a
    shorter one inside it. ``Secrets()`` holds none (only the patterns apply).
    """

    values: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        forms: set[str] = set()
        for v in self.values:
            forms |= _forms(str(v))
        object.__setattr__(self, "values", tuple(sorted(forms, key=lambda f: (-len(f), f))))

    @classmethod
    def of_request(cls, url: str = "", headers: Mapping[str, str] | None = None,
                   extra: Iterable[str] = ()) -> Secrets:
        """The secrets one request carries (module docstring), plus ``extra``."""
        found = [str(x) for x in extra]
        try:
            parts = urlsplit(url)
            user, password = parts.username, parts.password
        except ValueError:
            parts, user, password = None, None, None
        if user is not None:
            pair = f"{unquote(user)}:{unquote(password or '')}"
            found += [user, unquote(user), pair, base64.b64encode(pair.encode()).decode("ascii")]
            found += [password, unquote(password)] if password else []
        if parts is not None and parts.query:
            found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True)
                      if is_secret_key(k)]
        for name, value in (headers or {}).items():
            if is_secret_key(str(name)):
                found += _header_secrets(str(name), str(value))
        return cls(tuple(found))

    def __add__(self, other: Secrets) -> Secrets:
        return Secrets(self.values + other.values)

    def scrub(self, text: str) -> str:
        """``text`` with every known secret replaced by :data:`MASK` (no patterns)."""
        for s in self.values:
            if s in text:
                text = text.replace(s, MASK)
        return text

    def clean(self, text: str) -> str:
        """``text`` with every known secret and every pattern of :func:`redact_text` masked."""
        return redact_text(self.scrub(text))

    def excerpt(self, text: str | bytes, n: int) -> str:
        """The first ``n`` characters of ``text`` (bytes decoded as UTF-8, errors replaced),
        cleaned *before* the cut (:meth:`clean`)."""
        if isinstance(text, bytes):
            text = text[:4 * n + SCRUB_WINDOW].decode("utf-8", errors="replace")
        return self.clean(text[:n + SCRUB_WINDOW])[:n]

    def value(self, obj: Any) -> Any:
        """A JSON value with every string in it (keys too) scrubbed of the known secrets."""
        if isinstance(obj, str):
            return self.scrub(obj)
        if isinstance(obj, Mapping):
            return {self.scrub(str(k)): self.value(v) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return [self.value(v) for v in obj]
        return obj
