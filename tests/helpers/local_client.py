"""A client of :mod:`rulegauge.core.localserver` servers as their page is: it reads the
token from the page's ``<meta name="rulegauge-token">`` and posts JSON from the server's
own origin (``Origin``), or, given ``headers``, exactly what a hostile client sends."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import Any

from rulegauge.core.localserver import TOKEN_HEADER, TOKEN_META


def page_token(base: str) -> str:
    """The token the page at ``base + "/"`` carries."""
    with urllib.request.urlopen(base + "/", timeout=30) as r:
        html = r.read().decode("utf-8")
    found = re.search(f'<meta name="{TOKEN_META}" content="([0-9a-f]+)">', html)
    assert found, "the page carries no token"
    return found.group(1)


def call(url: str, body: bytes | None = None, headers: dict[str, str] | None = None,
         method: str | None = None) -> tuple[int, Any]:
    """(status, parsed JSON reply) of one request; an HTTP error status is returned too."""
    req = urllib.request.Request(url, data=body, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def post_as_page(base: str, path: str, body: dict[str, Any],
                 token: str | None = None) -> tuple[int, Any]:
    """POST ``body`` as JSON the way the page's script does (its origin and token)."""
    headers = {"Content-Type": "application/json", "Origin": base,
               TOKEN_HEADER: page_token(base) if token is None else token}
    return call(base + path, json.dumps(body).encode(), headers)
