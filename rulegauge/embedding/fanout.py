"""Where the embedding cache's batches are embedded, per engine.

Definition: :data:`EMBED_RUNNERS` maps an engine name (:data:`rulegauge.core.engines.ENGINES`)
to a factory ``factory(loader) -> BatchRunner``; ``loader`` is a picklable, argument-free
callable that loads the model (``functools.partial(load_model, name, cache_dir, backend)``),
for engines that load it elsewhere. The runner is given to
:func:`rulegauge.embedding.cache.embed`, which plans the batches (same texts, same order,
same batch size under every engine), checks every returned batch and writes every shard
itself: the runner only decides where the model calls happen.

* ``local``: :func:`rulegauge.embedding.cache.in_process` (the model object of the driver).
* ``ray``: :func:`rulegauge.embedding.ray_fanout.ray_batches` (Ray Data ``map_batches`` over
  actors that each load the model once; imported only when used).

Edge cases: every engine must have a runner (tested against ``ENGINES``); an empty plan
never starts anything.

Reference: Ray Data, "Transforming data / Stateful transforms" (``map_batches`` with a
callable class).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

import numpy as np

from rulegauge.core.registry import Registry
from rulegauge.embedding.cache import Batch, BatchRunner, in_process
from rulegauge.embedding.models import EmbeddingModel

ModelLoader = Callable[[], EmbeddingModel]
RunnerFactory = Callable[[ModelLoader], BatchRunner]

EMBED_RUNNERS: Registry[RunnerFactory] = Registry("embedding engine")


def _local(loader: ModelLoader) -> BatchRunner:
    return in_process


def _ray_runner(loader: ModelLoader, model: EmbeddingModel, role: str, batches: list[Batch],
                batch_size: int) -> Iterator[tuple[list[str], np.ndarray]]:
    from rulegauge.embedding.ray_fanout import ray_batches  # deferred: optional dependency

    yield from ray_batches(loader, model, role, batches, batch_size)


def _ray(loader: ModelLoader) -> BatchRunner:
    return partial(_ray_runner, loader)


EMBED_RUNNERS.add("local", _local)
EMBED_RUNNERS.add("ray", _ray)


def runner_for(engine: str, loader: ModelLoader) -> BatchRunner:
    """The batch runner of ``engine`` (unknown names raise listing the choices)."""
    return EMBED_RUNNERS.get(engine)(loader)
