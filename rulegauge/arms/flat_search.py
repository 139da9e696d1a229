"""Exact top-k inner-product search for many queries, each scored by the same kernel.

Definition: ``FlatSearch(vectors, id_order).search(queries, k)`` returns, for every query
row, the ``k`` corpus rows with the largest inner product and their float32 scores,
ordered score descending then ``id_order`` ascending (rulegauge's ordering rule,
:mod:`rulegauge.core.ordering`, on exact keys: a tie at the ``k``-th score goes to the
smaller id, so no caller needs to widen the search).

Kernel: scores are BLAS ``sgemm`` products (numpy ``matmul``) on fixed shapes: queries in
blocks of :data:`QUERY_BLOCK` rows, the last block padded with zero rows, against the
corpus in column blocks of :data:`CORPUS_BLOCK` (the last one shorter, fixed per corpus).
Every query is thus scored in a call of the same shape whatever the number of queries and
whichever queries share its block, so its scores depend on nothing but itself and the
corpus: identical across block sizes, calls and processes (same BLAS library, CPU and
thread count). BLAS sgemm may pick its kernel from the shape and the row tail (faiss's
flat search switches kernels with the number of queries, and on some CPUs they round
differently in the last bit): fixed shapes keep every row on one path.

Guard: a GEMM never mixes rows, but a row's position in the block could select another
micro-kernel. At construction a canary (a seeded random block, the same block shifted by
one row, and its first row among zero rows, against the first corpus block) must agree
bit for bit; if not, a warning is logged and every query is scored alone, one
``(1, d)`` product per query (slow, the same kernel for every query);
:attr:`FlatSearch.per_query` says so.

Selection (exact, linear): per corpus block, a lower bound of each row's ``k``-th score
(the ``k``-th largest of the maxima of ``G >= k`` column groups of the first block: ``k``
groups each hold a score at least that large), then the running ``k``-th score; only
scores at or above it become candidates, merged with the running top ``k`` on 64-bit keys
(monotone integer image of the float32 score, then the inverted id order), which are
unique, so ``np.partition`` on them is the exact order. ``-0.0`` is read as ``0.0``.
Vectors must be finite (checked: a NaN score would have no place in the order).

Cost: the matmul dominates (2 x queries x corpus x dimension flops at the BLAS rate); the
selection reads each score block once more (``benchmarks/bench_dense.py``: faiss
``IndexFlatIP.search`` as the peer).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from rulegauge.core.errors import RulegaugeError

log = logging.getLogger(__name__)

QUERY_BLOCK = 256
"""Query rows per product (a multiple of every x86 sgemm micro-kernel's row count)."""

CORPUS_BLOCK = 16_384
"""Corpus rows per product: a 256 x 16,384 float32 score block is 16 MB (stays in cache)."""

GROUPS = 1024
"""Column groups of the first block whose maxima bound each row's ``k``-th score."""

CANARY_SEED = 20261201

_MIN = np.iinfo(np.int64).min
_LOW = np.int64(0xFFFFFFFF)


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


def group_maxima(s: np.ndarray, groups: int) -> np.ndarray | None:
    """Row maxima of the column groups of score block ``s`` (column ``c`` in group
    ``c % groups``, full groups only); None when the block has fewer columns than groups."""
    per = s.shape[1] // groups
    if not per:
        return None
    mx = s[:, :groups].copy()
    for t in range(1, per):
        np.maximum(mx, s[:, t * groups:(t + 1) * groups], out=mx)
    return mx


def block_candidates(s: np.ndarray, thr: np.ndarray, mx: np.ndarray | None,
                     groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rows, cols, scores)`` of the entries of score block ``s`` at or above the row
    thresholds ``thr``, rows ascending; ``mx`` (:func:`group_maxima`) skips the groups
    whose maximum is below."""
    cols = s.shape[1]
    per = cols // groups if mx is not None else 0
    parts = []
    if per:
        assert mx is not None
        gr, gc = np.nonzero(mx >= thr[:, None])
        cols_g = gc[:, None] + groups * np.arange(per)[None, :]
        vals = s[gr[:, None], cols_g]
        ii, tt = np.nonzero(vals >= thr[gr][:, None])
        parts.append((gr[ii], cols_g[ii, tt], vals[ii, tt]))
    if per * groups < cols:
        tail = s[:, per * groups:]
        r, c = np.nonzero(tail >= thr[:, None])
        parts.append((r, c + per * groups, tail[r, c]))
    r = np.concatenate([p[0] for p in parts])
    c = np.concatenate([p[1] for p in parts])
    v = np.concatenate([p[2] for p in parts])
    order = np.argsort(r, kind="stable")
    return r[order], c[order], v[order]


def row_position_free(vectors: np.ndarray) -> bool:
    """The guard of the module docstring: does a row's position or its block-mates change
    its scores against the first corpus block?"""
    x = vectors[:CORPUS_BLOCK]
    rng = np.random.default_rng(CANARY_SEED)
    r = rng.standard_normal((QUERY_BLOCK, vectors.shape[1])).astype(np.float32)
    alone = np.zeros_like(r)
    alone[0] = r[0]
    base = r @ x.T
    return bool(np.array_equal(np.roll(base, 1, axis=0), np.roll(r, 1, axis=0) @ x.T)
                and np.array_equal(base[0], (alone @ x.T)[0]))


@dataclass
class FlatSearch:
    """Exact top-k over ``vectors`` (rows, float32); see the module docstring.

    ``id_order`` is a permutation of ``range(len(vectors))``: the position of each row
    in ascending id order (default: row order).
    """

    vectors: np.ndarray
    id_order: np.ndarray | None = None
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
        if n and not row_position_free(self.vectors):
            self.per_query = True
            log.warning("flat search: this BLAS rounds a query's scores differently by its row "
                        "in the block; every query is scored alone (one product per query, slow)")

    @property
    def dimension(self) -> int:
        """Vector dimension."""
        return int(self.vectors.shape[1])

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(scores, rows)`` of shape ``(len(queries), min(k, n))``: each query's best
        rows, score descending then id order ascending (module docstring)."""
        q = np.ascontiguousarray(queries, dtype=np.float32).reshape(-1, self.dimension)
        if not np.isfinite(q).all():
            raise RulegaugeError("flat search: a query vector has non-finite values")
        k = max(0, min(int(k), len(self.vectors)))
        keys = np.empty((len(q), k), dtype=np.int64)
        step = 1 if self.per_query else QUERY_BLOCK
        for start in range(0, len(q) if k else 0, step):
            block = q[start:start + step]
            keys[start:start + len(block)] = self._block_keys(block, k, step)
        keys = np.sort(keys, axis=1)[:, ::-1]
        scores = key_scores(keys)
        rows = self._row_of_rank[(_LOW - (keys & _LOW)).astype(np.int64)]
        return scores, rows

    def _block_keys(self, block: np.ndarray, k: int, shape_rows: int) -> np.ndarray:
        """The top ``k`` keys (unordered) of each row of ``block``, padded to ``shape_rows``."""
        m = len(block)
        padded = np.zeros((shape_rows, self.dimension), dtype=np.float32)
        padded[:m] = block
        top = np.full((m, k), _MIN, dtype=np.int64)
        thr = np.full(m, -np.inf, dtype=np.float32)
        groups = max(GROUPS, k)
        for j in range(0, len(self.vectors), CORPUS_BLOCK):
            s = (padded @ self.vectors[j:j + CORPUS_BLOCK].T)[:m]  # padding rows never ranked
            mx = group_maxima(s, groups)
            if j == 0 and mx is not None:  # k groups hold a score >= their k-th largest maximum
                thr = np.maximum(thr, np.partition(mx, groups - k, axis=1)[:, groups - k])
            r, c, v = block_candidates(s, thr, mx, groups)
            if len(r):
                top = merge_top(top, r, score_keys(v, self._rank[c + j]))
                full = top.min(axis=1) != _MIN
                thr[full] = np.maximum(thr[full], key_scores(top[full].min(axis=1)))
        return top


def describe_kernel(flat: FlatSearch | None) -> dict[str, object]:
    """For the manifest: the kernel in use, the block shapes and numpy's BLAS (library,
    the micro-architecture it chose at run time, threads), which decide the last bit."""
    import threadpoolctl  # type: ignore[import-untyped]  # deferred: scans the loaded libraries

    blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    runtime = [i for i in threadpoolctl.threadpool_info()
               if i.get("user_api") == "blas" and "numpy" in str(i.get("filepath", ""))]
    return {"kernel": "one product per query" if flat is not None and flat.per_query
            else "blas sgemm on fixed blocks",
            "query_block": QUERY_BLOCK, "corpus_block": CORPUS_BLOCK,
            "blas": f"{blas.get('name')} {blas.get('version')}",
            "blas_architecture": runtime[0].get("architecture") if runtime else None,
            "blas_threads": runtime[0].get("num_threads") if runtime else None}
