"""A local Ray cluster for the engine tests, and what they need around it.

:func:`local_cluster` starts a single-node Ray instance in this process (2 CPUs, no
dashboard, 200 MB object store, bound to 127.0.0.1, temp files under /tmp/ray) whose
workers can import ``tests.helpers`` (``PYTHONPATH`` = the repository), and shuts it down
afterwards; ``rulegauge.core.cluster.ray_session`` reuses it. :data:`RAY_MISSING` is the
skip reason when the ``[ray]`` extra is absent. :func:`pids_titled` finds Ray worker
processes by the title Ray gives them (``ray::ClassName.method`` while a call runs), so a
test can kill the worker of a running task. :class:`PausingModel` is a fake embedding
model whose first call waits for the test (see its docstring).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tests.helpers.common import REPO
from tests.helpers.embedding_fakes import FakeModel

WORK_START_S = 300.0
"""How long a test waits for work to start on a Ray cluster (a batch, an actor's first call)
or to finish after a kill: a bound that holds at load 16 on 2 cores (the first batch of a
Ray Data map started after more than 120 s at load 15-18 with two processes spinning on both
cores; docs: CONTRIBUTING.md "Servers and clusters in tests")."""

RAY_MISSING = (None if importlib.util.find_spec("ray") is not None
               else "ray is not installed (the [ray] extra: pip install -e '.[ray]'; scripts/test installs it)")


@contextmanager
def local_cluster(num_cpus: int = 2) -> Iterator[None]:
    """A Ray instance for the ``with`` block (see the module docstring), started as
    :mod:`rulegauge.core.cluster` starts one (:mod:`rulegauge.core.ray_start`): each attempt
    waits up to ``START_TIMEOUT_S`` (a bound that holds at load 16 on 2 cores), a failed
    attempt's processes are ended and reaped (``end_failed_start``), and everything the
    block started (agents a raylet left too: the :mod:`rulegauge.core.reaper` watchdog's
    tag) is ended when it ends, whether the start failed or not."""
    from rulegauge.core.cluster import DRIVER_ENV, START_ATTEMPTS, WORKER_ENV
    from rulegauge.core.ray_start import end_failed_start, end_orphans, patient_start
    from rulegauge.core.reaper import end_tagged, reaped

    for key, value in DRIVER_ENV.items():
        os.environ.setdefault(key, value)
    import ray

    with reaped("local-cluster") as token:
        for attempt in range(1, START_ATTEMPTS + 1):
            try:
                with patient_start():
                    ray.init(num_cpus=num_cpus, include_dashboard=False,
                             object_store_memory=200 * 1024 * 1024, _node_ip_address="127.0.0.1",
                             log_to_driver=False, logging_level="ERROR",
                             runtime_env={"env_vars": {**WORKER_ENV, "PYTHONPATH": str(REPO)}})
                break
            except Exception as exc:
                end_failed_start(exc, token)  # first: ray.shutdown() may raise after a crash
                with suppress(Exception):
                    ray.shutdown()
                if attempt == START_ATTEMPTS:
                    raise
                print(f"local Ray start, attempt {attempt} failed: {exc}", file=sys.stderr)
        try:
            yield
        finally:
            ray.shutdown()
            end_orphans()  # a worker Ray gave up waiting for: ended and reaped, no warning later
            end_tagged(token)


@dataclass
class TwoNodes:
    """A two-node Ray cluster on this machine (:func:`two_node_cluster`)."""

    cluster: Any
    worker: Any
    temp_dir: str
    start_s: float

    @property
    def address(self) -> str:
        return str(self.cluster.address)

    def raylet_pid(self, node: Any) -> int:
        return int(node.all_processes["raylet"][0].process.pid)


NODE_ARGS = {"num_cpus": 1, "object_store_memory": 100 * 1024 * 1024, "include_dashboard": False,
             "include_log_monitor": False}
"""Each node of :func:`two_node_cluster`: one CPU, a 100 MB object store, no dashboard, no
log monitor (and no autoscaler monitor on the head): fewer Python processes importing Ray
while the raylet has its fixed 30 s to register. The nodes take this machine's address
(``ray.util.get_node_ip_address()``): a driver given a loopback address connects there."""


@contextmanager
def two_node_cluster(attempts: int = 2) -> Iterator[TwoNodes]:
    """A head and a worker node (``ray.cluster_utils.Cluster``, :data:`NODE_ARGS` each) for
    the ``with`` block, with a temp folder of their own (``RAY_TMPDIR`` is set to it while
    they start, so the address file Ray writes for ``ray.init()`` stays in it: no other
    session on the machine joins this cluster by accident). Each node's start waits up to
    ``rulegauge.core.ray_start.START_TIMEOUT_S`` (Ray's own wait, a fixed 30 s, is missed at
    load 16 on 2 cores: ``patient_start``); a start that fails all the same is torn down
    (``end_failed_start``: both nodes' processes through their handles, then every process
    tagged by :func:`rulegauge.core.reaper.reaped`) and tried again, ``attempts`` times.
    Everything the cluster started is ended when the block ends."""
    from ray.cluster_utils import Cluster

    from rulegauge.core.cluster import DRIVER_ENV
    from rulegauge.core.ray_start import end_orphans
    from rulegauge.core.reaper import end_tagged, reaped

    temp_dir = tempfile.mkdtemp(prefix="rn", dir="/tmp")  # short: Ray's socket paths
    saved = {k: os.environ.get(k) for k in (*DRIVER_ENV, "RAY_TMPDIR")}
    os.environ.update({**DRIVER_ENV, "RAY_TMPDIR": temp_dir})
    try:
        with reaped("two-nodes") as token:
            start = time.monotonic()
            two = _start_two(Cluster, token, attempts)
            two.start_s = time.monotonic() - start
            try:
                yield two
            finally:
                for node in two.cluster.list_all_nodes():  # through Ray's Popen objects: reaped
                    with suppress(Exception):
                        node.kill_all_processes(check_alive=False, allow_graceful=False, wait=True)
                end_tagged(token)  # what those do not hold: agents, workers, a removed node's
                two.cluster = two.worker = None
                end_orphans()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(temp_dir, ignore_errors=True)  # the nodes' sessions and logs


def _start_two(cluster_class: Any, token: str, attempts: int) -> TwoNodes:
    """A started :class:`TwoNodes` (the retries of :func:`two_node_cluster`)."""
    from rulegauge.core.ray_start import START_TIMEOUT_S, end_failed_start, patient_start

    for attempt in range(1, attempts + 1):
        try:
            with patient_start():
                cluster = cluster_class(initialize_head=True, shutdown_at_exit=False,
                                        head_node_args={**NODE_ARGS, "no_monitor": True})
                worker = cluster.add_node(**NODE_ARGS)
            cluster.wait_for_nodes(timeout=START_TIMEOUT_S)
            return TwoNodes(cluster, worker, os.environ["RAY_TMPDIR"], 0.0)
        except Exception as exc:  # Ray raises bare Exception when a node times out starting
            end_failed_start(exc, token)  # both nodes' processes, reaped through their handles
            if attempt == attempts:
                raise
            print(f"two-node start, attempt {attempt} failed: {exc}", file=sys.stderr)
    raise AssertionError("unreachable")


def pids_titled(fragment: str) -> list[int]:
    """Processes whose command line (Ray sets it to ``ray::Class.method``) holds ``fragment``."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if fragment in cmdline:
            pids.append(int(proc.name))
    return pids


def wait_for(predicate, timeout_s: float, what: str) -> None:
    """Poll ``predicate`` every 0.1 s; fail the test naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.1)


class PausingModel(FakeModel):
    """A ``fake-bow`` model for killing a worker mid-batch.

    Every call writes ``<folder>/pid-<pid>``; while ``<folder>/release`` does not exist the
    call then waits (up to :data:`WORK_START_S`), so the test can find the process and kill it. The test
    creates ``release`` after the kill: the retried batch, in a new process, goes through.
    """

    def __init__(self, folder: str) -> None:
        super().__init__("fake-bow")
        self.folder = Path(folder)

    def _pause(self) -> None:
        (self.folder / f"pid-{os.getpid()}").write_text("", encoding="utf-8")
        deadline = time.monotonic() + WORK_START_S
        while not (self.folder / "release").exists() and time.monotonic() < deadline:
            time.sleep(0.05)

    def encode_passages(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        self._pause()
        return super().encode_passages(texts, batch_size)


def pausing_model(folder: str) -> PausingModel:
    return PausingModel(folder)
