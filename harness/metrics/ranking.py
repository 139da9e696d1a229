"""Page-level retrieval metrics with canonical, round-tripping names.

Chunks collapse to their page in fused order (first occurrence wins), then:

* ``hit@k``      1 if any relevant page is in the top k pages, else 0 (ir_measures ``Success@k``).
* ``recall@k``   fraction of the question's *requirements* met by the top k pages; a
                 requirement is a set of alternative pages, met by any one of them. With
                 single-page requirements it equals ir_measures ``R@k``.
* ``P@k``        relevant pages in the top k, divided by k.
* ``MRR@k``      1 / rank of the first relevant page if it is within k, else 0 (``RR@k``).
* ``nDCG@k``     sum over the top k pages of gain/log2(rank+1), over the same sum of the
                 ideal order (the question's grades sorted descending, cut at k); gain =
                 the page's grade, 1 for every relevant page when the gold set gives no
                 grades (trec_eval ``ndcg_cut``, linear gains; Jarvelin & Kekalainen 2002).
* ``MAP@k``      average precision at k: sum of P@i over ranks i <= k holding a relevant
                 page, over R (relevant pages); binary: grades do not matter (trec_eval
                 ``map_cut``, ir_measures ``AP@k``).
* ``first_rel_rank``  rank of the first relevant page; +inf when none was retrieved
                 (lower is better; aggregate with the median).
* ``top_score``  fused score of the rank-1 chunk; 0.0 when nothing was retrieved.
* ``top_score_ratio`` top_score / ceiling; defined for every question, answerable or not:
                 for unanswerable questions it is the evidence an answer gate would use.

Direction, scope, aggregate and the names other tools use are declared once in
:mod:`harness.metrics.info`; this module only computes.

Every question gets a row for every metric. Ranking metrics of unanswerable
questions (no relevant page) take the metric's default and are left out of means
(the ``answerable`` column says which rows count); score metrics count everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from harness.core.errors import RegistryError
from harness.core.registry import Registry
from harness.goldset.records import Question
from harness.metrics.info import FAMILIES, MetricFamily, metric_name, resolve


@dataclass(frozen=True)
class PageLists:
    """G ranked page lists, padded to D columns (D >= every cutoff asked for).

    ``rel[g, i]``: the page at rank i+1 is relevant; ``req[g, i]``: bitmask of the
    requirements it meets; ``n_req``/``n_rel``: requirements / relevant pages of the
    question; ``first_rel``: rank of the first relevant page over the *whole* list
    (inf if none); ``top_score``/``ceiling``: fused score of the first chunk and the
    config's ceiling. ``gain[g, i]``: the grade of the page at rank i+1 (0 if not
    relevant) and ``ideal_gain[g]``: the question's grades sorted descending, padded
    with 0; both None for binary relevance (every relevant page has grade 1).
    """

    rel: np.ndarray
    req: np.ndarray
    n_req: np.ndarray
    n_rel: np.ndarray
    first_rel: np.ndarray
    top_score: np.ndarray
    ceiling: np.ndarray
    gain: np.ndarray | None = None
    ideal_gain: np.ndarray | None = None


@dataclass(frozen=True)
class Family:
    """A computable metric family: its declared facts (:mod:`harness.metrics.info`)
    and the function computing it from page lists."""

    info: MetricFamily
    compute: Callable[[PageLists, int], np.ndarray]

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def takes_cutoff(self) -> bool:
        return self.info.takes_cutoff

    @property
    def higher_is_better(self) -> bool:
        return self.info.direction == "higher"

    @property
    def default(self) -> float:
        return self.info.default

    @property
    def kind(self) -> str:
        return self.info.kind

    @property
    def aggregate(self) -> str:
        return self.info.aggregate

    @property
    def doc(self) -> str:
        return self.info.description


@dataclass(frozen=True)
class MetricSpec:
    """A parsed metric: family plus cutoff. ``name`` is canonical and round-trips."""

    family: Family
    cutoff: int | None

    @property
    def name(self) -> str:
        return metric_name(self.family.name, self.cutoff)

    @property
    def higher_is_better(self) -> bool:
        return self.family.higher_is_better

    @property
    def default(self) -> float:
        return self.family.default

    @property
    def kind(self) -> str:
        return self.family.kind

    def compute(self, lists: PageLists) -> np.ndarray:
        return self.family.compute(lists, self.cutoff or 0)


METRICS: Registry[Family] = Registry("metric")


def _family(name: str) -> Callable[[Callable[[PageLists, int], np.ndarray]], Family]:
    """Register the compute function of the declared ranking or score family ``name``."""
    def deco(fn: Callable[[PageLists, int], np.ndarray]) -> Family:
        info = FAMILIES.get(name)
        if info.kind not in _KINDS:
            raise RegistryError(f"metric {name} is declared as {info.kind}, not ranking or score")
        return METRICS.add(name, Family(info, fn))

    return deco


_KINDS = ("ranking", "score")


def _popcount(x: np.ndarray) -> np.ndarray:
    return np.bitwise_count(x.astype(np.uint64)).astype(np.float64)


@_family("hit")
def _hit(p: PageLists, k: int) -> np.ndarray:
    return np.asarray(p.rel[:, :k].any(axis=1), dtype=np.float64)


@_family("recall")
def _recall(p: PageLists, k: int) -> np.ndarray:
    met = np.bitwise_or.reduce(p.req[:, :k], axis=1) if k else np.zeros(len(p.req), np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(p.n_req > 0, _popcount(met) / np.maximum(p.n_req, 1), 0.0)


@_family("P")
def _precision(p: PageLists, k: int) -> np.ndarray:
    hits: np.ndarray = p.rel[:, :k].sum(axis=1)
    return hits / float(k)


@_family("MRR")
def _mrr(p: PageLists, k: int) -> np.ndarray:
    return np.where(p.first_rel <= k, 1.0 / np.where(np.isfinite(p.first_rel), p.first_rel, 1.0), 0.0)


def _discounts(k: int) -> np.ndarray:
    """1 / log2(rank + 1) for ranks 1..k."""
    return 1.0 / np.log2(np.arange(2, k + 2))


@_family("nDCG")
def _ndcg(p: PageLists, k: int) -> np.ndarray:
    gains = (p.gain if p.gain is not None else p.rel.astype(np.float64))[:, :k]
    disc = _discounts(k)
    dcg = (gains * disc[None, : gains.shape[1]]).sum(axis=1)
    if p.ideal_gain is None:
        ideal_cum = np.r_[0.0, np.cumsum(disc)]
        idcg = ideal_cum[np.minimum(p.n_rel, k).astype(np.int64)]
    else:
        ideal = p.ideal_gain[:, :k]
        idcg = (ideal * disc[None, : ideal.shape[1]]).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1.0), 0.0)


@_family("MAP")
def _average_precision(p: PageLists, k: int) -> np.ndarray:
    rel = p.rel[:, :k].astype(np.float64)
    precision_at = np.cumsum(rel, axis=1) / np.arange(1, rel.shape[1] + 1)[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(p.n_rel > 0, (precision_at * rel).sum(axis=1) / np.maximum(p.n_rel, 1), 0.0)


@_family("first_rel_rank")
def _first_rel(p: PageLists, k: int) -> np.ndarray:
    return p.first_rel.astype(np.float64)


@_family("top_score")
def _top_score(p: PageLists, k: int) -> np.ndarray:
    return p.top_score.astype(np.float64)


@_family("top_score_ratio")
def _top_ratio(p: PageLists, k: int) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        # NaN where the fusion method has no ceiling (CombSUM z-score, Borda): no ratio, never a plausible 0
        return np.where(np.isnan(p.ceiling), np.nan,
                        np.where(p.ceiling > 0, p.top_score / np.where(p.ceiling > 0, p.ceiling, 1.0), 0.0))


def parse(name: str) -> MetricSpec:
    """Parse a metric name (canonical or an alias, any case) into its canonical spec.

    >>> parse("ndcg@10").name, parse("Success@5").name
    ('nDCG@10', 'hit@5')
    """
    info = resolve(name, kinds=_KINDS)
    return MetricSpec(METRICS.get(info.family.name), info.cutoff)


DEFAULT_METRICS = ("hit@1", "hit@5", "recall@5", "recall@10", "MRR@10", "nDCG@10",
                   "first_rel_rank", "top_score", "top_score_ratio")


def depth_needed(specs: Sequence[MetricSpec]) -> int:
    return max([s.cutoff or 1 for s in specs] + [1])


def compute(specs: Sequence[MetricSpec], lists: PageLists) -> dict[str, np.ndarray]:
    """Every metric for every group: ``{canonical name: (G,) float64}``."""
    return {s.name: s.compute(lists) for s in specs}


def requirement_masks(question: Question) -> dict[str, int]:
    """Page id -> bitmask of the requirements it meets (bit i = requirement i)."""
    if len(question.requirements) > 62:
        raise ValueError(f"question {question.question_id}: more than 62 requirements")
    masks: dict[str, int] = {}
    for i, req in enumerate(question.requirements):
        for ref in req:
            masks[str(ref)] = masks.get(str(ref), 0) | (1 << i)
    return masks


def score_ranking(pages_in_order: Sequence[str], question: Question, metrics: Sequence[str],
                  top_score: float = 0.0, ceiling: float = 0.0) -> dict[str, float]:
    """Score one ranked page list (page ids ``doc#page``, duplicates collapse to the
    first occurrence) for one question. Convenience for imported rankings."""
    specs = [parse(m) for m in metrics]
    seen: dict[str, None] = {}
    for p in pages_in_order:
        seen.setdefault(p, None)
    pages = list(seen)
    masks = requirement_masks(question)
    d = max(depth_needed(specs), len(pages), 1)
    rel = np.zeros((1, d), bool)
    req = np.zeros((1, d), np.int64)
    for i, p in enumerate(pages):
        rel[0, i] = p in question.relevant_pages
        req[0, i] = masks.get(p, 0)
    grades = question.page_grades
    gain = np.array([[float(grades.get(p, 0)) for p in pages] + [0.0] * (d - len(pages))])
    ideal = np.array([sorted(map(float, grades.values()), reverse=True) or [0.0]], dtype=np.float64)
    hits = np.flatnonzero(rel[0])
    lists = PageLists(rel, req, np.array([len(question.requirements)]),
                      np.array([len(question.relevant_pages)]),
                      np.array([hits[0] + 1.0 if len(hits) else np.inf]),
                      np.array([top_score]), np.array([ceiling]),
                      gain if question.graded else None, ideal if question.graded else None)
    return {k: float(v[0]) for k, v in compute(specs, lists).items()}
