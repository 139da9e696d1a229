"""The metric object: a family (facts, needs, computation) and a metric (family + cutoff).

Modelled on ir_measures' ``Measure``: a :class:`MetricFamily` such as ``nDCG`` is
declared once, with its facts and the inputs it needs, next to its computation
(:mod:`rulegauge.metrics.ranking`; answer metrics: facts in :mod:`rulegauge.metrics.info`,
computation bound by :mod:`rulegauge.answering.answer_metrics`); ``nDCG @ 10`` is a
:class:`Metric`, a value with a canonical name that round-trips
(``Metric.parse(str(m)) == m``) and is the Parquet key.

Keyword parameters are declared per family, like ir_measures' ``SUPPORTED_PARAMS``: each
:class:`MetricParam` has a type (bool, int or float), a default and, for numbers, a range;
``RBP(p=0.9)@10`` is rank-biased precision with persistence 0.9. The canonical name writes the
parameters that differ from their defaults, in declared order, ``,`` between them (ir_measures'
spelling: ``RBP(p=0.8)@10`` *is* ``RBP@10``); a float is written as its shortest ``repr``. A
parameter marked ``lists`` changes the page lists, not the computation: ``judged_only`` (every
family declared ``condensable``), ``nDCG(judged_only=True)@10`` being nDCG@10 on the condensed
list (unjudged pages removed before the cutoff; Sakai 2007), the name ir_measures prints.
Every other parameter is passed to the computation as a keyword: ``compute(lists, k, p=0.9)``.

Facts of a family: ``kind`` (``ranking``: a property of the ranked page list; ``score``:
the fused score itself; ``answer``: one answer of an answerer; ``search``: a measurement of
the search itself, its latency: :mod:`rulegauge.metrics.latency`), ``direction``
(``higher``/``lower`` is better, ``none``: shown, never gated), ``scope`` (the rows a
mean counts, :data:`SCOPES`), ``aggregate`` (:data:`AGGREGATES`), ``takes_cutoff``,
``default`` (the value where the metric is undefined), ``description``, ``reference``,
``measured`` (a measurement of the machine, such as wall time: its values are a column of
the table that keeps it, never rows of a scored metrics table, so a rerun's tables are equal:
the ``answers`` table's ``latency_ms``, the ``search_latency`` table's), ``bounds`` (every
value lies within them: :mod:`rulegauge.metrics.contract` checks each value as it is scored).
Needs (:data:`NEEDS`): ``whole_list`` (the rank of a page beyond every cutoff), ``grades``
(graded gains), ``judgments`` (which pages the gold set judged). Names match in any case; other
tools' names are aliases (:data:`ALIASES`), spelled or refused by :mod:`rulegauge.metrics.peer_names`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from rulegauge.core import plugins
from rulegauge.core.errors import RegistryError, RulegaugeError
from rulegauge.core.registry import Registry, kind_check
from rulegauge.metrics.peer_names import refusal, respell

KINDS = ("ranking", "score", "answer", "search")
DIRECTIONS = ("higher", "lower", "none")
NEEDS = ("whole_list", "grades", "judgments")
"""Inputs a computation may need beyond the top-k page list."""


def _outcomes(d: pd.DataFrame) -> pd.Series:
    if "outcome" not in d.columns or d["outcome"].isna().any():
        raise RulegaugeError("this metric's scope needs answer outcomes (the answers table)")
    return d["outcome"].astype(str)


AGGREGATES: Registry[Callable[[np.ndarray], float]] = Registry("aggregate")
AGGREGATES.add("mean", lambda v: float(np.mean(v)))
AGGREGATES.add("median", lambda v: float(np.median(v)))
AGGREGATES.add("p95", lambda v: float(np.quantile(v, 0.95)))  # numpy's linear quantile

# scope -> the rows of a metrics frame that count; frames carry ``answerable`` and,
# for the answer scopes, each answer's ``outcome``.
SCOPES: Registry[Callable[[pd.DataFrame], np.ndarray]] = Registry("metric scope")
SCOPES.add("all", lambda d: np.ones(len(d), dtype=bool))
SCOPES.add("answerable", lambda d: d["answerable"].to_numpy(dtype=bool))
SCOPES.add("answered", lambda d: (_outcomes(d) == "answered").to_numpy(dtype=bool))
SCOPES.add("responded", lambda d: (_outcomes(d) != "error").to_numpy(dtype=bool))
OUTCOME_SCOPES = frozenset({"answered", "responded"})
"""Scopes that need each answer's outcome (the ``answers`` table)."""


@dataclass(frozen=True)
class Alias:
    """Another tool's name for one of our families; ``note`` says where it differs."""

    name: str
    family: str
    source: str
    note: str = ""


_COMPUTE: dict[str, Callable[..., Any]] = {}
"""Family name -> its computation, bound once (``declare(compute=...)`` or :func:`implement`)."""


@dataclass(frozen=True)
class MetricParam:
    """One keyword parameter of a metric family (module docstring). Numbers must be finite
    and within ``low``..``high`` (exclusive ends where ``open_ends``); None: unbounded."""

    name: str
    type: type
    default: Any
    description: str
    low: float | None = None
    high: float | None = None
    open_ends: bool = False
    lists: bool = False
    """Changes the page lists (``judged_only``), not the computation: never passed to it."""

    def read(self, metric: str, text: str) -> Any:
        """The value ``text`` spells, checked; a bad one raises naming ``metric``."""
        try:
            if self.type is bool:
                if text not in ("True", "False"):
                    raise ValueError(text)
                return text == "True"
            value = self.type(text)
        except ValueError:
            raise RegistryError(f"metric {metric!r}: {self.name} must be {self.type.__name__}, "
                                f"not {text!r}") from None
        return self.check(metric, value)

    def check(self, metric: str, value: Any) -> Any:
        if self.type is not bool:
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise RegistryError(f"metric {metric!r}: {self.name} must be a finite {self.type.__name__}")
            value = self.type(value)
            below = self.low is not None and (value <= self.low if self.open_ends else value < self.low)
            above = self.high is not None and (value >= self.high if self.open_ends else value > self.high)
            if below or above:
                ends = "()" if self.open_ends else "[]"
                raise RegistryError(f"metric {metric!r}: {self.name}={value!r} is outside "
                                    f"{ends[0]}{self.low}, {self.high}{ends[1]}")
        elif not isinstance(value, bool):
            raise RegistryError(f"metric {metric!r}: {self.name} must be True or False")
        return value

    def spell(self, value: Any) -> str:
        return repr(float(value)) if self.type is float else str(value)


JUDGED_ONLY = MetricParam("judged_only", bool, False, "the condensed list: unjudged pages removed before "
                          "the cutoff (Sakai 2007)", lists=True)


@dataclass(frozen=True)
class MetricFamily:
    """A declared metric family (see the module docstring for the fields)."""

    name: str
    kind: str
    direction: str
    scope: str
    aggregate: str
    description: str
    takes_cutoff: bool = False
    default: float = 0.0
    reference: str = ""
    needs: frozenset[str] = frozenset()
    params: tuple[MetricParam, ...] = ()
    """Keyword parameters, in the order the canonical name writes them (module docstring)."""
    bounds: tuple[float, float] = (-math.inf, math.inf)
    """Every value lies in ``[low, high]`` (NaN aside); ranking families default to [0, 1]."""
    measured: bool = False
    """A wall-time measurement: a column of the table that keeps it (module docstring)."""

    @property
    def condensable(self) -> bool:
        """Has a condensed-list variant (``judged_only=True``)."""
        return any(p is JUDGED_ONLY for p in self.params)

    def param(self, name: str) -> MetricParam:
        for p in self.params:
            if p.name == name:
                return p
        if name == "judged_only":
            raise RegistryError(f"metric {self.name!r} has no condensed-list (judged_only) variant")
        raise RegistryError(f"metric {self.name!r} has no parameter {name!r}; it takes: "
                            + (", ".join(p.name for p in self.params) or "none"))

    @property
    def higher_is_better(self) -> bool | None:
        return {"higher": True, "lower": False}.get(self.direction)

    @property
    def label(self) -> str:
        """``nDCG@k`` for a family with a cutoff, else its name."""
        return self.name + ("@k" if self.takes_cutoff else "")

    @property
    def compute(self) -> Callable[..., Any]:
        try:
            return _COMPUTE[self.name]
        except KeyError:
            raise RegistryError(f"metric {self.name} is declared but not computed here") from None

    def __call__(self, **params: Any) -> Metric:
        """``nDCG(judged_only=True)``: this family with keyword parameters (checked)."""
        return Metric(self, None).with_params(**params)

    def __matmul__(self, cutoff: int) -> Metric:
        return Metric(self, cutoff)


@dataclass(frozen=True)
class Metric:
    """One metric: a family, a cutoff and keyword parameters. ``name`` is canonical.

    >>> str(METRICS.get("nDCG") @ 10), Metric.parse("RR@10").name
    ('nDCG@10', 'MRR@10')
    """

    family: MetricFamily = field(compare=False)
    cutoff: int | None = None
    params: tuple[tuple[str, Any], ...] = ()
    """``(name, value)`` of the parameters that differ from their defaults, in declared order."""
    key: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        text = ",".join(f"{n}={self.family.param(n).spell(v)}" for n, v in self.params)
        object.__setattr__(self, "key", self.family.name + (f"({text})" if text else "")
                           + (f"@{self.cutoff}" if self.cutoff is not None else ""))

    def with_params(self, **params: Any) -> Metric:
        """The same metric with ``params`` set (checked; defaults left out of the name)."""
        values = dict(self.params)
        for n, v in params.items():
            p = self.family.param(n)
            values[n] = p.check(self.family.name, v)
        kept = tuple((p.name, values[p.name]) for p in self.family.params
                     if p.name in values and values[p.name] != p.default)
        return Metric(self.family, self.cutoff, kept)

    def value(self, name: str) -> Any:
        """Parameter ``name``'s value (its default when not set)."""
        return dict(self.params).get(name, self.family.param(name).default)

    @property
    def judged_only(self) -> bool:
        return bool(dict(self.params).get("judged_only", False))

    @property
    def compute_params(self) -> dict[str, Any]:
        """Every parameter the computation takes (all but ``lists`` ones), defaults filled in."""
        return {p.name: self.value(p.name) for p in self.family.params if not p.lists}

    def __matmul__(self, cutoff: int) -> Metric:
        return Metric(self.family, cutoff, self.params)

    def __str__(self) -> str:
        return self.key

    @property
    def name(self) -> str:
        return self.key

    @property
    def kind(self) -> str:
        return self.family.kind

    @property
    def scope(self) -> str:
        return self.family.scope

    @property
    def aggregate(self) -> str:
        return self.family.aggregate

    @property
    def default(self) -> float:
        return self.family.default

    @property
    def description(self) -> str:
        others = ", ".join(f"{n}={self.family.param(n).spell(v)}" for n, v in self.params if n != "judged_only")
        return (self.family.description + (f" ({others})" if others else "")
                + (" (condensed list: unjudged pages removed first)" if self.judged_only else ""))

    @property
    def needs(self) -> frozenset[str]:
        return self.family.needs | ({"judgments"} if self.judged_only else set())

    @property
    def higher_is_better(self) -> bool:
        """Which side is better (raises for a metric without a direction)."""
        hib = self.family.higher_is_better
        if hib is None:
            raise RegistryError(f"metric {self.name} has no better direction")
        return hib

    @classmethod
    def parse(cls, name: str, *, kinds: tuple[str, ...] = KINDS) -> Metric:
        """The metric ``name`` names (canonical or alias, any case), of one of ``kinds``.

        >>> Metric.parse("ndcg_cut(judged_only=True)@5").name
        'nDCG(judged_only=True)@5'
        """
        refused = refusal(name.strip(), ALIASES)  # a peer's metric computed otherwise (metrics/peer_names)
        if refused:
            raise RegistryError(refused)
        m = _NAME.match(respell(name.strip(), ALIASES))  # trec_eval's P_5 is P@5
        entry = ALIASES.get(m.group(1).lower()) if m else None
        fam = METRICS.get(entry.family) if entry is not None else None
        if m is None or fam is None or fam.kind not in kinds:
            known = [f.label for _, f in METRICS.items() if f.kind in kinds]
            broken = plugins.describe_unknown("rulegauge.metrics", name.strip().partition("@")[0].partition("(")[0])
            raise RegistryError(f"unknown metric {name!r}; families: {', '.join(known)} "
                                "(ranx, ir_measures and trec_eval names are accepted too: docs/metrics.md)"
                                + (f"; {broken}" if broken else ""))
        cutoff = int(m.group(3)) if m.group(3) else None
        if fam.takes_cutoff and (cutoff is None or cutoff < 1):
            raise RegistryError(f"metric {name!r} needs a cutoff >= 1, e.g. {fam.name}@10")
        if not fam.takes_cutoff and cutoff is not None:
            raise RegistryError(f"metric {fam.name!r} takes no cutoff")
        return cls(fam, cutoff).with_params(**_params(name, fam, m.group(2)))


_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\(([^()]*)\))?(?:@(\d+))?$")


def _params(name: str, fam: MetricFamily, text: str | None) -> dict[str, Any]:
    """``{param: value}`` from ``p=0.9,judged_only=True`` (each declared by the family, once)."""
    out: dict[str, Any] = {}
    if not text or not text.strip():
        return out
    for item in text.split(","):
        key, eq, value = (s.strip() for s in item.partition("="))
        if not eq or not key or key in out:
            raise RegistryError(f"metric {name!r}: parameters are written name=value, each once, "
                                f"e.g. {fam.name}({','.join(f'{p.name}={p.spell(p.default)}' for p in fam.params)})")
        out[key] = fam.param(key).read(name, value)
    return out


METRICS: Registry[MetricFamily] = Registry("metric", group="rulegauge.metrics", door=plugins.DOOR,
                                           accepts=kind_check("a metric family", base=MetricFamily,
                                                              ref="declare(...): docs/metrics.md"))
"""Every metric family: ranking, score and answer metrics alike."""
ALIASES: dict[str, Alias] = {}
"""Lower-cased family name or alias -> :class:`Alias` (canonical names included)."""
OTHER_NAMES: list[Alias] = []
"""Every other tool's name declared, in declaration order (for docs and ``rulegauge list``)."""


def declare(name: str, *, kind: str, direction: str, scope: str, description: str,
            aggregate: str = "mean", takes_cutoff: bool = False, default: float = 0.0,
            reference: str = "", needs: Iterable[str] = (), condensable: bool = False,
            params: Iterable[MetricParam] = (), measured: bool = False,
            bounds: tuple[float, float] | None = None, compute: Callable[..., Any] | None = None) -> MetricFamily:
    """Declare a metric family (and its computation); a second declaration raises.
    ``condensable`` adds the :data:`JUDGED_ONLY` parameter to ``params``."""
    params = (*params, *((JUDGED_ONLY,) if condensable else ()))
    needs = frozenset(needs)
    problems = [f"{what} {value!r} is not one of {allowed}"
                for what, value, allowed in (("kind", kind, KINDS), ("direction", direction, DIRECTIONS),
                                             ("scope", scope, tuple(SCOPES.names())),
                                             ("aggregate", aggregate, tuple(AGGREGATES.names())))
                if value not in allowed]
    problems += [f"need {n!r} is not one of {NEEDS}" for n in sorted(needs - set(NEEDS))]
    names = [p.name for p in params]
    problems += [f"parameter {n!r} declared twice" for n in sorted({n for n in names if names.count(n) > 1})]
    for p in params:
        try:
            p.check(name, p.default)
        except RegistryError as exc:
            problems.append(f"the default of {p.name}: {exc}")
    if problems:
        raise RegistryError(f"metric {name}: " + "; ".join(problems))
    fam = METRICS.add(name, MetricFamily(name, kind, direction, scope, aggregate, description,
                                         takes_cutoff, default, reference, needs, tuple(params),
                                         bounds=bounds or ((0.0, 1.0) if kind == "ranking" else (-math.inf, math.inf)),
                                         measured=measured))
    alias(name, name, source="rulegauge")
    if compute is not None:
        _bind(name, compute)
    return fam


def implement(name: str, compute: Callable[..., Any]) -> MetricFamily:
    """Bind the computation of the declared family ``name``; binding twice raises."""
    fam = METRICS.get(name)
    _bind(name, compute)
    return fam


def _bind(name: str, compute: Callable[..., Any]) -> None:
    # no registry lookup: declare() runs while the metric modules load (core/registry: no reload)
    if name in _COMPUTE:
        raise RegistryError(f"metric {name} is computed twice")
    _COMPUTE[name] = compute


def alias(name: str, family: str, *, source: str, note: str = "") -> None:
    """Accept ``name`` (any case) for ``family``; an alias naming two families raises."""
    key = name.lower()
    if source != "rulegauge":
        OTHER_NAMES.append(Alias(name, family, source, note))
    old = ALIASES.get(key)
    if old is not None and old.family != family:
        raise RegistryError(f"metric alias {name!r} already means {old.family!r}")
    if old is None or source == "rulegauge":
        ALIASES[key] = Alias(name, family, source, note)
