"""Checks of a run's options against its grid, before any run folder exists.

:func:`metric_specs` settles the metric list (``-m``, else the grid's ``metrics``,
else the defaults), raising with every problem at once. A product's own checks are its
stage's ``preflight`` (:mod:`rulegauge.pipeline.stages`; answering: the configs it reads
are stored deep enough).
"""

from __future__ import annotations

from typing import Any

from rulegauge.core.errors import Problem, RegistryError, ValidationError
from rulegauge.fusion.configs import RunConfig
from rulegauge.metrics.family import Metric
from rulegauge.metrics.ranking import DEFAULT_METRICS, parse
from rulegauge.pipeline.options import RunOptions


def metric_specs(options: RunOptions, cfg: RunConfig) -> list[Metric]:
    """The metrics of a run: ``-m`` names, else the grid file's top-level ``metrics``
    list, else :data:`DEFAULT_METRICS`; aliases (ranx, ir_measures) map to canonical
    names, repeats after mapping are dropped, every unknown name is reported."""
    where = "--metric" if options.metrics else f"{cfg.path}: metrics"
    names: Any = options.metrics or cfg.raw.get("metrics") or DEFAULT_METRICS
    if isinstance(names, str) or not isinstance(names, list | tuple) \
            or not all(isinstance(n, str) for n in names):
        raise ValidationError([Problem(where, f"must be a list of metric names, got {names!r}")],
                              "invalid metric list")
    specs: dict[str, Metric] = {}
    problems = []
    for n in names:
        try:
            s = parse(n)
        except RegistryError as exc:
            problems.append(Problem(where, str(exc)))
            continue
        specs.setdefault(s.name, s)
    if problems:
        raise ValidationError(problems, "invalid metric list")
    return list(specs.values())
