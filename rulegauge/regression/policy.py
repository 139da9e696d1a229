"""Gate policies: a TOML file saying which drops of which metrics fail a change.

Format (every key is documented in ``docs/gate.md``)::

    [gate]
    config = "prod"               # config id or name to gate (both sides)
    candidate_config = "prod"     # the candidate's, when it differs
    answerer = "extractive"       # answerer label for answer metrics (both sides)
    base_answerer = "small"       # or: gate one answerer against another (same run
    candidate_answerer = "big"    #     or across runs); each defaults to `answerer`
    alpha = 0.05                  # default significance level of every metric
    adjustment = "holm"           # multiplicity rule: holm (default) or bh (metrics/multiplicity)
    family = "gated"              # gated: the policy's metrics of the gated pair; grid: those
                                  #   metrics for every candidate config against the base config
    power = 0.8                   # power of the MDE printed per metric (regression/power)
    sd_source = "grid"            # SD of paired differences: grid (neighbouring configs of the
                                  #   run), comparison (this comparison's own differences)
    power_method = "resampled"    # MDE of the gate's permutation test by resampling those
                                  #   differences (regression/power_resample), or "t-test"
    require_mde = false           # exit 2 when a metric's MDE exceeds its max_drop
    seed = 0                      # permutation / bootstrap seed
    n_resamples = 10000           # sign patterns: 40..1,000,000 at alpha 0.05 (fewer never flag)
    confidence = 0.95             # bootstrap CI level
    min_llm_kappa = 0.6           # admit LLM-only judged pages only at this kappa, shown by
    llm_agreement = "agree.json"  #   `rulegauge judges agreement --json` (regression/llm_admission)

    [metrics."hit@5"]
    floor = 0.80                  # absolute limit on the candidate's aggregate
    max_drop = 0.05               # largest allowed worsening, metric units
    max_drop_relative = 0.10      # largest allowed worsening, fraction of the base
    alpha = 0.05                  # fail a significant worsening (Holm-adjusted p < alpha)
    pinned = ["q-03", "q-11"]     # questions that must not get worse (keep their hit)
    sd = 0.3                      # stated SD of the paired differences (overrides sd_source)

    [metrics.search_p50_ms]
    max_increase = 50             # largest allowed increase, percent of the base (lower-is-better
                                  #   metrics only: search and answer latency, first_rel_rank...)

    [metrics.first_rel_rank]
    max_worse = 1                 # at most 1 question may get worse (here: lose rank on its
                                  #   first relevant page)

    [overlap]                     # the gated config's two runs agree (no judgments needed)
    depth = 10                    # top k of each fused list (default 10)
    p = 0.9                       # RBO persistence (default 0.9)
    min_rbo = 0.8                 # median RBO_ext@k over the questions >= 0.8
    min_jaccard = 0.5             # median Jaccard@k >= 0.5

    [slices.errata]               # a slice of the gold set with checks of its own
    tag = "errata"                # selectors (all given must hold): tag, game, language,
                                  #   answerable, labelled (true/false), questions (ids)
    [slices.errata.metrics."recall@5"]
    max_drop = 0.0                # any metric key above; its own family (regression/slices)
    [slices.log.overlap]          # a slice may gate overlap too: [slices.log] labelled = false

"Worse" follows the metric's direction (``first_rel_rank``: higher is worse),
and ``floor`` is the worst acceptable aggregate in that direction. The fence pass
rate and citation precision are gated as ``[metrics.fence_pass]`` and
``[metrics.citation_precision]`` floors. Malformed policies raise
:class:`PolicyError` listing every problem with file and key.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rulegauge.core.errors import ConfigError, Problem, ValidationError
from rulegauge.core.limits import real_problem
from rulegauge.metrics.info import known_metric_names, metric_info
from rulegauge.metrics.multiplicity import ADJUSTMENTS
from rulegauge.metrics.resample import resamples_problem
from rulegauge.regression.policy_slices import OverlapRule, SliceSpec, read_overlap, read_slices

GATE_KEYS = ("config", "candidate_config", "answerer", "base_answerer", "candidate_answerer",
             "alpha", "seed", "n_resamples", "confidence", "min_llm_kappa", "llm_agreement",
             "adjustment", "family", "power", "sd_source", "require_mde", "power_method")
METRIC_KEYS = ("floor", "max_drop", "max_drop_relative", "max_increase", "alpha", "pinned", "sd",
               "max_worse")
CHECK_KEYS = ("floor", "max_drop", "max_drop_relative", "max_increase", "alpha", "pinned",
              "max_worse")  # sd is no check
FAMILIES = ("gated", "grid")
SD_SOURCES = ("grid", "comparison")
POWER_METHODS = ("resampled", "t-test")


class PolicyError(ValidationError, ConfigError):
    """A gate policy that cannot be read or is malformed (every problem listed)."""


@dataclass(frozen=True)
class MetricPolicy:
    """The checks of one metric; None means the check is not asked for."""

    metric: str
    floor: float | None = None
    max_drop: float | None = None
    max_drop_relative: float | None = None
    alpha: float | None = None
    pinned: tuple[str, ...] = ()
    sd: float | None = None
    """A stated SD of the paired differences for the MDE (None: estimated)."""
    max_increase: float | None = None
    """Largest allowed increase of a lower-is-better metric's aggregate, in percent of the base."""
    max_worse: int | None = None
    """Most questions allowed to get worse on the metric (a count, not a mean)."""


@dataclass(frozen=True)
class Policy:
    path: str
    metrics: tuple[MetricPolicy, ...]
    config: str | None = None
    candidate_config: str | None = None
    answerer: str | None = None
    alpha: float | None = None
    seed: int = 0
    n_resamples: int = 10_000
    confidence: float = 0.95
    base_answerer: str | None = None
    candidate_answerer: str | None = None
    min_llm_kappa: float | None = None
    """LLM-only judged pages are admitted only when ``llm_agreement`` shows this kappa."""
    llm_agreement: str | None = None
    """``rulegauge judges agreement --json`` record, relative to the policy file."""
    adjustment: str = "holm"
    """The multiplicity adjustment (:data:`rulegauge.metrics.multiplicity.ADJUSTMENTS`)."""
    family: str = "gated"
    """gated: the policy's metrics of the gated pair; grid: those metrics for every
    candidate config against the base config."""
    power: float = 0.8
    sd_source: str = "grid"
    require_mde: bool = False
    """Exit 2 when a gated metric's MDE exceeds its ``max_drop``."""
    power_method: str = "resampled"
    """How the MDE is found (:data:`POWER_METHODS`): the permutation test by resampling
    the paired differences, or the paired t-test (also where no differences are at hand)."""
    slices: tuple[SliceSpec, ...] = ()
    overlap: OverlapRule | None = None

    @property
    def family_alpha(self) -> float:
        """The level the family's flags use: ``[gate] alpha``, else 0.05."""
        return self.alpha if self.alpha is not None else 0.05

    @property
    def answerer_pair(self) -> tuple[str, str] | None:
        """(base, candidate) answerer labels when they differ by side, else None."""
        if self.base_answerer is None and self.candidate_answerer is None:
            return None
        b = self.base_answerer or self.answerer
        c = self.candidate_answerer or self.answerer
        return (b, c) if b and c else None

    def metric_names(self) -> tuple[str, ...]:
        return tuple(m.metric for m in self.metrics)


def load_policy(path: Path) -> Policy:
    """Read and validate a policy file; raises :class:`PolicyError`."""
    p = Path(path)
    try:
        raw = tomllib.loads(p.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise PolicyError([Problem(str(p), f"cannot read policy file ({exc.strerror})")],
                          "unreadable gate policy") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PolicyError([Problem(str(p), f"not valid TOML ({exc})")],
                          "malformed gate policy") from exc
    return parse_policy(raw, str(p))


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


class _Reader:
    """Typed key access that records a problem instead of raising."""

    def __init__(self, where: str, problems: list[Problem]) -> None:
        self.where, self.problems = where, problems

    def bad(self, key: str, message: str) -> None:
        self.problems.append(Problem(f"{self.where}: {key}", message))

    def unknown(self, table: dict[str, Any], prefix: str, allowed: tuple[str, ...]) -> None:
        for k in table:
            if k not in allowed:
                self.bad(f"{prefix}{k}", f"unknown key; allowed: {', '.join(allowed)}")

    def text(self, table: dict[str, Any], key: str, prefix: str) -> str | None:
        v = table.get(key)
        if v is not None and (not isinstance(v, str) or not v.strip()):
            self.bad(prefix + key, f"must be a non-empty string, got {v!r}")
            return None
        return v

    def number(self, table: dict[str, Any], key: str, prefix: str, low: float | None = None,
               high: float | None = None, *, open_low: bool = False) -> float | None:
        v = table.get(key)
        if v is None:
            return None
        if not _number(v):
            self.bad(prefix + key, f"must be a finite number, got {v!r}")
            return None
        too_low = low is not None and (v <= low if open_low else v < low)
        if too_low or (high is not None and v >= high):
            lo = "" if low is None else f"{'>' if open_low else '>='} {low}"
            hi = "" if high is None else f"< {high}"
            self.bad(prefix + key, f"must be {' and '.join(x for x in (lo, hi) if x)}, got {v!r}")
            return None
        return float(v)

    def choice(self, table: dict[str, Any], key: str, prefix: str, allowed: tuple[str, ...],
               default: str) -> str:
        v = table.get(key, default)
        if v not in allowed:
            self.bad(prefix + key, f"must be one of {', '.join(allowed)}, got {v!r}")
            return default
        return str(v)

    def flag(self, table: dict[str, Any], key: str, prefix: str) -> bool:
        v = table.get(key, False)
        if not isinstance(v, bool):
            self.bad(prefix + key, f"must be true or false, got {v!r}")
            return False
        return v

    def integer(self, table: dict[str, Any], key: str, prefix: str, default: int,
                low: int) -> int:
        v = table.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            self.bad(prefix + key, f"must be an integer >= {low}, got {v!r}")
            return default
        return v


def _metric_name(name: str, r: _Reader, where: str = "metrics") -> str | None:
    info = metric_info(name)
    if info is None:
        r.bad(f"{where}.{name}", "unknown metric (or one without a better direction); choose "
              "one of: " + ", ".join(known_metric_names()))
        return None
    return info.name


def _metric_policy(name: str, table: Any, r: _Reader, where: str = "metrics") -> MetricPolicy | None:
    prefix = f"{where}.{name}."
    if not isinstance(table, dict):
        r.bad(f"{where}.{name}", "must be a table, e.g. [metrics.\"hit@5\"] with floor = 0.8")
        return None
    r.unknown(table, prefix, METRIC_KEYS)
    if not any(k in table for k in CHECK_KEYS):
        r.bad(f"{where}.{name}", f"asks for no check; give one of: {', '.join(CHECK_KEYS)}")
    pinned = table.get("pinned", [])
    if not isinstance(pinned, list) or not all(isinstance(q, str) and q for q in pinned):
        r.bad(prefix + "pinned", f"must be a list of question ids, got {pinned!r}")
        pinned = []
    elif len(set(pinned)) != len(pinned):
        r.bad(prefix + "pinned", "lists a question more than once")
    canonical = _metric_name(name, r, where)
    mp = MetricPolicy(
        canonical or name, r.number(table, "floor", prefix),
        r.number(table, "max_drop", prefix, low=0.0),
        r.number(table, "max_drop_relative", prefix, low=0.0),
        r.number(table, "alpha", prefix, low=0.0, high=1.0, open_low=True),
        tuple(dict.fromkeys(pinned)), r.number(table, "sd", prefix, low=0.0, open_low=True),
        r.number(table, "max_increase", prefix, low=0.0),
        r.integer(table, "max_worse", prefix, -1, 0) if "max_worse" in table else None)
    if canonical and "max_increase" in table and (info := metric_info(canonical)) is not None \
            and info.higher_is_better:
        r.bad(prefix + "max_increase", f"{canonical} is better higher: an increase is no worsening; "
              "use max_drop_relative (a fraction of the base) for its drops")
    if mp.sd is not None and (why := real_problem("sd", mp.sd, open_low=True)) is not None:
        r.bad(prefix + "sd", why)  # core/limits: an SD that overflows the power arithmetic
    return mp if canonical else None


def _metric_policies(raw: dict[str, Any], r: _Reader, where: str) -> list[MetricPolicy]:
    out: list[MetricPolicy] = []
    seen: dict[str, str] = {}
    for name, table in raw.items():
        mp = _metric_policy(name, table, r, where)
        if mp is None:
            continue
        if mp.metric in seen:
            r.bad(f"{where}.{name}", f"same metric as {where}.{seen[mp.metric]}")
            continue
        seen[mp.metric] = name
        out.append(mp)
    return out


def parse_policy(raw: dict[str, Any], where: str = "<policy>") -> Policy:
    """Validate a parsed policy mapping; every problem is reported at once."""
    problems: list[Problem] = []
    r = _Reader(where, problems)
    r.unknown(raw, "", ("gate", "metrics", "overlap", "slices"))
    gate = raw.get("gate", {})
    if not isinstance(gate, dict):
        r.bad("gate", "must be a table ([gate])")
        gate = {}
    r.unknown(gate, "gate.", GATE_KEYS)
    metrics_raw = raw.get("metrics")
    metrics: list[MetricPolicy] = []
    if metrics_raw is None and ("overlap" in raw or "slices" in raw):
        pass  # a policy of overlap rules or slices alone (a query log nobody labelled)
    elif not isinstance(metrics_raw, dict) or not metrics_raw:
        r.bad("metrics", "give at least one metric table, e.g. [metrics.\"hit@5\"] max_drop = 0.05")
    else:
        metrics = _metric_policies(metrics_raw, r, "metrics")
    policy = Policy(
        where, tuple(metrics), r.text(gate, "config", "gate."),
        r.text(gate, "candidate_config", "gate."), r.text(gate, "answerer", "gate."),
        r.number(gate, "alpha", "gate.", low=0.0, high=1.0, open_low=True),
        r.integer(gate, "seed", "gate.", 0, 0), r.integer(gate, "n_resamples", "gate.", 10_000, 1),
        r.number(gate, "confidence", "gate.", low=0.0, high=1.0, open_low=True) or 0.95,
        r.text(gate, "base_answerer", "gate."), r.text(gate, "candidate_answerer", "gate."),
        r.number(gate, "min_llm_kappa", "gate.", low=-1.0, high=1.0000001),
        r.text(gate, "llm_agreement", "gate."),
        r.choice(gate, "adjustment", "gate.", tuple(ADJUSTMENTS.names()), "holm"),
        r.choice(gate, "family", "gate.", FAMILIES, "gated"),
        r.number(gate, "power", "gate.", low=0.0, high=1.0, open_low=True) or 0.8,
        r.choice(gate, "sd_source", "gate.", SD_SOURCES, "grid"),
        r.flag(gate, "require_mde", "gate."),
        r.choice(gate, "power_method", "gate.", POWER_METHODS, "resampled"),
        read_slices(raw.get("slices"), r, _metric_policies), read_overlap(raw.get("overlap"), "overlap", r))
    alphas = [policy.family_alpha, *(m.alpha for m in policy.metrics if m.alpha is not None)]
    if (why := resamples_problem(policy.n_resamples, min(alphas))) is not None:  # core/limits
        r.bad("gate.n_resamples", why)
    if policy.require_mde and not any(m.max_drop is not None for m in policy.metrics):
        r.bad("gate.require_mde", "no metric has a max_drop to hold its MDE against")
    if (policy.base_answerer or policy.candidate_answerer) and policy.answerer_pair is None:
        r.bad("gate.base_answerer", "give both base_answerer and candidate_answerer (or one of "
              "them and answerer)")
    if policy.candidate_config and not policy.config:
        r.bad("gate.candidate_config", "needs gate.config (the base's config) as well")
    if problems:
        raise PolicyError(problems, f"{where}: malformed gate policy")
    return policy
