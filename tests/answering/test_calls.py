"""rulegauge.answering.calls: one call; an exception is an error row, an unknown outcome raises."""

from __future__ import annotations

from typing import Any

import pytest

from rulegauge.answering.calls import call
from rulegauge.answering.requests import AnswerRequest, AnswerResponse
from rulegauge.core.errors import RulegaugeError

REQ = AnswerRequest("q1", "How far may a boat move?", "en", ())


class Scripted:
    """Answers with ``outcome``, or raises when it is an exception."""

    def __init__(self, outcome: str | Exception) -> None:
        self.outcome = outcome

    def answer(self, request: AnswerRequest) -> AnswerResponse:
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return AnswerResponse("Three spaces [1].", self.outcome, "m", 1.0)

    def describe(self) -> dict[str, Any]:
        return {"model_id": "m"}


def test_an_answer_passes_through_unchanged() -> None:
    resp = call(Scripted("answered"), REQ)  # type: ignore[arg-type]
    assert (resp.text, resp.outcome, resp.latency_ms) == ("Three spaces [1].", "answered", 1.0)


def test_an_exception_becomes_an_error_row_with_its_latency() -> None:
    resp = call(Scripted(TimeoutError("slow server")), REQ)  # type: ignore[arg-type]
    assert (resp.outcome, resp.error, resp.model_id) == ("error", "TimeoutError: slow server", "m")
    assert resp.latency_ms >= 0.0


def test_an_outcome_outside_the_list_raises() -> None:
    with pytest.raises(RulegaugeError, match="returned outcome 'maybe'"):
        call(Scripted("maybe"), REQ)  # type: ignore[arg-type]
