"""The ``dense`` arm: cosine similarity of sentence embeddings, exact search.

Definition: every chunk text is embedded in the passage role and every question in
the query role by a packaged model (:mod:`rulegauge.embedding.models`, default ``e5-small``,
multilingual); the score of a chunk is the inner product of the L2-normalised
vectors, i.e. their cosine, over every chunk (exact, no approximation:
:mod:`rulegauge.arms.flat_search`, BLAS products on fixed block shapes). Embeddings are
cached on disk (:mod:`rulegauge.embedding.cache`), so a second run over the same corpus
embeds nothing.

Conventions: hits are ordered score descending then chunk id ascending, the
rulegauge's ordering (:mod:`rulegauge.core.ordering`), decided exactly inside the search
(a tie at the cut-off goes to the smaller chunk id). Every question is scored by the
same kernel whatever the other questions of the call, so its hits and scores are the
same searched alone, in any batch and in any process. An empty corpus gives empty hit
lists.

Backend: the ``backend`` parameter names an entry of
:data:`rulegauge.embedding.backends.BACKENDS` (``torch-fp32``, ``torch-bf16``, ``onnx-fp32``,
``onnx-int8``, ``auto``, the default: chosen by the CPU's features,
:data:`rulegauge.embedding.backends.AUTO_RULES`); it is resolved when the arm is built,
and the resolved name is part of the model id, hence of the embedding-cache folder.

Engines: ``ArmContext.engine`` picks where the batches are embedded
(:mod:`rulegauge.embedding.fanout`: this process, or Ray actors); the batches and the
vectors are the same under every engine.

Caches: the converted model lives under ``<cache>/models`` and the embeddings under
``<cache>/embeddings``, where ``<cache>`` is the ``cache_dir`` parameter, else the
run's ``ArmContext.cache_dir`` (the pipeline passes ``$RULEGAUGE_CACHE`` or
``~/.cache/rulegauge``).

Reference: Johnson, Douze & Jégou 2019, "Billion-scale similarity search with GPUs"
(faiss); Karpukhin et al. 2020, "Dense Passage Retrieval" (arXiv:2004.04906).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from rulegauge.arms.base import ARMS, ArmContext
from rulegauge.arms.flat_search import FlatSearch, describe_kernel
from rulegauge.arms.results import ArmResult, HitColumns
from rulegauge.core.errors import ConfigError, RulegaugeError
from rulegauge.core.ordering import id_ranks
from rulegauge.corpus.chunk_columns import ChunkColumns
from rulegauge.corpus.records import Corpus
from rulegauge.embedding.backends import AUTO, BACKENDS, resolve_backend
from rulegauge.embedding.cache import BatchRunner, EmbeddingCache, embed
from rulegauge.embedding.fanout import runner_for
from rulegauge.embedding.models import EMBEDDING_MODELS, EmbeddingModel, load_model
from rulegauge.goldset.records import Question

DEFAULT_MODEL = "e5-small"
"""Chosen on the cross-lingual questions of the Secret Hitler gold set (docs/dense.md)."""


@ARMS.register("dense")
class DenseArm:
    """Exact cosine search over chunk embeddings (see the module docstring)."""

    name: ClassVar[str] = "dense"
    extra: ClassVar[str] = "dense"  # rulegauge.core.extras: torch, sentence-transformers, ONNX Runtime

    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 32,
                 cache_dir: str | Path | None = None, backend: str = AUTO) -> None:
        EMBEDDING_MODELS.get(model)  # unknown names fail here, listing the choices
        if backend not in BACKENDS:
            raise ConfigError(f"dense arm: unknown backend {backend!r}; choose one of: "
                              f"{', '.join(BACKENDS.names())}")
        problems = [f"{k} must be an integer >= {lo}, got {v!r}"
                    for k, v, lo in (("batch_size", batch_size, 1),)
                    if not isinstance(v, int) or isinstance(v, bool) or v < lo]
        if problems:
            raise ConfigError("dense arm: " + "; ".join(problems))
        self.model_name = model
        self.batch_size = batch_size
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.backend = backend
        self.resolved_backend = resolve_backend(backend, model).name
        self._model: EmbeddingModel | None = None
        self._cache: EmbeddingCache | None = None
        self._runner: BatchRunner | None = None
        self._flat: FlatSearch | None = None
        self._ids: list[str] = []
        self._chunks = ChunkColumns.of(())

    def prepare(self, corpus: Corpus, context: ArmContext) -> None:
        """Load the model, embed every chunk (passage role) and build the index."""
        root = self.cache_dir if self.cache_dir is not None else Path(context.cache_dir)
        self._model = load_model(self.model_name, root, self.resolved_backend)
        self._cache = EmbeddingCache(root, self._model.model_id)
        # the engine decides where the batches are embedded, never which (same vectors)
        self._runner = runner_for(context.engine, partial(load_model, self.model_name, root,
                                                          self.resolved_backend))
        vectors = embed(self._model, [c.search_text for c in corpus.chunks], "passage", self._cache,
                        self.batch_size, context.progress, runner=self._runner)
        self._ids = [c.chunk_id for c in corpus.chunks]
        self._chunks = corpus.chunk_columns
        matrix = np.asarray(vectors, dtype=np.float32).reshape(len(self._ids), self._model.dimension)
        self._flat = FlatSearch(matrix, id_ranks(self._ids) if self._ids else None)

    def search(self, questions: Sequence[Question], depth: int) -> list[ArmResult]:
        """Top ``depth`` chunks per question by cosine (ties by chunk id)."""
        if self._model is None or self._flat is None:
            raise RulegaugeError("dense arm: call prepare(corpus, context) before search()")
        if depth < 0:
            raise ValueError(f"depth must be >= 0, got {depth}")
        queries = embed(self._model, [q.question for q in questions], "query", self._cache,
                        self.batch_size, runner=self._runner)
        if depth == 0 or not self._ids:
            return [ArmResult(q.question_id, self.name, ()) for q in questions]
        scores, rows = self._flat.search(queries, depth)  # exact order: score desc, chunk id asc
        # hits as columns over the corpus rows (no Python object per hit: 1,000 questions x 100
        # hits as records cost more than the search); scores widened once, ranks shared
        wide = scores.astype(np.float64)
        ranks = np.arange(1, rows.shape[1] + 1, dtype=np.int32)
        return [ArmResult(q.question_id, self.name, HitColumns(self._chunks, row, ranks, sc))
                for q, sc, row in zip(questions, wide, rows, strict=True)]

    def describe(self) -> dict[str, Any]:
        """Parameters, the model's provenance, the search kernel and cache counts."""
        out: dict[str, Any] = {"arm": self.name, "model": self.model_name,
                               "backend": self.backend,
                               "backend_resolved": self.resolved_backend,
                               "batch_size": self.batch_size,
                               "cache_dir": str(self.cache_dir) if self.cache_dir else None,
                               "search": describe_kernel(self._flat)}
        if self._model is not None:
            out["model_describe"] = self._model.describe()
        if self._cache is not None:
            s = self._cache.stats
            out["cache"] = {"folder": str(self._cache.folder), "hits": s.hits,
                            "misses": s.misses, "model_calls": s.model_calls,
                            "shards_written": s.shards_written}
        return out
