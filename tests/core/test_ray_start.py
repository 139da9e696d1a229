"""Starting Ray nodes on a loaded machine (rulegauge.core.ray_start): a failed start ended
through its handles with no warning later, the patient wait for the raylet, agent ports."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from rulegauge.core import ray_start
from rulegauge.core.localserver import free_ports
from tests.helpers.ray_cluster import RAY_MISSING


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
    ray_start.end_failed_start(exc)
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
    monkeypatch.setattr(ray_start, "_raylet_running", lambda: True)
    real_init = node_module.Node.__init__
    with ray_start.patient_start(timeout_s=30):
        assert services.get_node("gcs", "node") == "node info" and len(calls) == 3
        assert node_module.Node.__init__ is not real_init  # agent ports chosen before a start
    assert services.get_node is registers_late and node_module.Node.__init__ is real_init
    calls.clear()
    monkeypatch.setattr(ray_start, "_raylet_running", lambda: False)  # the raylet aborted
    with ray_start.patient_start(timeout_s=30), pytest.raises(RuntimeError, match="node not found"):
        services.get_node("gcs", "node")
    assert len(calls) == 1


def test_free_ports_are_distinct_and_bindable() -> None:
    ports = free_ports(4)
    assert len(set(ports)) == 4
    for port in ports:
        with socket.socket() as s:
            s.bind(("", port))


def test_ending_a_failed_start_touches_no_object_that_warns() -> None:
    """The scan for Ray handles reads each object's type, never ``__class__``: torch's deprecated
    ``torch.distributed.reduce_op`` warns when isinstance() reads it (a FutureWarning, an error
    under the suite's ``-W error``, which failed the Ray start test when torch was loaded)."""
    import warnings

    pytest.importorskip("torch.distributed")
    import torch.distributed  # noqa: F401  (the object that warns, loaded)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ray_start.end_failed_start(_failed_start(_FakeNode()))
