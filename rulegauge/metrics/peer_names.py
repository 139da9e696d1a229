"""Other tools' spellings of metric names: trec_eval's ``P_5``, whole-list names, and the refused.

A name another tool uses means what that tool computes, or it is refused (docs/metrics.md).
Most such names are aliases declared on the family that computes them
(:func:`rulegauge.metrics.family.alias`, next to the computation in
:mod:`rulegauge.metrics.ranking`); this module holds the three rules that are not one alias:

* **trec_eval's cutoff spelling**: trec_eval writes the cutoff into the name, ``P_5``,
  ``ndcg_cut_10``, ``recall_5``, ``map_cut_10``, ``success_5``. A family declares the spelling
  as an alias ending in ``_k`` (``recall_k`` on ``R``), and :func:`respell` turns
  ``recall_5`` into ``R@5`` (any case). ``recip_rank`` has no cutoff in trec_eval (the whole
  list): it is the family of that name.
* **whole-list names** (:data:`WHOLE_LIST`): ir_measures' ``RR`` without a cutoff is the
  reciprocal rank over the whole list, rulegauge's ``recip_rank``; ``RR@10`` stays ``MRR@10``.
* **refused names** (:data:`REFUSED`): a peer's metric rulegauge does not compute is refused
  with why and the nearest rulegauge name, never mapped to something else.

Two of rulegauge's own names are also a peer's name for another computation (:data:`SHARED`):
they keep rulegauge's meaning, and the table in docs/metrics.md says how they differ.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_TREC_CUTOFF = re.compile(r"^([A-Za-z][A-Za-z_]*?)_(\d+)$")
_PLAIN = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)(@\d+)?$")

WHOLE_LIST: dict[str, tuple[str, str]] = {"rr": ("recip_rank", "ir_measures")}
"""Lower-cased name written without a cutoff -> (rulegauge's whole-list family, the tool)."""


@dataclass(frozen=True)
class Refused:
    """A peer's metric rulegauge does not compute: ``why`` it differs, and the ``nearest`` name;
    ``with_cutoff``: refused only when written with a cutoff (``recip_rank@10``)."""

    name: str
    tool: str
    why: str
    nearest: str
    with_cutoff: bool = False


REFUSED: tuple[Refused, ...] = (
    Refused("hits", "ranx", "it counts the relevant pages in the top k (0 to k), not a share", "P@k (hits@k / k)"),
    Refused("ndcg_burges", "ranx", "its gains are 2^grade - 1, ours the grade",
            "nDCG@k (the same where every grade is 1)"),
    Refused("r_precision", "ranx", "it is the precision at rank R, the question's number of relevant pages",
            "R@k or P@k"),
    Refused("Rprec", "trec_eval / ir_measures", "it is the precision at rank R, the question's number of relevant "
            "pages", "R@k or P@k"),
    Refused("R-Prec", "ir_measures", "it is the precision at rank R, the question's number of relevant pages",
            "R@k or P@k"),
    Refused("f1", "ranx", "it is the harmonic mean of precision and recall at k", "P@k and R@k"),
    Refused("bpref", "trec_eval / ir_measures / ranx", "it counts judged non-relevant pages ranked above each "
            "relevant one", "nDCG(judged_only=True)@k or MAP(judged_only=True)@k (condensed lists, Sakai 2007)"),
    Refused("infAP", "ir_measures", "it infers AP from sampled judgments", "MAP(judged_only=True)@k"),
    Refused("ERR", "ir_measures", "it is the expected reciprocal rank over graded gains", "RBP@k or MRR@k"),
    Refused("recip_rank", "trec_eval", "trec_eval's recip_rank has no cutoff: it reads the whole list",
            "recip_rank (the whole list) or MRR@k (ir_measures' RR@k)", with_cutoff=True),
)
"""Peer names refused, each with why and the nearest rulegauge name."""

SHARED: tuple[tuple[str, str, str, str], ...] = (
    ("recall@k", "ranx", "recall@k",
     "rulegauge's recall@k counts requirements (any-of groups) met; ranx's counts relevant pages, which is "
     "rulegauge's R@k. The two agree where every requirement is one page."),
    ("RBP@k", "ir_measures", "RBP@k",
     "rulegauge's RBP is binary (ir_measures' RBP(rel=1)@k); ir_measures' RBP@k weighs each page by its grade. "
     "The two agree on a gold set without grades above 1."),
)
"""(name, tool, rulegauge's metric of that name, how they differ): rulegauge's names that a peer
uses for another computation; they keep rulegauge's meaning (module docstring)."""


def shown(name: str, *, cutoff: bool) -> str:
    """How the docs write an alias of a family with (``cutoff``) or without a cutoff: ``Success@k``,
    ``recip_rank``; trec_eval's cutoff spelling as it is (``recall_k``)."""
    return name if name.endswith("_k") or not cutoff else f"{name}@k"


def respell(name: str, aliases: Mapping[str, Any]) -> str:
    """``name`` in rulegauge's spelling when it is trec_eval's cutoff spelling (``P_5`` ->
    ``P@5``) or a whole-list name (``RR`` -> ``recip_rank``), else unchanged. ``aliases``: the
    lower-cased name -> alias table (:data:`rulegauge.metrics.family.ALIASES`)."""
    if name.lower() in WHOLE_LIST:
        return WHOLE_LIST[name.lower()][0]
    if name.lower() in aliases:
        return name
    m = _TREC_CUTOFF.match(name)
    spelled = aliases.get(f"{m.group(1).lower()}_k") if m else None
    if m is None or spelled is None:
        return name
    return f"{spelled.family}@{m.group(2)}"


def refusal(name: str, aliases: Mapping[str, Any]) -> str | None:
    """Why ``name`` (a peer's metric rulegauge does not compute) is refused, with the nearest
    rulegauge name; None when it is not one of :data:`REFUSED` (or a family of that name is
    registered, for a name refused whatever its cutoff)."""
    m = _PLAIN.match(name)
    if m is None:
        return None
    for r in REFUSED:
        known = m.group(1).lower() in aliases and not r.with_cutoff
        if r.name.lower() == m.group(1).lower() and not known and (m.group(2) is not None or not r.with_cutoff):
            return (f"metric {name!r} ({r.tool}) is not computed by rulegauge: {r.why}; the nearest rulegauge "
                    f"metric is {r.nearest} (docs/metrics.md)")
    return None
