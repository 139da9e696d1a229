"""Config rankings under two label sets, and Kendall's tau between them.

After MacAvaney & Soldaini, *One-Shot Labeling for Automatic Relevance Estimation*
(SIGIR 2023): what matters of a label set is less how often it agrees with people
page by page than whether it ranks the systems the same way. For each config whose
fused rows a run stored (the arms alone included, as ``arm-<name>``), its page list
per question (chunks collapsed to pages in fused order) is scored under each label
set with ``ir_measures`` (default ``nDCG@10``; graded qrels, 0 lines included), over
the questions that have a relevant page under both label sets; Kendall's tau-b
(``scipy.stats.kendalltau``) compares the two lists of per-config means.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from rulegauge.core.errors import RulegaugeError
from rulegauge.core.extras import needs
from rulegauge.corpus.records import page_keys
from rulegauge.goldset.labels import LabelSet
from rulegauge.store.rundir import Run


@dataclass(frozen=True)
class RankingAgreement:
    metric: str
    questions: int
    configs: tuple[str, ...]
    scores_a: tuple[float, ...]
    scores_b: tuple[float, ...]
    tau: float | None
    """Kendall's tau-b; None when undefined (fewer than two configs, or constant scores)."""
    p_value: float | None


def page_lists(run: Run) -> pd.DataFrame:
    """question_id, config_id, page id, page_rank: the distinct pages of every stored list."""
    fused = run.arrow("fused", ["question_id", "config_id", "doc_id", "page", "page_rank"]
                      ).to_pandas()
    fused["page_id"] = page_keys(fused["doc_id"], fused["page"])
    out: pd.DataFrame = fused.groupby(["question_id", "config_id", "page_id"], as_index=False)[
        "page_rank"].min()
    return out


def _scores(lists: pd.DataFrame, labels: LabelSet, questions: set[str],
            metric: str) -> dict[str, float]:
    with needs("judge", "judges agreement --run (the metric by ir_measures)"):
        import ir_measures  # the [judge] extra
    measure = ir_measures.parse_measure(metric)
    qrels = [ir_measures.Qrel(q, p, g) for (q, p), g in sorted(labels.grades.items())
             if q in questions]
    out = {}
    for cid, g in lists.groupby("config_id", sort=True):
        g = g[g["question_id"].isin(questions)]
        run = [ir_measures.ScoredDoc(q, p, 1.0 / float(r)) for q, p, r in zip(
            g["question_id"], g["page_id"], g["page_rank"], strict=True)]
        value = ir_measures.calc_aggregate([measure], qrels, run).get(measure)
        if value is None:
            raise RulegaugeError(f"{metric} gave no value for config {cid}")
        out[str(cid)] = float(value)
    return out


def ranking_agreement(run: Run, a: LabelSet, b: LabelSet,
                      metric: str = "nDCG@10") -> RankingAgreement:
    """Per-config means of ``metric`` under ``a`` and under ``b``, and Kendall's tau."""
    lists = page_lists(run)
    in_run = set(lists["question_id"])
    rel_a = {q for (q, _), g in a.grades.items() if g >= 1}
    rel_b = {q for (q, _), g in b.grades.items() if g >= 1}
    questions = in_run & rel_a & rel_b
    if not questions:
        raise RulegaugeError(f"run {run.run_id}: no question has a relevant page under both "
                           f"{a.name} and {b.name}; nothing to rank configs on")
    sa, sb = _scores(lists, a, questions, metric), _scores(lists, b, questions, metric)
    configs = tuple(sorted(sa))
    xa, xb = tuple(sa[c] for c in configs), tuple(sb[c] for c in configs)
    tau = p = None
    if len(configs) >= 2 and len(set(xa)) > 1 and len(set(xb)) > 1:
        with needs("judge", "judges agreement --run (Kendall's tau)"):
            from scipy.stats import kendalltau  # the [judge] extra: the core has no scipy
        result = kendalltau(xa, xb)
        tau, p = float(result.statistic), float(result.pvalue)
    return RankingAgreement(metric, len(questions), configs, xa, xb, tau, p)
