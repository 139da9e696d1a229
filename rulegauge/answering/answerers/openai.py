"""The ``openai`` answerer: any OpenAI-compatible chat-completions server
(vLLM, llama.cpp server, LM Studio, OpenAI itself).

``POST {base_url}/v1/chat/completions`` with ``{"model", "messages",
"temperature", "seed", "max_tokens"}``; the reply is
``choices[0].message.content``; tokens are ``usage.prompt_tokens`` and
``usage.completion_tokens`` (None when absent). The base URL comes from the
``base_url`` parameter, else ``OPENAI_BASE_URL``; a base URL that already ends in
``/v1`` (the OpenAI SDK convention) is not given a second one. An API key, if
any, is read from ``OPENAI_API_KEY`` (or the variable named by ``api_key_env``),
sent as a bearer token and never recorded by :meth:`OpenAIAnswerer.describe`.

Reference: OpenAI API reference, "Create chat completion"
(https://platform.openai.com/docs/api-reference/chat/create).
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

from rulegauge.answering.answerers.base import ANSWERERS
from rulegauge.answering.answerers.http import (
    HttpAnswerer,
    MalformedReply,
    Reply,
    check_base_url,
    count,
)
from rulegauge.core.errors import ConfigError


@ANSWERERS.register("openai")
class OpenAIAnswerer(HttpAnswerer):
    """Answers through ``/v1/chat/completions`` of an OpenAI-compatible server."""

    name: ClassVar[str] = "openai"

    def __init__(self, *, model: str, base_url: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", temperature: float = 0.0,
                 max_tokens: int | None = 1024, seed: int = 0, timeout_s: float = 300.0,
                 retries: int = 2, backoff_s: float = 1.0, backoff_max_s: float = 30.0) -> None:
        raw = base_url or os.environ.get("OPENAI_BASE_URL")
        if not raw:
            raise ConfigError("openai: no server given; set the base_url parameter or "
                              "OPENAI_BASE_URL, e.g. http://127.0.0.1:8080")
        base = check_base_url(raw, "openai base_url" if base_url else "environment OPENAI_BASE_URL")
        self.base_url = base
        self.temperature = float(temperature)
        self.max_tokens = max_tokens
        self.api_key_env = api_key_env
        key = os.environ.get(api_key_env, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._headers = headers
        self._v1 = base if base.endswith("/v1") else base + "/v1"
        path = "/chat/completions" if base.endswith("/v1") else "/v1/chat/completions"
        super().__init__(model=model, url=base + path, timeout_s=timeout_s, retries=retries,
                         backoff_s=backoff_s, backoff_max_s=backoff_max_s, seed=seed,
                         headers=headers)
        self._has_key = bool(key)

    def payload(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "stream": False,
                                "temperature": self.temperature, "seed": self.seed}
        if self.max_tokens is not None:
            body["max_tokens"] = int(self.max_tokens)
        return body

    def parse(self, body: Any) -> Reply:
        if not isinstance(body, dict):
            raise MalformedReply(f"expected a JSON object, got {type(body).__name__}")
        if "error" in body:
            raise MalformedReply(f"server error: {body['error']}")
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise MalformedReply("no choices[0] in the body")
        message = choices[0].get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if content is None and isinstance(message, dict):
            content = ""  # reasoning-only replies carry no content: reported as empty
        if not isinstance(content, str):
            raise MalformedReply("choices[0].message.content is not a string")
        raw_usage = body.get("usage")
        usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
        return Reply(content, count(usage.get("prompt_tokens")),
                     count(usage.get("completion_tokens")))

    def preflight(self, timeout_s: float) -> str | None:
        """Model on ``/v1/models`` and a tiny chat answered (:mod:`rulegauge.answering.preflight`)."""
        from rulegauge.answering.preflight import TINY_MESSAGES, probe

        body = {**self.payload(list(TINY_MESSAGES)), "max_tokens": 8}
        return probe(models_url=f"{self._v1}/models", model=self.model,
                     list_models=lambda b: [str(m["id"]) for m in b["data"]],
                     chat_url=f"{self._v1}/chat/completions", chat_body=body,
                     read_reply=self.parse, headers=self._headers, timeout_s=timeout_s)

    def describe(self) -> dict[str, Any]:
        return {"answerer": self.name, "model_id": self.model, "temperature": self.temperature,
                "max_tokens": self.max_tokens, "api_key_env": self.api_key_env,
                "api_key_set": self._has_key, **self.describe_http()}
