"""The metric conformance suite: what every registered metric family must keep.

:func:`check_metric` takes a family (by name) and reports:

* **canonical names round-trip**: ``Metric.parse(str(m)) == m`` at cutoffs 1, 5 and 10, with
  each declared parameter at its default and at another valid value (its condensed-list
  variant included);
* **value range**: every value on seeded synthetic runs lies within the family's declared
  ``bounds`` (NaN only for score metrics: a method without a ceiling): the check every run makes
  as it scores (:mod:`rulegauge.metrics.contract`);
* **fast path = full path**: the scoring path of ``rulegauge run`` (:func:`rulegauge.pipeline.sweep.score_configs`:
  top-m page lists from the kernel) gives the very values the full path gives
  (:func:`rulegauge.fusion.fuse.fuse` of every chunk, then :func:`rulegauge.metrics.pages.metrics_frame`),
  question by question, over RRF configs with small k (ties at the top-m boundary) and one config
  of every other registered method that keeps its contract, on graded and binary gold sets with judgments,
  and on arm lists holding foreign hits (ids that match no chunk, kept at their ranks);
* **a docs row**: a built-in family has its `` `label` `` row in docs/metrics.md (when
  rulegauge runs from its source tree; else ``skipped``); every family has a description.

Answer metrics (kind ``answer``) are computed per answer and search metrics (kind
``search``) per search call, not on page lists: only the names and the docs row are checked.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rulegauge.core import plugins
from rulegauge.fusion.contract import config_problems
from rulegauge.fusion.fuse import fuse
from rulegauge.fusion.method import FUSION_METHODS
from rulegauge.fusion.records import FusionConfig
from rulegauge.metrics.contract import MetricContractError
from rulegauge.metrics.family import METRICS, Metric, MetricFamily, MetricParam
from rulegauge.metrics.pages import metrics_frame
from rulegauge.pipeline.sweep import score_configs
from rulegauge.testing.synthetic import config, synthetic_ranks

CUTOFFS = (1, 5, 10)
CASES = ((5, False, 0), (8, True, 0), (9, False, 2))  # (seed, graded, foreign hits per arm list)


@dataclass(frozen=True)
class MetricCheck:
    name: str
    problems: tuple[str, ...]
    skipped: tuple[str, ...] = ()


def _other_value(p: MetricParam) -> Any:
    """A valid value of ``p`` other than its default (None when there is none)."""
    if p.type is bool:
        return not p.default
    lo = p.low if p.low is not None else p.default - 1.0
    hi = p.high if p.high is not None else p.default + 1.0
    value = p.type((p.default + hi) / 2 if hi > p.default else (p.default + lo) / 2)
    if value == p.default:
        value = p.type(p.default + 1)
    try:
        return p.check("", value)
    except Exception:
        return None


def variants(family: MetricFamily) -> list[Metric]:
    """The metrics the suite scores: the family at each cutoff, plain and with every parameter
    set to another valid value, one parameter at a time."""
    base = [Metric(family, k) for k in CUTOFFS] if family.takes_cutoff else [Metric(family, None)]
    out = list(base)
    for p in family.params:
        value = _other_value(p)
        if value is not None:
            out += [m.with_params(**{p.name: value}) for m in base]
    return out


def _round_trip(metrics: list[Metric]) -> list[str]:
    out = []
    for m in metrics:
        try:
            back = Metric.parse(str(m))
        except Exception as exc:
            out.append(f"{m}: its canonical name does not parse: {exc}")
            continue
        if back != m or back.name != m.name:
            out.append(f"{m}: parses back as {back}")
    return out


def scoring_configs() -> list[FusionConfig]:
    """RRF at small and usual k over three arm layouts, and one config of every other method that
    keeps the fusion contract."""
    out = [config("rrf", k=k, arms=arms, weights=w, depths=d) for k in (1.0, 20.0, 60.0)
           for arms, w, d in ((("a", "b", "c"), (1.0, 1.0, 1.0), (100, 100, 100)),
                              (("a", "b"), (1.0, 0.5), (3, 3)), (("b", "c"), (0.5, 2.0), (10, 50)))]
    out += [c for c in (config(name) for name in FUSION_METHODS.names() if name != "rrf") if _keeps_contract(c)]
    return out


def _keeps_contract(c: FusionConfig) -> bool:
    """Whether ``c``'s method passes the probes a run makes where it enters (a method a run would
    refuse is not what a metric is checked on: rulegauge.testing.fusion reports it)."""
    try:
        return not config_problems(FUSION_METHODS.get(c.method), c)
    except Exception:  # a probe's scores broke the contract, or the method raised
        return False


def _paths(metrics: list[Metric], family: MetricFamily) -> tuple[list[str], list[str]]:
    """(fast-path problems, range problems)."""
    fast_bad: list[str] = []
    range_bad: list[str] = []
    for seed, graded, foreign in CASES:
        data = synthetic_ranks(seed, graded=graded, chunks_per_page=3, foreign=foreign)
        configs = scoring_configs()
        try:
            fast = score_configs(data.matrix, data.gold, configs, metrics, workers=1)
        except MetricContractError as exc:  # what a run would refuse: a value outside the bounds
            return [], [str(exc)]
        except Exception as exc:
            return [f"the scoring path raised {type(exc).__name__}: {exc}"], []
        for c, values in zip(configs, fast, strict=True):
            try:
                table = metrics_frame(fuse(data.matrix, c), data.gold, metrics)
            except Exception as exc:
                fast_bad.append(f"{c.config_id}: the full path raised {type(exc).__name__}: {exc}")
                continue
            for m in metrics:
                want = table[table["metric"] == m.name]["value"].to_numpy(dtype=np.float64)
                got = np.asarray(values[m.name], dtype=np.float64)
                same = (got == want) | (np.isnan(got) & np.isnan(want))
                if len(got) != len(want) or not same.all():
                    at = int(np.flatnonzero(~same)[0]) if len(got) == len(want) else 0
                    fast_bad.append(f"{m} ({c.config_id}, seed {seed}): the fast path gives {float(got[at])!r}, "
                                    f"the full path {float(want[at])!r} for question "
                                    f"{data.questions[at].question_id}")
    return fast_bad[:5], range_bad[:5]


def docs_row(family: MetricFamily) -> tuple[list[str], list[str]]:
    """(problems, skipped) of the docs check (module docstring)."""
    problems = [] if family.description.strip() else [f"{family.name}: no description"]
    if plugins.origin("rulegauge.metrics", family.name) != plugins.BUILTIN:
        return problems, []
    import rulegauge

    doc = Path(rulegauge.__file__).resolve().parent.parent / "docs" / "metrics.md"
    if not doc.is_file():
        return problems, ["docs row: docs/metrics.md is not here (not a source tree)"]
    if f"`{family.label}`" not in doc.read_text(encoding="utf-8"):
        problems.append(f"{family.name}: no `{family.label}` row in docs/metrics.md")
    return problems, []


def check_metric(name: str | MetricFamily) -> MetricCheck:
    """Every check of the module docstring on one family; ``problems`` empty when it conforms."""
    family = METRICS.get(name) if isinstance(name, str) else name
    metrics = variants(family)
    problems = _round_trip(metrics)
    docs, skipped = docs_row(family)
    if family.kind in ("answer", "search"):  # computed per answer / per search call, not on page lists
        what = "an answer metric" if family.kind == "answer" else "a search metric"
        return MetricCheck(family.name, tuple(problems + docs), (*skipped, f"paths: {what}"))
    fast, ranges = _paths(metrics, family)
    return MetricCheck(family.name, tuple(itertools.chain(problems, ranges, fast, docs)), tuple(skipped))


