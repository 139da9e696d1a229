"""Where an answerer's calls are made, per engine: a bounded thread pool or Ray actors.

Definition: :data:`ASKERS` maps an engine name (:data:`rulegauge.core.engines.ENGINES`) to an
:class:`Asker`: ``ask(answerer, make, jobs, workers, on_done)`` asks every
``(config_id, request)`` of ``jobs`` with at most ``workers`` calls in flight and calls
``on_done(config_id, request, response)`` in the caller's thread, one answer at a time, as
answers arrive (the runner journals each one there, so a killed run resumes asking only
what is missing, whichever engine asked first). ``answerer`` is the driver's instance;
``make`` a picklable, argument-free constructor of an equal one, for engines that ask
from elsewhere.

* ``local``: :func:`ask_local`, a ``ThreadPoolExecutor`` of ``workers`` threads over the
  driver's instance.
* ``ray``: :func:`rulegauge.answering.ray_ask.ask_ray` (imported only when used).

Every call goes through :func:`rulegauge.answering.calls.call`: an exception raised by an answerer becomes an
``error`` response (one failed call must not end a long run); an outcome outside
:data:`OUTCOMES` raises. KeyboardInterrupt cancels the calls not yet started.

Reference: Python ``concurrent.futures``; Ray, "Actors" (threaded actors, ``max_concurrency``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from itertools import islice

from rulegauge.answering.answerers.base import Answerer
from rulegauge.answering.calls import Asker, Job, OnDone, call
from rulegauge.answering.requests import AnswerResponse
from rulegauge.core.registry import Registry


def ask_local(answerer: Answerer, make: Callable[[], Answerer], jobs: Sequence[Job],
              workers: int, on_done: OnDone) -> None:
    """Ask ``jobs`` on a pool of ``workers`` threads over the driver's ``answerer``."""
    todo: Iterator[Job] = iter(jobs)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        inflight: dict[Future[AnswerResponse], Job] = {}
        try:
            for job in islice(todo, workers):
                inflight[pool.submit(call, answerer, job[1])] = job
            while inflight:
                done, _ = wait(inflight, return_when=FIRST_COMPLETED)
                for fut in done:
                    config_id, request = inflight.pop(fut)
                    on_done(config_id, request, fut.result())
                    nxt = next(todo, None)
                    if nxt is not None:
                        inflight[pool.submit(call, answerer, nxt[1])] = nxt
        except BaseException:
            for fut in inflight:
                fut.cancel()
            raise


def _ask_ray(answerer: Answerer, make: Callable[[], Answerer], jobs: Sequence[Job],
             workers: int, on_done: OnDone) -> None:
    from rulegauge.answering.ray_ask import ask_ray  # deferred: optional dependency

    ask_ray(answerer, make, jobs, workers, on_done)


ASKERS: Registry[Asker] = Registry("answering engine")
ASKERS.add("local", ask_local)
ASKERS.add("ray", _ask_ray)
