"""One answerer call, and the job types every engine's asker shares.

:func:`call` asks once: an exception raised by an answerer becomes an ``error`` response
with its latency (one failed call must not end a long run); an outcome outside
:data:`rulegauge.answering.answerers.base.OUTCOMES` raises. A :data:`Job` is
``(config_id, request)``; an :class:`Asker` asks jobs and reports each answer through
:data:`OnDone` (see :mod:`rulegauge.answering.fanout`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol

from rulegauge.answering.answerers.base import Answerer
from rulegauge.answering.requests import OUTCOMES, AnswerRequest, AnswerResponse
from rulegauge.core.errors import RulegaugeError

Job = tuple[str, AnswerRequest]
"""(config_id, request): one call to make."""
OnDone = Callable[[str, AnswerRequest, AnswerResponse], None]


class Asker(Protocol):
    def __call__(self, answerer: Answerer, make: Callable[[], Answerer], jobs: Sequence[Job],
                 workers: int, on_done: OnDone) -> None: ...


def call(answerer: Answerer, request: AnswerRequest) -> AnswerResponse:
    """Ask once; an exception becomes an ``error`` response with its latency."""
    start = time.perf_counter()
    try:
        resp = answerer.answer(request)
    except Exception as exc:  # one failed call must not end a long run: it becomes a row
        model = str(answerer.describe().get("model_id", ""))
        return AnswerResponse("", "error", model, (time.perf_counter() - start) * 1000.0,
                              error=f"{type(exc).__name__}: {exc}")
    if resp.outcome not in OUTCOMES:
        raise RulegaugeError(f"answerer {type(answerer).__name__} returned outcome "
                           f"{resp.outcome!r}; expected one of {OUTCOMES}")
    return resp
