"""Config selection without overfitting: k-fold cross-validation over questions.

Picking the best of many fusion configs on the same questions that then report its
score overstates that score (the winner's curse: with enough configs one fits the
noise of these particular questions). :func:`tune` estimates what the selection
procedure is worth on questions it has not seen:

* the questions in the metric's scope (answerable ones for ranking metrics, see
  :func:`rulegauge.metrics.info.metric_info`) are split into ``folds`` folds,
  stratified by question language, shuffled with ``seed``
  (``sklearn.model_selection.StratifiedKFold``);
* in each fold, every config is aggregated (mean, or median for ``first_rel_rank``)
  over the *training* questions and the best one is chosen (higher or lower is
  better by the metric's direction; ties in numeric config order, :func:`rulegauge.metrics.selection.rank_configs`);
* the chosen config's values on the fold's *held-out* questions are kept; pooled over
  folds, each question is scored exactly once by a config chosen without it:
  ``held_out = aggregate(pooled held-out values)``;
* ``in_sample`` is the score one would report by choosing on all questions (the
  best config's aggregate over every question); ``gap = in_sample - held_out``
  (positive: the in-sample choice looks better than it generalises; for a
  lower-is-better metric the sign is flipped so positive still means optimism);
* ``wins``: how many folds chose each config (a stable winner wins every fold);
* ``methods``: each fusion method (RRF, CombMNZ, hybrid, Borda, ...) tuned alone on the
  same folds: the held-out score of its best setting with a 95 % BCa bootstrap
  interval over questions, and the paired held-out difference to the service config
  (``rrf_k60_bm25+dense+boost``) with its interval: "should we leave RRF?" answered on
  questions the choice did not see (ranx's ``optimize_fusion`` tunes in-sample); the
  differences' paired permutation p-values form one family adjusted by the multiplicity
  rule of compare, report and gate (:mod:`rulegauge.metrics.multiplicity`, Holm by
  default: ``p_adjusted``, ``significant``, ``method_family``);
* ``stability``: for the in-sample best config, the share of bootstrap resamples of
  questions in which it stays best and the configs statistically tied with it
  (:func:`rulegauge.regression.stability.stability`; ties in config order).

Conventions: a language with fewer questions than folds cannot be spread over every
fold, so such languages are pooled into one ``other`` stratum (and that stratum into
the largest language when it is still too small); fewer questions than folds is an
error. Means use :func:`math.fsum` so configs whose exact sums are equal tie exactly
and the id decides. Reference: Cawley & Talbot, "On over-fitting in model selection
and subsequent selection bias in performance evaluation", JMLR 11 (2010);
Varma & Simon, BMC Bioinformatics 7:91 (2006).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from rulegauge.core.config_order import config_sort_key
from rulegauge.core.errors import RulegaugeError
from rulegauge.core.limits import count_problem
from rulegauge.metrics.multiplicity import CorrectionFamily, family_of
from rulegauge.metrics.selection import primary_metric, rank_configs
from rulegauge.regression.stability import Stability, stability

DEFAULT_METRIC = "recall@5"
OTHER = "other"


@dataclass(frozen=True)
class Fold:
    """One fold: its questions, the config chosen on the others, and its scores."""

    fold: int
    n_train: int
    n_test: int
    chosen: str
    train_value: float
    test_value: float
    test_questions: tuple[str, ...]


@dataclass(frozen=True)
class MethodScore:
    """One fusion method's configs tuned alone by the same folds: the held-out score of
    choosing its best setting on training folds, a 95 % BCa bootstrap interval of that score,
    and the paired held-out difference to the service config with its interval (NaN
    without a service config, or for a median metric)."""

    method: str
    n_configs: int
    held_out: float
    lo: float
    hi: float
    diff: float
    diff_lo: float
    diff_hi: float
    chosen: tuple[str, ...]  # the setting chosen in each fold
    p_value: float = math.nan  # paired permutation test of the held-out difference
    p_adjusted: float = math.nan  # over the family of every method against the service
    significant: bool = False


@dataclass(frozen=True)
class TuneResult:
    metric: str
    higher_is_better: bool
    aggregate: str
    n_folds: int
    seed: int
    n_questions: int
    n_configs: int
    folds: tuple[Fold, ...]
    wins: dict[str, int]
    best_in_sample: str
    in_sample: float
    held_out: float
    gap: float
    strata: dict[str, str]
    methods: tuple[MethodScore, ...] = ()  # per fusion method, best first
    service: str | None = None
    method_family: CorrectionFamily | None = None  # the family of the methods' p_adjusted
    stability: Stability | None = None  # of best_in_sample


def _aggregate(values: np.ndarray, how: str) -> float:
    if how == "median":
        return float(np.median(values))
    return math.fsum(values.tolist()) / len(values)


def strata(languages: pd.Series, n_folds: int) -> pd.Series:
    """Stratum per question: its language, or ``other`` for languages with fewer
    questions than folds (merged into the largest language if still too small)."""
    counts = languages.value_counts()
    rare = set(counts[counts < n_folds].index)
    out = languages.where(~languages.isin(rare), OTHER)
    if rare and (out == OTHER).sum() < n_folds and (out != OTHER).any():
        common = out[out != OTHER].value_counts()
        largest = sorted(common.index[common == common.max()])[0]
        out = out.where(out != OTHER, largest)
    return out


def _best(values: dict[str, float], sign: float) -> str:
    # the report's and the run summary's order: ties in numeric config order
    return rank_configs({c: sign * v for c, v in values.items()})[0]


def _cross_validate(values: dict[str, np.ndarray], splits: list[tuple[np.ndarray, np.ndarray]],
                    how: str, sign: float) -> tuple[np.ndarray, list[tuple[str, float, float]]]:
    """(pooled held-out values, per fold (chosen, train value, test value))."""
    pooled = np.empty(len(next(iter(values.values()))))
    per = []
    for train, test in splits:
        train_values = {c: _aggregate(v[train], how) for c, v in values.items()}
        chosen = _best(train_values, sign)
        pooled[test] = values[chosen][test]
        per.append((chosen, train_values[chosen], _aggregate(values[chosen][test], how)))
    return pooled, per


def _method_scores(values: dict[str, np.ndarray], methods: dict[str, str], splits: list[tuple[np.ndarray, np.ndarray]],
                   how: str, sign: float, service: str | None, seed: int
                   ) -> tuple[tuple[MethodScore, ...], CorrectionFamily | None]:
    """Each fusion method tuned alone by the same folds (see :class:`MethodScore`), and
    the family of their differences to the service config."""
    from rulegauge.metrics.stats import bootstrap_ci, permutation_test

    nan = math.nan
    out = []
    for m in sorted({methods[c] for c in values if methods.get(c, "arm") != "arm"}):
        mine = {c: v for c, v in values.items() if methods.get(c) == m}
        pooled, per = _cross_validate(mine, splits, how, sign)
        lo = hi = d = dlo = dhi = p = nan
        if how == "mean" and np.all(np.isfinite(pooled)):
            lo, hi = bootstrap_ci(pooled, 0.95, 2000, seed)
            if service is not None and service in values:
                delta = pooled - values[service]
                d = math.fsum(delta.tolist()) / len(delta)
                dlo, dhi = bootstrap_ci(delta, 0.95, 2000, seed)
                p = permutation_test(delta, 10_000, seed).p_value
        out.append(MethodScore(m, len(mine), _aggregate(pooled, how), lo, hi, d, dlo, dhi,
                               tuple(c for c, _, _ in per), p))
    ranked = sorted(out, key=lambda r: (-sign * r.held_out, r.method))
    if service is None or service not in values:
        return tuple(ranked), None
    adjusted, family = family_of([(f"{r.method} -> {service}", "held-out") for r in ranked],
                                 [r.p_value for r in ranked],
                                 scope=f"every method's held-out choice against {service}")
    flags = {pair for pair, _ in family.flagged}
    return tuple(replace(r, p_adjusted=float(a), significant=f"{r.method} -> {service}" in flags)
                 for r, a in zip(ranked, adjusted, strict=True)), family


def tune_frame(metrics: pd.DataFrame, questions: pd.DataFrame, metric: str = DEFAULT_METRIC,
               n_folds: int = 5, seed: int = 0, methods: dict[str, str] | None = None,
               service: str | None = None) -> TuneResult:
    """Cross-validated config selection on a run's ``metrics`` and ``questions``
    tables (see the module docstring). With ``methods`` (config id -> fusion method)
    each method is also tuned alone on the same folds (:class:`MethodScore`), against
    ``service`` (the service config's id) when given."""
    from sklearn.model_selection import StratifiedKFold

    from rulegauge.metrics.info import scored_rows

    info, rows = scored_rows(metrics, metric)
    if n_folds < 2:
        raise RulegaugeError(f"--folds {n_folds}: need at least 2 folds")
    problem = count_problem("folds", n_folds, minimum=2)
    if problem:
        raise RulegaugeError(f"--folds: {problem}")
    wide = rows.pivot(index="question_id", columns="config_id", values="value").sort_index()
    if wide.isna().any().any():
        missing = sorted(wide.columns[wide.isna().any()])
        raise RulegaugeError(f"{info.name}: configs {', '.join(missing)} lack values for some "
                           "questions; every config needs every question")
    qids = wide.index.to_numpy(dtype=str)
    if len(qids) < n_folds:
        raise RulegaugeError(f"{len(qids)} questions in scope for {info.name}: too few for "
                           f"{n_folds} folds (use --folds {max(2, len(qids))} or fewer)")
    lang = questions.set_index("question_id")["language"].reindex(qids).fillna("?")
    stratum = strata(lang.astype(str), n_folds)
    values = {str(c): wide[c].to_numpy(np.float64) for c in wide.columns}
    sign = 1.0 if info.higher_is_better else -1.0
    splitter = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed)
    splits = list(splitter.split(qids, stratum.to_numpy()))
    pooled, per = _cross_validate(values, splits, info.aggregate, sign)
    folds = [Fold(i + 1, len(train), len(test), chosen, tr, te, tuple(sorted(qids[test].tolist())))
             for i, ((train, test), (chosen, tr, te)) in enumerate(zip(splits, per, strict=True))]
    full = {c: _aggregate(v, info.aggregate) for c, v in values.items()}
    best = _best(full, sign)
    held_out = _aggregate(pooled, info.aggregate)
    wins = Counter(f.chosen for f in folds)
    scores, family = (_method_scores(values, methods, splits, info.aggregate, sign, service, seed)
                      if methods else ((), None))
    stable = stability(values, best, higher_is_better=info.higher_is_better,
                       aggregate=info.aggregate, n_resamples=1000, seed=seed, metric=info.name)
    return TuneResult(
        metric=info.name, higher_is_better=info.higher_is_better, aggregate=info.aggregate,
        n_folds=n_folds, seed=seed, n_questions=len(qids), n_configs=len(values),
        folds=tuple(folds),
        wins={c: wins[c] for c in sorted(wins, key=lambda c: (-wins[c], config_sort_key(c)))},
        best_in_sample=best, in_sample=full[best], held_out=held_out,
        gap=sign * (full[best] - held_out),
        strata=dict(zip(qids.tolist(), stratum.tolist(), strict=True)),
        methods=scores, service=service if service in values else None, method_family=family,
        stability=stable)


def tune(run: object, metric: str | None = None, n_folds: int = 5, seed: int = 0,
         only: Sequence[str] = ()) -> TuneResult:
    """:func:`tune_frame` on a :class:`rulegauge.store.rundir.Run`, on ``metric`` (default the
    run's :func:`rulegauge.metrics.selection.primary_metric`, as the report and the run
    summary rank); ``only`` (config ids) limits the choice to those configs (the comparison
    with the service config is then made only when it is one of them)."""
    from rulegauge.analysis.headline import config_methods
    from rulegauge.regression.service import service_config

    metric = metric or primary_metric(run.manifest)  # type: ignore[attr-defined]

    configs = run.table("configs")  # type: ignore[attr-defined]
    metrics = run.table("metrics")  # type: ignore[attr-defined]
    service = service_config(configs)
    if only:
        known = set(configs["config_id"])
        unknown = sorted(set(only) - known)
        if unknown:
            raise RulegaugeError(f"config(s) {', '.join(unknown)} are not in this run; it has "
                               f"{len(known)}: {', '.join(sorted(known)[:10])}...")
        metrics = metrics[metrics["config_id"].isin(set(only))]
        service = service if service in set(only) else None
    return tune_frame(metrics, run.table("questions"),  # type: ignore[attr-defined]
                      metric, n_folds, seed, config_methods(configs), service)
