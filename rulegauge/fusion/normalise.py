"""Per-list score normalisations of the score-based fusion methods.

Each arm's scores are normalised over that arm's list for the question (the
chunks it ranked within the config's depth); candidates the arm did not rank get
0.0. ``scores`` and ``votes`` are (Q, U) planes of one arm; every function is one
fixed sequence of numpy operations, so its floats are the same in every process.

* ``min-max`` (ranx ``min-max``): ``(s - min) / max(max - min, 1e-9)``; a one-chunk
  list normalises to 0.0, as in ranx.
* ``z-score`` (ranx ``zmuv``): ``(s - mean) / max(std, 1e-9)``, population std.
* ``sum`` (ranx ``sum``): ``(s - min) / max(sum(s) - n * min, 1e-9)``.
* ``l2`` (OpenSearch ``l2``): ``s / sqrt(sum(s^2))`` (0.0 when every score is 0).
* ``min-max-os`` (OpenSearch ``min_max``): ``(s - min) / (max - min)``, 1.0 when
  ``max == min``, and 0.001 instead of 0.0 for the list's lowest score (so a chunk
  an arm ranked is never scored as if the arm had not).
* ``relative`` (Weaviate ``relativeScoreFusion``): ``(s - min) / (max - min)``, 1.0
  when ``max == min``.

Huge but finite scores cannot overflow: a list whose largest magnitude is over 2^500 is
first scaled by a power of two to magnitudes below 1 (:func:`tame`: exact, so every
normalisation, being scale-invariant, gives the values it would give in exact arithmetic;
lists below that bound are untouched, bit for bit, so ranx's 1e-9 floor acts as in ranx).
Without it ``(s - min)`` of ``+-1e308`` is ``inf`` and ``inf / inf`` NaN.

References: Bassani, "ranx.fuse" (ECIR 2022), ``ranx.normalization``; OpenSearch
neural-search normalization processor; Weaviate hybrid search, relative score fusion.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from rulegauge.core.registry import Registry
from rulegauge.fusion.planes import Planes

if TYPE_CHECKING:
    from rulegauge.fusion.records import FusionConfig

Norm = Callable[[np.ndarray, np.ndarray], np.ndarray]
NORMS: Registry[Norm] = Registry("score normalisation")
FLOOR = 1e-9  # ranx's smallest denominator


TAME_ABOVE = 2.0**500  # squares (l2) and sums of many such scores stay finite below it


def tame(scores: np.ndarray, votes: np.ndarray) -> np.ndarray:
    """``scores`` with each row whose largest voted magnitude exceeds :data:`TAME_ABOVE`
    multiplied by ``2**-e`` (``e`` that magnitude's binary exponent), so its magnitudes fall
    below 1; other rows (and unvoted cells) unchanged. Exact: a power of two."""
    mag = np.where(votes, np.abs(scores), 0.0).max(axis=1, keepdims=True, initial=0.0)
    if not (mag > TAME_ABOVE).any():
        return scores
    _, exp = np.frexp(mag)
    return np.where(mag > TAME_ABOVE, np.ldexp(scores, -exp), scores)


def _stats(scores: np.ndarray, votes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(min, max, count) of each row over its voted cells, as (Q, 1) columns."""
    lo = np.where(votes, scores, np.inf).min(axis=1, keepdims=True, initial=np.inf)
    hi = np.where(votes, scores, -np.inf).max(axis=1, keepdims=True, initial=-np.inf)
    n = votes.sum(axis=1, keepdims=True)
    lo = np.where(n > 0, lo, 0.0)
    hi = np.where(n > 0, hi, 0.0)
    return lo, hi, n


@NORMS.register("min-max")
def min_max(scores: np.ndarray, votes: np.ndarray) -> np.ndarray:
    scores = tame(scores, votes)
    lo, hi, _ = _stats(scores, votes)
    return np.where(votes, (scores - lo) / np.maximum(hi - lo, FLOOR), 0.0)


@NORMS.register("z-score")
def z_score(scores: np.ndarray, votes: np.ndarray) -> np.ndarray:
    scores = tame(scores, votes)
    _, _, n = _stats(scores, votes)
    safe_n = np.maximum(n, 1)
    mean = np.where(votes, scores, 0.0).sum(axis=1, keepdims=True) / safe_n
    dev = np.where(votes, np.abs(scores - mean) ** 2, 0.0).sum(axis=1, keepdims=True) / safe_n
    return np.where(votes, (scores - mean) / np.maximum(np.sqrt(dev), FLOOR), 0.0)


@NORMS.register("sum")
def sum_norm(scores: np.ndarray, votes: np.ndarray) -> np.ndarray:
    scores = tame(scores, votes)
    lo, _, n = _stats(scores, votes)
    total = np.where(votes, scores, 0.0).sum(axis=1, keepdims=True)
    return np.where(votes, (scores - lo) / np.maximum(total - lo * n, FLOOR), 0.0)


@NORMS.register("l2")
def l2(scores: np.ndarray, votes: np.ndarray) -> np.ndarray:
    scores = tame(scores, votes)
    norm = np.sqrt(np.where(votes, scores * scores, 0.0).sum(axis=1, keepdims=True))
    return np.where(votes & (norm > 0), scores / np.where(norm > 0, norm, 1.0), 0.0)


def _relative(scores: np.ndarray, votes: np.ndarray) -> np.ndarray:
    scores = tame(scores, votes)
    lo, hi, _ = _stats(scores, votes)
    span = hi - lo
    return np.where(votes, np.where(span > 0, (scores - lo) / np.where(span > 0, span, 1.0), 1.0), 0.0)


@NORMS.register("min-max-os")
def min_max_opensearch(scores: np.ndarray, votes: np.ndarray) -> np.ndarray:
    out = _relative(scores, votes)
    return np.where(votes & (out == 0.0), 0.001, out)


NORMS.add("relative", _relative)


def normalised(planes: Planes, config: FusionConfig, j: int, norm: str) -> np.ndarray:
    """(Q, U) the config's ``j``-th arm's scores normalised by ``norm`` over its list (cut
    to its depth; rank order), 0.0 where it did not vote. Kept per (arm, norm, depth) for
    the other configs of the grid (:meth:`rulegauge.fusion.planes.Planes.memo`)."""
    fn = NORMS.get(norm)

    def make() -> np.ndarray:
        _, s, votes = planes.listed(config, j)
        return planes.spread(config, j, fn(s, votes))

    return planes.memo(("normalised", config.arms[j], norm, int(config.depths[j])), make)
