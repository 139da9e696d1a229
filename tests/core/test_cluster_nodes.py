"""``rulegauge run --engine ray --address`` on a two-node Ray cluster on this machine
(``ray.cluster_utils.Cluster``: a head and a worker node, one CPU each): embedding actors
run on both nodes and every table equals the local engine's; a worker node killed while
it embeds a batch leaves a run that completes (its batches are retried on the head) or,
failing that, resumes to the same tables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.common import REPO
from tests.helpers.embedding_fakes import shared_model_cache
from tests.helpers.ray_cluster import RAY_MISSING, TwoNodes, two_node_cluster, wait_for
from tests.helpers.tables import table_differences

pytestmark = [pytest.mark.slow, pytest.mark.faults,  # the fault tier's Ray rows (-m faults)
              pytest.mark.skipif(RAY_MISSING is not None, reason=str(RAY_MISSING))]

RULEGAUGE = str(Path(sys.executable).parent / "rulegauge")
RUN_S = 600
"""One run's bound: 122-128 s on the two nodes at load 10-12 (2 cores)."""
# bm25 + a dense arm with the small MiniLM model, 16 passages a batch: 7 batches of the
# sample's 110 chunks, so both nodes' actors get some
GRID = """\
[defaults]
k = 60
depth = 100
[arms.dense]
model = "minilm-en"
batch_size = 16
[grid]
k = [60]
arms = [["bm25", "dense"]]
"""


@pytest.fixture(scope="module")
def nodes():
    with two_node_cluster() as two:
        print(f"two nodes up in {two.start_s:.0f} s")
        yield two


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("nodes")
    (root / "grid.toml").write_text(GRID, encoding="utf-8")
    return root


def _cmd(folder: Path, run_id: str, address: str | None) -> list[str]:
    cache = folder / f"cache-{run_id}"  # a cache of its own: every run embeds everything
    if not cache.exists():
        cache.mkdir()
        shared_model_cache(cache)
    engine = ["--engine", "ray", "--address", address] if address else []
    return [RULEGAUGE, "run", "-c", str(folder / "grid.toml"), "-o", str(folder / "runs"),
            "--run-id", run_id, "--cache-dir", str(cache), "-a", "extractive", "--quiet", *engine]


def _start(folder: Path, run_id: str, address: str | None) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with (folder / f"{run_id}.log").open("ab") as log:  # the child keeps its own copy
        return subprocess.Popen(_cmd(folder, run_id, address), env=env, cwd=folder, stdout=log,
                                stderr=subprocess.STDOUT)


def _finish(folder: Path, run_id: str, driver: subprocess.Popen[bytes]) -> int:
    try:
        return driver.wait(timeout=RUN_S)
    except subprocess.TimeoutExpired:
        driver.kill()
        driver.wait()
        raise AssertionError(f"{run_id} ran over {RUN_S} s: "
                             f"{(folder / f'{run_id}.log').read_text(errors='replace')}") from None


def _embedders() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, title) of Ray Data's embedding actors (``ray::MapWorker(...)``);
    an actor's parent is the raylet of its node."""
    found = {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            title = (proc / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
            if title.startswith("ray::MapWorker(MapBatches(BatchEncoder))"):
                parent = int((proc / "stat").read_text().rpartition(")")[2].split()[1])
                found[int(proc.name)] = (parent, title)
        except (OSError, IndexError, ValueError):
            continue
    return found


def _sample_parents(driver: subprocess.Popen[bytes], parents: set[int]) -> None:
    """Which nodes run embedding actors, sampled every 0.2 s while the driver runs."""
    while driver.poll() is None:
        parents.update(parent for parent, _ in _embedders().values())
        time.sleep(0.2)


@pytest.fixture(scope="module")
def local_run(folder):
    driver = _start(folder, "local", None)
    assert _finish(folder, "local", driver) == 0, (folder / "local.log").read_text(errors="replace")
    return folder / "runs" / "local"


def _manifest(run: Path) -> dict:
    return json.loads((run / "manifest.json").read_text(encoding="utf-8"))


def test_a_run_on_two_nodes_equals_the_local_engine(nodes: TwoNodes, folder, local_run) -> None:
    raylets = {nodes.raylet_pid(nodes.cluster.head_node), nodes.raylet_pid(nodes.worker)}
    parents: set[int] = set()
    driver = _start(folder, "two", nodes.address)
    watcher = threading.Thread(target=_sample_parents, args=(driver, parents))
    watcher.start()
    rc = _finish(folder, "two", driver)
    watcher.join()
    assert rc == 0, (folder / "two.log").read_text(errors="replace")
    assert raylets <= parents  # both nodes ran embedding actors
    run = folder / "runs" / "two"
    assert _manifest(run)["engine"] == {"name": "ray", "address": nodes.address, "nodes": 2,
                                        "cpus": 2}
    assert table_differences(run, local_run) == []


def test_a_worker_node_killed_mid_batch_leaves_a_run_with_the_same_tables(nodes: TwoNodes, folder,
                                                                          local_run) -> None:
    worker_raylet = nodes.raylet_pid(nodes.worker)
    driver = _start(folder, "killed", nodes.address)
    try:
        wait_for(lambda: driver.poll() is not None or any(  # a batch running on the worker node
            p == worker_raylet and title.endswith(".submit") for p, title in _embedders().values()),
            RUN_S, "an embedding batch on the worker node")
        assert driver.poll() is None, (folder / "killed.log").read_text(errors="replace")
        nodes.cluster.remove_node(nodes.worker, allow_graceful=False)  # SIGKILL, every process
        rc = _finish(folder, "killed", driver)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    run = folder / "runs" / "killed"
    if rc != 0:  # not retried to the end: the same command resumes it on the head node alone
        print(f"the run stopped (exit {rc}); resuming:", (folder / "killed.log").read_text(errors="replace"))
        again = _start(folder, "killed", nodes.address)
        assert _finish(folder, "killed", again) == 0, (folder / "killed.log").read_text(errors="replace")
    else:
        print("the run completed on the head node after the worker node was killed")
    assert _manifest(run)["status"] == "complete"
    assert table_differences(run, local_run) == []
