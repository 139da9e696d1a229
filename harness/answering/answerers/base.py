"""The answerer interface and registry.

An answerer receives the question and the numbered passages of the answering
read and returns text with ``[n]`` citation markers, or an abstention. Every
answerer renders the same versioned prompt (``harness.answering.prompt``), so
that models are compared on identical input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

from harness.core.registry import Registry

OUTCOMES = ("answered", "abstained", "error")


@dataclass(frozen=True)
class Passage:
    """One passage the answerer reads; ``n`` is its 1-based citation marker."""

    n: int
    chunk_id: str
    doc_id: str
    page: int
    heading: str
    text: str
    title: str = ""


@dataclass(frozen=True)
class AnswerRequest:
    question_id: str
    question: str
    language: str
    passages: tuple[Passage, ...]


@dataclass(frozen=True)
class AnswerResponse:
    """What an answerer returned. ``outcome`` is answered, abstained or error;
    an error carries ``error`` and empty ``text``. Token counts are None when the
    server does not report them. ``read`` is set by an answerer that read its own
    passages (``production``): its ``[n]`` markers then resolve to those, not to the
    run's answering read."""

    text: str
    outcome: str
    model_id: str
    latency_ms: float
    tokens_in: int | None = None
    tokens_out: int | None = None
    error: str | None = None
    read: tuple[Passage, ...] | None = None


@runtime_checkable
class Answerer(Protocol):
    name: ClassVar[str]

    def answer(self, request: AnswerRequest) -> AnswerResponse: ...

    def describe(self) -> dict[str, Any]:
        """Model id, endpoint (without secrets), parameters: for the manifest."""
        ...


ANSWERERS: Registry[type] = Registry("answerer")
"""Optional answerer methods the runner uses when present: ``covers(request) -> bool``
(False: the answerer has nothing for this question and is not asked; no row is
written), ``preflight(timeout_s) -> str | None`` (:mod:`harness.answering.preflight`),
``close()``, and the class attribute ``max_concurrency``."""
