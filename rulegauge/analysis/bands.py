"""Score bands: where relevant and non-relevant chunks land on the fused score scale (RRF's and others').

A weighted-RRF config with weights ``w_a`` and constant ``k`` gives a chunk
``fused(d) = sum over voting arms of w_a / (k + rank_a(d))`` (Cormack, Clarke &
Buettcher, "Reciprocal rank fusion outperforms Condorcet and individual rank
learning methods", SIGIR 2009). The arithmetic *anchors* of a config are

* one arm's #1 vote: ``max_a w_a / (k + 1)`` (1/61 = 0.0164 at k=60, weight 1),
* two arms' #1 votes: the two largest weights over ``k + 1`` (2/61 = 0.0328),
* the ceiling: every arm ranks the chunk #1, ``sum_a w_a / (k + 1)`` (3/61 = 0.0492).

``score_ratio = fused_score / ceiling`` puts configs with different arm counts on
one 0-1 scale. Per config and per number of arms that voted for a chunk
(``arms_voted``) this module summarises the fused score and the ratio of relevant
and non-relevant chunks in the top ``top_k`` fused ranks, the empirical *healthy
band* (by default the 5th-95th percentile of the best-ranked relevant chunk per
question within the top ``top_k``), how often the boost arm alone carried a chunk
into the top ``top_k``, and two ROC analyses of the ratio (Fawcett, "An
introduction to ROC analysis", Pattern Recognition Letters 27, 2006):

* ``chunks``: relevant against non-relevant chunks in the top ``top_k``;
* ``top_hit``: "the rank-1 chunk is relevant", one observation per question with
  any hit (unanswerable questions count as negatives): the data an answer gate
  needs. Its threshold maximises Youden's J = TPR - FPR (prevalence-free), and
  the gate reads "answer when score_ratio >= threshold".

Other fusion methods (docs/fusion.md) have no arms/(k+1) anchors: a config's
``anchors`` then carry the method's ceiling (``top``; NaN when it has none) and
``axis``, what its score means. With a ceiling, ``score_ratio`` is the axis as for
RRF; without one (CombSUM/CombMNZ z-score, Borda) ``score_ratio`` is empty and the
ROC analyses and thresholds are on the raw ``fused_score``. The fused table is checked
against the RRF formula for RRF configs; every method's ceiling, ratio and votes.

Conventions: quantiles use numpy's default linear interpolation; an empty sample
gives NaN, never 0. When only one class is present the AUC and the threshold are
NaN and ``reason`` says why (never a silent 0.5). Among thresholds with equal J
the highest (most conservative) wins; when no threshold beats chance (J <= 0)
the threshold is NaN with a reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from rulegauge.analysis.anchors import Anchors, anchors, config_anchors
from rulegauge.analysis.band_checks import validate
from rulegauge.core.config_order import config_sort_key
from rulegauge.fusion.exact import rrf_tie_classes
from rulegauge.store.rundir import Run

__all__ = ["Anchors", "BandTable", "anchors", "band_table", "band_tables", "run_band_tables", "validate"]

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
BAND = (0.05, 0.95)
BOOST_ARM = "boost"


@dataclass(frozen=True)
class Summary:
    """Count, mean and :data:`QUANTILES` of a sample (NaN when ``n == 0``)."""

    n: int
    mean: float
    p05: float
    p25: float
    p50: float
    p75: float
    p95: float


def summarise(values: np.ndarray | pd.Series) -> Summary:
    """:class:`Summary` of ``values`` (linear-interpolated quantiles)."""
    v = np.asarray(values, dtype=np.float64)
    if len(v) == 0:
        return Summary(0, *([math.nan] * (1 + len(QUANTILES))))
    return Summary(len(v), float(v.mean()), *(float(x) for x in np.quantile(v, QUANTILES)))


@dataclass(frozen=True)
class BandCell:
    """Top-``k`` chunks of one config with ``arms_voted`` votes and one relevance."""

    arms_voted: int
    relevant: bool
    score: Summary
    ratio: Summary


@dataclass(frozen=True)
class HealthyBand:
    """Band of the best-ranked relevant chunk per question within the top ``k``;
    ``arms_voted`` None means every arm count together."""

    arms_voted: int | None
    n: int
    score_lo: float
    score_hi: float
    ratio_lo: float
    ratio_hi: float


@dataclass(frozen=True)
class BoostAlone:
    """Top-``k`` chunk slots voted for by the boost arm and no other arm."""

    arm: str
    n_topk: int
    n_alone: int
    n_alone_relevant: int
    n_questions: int

    @property
    def share(self) -> float:
        return self.n_alone / self.n_topk if self.n_topk else math.nan

    @property
    def precision(self) -> float:
        """Share of boost-alone chunks that are relevant (NaN when there are none)."""
        return self.n_alone_relevant / self.n_alone if self.n_alone else math.nan


@dataclass(frozen=True)
class Separation:
    """ROC analysis of ``score_ratio`` for one population (see module docstring)."""

    population: str
    n_pos: int
    n_neg: int
    auc: float
    threshold: float
    youden_j: float
    tpr: float
    fpr: float
    precision: float
    reason: str | None = None


@dataclass(frozen=True)
class BandTable:
    """Everything :func:`band_tables` measures for one config."""

    config_id: str
    name: str
    kind: str
    top_k: int
    anchors: Anchors
    n_questions: int
    n_no_hits: int
    cells: tuple[BandCell, ...]
    bands: tuple[HealthyBand, ...]
    boost: BoostAlone | None
    chunks: Separation
    top_hit: Separation


def separation(scores: np.ndarray | pd.Series, labels: np.ndarray | pd.Series,
               population: str) -> Separation:
    """ROC AUC and Youden-optimal threshold of ``scores`` for boolean ``labels``."""
    from sklearn.metrics import roc_auc_score, roc_curve  # deferred: heavy import

    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    nan = math.nan
    if n_pos == 0 or n_neg == 0:
        what = "no observations" if len(y) == 0 else (
            f"all {len(y)} {population} are {'relevant' if n_neg == 0 else 'non-relevant'}")
        return Separation(population, n_pos, n_neg, nan, nan, nan, nan, nan, nan,
                          f"{what}: AUC and threshold undefined")
    auc = float(roc_auc_score(y, s))
    fpr, tpr, thr = roc_curve(y, s, drop_intermediate=False)
    j = tpr - fpr
    i = int(np.argmax(j))  # first maximum = highest threshold
    if j[i] <= 0:
        why = "every score is equal" if np.unique(s).size == 1 else "Youden's J <= 0"
        return Separation(population, n_pos, n_neg, auc, nan, float(j[i]), nan, nan, nan,
                          f"no threshold beats chance on {population} ({why})")
    passed = s >= thr[i]
    precision = float(y[passed].mean())
    return Separation(population, n_pos, n_neg, auc, float(thr[i]), float(j[i]),
                      float(tpr[i]), float(fpr[i]), precision)


def _rank_col(arm: str) -> str:
    return f"rank_{arm}"


def _healthy(best: pd.DataFrame, arms_voted: int | None, band: tuple[float, float]) -> HealthyBand:
    if len(best) == 0:
        return HealthyBand(arms_voted, 0, math.nan, math.nan, math.nan, math.nan)
    s = np.quantile(best["fused_score"].to_numpy(float), band)
    r = np.quantile(best["score_ratio"].to_numpy(float), band)
    return HealthyBand(arms_voted, len(best), float(s[0]), float(s[1]), float(r[0]), float(r[1]))


def _boost(top: pd.DataFrame, a: Anchors, boost_arm: str) -> BoostAlone | None:
    if boost_arm not in a.arms or len(a.arms) < 2:
        return None
    alone = top[top[_rank_col(boost_arm)].notna() & (top["arms_voted"] == 1)]
    return BoostAlone(boost_arm, len(top), len(alone), int(alone["relevant"].sum()),
                      int(alone["question_id"].nunique()))


def _exact_ties_share_floats(rows: pd.DataFrame, a: Anchors, config: pd.Series) -> pd.DataFrame:
    """Rows whose scores are equal as rationals get one float score and ratio (the
    largest of their floats), so thresholds never split an exact tie
    (:func:`rulegauge.fusion.exact.rrf_tie_classes`)."""
    if rows.empty or any(_rank_col(x) not in rows for x in a.arms):
        return rows
    if a.method != "rrf":  # every other method's ties are equal floats (rulegauge.fusion.order)
        return rows
    depths = [int(d) for d in config["depths"]] if "depths" in config else [2**31 - 1] * len(a.arms)
    ranks = rows[[_rank_col(x) for x in a.arms]].astype("float64").fillna(0).to_numpy(np.int64)
    cls = rrf_tie_classes(ranks, a.k, a.weights, depths, rows["fused_score"].to_numpy(float))
    out = rows.copy()
    for col in ("fused_score", "score_ratio"):
        out[col] = pd.Series(rows[col].to_numpy(float)).groupby(cls).transform("max").to_numpy()
    return out


def band_table(config: pd.Series, rows: pd.DataFrame, n_questions: int, top_k: int = 5,
               band: tuple[float, float] = BAND, boost_arm: str = BOOST_ARM) -> BandTable:
    """:class:`BandTable` of one config from its (validated) fused rows."""
    a = config_anchors(config)
    rows = _exact_ties_share_floats(rows, a, config)
    top = rows[rows["fused_rank"] <= top_k]
    cells = tuple(
        BandCell(int(cast(int, m)), bool(rel), summarise(g["fused_score"]), summarise(g["score_ratio"]))
        for (m, rel), g in top.groupby(["arms_voted", "relevant"], sort=True))
    rel = top[top["relevant"].astype(bool)]
    best = rel.loc[rel.groupby("question_id")["fused_rank"].idxmin()] if len(rel) else rel
    bands = (_healthy(best, None, band),
             *(_healthy(g, int(cast(int, m)), band) for m, g in best.groupby("arms_voted", sort=True)))
    first = rows[rows["fused_rank"] == 1]
    axis = "score_ratio" if a.has_ceiling else "fused_score"  # no ceiling: no ratio, the raw score
    return BandTable(
        config_id=str(config["config_id"]), name=str(config["name"]), kind=str(config["kind"]),
        top_k=top_k, anchors=a, n_questions=n_questions,
        n_no_hits=n_questions - int(rows["question_id"].nunique()), cells=cells, bands=bands,
        boost=_boost(top, a, boost_arm),
        chunks=separation(top[axis], top["relevant"], f"top-{top_k} chunks"),
        top_hit=separation(first[axis], first["relevant"], "top hits"))


def band_tables(fused: pd.DataFrame, configs: pd.DataFrame, questions: pd.DataFrame | None = None,
                top_k: int = 5, band: tuple[float, float] = BAND,
                boost_arm: str = BOOST_ARM) -> tuple[BandTable, ...]:
    """Validate ``fused`` and return one :class:`BandTable` per config, in
    :func:`rulegauge.core.config_order.config_sort_key` order. ``questions`` (the run's questions
    table) counts questions no arm found anything for; without it only questions present in ``fused`` count."""
    if top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}")
    validate(fused, configs)
    n_q = (int(questions["question_id"].nunique()) if questions is not None
           else int(fused["question_id"].nunique()))
    groups = dict(iter(fused.groupby("config_id", sort=False)))
    return tuple(band_table(c, groups.get(c["config_id"], fused.iloc[:0]), n_q, top_k, band,
                            boost_arm) for _, c in _sorted(configs).iterrows())


def _sorted(configs: pd.DataFrame) -> pd.DataFrame:
    keys = [config_sort_key(str(c)) for c in configs["config_id"]]
    return configs.iloc[sorted(range(len(keys)), key=keys.__getitem__)]


def run_band_tables(run: Run, top_k: int = 5, band: tuple[float, float] = BAND,
                    boost_arm: str = BOOST_ARM) -> tuple[BandTable, ...]:
    """:func:`band_tables` over an opened run."""
    questions = run.table("questions") if run.has_table("questions") else None
    return band_tables(run.table("fused"), run.table("configs"), questions, top_k, band,
                       boost_arm)
