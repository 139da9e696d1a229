"""Which answerers a run asks: ``LABEL=NAME`` specs from flags and suites, built and closed.

:func:`split_label` is the one reading of ``LABEL=NAME`` (the CLI keys ``--param``
by the same label); :func:`parse_specs` checks names against the registry and labels
for uniqueness, reporting every problem at once; :func:`instantiate` builds an
answerer with its parameters, :func:`close` releases what it holds (HTTP pools).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rulegauge.answering.answerers import ANSWERERS, Answerer, load_builtin_answerers, make_answerer
from rulegauge.answering.journal import valid_label
from rulegauge.answering.suite import Suite
from rulegauge.core.errors import ConfigError, RulegaugeError


@dataclass(frozen=True)
class AnswererSpec:
    """``label`` names the answerer in tables; ``name`` is its registered name;
    ``concurrency`` (None: the run's ``max_workers``) bounds its calls in flight."""

    label: str
    name: str
    params: tuple[tuple[str, Any], ...] = ()
    concurrency: int | None = None


def split_label(item: str) -> tuple[str, str]:
    """``"big=ollama"`` -> ``("big", "ollama")``; ``"ollama"`` -> ``("ollama", "ollama")``
    (the label is what precedes the last ``=``; labels cannot hold ``=``)."""
    label, _, name = item.rpartition("=")
    return label or name, name


def parse_specs(answerers: Sequence[tuple[str, Mapping[str, Any]]]) -> tuple[AnswererSpec, ...]:
    """``[("extractive", {}), ("big=ollama", {"model": ...})]`` -> specs; the part
    before ``=`` is the label (default: the name). Labels must be unique."""
    load_builtin_answerers()
    specs, problems = [], []
    for item, params in answerers:
        label, name = split_label(item)
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
        raise RulegaugeError("; ".join(problems))
    return tuple(specs)


def suite_specs(suite: Suite) -> tuple[AnswererSpec, ...]:
    """The answerers a suite declares, as specs (labels from the suite's tables)."""
    return tuple(AnswererSpec(a.label, a.provider, a.params, a.concurrency)
                 for a in suite.answerers)


def merge_specs(flags: Sequence[AnswererSpec], suite: Sequence[AnswererSpec]
                ) -> tuple[AnswererSpec, ...]:
    """The suite's answerers, then the flags'; a label given in both raises."""
    clash = sorted({s.label for s in flags} & {s.label for s in suite})
    if clash:
        raise RulegaugeError(f"answerer label(s) {', '.join(clash)} given both on the command line "
                           "and in the suite; rename one (LABEL=NAME)")
    return (*suite, *flags)


def instantiate(spec: AnswererSpec) -> Answerer:
    """The answerer of ``spec``; a bad parameter raises naming the label."""
    try:
        return make_answerer(spec.name, **dict(spec.params))
    except ConfigError as exc:
        raise ConfigError(f"answerer {spec.label}: {exc}") from exc


def close(answerer: Any) -> None:
    """Release what an answerer holds (HTTP answerers hold a connection pool)."""
    method = getattr(answerer, "close", None)
    if callable(method):
        method()


def close_all(instances: Mapping[str, Any]) -> None:
    for a in instances.values():
        close(a)
