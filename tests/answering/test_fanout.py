"""Answering fan-out per engine: every engine has an asker; a failed call is a row; the
local asker never has more than `workers` calls in flight."""

from __future__ import annotations

import threading
import time
from typing import Any, ClassVar

from rulegauge.answering.calls import call
from rulegauge.answering.fanout import ASKERS, ask_local
from rulegauge.answering.requests import AnswerRequest, AnswerResponse
from rulegauge.core.engines import engines

REQ = AnswerRequest("q1", "How far may a boat move?", "en", ())


class Counting:
    """Sleeps a little per call and records the most calls ever in flight."""

    inflight: ClassVar[int] = 0
    peak: ClassVar[int] = 0
    lock: ClassVar[threading.Lock] = threading.Lock()

    def answer(self, request: AnswerRequest) -> AnswerResponse:
        with Counting.lock:
            Counting.inflight += 1
            Counting.peak = max(Counting.peak, Counting.inflight)
        time.sleep(0.02)
        with Counting.lock:
            Counting.inflight -= 1
        if request.question_id == "q-bad":
            raise RuntimeError("server said no")
        return AnswerResponse("Three spaces [1].", "answered", "m", 1.0)

    def describe(self) -> dict[str, Any]:
        return {"model_id": "m"}


def test_every_engine_has_an_asker() -> None:
    assert ASKERS.names() == engines().names()


def test_an_exception_is_an_error_row() -> None:
    resp = call(Counting(), AnswerRequest("q-bad", "?", "en", ()))
    assert (resp.outcome, resp.error, resp.model_id) == ("error", "RuntimeError: server said no", "m")


def test_local_asker_bounds_calls_in_flight_and_answers_every_job() -> None:
    jobs = [(f"c{i}", REQ) for i in range(12)]
    done: list[str] = []
    ask_local(Counting(), Counting, jobs, 3, lambda c, r, resp: done.append(c))
    assert sorted(done) == sorted(c for c, _ in jobs)
    assert 1 <= Counting.peak <= 3
