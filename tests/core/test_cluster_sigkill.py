"""A ``rulegauge run --engine ray`` driver killed with SIGKILL while the one-node Ray it
started is answering: every process of that Ray instance (head processes, dashboard and
runtime-env agents, workers) ends within a bounded time, and the same command resumes the
run to the tables a local run writes. The one-node start ignores ``RAY_ADDRESS``."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from rulegauge.answering.journal import JOURNAL_DIR
from rulegauge.core.reaper import TAG_VAR
from tests.helpers.chat_server import chat_server, delay
from tests.helpers.common import LEXICAL, REPO
from tests.helpers.ray_cluster import RAY_MISSING, pids_titled, wait_for
from tests.helpers.tables import table_differences

pytestmark = [pytest.mark.slow, pytest.mark.faults,  # the fault tier's Ray rows (-m faults)
              pytest.mark.skipif(RAY_MISSING is not None, reason=str(RAY_MISSING)),
              pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")]

RULEGAUGE = str(Path(sys.executable).parent / "rulegauge")
START_S = 420
"""Ray's start plus the lexical run: 35-140 s at load 9-22 on the 2-core machine."""
GONE_S = 20
"""How long the killed cluster's processes may take to end (the watchdog needs ~1 s)."""


def _cluster_pids(ray_tmp: str) -> list[int]:
    """Processes of the Ray instance whose temp folder is ``ray_tmp``, found without the
    reaper's rules: the head processes name the folder in their command line; every process
    inherits ``RAY_TMPDIR``, but one that retitles itself (``ray::IDLE``) may have erased its
    environment's memory (Ray's agents did), so also any holding a file under the folder
    open (its log files)."""
    needle = f"RAY_TMPDIR={ray_tmp}".encode()
    found = set(pids_titled(ray_tmp))
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if needle in (proc / "environ").read_bytes().split(b"\0") or any(
                    os.readlink(fd).startswith(f"{ray_tmp}/") for fd in (proc / "fd").iterdir()):
                found.add(int(proc.name))
        except OSError:
            continue
    return sorted(found - {os.getpid()})


def _tagged(pids: list[int], prefix: str) -> list[int]:
    """Those of ``pids`` whose environment still shows a reaper tag starting ``prefix``."""
    needle = f"{TAG_VAR}={prefix}".encode()
    found = []
    for pid in pids:
        try:
            if any(e.startswith(needle) for e in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")):
                found.append(pid)
        except OSError:
            continue
    return found


def _describe(pids: list[int]) -> list[str]:
    """pid, parent, tag and command line of each process (for a failure's message)."""
    out = []
    for pid in pids:
        proc = Path(f"/proc/{pid}")
        try:
            parent = (proc / "stat").read_text().rpartition(")")[2].split()[1]
            env = (proc / "environ").read_bytes().split(b"\0")
            tag = next((e.decode() for e in env if e.startswith(TAG_VAR.encode())), "untagged")
            args = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            out.append(f"{pid} (parent {parent}, {tag}): {args[:120]}")
        except OSError:
            out.append(f"{pid}: gone")
    return out


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(url: str, out: Path, run_id: str, engine: str) -> list[str]:
    return [RULEGAUGE, "run", "-c", str(LEXICAL), "-o", str(out), "--run-id", run_id,
            "-a", "ollama", "-p", "ollama.model=stub", "-p", f"ollama.base_url={url}",
            "--engine", engine, "--quiet"]


def _journal_lines(run: Path) -> int:
    folder = run / JOURNAL_DIR
    return sum(len(p.read_bytes().splitlines()) for p in folder.glob("*.jsonl")) if folder.is_dir() else 0


def test_a_sigkilled_ray_driver_leaves_no_ray_process_and_resumes(tmp_path: Path) -> None:
    ray_tmp = tempfile.mkdtemp(prefix="rk", dir="/tmp")  # short: Ray's socket paths
    # RAY_ADDRESS names a dead cluster: without --address rulegauge starts its own anyway
    env = {**os.environ, "RAY_TMPDIR": ray_tmp, "PYTHONPATH": str(REPO),
           "RAY_ADDRESS": f"127.0.0.1:{_closed_port()}"}
    run = tmp_path / "runs" / "r"
    with chat_server([delay(2.0)] * 16) as srv:  # answering lasts while the test kills
        log = (tmp_path / "driver.log").open("wb")
        start = time.monotonic()
        driver = subprocess.Popen(_run(srv.base_url, tmp_path / "runs", "r", "ray"), env=env,
                                  cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_for(lambda: _journal_lines(run) >= 1 or driver.poll() is not None, START_S,
                     "the first answer in the journal")
            assert driver.poll() is None, (tmp_path / "driver.log").read_text(errors="replace")
            up_s = time.monotonic() - start
            alive = _cluster_pids(ray_tmp)
            assert len(alive) >= 6  # gcs, raylet, agents, the answering actor's worker...
            marked = _tagged(alive, f"ray-{driver.pid}-")
            os.kill(driver.pid, signal.SIGKILL)
            driver.wait(timeout=30)
            killed = time.monotonic()
            try:
                wait_for(lambda: not _cluster_pids(ray_tmp), GONE_S, "the killed driver's Ray "
                         f"processes to end (ran {up_s:.0f} s before the kill)")
            except AssertionError as exc:
                raise AssertionError(f"{exc}; left: {_describe(_cluster_pids(ray_tmp))}") from None
            print(f"{len(alive)} Ray processes ({len(marked)} tagged) ended "
                  f"{time.monotonic() - killed:.1f} s after the kill")
        finally:
            if driver.poll() is None:
                driver.kill()
                driver.wait()
            log.close()
            for pid in _cluster_pids(ray_tmp):  # only when the assertion above failed
                os.kill(pid, signal.SIGKILL)
        assert json.loads((run / "manifest.json").read_text(encoding="utf-8"))["status"] == "running"
        resumed = subprocess.run(_run(srv.base_url, tmp_path / "runs", "r", "ray"), env=env,
                                 cwd=tmp_path, capture_output=True, text=True, timeout=START_S,
                                 check=False)
        assert resumed.returncode == 0, resumed.stderr
        assert not _cluster_pids(ray_tmp)  # a run that ends normally leaves nothing either
        fresh = subprocess.run(_run(srv.base_url, tmp_path / "runs", "fresh", "local"), env=env,
                               cwd=tmp_path, capture_output=True, text=True, timeout=START_S,
                               check=False)
        assert fresh.returncode == 0, fresh.stderr
    shutil.rmtree(ray_tmp, ignore_errors=True)  # both sessions' logs
    assert json.loads((run / "manifest.json").read_text(encoding="utf-8"))["status"] == "complete"
    assert table_differences(run, tmp_path / "runs" / "fresh") == []
