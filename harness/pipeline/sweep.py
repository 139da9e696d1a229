"""Fast metric sweeps over many fusion configs (metrics only, no fused table).

:func:`harness.metrics.pages.page_lists` orders every fused chunk of every question;
a grid search over hundreds of configs only needs the top ``depth`` pages. Here
ranks are laid out densely as (questions x candidates x arms), each config is
scored with per-arm lookup tables ``w / (k + r)``, and only the top ``m``
candidates of each question are selected (``argpartition``) and ordered (score
desc, chunk id asc: candidates are laid out in id order, so a stable sort on the
score gives the id tie-break).

Exactness: candidates scoring strictly above the m-th best score are complete
and correctly ordered. A question whose first ``depth`` distinct pages reach
down to that boundary score (a tie across the cut, or too few distinct pages
among m chunks) is recomputed with a full stable sort. Results are therefore
identical to the full path (tested), just faster.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.fusion.configs import FusionConfig
from harness.fusion.fuse import RankMatrix
from harness.metrics.pages import Gold, _lookup, gain_lookup
from harness.metrics.ranking import MetricSpec, PageLists, compute, depth_needed, parse


@dataclass(frozen=True)
class DenseRanks:
    """(A, Q, U) ranks (0 = unranked), candidate page codes and gold lookups."""

    arms: tuple[str, ...]
    ranks: np.ndarray  # (A, Q, U) int32, one contiguous plane per arm
    page: np.ndarray  # (Q, U) int64 page code, -1 for padding
    rel: np.ndarray  # (Q, U) bool
    req: np.ndarray  # (Q, U) int64 requirement mask
    gain: np.ndarray | None = None  # (Q, U) float grade; None: binary relevance

    @classmethod
    def build(cls, matrix: RankMatrix, gold: Gold) -> DenseRanks:
        nq = len(matrix.question_ids)
        counts = np.bincount(matrix.question_index, minlength=nq)
        u = int(counts.max(initial=0)) or 1
        starts = np.r_[0, np.cumsum(counts)[:-1]]
        col = np.arange(len(matrix.question_index)) - starts[matrix.question_index]
        ranks = np.zeros((len(matrix.arms), nq, u), np.int32)
        for a in range(len(matrix.arms)):
            ranks[a, matrix.question_index, col] = matrix.ranks[:, a]
        page = np.full((nq, u), -1, np.int64)
        page[matrix.question_index, col] = gold.chunk_page
        rel_row, mask_row = _lookup(gold, matrix.question_index * gold.n_pages + gold.chunk_page)
        rel = np.zeros((nq, u), bool)
        req = np.zeros((nq, u), np.int64)
        rel[matrix.question_index, col] = rel_row
        req[matrix.question_index, col] = mask_row
        gain_row = gain_lookup(gold, matrix.question_index * gold.n_pages + gold.chunk_page)
        gain = None
        if gain_row is not None:
            gain = np.zeros((nq, u))
            gain[matrix.question_index, col] = gain_row
        return cls(matrix.arms, ranks, page, rel, req, gain)


def _scores(d: DenseRanks, c: FusionConfig) -> np.ndarray:
    """Fused scores (Q, U); 0.0 exactly where no arm of the config voted."""
    total: np.ndarray | None = None
    for arm, w, depth in zip(c.arms, c.weights, c.depths, strict=True):
        r = d.ranks[d.arms.index(arm)]
        lut = np.zeros(int(r.max(initial=0)) + 1)
        top = min(depth, len(lut) - 1)
        lut[1 : top + 1] = w / (c.k + np.arange(1, top + 1))
        part = lut[r]
        total = part if total is None else np.add(total, part, out=total)
    return total if total is not None else np.zeros(d.page.shape)


def _first_pages(order_pages: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row: positions of the first ``depth`` distinct pages, and their count."""
    p = order_pages
    m = p.shape[1]
    dup = np.zeros(p.shape, bool)
    for j in range(1, m):
        dup[:, j] = (p[:, :j] == p[:, j : j + 1]).any(axis=1)
    dup |= p < 0
    new = ~dup
    rank = np.cumsum(new, axis=1)
    keep = new & (rank <= depth)
    return keep, rank[:, -1]


def page_lists_topk(d: DenseRanks, gold: Gold, c: FusionConfig, depth: int, m: int | None = None) -> PageLists:
    """Top-``depth`` page lists for one config (see module docstring)."""
    nq, u = d.page.shape
    s = _scores(d, c)  # 0.0 = unvoted or padding: never enters a list
    m = min(m or depth + 6, u)
    cand = np.argpartition(s, u - m, axis=1)[:, u - m :] if m < u else np.tile(np.arange(u), (nq, 1))
    cand.sort(axis=1)  # id order, so the stable score sort breaks ties by id
    cs = np.take_along_axis(s, cand, 1)
    o = np.argsort(-cs, axis=1, kind="stable")
    cand, cs = np.take_along_axis(cand, o, 1), np.take_along_axis(cs, o, 1)
    boundary = cs[:, -1] if m < u else np.zeros(nq)
    pages = np.where(cs > 0, np.take_along_axis(d.page, cand, 1), -1)
    keep, distinct = _first_pages(pages, depth)
    last_pos = np.where(keep.any(axis=1), m - 1 - np.argmax(keep[:, ::-1], axis=1), 0)
    last_score = cs[np.arange(nq), last_pos]
    bad = (boundary > 0) & ((last_score <= boundary) | (distinct < depth))
    if bad.any():
        rows = np.flatnonzero(bad)
        full = np.argsort(-s[rows], axis=1, kind="stable")
        fs = np.take_along_axis(s[rows], full, 1)
        fp = np.where(fs > 0, np.take_along_axis(d.page[rows], full, 1), -1)
        fkeep, _ = _first_pages_long(fp, depth)
        cand_b = np.zeros((len(rows), m), np.int64)
        keep_b = np.zeros((len(rows), m), bool)
        for i in range(len(rows)):
            pos = np.flatnonzero(fkeep[i])[:depth]
            cand_b[i, : len(pos)] = full[i, pos]
            keep_b[i, : len(pos)] = True
        cand = cand.copy()
        cand[rows], keep[rows] = cand_b, keep_b
        cs = cs.copy()
        cs[rows] = np.take_along_axis(s[rows], cand_b, 1)
    rel = np.zeros((nq, depth), bool)
    req = np.zeros((nq, depth), np.int64)
    qi, pos = np.nonzero(keep)
    slot = np.cumsum(keep, axis=1)[qi, pos] - 1
    chosen = cand[qi, pos]
    rel[qi, slot] = d.rel[qi, chosen]
    req[qi, slot] = d.req[qi, chosen]
    gain = None
    if d.gain is not None:
        gain = np.zeros((nq, depth))
        gain[qi, slot] = d.gain[qi, chosen]
    hits = rel.any(axis=1)
    first_rel = np.where(hits, np.argmax(rel, axis=1) + 1.0, np.inf)
    top = cs[:, 0]
    return PageLists(rel, req, gold.n_req, gold.n_rel, first_rel, top, np.full(nq, c.ceiling),
                     gain, gold.ideal_gain)


def _first_pages_long(p: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_first_pages` for long rows, via a per-row seen set (rows are few)."""
    keep = np.zeros(p.shape, bool)
    for i in range(p.shape[0]):
        seen: set[int] = set()
        for j, page in enumerate(p[i]):
            if page >= 0 and page not in seen and len(seen) < depth:
                seen.add(int(page))
                keep[i, j] = True
    return keep, keep.sum(axis=1)


def sweep(matrix: RankMatrix, gold: Gold, configs: Sequence[FusionConfig],
          metrics: Sequence[str], workers: int | None = None) -> pd.DataFrame:
    """Mean of each metric per config over answerable questions (configs x metrics).

    Configs are scored on ``workers`` threads (default: the machine's cores, at most
    4); NumPy releases the GIL in the kernels, and each config is independent, so the
    result does not depend on the thread count. ``first_rel_rank`` needs the whole
    list and is refused here: use the full path (:mod:`harness.metrics.pages`)."""
    specs: list[MetricSpec] = [parse(x) for x in metrics]
    if any(s.family.name == "first_rel_rank" for s in specs):
        raise ValueError("sweep: first_rel_rank needs the whole fused list; use harness.metrics.pages")
    depth = depth_needed(specs)
    dense = DenseRanks.build(matrix, gold)
    answerable = gold.n_req > 0

    def one(c: FusionConfig) -> dict[str, object]:
        vals = compute(specs, page_lists_topk(dense, gold, c, depth))
        return {"config_id": c.config_id,
                **{k: float(v[answerable].mean()) if answerable.any() else float("nan")
                   for k, v in vals.items()}}

    n = workers or min(4, os.cpu_count() or 1)
    if n <= 1:
        return pd.DataFrame([one(c) for c in configs])
    with ThreadPoolExecutor(max_workers=n) as pool:
        return pd.DataFrame(list(pool.map(one, configs)))
