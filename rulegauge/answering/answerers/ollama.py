"""The ``ollama`` answerer: Ollama's HTTP chat API.

``POST {base_url}/api/chat`` with ``{"model", "messages", "stream": false,
"options": {"num_ctx", "temperature", "seed"}, "think"}``; the reply is
``message.content``; tokens in and out are ``prompt_eval_count`` and
``eval_count`` (None when absent). The base URL comes from the ``base_url``
parameter, else the ``OLLAMA_HOST`` environment variable (a bare ``host:port``
gets ``http://``), else ``http://127.0.0.1:11434``.

Defaults follow the service's answering seat (``gemma4:26b``, ``think: false``,
``num_ctx`` 32768); temperature 0 and a fixed seed make replies repeatable where
the server honours them.

Reference: Ollama API, "Generate a chat completion"
(https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion).
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

DEFAULT_HOST = "http://127.0.0.1:11434"


@ANSWERERS.register("ollama")
class OllamaAnswerer(HttpAnswerer):
    """Answers through an Ollama server's ``/api/chat`` (non-streaming)."""

    name: ClassVar[str] = "ollama"

    def __init__(self, *, model: str = "gemma4:26b", base_url: str | None = None,
                 num_ctx: int = 32768, think: bool = False, temperature: float = 0.0,
                 seed: int = 0, timeout_s: float = 300.0, retries: int = 2,
                 backoff_s: float = 1.0, backoff_max_s: float = 30.0) -> None:
        if base_url:
            base = check_base_url(base_url, "ollama base_url")
        elif os.environ.get("OLLAMA_HOST"):
            base = check_base_url(os.environ["OLLAMA_HOST"], "environment OLLAMA_HOST")
        else:
            base = DEFAULT_HOST
        self.base_url = base
        self.num_ctx = int(num_ctx)
        self.think = bool(think)
        self.temperature = float(temperature)
        super().__init__(model=model, url=f"{base}/api/chat", timeout_s=timeout_s,
                         retries=retries, backoff_s=backoff_s, backoff_max_s=backoff_max_s,
                         seed=seed)

    def payload(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        return {"model": self.model, "messages": messages, "stream": False,
                "options": {"num_ctx": self.num_ctx, "temperature": self.temperature,
                            "seed": self.seed},
                "think": self.think}

    def parse(self, body: Any) -> Reply:
        if not isinstance(body, dict):
            raise MalformedReply(f"expected a JSON object, got {type(body).__name__}")
        if "error" in body:
            raise MalformedReply(f"server error: {body['error']}")
        message = body.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise MalformedReply("no message.content string in the body")
        return Reply(content, count(body.get("prompt_eval_count")), count(body.get("eval_count")))

    def preflight(self, timeout_s: float) -> str | None:
        """Model on ``/api/tags`` and a tiny chat answered (:mod:`rulegauge.answering.preflight`)."""
        from rulegauge.answering.preflight import TINY_MESSAGES, probe

        body = self.payload(list(TINY_MESSAGES))
        body["options"] = {**body["options"], "num_predict": 8}
        return probe(models_url=f"{self.base_url}/api/tags", model=self.model,
                     list_models=lambda b: [str(m["name"]) for m in b["models"]],
                     chat_url=f"{self.base_url}/api/chat", chat_body=body,
                     read_reply=self.parse, timeout_s=timeout_s)

    def describe(self) -> dict[str, Any]:
        return {"answerer": self.name, "model_id": self.model, "num_ctx": self.num_ctx,
                "think": self.think, "temperature": self.temperature, **self.describe_http()}
