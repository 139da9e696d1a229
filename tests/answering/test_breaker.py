"""The circuit breaker (stop asking an endpoint that is gone) and --skip-unreachable."""

from __future__ import annotations

import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest

from rulegauge.answering.breaker import Breaker, BreakerAnswerer, is_connection_failure
from rulegauge.answering.requests import AnswerResponse
from rulegauge.answering.runner import answer_run
from rulegauge.core.errors import ValidationError
from rulegauge.pipeline.retrieval import RunOptions, run
from tests.helpers.common import LEXICAL, REPO

REFUSED = "CallError: ConnectionRefusedError: [Errno 111] Connection refused"


def test_breaker_opens_after_n_consecutive_connection_failures_and_resets() -> None:
    b = Breaker("x", after=3)
    for err in (REFUSED, REFUSED, None, REFUSED, "malformed reply: no choices", REFUSED, REFUSED):
        b.record(err)  # a success or another kind of error resets the count
        assert not b.opened
    b.record(REFUSED)
    assert b.opened and b.skip() and b.skipped == 1 and "3 consecutive" in b.message
    never = Breaker("y", after=0)
    for _ in range(50):
        never.record(REFUSED)
    assert not never.opened and not never.skip()
    with pytest.raises(ValueError):
        Breaker("z", after=-1)


class _Slow:
    """An answerer whose every call takes 50 ms and fails (``error``) or succeeds."""

    def __init__(self, error: str | None) -> None:
        self.error, self.calls, self.most, self._now = error, 0, 0, 0
        self._lock = threading.Lock()

    def describe(self) -> dict[str, str]:
        return {"model_id": "m"}

    def answer(self, request: object) -> AnswerResponse:
        with self._lock:
            self.calls += 1
            self._now += 1
            self.most = max(self.most, self._now)
        time.sleep(0.05)
        with self._lock:
            self._now -= 1
        outcome = "error" if self.error else "answered"
        return AnswerResponse("x", outcome, "m", 50.0, error=self.error)


@pytest.mark.faults  # a fault-tier row: a dead endpoint under concurrency
def test_concurrent_calls_of_a_dead_endpoint_stop_at_exactly_after() -> None:
    dead = _Slow(REFUSED)
    guarded = BreakerAnswerer(dead, Breaker("dead", after=4))
    with ThreadPoolExecutor(max_workers=3) as pool:
        out = list(pool.map(guarded.answer, range(40)))
    assert dead.calls == 4 and sum("circuit opened" in (r.error or "") for r in out) == 36
    healthy = _Slow(None)  # no failure: nothing waits, every call runs 8 at a time
    guarded = BreakerAnswerer(healthy, Breaker("ok", after=2))
    with ThreadPoolExecutor(max_workers=8) as pool:
        assert all(r.outcome == "answered" for r in pool.map(guarded.answer, range(32)))
    assert healthy.calls == 32 and healthy.most > 2  # more than `after` at once: never held back


def test_connection_failures_are_told_from_other_errors() -> None:
    assert is_connection_failure(REFUSED)
    assert is_connection_failure("no complete reply within the total deadline of 3 s")
    assert not is_connection_failure("HTTP 400: bad request") and not is_connection_failure(None)


def _closed_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


@pytest.fixture
def lexical_run(tmp_path: Path) -> Path:
    return run(RunOptions(goldset=REPO / "goldsets" / "sample.yaml", config=LEXICAL,
                          runs_dir=tmp_path / "runs", run_id="r")).path


DEAD = ("dead=openai", {"model": "m", "base_url": "", "retries": 0, "timeout_s": 2.0})


def _dead() -> tuple[str, dict[str, object]]:
    return DEAD[0], {**DEAD[1], "base_url": _closed_url()}


def test_a_dead_endpoint_is_asked_n_times_then_skipped(lexical_run: Path) -> None:
    s = answer_run(lexical_run, [_dead()], preflight=False, breaker_after=4, max_error_rate=1.0)
    answers = pd.read_parquet(lexical_run / "answers.parquet")
    dead = answers[answers["answerer"] == "dead"]
    assert (dead["outcome"] == "error").all() and len(dead) == dict(s.answers)["dead"] > 4
    skipped = dead["error"].str.contains("the circuit opened after 4 consecutive")
    assert (~skipped).sum() == 4 and skipped.sum() == len(dead) - 4


def test_skip_unreachable_answers_with_the_rest(lexical_run: Path, caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(ValidationError, match="answerer dead"):
        answer_run(lexical_run, [("extractive", {}), _dead()])
    with pytest.raises(ValidationError, match="every answerer is unreachable"):
        answer_run(lexical_run, [_dead()], skip_unreachable=True)
    s = answer_run(lexical_run, [("extractive", {}), _dead()], skip_unreachable=True)
    assert s.answerers == ("extractive",) and dict(s.errors)["extractive"] == 0
    assert any("skipped (--skip-unreachable): answerer dead" in r.getMessage() for r in caplog.records)
    answers = pd.read_parquet(lexical_run / "answers.parquet")
    assert set(answers["answerer"]) == {"extractive"}
