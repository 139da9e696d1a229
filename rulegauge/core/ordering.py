"""The one ordering rule of rulegauge: score descending, then id ascending.

Every ranked list (arm hits, fused lists, page lists, answer reads) is ordered
through these helpers, so ties are broken the same way everywhere and runs are
reproducible. Ids compare as Python strings (code-point order).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def order(scores: Sequence[float] | np.ndarray, ids: Sequence[str] | np.ndarray) -> np.ndarray:
    """Indices that sort items by ``scores`` descending, ties by ``ids`` ascending.

    NaN scores sort last. Returns an int64 index array.

    >>> order([1.0, 2.0, 2.0], ["c", "b", "a"]).tolist()
    [2, 1, 0]
    """
    s = np.asarray(scores, dtype=np.float64)
    if len(s) != len(ids):
        raise ValueError(f"scores ({len(s)}) and ids ({len(ids)}) differ in length")
    if len(s) == 0:
        return np.zeros(0, dtype=np.int64)
    # rank ids once so lexsort works on integers (object arrays are slow and quirky)
    id_arr = np.asarray(ids, dtype=object)
    id_rank = np.empty(len(id_arr), dtype=np.int64)
    id_rank[np.argsort(id_arr.astype(str), kind="stable")] = np.arange(len(id_arr))
    key = np.where(np.isnan(s), np.inf, -s)
    return np.lexsort((id_rank, key)).astype(np.int64)


def grouped_order(
    groups: np.ndarray, scores: np.ndarray, id_ranks: np.ndarray
) -> np.ndarray:
    """Vectorised :func:`order` within groups (e.g. per question, per config).

    ``id_ranks`` are integer ranks of the ids in ascending id order (compute them
    once with :func:`id_ranks`). Rows come back grouped by ``groups`` ascending,
    each group ordered by score descending then id ascending.
    """
    key = np.where(np.isnan(scores), np.inf, -scores)
    return np.lexsort((id_ranks, key, groups)).astype(np.int64)


def id_ranks(ids: Sequence[str] | np.ndarray) -> np.ndarray:
    """Dense integer rank of each id in ascending string order (equal ids share a rank)."""
    arr = np.asarray(ids, dtype=str)
    _, inverse = np.unique(arr, return_inverse=True)
    return inverse.astype(np.int64)


def ranks_from_order(n: int, idx: np.ndarray) -> np.ndarray:
    """1-based rank of each item given the sorted index array ``idx``."""
    r = np.empty(n, dtype=np.int64)
    r[idx] = np.arange(1, n + 1)
    return r
