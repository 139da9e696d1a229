"""The answerers side by side, printed: a rich table per config, Markdown, or JSON records.

The figures are :func:`rulegauge.answering.sidebyside.side_by_side`'s; this module only
formats them (``rulegauge answerers RUN --format table|markdown|json``). A NaN prints
``-``; a paired difference prints as ``+d [lo, hi] ±MOE d_z D n=N p (holm) P`` (the BCa
interval, then the t margin of error and Cohen's d_z: :mod:`rulegauge.regression.effect_size`),
with `` *`` when significant; every format gives the family line of the one multiplicity rule
(:meth:`rulegauge.metrics.multiplicity.CorrectionFamily.line`) under its tables.
"""

from __future__ import annotations

import math
from typing import Any

from rich.console import Console
from rich.table import Table

from rulegauge.answering.sidebyside import LABELS, SHOWN, Exclusion, PairedDiff, SideBySide, side_by_side
from rulegauge.core.errors import RulegaugeError
from rulegauge.store.rundir import Run

FORMATS = ("table", "markdown", "json")


def _fmt(x: float, digits: int = 3, *, sign: bool = False) -> str:
    if math.isnan(x):
        return "-"
    return f"{x:+.{digits}f}" if sign else f"{x:.{digits}f}"


def render(sbs: SideBySide) -> list[Any]:
    """One rich table per config: a row per metric, a column per answerer, and for
    every other answerer a column of its paired difference against the baseline
    (``mean [low, high] n=shared``)."""
    out: list[Any] = []
    for cid in dict.fromkeys(r.config_id for r in sbs.rows):
        rows = [r for r in sbs.rows if r.config_id == cid]
        others = [r.answerer for r in rows if r.answerer != sbs.baseline]
        title = f"answerers on config {cid}"
        if others:
            title += (f" (differences: paired vs {sbs.baseline}, mean [95% BCa bootstrap CI] "
                      f"±MOE (95% t) d_z over shared questions, {_p_label(sbs)}; * significant)")
        ex = sbs.exclusion(cid)
        t = Table(title=title, caption=_caption(ex))
        header, body = _grid(sbs, cid)
        for i, h in enumerate(header):
            t.add_column(h, justify="left" if i == 0 else "right")
        for line in body:
            t.add_row(*line)
        out.append(t)
    return out


def _p_label(sbs: SideBySide) -> str:
    return f"p ({sbs.family.method}) adjusted over the family below"


def _caption(ex: Exclusion) -> str:
    return (f"compared over {ex.compared} of {ex.questions} questions; excluded "
            f"{ex.questions - ex.compared} ({ex.errors} with an error row, {ex.not_covered} "
            "not answered by every answerer)")


def _grid(sbs: SideBySide, cid: str) -> tuple[list[str], list[list[str]]]:
    """Header and body cells of one config's table (shared by table and markdown)."""
    rows = [r for r in sbs.rows if r.config_id == cid]
    others = [r.answerer for r in rows if r.answerer != sbs.baseline]
    diffs = {(d.answerer, d.metric): d for d in sbs.diffs if d.config_id == cid}
    header = ["metric", *[r.answerer for r in rows],
              *[f"{label} - {sbs.baseline}" for label in others]]
    pad = [""] * len(others)
    body = [["answers", *[str(r.questions) for r in rows], *pad],
            ["errors", *[str(r.errors) for r in rows], *pad]]
    for m in SHOWN:
        if all(math.isnan(r.mean(m)) for r in rows) and m == "judge_fact_recall":
            continue  # not judged: no row
        digits = 1 if m == "latency_ms" else 3
        body.append([LABELS[m], *[_fmt(r.mean(m), digits) for r in rows],
                     *[_diff_cell(diffs[(label, m)], digits, sbs.family.method) for label in others]])
    body.append(["latency p50 ms", *[_fmt(r.latency_p50, 1) for r in rows], *pad])
    body.append(["latency p95 ms", *[_fmt(r.latency_p95, 1) for r in rows], *pad])
    return header, body


def to_markdown(sbs: SideBySide) -> str:
    """The side-by-side tables as Markdown (one per config, with the exclusion line)."""
    out = []
    for cid in dict.fromkeys(r.config_id for r in sbs.rows):
        header, body = _grid(sbs, cid)
        out.append(f"### answerers on config {cid}\n")
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in line) + " |" for line in body]
        out.append(f"\n{_caption(sbs.exclusion(cid))}; differences: paired vs {sbs.baseline}, "
                   f"mean [95% BCa bootstrap CI] ±MOE (95% t) d_z n=pairs, {_p_label(sbs)}; "
                   "* significant\n")
    if out:
        out.append(sbs.family.line().replace("|", "\\|") + "\n")
    return "\n".join(out)


def _num(x: float) -> float | None:
    return None if math.isnan(x) else x


def to_records(sbs: SideBySide) -> dict[str, Any]:
    """JSON-ready figures at full precision (NaN -> null)."""
    return {
        "baseline": sbs.baseline,
        "exclusions": [vars(e) for e in sbs.exclusions],
        "answerers": [{"config_id": r.config_id, "answerer": r.answerer, "answers": r.questions,
                       "errors": r.errors, "means": {m: _num(v) for m, v in r.means},
                       "latency_p50_ms": _num(r.latency_p50),
                       "latency_p95_ms": _num(r.latency_p95)} for r in sbs.rows],
        "differences": [{"config_id": d.config_id, "answerer": d.answerer,
                         "baseline": d.baseline, "metric": d.metric, "pairs": d.shared,
                         "mean": _num(d.mean_diff), "ci_low": _num(d.ci_low),
                         "ci_high": _num(d.ci_high),
                         "moe": _num(d.effect.moe) if d.effect else None,
                         "d_z": _num(d.effect.d_z) if d.effect else None, "p_value": _num(d.p_value),
                         "p_adjusted": _num(d.p_adjusted), "significant": d.significant}
                        for d in sbs.diffs],
        "family": {"method": sbs.family.method, "alpha": sbs.family.alpha,
                   "scope": sbs.family.scope, "size": sbs.family.size,
                   "members": [list(m) for m in sbs.family.members],
                   "untested": [list(m) for m in sbs.family.untested],
                   "flagged": [list(m) for m in sbs.family.flagged],
                   "line": sbs.family.line()}}


def _diff_cell(d: PairedDiff, digits: int, method: str) -> str:
    if d.shared == 0:
        return "-"
    p = "" if math.isnan(d.p_adjusted) else (f" p ({method}) {d.p_adjusted:.3g}"
                                             + (" *" if d.significant else ""))
    size = (f" ±{_fmt(d.effect.moe, digits)} d_z {_fmt(d.effect.d_z, 2)}" if d.effect else "")
    return (f"{_fmt(d.mean_diff, digits, sign=True)} [{_fmt(d.ci_low, digits, sign=True)}, "
            f"{_fmt(d.ci_high, digits, sign=True)}]{size} n={d.shared}{p}")


def print_side_by_side(run: Run, console: Any = None, config_id: str | None = None,
                       baseline: str | None = None, seed: int = 0, fmt: str = "table",
                       answerers: list[str] | None = None, adjustment: str = "holm",
                       alpha: float = 0.05) -> SideBySide:
    """Print :func:`side_by_side` to ``console`` (a rich Console) as ``fmt``."""
    import json

    if fmt not in FORMATS:
        raise RulegaugeError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    console = console or Console()
    sbs = side_by_side(run, config_id=config_id, baseline=baseline, seed=seed,
                       answerers=answerers, adjustment=adjustment, alpha=alpha)
    if fmt == "table":
        for t in render(sbs):
            console.print(t)
        console.print(sbs.family.line(), markup=False, highlight=False, soft_wrap=True)
    elif fmt == "markdown":
        console.print(to_markdown(sbs), markup=False, highlight=False, soft_wrap=True)
    else:
        console.print(json.dumps(to_records(sbs), indent=2, ensure_ascii=False), markup=False,
                      highlight=False, soft_wrap=True)
    return sbs
