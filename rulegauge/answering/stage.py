"""Answering's hooks into the kernel: its run stage, its metric facts and its compared table.

Definition: registers the stage ``answering`` in :data:`rulegauge.pipeline.stages.STAGES`
(``rulegauge run --answerer ...``), the metric frame of ``answer_metrics`` in
:data:`rulegauge.regression.metric_frames.METRIC_FRAMES`, and, by importing
:mod:`rulegauge.answering.metric_facts`, the answer metrics' facts. The kernel never
imports this module: :mod:`rulegauge.core.plugins` loads it (group ``rulegauge.stages``)
when a run names the stage, a metric name is not known or a compared side holds a table
outside the kernel's. The answering code itself is imported only when a hook runs.

The stage's options are :class:`AnswerStage`, answering's own record carried opaquely in
:attr:`rulegauge.pipeline.options.RunOptions.stages` (:func:`answering_stage` builds the
entry). Its hooks do what ``rulegauge run`` did before the kernel was split, in the same
order and with the same messages: ``-p`` names of answerer labels checked with the arms'
(``parameters``); the configs answering reads stored to the read's pool depth, then every
answerer's endpoint preflighted (``preflight``); answers, citations and answer metrics
written on the run's engine (``after_score``).

Edge cases: no ``--answerer`` given: the stage is not named, nothing here runs; an
``--answer-config`` not stored, or a fused depth below the pool, is refused before any
folder exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from rulegauge.answering import metric_facts  # noqa: F401 - declares the answer metrics
from rulegauge.core.engines import EngineChoice
from rulegauge.core.errors import ConfigError, Problem
from rulegauge.fusion.configs import FusionConfig, RunConfig
from rulegauge.pipeline.options import RunOptions
from rulegauge.pipeline.stages import STAGES, Stage, StageParameters, StageRequest
from rulegauge.regression.metric_frames import METRIC_FRAMES
from rulegauge.store.baseline import Side

NAME = "answering"


@dataclass(frozen=True)
class AnswerStage:
    """What a run asks of answering: the answerers (``LABEL=NAME`` or ``NAME``, each with
    its ``-p`` parameters) and the configs to answer (None: the grid's first)."""

    answerers: tuple[tuple[str, Mapping[str, Any]], ...]
    configs: tuple[str, ...] | None = None


def answering_stage(answerers: tuple[tuple[str, Mapping[str, Any]], ...],
                    configs: tuple[str, ...] | None = None) -> tuple[tuple[str, object], ...]:
    """The :attr:`RunOptions.stages` entry that makes a run answer (none without answerers)."""
    return ((NAME, AnswerStage(answerers, configs)),) if answerers else ()


def _record(record: object) -> AnswerStage:
    if not isinstance(record, AnswerStage):
        raise ConfigError(f"stage {NAME!r} takes an AnswerStage record, got {type(record).__name__}")
    return record


def request(req: StageRequest) -> tuple[object, frozenset[str]]:
    """``--answerer`` values and ``--answer-config`` -> the record; the ``-p`` names keyed by
    an answerer's label are its parameters (the rest are the arms')."""
    from rulegauge.answering.specs import split_label

    labels = frozenset(split_label(a)[0] for a in req.values)
    record = AnswerStage(tuple((a, dict(req.params.get(split_label(a)[0], {}))) for a in req.values),
                         tuple(req.configs) or None)
    return record, labels


def parameters(record: object) -> StageParameters:
    """Every answerer's label, and the problems of its ``-p`` parameters."""
    from rulegauge.answering.answerers import ANSWERERS
    from rulegauge.answering.specs import parse_specs
    from rulegauge.core.params import check_params

    labels: list[str] = []
    problems: list[Problem] = []
    for spec in parse_specs(_record(record).answerers):
        labels.append(spec.label)
        problems += [Problem("--param", m) for m in check_params(
            ANSWERERS.get(spec.name), dict(spec.params), f"answerer {spec.label}")]
    return StageParameters(tuple(labels), tuple(problems))


def preflight(record: object, options: RunOptions, cfg: RunConfig, stored: list[FusionConfig]) -> None:
    """Answering reads fused rows: its configs must be stored deep enough; then every
    answerer's endpoint is asked (a dead one fails here, before any retrieval work)."""
    from rulegauge.answering.read import ReadOptions
    from rulegauge.answering.runner import check_answerers

    rec = _record(record)
    wanted = rec.configs or (cfg.configs[0].config_id,)
    have = {c.config_id for c in stored} | {c.name for c in stored}
    missing = [c for c in wanted if c not in have]
    pool = ReadOptions().pool
    if missing or 0 < options.store.depth < pool:
        raise ConfigError(f"answering reads the fused rows of {list(wanted)}: store them "
                          f"(--fused-config; missing {missing}) to a depth of at least {pool} "
                          f"(--fused-depth 0 or >= {pool}; now {options.store.depth})")
    check_answerers(list(rec.answerers))


def after_score(record: object, run_dir: Path, engine: EngineChoice) -> None:
    """Read, answer, cite, fence and score on the run's engine: ``reads``, ``answers``,
    ``citations``, ``answer_metrics`` (and the judge's tables when one is set)."""
    from rulegauge.answering.runner import answer_run

    rec = _record(record)
    answer_run(run_dir, list(rec.answerers), configs=rec.configs, engine=engine)


def answer_metrics_frame(side: Side) -> pd.DataFrame:
    """A side's answer metrics (measured ones included) with each answer's ``outcome``
    (:func:`rulegauge.answering.answer_rows.answer_metric_frame`)."""
    from rulegauge.answering.answer_rows import answer_metric_frame

    cols = ["question_id", "config_id", "answerer", "metric", "value", "answerable"]
    am = answer_metric_frame(side)[cols]
    if side.has_table("answers"):
        keys = ["question_id", "config_id", "answerer"]
        am = am.merge(side.table("answers")[[*keys, "outcome"]], on=keys, how="left")
    return am


STAGES.add(NAME, Stage(NAME, "answer, cite and fence the fused reads (--answerer)", request,
                       parameters=parameters, preflight=preflight, after_score=after_score))
METRIC_FRAMES.add("answer_metrics", answer_metrics_frame)
