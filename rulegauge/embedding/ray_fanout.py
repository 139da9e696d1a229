"""The ``ray`` engine's embedding: planned batches as Ray Data ``map_batches`` over actors.

Definition: :func:`ray_batches` receives the batches :func:`rulegauge.embedding.cache.embed`
planned (texts still missing from the cache, longest first, ``batch_size`` per batch) and
makes a Ray dataset with one row per planned batch (its keys and texts): a partition of
the chunk texts. ``map_batches`` sends the rows to a pool of :class:`BatchEncoder` actors
(``ActorPoolStrategy``); each actor loads the model once (``loader()``, on its node, from
the same ``--cache-dir`` path) and embeds every row it gets as one model call with the
same ``batch_size``, so each vector comes from exactly the batch it would have come from
locally (sentence-transformers pads a batch to its longest text, so batch composition
reaches the last bits). Vectors travel back as float32 bytes (exact) and the driver's
``embed`` checks and stores them: the on-disk cache is the one the local engine writes,
shard for shard, and a later local run reuses it with zero misses.

Sizing: each actor asks for ``min(MAX_THREADS, CPUs of the largest node)`` CPUs (the torch
threads a model uses; an actor runs on one node) and the pool has as many actors as fit
on the nodes (``node CPUs // that``, summed), at most one per batch. A
killed actor is restarted and its batches retried: Ray Data's own defaults for actor
pools (``max_restarts=-1``, ``max_task_retries=-1``: as often as it takes; an error raised
by the model itself is not retried). An actor whose model id differs from the driver's
(another model build or backend on that node) raises and stops the run.

Edge cases: no batch -> nothing starts; with no session open a single-node one is started
for the call (:func:`rulegauge.core.cluster.ray_session`).

Reference: Ray Data, "Stateful transforms" (``map_batches`` with a callable class and
``ActorPoolStrategy``); Ray, "Fault tolerance: actors" (``max_restarts``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from rulegauge.core.cluster import node_cpus, quiet_ray_loggers, ray_session
from rulegauge.core.errors import RulegaugeError
from rulegauge.embedding.cache import ROLES, Batch
from rulegauge.embedding.models import MAX_THREADS, EmbeddingModel


class BatchEncoder:
    """A Ray Data actor: loads the model once, embeds one planned batch per row."""

    def __init__(self, loader: Callable[[], EmbeddingModel], model_id: str, role: str,
                 batch_size: int) -> None:
        self.model = loader()
        if self.model.model_id != model_id:
            raise RulegaugeError(f"a Ray worker loaded model {self.model.model_id}, the driver "
                               f"{model_id}: give every node the same model cache "
                               "(--cache-dir on a shared path; docs/scale-out.md)")
        self.encode = ROLES.get(role)
        self.batch_size = batch_size

    def __call__(self, rows: dict[str, Any]) -> dict[str, Any]:
        keys_out, vectors_out = [], []
        for keys, texts in zip(rows["keys"], rows["texts"], strict=True):
            vectors = self.encode(self.model, [str(t) for t in texts], self.batch_size)
            keys_out.append([str(k) for k in keys])
            vectors_out.append(np.ascontiguousarray(vectors, dtype=np.float32).tobytes())
        return {"keys": keys_out, "vectors": vectors_out}


def pool_size(node_cpus: Sequence[int], batches: int) -> tuple[int, int]:
    """(actors, CPUs per actor) for nodes of ``node_cpus`` CPUs each and ``batches``
    batches. Sized per node: two 1-CPU nodes take two 1-CPU actors (one 2-CPU actor
    would fit on neither and wait forever)."""
    per_actor = max(1, min(MAX_THREADS, max(node_cpus, default=1)))
    fits = sum(c // per_actor for c in node_cpus)
    return max(1, min(batches, fits)), per_actor


def ray_batches(loader: Callable[[], EmbeddingModel], model: EmbeddingModel, role: str,
                batches: list[Batch], batch_size: int) -> Iterator[tuple[list[str], np.ndarray]]:
    """Embed ``batches`` on the cluster; yield (keys, vectors) as batches finish."""
    if not batches:
        return
    with ray_session():
        import ray  # deferred: optional dependency
        import ray.data

        quiet_ray_loggers()
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        ctx.print_on_execution_start = False
        actors, per_actor = pool_size(node_cpus(), len(batches))
        rows = [{"keys": [k for k, _ in b], "texts": [t for _, t in b]} for b in batches]
        ds = ray.data.from_items(rows, override_num_blocks=len(rows))
        out = ds.map_batches(
            BatchEncoder, fn_constructor_args=(loader, model.model_id, role, batch_size),
            batch_size=1, compute=ray.data.ActorPoolStrategy(size=actors), num_cpus=per_actor)
        try:
            for row in out.iter_rows():
                keys = [str(k) for k in row["keys"]]
                vectors = np.frombuffer(row["vectors"], dtype=np.float32)
                yield keys, vectors.reshape(len(keys), -1) if keys else vectors.reshape(0, 0)
        except ray.exceptions.RayError as exc:
            cause = exc.cause if isinstance(exc, ray.exceptions.RayTaskError) else exc
            if isinstance(cause, RulegaugeError):
                raise RulegaugeError(str(cause)) from None
            raise RulegaugeError(f"embedding on the Ray cluster failed: {cause}") from None
