"""``rulegauge judges ppi RUN``: each config's metric from a human-judged sample of questions plus
automatic labels on the rest, with a prediction-powered interval (:mod:`rulegauge.judging.ppi`).

**Units are questions.** A run's metric is a mean over its answerable questions, so PPI
estimates that mean: each answerable question of the run is one unit. How labels become
a question's value: the question's page list of a config (its stored ``fused`` rows,
chunks collapsed to pages: :func:`rulegauge.judging.rankings.page_lists`) is scored with
``ir_measures`` (the metric's definition there, e.g. ``nDCG@10``, ``R@5``) against graded
qrels of that question, a page no label set judged counting as not relevant; a question
``ir_measures`` returns no value for (no qrels line) scores 0. Three label sets, each over
the run's gold set (listed pages with their grades, ``judged:`` pages):

* **human** ``H``: the gold set overlaid with the human judgments (people's grades win);
* **automatic** ``A``: the automatic judgments overlaid with the gold set (the gold set's
  people win, the automatic judge fills its holes), never with the human sample's
  judgments (``Yhat`` must be computed the same way on every question);
* **filled**: ``A`` overlaid with ``H``'s judgments (people where they judged, the
  automatic judge elsewhere): what a team would compute by filling the holes.

The **human sample** is the answerable questions the human judgments speak for (at least
one judgment); for each, ``Y`` is its value under ``H`` and ``Yhat`` under ``A``; every
other answerable question contributes ``Yhat`` only. The PPI interval is valid when the
human sample is a uniform random sample of the questions (pick the questions at random
before judging); it says nothing about questions outside the run. The difference of two
configs is PPI on the per-question differences (paired). Also reported, per config: the
classical interval on the human sample alone, and the mean over every answerable
question under the *human-only* labels (the gold set plus the human judgments, holes
unjudged) and under the *filled* ones, with Kendall's tau-b (``scipy.stats.kendalltau``)
between the configs' orders under the two (UMBRELA's check: Upadhyay et al. 2024).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from rulegauge.core.errors import Problem, RulegaugeError, ValidationError
from rulegauge.core.extras import needs
from rulegauge.goldset.labels import LabelSet, from_goldset, load_labels, overlay
from rulegauge.goldset.records import GoldSet
from rulegauge.judging.pool import runs_goldset
from rulegauge.judging.ppi import MeanInterval, classical_interval, ppi_interval
from rulegauge.judging.rankings import page_lists
from rulegauge.store.rundir import Run


@dataclass(frozen=True)
class PpiRequest:
    run: Run
    human: tuple[Path, ...]
    auto: tuple[Path, ...]
    metrics: tuple[str, ...] = ("nDCG@10",)
    baseline: str | None = None
    """Config the others are compared with (paired differences); None: no differences."""
    level: float = 0.95
    tuned: bool = True
    """PPI++'s tuned weight of the automatic labels (as ``ppi_py``'s default); False: the
    paper's weight 1."""


@dataclass(frozen=True)
class PpiRow:
    metric: str
    config_id: str
    baseline: str | None
    """For a difference row, the config subtracted; None for a config's own metric."""
    ppi: MeanInterval
    classical: MeanInterval
    human_only: float
    """Mean over every answerable question under the human-only labels."""
    filled: float
    """Mean over every answerable question under the filled labels."""


@dataclass(frozen=True)
class PpiResult:
    run_id: str
    questions: int
    """Answerable questions of the run (the units)."""
    sample: tuple[str, ...]
    """The human-labelled questions (``n``)."""
    human_judgments: int
    auto_judgments: int
    outside: tuple[str, ...]
    """Questions the human judgments speak for that are not answerable questions of the run."""
    rows: tuple[PpiRow, ...]
    tau: dict[str, float | None]
    """Per metric: Kendall's tau-b of the configs' orders under human-only and filled labels."""
    level: float
    tuned: bool


def question_values(lists: pd.DataFrame, labels: LabelSet, questions: Sequence[str],
                    metric: str) -> pd.DataFrame:
    """``config_id x question_id`` values of ``metric`` under ``labels`` (module docstring:
    a question without a value scores 0)."""
    with needs("judge", "judges ppi (metrics by ir_measures)"):
        import ir_measures  # the [judge] extra
    measure = ir_measures.parse_measure(metric)
    wanted = set(questions)
    qrels = [ir_measures.Qrel(q, p, g) for (q, p), g in sorted(labels.grades.items())
             if q in wanted]
    lists = lists[lists["question_id"].isin(wanted)]
    out = {}
    for cid, g in lists.groupby("config_id", sort=True):
        run = [ir_measures.ScoredDoc(q, p, 1.0 / float(r)) for q, p, r in zip(
            g["question_id"], g["page_id"], g["page_rank"], strict=True)]
        got = {m.query_id: float(m.value) for m in ir_measures.iter_calc([measure], qrels, run)}
        out[str(cid)] = [got.get(q, 0.0) for q in questions]
    return pd.DataFrame(out, index=list(questions)).T


def _check_metric(metric: str) -> None:
    with needs("judge", "judges ppi (metrics by ir_measures)"):
        import ir_measures  # the [judge] extra
    try:
        ir_measures.parse_measure(metric)
    except Exception as exc:  # ir_measures raises ValueError or its own NameError subclasses
        raise RulegaugeError(f"unknown ir_measures metric {metric!r} ({exc})") from None


def _labels(paths: Sequence[Path], gold: GoldSet) -> tuple[LabelSet, int]:
    """The judgments files laid over each other (checked against ``gold``), and their pairs."""
    sets = [load_labels(p, against=gold) for p in paths]
    merged = sets[0]
    for s in sets[1:]:
        merged = overlay(merged, s)
    return merged, sum(len(s.grades) for s in sets)


def _tau(a: Sequence[float], b: Sequence[float]) -> float | None:
    if len(a) < 2 or len(set(a)) < 2 or len(set(b)) < 2:
        return None
    with needs("judge", "judges ppi (Kendall's tau)"):
        from scipy.stats import kendalltau  # the [judge] extra
    return float(kendalltau(a, b).statistic)


def ppi_run(req: PpiRequest) -> PpiResult:
    """Every metric of every config with stored fused rows (module docstring)."""
    for m in req.metrics:
        _check_metric(m)
    gold = runs_goldset((req.run,))
    human, n_human = _labels(req.human, gold)
    auto, n_auto = _labels(req.auto, gold)
    problems = [Problem(str(req.human[0]), f"{len(human.llm)} pair(s) judged by LLM judges "
                        "only: the human sample must hold people's judgments (give LLM "
                        "judgments as automatic ones)")] if human.llm else []
    qt = req.run.table("questions")
    population = [str(q) for q, a in zip(qt["question_id"], qt["answerable"], strict=True) if a]
    sample = [q for q in population if q in human.questions]
    outside = tuple(sorted(human.questions - set(population)))
    if len(sample) < 2:
        problems.append(Problem(str(req.human[0]), f"the human judgments cover {len(sample)} "
                                "answerable question(s) of the run; an interval needs 2 or more"))
    lists = page_lists(req.run)
    configs = sorted(set(lists["config_id"].astype(str)))
    if req.baseline is not None and req.baseline not in configs:
        problems.append(Problem(str(req.run.path), f"config {req.baseline!r} has no stored fused "
                                f"rows in run {req.run.run_id}; configs: {', '.join(configs)}"))
    if problems:
        raise ValidationError(problems, "cannot compute prediction-powered intervals")
    base = from_goldset(gold)
    h, a = overlay(base, human), overlay(auto, base)
    filled = overlay(a, human)
    labelled = np.isin(np.asarray(population), np.asarray(sample))
    rows: list[PpiRow] = []
    tau: dict[str, float | None] = {}
    lam = None if req.tuned else 1.0
    for metric in req.metrics:
        vh, va, vf = (question_values(lists, labels, population, metric).reindex(
                          configs, fill_value=0.0).to_numpy(dtype=float)
                      for labels in (h, a, filled))
        at = {c: i for i, c in enumerate(configs)}
        pairs: list[tuple[str, str | None]] = [(c, None) for c in configs]
        if req.baseline is not None:
            pairs += [(c, req.baseline) for c in configs if c != req.baseline]
        for cid, ref in pairs:
            yh, ya, yf = ((v[at[cid]] - v[at[ref]]) if ref is not None else v[at[cid]]
                          for v in (vh, va, vf))
            rows.append(PpiRow(metric, cid, ref,
                               ppi_interval(yh[labelled], ya[labelled], ya[~labelled],
                                            level=req.level, lam=lam),
                               classical_interval(yh[labelled], level=req.level),
                               float(yh.mean()), float(yf.mean())))
        tau[metric] = _tau([float(x) for x in vh.mean(axis=1)],
                           [float(x) for x in vf.mean(axis=1)])
    return PpiResult(req.run.run_id, len(population), tuple(sample), n_human, n_auto, outside,
                     tuple(rows), tau, req.level, req.tuned)
