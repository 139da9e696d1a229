"""The ray engine's answering against a local HTTP chat server: tables equal to the local
engine's, a worker killed mid-call retried, and a driver killed mid-run resumed (by the
other engine) asking only what the journal lacks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from rulegauge.answering.journal import JOURNAL_DIR, Journal
from rulegauge.answering.runner import answer_run
from rulegauge.core.engines import EngineChoice
from tests.helpers.answering import QUESTIONS, write_run
from tests.helpers.chat_server import chat_server, delay
from tests.helpers.common import REPO
from tests.helpers.ray_cluster import RAY_MISSING, WORK_START_S, local_cluster, pids_titled, wait_for
from tests.helpers.tables import table_differences

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(RAY_MISSING is not None, reason=str(RAY_MISSING))]
CONFIGS = ["rrf-3", "arm-bm25"]
CALLS = len(QUESTIONS) * len(CONFIGS)

RULEGAUGE = str(Path(sys.executable).parent / "rulegauge")


def _driver(run: Path, url: str) -> list[str]:
    """`rulegauge answer` through Ray in a fresh process, one call at a time."""
    return [RULEGAUGE, "answer", str(run), "-a", "ollama", "-p", "ollama.model=stub",
            "-p", f"ollama.base_url={url}", "-c", "rrf-3", "-c", "arm-bm25", "--workers", "1",
            "--no-preflight", "--engine", "ray"]


@pytest.fixture(scope="module")
def cluster():
    with local_cluster():
        yield


def _ollama(url: str) -> list[tuple[str, dict[str, str]]]:
    return [("ollama", {"model": "stub", "base_url": url})]


def _posts(server) -> int:
    return sum(1 for r in server.requests if r.path == "/api/chat")


def _settled_posts(server, quiet_s: float = 3.0, limit_s: float = 60.0) -> int:
    """The post count once it has not changed for ``quiet_s`` (at most ``limit_s``)."""
    import time

    end = time.monotonic() + limit_s
    last, since = _posts(server), time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.2)
        now = _posts(server)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            break
    return last


def test_ray_answers_equal_local_answers(cluster, tmp_path: Path) -> None:
    runs = {}
    for engine in ("ray", "local"):
        runs[engine] = write_run(tmp_path / engine)
        with chat_server() as srv:
            s = answer_run(runs[engine], _ollama(srv.base_url), configs=CONFIGS, max_workers=3,
                           preflight=False, engine=EngineChoice(engine))
            assert dict(s.asked) == {"ollama": CALLS} and _posts(srv) == CALLS
    assert table_differences(runs["ray"], runs["local"]) == []


def test_a_worker_killed_mid_call_is_retried(cluster, tmp_path: Path) -> None:
    run = write_run(tmp_path / "r")
    with chat_server([delay(WORK_START_S + 60)]) as srv:  # the first call hangs until its worker is killed
        worker = threading.Thread(target=answer_run, args=(run, _ollama(srv.base_url)),
                                  kwargs={"configs": CONFIGS, "max_workers": 1,
                                          "preflight": False, "engine": EngineChoice("ray")})
        worker.start()
        wait_for(lambda: _posts(srv) == 1, WORK_START_S, "the first call to reach the server")
        victims = pids_titled("ray::AnswererActor")
        assert len(victims) == 1
        os.kill(victims[0], signal.SIGKILL)
        worker.join(timeout=2 * WORK_START_S)
        assert not worker.is_alive()
        assert _posts(srv) == CALLS + 1  # the killed call was made again, by a new worker
    journal = Journal(run / JOURNAL_DIR / "ollama.jsonl").load()
    assert len(journal) == CALLS and {r["outcome"] for r in journal.values()} == {"answered"}


def test_a_killed_driver_resumes_asking_only_what_is_missing(cluster, tmp_path: Path) -> None:
    run = write_run(tmp_path / "r")
    journal = run / JOURNAL_DIR / "ollama.jsonl"
    ray_tmp = tempfile.mkdtemp(prefix="rk", dir="/tmp")  # short: Ray's socket paths
    env = {**os.environ, "RAY_TMPDIR": ray_tmp, "PYTHONPATH": str(REPO)}
    with chat_server([delay(1.0)] * CALLS) as srv:
        log = (tmp_path / "driver.log").open("wb")
        driver = subprocess.Popen(_driver(run, srv.base_url), env=env, cwd=tmp_path,
                                  stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_for(lambda: (journal.exists() and len(journal.read_bytes().splitlines()) >= 2)
                     or driver.poll() is not None, 2 * WORK_START_S, "two answers in the journal")
            assert driver.poll() is None, (tmp_path / "driver.log").read_text(errors="replace")
            os.kill(driver.pid, signal.SIGKILL)
            driver.wait(timeout=30)
        finally:
            if driver.poll() is None:
                driver.kill()
            log.close()
            for pid in pids_titled(ray_tmp):  # the killed driver's own Ray processes
                os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not pids_titled(ray_tmp), 30, "the killed driver's Ray processes to end")
        # a call the killed workers sent just before the kill may reach the server a moment later
        # on a loaded machine: count the posts once they have stopped changing
        asked_before = _settled_posts(srv)
        before = Journal(journal).load()
        assert 2 <= len(before) < CALLS
        s = answer_run(run, _ollama(srv.base_url), configs=CONFIGS, preflight=False,
                       engine=EngineChoice("local"))
        assert dict(s.asked) == {"ollama": CALLS - len(before)}
        assert dict(s.reused) == {"ollama": len(before)}
        assert _posts(srv) - asked_before == CALLS - len(before)
    wait_for(lambda: not pids_titled(ray_tmp), 30, "the killed driver's Ray processes to end")
