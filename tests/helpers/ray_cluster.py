"""A local Ray cluster for the engine tests, and what they need around it.

:func:`local_cluster` starts a single-node Ray instance in this process (2 CPUs, no
dashboard, 200 MB object store, bound to 127.0.0.1, temp files under /tmp/ray) whose
workers can import ``tests.helpers`` (``PYTHONPATH`` = the repository), and shuts it down
afterwards; ``harness.core.cluster.ray_session`` reuses it. :data:`RAY_MISSING` is the
skip reason when the ``[ray]`` extra is absent. :func:`pids_titled` finds Ray worker
processes by the title Ray gives them (``ray::ClassName.method`` while a call runs), so a
test can kill the worker of a running task. :class:`PausingModel` is a fake embedding
model whose first call waits for the test (see its docstring).
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from tests.helpers.common import REPO
from tests.helpers.embedding_fakes import FakeModel

RAY_MISSING = (None if importlib.util.find_spec("ray") is not None
               else "ray is not installed (the [ray] extra: pip install -e '.[ray]'; scripts/test installs it)")


@contextmanager
def local_cluster(num_cpus: int = 2) -> Iterator[None]:
    """A Ray instance for the ``with`` block (see the module docstring)."""
    from harness.core.cluster import DRIVER_ENV, START_ATTEMPTS, WORKER_ENV, end_orphans

    for key, value in DRIVER_ENV.items():
        os.environ.setdefault(key, value)
    import ray

    for attempt in range(1, START_ATTEMPTS + 1):  # as harness.core.cluster does: Ray gives its
        try:                                        # raylet a fixed 30 s, a loaded machine misses it
            ray.init(num_cpus=num_cpus, include_dashboard=False,
                     object_store_memory=200 * 1024 * 1024, _node_ip_address="127.0.0.1",
                     log_to_driver=False, logging_level="ERROR",
                     runtime_env={"env_vars": {**WORKER_ENV, "PYTHONPATH": str(REPO)}})
            break
        except Exception:
            ray.shutdown()
            end_orphans()
            if attempt == START_ATTEMPTS:
                raise
    try:
        yield
    finally:
        ray.shutdown()


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
    call then waits (up to 120 s), so the test can find the process and kill it. The test
    creates ``release`` after the kill: the retried batch, in a new process, goes through.
    """

    def __init__(self, folder: str) -> None:
        super().__init__("fake-bow")
        self.folder = Path(folder)

    def _pause(self) -> None:
        (self.folder / f"pid-{os.getpid()}").write_text("", encoding="utf-8")
        deadline = time.monotonic() + 120
        while not (self.folder / "release").exists() and time.monotonic() < deadline:
            time.sleep(0.05)

    def encode_passages(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        self._pause()
        return super().encode_passages(texts, batch_size)


def pausing_model(folder: str) -> PausingModel:
    return PausingModel(folder)
