"""Answer the questions of a run in phases: plan -> ask -> consolidate -> judge.

:func:`answer_run` works on a run directory that holds ``questions``, ``documents``,
``chunks``, ``configs`` and ``fused`` (the run lifecycle calls it after fusion;
``rulegauge answer RUN`` on an existing run):

1. plan (:mod:`rulegauge.answering.plan`): the options settled against the run and
   its earlier answering; nothing written, nothing built;
2. open: every answerer is constructed and its endpoint checked
   (:mod:`rulegauge.answering.preflight`); any problem raises one
   :class:`ValidationError` naming every unreachable answerer, and nothing is asked;
3. reads: the answering read (:func:`rulegauge.answering.read.answering_read`) of
   every question under every chosen config, written as ``reads``; the manifest
   records the read options, configs, prompt, fence parameters, each answerer's
   ``describe()``, the suite (path, SHA-256) and the maximum error rate;
4. ask (:mod:`rulegauge.answering.asking`): what the journals lack, on the engine;
5. consolidate (:mod:`rulegauge.answering.consolidate`): every journal of the run ->
   ``answers``, ``citations``, ``answer_metrics``; with a judge (``judge=LABEL`` or
   the suite's ``[judge]``) every answer of a question with reference facts is judged
   first (:mod:`rulegauge.answering.judge`): ``judge_verdicts`` and the
   ``judge_fact_recall`` rows of ``answer_metrics``.

:meth:`AnswerSummary.over_error_rate` names the answerers whose error rate is above
the limit (the CLI then exits 1). Every answerer built is closed, whatever happens.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rulegauge.answering.asking import ask_all
from rulegauge.answering.consolidate import consolidate, coverage, coverage_patch, judge
from rulegauge.answering.fence import DEFAULT_PARAMS
from rulegauge.answering.frames import answer_frames, build_reads, reads_frame
from rulegauge.answering.plan import AnswerOptions, AnswerPlan, plan
from rulegauge.answering.preflight import DEFAULT_TIMEOUT_S, preflight_all, unreachable
from rulegauge.answering.prompt import describe as prompt_describe
from rulegauge.answering.specs import close_all, instantiate, parse_specs
from rulegauge.core.engines import open_engine
from rulegauge.core.errors import Problem, ValidationError
from rulegauge.core.redact import redact_params
from rulegauge.store.rundir import RunWriter

log = logging.getLogger(__name__)

Progress = Callable[[str, int], Any]


@dataclass(frozen=True)
class AnswerSummary:
    path: Path
    configs: tuple[str, ...]
    answerers: tuple[str, ...]
    asked: tuple[tuple[str, int], ...]
    reused: tuple[tuple[str, int], ...]
    errors: tuple[tuple[str, int], ...]
    answers: tuple[tuple[str, int], ...] = ()
    max_error_rate: float = 0.05

    def error_rate(self, label: str) -> float:
        """Errors / answers of ``label`` in the consolidated tables (0 with no answer)."""
        n = dict(self.answers).get(label, 0)
        return dict(self.errors).get(label, 0) / n if n else 0.0

    def over_error_rate(self) -> tuple[str, ...]:
        """Labels whose error rate is above ``max_error_rate``."""
        return tuple(label for label in self.answerers
                     if self.error_rate(label) > self.max_error_rate)


def check_answerers(answerers: Sequence[tuple[str, Mapping[str, Any]]],
                    timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
    """Construct and preflight ``answerers`` without a run (``rulegauge run -a`` calls it
    before retrieval, so a dead endpoint fails before any work); raises like
    :func:`answer_run`."""
    instances = {s.label: instantiate(s) for s in parse_specs(answerers)}
    try:
        problems = preflight_all(instances, timeout_s)
    finally:
        close_all(instances)
    if problems:
        raise ValidationError(problems, "answerer preflight failed; nothing was asked")


def _manifest(p: AnswerPlan, options: AnswerOptions, instances: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest's ``answering`` section of this answering (before anything is asked)."""
    section: dict[str, Any] = {"max_error_rate": p.max_error_rate}
    if options.suite is not None:
        section["suite"] = options.suite.describe()
    return {**section, "read_options": p.read_options.describe(), "configs": list(p.config_ids),
            "order": list(p.order), "prompt": prompt_describe(),
            "fence": {**DEFAULT_PARAMS.describe(), "fingerprint": DEFAULT_PARAMS.fingerprint()},
            "answerers": {s.label: {"answerer": s.name, "params": redact_params(dict(s.params)),
                                    "describe": instances[s.label].describe()} for s in p.specs}}


def _preflight(p: AnswerPlan, opts: AnswerOptions, instances: dict[str, Any]
               ) -> tuple[AnswerPlan, dict[str, Any]]:
    """Preflight every answerer: raise on any problem, or, with ``skip_unreachable``,
    leave the unreachable ones out of this answering (a warning names each; their earlier
    answers stay) as long as one answerer is left."""
    dead = unreachable(instances, opts.preflight_timeout_s)
    if not dead:
        return p, instances
    problems = [Problem(f"answerer {label} ({getattr(instances[label], 'name', '?')})", msg)
                for label, msg in dead.items()]
    if not opts.skip_unreachable or len(dead) == len(instances):
        why = "; every answerer is unreachable" if opts.skip_unreachable else ""
        raise ValidationError(problems, f"answerer preflight failed{why}; nothing was asked")
    for problem in problems:
        log.warning("skipped (--skip-unreachable): %s", problem)
    earlier = set(p.previous.get("answerers", {}))
    close_all({k: instances[k] for k in dead})
    p = replace(p, specs=tuple(s for s in p.specs if s.label not in dead),
                order=tuple(label for label in p.order if label not in dead or label in earlier),
                judge=None if p.judge in dead else p.judge)
    return p, {k: v for k, v in instances.items() if k not in dead}


def answer_run(run_path: Path, answerers: Sequence[tuple[str, Mapping[str, Any]]] = (),
               configs: Sequence[str] | None = None, options: AnswerOptions | None = None,
               progress: Progress | None = None, **changes: Any) -> AnswerSummary:
    """Plan, open, read, ask, consolidate and judge (see the module docstring).

    ``options`` holds every setting (:class:`~rulegauge.answering.plan.AnswerOptions`);
    ``answerers``, ``configs`` and keyword ``changes`` (any field of it, e.g.
    ``max_workers=1``, ``engine=EngineChoice("ray")``) override its fields."""
    opts = options or AnswerOptions()
    if answerers:
        changes["answerers"] = tuple((a, dict(p)) for a, p in answerers)
    if configs:
        changes["configs"] = tuple(configs)
    opts = replace(opts, **changes)
    p = plan(run_path, opts)
    instances = {s.label: instantiate(s) for s in p.specs}
    writer = RunWriter(p.run.path)
    try:
        if opts.preflight:
            p, instances = _preflight(p, opts, instances)
        reads = build_reads(p.inputs, p.config_ids, p.read_options)
        writer.write_table("reads", reads_frame(reads, p.inputs))
        writer.update_manifest({"answering": _manifest(p, opts, instances)})
        with open_engine(opts.engine) as info:
            writer.update_manifest({"answering": {"engine": info.describe()}})
            asked, reused = ask_all(p, instances, reads, info.name, progress)
        covered = coverage(p, instances, reads)
        records = consolidate(p, covered, reads)
        writer.update_manifest({"answering": {"coverage": coverage_patch(covered, reads)}})
        judged = None
        if p.judge is not None:
            verdicts, judged, described = judge(p, p.judge, instances[p.judge], records, progress)
            writer.write_table("judge_verdicts", verdicts)
            writer.update_manifest({"answering": {"judge": described}})
        answers, citations, metrics = answer_frames(records, reads, p.inputs, judged)
        writer.write_table("answers", answers)
        writer.write_table("citations", citations)
        writer.write_table("answer_metrics", metrics)
    finally:
        close_all(instances)  # idempotent for those ask_all closed already
        writer.close()
    errors = {label: sum(1 for r in records[label] if r["outcome"] == "error") for label in p.order}
    return AnswerSummary(p.run.path, p.config_ids, p.order, tuple(asked.items()),
                         tuple(reused.items()), tuple(errors.items()),
                         tuple((label, len(records[label])) for label in p.order),
                         p.max_error_rate)
