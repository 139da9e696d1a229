"""The gate's detectable-drops table: per gated metric, its MDE under each power model
(uniform shift, whole questions lost), in the terminal and in Markdown
(:mod:`rulegauge.regression.gate_report` places it)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from rich.table import Table

from rulegauge.regression.gate import GateResult


def fmt(x: float, digits: int = 4) -> str:
    """A number as the gate's reports print it: ``digits`` significant digits, ``n/a``, ``inf``."""
    if math.isnan(x):
        return "n/a"
    return {math.inf: "inf", -math.inf: "-inf"}.get(x, f"{x:.{digits}g}")


def md_cell(text: str) -> str:
    """Text safe in a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


_POWER_COLUMNS = ("metric", "n", "alpha per test", "power", "MDE", "MDE by", "t-test MDE",
                  "MDE, lost questions", "max_drop", "MDE <= max_drop",
                  "questions for max_drop (t-test)", "SD of paired differences")


def _power_rows(r: GateResult) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for w in r.power:
        ok = {True: "yes", False: "NO", None: "-"}[w.mde_ok]
        sd = w.estimate.describe() if w.estimate else "none"
        rows.append((w.metric, str(w.n), fmt(w.alpha_test, 3), f"{w.power:g}", fmt(w.mde, 3),
                     w.method if not math.isnan(w.mde) else "-", fmt(w.t_mde, 3), loss_cell(w),
                     "-" if w.max_drop is None else fmt(w.max_drop), ok,
                     "-" if w.needed is None else str(w.needed),
                     sd + (f"; {w.note}" if w.note else "")))
    return rows


def loss_cell(w: Any) -> str:
    """``0.306 (16 questions lost)``: the whole-question-loss MDE and its question count;
    ``-`` without one, ``none up to every question`` when losing them all is not detected."""
    if math.isnan(w.loss_k):
        return "-"
    if math.isinf(w.loss_k):
        return "none up to every question"
    return f"{fmt(w.loss_mde, 3)} ({int(w.loss_k)} questions lost)"


def _power_title(r: GateResult) -> str:
    return ("detectable drops (MDE: a uniform shift of every question's paired difference, "
            "by the gate's permutation test over resampled differences or the paired t-test: "
            "column 'MDE by'; MDE, lost questions: whole questions losing every relevant page, "
            "the same test; alpha per test = alpha / family size; docs/gate.md \"Power\")")


def folded_table(title: str, columns: Sequence[str], rows: Iterable[Sequence[str]]) -> Table:
    """A terminal table of the gate's report: title on the left, long cells folded, never cut."""
    t = Table(title=title, title_justify="left")
    for col in columns:
        t.add_column(col, overflow="fold")
    for row in rows:
        t.add_row(*row)
    return t


def rich_power(r: GateResult) -> Table:
    return folded_table(_power_title(r), _POWER_COLUMNS, _power_rows(r))


def md_power(r: GateResult) -> list[str]:
    out = [f"**{md_cell(_power_title(r))}**", "", "| " + " | ".join(_POWER_COLUMNS) + " |",
           "|" + "---|" * len(_POWER_COLUMNS)]
    out += ["| " + " | ".join(md_cell(x) for x in row) + " |" for row in _power_rows(r)]
    return out
