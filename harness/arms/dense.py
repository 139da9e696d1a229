"""The ``dense`` arm: cosine similarity of sentence embeddings, exact search.

Definition: every chunk text is embedded in the passage role and every question in
the query role by a packaged model (:mod:`harness.embedding.models`, default ``e5-small``,
multilingual); the score of a chunk is the inner product of the L2-normalised
vectors, i.e. their cosine, found with a faiss ``IndexFlatIP`` (exact, no
approximation). Embeddings are cached on disk (:mod:`harness.embedding.cache`), so a
second run over the same corpus embeds nothing.

Conventions: hits are ordered score descending then chunk id ascending
(:func:`harness.arms.base.hits_from_scores`). faiss returns tied scores in no
particular order, so it is asked for ``depth + extra`` candidates which are then
re-ranked; when the last candidate ties with the ``depth``-th, the tie group may go
on beyond the candidates and every chunk is scored instead. Each question's scores
are those faiss gives it searched on its own, so they do not depend on the other
questions of the call (faiss picks its kernel from the call's shape); the questions
are nevertheless searched in blocks, with the single-query kernel
(:mod:`harness.arms.flat_search`). An empty corpus gives empty hit lists.

Backend: the ``backend`` parameter names an entry of
:data:`harness.embedding.backends.BACKENDS` (``torch-fp32``, ``torch-bf16``, ``auto``,
the default: bf16 on CPUs with AMX, else fp32); it is resolved when the arm is built,
and the resolved name is part of the model id, hence of the embedding-cache folder.

Engines: ``ArmContext.engine`` picks where the batches are embedded
(:mod:`harness.embedding.fanout`: this process, or Ray actors); the batches and the
vectors are the same under every engine.

Caches: the converted model lives under ``<cache>/models`` and the embeddings under
``<cache>/embeddings``, where ``<cache>`` is the ``cache_dir`` parameter, else the
run's ``ArmContext.cache_dir`` (the pipeline passes ``$HARNESS_CACHE`` or
``~/.cache/harness``).

Reference: Johnson, Douze & Jégou 2019, "Billion-scale similarity search with GPUs"
(faiss); Karpukhin et al. 2020, "Dense Passage Retrieval" (arXiv:2004.04906).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from harness.arms.base import ARMS, ArmContext, ArmResult, Hit, hits_from_scores
from harness.arms.flat_search import FlatSearch
from harness.core.errors import ConfigError, HarnessError
from harness.corpus.records import Corpus
from harness.embedding.backends import AUTO, BACKENDS, resolve_backend
from harness.embedding.cache import BatchRunner, EmbeddingCache, embed
from harness.embedding.fanout import runner_for
from harness.embedding.models import EMBEDDING_MODELS, EmbeddingModel, load_model
from harness.goldset.records import Question

DEFAULT_MODEL = "e5-small"
"""Chosen on the cross-lingual questions of the Secret Hitler gold set (docs/dense.md)."""


@ARMS.register("dense")
class DenseArm:
    """Exact cosine search over chunk embeddings (see the module docstring)."""

    name: ClassVar[str] = "dense"

    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 32,
                 cache_dir: str | Path | None = None, extra: int = 10,
                 backend: str = AUTO) -> None:
        EMBEDDING_MODELS.get(model)  # unknown names fail here, listing the choices
        if backend not in BACKENDS:
            raise ConfigError(f"dense arm: unknown backend {backend!r}; choose one of: "
                              f"{', '.join(BACKENDS.names())}")
        problems = [f"{k} must be an integer >= {lo}, got {v!r}"
                    for k, v, lo in (("batch_size", batch_size, 1), ("extra", extra, 0))
                    if not isinstance(v, int) or isinstance(v, bool) or v < lo]
        if problems:
            raise ConfigError("dense arm: " + "; ".join(problems))
        self.model_name = model
        self.batch_size = batch_size
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.extra = extra
        self.backend = backend
        self.resolved_backend = resolve_backend(backend).name
        self._model: EmbeddingModel | None = None
        self._cache: EmbeddingCache | None = None
        self._runner: BatchRunner | None = None
        self._index: Any = None
        self._flat: FlatSearch | None = None
        self._ids: list[str] = []

    def prepare(self, corpus: Corpus, context: ArmContext) -> None:
        """Load the model, embed every chunk (passage role) and build the index."""
        import faiss  # deferred: heavy import

        root = self.cache_dir if self.cache_dir is not None else Path(context.cache_dir)
        self._model = load_model(self.model_name, root, self.resolved_backend)
        self._cache = EmbeddingCache(root, self._model.model_id)
        # the engine decides where the batches are embedded, never which (same vectors)
        self._runner = runner_for(context.engine, partial(load_model, self.model_name, root,
                                                          self.resolved_backend))
        vectors = embed(self._model, [c.text for c in corpus.chunks], "passage", self._cache,
                        self.batch_size, context.progress, runner=self._runner)
        self._index = faiss.IndexFlatIP(self._model.dimension)
        if len(vectors):
            self._index.add(vectors)
        self._flat = FlatSearch(self._index)
        self._ids = [c.chunk_id for c in corpus.chunks]

    def search(self, questions: Sequence[Question], depth: int) -> list[ArmResult]:
        """Top ``depth`` chunks per question by cosine (ties by chunk id)."""
        if self._model is None or self._index is None:
            raise HarnessError("dense arm: call prepare(corpus, context) before search()")
        if depth < 0:
            raise ValueError(f"depth must be >= 0, got {depth}")
        queries = embed(self._model, [q.question for q in questions], "query", self._cache,
                        self.batch_size, runner=self._runner)
        n = self._index.ntotal
        if depth == 0 or n == 0:
            return [ArmResult(q.question_id, self.name, ()) for q in questions]
        k = min(n, depth + self.extra)
        # every question scored as if searched alone, in blocks (harness.arms.flat_search)
        assert self._flat is not None
        scores, idx = self._flat.search(queries, k)
        return [ArmResult(q.question_id, self.name, self._top(v, s, i, depth))
                for q, v, s, i in zip(questions, queries, scores, idx, strict=True)]

    def _top(self, query: np.ndarray, scores: np.ndarray, idx: np.ndarray,
             depth: int) -> tuple[Hit, ...]:
        n, k = self._index.ntotal, len(scores)
        if k < n and scores[k - 1] == scores[min(depth, k) - 1]:
            all_scores, all_idx = self._index.search(query[None, :], n)
            scores, idx = all_scores[0], all_idx[0]
        ids = [self._ids[i] for i in idx]
        return hits_from_scores(ids, scores, depth)

    def describe(self) -> dict[str, Any]:
        """Parameters, the model's provenance, the faiss version and cache counts."""
        import faiss  # deferred: heavy import

        out: dict[str, Any] = {"arm": self.name, "model": self.model_name,
                               "backend": self.backend,
                               "backend_resolved": self.resolved_backend,
                               "batch_size": self.batch_size, "extra": self.extra,
                               "cache_dir": str(self.cache_dir) if self.cache_dir else None,
                               "faiss": faiss.__version__, "index": "IndexFlatIP",
                               "search": "per question" if self._flat is not None and self._flat.per_query
                               else "blocks, single-query kernel"}
        if self._model is not None:
            out["model_describe"] = self._model.describe()
        if self._cache is not None:
            s = self._cache.stats
            out["cache"] = {"folder": str(self._cache.folder), "hits": s.hits,
                            "misses": s.misses, "model_calls": s.model_calls,
                            "shards_written": s.shards_written}
        return out
