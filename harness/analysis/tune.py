"""Config selection without overfitting: k-fold cross-validation over questions.

Picking the best of many fusion configs on the same questions that then report its
score overstates that score (the winner's curse: with enough configs one fits the
noise of these particular questions). :func:`tune` estimates what the selection
procedure is worth on questions it has not seen:

* the questions in the metric's scope (answerable ones for ranking metrics, see
  :func:`harness.metrics.info.metric_info`) are split into ``folds`` folds,
  stratified by question language, shuffled with ``seed``
  (``sklearn.model_selection.StratifiedKFold``);
* in each fold, every config is aggregated (mean, or median for ``first_rel_rank``)
  over the *training* questions and the best one is chosen (higher or lower is
  better by the metric's direction; ties by config id, :mod:`harness.core.ordering`);
* the chosen config's values on the fold's *held-out* questions are kept; pooled over
  folds, each question is scored exactly once by a config chosen without it:
  ``held_out = aggregate(pooled held-out values)``;
* ``in_sample`` is the score one would report by choosing on all questions (the
  best config's aggregate over every question); ``gap = in_sample - held_out``
  (positive: the in-sample choice looks better than it generalises; for a
  lower-is-better metric the sign is flipped so positive still means optimism);
* ``wins``: how many folds chose each config (a stable winner wins every fold).

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
from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.core.errors import HarnessError
from harness.core.limits import count_problem
from harness.core.ordering import order

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
    ids = sorted(values)
    return ids[int(order([sign * values[c] for c in ids], ids)[0])]


def tune_frame(metrics: pd.DataFrame, questions: pd.DataFrame, metric: str = DEFAULT_METRIC,
               n_folds: int = 5, seed: int = 0) -> TuneResult:
    """Cross-validated config selection on a run's ``metrics`` and ``questions``
    tables (see the module docstring)."""
    from sklearn.model_selection import StratifiedKFold

    from harness.metrics.family import SCOPES
    from harness.metrics.info import metric_info

    info = metric_info(metric)
    if info is None:
        raise HarnessError(f"metric {metric!r} has no known direction; metrics in the run: "
                           f"{', '.join(sorted(metrics['metric'].unique()))}")
    rows = metrics[metrics["metric"] == info.name]
    rows = rows[SCOPES.get(info.scope)(rows)]
    if rows.empty:
        raise HarnessError(f"no {info.name} rows in scope ({info.scope}); metrics in the run: "
                           f"{', '.join(sorted(metrics['metric'].unique()))}")
    if n_folds < 2:
        raise HarnessError(f"--folds {n_folds}: need at least 2 folds")
    problem = count_problem("folds", n_folds, minimum=2)
    if problem:
        raise HarnessError(f"--folds: {problem}")
    wide = rows.pivot(index="question_id", columns="config_id", values="value").sort_index()
    if wide.isna().any().any():
        missing = sorted(wide.columns[wide.isna().any()])
        raise HarnessError(f"{info.name}: configs {', '.join(missing)} lack values for some "
                           "questions; every config needs every question")
    qids = wide.index.to_numpy(dtype=str)
    if len(qids) < n_folds:
        raise HarnessError(f"{len(qids)} questions in scope for {info.name}: too few for "
                           f"{n_folds} folds (use --folds {max(2, len(qids))} or fewer)")
    lang = questions.set_index("question_id")["language"].reindex(qids).fillna("?")
    stratum = strata(lang.astype(str), n_folds)
    values = {str(c): wide[c].to_numpy(np.float64) for c in wide.columns}
    sign = 1.0 if info.higher_is_better else -1.0
    splitter = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed)
    folds, pooled = [], np.empty(len(qids))
    for i, (train, test) in enumerate(splitter.split(qids, stratum.to_numpy())):
        train_values = {c: _aggregate(v[train], info.aggregate) for c, v in values.items()}
        chosen = _best(train_values, sign)
        pooled[test] = values[chosen][test]
        folds.append(Fold(i + 1, len(train), len(test), chosen, train_values[chosen],
                          _aggregate(values[chosen][test], info.aggregate),
                          tuple(sorted(qids[test].tolist()))))
    full = {c: _aggregate(v, info.aggregate) for c, v in values.items()}
    best = _best(full, sign)
    held_out = _aggregate(pooled, info.aggregate)
    wins = Counter(f.chosen for f in folds)
    return TuneResult(
        metric=info.name, higher_is_better=info.higher_is_better, aggregate=info.aggregate,
        n_folds=n_folds, seed=seed, n_questions=len(qids), n_configs=len(values),
        folds=tuple(folds),
        wins={c: wins[c] for c in sorted(wins, key=lambda c: (-wins[c], c))},
        best_in_sample=best, in_sample=full[best], held_out=held_out,
        gap=sign * (full[best] - held_out),
        strata=dict(zip(qids.tolist(), stratum.tolist(), strict=True)))


def tune(run: object, metric: str = DEFAULT_METRIC, n_folds: int = 5, seed: int = 0) -> TuneResult:
    """:func:`tune_frame` on a :class:`harness.store.rundir.Run`."""
    return tune_frame(run.table("metrics"), run.table("questions"),  # type: ignore[attr-defined]
                      metric, n_folds, seed)
