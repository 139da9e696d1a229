"""Slices and overlap in the reports: Markdown lines and rich tables, for the gate and compare.

The gate's reports (:mod:`rulegauge.regression.gate_report`) add, after the check table,
one row per slice of the policy (its selectors, how many questions, its verdict and the
questions its failing checks name) and one per overlap measured (the policy's
``[overlap]`` and each slice's); ``rulegauge compare`` prints the overlap of every config
pair both runs hold the lists of (:func:`overlap_markdown`, :func:`overlap_table`).
Numbers are rounded here only; the JSON keeps full precision.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from rulegauge.regression.gate import GateResult, Status
from rulegauge.regression.gate_power_report import folded_table
from rulegauge.regression.overlap import PairOverlap
from rulegauge.regression.slices import NAMED, SliceOutcome

SLICE_COLUMNS = ("slice", "selects", "questions", "verdict", "failing checks", "questions named")
OVERLAP_COLUMNS = ("config", "questions", "median RBO", "mean RBO", "median Jaccard",
                   "mean Jaccard", "lowest RBO")


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _f(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:.3g}"


def _named(qids: Sequence[str]) -> str:
    more = f" (+{len(qids) - NAMED} more)" if len(qids) > NAMED else ""
    return ", ".join(qids[:NAMED]) + more or "-"


def slice_rows(slices: Sequence[SliceOutcome]) -> list[tuple[str, ...]]:
    """One row per slice: name, selectors, n, PASS/FAIL, failing checks, questions named."""
    return [(s.name, s.selector, str(len(s.questions)), "PASS" if s.passed else "FAIL",
             str(sum(c.status is Status.FAIL for c in s.checks)), _named(s.failing_questions()))
            for s in slices]


def overlap_rows(overlaps: Sequence[PairOverlap]) -> list[tuple[str, ...]]:
    """One row per overlap: config (and scope), n, median/mean RBO and Jaccard, lowest."""
    return [(o.config.label + ("" if o.scope.startswith("every") else f" [{o.scope}]"), str(o.n),
             _f(o.rbo_median), _f(o.rbo_mean), _f(o.jaccard_median), _f(o.jaccard_mean),
             o.describe_lowest()) for o in overlaps]


def overlap_title(overlaps: Sequence[PairOverlap]) -> str:
    names = sorted({f"{o.rbo_name}, {o.jaccard_name}" for o in overlaps})
    return (f"overlap of the two runs' fused lists ({'; '.join(names)}: RBO_ext, Webber et al. "
            "2010; chunk ids, no judgment read; docs/gate.md \"Overlap without judgments\")")


def _gate_overlaps(r: GateResult) -> list[PairOverlap]:
    return ([r.overlap] if r.overlap is not None else []) + [s.overlap for s in r.slices
                                                            if s.overlap is not None]


def _md_table(columns: Sequence[str], rows: list[tuple[str, ...]]) -> list[str]:
    return (["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
            + ["| " + " | ".join(_md(x) for x in row) + " |" for row in rows])


def overlap_markdown(overlaps: Sequence[PairOverlap], notes: Sequence[str] = ()) -> list[str]:
    """The overlap table in Markdown (empty when nothing was measured and no note)."""
    out = [f"**{_md(overlap_title(overlaps))}**", "", *_md_table(OVERLAP_COLUMNS, overlap_rows(overlaps))] \
        if overlaps else []
    return out + [f"* overlap not measured: {_md(n)}" for n in notes]


def overlap_table(overlaps: Sequence[PairOverlap]) -> Table:
    return folded_table(overlap_title(overlaps), OVERLAP_COLUMNS, overlap_rows(overlaps))


def gate_slices_markdown(r: GateResult) -> list[str]:
    """The gate's slice and overlap sections in Markdown (empty without either)."""
    out: list[str] = []
    if r.slices:
        out += ["**slices** (each its own family)", "", *_md_table(SLICE_COLUMNS, slice_rows(r.slices)),
                "", *[f"* {_md(line)}" for line in family_lines(r.slices)], ""]
    overlaps = _gate_overlaps(r)
    if overlaps:
        out += [*overlap_markdown(overlaps), ""]
    return out


def family_lines(slices: Sequence[SliceOutcome]) -> list[str]:
    """``slice NAME: p (holm) family: ...``: the family of each slice with metric checks."""
    return [f"slice {s.name}: {s.comparison.family.line()}" for s in slices
            if s.comparison is not None]


def gate_slices_renderables(r: GateResult) -> list[RenderableType]:
    """The gate's slice and overlap tables for the terminal (none without either)."""
    out: list[RenderableType] = []
    if r.slices:
        t = folded_table("slices (each its own family)", SLICE_COLUMNS, slice_rows(r.slices))
        out += [t, *(Text(line) for line in family_lines(r.slices))]
    overlaps = _gate_overlaps(r)
    if overlaps:
        out.append(overlap_table(overlaps))
    return out
