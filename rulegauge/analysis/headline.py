"""The report's headline: the best config, the service config, and how far apart they are.

* The **service config** is what production runs: weighted RRF at k = 60 over
  ``bm25``, ``dense`` and ``boost`` with weights 1 (id ``rrf_k60_bm25+dense+boost``);
  :func:`service_config` finds it by id, else by those parameters, else there is none.
* :func:`interval_frame`: per metric and config, the aggregate over the metric's scope
  (answerable questions for ranking metrics) and a 95 % BCa bootstrap interval
  of the *mean* (percentile where BCa is undefined) (:func:`rulegauge.metrics.stats.bootstrap_ci`, seeded); a metric
  aggregated by the median (``first_rel_rank``) or with non-finite values gets no
  interval (NaN), never a made-up one.
* :func:`best_per_method`: each fusion method's best config (RRF, CombMNZ, hybrid, Borda...
  side by side) with its paired difference to the service config and its interval;
* :func:`headline`: the best config (and its fusion method) on one metric (ties in numeric
  config order, :func:`rulegauge.metrics.selection.rank_configs`) against the service
  config: both values and the paired difference with its BCa bootstrap interval, its t
  margin of error and Cohen's d_z (:mod:`rulegauge.regression.effect_size`), permutation
  p-value and its adjusted p-value and flag under the one multiplicity rule
  (:mod:`rulegauge.metrics.multiplicity`: the family is every config against the service
  config), from :func:`rulegauge.analysis.report.config_comparison` with the service as
  reference; with its stability (:func:`rulegauge.regression.stability.stability`): the
  share of bootstrap resamples of questions in which it stays best and the configs
  statistically tied with it, so the headline reads "best, or tied with N others" when the
  data cannot separate them.

Reference: Efron & Tibshirani, "An Introduction to the Bootstrap" (1993), ch. 13.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rulegauge.metrics.selection import rank_configs
from rulegauge.regression.stability import Stability

HEADLINE_METRICS = ("recall@5", "hit@5", "MRR@10", "nDCG@10")

def interval_frame(metrics: pd.DataFrame, names: tuple[str, ...] = HEADLINE_METRICS,
                   confidence: float = 0.95, n_resamples: int = 2000,
                   seed: int = 0) -> pd.DataFrame:
    """Columns ``metric``, ``config_id``, ``value``, ``lo``, ``hi``, ``n``; the metrics
    of ``names`` the run has, configs ordered best first by the first of them."""
    from rulegauge.metrics.family import AGGREGATES
    from rulegauge.metrics.info import in_scope, metric_info
    from rulegauge.metrics.stats import bootstrap_ci

    rows = []
    present = [m for m in names if (metrics["metric"] == m).any()]
    for name in present:
        info = metric_info(name)
        if info is None:
            continue
        m = metrics[metrics["metric"] == info.name]
        m = in_scope(m, info)
        for cid, g in m.groupby("config_id", sort=True):
            v = g.sort_values("question_id")["value"].to_numpy(np.float64)
            lo = hi = math.nan
            if info.aggregate == "mean" and len(v) and np.all(np.isfinite(v)):
                lo, hi = bootstrap_ci(v, confidence, n_resamples, seed)
            rows.append({"metric": info.name, "config_id": str(cid),
                         "value": AGGREGATES.get(info.aggregate)(v), "lo": lo, "hi": hi,
                         "n": len(v), "sign": 1.0 if info.higher_is_better else -1.0})
    frame = pd.DataFrame(rows, columns=["metric", "config_id", "value", "lo", "hi", "n", "sign"])
    if frame.empty:
        return frame.drop(columns="sign")
    first = frame[frame["metric"] == frame["metric"].iloc[0]]
    ranked = rank_configs(dict(zip(first["config_id"], first["sign"] * first["value"], strict=True)))
    rank = {c: i for i, c in enumerate(ranked)}
    frame = frame.assign(_r=frame["config_id"].map(rank), _m=frame["metric"].map(
        {m: i for i, m in enumerate(present)}))
    return (frame.sort_values(["_m", "_r"], kind="stable")
            .drop(columns=["_r", "_m", "sign"]).reset_index(drop=True))


@dataclass(frozen=True)
class Headline:
    metric: str
    best: str
    best_value: float
    service: str | None
    service_value: float
    diff: float  # best - service (paired mean difference)
    ci_lo: float
    ci_hi: float
    p_value: float
    wins: int
    ties: int
    losses: int
    n: int
    method: str = ""  # the best config's fusion method
    p_adjusted: float = math.nan  # the difference's p under the family's adjustment
    significant: bool = False  # p_adjusted < the family's alpha
    family: str = ""  # "holm over 201 tests at alpha 0.05": what p_adjusted is adjusted over
    stability: Stability | None = None  # how often the best stays best; its statistical ties
    moe: float = math.nan  # the difference's 95% t margin of error (regression.effect_size)
    d_z: float = math.nan  # its Cohen's d_z


def config_methods(configs: pd.DataFrame) -> dict[str, str]:
    """config id -> fusion method (``arm-*`` configs: ``arm``, one arm alone)."""
    return {str(c): ("arm" if str(k) == "arm" else str(m))
            for c, m, k in zip(configs["config_id"], configs["method"], configs["kind"], strict=True)}


def best_per_method(comparison: pd.DataFrame, configs: pd.DataFrame) -> pd.DataFrame:
    """The best config of each fusion method in ``comparison`` (best first, as
    :func:`rulegauge.analysis.report.config_comparison` orders it), with its paired
    difference to the comparison's reference and that difference's interval; one row per
    method, best method first (configs of one arm alone are left out)."""
    methods = config_methods(configs)
    cols = [c for c in ("config_id", "value", "diff", "ci_lo", "ci_hi", "moe", "d_z", "p_value",
                                  "p_adjusted", "significant", "n") if c in comparison]
    rows = comparison.assign(method=comparison["config_id"].astype(str).map(methods))
    rows = rows[rows["method"].notna() & (rows["method"] != "arm")]
    best = rows.groupby("method", sort=False).head(1)
    return best[["method", *cols]].reset_index(drop=True)


def headline(comparison: pd.DataFrame, service: str | None, metric: str,
             methods: dict[str, str] | None = None) -> Headline:
    """The best config of ``comparison`` (best first, as
    :func:`rulegauge.analysis.report.config_comparison` orders it) against ``service``,
    which must be the comparison's reference when given."""
    best = comparison.iloc[0]
    nan = math.nan
    method = (methods or {}).get(str(best["config_id"]), "")
    if service is None:
        return Headline(metric, str(best["config_id"]), float(best["value"]), None, nan, nan,
                        nan, nan, nan, 0, 0, 0, int(best["n"]), method)
    svc = comparison[comparison["config_id"] == service].iloc[0]
    fam = comparison.attrs.get("family")
    family = f"{fam.method} over {fam.size} tests at alpha {fam.alpha:g}" if fam is not None else ""
    return Headline(metric, str(best["config_id"]), float(best["value"]), service,
                    float(svc["value"]), float(best["diff"]), float(best["ci_lo"]),
                    float(best["ci_hi"]), float(best["p_value"]), int(best["wins"]),
                    int(best["ties"]), int(best["losses"]), int(best["n"]), method,
                    float(best.get("p_adjusted", nan)), bool(best.get("significant", False)),
                    family, moe=float(best.get("moe", nan)), d_z=float(best.get("d_z", nan)))
