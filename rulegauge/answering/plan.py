"""Plan phase of answering: what a run will ask, settled and checked before anything is asked.

:class:`AnswerOptions` is what a caller asks for (the CLI builds it from flags and the
suite file); :func:`plan` settles it against the run and its earlier answering into an
:class:`AnswerPlan`: the answerer specs (flags and suite merged), the configs and read
options (the earlier answering's when not given; a change raises, the answers would not
be comparable), the label order, the judge, workers and error-rate limit. Nothing is
written and no answerer is built here.

Defaults: ``configs=None`` takes the configs of an earlier answering of this run, else
the first config of kind ``grid`` (else the first config); ``read_options=None`` likewise
takes the earlier options, else :class:`ReadOptions` defaults; ``max_workers`` the
suite's ``workers``, else 2; ``max_error_rate`` the suite's, else 5%; ``judge`` the
suite's ``[judge]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rulegauge.answering.breaker import DEFAULT_AFTER
from rulegauge.answering.frames import RunInputs, load_inputs
from rulegauge.answering.preflight import DEFAULT_TIMEOUT_S
from rulegauge.answering.prompt import prompt_hash
from rulegauge.answering.read import ReadOptions
from rulegauge.answering.specs import AnswererSpec, merge_specs, parse_specs, suite_specs
from rulegauge.answering.suite import DEFAULT_MAX_ERROR_RATE, Suite
from rulegauge.core.engines import EngineChoice
from rulegauge.core.errors import RulegaugeError
from rulegauge.core.limits import count_problem
from rulegauge.core.redact import redact_params
from rulegauge.store.rundir import Run


@dataclass(frozen=True)
class AnswerOptions:
    """What to answer a run with. ``answerers`` (CLI flags, ``(LABEL=NAME, params)``) and
    ``suite`` may both be given; their labels must differ. ``judge`` names the label
    that judges reference facts (it answers too); ``engine`` is where the calls are
    made (:mod:`rulegauge.answering.fanout`). None: the defaults of the module docstring."""

    answerers: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    configs: tuple[str, ...] | None = None
    read_options: ReadOptions | None = None
    max_workers: int | None = None
    retry_errors: bool = False
    suite: Suite | None = None
    preflight: bool = True
    preflight_timeout_s: float = DEFAULT_TIMEOUT_S
    max_error_rate: float | None = None
    judge: str | None = None
    engine: EngineChoice = field(default_factory=EngineChoice)
    breaker_after: int = DEFAULT_AFTER  # consecutive connection failures that stop an answerer
    skip_unreachable: bool = False  # drop answerers whose preflight fails instead of exit 2


@dataclass(frozen=True)
class AnswerPlan:
    """An answering settled against its run (see the module docstring)."""

    run: Run
    inputs: RunInputs
    specs: tuple[AnswererSpec, ...]
    config_ids: tuple[str, ...]
    read_options: ReadOptions
    order: tuple[str, ...]  # every label of the run, earlier ones first
    previous: Mapping[str, Any]  # the manifest's answering section before this answering
    judge: str | None
    max_workers: int
    max_error_rate: float
    retry_errors: bool
    prompt: str  # the prompt hash every journaled answer must match
    breaker_after: int = DEFAULT_AFTER


def _settle(previous: Mapping[str, Any], key: str, given: Any, default: Any) -> Any:
    """The given value, else the earlier answering's, else the default; a given
    value that differs from the earlier one raises."""
    before = previous.get(key)
    if given is None:
        return before if before is not None else default
    if before is not None and before != given:
        raise RulegaugeError(f"this run was answered with {key} = {before}; answering it again "
                           f"with {given} would mix incomparable answers (use a new run)")
    return given


def _specs(options: AnswerOptions) -> tuple[AnswererSpec, ...]:
    specs = parse_specs(options.answerers) if options.answerers or options.suite is None else ()
    return merge_specs(specs, suite_specs(options.suite)) if options.suite is not None else specs


def _check_labels(specs: tuple[AnswererSpec, ...], previous: Mapping[str, Any],
                  judge: str | None) -> None:
    old_specs = previous.get("answerers", {})
    for s in specs:
        old = old_specs.get(s.label)
        if old and (old["answerer"], old["params"]) != (s.name, redact_params(dict(s.params))):
            raise RulegaugeError(f"answerer label {s.label!r} was used in this run for "
                               f"{old['answerer']} {old['params']}; "
                               "pick another label (LABEL=NAME)")
    if judge is not None and judge not in {s.label for s in specs}:
        raise RulegaugeError(f"judge {judge!r} is not one of the answerers given: "
                           f"{', '.join(s.label for s in specs)}")


def plan(run_path: Path, options: AnswerOptions) -> AnswerPlan:
    """Settle ``options`` against the run at ``run_path`` (raises on any conflict)."""
    options.engine.check()
    suite = options.suite
    workers = options.max_workers
    if workers is None:
        workers = (suite.workers if suite is not None else None) or 2
    problem = count_problem("workers", workers)
    if problem:  # threads (or Ray calls) in flight per answerer
        raise RulegaugeError(f"--workers: {problem}")
    specs = _specs(options)
    rate = options.max_error_rate if options.max_error_rate is not None else (
        suite.max_error_rate if suite is not None else DEFAULT_MAX_ERROR_RATE)
    judge = options.judge or (suite.judge if suite is not None else None)
    run = Run(Path(run_path))
    previous: dict[str, Any] = dict(run.manifest.get("answering", {}))
    inputs = load_inputs(run)
    given = options.read_options
    opts = _settle(previous, "read_options", given.describe() if given else None,
                   ReadOptions().describe())
    read_options = ReadOptions(**{**opts, "floors": tuple(opts["floors"])})
    config_ids = tuple(_settle(previous, "configs",
                               list(options.configs) if options.configs else None,
                               [inputs.default_config()]))
    inputs.check_configs(config_ids)
    _check_labels(specs, previous, judge)
    order = list(previous.get("order", []))
    order += [s.label for s in specs if s.label not in order]
    return AnswerPlan(run, inputs, specs, config_ids, read_options, tuple(order), previous,
                      judge, workers, rate, options.retry_errors, prompt_hash(),
                      breaker_after=options.breaker_after)
