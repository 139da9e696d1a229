"""From fused chunk lists to the ``fused`` and ``metrics`` tables.

Chunks collapse to pages in fused order (:func:`harness.metrics.page_lists.page_ranks`):
a page's rank is its position among distinct pages, counted at its best-ranked chunk
(``page_rank``; later chunks of the same page carry the same page rank). Relevance is
looked up per (question, page) with array searches (:func:`harness.metrics.gold.lookup`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from harness.fusion.fuse import Fused, RankMatrix
from harness.metrics.family import Metric
from harness.metrics.gold import Gold, lookup
from harness.metrics.page_lists import page_ranks
from harness.metrics.ranking import score


def fused_frame(fused: Fused, matrix: RankMatrix, gold: Gold, run_arms: Sequence[str]) -> pd.DataFrame:
    """The ``fused`` table rows of one config."""
    c = fused.config
    prank, _ = page_ranks(fused, gold)
    rel_row = lookup(gold, gold.row_keys(fused.question_index, fused.rows)).rel
    df = pd.DataFrame({
        "question_id": matrix.question_ids[fused.question_index].astype(str),
        "config_id": c.config_id,
        "chunk_id": matrix.chunk_ids[fused.rows].astype(str),
        "doc_id": gold.chunk_doc[fused.rows].astype(str),
        "page": gold.chunk_pageno[fused.rows].astype(np.int32),
        "fused_rank": fused.fused_rank.astype(np.int32),
        "fused_score": fused.score,
        "ceiling": c.ceiling,
        "score_ratio": fused.score / c.ceiling,
        "n_arms": np.int32(len(c.arms)),
        "arms_voted": fused.arms_voted.astype(np.int32),
        "relevant": rel_row,
        "page_rank": prank.astype(np.int32),
    })
    for arm in run_arms:
        col = pd.array([pd.NA] * len(df), dtype="Int32")
        if arm in c.arms:
            j = c.arms.index(arm)
            r = matrix.ranks[fused.rows, matrix.arms.index(arm)]
            ok = (r > 0) & (r <= c.depths[j])
            col = pd.array(np.where(ok, r, 0), dtype="Int32")
            col[~ok] = pd.NA
        df[f"rank_{arm}"] = col
    return df


def metrics_frame(fused: Fused, gold: Gold, specs: Sequence[Metric]) -> pd.DataFrame:
    """Every question x metric row of one config (defaults where nothing was retrieved)."""
    values = score(specs, fused, gold)
    nq = len(gold.questions)
    qids = np.array([q.question_id for q in gold.questions], dtype=object)
    answerable = np.array([q.answerable for q in gold.questions])
    frames = [pd.DataFrame({"question_id": qids.astype(str), "config_id": fused.config.config_id,
                            "metric": s.name, "value": values[s.name], "answerable": answerable})
              for s in specs]
    out = pd.concat(frames, ignore_index=True)
    if len(out) != nq * len(specs):
        raise RuntimeError("metrics: a question or metric row went missing")
    return out
