"""Exact top-k inner-product search for many queries, each scored by the same kernel.

Definition: ``FlatSearch(vectors, id_order).search(queries, k)`` returns, for every query
row, the ``k`` corpus rows with the largest inner product and their float32 scores,
ordered score descending then ``id_order`` ascending (rulegauge's ordering rule,
:mod:`rulegauge.core.ordering`, on exact keys: a tie at the ``k``-th score goes to the
smaller id, so no caller needs to widen the search).

Kernel: scores are BLAS ``sgemm`` products (numpy ``matmul``) on fixed shapes, one BLAS
thread per product: a corpus block of :data:`CORPUS_BLOCK` rows (the last one shorter,
fixed per corpus) times a block of :data:`QUERY_BLOCK` queries (the last one padded with
zero rows), giving a ``corpus x queries`` score block. Every query is thus scored in a
call of the same shape whatever the number of queries and whichever queries share its
block, so its scores depend on nothing but itself and the corpus: identical across block
sizes, calls, worker counts and processes (same BLAS library and CPU). BLAS sgemm may pick
its kernel from the shape and from its thread count (faiss's flat search switches kernels
with the number of queries, and on some CPUs they round differently in the last bit):
fixed shapes and one thread keep every query on one path.

Parallelism: the products and their selection run on :func:`workers` threads (the CPUs
this process may use), each task one query block against a run of corpus blocks (the
corpus is split into runs only when there are fewer query blocks than workers); each task
keeps its rows' top ``k`` keys and the runs of a query block are merged on those keys, which
are unique, so the result does not depend on how the work was split.

Guard: a GEMM never mixes queries, but a query's column in the block could select another
micro-kernel. At construction a canary (a seeded random block, the same block shifted by
one query, and its first query among zero queries, against the first corpus block, one
BLAS thread) must agree bit for bit; if not, a warning is logged and every query is
scored alone, one ``(n, 1)`` product per query (slow, the same kernel for every query);
:attr:`FlatSearch.per_query` says so.

Selection (exact, linear): per score block, the maxima of :data:`GROUPS` row groups (corpus
row ``r`` in group ``r % GROUPS``, full groups only) bound each query's ``k``-th score from
below in the first block of a run (``k`` groups each hold a score at least their ``k``-th
largest maximum); then only groups whose maximum reaches the running ``k``-th score are
read, their scores at or above it become candidates, merged with the running top ``k`` on
64-bit keys (monotone integer image of the float32 score, then the inverted id order),
which are unique, so ``np.partition`` on them is the exact order. ``-0.0`` is read as
``0.0``. Vectors must be finite (checked: a NaN score would have no place in the order).

Cost: the products dominate (2 x queries x corpus x dimension flops at the BLAS rate); the
selection reads each score block once more (``benchmarks/bench_dense.py``: faiss
``IndexFlatIP.search`` as the peer, in the same run).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rulegauge.core.errors import RulegaugeError

log = logging.getLogger(__name__)

QUERY_BLOCK = 256
"""Queries per product (a multiple of every x86 sgemm micro-kernel's width)."""

CORPUS_BLOCK = 16_384
"""Corpus rows per product: a 16,384 x 256 float32 score block is 16 MB (stays in the last-level cache)."""

GROUPS = 2048
"""Row groups of a score block whose maxima bound each query's ``k``-th score and skip reading."""

CANARY_SEED = 20261201

_MIN = np.iinfo(np.int64).min
_LOW = np.int64(0xFFFFFFFF)
_ONE_AT_A_TIME = threading.Lock()
"""Searches hold it: the BLAS thread count is process-wide, and every product must see one thread."""


def workers() -> int:
    """Threads a search runs on: the CPUs this process may use (``os.sched_getaffinity``),
    capped by ``OMP_NUM_THREADS`` when that is a positive integer (the OpenMP convention)."""
    try:
        cores = max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        cores = max(1, os.cpu_count() or 1)
    omp = os.environ.get("OMP_NUM_THREADS", "").strip()
    return min(cores, int(omp)) if omp.isdigit() and int(omp) > 0 else cores


def score_keys(scores: np.ndarray, order_rank: np.ndarray) -> np.ndarray:
    """64-bit keys: larger key = larger score, then smaller ``order_rank`` (< 2**32)."""
    bits = (scores.astype(np.float32) + np.float32(0.0)).view(np.int32).astype(np.int64)
    bits = np.where(bits < 0, bits ^ 0x7FFFFFFF, bits)  # negative floats: reverse magnitude
    return (bits << 32) | (_LOW - order_rank)


def key_scores(keys: np.ndarray) -> np.ndarray:
    """The float32 scores of :func:`score_keys` keys."""
    hi = keys >> 32
    return np.where(hi < 0, hi ^ 0x7FFFFFFF, hi).astype(np.int32).view(np.float32)


def merge_top(top: np.ndarray, rows: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``top`` (rows x k keys, ``_MIN`` for empty slots) with candidate ``keys`` of
    ``rows`` (ascending) merged in: each row keeps its ``k`` largest keys (unordered)."""
    k = top.shape[1]
    uniq, start, count = np.unique(rows, return_index=True, return_counts=True)
    width = int(count.max())
    pool = np.full((len(uniq), k + width), _MIN, dtype=np.int64)
    pool[:, :k] = top[uniq]
    within = np.arange(len(rows)) - np.repeat(start, count)
    pool[np.repeat(np.arange(len(uniq)), count), k + within] = keys
    out = top.copy()
    out[uniq] = np.partition(pool, width, axis=1)[:, width:]
    return out


def block_candidates(s: np.ndarray, thr: np.ndarray, groups: int,
                     bound: tuple[int, int] | None = None) -> np.ndarray:
    """Flat indices (``row * columns + query``) of the scores of block ``s`` (corpus rows x
    queries) at or above each query's threshold ``thr``. With ``bound = (m, k)`` the first
    ``m`` thresholds are first raised, in place, to the ``k``-th largest of their queries'
    group maxima (a lower bound of the ``k``-th score: module docstring)."""
    rows, cols = s.shape
    per = rows // groups
    flat = s.reshape(-1)
    parts = []
    if per:
        mx = s[:per * groups].reshape(per, groups, cols).max(axis=0) if per > 1 else s[:groups]
        if bound is not None:
            m, k = bound
            lower = np.partition(np.ascontiguousarray(mx[:, :m].T), groups - k, axis=1)[:, groups - k]
            np.maximum(thr[:m], lower, out=thr[:m])
        hit = np.flatnonzero(mx >= thr)  # group * cols + query: the groups worth reading
        idx = (hit[:, None] + (groups * cols) * np.arange(per)).reshape(-1)
        parts.append(idx[np.flatnonzero(flat[idx] >= thr[idx % cols])])
    if per * groups < rows:
        parts.append(np.flatnonzero(s[per * groups:] >= thr) + per * groups * cols)
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def row_position_free(vectors: np.ndarray) -> bool:
    """The guard of the module docstring: does a query's column in the block, or its
    block-mates, change its scores against the first corpus block?"""
    x = vectors[:CORPUS_BLOCK]
    rng = np.random.default_rng(CANARY_SEED)
    r = rng.standard_normal((QUERY_BLOCK, vectors.shape[1])).astype(np.float32)
    alone = np.zeros_like(r)
    alone[0] = r[0]
    base = x @ r.T
    return bool(np.array_equal(np.roll(base, 1, axis=1), x @ np.roll(r, 1, axis=0).T)
                and np.array_equal(base[:, 0], (x @ alone.T)[:, 0]))


def _blas(vectors: np.ndarray) -> Any:
    """numpy's BLAS libraries (every BLAS loaded when none is numpy's own), for their thread count."""
    import threadpoolctl  # type: ignore[import-untyped]  # deferred: scans the loaded libraries

    every = threadpoolctl.ThreadpoolController().select(user_api="blas")
    own = [lib for lib in every.lib_controllers if "numpy" in str(lib.filepath)]
    return every.select(filepath=[lib.filepath for lib in own]) if own else every


@dataclass
class FlatSearch:
    """Exact top-k over ``vectors`` (rows, float32); see the module docstring.

    ``id_order`` is a permutation of ``range(len(vectors))``: the position of each row
    in ascending id order (default: row order). ``threads``: the search's worker threads
    (default :func:`workers`); the results do not depend on it.
    """

    vectors: np.ndarray
    id_order: np.ndarray | None = None
    threads: int = 0
    per_query: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self.vectors = np.ascontiguousarray(self.vectors, dtype=np.float32)
        n = len(self.vectors)
        if self.vectors.ndim != 2:
            raise RulegaugeError(f"flat search: vectors must be a matrix, got shape {self.vectors.shape}")
        if not np.isfinite(self.vectors).all():
            bad = np.flatnonzero(~np.isfinite(self.vectors).all(axis=1))
            raise RulegaugeError(f"flat search: {len(bad)} vectors have non-finite values "
                               f"(first row {int(bad[0])})")
        rank = np.arange(n, dtype=np.int64) if self.id_order is None else np.asarray(self.id_order, np.int64)
        if rank.shape != (n,) or not np.array_equal(np.sort(rank), np.arange(n)):
            raise RulegaugeError("flat search: id_order must be a permutation of the rows")
        self.id_order = rank
        self._rank = rank
        self._row_of_rank = np.argsort(rank)
        self.threads = self.threads if self.threads > 0 else workers()
        self._controller = _blas(self.vectors)
        with self._one_blas_thread():
            free = not n or row_position_free(self.vectors)
        if not free:
            self.per_query = True
            log.warning("flat search: this BLAS rounds a query's scores differently by its column "
                        "in the block; every query is scored alone (one product per query, slow)")

    @property
    def dimension(self) -> int:
        """Vector dimension."""
        return int(self.vectors.shape[1])

    @contextmanager
    def _one_blas_thread(self) -> Iterator[None]:
        with _ONE_AT_A_TIME, self._controller.limit(limits=1):
            yield

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(scores, rows)`` of shape ``(len(queries), min(k, n))``: each query's best
        rows, score descending then id order ascending (module docstring)."""
        q = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, self.dimension)
        if not np.isfinite(q).all():
            raise RulegaugeError("flat search: a query vector has non-finite values")
        n = len(self.vectors)
        k = max(0, min(int(k), n))
        keys = np.empty((len(q), k), dtype=np.int64)
        step = 1 if self.per_query else QUERY_BLOCK
        blocks = list(range(0, len(q) if k else 0, step))
        n_blocks = -(-n // CORPUS_BLOCK)
        n_runs = 1 if len(blocks) >= self.threads else max(1, min(self.threads, n_blocks))
        cuts = [CORPUS_BLOCK * (n_blocks * i // n_runs) for i in range(n_runs)] + [n]
        tasks = [(b, cuts[i], cuts[i + 1]) for b in blocks for i in range(n_runs)]

        def task(t: tuple[int, int, int]) -> np.ndarray:
            b, start, stop = t
            return self._run_keys(q[b:b + step], k, step, start, stop)

        with self._one_blas_thread():
            if self.threads == 1 or len(tasks) <= 1:
                found = [task(t) for t in tasks]
            else:
                with ThreadPoolExecutor(min(self.threads, len(tasks))) as pool:
                    found = list(pool.map(task, tasks))
        for i, b in enumerate(blocks):
            mine = np.concatenate(found[i * n_runs:(i + 1) * n_runs], axis=1)
            if n_runs > 1:
                mine = np.partition(mine, mine.shape[1] - k, axis=1)[:, mine.shape[1] - k:]
            keys[b:b + step] = mine
        keys = np.sort(keys, axis=1)[:, ::-1]
        scores = key_scores(keys)
        rows = self._row_of_rank[(_LOW - (keys & _LOW)).astype(np.int64)]
        return scores, rows

    def _run_keys(self, block: np.ndarray, k: int, shape: int, start: int, stop: int) -> np.ndarray:
        """The top ``k`` keys (unordered, ``_MIN`` in empty slots) of each query of ``block``
        over corpus rows ``start:stop``, the block padded to ``shape`` queries."""
        m = len(block)
        padded = np.zeros((shape, self.dimension), dtype=np.float32)
        padded[:m] = block
        columns = padded.T
        top = np.full((m, k), _MIN, dtype=np.int64)
        thr = np.full(shape, np.inf, dtype=np.float32)  # padding queries: nothing reaches +inf
        thr[:m] = -np.inf
        groups = max(GROUPS, k)
        for j in range(start, stop, CORPUS_BLOCK):
            s = self.vectors[j:min(j + CORPUS_BLOCK, stop)] @ columns  # corpus rows x queries
            idx = block_candidates(s, thr, groups, (m, k) if j == start else None)
            if len(idx):
                r, c = np.divmod(idx, shape)
                o = np.argsort(c.astype(np.uint16) if shape <= 0xFFFF else c, kind="stable")
                top = merge_top(top, c[o], score_keys(s.reshape(-1)[idx[o]], self._rank[r[o] + j]))
                full = top.min(axis=1) != _MIN
                thr[:m][full] = np.maximum(thr[:m][full], key_scores(top[full].min(axis=1)))
        return top


def describe_kernel(flat: FlatSearch | None) -> dict[str, object]:
    """For the manifest: the kernel in use, the block shapes, the worker threads and numpy's
    BLAS (library, the micro-architecture it chose at run time; one thread per product),
    which decide the last bit."""
    import threadpoolctl  # deferred: scans the loaded libraries

    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    runtime = [i for i in threadpoolctl.threadpool_info()
               if i.get("user_api") == "blas" and "numpy" in str(i.get("filepath", ""))]
    return {"kernel": "one product per query" if flat is not None and flat.per_query
            else "blas sgemm on fixed blocks",
            "query_block": QUERY_BLOCK, "corpus_block": CORPUS_BLOCK, "groups": GROUPS,
            "blas": f"{blas.get('name')} {blas.get('version')}",
            "blas_architecture": runtime[0].get("architecture") if runtime else None,
            "blas_threads": 1, "workers": flat.threads if flat is not None else workers()}
