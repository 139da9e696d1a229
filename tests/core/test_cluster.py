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

from rulegauge.core import cluster, extras
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
        cluster.end_orphans()
        assert not Path(f"/proc/{pid}").exists()  # killed and reaped
        assert watchdog.poll() is None  # the reaper's watchdog ("ray-" token) is left alone
    finally:
        watchdog.kill()
        watchdog.wait()


class _FakeNode:
    """What a failed ``Node.__init__`` leaves in its frame: processes behind Popen handles."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)",
                                      "site-packages/ray/core/src/ray/gcs/gcs_server"])
        self.killed = False

    def kill_all_processes(self, check_alive: bool, allow_graceful: bool, wait: bool) -> None:
        assert (check_alive, allow_graceful, wait) == (False, False, True)
        self.killed = True
        self.proc.kill()
        self.proc.wait()


def _failed_start(node: _FakeNode) -> Exception:
    def start(self: _FakeNode) -> None:  # `self`: what the frame holds
        raise Exception("The current node timed out during startup.")  # what Ray raises

    try:
        start(node)
    except Exception as exc:  # Ray raises a bare Exception
        return exc
    raise AssertionError("unreachable")


def test_a_failed_start_is_ended_through_its_handles_and_no_warning_follows() -> None:
    """Issue 43: the Ray tests errored at load and the next test failed on the leaked
    processes ("subprocess N is still running"): every node in the failure's frames is
    ended through its handles, and any Ray handle whose process is gone gets its status."""
    import gc
    import warnings

    node = _FakeNode()
    other = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(0)",
                              "site-packages/ray/core/src/ray/raylet/raylet"])
    os.waitpid(other.pid, 0)  # reaped behind its handle's back, as end_orphans does
    exc = _failed_start(node)
    proc = node.proc
    cluster.end_failed_start(exc)
    assert node.killed and proc.returncode is not None and other.returncode is not None
    del node
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        del proc, other
        gc.collect()


@pytest.mark.skipif(RAY_MISSING is not None, reason=str(RAY_MISSING))
def test_patient_start_waits_for_the_raylet_and_gives_up_when_it_died(monkeypatch) -> None:
    import ray._private.node as node_module
    import ray._private.services as services

    calls: list[float] = []

    def registers_late(*args: object) -> str:
        calls.append(time.monotonic())
        if len(calls) < 3:
            raise RuntimeError("node not found")
        return "node info"

    monkeypatch.setattr(services, "get_node", registers_late)
    monkeypatch.setattr(cluster, "_raylet_running", lambda: True)
    real_init = node_module.Node.__init__
    with cluster.patient_start(timeout_s=30):
        assert services.get_node("gcs", "node") == "node info" and len(calls) == 3
        assert node_module.Node.__init__ is not real_init  # agent ports chosen before a start
    assert services.get_node is registers_late and node_module.Node.__init__ is real_init
    calls.clear()
    monkeypatch.setattr(cluster, "_raylet_running", lambda: False)  # the raylet aborted
    with cluster.patient_start(timeout_s=30), pytest.raises(RuntimeError, match="node not found"):
        services.get_node("gcs", "node")
    assert len(calls) == 1


def test_free_ports_are_distinct_and_bindable() -> None:
    ports = cluster.free_ports(4)
    assert len(set(ports)) == 4
    for port in ports:
        with socket.socket() as s:
            s.bind(("", port))
