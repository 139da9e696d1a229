"""The forked ordered map: input order, the same results as threads, a dead worker is an error."""

import logging
import os
import signal
import sys
import types

import numpy as np
import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.pipeline import forked
from rulegauge.pipeline.forked import forked_map
from rulegauge.pipeline.sweep import ordered_map

pytestmark = pytest.mark.skipif(forked.fork_hazard() is not None, reason="forking is not safe here")


def square_and_pid(x: int) -> tuple[int, int]:
    return x * x, os.getpid()


@pytest.mark.parametrize(("n", "workers"), [(1, 2), (7, 2), (100, 2), (33, 3)])
def test_results_come_back_in_input_order_from_other_processes(n, workers):
    got = list(forked_map(square_and_pid, list(range(n)), workers, ordered_map))
    assert [v for v, _ in got] == [x * x for x in range(n)]
    assert os.getpid() not in {pid for _, pid in got}  # computed in the workers
    assert forked._WORK is None  # nothing left for the next map


def test_the_workers_read_the_parent_state_without_pickling_it():
    big = np.arange(1_000_000)  # inherited by the fork, never sent
    lock_like = iter([1])  # not picklable: a closure over it still runs in the workers

    def fn(i: int) -> int:
        assert lock_like is not None
        return int(big[i])

    assert list(forked_map(fn, [3, 999_999, 0], 2, ordered_map)) == [3, 999_999, 0]


def test_a_dead_worker_is_an_error_not_a_partial_result():
    def fn(i: int) -> int:
        if i == 5:
            os.kill(os.getpid(), signal.SIGKILL)
        return i

    with pytest.raises(RulegaugeError, match="scoring worker process died"):
        list(forked_map(fn, list(range(20)), 2, ordered_map))
    assert forked._WORK is None


def test_an_error_in_a_worker_is_raised_in_the_caller():
    def fn(i: int) -> int:
        if i == 3:
            raise ValueError("bad config 3")
        return i

    with pytest.raises(ValueError, match="bad config 3"):
        list(forked_map(fn, list(range(10)), 2, ordered_map))


@pytest.mark.parametrize("why", ["no fork", "grpc"])
def test_where_forking_is_not_safe_the_map_runs_on_threads_and_says_so(monkeypatch, caplog, why):
    if why == "grpc":  # a Ray engine's client: gRPC's threads do not survive a fork
        monkeypatch.setitem(sys.modules, "grpc", types.ModuleType("grpc"))
    else:
        monkeypatch.setattr(forked.multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    with caplog.at_level(logging.INFO, logger="rulegauge.pipeline.forked"):
        got = list(forked_map(square_and_pid, list(range(5)), 2, ordered_map))
    assert got == [(x * x, os.getpid()) for x in range(5)]
    assert ("gRPC is loaded" if why == "grpc" else "fork is not available") in caplog.text


def test_a_map_started_while_another_runs_goes_on_threads(caplog):
    # inside a worker the first map holds the one-at-a-time lock: the inner map does not fork again
    def fn(i: int) -> int:
        return sum(v for v, _ in forked_map(square_and_pid, list(range(i)), 2, ordered_map))

    with caplog.at_level(logging.INFO, logger="rulegauge.pipeline.forked"):
        got = list(forked_map(fn, list(range(6)), 2, ordered_map))
    assert got == [sum(x * x for x in range(i)) for i in range(6)]
    assert forked._ONE.acquire(blocking=False)  # released after the map
    forked._ONE.release()
