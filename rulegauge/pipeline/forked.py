"""An ordered map over forked worker processes, for pure work whose results are small.

The scoring pass (:func:`rulegauge.pipeline.sweep.config_pass`) is NumPy work on arrays of a
few MB per config, split into many calls: on threads the calls' Python parts take turns
on the interpreter lock, so two threads do about 1.1-1.5x the work of one; two processes
do about 2x (benchmarks/README.md). Forked processes inherit the inputs (the dense planes,
the gold facts, the per-config function), so nothing but the task bounds goes out and
only the results come back, pickled: use it where results are small (a config's metric
values; not its fused rows: at 10,000 questions, pickling every config's 200,000 rows
back made the library benchmark's scoring stage 20% slower than threads).

``fn`` must be pure: a worker's memo or any state it changes stays in that worker.
Tasks are contiguous chunks of the items (neighbouring configs share per-arm work kept
in :meth:`rulegauge.fusion.planes.Planes.memo`), results are yielded in input order, at
most ``2 * workers`` chunks in flight. Where forking is not safe (:func:`fork_hazard`) the
map runs on threads and says so in the log. A worker that dies (killed, out of memory) raises a
:class:`~rulegauge.core.errors.RulegaugeError`, never a partial result.
"""

from __future__ import annotations

import logging
import multiprocessing
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from rulegauge.core.errors import RulegaugeError

T = TypeVar("T")
X = TypeVar("X")

log = logging.getLogger(__name__)

CHUNKS_PER_WORKER = 16
"""Chunks per worker: small enough to balance the load, large enough that each chunk's
round trip (a pickled list of results) is a small part of its work."""

_ONE = threading.Lock()
"""Held while a forked map runs (one at a time per process)."""

_WORK: tuple[Callable[[Any], Any], Sequence[Any]] | None = None
"""(fn, items) of the map being run: set in the parent just before the workers fork, read
by them (inherited, never pickled)."""


def fork_hazard() -> str | None:
    """Why this process should not fork workers now (None: it may): no ``fork`` start
    method, or gRPC loaded (Ray's client and others: gRPC's threads do not survive a
    fork, https://github.com/grpc/grpc/blob/master/doc/fork_support.md)."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return "fork is not available here"
    if "grpc" in sys.modules:
        return "gRPC is loaded (a Ray engine), and its threads do not survive a fork"
    return None


def _chunk(lo: int, hi: int) -> list[Any]:
    assert _WORK is not None, "a forked scoring worker without its work"
    fn, items = _WORK
    return [fn(items[i]) for i in range(lo, hi)]


def forked_map(fn: Callable[[X], T], items: Sequence[X], workers: int,
               threads: Callable[[Callable[[X], T], Sequence[X], int], Iterator[T]]) -> Iterator[T]:
    """``fn`` over ``items`` on ``workers`` forked processes, results in input order
    (module docstring); ``threads(fn, items, workers)`` is the map used where forking is not
    safe, and for a map started while another runs in this process (one at a time: the
    workers read their work from this module)."""
    hazard = fork_hazard()
    if hazard is None and not _ONE.acquire(blocking=False):
        hazard = "another forked map is running in this process"
    if hazard is not None:
        log.info("%s: scoring %d items on %d threads", hazard, len(items), workers)
        yield from threads(fn, items, workers)
        return
    try:
        yield from _forked(fn, items, workers)
    finally:
        _ONE.release()


def _forked(fn: Callable[[X], T], items: Sequence[X], workers: int) -> Iterator[T]:
    global _WORK
    size = max(1, -(-len(items) // (workers * CHUNKS_PER_WORKER)))
    bounds = [(lo, min(lo + size, len(items))) for lo in range(0, len(items), size)]
    _WORK = (fn, items)
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork")) as pool:
            window: deque[Future[list[T]]] = deque()
            try:
                for lo, hi in bounds:
                    window.append(pool.submit(_chunk, lo, hi))
                    if len(window) >= 2 * workers:
                        yield from window.popleft().result()
                while window:
                    yield from window.popleft().result()
            except BrokenProcessPool as exc:
                raise RulegaugeError(f"a scoring worker process died ({exc}); nothing of this pass is kept: "
                                   "run again, or with less memory in use") from None
            finally:
                for f in window:
                    f.cancel()
    finally:
        _WORK = None
