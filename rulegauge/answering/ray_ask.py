"""The ``ray`` engine's answering: each (question, config) is one call to a Ray actor.

Definition: :func:`ask_ray` starts one :class:`AnswererActor` per answerer (a threaded
actor holding its own answerer, built by ``make()`` on whichever node Ray places it, with
``max_concurrency = workers``) and keeps at most ``workers`` calls in flight: the suite's
``concurrency`` (else the run's ``workers``) bounds the calls each endpoint sees, as the
local thread pool does. Every answer comes back to the driver, which journals it the
moment it arrives (:mod:`rulegauge.answering.journal`), so a killed driver resumes asking
only what is missing, under either engine.

Failures: a call's exception is an ``error`` row (:func:`rulegauge.answering.fanout.call`),
as locally. An actor whose process dies (killed, out of memory, node lost) is restarted up
to :data:`MAX_RESTARTS` times and the calls it had in flight are retried up to
:data:`MAX_TASK_RETRIES` times; past that the run stops with a :class:`RulegaugeError` and
the journal keeps every answer received. The actor reserves no CPU
(:data:`ACTOR_CPUS`): an HTTP answerer waits on its endpoint.

Edge cases: no job -> no actor; with no session open a single-node one is started for the
call (:func:`rulegauge.core.cluster.ray_session`); KeyboardInterrupt cancels the calls in
flight and kills the actor.

Reference: Ray, "Actors" (``max_concurrency``, threaded actors) and "Fault tolerance:
actors" (``max_restarts``, ``max_task_retries``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from typing import Any

from rulegauge.answering.answerers.base import Answerer
from rulegauge.answering.calls import Job, OnDone, call
from rulegauge.answering.requests import AnswerRequest, AnswerResponse
from rulegauge.core.cluster import ray_session
from rulegauge.core.errors import RulegaugeError

MAX_RESTARTS = 3
"""Restarts of an answering actor whose process died."""
MAX_TASK_RETRIES = 3
"""Retries of a call whose actor died while making it."""
ACTOR_CPUS = 0
"""CPUs an answering actor reserves: none, it waits on its endpoint."""


class AnswererActor:
    """Holds one answerer on a Ray worker and answers one request per call."""

    def __init__(self, make: Callable[[], Answerer]) -> None:
        self.answerer = make()

    def ask(self, request: AnswerRequest) -> AnswerResponse:
        return call(self.answerer, request)

    def pid(self) -> int:
        return os.getpid()

    def close(self) -> None:
        close = getattr(self.answerer, "close", None)
        if callable(close):
            close()


def ask_ray(answerer: Answerer, make: Callable[[], Answerer], jobs: Sequence[Job],
            workers: int, on_done: OnDone) -> None:
    """Ask ``jobs`` through one Ray actor with at most ``workers`` calls in flight."""
    if not jobs:
        return
    with ray_session():
        import ray  # deferred: optional dependency

        actor: Any = ray.remote(AnswererActor).options(
            max_concurrency=workers, max_restarts=MAX_RESTARTS,
            max_task_retries=MAX_TASK_RETRIES, num_cpus=ACTOR_CPUS).remote(make)
        todo: Iterator[Job] = iter(jobs)
        inflight: dict[Any, Job] = {}
        try:
            for job in islice(todo, workers):
                inflight[actor.ask.remote(job[1])] = job
            while inflight:
                done, _ = ray.wait(list(inflight), num_returns=1)
                for ref in done:
                    config_id, request = inflight.pop(ref)
                    on_done(config_id, request, _result(ray, ref))
                    nxt = next(todo, None)
                    if nxt is not None:
                        inflight[actor.ask.remote(nxt[1])] = nxt
            ray.get(actor.close.remote())
        finally:
            for ref in inflight:
                ray.cancel(ref)
            ray.kill(actor)


def _result(ray: Any, ref: Any) -> AnswerResponse:
    try:
        resp: AnswerResponse = ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        raise RulegaugeError(str(exc.cause)) from None
    except ray.exceptions.RayError as exc:
        raise RulegaugeError(f"answering on the Ray cluster failed after {MAX_TASK_RETRIES} "
                           f"retries: {exc}") from None
    return resp
