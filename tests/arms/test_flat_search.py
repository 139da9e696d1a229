"""Blocked faiss search: every row equals the query searched alone, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from harness.arms import flat_search
from harness.arms.flat_search import FlatSearch, block_sizes, same_result, single_query_uses_blas

faiss = pytest.importorskip("faiss")


def unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    v = rng.standard_normal((n, d)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def index(n: int, d: int, seed: int = 0) -> object:
    rng = np.random.default_rng(seed)
    x = unit(rng, n, d)
    x[1::7] = x[0]  # exact ties
    ix = faiss.IndexFlatIP(d)
    ix.add(x)
    return ix


def alone(ix: object, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    rows = [ix.search(v[None, :], k) for v in q]  # type: ignore[attr-defined]
    return np.stack([s[0] for s, _ in rows]), np.stack([i[0] for _, i in rows])


def equal(s: np.ndarray, i: np.ndarray, rs: np.ndarray, ri: np.ndarray) -> bool:
    """Scores bit for bit; ids the same except the order of exact ties and the tie at k."""
    return np.array_equal(s, rs) and all(same_result(*row) for row in zip(s, i, rs, ri, strict=True))


def test_same_result_is_blind_to_tie_order_only() -> None:
    s = np.array([0.9, 0.5, 0.5, 0.2, 0.2], np.float32)
    assert same_result(s, np.array([1, 2, 3, 4, 5]), s, np.array([1, 3, 2, 5, 9]))
    assert not same_result(s, np.array([1, 2, 3, 4, 5]), s, np.array([1, 2, 7, 4, 5]))
    assert not same_result(s, np.array([1, 2, 3, 4, 5]), np.nextafter(s, 1), np.array([1, 2, 3, 4, 5]))


@pytest.mark.parametrize(("n", "d", "n_q"), [(3000, 384, 700), (2000, 64, 2500), (500, 64, 1)])
def test_blocks_equal_single_queries(n: int, d: int, n_q: int) -> None:
    ix = index(n, d)
    rng = np.random.default_rng(5)
    q = unit(rng, n_q, d)
    q[3::11] = q[0]
    flat = FlatSearch(ix)
    s, i = flat.search(q, 110)
    rs, ri = alone(ix, q, 110)
    assert not flat.per_query and equal(s, i, rs, ri)


@pytest.mark.slow
def test_blas_blocks_equal_single_queries_on_a_large_corpus() -> None:
    ix = index(12_000, 384)
    q = unit(np.random.default_rng(6), 400, 384)
    flat = FlatSearch(ix)
    s, i = flat.search(q, 110)
    rs, ri = alone(ix, q, 110)
    assert equal(s, i, rs, ri)  # on every CPU; whether blocks fell back (per_query) is the CPU's
    if single_query_uses_blas(12_000):
        assert block_sizes(400, 12_000, 384) == [400]


def test_block_sizes_stay_on_the_single_query_side() -> None:
    threshold = int(faiss.cvar.distance_compute_blas_threshold)
    for n_q in (0, 1, 5, 333, 334, 1000, 4096, 4097, 4100, 10_000):
        small = block_sizes(n_q, 5000, 384)
        assert sum(small) == n_q and all(s * 384 < threshold for s in small)
        large = block_sizes(n_q, 60_000, 384)
        assert sum(large) == n_q
        if single_query_uses_blas(60_000):
            assert all(s == 1 for s in large) or all(s * 384 >= threshold for s in large)


class Perturbed:
    """A flat index whose multi-query calls round differently (as another kernel would)."""

    def __init__(self, ix: object) -> None:
        self.ix, self.ntotal, self.d = ix, ix.ntotal, ix.d  # type: ignore[attr-defined]

    def search(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        s, i = self.ix.search(q, k)  # type: ignore[attr-defined]
        return (np.nextafter(s, np.inf) if len(q) > 1 else s), i


def test_a_differing_kernel_falls_back_to_one_query_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    ix = index(800, 64)
    q = unit(np.random.default_rng(7), 50, 64)
    monkeypatch.setattr(flat_search, "block_sizes", lambda n_q, n, d: [n_q])
    flat = FlatSearch(Perturbed(ix))
    s, i = flat.search(q, 20)
    rs, ri = alone(ix, q, 20)
    assert flat.per_query and np.array_equal(s, rs) and np.array_equal(i, ri)  # the per-query path itself
