"""Page-level retrieval metrics with canonical, round-tripping names.

Chunks collapse to their page in fused order (first occurrence wins), then:

* ``hit@k``      1 if any relevant page is in the top k pages, else 0 (ir_measures ``Success@k``).
* ``recall@k``   fraction of the question's *requirements* met by the top k pages; a
                 requirement is a set of alternative pages, met by any one of them. With
                 single-page requirements it equals ``R@k``.
* ``R@k``        fraction of the question's *relevant pages* in the top k pages (ir_measures
                 ``R@k``, trec_eval ``recall_k``, ranx ``recall@k``): an any-of group counts
                 each of its pages.
* ``P@k``        relevant pages in the top k, divided by k.
* ``MRR@k``      1 / rank of the first relevant page if it is within k, else 0 (``RR@k``).
* ``recip_rank`` 1 / rank of the first relevant page in the whole list, 0 when none is retrieved
                 (trec_eval ``recip_rank``, ir_measures ``RR`` without a cutoff).
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

* ``RBP@k``      rank-biased precision with persistence ``p`` (default 0.8; ``RBP(p=0.9)@10``):
                 (1 - p) * sum over the top k pages of rel_i * p^(i - 1), binary relevance
                 (Moffat & Zobel 2008; ir_measures ``RBP(rel=1)@k``); a lower bound, the
                 residual beyond k is not added.
* ``Judged@k``   fraction of the top k pages the gold set judged (ir_measures ``Judged@k``:
                 divided by min(k, pages ranked); 0.0 when nothing was ranked).
* ``foreign@k``  fraction of the top k pages that came from outside the corpus: foreign hits,
                 ids an arm read from outside that match no chunk (another game's page, a
                 stale edition; :mod:`rulegauge.corpus.foreign`), divided by min(k, pages
                 ranked) as ``Judged@k``; 0.0 when nothing was ranked; lower is better. Every
                 question counts, answerable or not (a foreign page shown for a question
                 nothing answers is shown all the same).

Each family is declared here, once, with its facts, its needs and the names other
tools use, on its computation (:func:`rulegauge.metrics.family.declare`). Ranking
metrics with a cutoff also have a condensed-list variant, ``nDCG(judged_only=True)@10``:
the same computation on the list with unjudged pages removed (Sakai 2007).

Every question gets a row for every metric. Ranking metrics of unanswerable
questions (no relevant page) take the metric's default and are left out of means
(the ``answerable`` column says which rows count), unless the family's scope is ``all``
(``foreign@k``); score metrics count everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rulegauge.core.errors import RegistryError
from rulegauge.corpus.records import page_key
from rulegauge.fusion.configs import FusionConfig
from rulegauge.fusion.fuse import Fused, RankMatrix
from rulegauge.goldset.records import Question
from rulegauge.metrics.contract import check_values
from rulegauge.metrics.family import METRICS, Metric, MetricParam, alias, declare
from rulegauge.metrics.gold import Gold, make_gold
from rulegauge.metrics.page_lists import Ordering, PageLists, page_lists

Compute = Callable[..., np.ndarray]
"""``(lists, k, **params) -> (G,) values``: the family's declared parameters as keywords."""


def _family(name: str, *, description: str, aliases: Sequence[tuple[str, str, str]] = (),
            **facts: Any) -> Callable[[Compute], Compute]:
    """Declare the ranking family ``name`` on its computation ``(lists, k) -> (G,) values``;
    ``aliases``: (other tool's name, tool, note where the meaning differs)."""
    facts = {"kind": "ranking", "direction": "higher", "scope": "answerable",
             "takes_cutoff": True, **facts}
    def deco(fn: Compute) -> Compute:
        condensable = facts.pop("condensable", facts["kind"] == "ranking" and facts["takes_cutoff"])
        declare(name, description=description, compute=fn, condensable=condensable, **facts)
        for other, source, note in aliases:
            alias(other, name, source=source, note=note)
        return fn

    return deco


def _popcount(x: np.ndarray) -> np.ndarray:
    return np.bitwise_count(x.astype(np.uint64)).astype(np.float64)


@_family("hit", description="1 if any relevant page is in the top k pages, else 0",
         reference="ir_measures Success@k; trec_eval success_k",
         aliases=(("Success", "ir_measures", ""), ("success_k", "trec_eval", ""), ("success", "trec_eval", ""),
                  ("hit_rate", "ranx", "")))
def _hit(p: PageLists, k: int) -> np.ndarray:
    return np.asarray(p.rel[:, :k].any(axis=1), dtype=np.float64)


@_family("recall", description="fraction of the question's requirements met by the top k pages "
                               "(a requirement is a set of alternative pages, met by any one)",
         reference="rulegauge's own (R@k where every requirement is one page)")
def _recall(p: PageLists, k: int) -> np.ndarray:
    met = np.bitwise_or.reduce(p.req[:, :k], axis=1) if k else np.zeros(len(p.req), np.int64)
    count = _popcount(met)
    if p.by_page is not None:  # many single-page requirements: count pages (rulegauge.metrics.gold)
        count = np.where(p.by_page, np.count_nonzero(p.req[:, :k], axis=1), count)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(p.n_req > 0, count / np.maximum(p.n_req, 1), 0.0)


@_family("R", description="relevant pages in the top k, divided by the question's relevant pages "
                          "(an any-of group counts each of its pages)",
         reference="ir_measures R@k; trec_eval recall_k; ranx recall@k",
         aliases=(("R", "ir_measures", ""), ("recall_k", "trec_eval", "")))
def _page_recall(p: PageLists, k: int) -> np.ndarray:
    found: np.ndarray = p.rel[:, :k].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(p.n_rel > 0, found / np.maximum(p.n_rel, 1), 0.0)


@_family("P", description="relevant pages in the top k, divided by k",
         aliases=(("P", "ir_measures", ""), ("precision", "ranx", ""), ("P_k", "trec_eval", "")))
def _precision(p: PageLists, k: int) -> np.ndarray:
    hits: np.ndarray = p.rel[:, :k].sum(axis=1)
    return hits / float(k)


@_family("MRR", description="1 / rank of the first relevant page if it is within k, else 0",
         aliases=(("RR", "ir_measures", ""), ("mrr", "ranx", "")))
def _mrr(p: PageLists, k: int) -> np.ndarray:
    return np.where(p.first_rel <= k, 1.0 / np.where(np.isfinite(p.first_rel), p.first_rel, 1.0), 0.0)


@_family("recip_rank", takes_cutoff=False, needs=("whole_list",), reference="trec_eval recip_rank; ir_measures RR",
         description="1 / rank of the first relevant page in the whole list, 0 when none is retrieved",
         aliases=(("recip_rank", "trec_eval", ""),))
def _recip_rank(p: PageLists, k: int) -> np.ndarray:
    return np.where(np.isfinite(p.first_rel), 1.0 / np.where(np.isfinite(p.first_rel), p.first_rel, 1.0), 0.0)


def _discounts(k: int) -> np.ndarray:
    """1 / log2(rank + 1) for ranks 1..k."""
    return 1.0 / np.log2(np.arange(2, k + 2))


@_family("nDCG", needs=("grades",),
         description="normalised discounted cumulative gain over the top k pages, linear gains "
                     "(the page's grade; 1 when the gold set gives none), log2 discount",
         reference="Jarvelin & Kekalainen 2002; trec_eval ndcg_cut",
         aliases=(("nDCG", "ir_measures", ""), ("ndcg", "ranx", "linear gains, as ours (ranx ndcg_burges: refused)"),
                  ("ndcg_cut_k", "trec_eval", ""), ("ndcg_cut", "trec_eval", "")))
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


@_family("MAP", description="average precision at k: sum of P@i over the ranks i <= k holding a "
                            "relevant page, divided by the number of relevant pages (mean over "
                            "questions: MAP)", reference="trec_eval map_cut",
         aliases=(("AP", "ir_measures", ""), ("map", "ranx", ""), ("map_cut_k", "trec_eval", ""),
                  ("map_cut", "trec_eval", "")))
def _average_precision(p: PageLists, k: int) -> np.ndarray:
    rel = p.rel[:, :k].astype(np.float64)
    precision_at = np.cumsum(rel, axis=1) / np.arange(1, rel.shape[1] + 1)[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(p.n_rel > 0, (precision_at * rel).sum(axis=1) / np.maximum(p.n_rel, 1), 0.0)


@_family("RBP", description="rank-biased precision: (1 - p) * sum over the top k pages of rel_i * p^(i-1), "
                            "binary relevance; p is the persistence (the chance the reader goes on)",
         reference="Moffat & Zobel 2008; ir_measures RBP(rel=1)@k",
         params=(MetricParam("p", float, 0.8, "persistence: the chance the reader looks at the next page",
                             low=0.0, high=1.0, open_ends=True),))  # ir_measures' graded RBP: peer_names.SHARED
def _rbp(lists: PageLists, k: int, *, p: float) -> np.ndarray:
    rel = lists.rel[:, :k].astype(np.float64)
    weights = (1.0 - p) * np.power(p, np.arange(rel.shape[1], dtype=np.float64))
    out: np.ndarray = (rel * weights[None, :]).sum(axis=1)
    return out


@_family("Judged", needs=("judgments",), condensable=False, reference="ir_measures Judged@k",
         aliases=(("Judged", "ir_measures", ""),),
         description="fraction of the top k pages the gold set judged, relevant or not: judged "
                     "pages in the top k / min(k, pages ranked); 0.0 when nothing was ranked")
def _judged(p: PageLists, k: int) -> np.ndarray:
    if p.judged is None or p.n_pages is None:
        raise ValueError("Judged@k needs page lists built with judgments")
    n = np.minimum(p.n_pages, k)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, p.judged[:, :k].sum(axis=1) / np.maximum(n, 1), 0.0)


@_family("foreign", direction="lower", scope="all", condensable=False,
         reference="rulegauge: the share of the top k that no chunk of the corpus matched",
         description="fraction of the top k pages that came from outside the corpus (foreign hits: ids "
                     "matching no chunk, kept at their ranks): foreign pages in the top k / min(k, pages "
                     "ranked); 0.0 when nothing was ranked; every question counts")
def _foreign(p: PageLists, k: int) -> np.ndarray:
    if p.n_pages is None:
        raise ValueError("foreign@k needs page lists that count their pages")
    if p.foreign is None:  # the run has no foreign hit
        return np.zeros(len(p.rel), dtype=np.float64)
    n = np.minimum(p.n_pages, k)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, p.foreign[:, :k].sum(axis=1) / np.maximum(n, 1), 0.0)


@_family("first_rel_rank", direction="lower", aggregate="median", default=float("inf"), bounds=(1.0, float("inf")),
         takes_cutoff=False, needs=("whole_list",),
         description="rank of the first relevant page; +inf when none was retrieved (median)")
def _first_rel(p: PageLists, k: int) -> np.ndarray:
    return p.first_rel.astype(np.float64)


@_family("top_score", kind="score", scope="all", takes_cutoff=False,
         description="fused score of the rank-1 chunk; 0.0 when nothing was retrieved")
def _top_score(p: PageLists, k: int) -> np.ndarray:
    return p.top_score.astype(np.float64)


@_family("top_score_ratio", kind="score", scope="all", takes_cutoff=False,
         description="top_score / the config's ceiling; the evidence an answer gate would use; NaN for a "
                     "fusion method without a ceiling (docs/fusion.md)")
def _top_ratio(p: PageLists, k: int) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        # NaN where the fusion method has no ceiling (CombSUM z-score, Borda): no ratio, never a plausible 0
        return np.where(np.isnan(p.ceiling), np.nan,
                        np.where(p.ceiling > 0, p.top_score / np.where(p.ceiling > 0, p.ceiling, 1.0), 0.0))


def parse(name: str) -> Metric:
    """Parse a ranking or score metric name (canonical or an alias, any case).

    >>> parse("ndcg@10").name, parse("Success@5").name
    ('nDCG@10', 'hit@5')
    """
    try:
        return Metric.parse(name, kinds=_KINDS)
    except RegistryError:  # not declared yet: a package's module entry point may declare it (core/plugins)
        METRICS.names()
        return Metric.parse(name, kinds=_KINDS)


_KINDS = ("ranking", "score")
DEFAULT_METRICS = ("hit@1", "hit@5", "recall@5", "recall@10", "MRR@10", "nDCG@10",
                   "nDCG(judged_only=True)@10", "Judged@10", "first_rel_rank", "top_score",
                   "top_score_ratio")


def depth_needed(metrics: Sequence[Metric]) -> int:
    return max([m.cutoff or 1 for m in metrics] + [1])


def score(metrics: Sequence[Metric], source: Fused | Ordering, gold: Gold) -> dict[str, np.ndarray]:
    """Every metric for every question of ``gold``: ``{canonical name: (Q,) float64}``.

    The page lists are built as the metrics need them (``whole_list``; the condensed
    list for ``judged_only`` metrics); ranking metrics of unanswerable questions take
    the metric's default, but those of scope ``all``."""
    depth = depth_needed(metrics)
    answerable = gold.n_req > 0
    out: dict[str, np.ndarray] = {}
    for judged_only in (False, True):
        group = [m for m in metrics if m.judged_only == judged_only]
        if not group:
            continue
        lists = page_lists(source, gold, depth, judged_only=judged_only,
                           whole_list=any("whole_list" in m.needs for m in group))
        values = compute(group, lists)
        for m in group:
            v = values[m.name]
            defaulted = m.kind == "ranking" and m.scope == "answerable"  # foreign@k counts every question
            out[m.name] = (np.where(answerable, v, m.default) if defaulted else v).astype(np.float64)
            config = getattr(source, "config", None)  # every value within its declared bounds (metrics/contract)
            check_values(m, out[m.name], gold.questions, f"config {config.name}" if config is not None else "")
    return {m.name: out[m.name] for m in metrics}


def compute(metrics: Sequence[Metric], lists: PageLists) -> dict[str, np.ndarray]:
    """Each metric's raw values on ``lists`` (no defaults): ``{canonical name: (G,)}``.

    The computation is checked where it plugs in: what a plug-in's computation raises (but a
    :class:`RulegaugeError` or ``KeyboardInterrupt``) becomes
    :class:`rulegauge.core.plugins.PluginFailed` naming the metric and its module (exit 2, no
    traceback; a built-in's error raises as it is), and a result that is not G numbers is
    refused the same way."""
    return {m.name: _computed(m, lists) for m in metrics}


def _computed(m: Metric, lists: PageLists) -> np.ndarray:
    from rulegauge.core.errors import RulegaugeError
    from rulegauge.core.plugins import PluginFailed

    fn = m.family.compute
    where = str(getattr(fn, "__module__", "") or "")
    builtin = where.startswith("rulegauge.")
    g = len(lists.rel)
    try:
        values = np.asarray(fn(lists, m.cutoff or 0, **m.compute_params), dtype=np.float64)
    except (RulegaugeError, KeyboardInterrupt):
        raise
    except BaseException as exc:  # SystemExit too: a plug-in does not end a run (core/plugins)
        if builtin:
            raise
        raise PluginFailed(f"metric {m.name} (computed by {where}) failed scoring {g} questions: "
                           f"{type(exc).__name__}: {str(exc)[:200]}") from None
    if values.shape != (g,):
        raise PluginFailed(f"metric {m.name} (computed by {where}) returned shape "
                           f"{values.shape} for {g} questions; the contract is one value per question")
    return values


def score_ranking(pages_in_order: Sequence[str], question: Question, metrics: Sequence[str],
                  top_score: float = 0.0, ceiling: float = 0.0) -> dict[str, float]:
    """Score one ranked page list (page ids ``doc#page``, duplicates collapse to the
    first occurrence) for one question, through the same page lists as a run.
    Convenience for imported rankings; unanswerable questions score the defaults."""
    specs = [parse(m) for m in metrics]
    pages = list(dict.fromkeys(pages_in_order))
    where = {p: _doc_page(p, i) for i, p in enumerate(pages)}
    n = len(pages)
    matrix = RankMatrix(np.array([question.question_id], dtype=object), np.zeros(n, np.int64),
                        np.array(pages, dtype=object), np.arange(n), ("list",),
                        np.arange(1, n + 1, dtype=np.int32)[:, None])
    gold = make_gold([question], matrix, where)
    # one arm, k = 0: the config's ceiling w / (0 + 1) is ``ceiling`` exactly
    cfg = FusionConfig("list", "list", "grid", "rrf", 0.0, ("list",), (float(ceiling),), (max(n, 1),))
    fused = Fused(cfg, np.arange(n), np.zeros(n, np.int64), np.arange(1, n + 1),
                  np.r_[top_score, np.zeros(max(n - 1, 0))][:n], np.ones(n, np.int64))
    return {k: float(v[0]) for k, v in score(specs, fused, gold).items()}


def _doc_page(page_id: str, i: int) -> tuple[str, int]:
    """(doc, page) of a ``doc#page`` id; an id of another shape gets a page of its own."""
    doc, _, page = page_id.rpartition("#")
    if doc and page.isdigit() and page_key(doc, int(page)) == page_id:
        return doc, int(page)
    return f"{page_id}\x00", -1 - i
