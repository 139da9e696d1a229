"""The scoring path of ``harness run``: every config of a grid -> per-question metrics.

Ranks and arm scores are laid out densely as (arms x questions x candidates),
candidates of a question in chunk-id order (:func:`harness.fusion.kernel.planes_of`).
Each config is scored by its fusion method on those planes and gets an order key
(:func:`harness.fusion.kernel.config_scores`: RRF's own float score, the exact order's
classes for the other methods); the top ``m`` candidates of each question are
selected (``argpartition``) and put in exact fused order (key desc, chunk id asc;
near-equal floats resolved exactly, :func:`harness.fusion.kernel.exact_rows`), then
collapsed to pages.

Exactness: candidates scoring above the m-th best score by more than the float
tolerance are a prefix of the exact fused order. A question whose first ``depth``
distinct pages reach down to that boundary (a tie across the cut, or too few
distinct pages among m chunks), or whose first relevant page lies beyond them
(``first_rel_rank`` needs the whole list), is ordered in full. Every metric value
therefore equals the full path (:mod:`harness.metrics.pages` over
:func:`harness.fusion.fuse.fuse`); tests compare both on every metric.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.fusion.configs import FusionConfig
from harness.fusion.kernel import config_scores, exact_rows, planes_of
from harness.fusion.matrix import RankMatrix
from harness.fusion.method import Planes
from harness.metrics.pages import Gold, gain_lookup, relevance_lookup
from harness.metrics.ranking import MetricSpec, PageLists, compute, depth_needed, parse


@dataclass(frozen=True)
class DenseRanks:
    """The fusion kernel's planes plus (Q, U) candidate page codes and gold lookups."""

    planes: Planes
    page: np.ndarray  # (Q, U) int64 page code, -1 for padding
    rel: np.ndarray  # (Q, U) bool
    req: np.ndarray  # (Q, U) int64 requirement mask
    gain: np.ndarray | None = None  # (Q, U) float grade; None: binary relevance

    @classmethod
    def build(cls, matrix: RankMatrix, gold: Gold) -> DenseRanks:
        planes, col = planes_of(matrix)
        nq, u = planes.shape
        page = np.full((nq, u), -1, np.int64)
        page[matrix.question_index, col] = gold.chunk_page
        rel_row, mask_row = relevance_lookup(gold, matrix.question_index * gold.n_pages + gold.chunk_page)
        rel = np.zeros((nq, u), bool)
        req = np.zeros((nq, u), np.int64)
        rel[matrix.question_index, col] = rel_row
        req[matrix.question_index, col] = mask_row
        gain_row = gain_lookup(gold, matrix.question_index * gold.n_pages + gold.chunk_page)
        gain = None
        if gain_row is not None:
            gain = np.zeros((nq, u))
            gain[matrix.question_index, col] = gain_row
        return cls(planes, page, rel, req, gain)


def _first_pages(pages: np.ndarray) -> np.ndarray:
    """True where a row position holds the first occurrence of its page (pages >= 0)."""
    w = pages.shape[1]
    if w == 0:
        return np.zeros(pages.shape, bool)
    big = int(pages.max(initial=0)) + 1
    key = np.where(pages >= 0, pages, big) * w + np.arange(w)[None, :]
    o = np.argsort(key, axis=1)
    sp = np.take_along_axis(pages, o, 1)
    first_sorted = np.ones(pages.shape, bool)
    first_sorted[:, 1:] = sp[:, 1:] != sp[:, :-1]
    first = np.zeros(pages.shape, bool)
    np.put_along_axis(first, o, first_sorted, 1)
    return first & (pages >= 0)


def page_lists_topk(d: DenseRanks, gold: Gold, c: FusionConfig, depth: int,
                    m: int | None = None, *, first_rel: bool = True) -> PageLists:
    """Page lists (first ``depth`` pages, top score, and the exact first relevant rank
    over the whole list; with ``first_rel=False`` that rank is exact only within the
    first ``depth`` pages, inf beyond: enough for every metric with a cutoff)."""
    nq, u = d.page.shape
    scored = config_scores(d.planes, c)
    s, tol, ties = scored.key, scored.tol, scored.ties  # key 0.0 = unvoted or padding: never in a list
    m = min(m or depth + 6, u)
    allq = np.arange(nq)
    cand = np.argpartition(s, u - m, axis=1)[:, u - m :] if m < u else np.tile(np.arange(u), (nq, 1))
    cand = exact_rows(d.planes, c, allq, s, cand, tol, ties=ties)  # allq: every row, s as it is
    cs = np.take_along_axis(s, cand, 1)
    boundary = cs.min(axis=1) if m < u else np.zeros(nq)
    pages = np.where(cs > 0, np.take_along_axis(d.page, cand, 1), -1)
    first = _first_pages(pages)
    prank = np.cumsum(first, axis=1)
    keep = first & (prank <= depth)
    last_pos = np.where(keep.any(axis=1), m - 1 - np.argmax(keep[:, ::-1], axis=1), 0)
    last_score = cs[allq, last_pos]
    bad = (boundary > 0) & ((last_score - boundary <= tol) | (prank[:, -1] < depth))
    relc = np.take_along_axis(d.rel, cand, 1) & first
    rpos = np.argmax(relc, axis=1)
    # the candidates are an exact prefix of the fused list down to scores above the boundary
    found = relc.any(axis=1) & ((boundary == 0) | (cs[allq, rpos] - boundary > tol))
    first_rel_rank = np.where(found, prank[allq, rpos].astype(np.float64), np.inf)
    # first relevant page beyond the exact prefix: needs the whole list, unless all of it is here
    deep = (~found & (d.rel & (s > 0)).any(axis=1) & (boundary > 0)) if first_rel else np.zeros(nq, bool)
    if deep.any():  # count distinct pages strictly ahead of the best relevant chunk
        rows_d = np.flatnonzero(deep & ~bad)
        sd = s[rows_d]
        t = np.where(d.rel[rows_d], sd, 0.0).max(axis=1)
        near_other = (np.abs(sd - t[:, None]) <= tol) & ~d.rel[rows_d] & (sd > 0)
        easy = ~near_other.any(axis=1)  # no exact-tie question at the relevant chunk
        rows_e = rows_d[easy]
        ahead = np.where(sd[easy] > t[easy, None] + tol, d.page[rows_e], -1)
        ahead.sort(axis=1)
        distinct = ((ahead[:, 1:] != ahead[:, :-1]) & (ahead[:, 1:] >= 0)).sum(axis=1) + (ahead[:, 0] >= 0)
        first_rel_rank[rows_e] = distinct + 1.0
        deep[rows_e] = False
    full_rows = np.flatnonzero(bad | deep)
    top = np.where(cs[:, 0] > 0, np.take_along_axis(scored.score, cand[:, :1], 1)[:, 0], 0.0)
    rel = np.zeros((nq, depth), bool)
    req = np.zeros((nq, depth), np.int64)
    qi, pos = np.nonzero(keep)
    slot = prank[qi, pos] - 1
    chosen = cand[qi, pos]
    if len(full_rows):
        ok = ~np.isin(qi, full_rows)
        qi, slot, chosen = qi[ok], slot[ok], chosen[ok]
    rel[qi, slot] = d.rel[qi, chosen]
    req[qi, slot] = d.req[qi, chosen]
    gain = None if d.gain is None else np.zeros((nq, depth))
    if gain is not None and d.gain is not None:
        gain[qi, slot] = d.gain[qi, chosen]
    if len(full_rows):
        fs = s[full_rows]
        full = exact_rows(d.planes, c, full_rows, fs, np.tile(np.arange(u), (len(full_rows), 1)), tol, ties=ties)
        fsc = np.take_along_axis(fs, full, 1)
        fp = np.where(fsc > 0, np.take_along_axis(d.page[full_rows], full, 1), -1)
        ffirst = _first_pages(fp)
        fprank = np.cumsum(ffirst, axis=1)
        fkeep = ffirst & (fprank <= depth)
        frel = np.take_along_axis(d.rel[full_rows], full, 1)
        freq = np.take_along_axis(d.req[full_rows], full, 1)
        rel[full_rows] = False
        req[full_rows] = 0
        ri, pos = np.nonzero(fkeep)
        rel[full_rows[ri], fprank[ri, pos] - 1] = frel[ri, pos]
        req[full_rows[ri], fprank[ri, pos] - 1] = freq[ri, pos]
        if gain is not None and d.gain is not None:
            gain[full_rows] = 0.0
            gain[full_rows[ri], fprank[ri, pos] - 1] = np.take_along_axis(d.gain[full_rows], full, 1)[ri, pos]
        hit = ffirst & frel
        first_rel_rank[full_rows] = np.where(hit.any(axis=1),
                                        np.take_along_axis(fprank, np.argmax(hit, axis=1)[:, None], 1)[:, 0],
                                        np.inf)
        top[full_rows] = np.where(fsc[:, 0] > 0, np.take_along_axis(scored.score[full_rows], full[:, :1], 1)[:, 0],
                                  0.0)
    if not first_rel:
        first_rel_rank[first_rel_rank > depth] = np.inf
    return PageLists(rel, req, gold.n_req, gold.n_rel, first_rel_rank, top, np.full(nq, c.ceiling),
                     gain, gold.ideal_gain)


def score_configs(matrix: RankMatrix, gold: Gold, configs: Sequence[FusionConfig],
                  specs: Sequence[MetricSpec], workers: int | None = None) -> list[dict[str, np.ndarray]]:
    """Per config (in order), ``{metric name: (Q,) values}`` exactly as the full path gives.

    Ranking metrics of unanswerable questions take the metric's default. Configs run on
    ``workers`` threads (default: cores, at most 4); each config is independent, so the
    result does not depend on the thread count."""
    depth = depth_needed(specs)
    whole = any(s.family.name == "first_rel_rank" for s in specs)
    dense = DenseRanks.build(matrix, gold)
    answerable = gold.n_req > 0

    def one(c: FusionConfig) -> dict[str, np.ndarray]:
        vals = compute(specs, page_lists_topk(dense, gold, c, depth, first_rel=whole))
        return {s.name: (np.where(answerable, vals[s.name], s.default) if s.kind == "ranking"
                         else vals[s.name]).astype(np.float64) for s in specs}

    n = workers or min(4, os.cpu_count() or 1)
    if n <= 1 or len(configs) < 2:
        return [one(c) for c in configs]
    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(one, configs))


def sweep(matrix: RankMatrix, gold: Gold, configs: Sequence[FusionConfig],
          metrics: Sequence[str], workers: int | None = None) -> pd.DataFrame:
    """Mean of each metric per config over answerable questions (configs x metrics)."""
    specs: list[MetricSpec] = [parse(x) for x in metrics]
    answerable = gold.n_req > 0
    per = score_configs(matrix, gold, configs, specs, workers)
    return pd.DataFrame([{"config_id": c.config_id,
                          **{k: float(v[answerable].mean()) if answerable.any() else float("nan")
                             for k, v in vals.items()}} for c, vals in zip(configs, per, strict=True)])
