"""Metric facts, declared once: direction, scope, aggregate, description, aliases.

Every metric the harness stores, ranking metrics (``harness.metrics.ranking``) and
answer metrics (``harness.answering.answer_metrics``) alike, is declared here by
keyword, the way ir_measures declares a measure's parameters with names and
descriptions. Everything that interprets a metric reads this module: the comparison
and the gate (which side is better, which questions count, mean or median), the
policy (which names it may gate), the summary, the per-language table, the report
and the answerer side-by-side table. The compute functions live with their inputs;
they look their facts up here and refuse a name that is not declared.

Fields of a family (:class:`MetricFamily`):

* ``kind``: ``ranking`` (a property of the ranked page list), ``score`` (the fused
  score itself) or ``answer`` (one answer of an answerer).
* ``direction``: ``higher`` or ``lower`` is better, or ``none`` (a rate such as
  ``abstained`` has no better side; it is shown, never gated).
* ``scope``: the rows a mean is taken over (the value is stored for every row):
  ``answerable`` (questions with at least one requirement), ``all``, ``answered``
  (answers whose outcome is ``answered``), ``responded`` (outcome is not ``error``).
* ``aggregate``: ``mean`` or ``median`` (:data:`AGGREGATES`).
* ``takes_cutoff``: the name carries ``@k``; ``default``: the value where the metric
  is undefined (e.g. a ranking metric of an unanswerable question).

Names: canonical names round-trip (``nDCG@10``); family names are matched without
regard to case, and the names of ranx, ir_measures and trec_eval are accepted as
aliases (:data:`ALIASES`, each with a note where the meaning differs). The mapping is
documented in ``docs/metrics.md``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from harness.core.errors import HarnessError, RegistryError
from harness.core.registry import Registry

KINDS = ("ranking", "score", "answer")
DIRECTIONS = ("higher", "lower", "none")


def _outcomes(d: pd.DataFrame) -> pd.Series:
    if "outcome" not in d.columns or d["outcome"].isna().any():
        raise HarnessError("this metric's scope needs answer outcomes (the answers table)")
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

    @property
    def higher_is_better(self) -> bool | None:
        return {"higher": True, "lower": False}.get(self.direction)


@dataclass(frozen=True)
class Alias:
    """Another tool's name for one of our families; ``note`` says where it differs."""

    name: str
    family: str
    source: str
    note: str = ""


FAMILIES: Registry[MetricFamily] = Registry("metric")
ALIASES: dict[str, Alias] = {}
"""Lower-cased alias family name -> :class:`Alias` (canonical names included)."""
OTHER_NAMES: list[Alias] = []
"""Every other tool's name declared, in declaration order (for docs and ``harness list``)."""


def declare(name: str, *, kind: str, direction: str, scope: str, description: str,
            aggregate: str = "mean", takes_cutoff: bool = False, default: float = 0.0,
            reference: str = "") -> MetricFamily:
    """Declare a metric family; a second declaration of a name raises."""
    problems = [f"{field} {value!r} is not one of {allowed}"
                for field, value, allowed in (("kind", kind, KINDS), ("direction", direction, DIRECTIONS),
                                              ("scope", scope, tuple(SCOPES.names())),
                                              ("aggregate", aggregate, tuple(AGGREGATES.names())))
                if value not in allowed]
    if problems:
        raise RegistryError(f"metric {name}: " + "; ".join(problems))
    fam = FAMILIES.add(name, MetricFamily(name, kind, direction, scope, aggregate, description,
                                          takes_cutoff, default, reference))
    alias(name, name, source="harness")
    return fam


def alias(name: str, family: str, *, source: str, note: str = "") -> None:
    """Accept ``name`` (any case) for ``family``; an alias naming two families raises."""
    key = name.lower()
    if source != "harness":
        OTHER_NAMES.append(Alias(name, family, source, note))
    old = ALIASES.get(key)
    if old is not None and old.family != family:
        raise RegistryError(f"metric alias {name!r} already means {old.family!r}")
    if old is None or source == "harness":
        ALIASES[key] = Alias(name, family, source, note)


def metric_name(family: str, cutoff: int | None) -> str:
    """The canonical name of a metric family at a cutoff: ``recall@5``, ``first_rel_rank``."""
    return family + (f"@{cutoff}" if cutoff is not None else "")


@dataclass(frozen=True)
class MetricInfo:
    """A resolved metric name: its family and cutoff. ``name`` is canonical."""

    family: MetricFamily
    cutoff: int | None

    @property
    def name(self) -> str:
        return metric_name(self.family.name, self.cutoff)

    @property
    def higher_is_better(self) -> bool:
        """Which side is better (raises for a metric without a direction)."""
        hib = self.family.higher_is_better
        if hib is None:
            raise RegistryError(f"metric {self.name} has no better direction")
        return hib

    @property
    def scope(self) -> str:
        return self.family.scope

    @property
    def aggregate(self) -> str:
        return self.family.aggregate

    @property
    def kind(self) -> str:
        return self.family.kind

    @property
    def default(self) -> float:
        return self.family.default

    @property
    def description(self) -> str:
        return self.family.description


_NAME = re.compile(r"^([A-Za-z_]+)(?:@(\d+))?$")


def _families() -> list[MetricFamily]:
    return [f for _, f in FAMILIES.items()]


def family_label(fam: MetricFamily) -> str:
    return fam.name + ("@k" if fam.takes_cutoff else "")


def resolve(name: str, *, kinds: tuple[str, ...] = KINDS) -> MetricInfo:
    """Canonical metric of ``name`` (alias or canonical, any case), of one of ``kinds``.

    >>> resolve("RR@10").name, resolve("ndcg_cut@5").name
    ('MRR@10', 'nDCG@5')
    """
    m = _NAME.match(name.strip())
    entry = ALIASES.get(m.group(1).lower()) if m else None
    fam = FAMILIES.get(entry.family) if entry is not None else None
    if m is None or fam is None or fam.kind not in kinds:
        known = [family_label(f) for f in _families() if f.kind in kinds]
        raise RegistryError(f"unknown metric {name!r}; families: {', '.join(known)} "
                            "(ranx / ir_measures names are accepted too: see docs/metrics.md)")
    cutoff = int(m.group(2)) if m.group(2) else None
    if fam.takes_cutoff and (cutoff is None or cutoff < 1):
        raise RegistryError(f"metric {name!r} needs a cutoff >= 1, e.g. {fam.name}@10")
    if not fam.takes_cutoff and cutoff is not None:
        raise RegistryError(f"metric {fam.name!r} takes no cutoff")
    return MetricInfo(fam, cutoff)


def metric_info(name: str) -> MetricInfo | None:
    """The metric ``name`` if it is known *and* has a better direction, else None
    (what comparisons and gates may judge)."""
    try:
        info = resolve(name)
    except RegistryError:
        return None
    return info if info.family.higher_is_better is not None else None


def known_metric_names() -> list[str]:
    """Every family with a direction, ``@k`` where it takes a cutoff."""
    return [family_label(f) for f in _families() if f.higher_is_better is not None]


def scope_mask(frame: pd.DataFrame, metric: str | pd.Series) -> np.ndarray:
    """Rows of ``frame`` (columns ``answerable`` [, ``outcome``]) in the scope of
    ``metric``: one name for every row, or a column of names (unknown: ``all``)."""
    if isinstance(metric, str):
        return SCOPES.get(resolve(metric).scope)(frame)
    scopes = metric.map(lambda n: _scope_or_all(str(n))).to_numpy()
    out = np.zeros(len(frame), dtype=bool)
    for scope in dict.fromkeys(scopes.tolist()):
        sel = scopes == scope
        out[sel] = SCOPES.get(scope)(frame.loc[sel])
    return out


def _scope_or_all(name: str) -> str:
    try:
        return resolve(name).scope
    except RegistryError:
        return "all"


def aggregate(name: str, values: np.ndarray) -> float:
    """The declared aggregate (mean or median) of ``values`` of metric ``name``."""
    return AGGREGATES.get(resolve(name).aggregate)(np.asarray(values, dtype=np.float64))


# ---- ranking and score metrics (computed in harness.metrics.ranking) ----------------------
_TREC = "trec_eval / ir_measures"
declare("hit", kind="ranking", direction="higher", scope="answerable", takes_cutoff=True,
        description="1 if any relevant page is in the top k pages, else 0",
        reference="ir_measures Success@k")
declare("recall", kind="ranking", direction="higher", scope="answerable", takes_cutoff=True,
        description="fraction of the question's requirements met by the top k pages "
                    "(a requirement is a set of alternative pages, met by any one)")
declare("P", kind="ranking", direction="higher", scope="answerable", takes_cutoff=True,
        description="relevant pages in the top k, divided by k")
declare("MRR", kind="ranking", direction="higher", scope="answerable", takes_cutoff=True,
        description="1 / rank of the first relevant page if it is within k, else 0")
declare("nDCG", kind="ranking", direction="higher", scope="answerable", takes_cutoff=True,
        description="normalised discounted cumulative gain over the top k pages, linear gains "
                    "(the page's grade; 1 when the gold set gives none), log2 discount",
        reference="Jarvelin & Kekalainen 2002; trec_eval ndcg_cut")
declare("MAP", kind="ranking", direction="higher", scope="answerable", takes_cutoff=True,
        description="average precision at k: sum of P@i over the ranks i <= k holding a relevant "
                    "page, divided by the number of relevant pages (mean over questions: MAP)",
        reference="trec_eval map_cut")
declare("first_rel_rank", kind="ranking", direction="lower", scope="answerable", aggregate="median",
        default=float("inf"),
        description="rank of the first relevant page; +inf when none was retrieved (median)")
declare("top_score", kind="score", direction="higher", scope="all",
        description="fused score of the rank-1 chunk; 0.0 when nothing was retrieved")
declare("top_score_ratio", kind="score", direction="higher", scope="all",
        description="top_score / the config's ceiling; the evidence an answer gate would use; "
                    "NaN for a fusion method without a ceiling (docs/fusion.md)")

for _alias, _family, _source, _note in (
    ("Success", "hit", _TREC, ""),
    ("success", "hit", "trec_eval", ""),
    ("hit_rate", "hit", "ranx", ""),
    ("R", "recall", _TREC, "R@k counts relevant pages; ours counts requirements (any-of groups). "
                           "They agree when every requirement is a single page."),
    ("recall", "recall", "ranx", "as R@k: ranx counts relevant pages, ours requirements"),
    ("precision", "P", "ranx", ""),
    ("RR", "MRR", _TREC, ""),
    ("recip_rank", "MRR", "trec_eval", ""),
    ("mrr", "MRR", "ranx", ""),
    ("ndcg", "nDCG", "ranx", "ranx ndcg uses linear gains like ours; ranx ndcg_burges (2^g - 1) "
                             "differs where grades exceed 1"),
    ("ndcg_cut", "nDCG", "trec_eval", ""),
    ("AP", "MAP", _TREC, ""),
    ("map", "MAP", "ranx", ""),
    ("map_cut", "MAP", "trec_eval", ""),
):
    alias(_alias, _family, source=_source, note=_note)

# ---- answer metrics (computed in harness.answering.answer_metrics) -------------------------
_ALCE = "Gao et al. 2023 (ALCE), at page level"
declare("context_recall", kind="answer", direction="higher", scope="answerable",
        description="requirements with a page in the read / requirements", reference=_ALCE)
declare("citation_precision", kind="answer", direction="higher", scope="answerable",
        description="relevant distinct cited pages / distinct cited pages (0.0 when nothing "
                    "resolvable is cited)", reference=_ALCE)
declare("citation_recall", kind="answer", direction="higher", scope="answerable",
        description="requirements with a cited page / requirements", reference=_ALCE)
declare("dangling_markers", kind="answer", direction="lower", scope="all",
        description="distinct cited numbers with no passage read")
declare("no_citation", kind="answer", direction="lower", scope="answered",
        description="1 if an answered answer cites no passage read")
declare("abstained", kind="answer", direction="none", scope="all",
        description="1 if the answerer abstained")
declare("abstention_correct", kind="answer", direction="higher", scope="all",
        description="1 if abstained exactly when the question is unanswerable (error: 0)")
declare("fence_pass", kind="answer", direction="higher", scope="responded",
        description="1 if the answer fence passes the text (0.0 on error: empty)")
declare("letter_density", kind="answer", direction="none", scope="responded",
        description="the fence's letters / non-space characters of the text (0.0 if empty)")
declare("latency_ms", kind="answer", direction="lower", scope="all",
        description="wall time of the call in ms")
declare("error", kind="answer", direction="lower", scope="all",
        description="1 if the call failed")
declare("fact_recall", kind="answer", direction="higher", scope="responded", default=float("nan"),
        description="reference facts the answer states / facts (harness.answering.facts: per "
                    "sentence, stemmed); undefined (NaN, left out of means) without facts",
        reference="Lin & Demner-Fushman 2006 (nugget recall)")
declare("judge_fact_recall", kind="answer", direction="higher", scope="responded",
        default=float("nan"),
        description="facts the judge (harness.answering.judge) says the answer states / facts; "
                    "only for judged answers, NaN when a verdict is missing")
