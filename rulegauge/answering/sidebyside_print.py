"""The answerers side by side, printed: a rich table per config, Markdown, or JSON records.

The figures are :func:`rulegauge.answering.sidebyside.side_by_side`'s; this module only
formats them (``rulegauge answerers RUN --format table|markdown|json``). A NaN prints
``-``; a paired difference prints as ``+d [lo, hi] n=N``.
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
            title += (f" (differences: paired vs {sbs.baseline}, mean [95% bootstrap CI] "
                      "over shared questions)")
        ex = sbs.exclusion(cid)
        t = Table(title=title, caption=_caption(ex))
        header, body = _grid(sbs, cid)
        for i, h in enumerate(header):
            t.add_column(h, justify="left" if i == 0 else "right")
        for line in body:
            t.add_row(*line)
        out.append(t)
    return out


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
                     *[_diff_cell(diffs[(label, m)], digits) for label in others]])
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
                   "mean [95% bootstrap CI] n=pairs\n")
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
                         "ci_high": _num(d.ci_high)} for d in sbs.diffs]}


def _diff_cell(d: PairedDiff, digits: int) -> str:
    if d.shared == 0:
        return "-"
    return (f"{_fmt(d.mean_diff, digits, sign=True)} [{_fmt(d.ci_low, digits, sign=True)}, "
            f"{_fmt(d.ci_high, digits, sign=True)}] n={d.shared}")


def print_side_by_side(run: Run, console: Any = None, config_id: str | None = None,
                       baseline: str | None = None, seed: int = 0, fmt: str = "table",
                       answerers: list[str] | None = None) -> SideBySide:
    """Print :func:`side_by_side` to ``console`` (a rich Console) as ``fmt``."""
    import json

    if fmt not in FORMATS:
        raise RulegaugeError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    console = console or Console()
    sbs = side_by_side(run, config_id=config_id, baseline=baseline, seed=seed,
                       answerers=answerers)
    if fmt == "table":
        for t in render(sbs):
            console.print(t)
    elif fmt == "markdown":
        console.print(to_markdown(sbs), markup=False, highlight=False, soft_wrap=True)
    else:
        console.print(json.dumps(to_records(sbs), indent=2, ensure_ascii=False), markup=False,
                      highlight=False, soft_wrap=True)
    return sbs
