"""The Ray cluster connection: addresses, the reachability check, exit 2 on a dead
address in a fresh process (quickly, nothing written), the missing-extra message."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rulegauge.core import cluster, extras, ray_start
from rulegauge.core.cluster import ClusterError, check_ray_target, check_reachable, require_ray, split_address
from tests.helpers.answering import write_run
from tests.helpers.ray_cluster import RAY_MISSING


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(("address", "expected"), [
    ("10.0.0.5:6379", ("10.0.0.5", 6379)),
    ("ray://head.example:10001", ("head.example", 10001)),
    ("ray://head.example", ("head.example", 10001)),
    ("[::1]:6379", ("::1", 6379)),
])
def test_split_address(address: str, expected: tuple[str, int]) -> None:
    assert split_address(address) == expected


@pytest.mark.parametrize("address", ["head", "head:port", ":6379", "head:70000", ""])
def test_malformed_address_is_refused_naming_it(address: str) -> None:
    with pytest.raises(ClusterError, match=f"--address {address!r}: expected HOST:PORT"):
        split_address(address)


def test_unreachable_address_fails_fast_naming_it() -> None:
    port = _closed_port()
    start = time.monotonic()
    with pytest.raises(ClusterError, match=f"cannot reach a Ray cluster at 127.0.0.1:{port} "):
        check_reachable(f"127.0.0.1:{port}")
    assert time.monotonic() - start < cluster.CONNECT_TIMEOUT_S + 1


def test_a_loopback_address_ray_would_replace_is_checked_where_ray_connects() -> None:
    with socket.socket() as listener:  # a head bound to loopback only
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = int(listener.getsockname()[1])
        check_reachable(f"127.0.0.1:{port}")
        with pytest.raises(ClusterError, match=rf"--address 127\.0\.0\.1:{port}: Ray connects to "
                           rf"127\.0\.0\.2:{port} instead .* give --address 127\.0\.0\.2:{port}"):
            check_ray_target(f"127.0.0.1:{port}", "127.0.0.2")
        check_ray_target(f"127.0.0.1:{port}", "127.0.0.1")  # Ray keeps it: nothing to check
        check_ray_target(f"10.0.0.5:{port}", "127.0.0.2")  # not loopback: Ray keeps it
        check_ray_target("auto", "127.0.0.2")


def test_missing_ray_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extras.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ClusterError, match=r"--engine ray needs the \[ray\] extra \(ray is not installed\): "
                                           r"pip install 'rulegauge\[ray\]'"):
        require_ray()


def _rulegauge(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "250"}
    return subprocess.run([str(Path(sys.executable).parent / "rulegauge"), *args], capture_output=True,
                          text=True, timeout=120, check=False, cwd=cwd, env=env)


@pytest.mark.skipif(RAY_MISSING is not None, reason=str(RAY_MISSING))
@pytest.mark.parametrize("command", ["run", "answer"])
def test_cli_exits_2_on_an_unreachable_address_in_a_fresh_process(tmp_path: Path,
                                                                   command: str) -> None:
    address = f"127.0.0.1:{_closed_port()}"
    if command == "run":
        args = ["run", "-o", str(tmp_path / "runs"), "--engine", "ray", "--address", address]
    else:
        run = write_run(tmp_path / "runs" / "r")
        args = ["answer", str(run), "-a", "extractive", "--engine", "ray", "--address", address]
    before = sorted(p.name for p in tmp_path.rglob("*"))
    start = time.monotonic()
    out = _rulegauge(*args, cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert f"cannot reach a Ray cluster at {address}" in out.stderr
    assert "Traceback" not in out.stderr
    assert time.monotonic() - start < 60  # the connect timeout, not Ray's minute-long retries
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing written


def test_orphans_of_a_failed_start_are_ended_without_a_warning() -> None:
    """A failed one-node start leaves Ray's processes (children of this one) running."""
    class Node:  # what ray.init dropped: its Popen objects, freed only by the collector
        pass

    node = Node()
    node.cycle = node
    node.raylet = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                                    "site-packages/ray/core/src/ray/raylet/raylet"])
    pid = node.raylet.pid
    del node
    watchdog = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                                 "-m", "rulegauge.core.reaper", "ray-1-ab", "1", "1"])
    try:
        ray_start.end_orphans()
        assert not Path(f"/proc/{pid}").exists()  # killed and reaped
        assert watchdog.poll() is None  # the reaper's watchdog ("ray-" token) is left alone
    finally:
        watchdog.kill()
        watchdog.wait()

