"""Exact top-k over a faiss flat index for many queries, each scored as if searched alone.

Definition: :meth:`FlatSearch.search` returns, for every query row, the ``k`` scores
``index.search(query[None, :], k)`` returns for that query on its own, bit for bit,
and the same row ids up to faiss's order among exactly tied scores (which of several
chunks tied at the ``k``-th score are returned may differ too): what a caller
that orders by score then id and widens the search when a tie reaches its cut-off
(the dense arm) cannot tell apart. It asks faiss for blocks of queries at a time.

Why blocks need care: faiss picks its kernel from the call's shape, and the kernels
round differently in the last bit. In faiss 1.15 one query on a corpus of at least
10,000 vectors (and more than one OpenMP thread) is scored by BLAS ``sgemm`` split
over the database ("db-parallel"); below that, or on one thread, by a sequential
per-pair inner product. A block of ``m`` queries takes BLAS when ``m * d`` reaches
``faiss.cvar.distance_compute_blas_threshold`` (128,000) and the sequential kernel
below it. :func:`block_sizes` therefore cuts the queries into blocks on the same
side as a single query: large blocks when one query uses BLAS, blocks under the
threshold when it does not, and no blocks (one query per call) when too few
queries are left to reach the threshold.

Guard: this depends on faiss internals, which change between versions (faiss 1.8
used ``nx < 20`` as the threshold and had no db-parallel path). So the first query
of every block is also searched alone and compared bit for bit; on any difference
the whole call falls back to one query per call (the slow, always-identical path)
and :attr:`FlatSearch.per_query` says so. A kernel that rounds differently differs
on practically every row, so one row per block detects it.

Cost: one query per call spends most of its time starting OpenMP threads and
allocating buffers (36-60 ms per query at 20k-50k chunks on the shared 2-core
machine, against about 1 ms per query in blocks; ``benchmarks/bench_scale.py``).

Reference: faiss ``faiss/utils/distances.cpp`` (``knn_inner_product``,
``should_use_db_parallel``, ``Run_search_inner_product``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

BLOCK = 4096
"""Queries per faiss call on the BLAS side (the result buffers are block x k)."""

DB_PARALLEL_MIN = 10_000
"""faiss 1.15 ``kDbParallelMinVectors`` (a C++ constant, not exposed to Python)."""


def single_query_uses_blas(n: int) -> bool:
    """Whether faiss scores one query against ``n`` vectors with BLAS (db-parallel)."""
    import faiss  # deferred: heavy import

    nt = faiss.omp_get_max_threads()
    return nt > 1 and n >= max(DB_PARALLEL_MIN, nt * int(faiss.cvar.distance_compute_blas_database_bs))


def block_sizes(n_queries: int, n: int, d: int) -> list[int]:
    """Sizes of consecutive query blocks that faiss scores with the single-query kernel.

    All ones when no such blocking exists (fewer queries than a BLAS block needs).
    """
    import faiss  # deferred: heavy import

    threshold = int(faiss.cvar.distance_compute_blas_threshold)
    if single_query_uses_blas(n):
        low = max(-(-threshold // d), faiss.omp_get_max_threads())  # smallest BLAS block
        if n_queries < low:
            return [1] * n_queries
        block = max(BLOCK, low)
        sizes = [block] * (n_queries // block)
        rest = n_queries - block * len(sizes)
        if rest >= low:
            sizes.append(rest)
        elif rest:  # a short tail joins the block before it (there is one: n_queries >= low)
            sizes[-1] += rest
        return sizes
    high = max(1, (threshold - 1) // d)  # largest sequential block
    return [min(high, n_queries - s) for s in range(0, n_queries, high)]


def same_result(scores_a: np.ndarray, ids_a: np.ndarray, scores_b: np.ndarray, ids_b: np.ndarray) -> bool:
    """Equal scores bit for bit and the same ids above the last score (see the module docstring)."""
    if not np.array_equal(scores_a, scores_b):
        return False
    if len(scores_a) == 0:
        return True
    last = scores_a[-1]
    return set(ids_a[scores_a > last].tolist()) == set(ids_b[scores_b > last].tolist())


@dataclass
class FlatSearch:
    """Blocked search over ``index`` (a faiss flat index); see the module docstring."""

    index: Any
    per_query: bool = False  # True once a block differed from the single-query result

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(scores, ids)`` of shape ``(len(queries), k)``, row i that of query i searched
        alone (:func:`same_result`)."""
        q = np.ascontiguousarray(queries, dtype=np.float32)
        n_q = len(q)
        scores = np.empty((n_q, k), dtype=np.float32)
        ids = np.empty((n_q, k), dtype=np.int64)
        sizes = block_sizes(n_q, int(self.index.ntotal), int(self.index.d))
        if self.per_query or all(s == 1 for s in sizes):
            return self._one_by_one(q, k, scores, ids)
        start = 0
        for size in sizes:
            block_s, block_i = self.index.search(q[start:start + size], k)
            alone_s, alone_i = self.index.search(q[start:start + 1], k)
            if not same_result(block_s[0], block_i[0], alone_s[0], alone_i[0]):
                self.per_query = True
                return self._one_by_one(q, k, scores, ids)
            scores[start:start + size], ids[start:start + size] = block_s, block_i
            start += size
        return scores, ids

    def _one_by_one(self, q: np.ndarray, k: int, scores: np.ndarray,
                    ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        for i in range(len(q)):
            s, j = self.index.search(q[i:i + 1], k)
            scores[i], ids[i] = s[0], j[0]
        return scores, ids
