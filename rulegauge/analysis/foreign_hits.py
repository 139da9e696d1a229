"""The report's foreign hits: per question, the ids from outside the corpus in the top k.

A foreign hit is an id an arm read from outside (a live service, a captured list) that
matches no chunk of the gold set's corpus, kept at its rank as a non-relevant hit
(:mod:`rulegauge.corpus.foreign`; docs/arms.md, "Foreign hits"). :func:`foreign_frame` lists
them per question and charted config within the top ``k`` pages, with the arms that ranked
them and the best relevant page's rank beside (the page they stand above);
:func:`foreign_html` is the report's section, empty for a run without any.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import pandas as pd

from rulegauge.analysis.report_html import table_html
from rulegauge.corpus.foreign import foreign_flags

COLUMNS = ["question_id", "config_id", "page_rank", "foreign id", "arms", "first relevant page rank"]


def foreign_frame(fused: pd.DataFrame, configs: Sequence[str], top_k: int) -> pd.DataFrame:
    """One row per foreign hit within the top ``top_k`` pages of each of ``configs`` (module
    docstring), by config (as given), question, page rank."""
    flags = foreign_flags(fused)
    if not flags.any():
        return pd.DataFrame(columns=COLUMNS)
    f = fused[fused["config_id"].isin(list(configs))]
    flags = foreign_flags(f)
    first_rel = (f[f["relevant"].astype(bool)].groupby(["question_id", "config_id"])["page_rank"].min()
                 .rename("first relevant page rank"))
    hits = f[flags & (f["page_rank"].to_numpy() <= top_k)]
    arms = [c for c in f.columns if c.startswith("rank_")]
    voted = [", ".join(f"{a[len('rank_'):]} {int(r[a])}" for a in arms if pd.notna(r[a]))
             for _, r in hits.iterrows()]
    out = hits.copy()
    out["foreign id"] = hits["chunk_id"].astype(str)
    out["arms"] = voted
    out = out.join(first_rel, on=["question_id", "config_id"])
    order = {c: i for i, c in enumerate(configs)}
    out = out.assign(_c=out["config_id"].map(order)).sort_values(["_c", "question_id", "page_rank"], kind="stable")
    return out[COLUMNS].reset_index(drop=True)


def foreign_html(fused: pd.DataFrame, configs: Sequence[str], top_k: int) -> list[str]:
    """The report's section on foreign hits (module docstring); nothing when the run has none."""
    if not foreign_flags(fused).any():
        return []
    rows = foreign_frame(fused, configs, top_k)
    n_q = rows["question_id"].nunique() if len(rows) else 0
    above = int(np.sum(rows["page_rank"] < rows["first relevant page rank"].fillna(np.inf))) if len(rows) else 0
    return [f"<h2>Foreign hits (top {top_k})</h2>",
            "<p class='note'>Ids an arm read from outside (a live service, a captured list) that match no "
            "chunk of the gold set's corpus: another game's page, a stale edition. Each keeps its rank as a "
            "non-relevant page of its own; <code>foreign@k</code> is their share of the top k (docs/arms.md, "
            f"Foreign hits). Charted configs: {len(rows)} in the top {top_k} of {n_q} question(s), {above} "
            "ranked above the question's first relevant page.</p>",
            table_html(rows, tall=len(rows) > 40) if len(rows) else
            f"<p class='note'>None in the top {html.escape(str(top_k))} of the charted configs.</p>"]
