"""The metric object: a family (facts, needs, computation) and a metric (family + cutoff).

Modelled on ir_measures' ``Measure``: a :class:`MetricFamily` such as ``nDCG`` is
declared once, with its facts and the inputs it needs, next to its computation
(:mod:`rulegauge.metrics.ranking`; answer metrics: facts in :mod:`rulegauge.metrics.info`,
computation bound by :mod:`rulegauge.answering.answer_metrics`); ``nDCG @ 10`` is a
:class:`Metric`, a value with a canonical name that round-trips
(``Metric.parse(str(m)) == m``) and is the Parquet key. Keyword parameters follow
ir_measures' syntax: ``nDCG(judged_only=True)@10`` is nDCG@10 on the condensed list
(unjudged pages removed before the cutoff; Sakai 2007), exactly the name ir_measures
prints for its ``judged_only`` measure.

Facts of a family: ``kind`` (``ranking``: a property of the ranked page list; ``score``:
the fused score itself; ``answer``: one answer of an answerer), ``direction``
(``higher``/``lower`` is better, ``none``: shown, never gated), ``scope`` (the rows a
mean counts, :data:`SCOPES`), ``aggregate`` (:data:`AGGREGATES`), ``takes_cutoff``,
``default`` (the value where the metric is undefined), ``description``, ``reference``,
``measured`` (a measurement of the machine, such as wall time, not a function of the
run's inputs: its values are the ``answers`` table's column of the same name, never rows
of ``answer_metrics``, so that a rerun's tables are equal; readers take both with
:func:`rulegauge.answering.answer_rows.answer_metric_frame`).
Needs (:data:`NEEDS`): ``whole_list`` (the rank of a page beyond every cutoff),
``grades`` (graded gains), ``judgments`` (which pages the gold set judged). Names are
matched without regard to case; other tools' names are aliases (:data:`ALIASES`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from rulegauge.core.errors import RulegaugeError, RegistryError
from rulegauge.core.registry import Registry

KINDS = ("ranking", "score", "answer")
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
    condensable: bool = False
    """Has a condensed-list variant (``judged_only=True``)."""
    measured: bool = False
    """A wall-time measurement: stored as the ``answers`` column of its name (module docstring)."""

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

    def __call__(self, *, judged_only: bool = False) -> Metric:
        return Metric(self, None, judged_only=judged_only)

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
    judged_only: bool = False
    key: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        params = "(judged_only=True)" if self.judged_only else ""
        object.__setattr__(self, "key", self.family.name + params
                           + (f"@{self.cutoff}" if self.cutoff is not None else ""))

    def __matmul__(self, cutoff: int) -> Metric:
        return Metric(self.family, cutoff, judged_only=self.judged_only)

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
        return self.family.description + (" (condensed list: unjudged pages removed first)"
                                           if self.judged_only else "")

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
        m = _NAME.match(name.strip())
        entry = ALIASES.get(m.group(1).lower()) if m else None
        fam = METRICS.get(entry.family) if entry is not None else None
        if m is None or fam is None or fam.kind not in kinds:
            known = [f.label for _, f in METRICS.items() if f.kind in kinds]
            raise RegistryError(f"unknown metric {name!r}; families: {', '.join(known)} "
                                "(ranx / ir_measures names are accepted too: see docs/metrics.md)")
        cutoff = int(m.group(3)) if m.group(3) else None
        if fam.takes_cutoff and (cutoff is None or cutoff < 1):
            raise RegistryError(f"metric {name!r} needs a cutoff >= 1, e.g. {fam.name}@10")
        if not fam.takes_cutoff and cutoff is not None:
            raise RegistryError(f"metric {fam.name!r} takes no cutoff")
        judged_only = _params(name, fam, m.group(2))
        return cls(fam, cutoff, judged_only=judged_only)


_NAME = re.compile(r"^([A-Za-z_]+)(?:\(([^()]*)\))?(?:@(\d+))?$")


def _params(name: str, fam: MetricFamily, text: str | None) -> bool:
    """``judged_only`` from ``(judged_only=True)``; the only keyword parameter so far."""
    if not text:
        return False
    key, _, value = (s.strip() for s in text.partition("="))
    if key != "judged_only" or value not in ("True", "False"):
        raise RegistryError(f"metric {name!r}: the only parameter is judged_only=True or False")
    if value == "True" and not fam.condensable:
        raise RegistryError(f"metric {fam.name!r} has no condensed-list (judged_only) variant")
    return value == "True"


METRICS: Registry[MetricFamily] = Registry("metric", group="rulegauge.metrics")
"""Every metric family: ranking, score and answer metrics alike."""
ALIASES: dict[str, Alias] = {}
"""Lower-cased family name or alias -> :class:`Alias` (canonical names included)."""
OTHER_NAMES: list[Alias] = []
"""Every other tool's name declared, in declaration order (for docs and ``rulegauge list``)."""


def declare(name: str, *, kind: str, direction: str, scope: str, description: str,
            aggregate: str = "mean", takes_cutoff: bool = False, default: float = 0.0,
            reference: str = "", needs: Iterable[str] = (), condensable: bool = False,
            measured: bool = False, compute: Callable[..., Any] | None = None) -> MetricFamily:
    """Declare a metric family (and its computation); a second declaration raises."""
    needs = frozenset(needs)
    problems = [f"{what} {value!r} is not one of {allowed}"
                for what, value, allowed in (("kind", kind, KINDS), ("direction", direction, DIRECTIONS),
                                             ("scope", scope, tuple(SCOPES.names())),
                                             ("aggregate", aggregate, tuple(AGGREGATES.names())))
                if value not in allowed]
    problems += [f"need {n!r} is not one of {NEEDS}" for n in sorted(needs - set(NEEDS))]
    if problems:
        raise RegistryError(f"metric {name}: " + "; ".join(problems))
    fam = METRICS.add(name, MetricFamily(name, kind, direction, scope, aggregate, description,
                                         takes_cutoff, default, reference, needs, condensable,
                                         measured))
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
