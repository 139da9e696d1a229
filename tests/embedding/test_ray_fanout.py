"""The ray engine's embedding on a local Ray cluster: the same vectors and shards as the
local engine, a cache a later local run reuses with zero misses, a worker killed mid-batch
retried, and the sample run's tables equal to the local engine's."""

from __future__ import annotations

import json
import os
import signal
import threading
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from rulegauge.core.engines import EngineChoice
from rulegauge.embedding.cache import EmbeddingCache, embed
from rulegauge.embedding.fanout import runner_for
from rulegauge.embedding.ray_fanout import pool_size
from tests.helpers.embedding_fakes import FakeModel, shared_model_cache
from tests.helpers.ray_cluster import (
    RAY_MISSING,
    WORK_START_S,
    local_cluster,
    pausing_model,
    wait_for,
)
from tests.helpers.tables import table_differences

TEXTS = [f"Rule {i}: a lit lantern " + "scores points " * (i % 6) for i in range(21)]
ray_only = pytest.mark.skipif(RAY_MISSING is not None, reason=str(RAY_MISSING))


@pytest.fixture(scope="module")
def cluster():
    if RAY_MISSING is not None:
        pytest.skip(RAY_MISSING)
    with local_cluster():
        yield


@pytest.mark.parametrize(("cpus", "batches", "expected"), [
    ([2], 10, (1, 2)), ([8], 10, (4, 2)), ([8], 2, (2, 2)), ([1], 5, (1, 1)), ([16], 0, (1, 2)),
    ([1, 1], 10, (2, 1)), ([2, 2], 10, (2, 2)), ([4, 1], 10, (2, 2)), ([], 3, (1, 1)),
])
def test_pool_has_one_actor_per_model_threads_worth_of_cpus(cpus, batches, expected) -> None:
    """Sized per node: an actor's CPUs must fit in one node (two 1-CPU nodes: 1-CPU actors)."""
    assert pool_size(cpus, batches) == expected


@ray_only
@pytest.mark.slow
def test_ray_vectors_and_shards_equal_local_and_local_reuses_them(cluster, tmp_path: Path) -> None:
    runner = runner_for("ray", partial(FakeModel, "fake-bow"))
    ray_cache = EmbeddingCache(tmp_path / "ray", "fake-bow")
    remote = embed(FakeModel(), TEXTS, "passage", ray_cache, 4, runner=runner)
    local = embed(FakeModel(), TEXTS, "passage", EmbeddingCache(tmp_path / "local", "fake-bow"), 4)
    assert np.array_equal(remote, local)
    assert ray_cache.stats.misses == len(TEXTS) and ray_cache.stats.shards_written == 6
    shards = [sorted(p.name for p in (tmp_path / x / "embeddings" / "fake-bow").iterdir())
              for x in ("ray", "local")]
    assert shards[0] == shards[1]
    model = FakeModel()
    again = EmbeddingCache(tmp_path / "ray", "fake-bow")
    assert np.array_equal(embed(model, TEXTS, "passage", again, 4), local)
    assert model.calls == 0 and again.stats.misses == 0 and again.stats.hits == len(TEXTS)


@ray_only
@pytest.mark.slow
def test_a_worker_killed_mid_batch_is_retried(cluster, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    runner = runner_for("ray", partial(pausing_model, str(marks)))
    out: dict[str, np.ndarray] = {}
    worker = threading.Thread(target=lambda: out.update(v=embed(
        FakeModel(), TEXTS[:6], "passage", EmbeddingCache(tmp_path, "fake-bow"), 3, runner=runner)))
    worker.start()
    wait_for(lambda: any(marks.glob("pid-*")), WORK_START_S, "the first batch to start")
    victim = int(next(marks.glob("pid-*")).name.removeprefix("pid-"))
    os.kill(victim, signal.SIGKILL)
    (marks / "release").write_text("", encoding="utf-8")
    worker.join(timeout=2 * WORK_START_S)
    assert not worker.is_alive()
    pids = {int(p.name.removeprefix("pid-")) for p in marks.glob("pid-*")}
    assert victim in pids and len(pids) >= 2  # the batch ran again in a new worker process
    assert np.array_equal(out["v"], embed(FakeModel(), TEXTS[:6], "passage", None, 3))


@ray_only
@pytest.mark.slow
def test_sample_run_tables_equal_the_local_engine(cluster, tmp_path: Path) -> None:
    from rulegauge.answering.stage import answering_stage
    from rulegauge.pipeline.options import RunOptions
    from rulegauge.pipeline.retrieval import run

    def sample(name: str, engine: str, cache: Path):
        opts = RunOptions(runs_dir=tmp_path / "runs", run_id=name, cache_dir=cache,
                          stages=answering_stage((("extractive", {}),)), engine=EngineChoice(engine))
        return json.loads((run(opts).path / "manifest.json").read_text(encoding="utf-8"))

    (tmp_path / "cache-ray").mkdir()
    (tmp_path / "cache-local").mkdir()
    ray_cache = shared_model_cache(tmp_path / "cache-ray")
    local_cache = shared_model_cache(tmp_path / "cache-local")
    on_ray = sample("on-ray", "ray", ray_cache)
    on_local = sample("on-local", "local", local_cache)
    assert table_differences(tmp_path / "runs" / "on-ray", tmp_path / "runs" / "on-local") == []
    assert on_ray["engine"] == {"name": "ray", "address": None, "nodes": 1, "cpus": 2}
    assert on_ray["answering"]["engine"] == on_ray["engine"]
    assert on_local["engine"]["name"] == "local"
    for m in (on_ray, on_local):  # the rest of the manifest: same but for paths and times
        for key in ("engine", "run_id", "created", "finished", "tables", "git"):
            m.pop(key)
        m["answering"].pop("engine")
        m["arms"]["dense"].pop("model_describe")
        m["arms"]["dense"]["cache"].pop("folder")
    assert on_ray == on_local
    # the embeddings the Ray workers made serve a later local run: zero misses
    reused = sample("reused", "local", ray_cache)
    assert reused["arms"]["dense"]["cache"]["misses"] == 0
    assert reused["arms"]["dense"]["cache"]["model_calls"] == 0
