"""What an answerer is asked and what it returns: passages, requests, responses.

The records every part of answering shares (the prompt renders a request, the
answerers answer it, the journal and tables record the response), kept below the
answerers so that arrows point one way: ``answerers/`` import this module and the
prompt and HTTP helpers, never the reverse.
"""

from __future__ import annotations

from dataclasses import dataclass

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
