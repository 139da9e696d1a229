"""`rulegauge query` is bounded: statement timeout, memory limit, row cap (rulegauge.store.query)."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.store.query import query
from tests.helpers.analysis import write_synthetic_run


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    write_synthetic_run(tmp_path / "runs" / "good")
    return tmp_path / "runs"


def test_an_endless_query_stops_at_the_timeout(runs: Path) -> None:
    start = time.monotonic()
    with pytest.raises(RulegaugeError, match="ran longer than 1 s"):
        query("select count(*) from range(1000000000000)", runs, timeout_s=1)
    assert time.monotonic() - start < 30


def test_rows_are_capped_with_a_warning(runs: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        df = query("select * from range(100000)", runs, max_rows=10)
    assert len(df) == 10 and "showing the first 10" in caplog.text
    assert len(query("select * from range(5)", runs, max_rows=10)) == 5


def test_memory_is_limited_and_the_limit_locked(runs: Path, tmp_path: Path) -> None:
    with pytest.raises(RulegaugeError, match=r"query (stopped|failed)"):
        query("select count(*) from (select distinct range from range(30000000))", runs,
              memory_limit="30MB", timeout_s=60)
    with pytest.raises(RulegaugeError, match="query failed"):
        query("set memory_limit = '100GB'", runs)
    assert not list(tmp_path.glob("**/*.tmp")) and not (Path.cwd() / ".tmp").exists()


def test_bad_bounds_are_refused(runs: Path) -> None:
    for kw in ({"max_rows": 0}, {"timeout_s": -1.0}, {"memory_limit": "lots"}):
        with pytest.raises(RulegaugeError):
            query("select 1", runs, **kw)  # type: ignore[arg-type]
