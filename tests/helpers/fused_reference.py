"""The full path of the ``fused`` table, kept as the tests' reference: every chunk of
:func:`rulegauge.fusion.fuse.fuse` as a pandas frame per config (the code ``rulegauge run``
used before the rows came from the scoring kernel, :mod:`rulegauge.pipeline.fused_rows`),
cut to a depth."""

from collections.abc import Sequence

import numpy as np
import pandas as pd

from rulegauge.fusion.configs import FusionConfig
from rulegauge.fusion.fuse import Fused, RankMatrix, fuse
from rulegauge.fusion.method import config_ceiling
from rulegauge.metrics.gold import Gold, lookup
from rulegauge.metrics.page_lists import page_ranks


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
        "ceiling": config_ceiling(c),
        "score_ratio": fused.score / config_ceiling(c),
        "n_arms": np.int32(len(c.arms)),
        "arms_voted": fused.arms_voted.astype(np.int32),
        "relevant": rel_row,
        "page_rank": prank.astype(np.int32),
        "foreign": np.zeros(len(fused.rows), bool) if gold.chunk_foreign is None else gold.chunk_foreign[fused.rows],
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


def reference_fused(matrix: RankMatrix, gold: Gold, configs: Sequence[FusionConfig], run_arms: Sequence[str],
                    depth: int) -> pd.DataFrame:
    """The old ``fused`` table: per config, fuse in full, build the frame, cut to ``depth`` (0 = all)."""
    parts = []
    for c in configs:
        f = fused_frame(fuse(matrix, c), matrix, gold, run_arms)
        parts.append(f[f["fused_rank"] <= depth] if depth > 0 else f)
    return pd.concat(parts, ignore_index=True)
