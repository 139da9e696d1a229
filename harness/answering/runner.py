"""Answer the questions of a run: reads -> answerers -> journal -> Parquet tables.

:func:`answer_run` works on a run directory that holds ``questions``,
``documents``, ``chunks``, ``configs`` and ``fused`` (``harness run`` calls it
after fusion; ``harness answer RUN`` calls it on an existing run):

1. The answering read (:func:`harness.answering.read.answering_read`) of every
   question under every chosen config is built once and written as ``reads``.
2. Every answerer is asked every (question, config) its journal does not hold yet
   (:mod:`harness.answering.journal`), on a bounded thread pool of
   ``max_workers`` (an answerer's ``max_concurrency`` attribute lowers it). Each
   answer is journaled as it arrives, so a killed run resumes where it stopped.
   A journaled answer is reused only while its prompt hash and request hash (the
   question and the passages read) are unchanged; ``retry_errors`` re-asks
   answers whose outcome was ``error``. An exception raised by an answerer is
   recorded as an ``error`` answer; KeyboardInterrupt stops the run.
3. All journals of the run are consolidated into ``answers``, ``citations`` and
   ``answer_metrics``, and the manifest records the read options, configs,
   prompt, fence parameters, each answerer's ``describe()``, the suite (path,
   SHA-256) and the maximum error rate.

Before step 1 writes anything, every answerer is constructed and its endpoint
checked (:mod:`harness.answering.preflight`); any problem raises one
:class:`ValidationError` naming every unreachable answerer, and nothing is asked.
An answerer with a ``covers(request)`` method (``production``) is asked only the
questions it covers; the manifest records that coverage so a later answering
keeps it. With a judge (``judge=LABEL`` or the suite's ``[judge]``), every
answer of a question with reference facts is judged after consolidation
(:mod:`harness.answering.judge`): ``judge_verdicts`` and ``judge_fact_recall``
rows in ``answer_metrics``. :meth:`AnswerSummary.over_error_rate` names the
answerers whose error rate is above the limit (the CLI then exits 1).

Defaults: ``configs=None`` takes the configs of an earlier answering of this run,
else the first config of kind ``grid`` (else the first config);
``read_options=None`` likewise takes the earlier options, else
:class:`ReadOptions` defaults. Changing either on a run already answered raises:
the answers would not be comparable.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from harness.answering.answerers import load_builtin_answerers, make_answerer
from harness.answering.answerers.base import (
    ANSWERERS,
    Answerer,
    AnswerRequest,
    AnswerResponse,
)
from harness.answering.fanout import ASKERS
from harness.answering.fence import DEFAULT_PARAMS
from harness.answering.frames import Key, ReadSet, answer_frames, build_reads, load_inputs, reads_frame
from harness.answering.journal import Journal, journal_path, valid_label
from harness.answering.preflight import DEFAULT_TIMEOUT_S, preflight_all
from harness.answering.prompt import describe as prompt_describe
from harness.answering.prompt import prompt_hash
from harness.answering.read import ReadOptions
from harness.answering.suite import DEFAULT_MAX_ERROR_RATE, Suite
from harness.core.engines import EngineChoice, open_engine
from harness.core.errors import ConfigError, HarnessError, ValidationError
from harness.core.limits import count_problem
from harness.core.redact import redact_params, redact_text
from harness.store.rundir import Run, RunWriter

Progress = Callable[[str, int], Any]


@dataclass(frozen=True)
class AnswererSpec:
    """``label`` names the answerer in tables; ``name`` is its registered name;
    ``concurrency`` (None: the run's ``max_workers``) bounds its calls in flight."""

    label: str
    name: str
    params: tuple[tuple[str, Any], ...] = ()
    concurrency: int | None = None


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


def parse_specs(answerers: Sequence[tuple[str, Mapping[str, Any]]]) -> tuple[AnswererSpec, ...]:
    """``[("extractive", {}), ("big=ollama", {"model": ...})]`` -> specs; the part
    before ``=`` is the label (default: the name). Labels must be unique."""
    load_builtin_answerers()
    specs, problems = [], []
    for item, params in answerers:
        label, _, name = item.rpartition("=")
        label = label or name
        if name not in ANSWERERS:
            problems.append(f"unknown answerer {name!r}; choose one of: "
                            f"{', '.join(ANSWERERS.names()) or '(none registered)'}")
        if not valid_label(label):
            problems.append(f"answerer label {label!r}: use letters, digits, '_', '.', '-'")
        specs.append(AnswererSpec(label, name, tuple(sorted(dict(params).items()))))
    labels = [s.label for s in specs]
    dupes = sorted({x for x in labels if labels.count(x) > 1})
    if dupes:
        problems.append(f"answerer labels repeat: {', '.join(dupes)} (alias with LABEL=NAME)")
    if not specs:
        problems.append("no answerer given")
    if problems:
        raise HarnessError("; ".join(problems))
    return tuple(specs)


def _instantiate(spec: AnswererSpec) -> Answerer:
    try:
        return make_answerer(spec.name, **dict(spec.params))
    except ConfigError as exc:
        raise ConfigError(f"answerer {spec.label}: {exc}") from exc


def request_hash(request: AnswerRequest) -> str:
    """SHA-256 of what the answerer is shown: question, language and passages."""
    blob = json.dumps([request.question, request.language,
                       [[p.n, p.chunk_id, p.title, p.heading, p.text] for p in request.passages]],
                      ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _record(spec: AnswererSpec, request: AnswerRequest, config_id: str, resp: AnswerResponse,
            prompt: str) -> dict[str, Any]:
    own = None if resp.read is None else [[p.n, p.chunk_id, p.doc_id, p.page, p.heading]
                                          for p in resp.read]
    return {"question_id": request.question_id, "config_id": config_id, "answerer": spec.label,
            "answerer_name": spec.name, "model_id": resp.model_id, "prompt_hash": prompt,
            "request_hash": request_hash(request), "text": resp.text, "outcome": resp.outcome,
            "latency_ms": resp.latency_ms, "tokens_in": resp.tokens_in,
            "tokens_out": resp.tokens_out,
            "error": None if resp.error is None else redact_text(resp.error), "own_read": own}


def _settle(previous: Mapping[str, Any], key: str, given: Any, default: Any) -> Any:
    """The given value, else the earlier answering's, else the default; a given
    value that differs from the earlier one raises."""
    before = previous.get(key)
    if given is None:
        return before if before is not None else default
    if before is not None and before != given:
        raise HarnessError(f"this run was answered with {key} = {before}; answering it again "
                           f"with {given} would mix incomparable answers (use a new run)")
    return given


def check_answerers(answerers: Sequence[tuple[str, Mapping[str, Any]]],
                    timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
    """Construct and preflight ``answerers`` without a run (``harness run -a`` calls it
    before retrieval, so a dead endpoint fails before any work); raises like
    :func:`answer_run`."""
    instances = {s.label: _instantiate(s) for s in parse_specs(answerers)}
    try:
        problems = preflight_all(instances, timeout_s)
    finally:
        _close_all(instances)
    if problems:
        raise ValidationError(problems, "answerer preflight failed; nothing was asked")


def suite_specs(suite: Suite) -> tuple[AnswererSpec, ...]:
    """The answerers a suite declares, as specs (labels from the suite's tables)."""
    return tuple(AnswererSpec(a.label, a.provider, a.params, a.concurrency)
                 for a in suite.answerers)


def answer_run(run_path: Path, answerers: Sequence[tuple[str, Mapping[str, Any]]] = (),
               configs: Sequence[str] | None = None, read_options: ReadOptions | None = None,
               max_workers: int | None = None, *, retry_errors: bool = False,
               progress: Progress | None = None, suite: Suite | None = None,
               preflight: bool = True, preflight_timeout_s: float = DEFAULT_TIMEOUT_S,
               max_error_rate: float | None = None, judge: str | None = None,
               engine: EngineChoice | None = None) -> AnswerSummary:
    """Read, preflight, ask, journal, consolidate and judge (see module docstring).

    ``answerers`` (CLI flags) and ``suite`` may both be given; their labels must
    differ. ``max_workers`` defaults to the suite's ``workers``, else 2;
    ``max_error_rate`` to the suite's, else 5%; ``judge`` (default the suite's
    ``[judge]``) names the label that judges reference facts (it answers too).
    ``engine`` (default local) is where the calls are made (:mod:`harness.answering.fanout`)."""
    engine = engine or EngineChoice()
    engine.check()
    if max_workers is None:
        max_workers = (suite.workers if suite is not None else None) or 2
    problem = count_problem("workers", max_workers)
    if problem:  # threads (or Ray calls) in flight per answerer
        raise HarnessError(f"--workers: {problem}")
    specs = parse_specs(answerers) if answerers or suite is None else ()
    if suite is not None:
        specs = _merge_specs(specs, suite_specs(suite))
    rate = max_error_rate if max_error_rate is not None else (
        suite.max_error_rate if suite is not None else DEFAULT_MAX_ERROR_RATE)
    judge = judge or (suite.judge if suite is not None else None)
    run = Run(Path(run_path))
    writer = RunWriter(run.path)
    previous: dict[str, Any] = dict(run.manifest.get("answering", {}))
    inputs = load_inputs(run)
    opts_dict = _settle(previous, "read_options",
                        read_options.describe() if read_options else None, ReadOptions().describe())
    options = ReadOptions(**{**opts_dict, "floors": tuple(opts_dict["floors"])})
    config_ids = tuple(_settle(previous, "configs", list(configs) if configs else None,
                               [inputs.default_config()]))
    inputs.check_configs(config_ids)
    old_specs = previous.get("answerers", {})
    for s in specs:
        old = old_specs.get(s.label)
        if old and (old["answerer"], old["params"]) != (s.name, redact_params(dict(s.params))):
            raise HarnessError(f"answerer label {s.label!r} was used in this run for "
                               f"{old['answerer']} {old['params']}; "
                               "pick another label (LABEL=NAME)")
    if judge is not None and judge not in {s.label for s in specs}:
        raise HarnessError(f"judge {judge!r} is not one of the answerers given: "
                           f"{', '.join(s.label for s in specs)}")
    instances = {s.label: _instantiate(s) for s in specs}
    if preflight:
        problems = preflight_all(instances, preflight_timeout_s)
        if problems:
            _close_all(instances)
            raise ValidationError(problems, "answerer preflight failed; nothing was asked")
    reads: ReadSet = build_reads(inputs, config_ids, options)
    writer.write_table("reads", reads_frame(reads, inputs))
    prompt = prompt_hash()
    order_labels = list(previous.get("order", []))
    order_labels += [s.label for s in specs if s.label not in order_labels]
    patch: dict[str, Any] = {"max_error_rate": rate}
    if suite is not None:
        patch["suite"] = suite.describe()
    writer.update_manifest({"answering": {**patch,
        "read_options": options.describe(), "configs": list(config_ids), "order": order_labels,
        "prompt": prompt_describe(), "fence": {**DEFAULT_PARAMS.describe(),
                                               "fingerprint": DEFAULT_PARAMS.fingerprint()},
        "answerers": {s.label: {"answerer": s.name, "params": redact_params(dict(s.params)),
                                "describe": instances[s.label].describe()} for s in specs}}})

    asked, reused, errors = {}, {}, {}
    with open_engine(engine) as info:
        writer.update_manifest({"answering": {"engine": info.describe()}})
        ask = ASKERS.get(info.name)
        for s in specs:
            journal = Journal(journal_path(run.path, s.label))
            have = journal.load()
            jobs = []
            answerer = instances[s.label]
            covers = getattr(answerer, "covers", None)
            for key, request in reads.requests.items():
                if callable(covers) and not covers(request):
                    continue
                rec = have.get(key)
                fresh = (rec is not None and rec["prompt_hash"] == prompt
                         and rec["request_hash"] == request_hash(request)
                         and not (retry_errors and rec["outcome"] == "error"))
                if not fresh:
                    jobs.append((key[1], request))
            covered = sum(1 for r in reads.requests.values()
                          if not callable(covers) or covers(r))
            asked[s.label], reused[s.label] = len(jobs), covered - len(jobs)
            limit = s.concurrency or max_workers
            workers = min(limit, int(getattr(answerer, "max_concurrency", None) or limit))
            bar_ctx = progress(f"answering with {s.label}", len(jobs)) if progress and jobs \
                else nullcontext()
            with journal, bar_ctx as bar:
                def done(config_id: str, request: AnswerRequest, resp: AnswerResponse,
                         spec: AnswererSpec = s, j: Journal = journal, b: Any = bar) -> None:
                    j.append(_record(spec, request, config_id, resp, prompt))
                    if b is not None:
                        b(1)

                try:
                    ask(answerer, partial(ANSWERERS.get(s.name), **dict(s.params)), jobs,
                        workers, done)
                finally:
                    if s.label != judge:
                        _close(answerer)

    records = {}
    coverage = _coverage(run, previous, instances, order_labels, reads)
    for label in order_labels:
        have = Journal(journal_path(run.path, label)).load()
        wanted = {k: req for k, req in reads.requests.items() if k in coverage[label]}
        missing = [k for k, req in wanted.items()
                   if k not in have or have[k]["prompt_hash"] != prompt
                   or have[k]["request_hash"] != request_hash(req)]
        if missing:
            raise HarnessError(f"answerer {label!r} (answered earlier in this run) has no current "
                               f"answer for {len(missing)} question/config pair(s), e.g. "
                               f"{missing[0]}; answer again with --answerer {label}")
        records[label] = [have[k] for k in wanted]
        errors[label] = sum(1 for r in records[label] if r["outcome"] == "error")
    writer.update_manifest({"answering": {"coverage": {
        label: sorted(f"{q}|{c}" for q, c in coverage[label])
        for label in order_labels if len(coverage[label]) < len(reads.requests)}}})
    judged = None
    if judge is not None:
        from harness.answering.judge import describe as judge_describe
        from harness.answering.judge import judge_answers, verdicts_by_answer

        flat = pd.DataFrame([{"question_id": r["question_id"], "config_id": r["config_id"],
                              "answerer": label, "outcome": r["outcome"], "text": r["text"]}
                             for label in order_labels for r in records[label]],
                            columns=["question_id", "config_id", "answerer", "outcome", "text"])
        verdicts = judge_answers(instances[judge], judge, flat, inputs.questions,
                                 progress=progress)
        _close(instances[judge])
        writer.write_table("judge_verdicts", verdicts)
        judged = verdicts_by_answer(verdicts)
        writer.update_manifest({"answering": {"judge": {
            "answerer": judge, "describe": instances[judge].describe(),
            "prompt": judge_describe()}}})
    answers, citations, metrics = answer_frames(records, reads, inputs, judged)
    writer.write_table("answers", answers)
    writer.write_table("citations", citations)
    writer.write_table("answer_metrics", metrics)
    return AnswerSummary(run.path, config_ids, tuple(order_labels), tuple(asked.items()),
                         tuple(reused.items()), tuple(errors.items()),
                         tuple((label, len(records[label])) for label in order_labels), rate)


def _close(answerer: Any) -> None:
    close = getattr(answerer, "close", None)  # HTTP answerers hold a connection pool
    if callable(close):
        close()


def _close_all(instances: Mapping[str, Any]) -> None:
    for a in instances.values():
        _close(a)


def _merge_specs(flags: Sequence[AnswererSpec], suite: Sequence[AnswererSpec]
                 ) -> tuple[AnswererSpec, ...]:
    clash = sorted({s.label for s in flags} & {s.label for s in suite})
    if clash:
        raise HarnessError(f"answerer label(s) {', '.join(clash)} given both on the command line "
                           "and in the suite; rename one (LABEL=NAME)")
    return (*suite, *flags)


def _coverage(run: Run, previous: Mapping[str, Any], instances: Mapping[str, Any],
              labels: Sequence[str], reads: ReadSet) -> dict[str, set[Key]]:
    """The (question, config) pairs each label answers: every pair, except for an
    answerer with ``covers`` (asked now: its verdicts; answered earlier: the
    coverage the manifest recorded)."""
    old = previous.get("coverage", {})
    out = {}
    for label in labels:
        a = instances.get(label)
        covers = getattr(a, "covers", None) if a is not None else None
        if callable(covers):
            out[label] = {k for k, r in reads.requests.items() if covers(r)}
        elif a is None and label in old:
            kept = set(old[label])
            out[label] = {k for k in reads.requests if f"{k[0]}|{k[1]}" in kept}
        else:
            out[label] = set(reads.requests)
    return out
