"""The scoring path of ``rulegauge run``: every config of a grid -> per-question metrics.

Ranks and arm scores are laid out densely as (arms x questions x candidates),
candidates of a question in chunk-id order, by the fusion kernel
(:mod:`rulegauge.fusion.kernel`), which scores each config by its fusion method into a
:class:`ConfigScores`: order keys (every method's float score, shifted positive for
the score-based ones) from which the few candidates a question's lists need are put in
exact fused order (the method's exact rule, :func:`rulegauge.fusion.kernel.exact_rows`).
The page lists the metrics need (:func:`rulegauge.metrics.ranking.score`: top-m pages,
the whole list for ``first_rel_rank``, the condensed list for ``judged_only`` metrics)
are built from it by :func:`rulegauge.metrics.page_lists.page_lists`; every metric value
equals the full path (:mod:`rulegauge.metrics.pages` over :func:`rulegauge.fusion.fuse.fuse`);
tests compare both on every metric.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import pandas as pd

from rulegauge.fusion.configs import FusionConfig
from rulegauge.fusion.kernel import config_scores, exact_rows, planes_of, top_columns
from rulegauge.fusion.matrix import RankMatrix
from rulegauge.fusion.method import config_ceiling
from rulegauge.fusion.planes import Planes
from rulegauge.metrics.family import Metric
from rulegauge.metrics.gold import Gold
from rulegauge.metrics.page_lists import Candidates
from rulegauge.metrics.ranking import parse, score
from rulegauge.pipeline.forked import forked_map

T = TypeVar("T")
X = TypeVar("X")


@dataclass(frozen=True)
class DenseRanks:
    """The run's arms as the fusion kernel's dense planes (ranks and arm scores, (A, Q, U)):
    a question's candidates in chunk-id order, padded (:func:`rulegauge.fusion.kernel.planes_of`)."""

    planes: Planes

    @classmethod
    def build(cls, matrix: RankMatrix) -> DenseRanks:
        return cls(planes_of(matrix)[0])


@dataclass(frozen=True)
class ConfigScores:
    """One config's order keys over the dense candidates (a :class:`~rulegauge.metrics.page_lists.Ordering`):
    ``scores`` are the keys the top-m path selects on (the fused score, shifted positive for the
    score-based methods, :func:`rulegauge.fusion.kernel.config_scores`), ``fused`` the fused scores."""

    dense: DenseRanks
    config: FusionConfig
    candidates: Candidates
    scores: np.ndarray
    fused: np.ndarray
    tol: float
    ties: bool
    _tops: list[np.ndarray] = field(default_factory=list, compare=False, repr=False)

    @classmethod
    def of(cls, d: DenseRanks, candidates: Candidates, c: FusionConfig) -> ConfigScores:
        k = config_scores(d.planes, c)  # key 0.0 = unvoted or padding: never enters a list
        return cls(d, c, candidates, k.key, k.score, k.tol, k.ties)

    @property
    def ceiling(self) -> float:
        return config_ceiling(self.config)

    def exact(self, rows: np.ndarray, s: np.ndarray, cand: np.ndarray, keys: np.ndarray | None = None) -> np.ndarray:
        return exact_rows(self.dense.planes, self.config, rows, s, cand, self.tol, ties=self.ties, fused=self.fused,
                          keys=keys)

    def top(self, m: int) -> np.ndarray:
        """The ``m`` best candidate columns of every question in exact order, computed once
        per config for the widest ``m`` asked first (the fused rows ask before the metrics)."""
        nq, u = self.scores.shape
        m = min(m, u)
        for cand in self._tops:
            if cand.shape[1] >= m:
                return cand
        cand = self.exact(np.arange(nq), self.scores, top_columns(self.scores, m))
        cand.flags.writeable = False
        self._tops.append(cand)
        return cand

    def top_score(self, rows: np.ndarray, col: np.ndarray) -> np.ndarray:
        return np.asarray(self.fused[rows, col], np.float64)


def ordered_map(fn: Callable[[X], T], items: Iterable[X], workers: int) -> Iterator[T]:
    """``fn`` over ``items`` on ``workers`` threads, results in input order, lazily: at
    most ``2 * workers`` items are in flight, so a slow consumer (a table writer) holds
    only a few results at a time."""
    if workers <= 1:
        yield from map(fn, items)
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        window: deque[Future[T]] = deque()
        for x in items:
            window.append(pool.submit(fn, x))
            if len(window) >= 2 * workers:
                yield window.popleft().result()
        while window:
            yield window.popleft().result()


FORK_MIN_CONFIGS = 16
"""Fewest configs worth forking worker processes for (a fork costs about as much as
scoring a few configs); fewer are scored on threads."""


def config_pass(matrix: RankMatrix, gold: Gold, configs: Sequence[FusionConfig],
                fn: Callable[[ConfigScores], T], workers: int | None = None, *,
                fork_from: int | None = None) -> Iterator[T]:
    """``fn`` of each config's :class:`ConfigScores` (one ``config_scores`` per config), in
    config order, on ``workers`` threads (default: cores, at most 4). ``fork_from``: the
    configs from that index on are scored in that many forked worker processes instead
    (:mod:`rulegauge.pipeline.forked`: about twice the rate of threads on two cores; ``fn``'s
    results are pickled back, so give it where they are small), when there are at least
    :data:`FORK_MIN_CONFIGS` of them. Each config is independent, so the results do not
    depend on the thread or process count."""
    dense, candidates = DenseRanks.build(matrix), Candidates.build(matrix, gold)
    n = workers or min(4, os.cpu_count() or 1)

    def one(c: FusionConfig) -> T:
        return fn(ConfigScores.of(dense, candidates, c))

    forked = fork_from is not None and n > 1 and len(configs) - fork_from >= FORK_MIN_CONFIGS
    head, tail = (configs[:fork_from], configs[fork_from:]) if forked else (configs, configs[:0])
    yield from ordered_map(one, head, n if len(head) > 1 else 1)
    if tail:
        yield from forked_map(one, tail, n, ordered_map)


def score_configs(matrix: RankMatrix, gold: Gold, configs: Sequence[FusionConfig],
                  specs: Sequence[Metric], workers: int | None = None) -> list[dict[str, np.ndarray]]:
    """Per config (in order), ``{metric name: (Q,) values}`` exactly as the full path gives.

    Ranking metrics of unanswerable questions take the metric's default (the page lists
    the metrics need: :func:`rulegauge.metrics.ranking.score`); a large grid is scored in
    forked worker processes (:func:`config_pass`)."""
    return list(config_pass(matrix, gold, configs, lambda o: score(specs, o, gold), workers, fork_from=0))


def sweep(matrix: RankMatrix, gold: Gold, configs: Sequence[FusionConfig],
          metrics: Sequence[str], workers: int | None = None) -> pd.DataFrame:
    """Mean of each metric per config over answerable questions (configs x metrics)."""
    specs = [parse(x) for x in metrics]
    answerable = gold.n_req > 0
    per = score_configs(matrix, gold, configs, specs, workers)
    return pd.DataFrame([{"config_id": c.config_id,
                          **{k: float(v[answerable].mean()) if answerable.any() else float("nan")
                             for k, v in vals.items()}} for c, vals in zip(configs, per, strict=True)])
