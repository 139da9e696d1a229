"""Preflight: check every answerer's endpoint before a run asks anything.

An answerer that talks to a server has a ``preflight(timeout_s)`` method
returning None when ready, else a message; the others (extractive, replay,
production, llama-cpp: nothing to reach) are ready by construction.
:func:`probe` is the check the HTTP answerers share:

1. ``GET`` the server's model list (Ollama ``/api/tags``, OpenAI ``/v1/models``):
   unreachable, an HTTP error, or a body that is not a model list is a problem
   naming the endpoint; a model not on the list is a problem naming the models
   that are (an Ollama name without a tag means ``:latest``);
2. ``POST`` one tiny chat request ("Reply with the word OK.", a few tokens): it
   must come back 2xx with a reply the answerer can read.

Each call is bounded by ``timeout_s`` (default 20 s) as ONE deadline over connect,
headers and body, and its body by :data:`MAX_PREFLIGHT_BODY` (4 MiB; an endless model
list is cut off; bodies come uncompressed, so a gzip bomb is never inflated; a
10^5-deep JSON reply is "nested too deeply"): :func:`rulegauge.core.httpcall.request`.
A redirect elsewhere is reported as one. Nothing is retried: a preflight reports,
it does not wait for a server to come up.
:func:`preflight_all` checks every answerer and returns every problem, so
``rulegauge answer`` exits 2 naming each unreachable endpoint before any work.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from rulegauge.core.errors import Problem
from rulegauge.core.httpcall import (
    CallError,
    HttpReply,
    parse_json,
    redact_url,
    request,
    scrub,
    snippet,
    status_problem,
)
from rulegauge.core.redact import Secrets

DEFAULT_TIMEOUT_S = 20.0
TINY_MESSAGES = [{"role": "user", "content": "Reply with the single word OK."}]
MAX_PREFLIGHT_BODY = 4 * 1024 * 1024


def _same_model(wanted: str, listed: str) -> bool:
    def norm(x: str) -> str:
        return x if ":" in x else f"{x}:latest"

    return wanted == listed or norm(wanted) == norm(listed)


def probe(*, models_url: str, model: str, list_models: Callable[[Any], list[str]],
          chat_url: str, chat_body: dict[str, Any], read_reply: Callable[[Any], Any],
          headers: Mapping[str, str] | None = None,
          timeout_s: float = DEFAULT_TIMEOUT_S) -> str | None:
    """The two checks of the module docstring; None when both pass. A problem is
    cleaned of every secret the calls carry (URL credentials, header values) and of
    every credential pattern: a server may echo them in its error."""
    hdrs = dict(headers or {})
    problem = _probe(models_url, model, list_models, chat_url, chat_body, read_reply, hdrs,
                     timeout_s)
    carried = Secrets.of_request(models_url, hdrs, hdrs.values()) + Secrets.of_request(chat_url)
    return None if problem is None else carried.clean(problem)


def _probe(models_url: str, model: str, list_models: Callable[[Any], list[str]],
           chat_url: str, chat_body: dict[str, Any], read_reply: Callable[[Any], Any],
           hdrs: dict[str, str], timeout_s: float) -> str | None:
    where, chat_where = redact_url(models_url), redact_url(chat_url)

    def call(method: str, url: str, body: dict[str, Any] | None = None) -> HttpReply:
        data = None if body is None else json.dumps(body).encode("utf-8")
        extra = {} if body is None else {"content-type": "application/json"}
        return request(method, url, headers={**hdrs, **extra}, body=data, deadline_s=timeout_s,
                       max_body_bytes=MAX_PREFLIGHT_BODY)

    try:
        resp = call("GET", models_url)
        problem = status_problem(resp)
        if problem:
            return scrub(f"{where} answered {problem}", hdrs.values())
        try:
            names = list_models(parse_json(resp.body))
        except (ValueError, KeyError, TypeError, AttributeError):
            return f"{where} did not return a model list: {snippet(resp)!r}"
        if not any(_same_model(model, n) for n in names):
            return (f"model {model!r} is not on the server {where}; it has: "
                    f"{', '.join(names) or '(no model)'}")
        chat = call("POST", chat_url, chat_body)
        problem = status_problem(chat)
        if problem:
            return scrub(f"a one-line test request to {chat_where} failed: {problem}",
                         hdrs.values())
        try:
            read_reply(parse_json(chat.body))
        except Exception as exc:  # the answerer's own reader says what is missing
            return (f"a one-line test request to {chat_where} got an unreadable "
                    f"reply ({exc}): {snippet(chat)!r}")
    except CallError as exc:
        return scrub(f"cannot reach {where}: {exc}", hdrs.values())
    return None


def unreachable(answerers: Mapping[str, Any], timeout_s: float = DEFAULT_TIMEOUT_S) -> dict[str, str]:
    """label -> what its ``preflight`` found wrong, for every answerer whose check fails.
    Each check waits at most ``timeout_s``, or the answerer's own call deadline
    (``call_timeout_s``) when that is shorter: an answerer told to give up after 2 s is not
    probed for 20."""
    out = {}
    for label, answerer in answerers.items():
        check = getattr(answerer, "preflight", None)
        limit = min(timeout_s, float(getattr(answerer, "call_timeout_s", timeout_s)))
        message = check(limit) if callable(check) else None
        if message:
            out[label] = str(message)
    return out


def preflight_all(answerers: Mapping[str, Any], timeout_s: float = DEFAULT_TIMEOUT_S
                  ) -> list[Problem]:
    """Every problem of every answerer that has a ``preflight`` method, by label."""
    return [Problem(f"answerer {label} ({getattr(answerers[label], 'name', '?')})", message)
            for label, message in unreachable(answerers, timeout_s).items()]
