"""Page-level retrieval metrics with canonical, round-tripping names.

Chunks collapse to their page in fused order (first occurrence wins), then:

* ``hit@k``      1 if any relevant page is in the top k pages, else 0 (ir_measures ``Success@k``).
* ``recall@k``   fraction of the question's *requirements* met by the top k pages; a
                 requirement is a set of alternative pages, met by any one of them. With
                 single-page requirements it equals ir_measures ``R@k``.
* ``P@k``        relevant pages in the top k, divided by k.
* ``MRR@k``      1 / rank of the first relevant page if it is within k, else 0 (``RR@k``).
* ``nDCG@k``     binary gains: sum over relevant pages in the top k of 1/log2(rank+1), over
                 the ideal sum_{i=1..min(R,k)} 1/log2(i+1), R = relevant pages (trec_eval
                 ``ndcg_cut``; Jarvelin & Kekalainen 2002).
* ``first_rel_rank``  rank of the first relevant page; +inf when none was retrieved
                 (lower is better; aggregate with the median).
* ``top_score``  fused score of the rank-1 chunk; 0.0 when nothing was retrieved.
* ``top_score_ratio`` top_score / ceiling; defined for every question, answerable or not:
                 for unanswerable questions it is the evidence an answer gate would use.

Every question gets a row for every metric. Ranking metrics of unanswerable
questions (no relevant page) take the metric's default and are left out of means
(the ``answerable`` column says which rows count); score metrics count everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from harness.core.errors import RegistryError
from harness.core.registry import Registry
from harness.goldset.records import Question


@dataclass(frozen=True)
class PageLists:
    """G ranked page lists, padded to D columns (D >= every cutoff asked for).

    ``rel[g, i]``: the page at rank i+1 is relevant; ``req[g, i]``: bitmask of the
    requirements it meets; ``n_req``/``n_rel``: requirements / relevant pages of the
    question; ``first_rel``: rank of the first relevant page over the *whole* list
    (inf if none); ``top_score``/``ceiling``: fused score of the first chunk and the
    config's ceiling.
    """

    rel: np.ndarray
    req: np.ndarray
    n_req: np.ndarray
    n_rel: np.ndarray
    first_rel: np.ndarray
    top_score: np.ndarray
    ceiling: np.ndarray


@dataclass(frozen=True)
class Family:
    name: str
    takes_cutoff: bool
    higher_is_better: bool
    default: float
    kind: str  # "ranking" (answerable questions only in means) or "score"
    compute: Callable[[PageLists, int], np.ndarray]
    aggregate: str = "mean"
    doc: str = ""


@dataclass(frozen=True)
class MetricSpec:
    """A parsed metric: family plus cutoff. ``name`` is canonical and round-trips."""

    family: Family
    cutoff: int | None

    @property
    def name(self) -> str:
        return self.family.name + (f"@{self.cutoff}" if self.cutoff is not None else "")

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
_ALIASES: dict[str, str] = {}


def _family(name: str, takes_cutoff: bool, higher: bool, default: float, kind: str,
            aggregate: str = "mean") -> Callable[[Callable[[PageLists, int], np.ndarray]], Family]:
    def deco(fn: Callable[[PageLists, int], np.ndarray]) -> Family:
        fam = METRICS.add(name, Family(name, takes_cutoff, higher, default, kind, fn, aggregate,
                                       (fn.__doc__ or "").strip()))
        _ALIASES[name.lower()] = name
        return fam

    return deco


def _popcount(x: np.ndarray) -> np.ndarray:
    return np.bitwise_count(x.astype(np.uint64)).astype(np.float64)


@_family("hit", True, True, 0.0, "ranking")
def _hit(p: PageLists, k: int) -> np.ndarray:
    """1 if a relevant page is in the top k."""
    return p.rel[:, :k].any(axis=1).astype(np.float64)


@_family("recall", True, True, 0.0, "ranking")
def _recall(p: PageLists, k: int) -> np.ndarray:
    """Fraction of requirements met by the top k pages."""
    met = np.bitwise_or.reduce(p.req[:, :k], axis=1) if k else np.zeros(len(p.req), np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(p.n_req > 0, _popcount(met) / np.maximum(p.n_req, 1), 0.0)


@_family("P", True, True, 0.0, "ranking")
def _precision(p: PageLists, k: int) -> np.ndarray:
    """Relevant pages in the top k over k."""
    return p.rel[:, :k].sum(axis=1) / float(k)


@_family("MRR", True, True, 0.0, "ranking")
def _mrr(p: PageLists, k: int) -> np.ndarray:
    """Reciprocal rank of the first relevant page within k."""
    return np.where(p.first_rel <= k, 1.0 / np.where(np.isfinite(p.first_rel), p.first_rel, 1.0), 0.0)


@_family("nDCG", True, True, 0.0, "ranking")
def _ndcg(p: PageLists, k: int) -> np.ndarray:
    """Binary-gain nDCG over the top k pages."""
    disc = 1.0 / np.log2(np.arange(2, k + 2))
    dcg = (p.rel[:, :k] * disc[None, : p.rel[:, :k].shape[1]]).sum(axis=1)
    ideal_cum = np.r_[0.0, np.cumsum(disc)]
    idcg = ideal_cum[np.minimum(p.n_rel, k).astype(np.int64)]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1.0), 0.0)


@_family("first_rel_rank", False, False, float("inf"), "ranking", aggregate="median")
def _first_rel(p: PageLists, k: int) -> np.ndarray:
    """Rank of the first relevant page (inf if none)."""
    return p.first_rel.astype(np.float64)


@_family("top_score", False, True, 0.0, "score")
def _top_score(p: PageLists, k: int) -> np.ndarray:
    """Fused score of the rank-1 chunk."""
    return p.top_score.astype(np.float64)


@_family("top_score_ratio", False, True, 0.0, "score")
def _top_ratio(p: PageLists, k: int) -> np.ndarray:
    """Top fused score over the config's ceiling."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(p.ceiling > 0, p.top_score / np.where(p.ceiling > 0, p.ceiling, 1.0), 0.0)


_NAME = re.compile(r"^([A-Za-z_]+)(?:@(\d+))?$")


def parse(name: str) -> MetricSpec:
    """Parse a metric name (case-insensitive family) into its canonical spec.

    >>> parse("ndcg@10").name
    'nDCG@10'
    """
    m = _NAME.match(name.strip())
    fam_name = _ALIASES.get(m.group(1).lower()) if m else None
    if m is None or fam_name is None:
        raise RegistryError(f"unknown metric {name!r}; families: "
                            + ", ".join(f + ("@k" if METRICS.get(f).takes_cutoff else "")
                                        for f in METRICS.names()))
    fam = METRICS.get(fam_name)
    cutoff = int(m.group(2)) if m.group(2) else None
    if fam.takes_cutoff and (cutoff is None or cutoff < 1):
        raise RegistryError(f"metric {name!r} needs a cutoff >= 1, e.g. {fam.name}@10")
    if not fam.takes_cutoff and cutoff is not None:
        raise RegistryError(f"metric {fam.name!r} takes no cutoff")
    return MetricSpec(fam, cutoff)


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
    hits = np.flatnonzero(rel[0])
    lists = PageLists(rel, req, np.array([len(question.requirements)]),
                      np.array([len(question.relevant_pages)]),
                      np.array([hits[0] + 1.0 if len(hits) else np.inf]),
                      np.array([top_score]), np.array([ceiling]))
    return {k: float(v[0]) for k, v in compute(specs, lists).items()}
