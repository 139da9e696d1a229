"""Exact flat search: exact top-k with ties by id; a query's results never depend on its block."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rulegauge.arms import flat_search
from rulegauge.arms.flat_search import (
    CORPUS_BLOCK,
    QUERY_BLOCK,
    FlatSearch,
    describe_kernel,
    key_scores,
    score_keys,
)
from rulegauge.core.errors import RulegaugeError

ROOT = Path(__file__).resolve().parents[2]


def unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    v = rng.standard_normal((n, d)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def integer_vectors(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """Small integers: every product and sum is exact in float32, whatever the kernel."""
    return rng.integers(-3, 4, size=(n, d)).astype(np.float32)


def brute_force(x: np.ndarray, q: np.ndarray, id_order: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Every score, ordered score descending then id order ascending (exact on integer data)."""
    s = (q.astype(np.float64) @ x.astype(np.float64).T).astype(np.float32)
    rows = np.stack([np.lexsort((id_order, -row))[:k] for row in s])
    return np.take_along_axis(s, rows, axis=1), rows


def test_keys_order_scores_then_ids() -> None:
    s = np.array([0.5, -0.25, 0.5, -0.0, 0.0, -3.0, 1e-30, np.inf], np.float32)
    rank = np.array([3, 0, 1, 2, 4, 5, 6, 7])
    keys = score_keys(s, rank)
    want = np.lexsort((rank, -(s + np.float32(0))))
    assert np.array_equal(np.argsort(-keys, kind="stable"), want)
    assert np.array_equal(key_scores(keys), s + np.float32(0))  # -0.0 reads as 0.0


@pytest.mark.parametrize(("n", "d", "n_q", "k"), [
    (40_000, 16, 300, 110),  # three corpus blocks and a tail
    (3000, 8, 700, 110),  # heavy ties: 7 values per coordinate, 8 coordinates
    (50, 4, 5, 50),  # k = n, fewer columns than groups
    (20_000, 8, 10, 1500),  # k above the group count
])
def test_exact_top_k_with_ties_by_id(n: int, d: int, n_q: int, k: int) -> None:
    rng = np.random.default_rng(n + k)
    x, q = integer_vectors(rng, n, d), integer_vectors(rng, n_q, d)
    x[1::5] = x[0]  # exact ties across corpus blocks
    id_order = rng.permutation(n)
    scores, rows = FlatSearch(x, id_order).search(q, k)
    want_s, want_r = brute_force(x, q, id_order, k)
    assert np.array_equal(rows, want_r) and np.array_equal(scores, want_s)


def test_k_edges_and_an_empty_corpus() -> None:
    x = integer_vectors(np.random.default_rng(0), 30, 4)
    flat = FlatSearch(x)
    assert flat.search(x[:3], 0)[0].shape == (3, 0)
    s, r = flat.search(x[:3], 99)  # k is capped at the corpus size
    assert s.shape == r.shape == (3, 30)
    empty = FlatSearch(np.zeros((0, 4), np.float32))
    assert empty.search(x[:2], 5)[1].shape == (2, 0)
    assert flat.search(np.zeros((0, 4), np.float32), 5)[1].shape == (0, 5)


def test_non_finite_vectors_are_refused() -> None:
    x = np.ones((10, 4), np.float32)
    x[7, 2] = np.nan
    with pytest.raises(RulegaugeError, match="first row 7"):
        FlatSearch(x)
    with pytest.raises(RulegaugeError, match="query"):
        FlatSearch(np.ones((10, 4), np.float32)).search(np.full((1, 4), np.inf, np.float32), 3)
    with pytest.raises(RulegaugeError, match="permutation"):
        FlatSearch(np.ones((3, 4), np.float32), np.array([0, 0, 1]))


def search_in_pieces(flat: FlatSearch, q: np.ndarray, k: int, sizes: list[int]) -> tuple[np.ndarray, np.ndarray]:
    parts, start = [], 0
    for size in sizes:
        parts.append(flat.search(q[start:start + size], k))
        start += size
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def test_results_do_not_depend_on_the_block() -> None:
    """Real-valued vectors (kernels could round differently): bit-identical across block
    sizes, positions in the block and block-mates."""
    rng = np.random.default_rng(3)
    n, d = CORPUS_BLOCK + 3000, 48
    x, q = unit(rng, n, d), unit(rng, QUERY_BLOCK + 77, d)
    flat = FlatSearch(x)
    s, r = flat.search(q, 60)
    for sizes in ([1] * 40 + [len(q) - 40], [7, 300, len(q) - 307], [QUERY_BLOCK - 1, len(q) - QUERY_BLOCK + 1]):
        ps, pr = search_in_pieces(flat, q, 60, sizes)
        assert np.array_equal(ps, s) and np.array_equal(pr, r)
    rev_s, rev_r = flat.search(q[::-1], 60)
    assert np.array_equal(rev_s[::-1], s) and np.array_equal(rev_r[::-1], r)
    mates = np.concatenate([q[5:6], unit(rng, 30, d)])
    ms, mr = flat.search(mates, 60)
    assert np.array_equal(ms[0], s[5]) and np.array_equal(mr[0], r[5])


CHILD = """
import hashlib, sys
import numpy as np
from rulegauge.arms.flat_search import FlatSearch
rng = np.random.default_rng(11)
x = rng.standard_normal((20000, 40)).astype(np.float32)
q = rng.standard_normal((int(sys.argv[1]), 40)).astype(np.float32)
s, r = FlatSearch(x, rng.permutation(20000)).search(q, 50)
print(hashlib.sha256(s[:300].tobytes() + r[:300].tobytes()).hexdigest())
"""


def test_identical_across_processes() -> None:
    """Two processes, different hash seeds and query counts: the same first 300 rows."""
    digests = set()
    for seed, n_q in (("1", 300), ("2", 900)):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        out = subprocess.run([sys.executable, "-c", CHILD, str(n_q)], env=env, check=True,
                             capture_output=True, text=True, timeout=300)
        digests.add(out.stdout.strip())
    assert len(digests) == 1


def test_a_position_dependent_blas_falls_back_to_one_query_per_call(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    rng = np.random.default_rng(7)
    x, q = integer_vectors(rng, 900, 6), integer_vectors(rng, 40, 6)
    monkeypatch.setattr(flat_search, "row_position_free", lambda vectors: False)
    with caplog.at_level(logging.WARNING, logger="rulegauge.arms.flat_search"):
        flat = FlatSearch(x)
    assert flat.per_query and "scored alone" in caplog.text
    assert describe_kernel(flat)["kernel"] == "one product per query"
    s, r = flat.search(q, 25)
    want_s, want_r = brute_force(x, q, np.arange(900), 25)
    assert np.array_equal(r, want_r) and np.array_equal(s, want_s)


def test_describe_names_the_blas() -> None:
    d = describe_kernel(FlatSearch(np.eye(4, dtype=np.float32)))
    assert d["query_block"] == QUERY_BLOCK and d["corpus_block"] == CORPUS_BLOCK
    assert str(d["blas"]).strip() and d["kernel"] in ("blas sgemm on fixed blocks", "one product per query")


def test_results_do_not_depend_on_the_worker_threads() -> None:
    """One thread, two, three: the same rows and scores, bit for bit, for many query blocks
    (split by block) and for one block (the corpus split into runs merged on exact keys)."""
    rng = np.random.default_rng(5)
    x, q = unit(rng, 2 * CORPUS_BLOCK + 500, 24), unit(rng, 2 * QUERY_BLOCK + 10, 24)
    x[CORPUS_BLOCK + 3] = x[2]  # an exact tie across two runs
    ref = FlatSearch(x, threads=1)
    for threads in (2, 3):
        flat = FlatSearch(x, threads=threads)
        for queries in (q, q[:5], x[2:3]):
            want, got = ref.search(queries, 70), flat.search(queries, 70)
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    s, r = ref.search(x[2:3], 2)
    assert r[0].tolist() == [2, CORPUS_BLOCK + 3] and s[0, 0] == s[0, 1]
    assert describe_kernel(FlatSearch(x[:10], threads=3))["workers"] == 3
