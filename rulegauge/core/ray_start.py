"""Starting Ray nodes here so that the start holds on a loaded machine, and ending a failed start whole.

Definition: :func:`patient_start` wraps the start of nodes on this machine (``ray.init``
without an address, a test's ``ray.cluster_utils.Cluster``): the agents' ports are chosen up
front and the port file the raylet waits for is written first, and the raylet's registration
is awaited for :data:`START_TIMEOUT_S` (Ray's own waits, ~30 s, were missed at load 11-17 on
2 cores). :func:`end_failed_start` ends every process a failed start made, through Ray's own
process handles (so no "still running" ``ResourceWarning`` follows), and
:func:`end_orphans` this process's remaining Ray children.

Edge cases: a port chosen up front and taken by another program before the agent binds it
ends that start (it is retried by the caller); where the Ray internals used here are missing
(another Ray version), :func:`patient_start` changes nothing.

Reference: Ray's ``ray start`` options ``--dashboard-agent-grpc-port``,
``--dashboard-agent-listen-port``, ``--runtime-env-agent-port``, ``--metrics-export-port``.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import signal
import subprocess
import time
import traceback
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rulegauge.core.localserver import free_ports
from rulegauge.core.reaper import end_tagged

START_TIMEOUT_S = 300.0
"""How long a node's start may take before it fails: its raylet registering with the GCS
(:func:`patient_start`), the GCS port, the agents and the first workers registering
(:data:`DRIVER_ENV`). Ray's defaults (30 s, 30 s, 60 s) were missed at load 13-17 on the
2-core CI machine; a start there took up to ~140 s (tests/core/test_cluster_sigkill.py)."""


def end_orphans() -> None:
    """End the Ray processes a failed one-node start left behind: this process's children
    whose command line names ray (Linux ``/proc``; elsewhere nothing is done). Their
    ``Popen`` objects are collected at once, so no "still running" ResourceWarning follows."""
    me = os.getpid()
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            ppid = int((proc / "stat").read_text().rpartition(")")[2].split()[1])
            cmdline = (proc / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == me and b"/ray/" in cmdline:  # Ray's programs; never the reaper's watchdog
            with contextlib.suppress(OSError):
                os.kill(int(proc.name), signal.SIGKILL)
                os.waitpid(int(proc.name), 0)  # reaped here: no zombie left
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


def _raylet_running() -> bool:
    """True when a child of this process is a live raylet (or ``/proc`` cannot tell)."""
    if not Path("/proc").is_dir():
        return True
    me = os.getpid()
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            stat = (proc / "stat").read_text().rpartition(")")[2].split()
            program = (proc / "cmdline").read_bytes().split(b"\0", 1)[0]
            if int(stat[1]) == me and stat[0] != "Z" and program.endswith(b"/raylet"):
                return True
        except (OSError, ValueError, IndexError):
            continue
    return False


AGENT_PORTS = ("metrics_agent_port", "metrics_export_port", "dashboard_agent_listen_port",
               "runtime_env_agent_port")
"""The ports of a node's agents, chosen before the node starts (:func:`patient_start`)."""


@contextmanager
def patient_start(timeout_s: float = START_TIMEOUT_S) -> Iterator[None]:
    """For the ``with`` block (starting nodes here), a node's start holds on a loaded machine:

    * its agents' ports are chosen before it starts (:data:`AGENT_PORTS`, as ``ray start
      --dashboard-agent-grpc-port ...`` gives them) and the one the raylet reads from a file
      (the dashboard agent's listen port) is written there first, with Ray's own
      ``ray._raylet.persist_port``, so the raylet does not wait for the agents: it waits a
      fixed ~30 s for those port files and then aborts ("Check failed" in
      ``WaitForDashboardAgentPorts``), and a Python agent's start took longer than that at
      load 11-13 on 2 cores (measured: its first log line 36 s after the raylet's start);
      the agents bind those ports when they are up and write the same files again (a port
      taken meanwhile ends that start: it is retried);
    * Ray's check that the raylet registered with the GCS (``ray._private.node.Node`` polls
      ``ray._private.services.get_node``, raising ``RuntimeError`` until the node is known;
      Ray allows 30 s) is retried for up to ``timeout_s``, and gives up at once when no
      raylet of this process runs any more (a start that failed for good fails fast).

    Where those Ray internals are missing (another Ray version), nothing is changed."""
    import ray._private.node as node_module  # deferred: optional dependency
    import ray._private.services as services

    real_get = getattr(services, "get_node", None)
    node_class = getattr(node_module, "Node", None)
    real_init = getattr(node_class, "__init__", None)
    if real_get is None or node_class is None or real_init is None:
        yield
        return

    def waiting(*args: Any, **kwargs: Any) -> Any:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return real_get(*args, **kwargs)
            except RuntimeError:
                if time.monotonic() >= deadline or not _raylet_running():
                    raise
                time.sleep(0.5)

    def init(self: Any, ray_params: Any, *args: Any, **kwargs: Any) -> None:
        if not kwargs.get("connect_only", False):  # a node started here, not joined
            for name, port in zip(AGENT_PORTS, free_ports(len(AGENT_PORTS)), strict=True):
                if not getattr(ray_params, name, None):
                    setattr(ray_params, name, port)
        real_init(self, ray_params, *args, **kwargs)

    real_start = getattr(node_class, "start_ray_processes", None)

    def start(self: Any) -> Any:
        port = getattr(getattr(self, "_ray_params", None), "dashboard_agent_listen_port", None)
        session, node_id = getattr(self, "_session_dir", None), getattr(self, "_node_id", None)
        if isinstance(port, int) and port > 0 and session and node_id:
            with contextlib.suppress(Exception):  # best effort: without it Ray waits as before
                raylet = importlib.import_module("ray._raylet")  # compiled: no stubs
                raylet.persist_port(session, node_id, raylet.DASHBOARD_AGENT_LISTEN_PORT_NAME, port)
        return real_start(self) if real_start is not None else None

    services.get_node = waiting
    node_class.__init__ = init
    if real_start is not None:
        node_class.start_ray_processes = start
    try:
        yield
    finally:
        services.get_node = real_get
        node_class.__init__ = real_init
        if real_start is not None:
            node_class.start_ray_processes = real_start


def end_failed_start(exc: BaseException, token: str | None = None) -> None:
    """End every process a failed node start made: each Ray node object the failure's
    traceback holds (a ``Node`` being started, a test ``Cluster``'s nodes) kills and waits for
    its processes through their ``Popen`` handles (so none is later collected "still
    running", a ``ResourceWarning``), the traceback's frames are cleared, then this process's
    Ray children (:func:`end_orphans`) and, with ``token``, every process the
    :mod:`rulegauge.core.reaper` watchdog tagged (the agents a raylet started)."""
    nodes: dict[int, Any] = {}
    tb = exc.__traceback__
    while tb is not None:
        for value in list(tb.tb_frame.f_locals.values()):
            with contextlib.suppress(Exception):  # any object may sit in a frame
                found = [value] if hasattr(value, "kill_all_processes") else []
                lister = getattr(value, "list_all_nodes", None)
                found += list(lister()) if callable(lister) else []
                nodes.update((id(n), n) for n in found)
        tb = tb.tb_next
    for node in nodes.values():
        with contextlib.suppress(Exception):
            node.kill_all_processes(check_alive=False, allow_graceful=False, wait=True)
    nodes.clear()
    end_orphans()
    if token is not None:
        end_tagged(token)
    for obj in gc.get_objects():  # any handle of a Ray process ended above: its status read
        # type(), not isinstance(): isinstance reads ``__class__``, which some objects compute
        # (torch's deprecated ``distributed.reduce_op`` warns when touched)
        if issubclass(type(obj), subprocess.Popen) and obj.returncode is None and "/ray/" in str(obj.args):
            with contextlib.suppress(Exception):
                obj.poll()  # a live process (another cluster's) is left alone
    if exc.__traceback__ is not None:
        traceback.clear_frames(exc.__traceback__)
