"""Gate and comparison reports: terminal table, Markdown, JUnit XML and JSON.

Renderers are registered by format name (:data:`GATE_FORMATS`,
:data:`COMPARISON_FORMATS`) and return text. Numbers are rounded here only;
the JSON output keeps full precision, with NaN written as ``null`` and
infinities as the strings ``"inf"`` / ``"-inf"`` (JSON has neither).
JUnit: one ``<testcase>`` per check, ``<failure message=...>`` on FAIL, the
within-tolerance note in ``<system-out>`` (the layout junitparser, GitHub and
GitLab read). Bad input (exit code 2) renders through :func:`render_error`.
"""

from __future__ import annotations

import dataclasses
import enum
import io
import json
import math
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from rulegauge.core.registry import Registry
from rulegauge.regression.check_reach import unfailable
from rulegauge.regression.compare import Comparison, MetricComparison, QuestionChange
from rulegauge.regression.effect_size import effect_cells, effect_head
from rulegauge.regression.gate import GateResult, Status
from rulegauge.regression.gate_power_report import fmt as _f
from rulegauge.regression.gate_power_report import md_cell as _md
from rulegauge.regression.gate_power_report import md_power, rich_power
from rulegauge.regression.slice_report import gate_slices_markdown, gate_slices_renderables

_MARK = {Status.OK: "✅ ok", Status.WITHIN_TOLERANCE: "⚠️ within tolerance", Status.FAIL: "❌ FAIL"}
_STYLE = {Status.OK: "green", Status.WITHIN_TOLERANCE: "yellow", Status.FAIL: "bold red"}


def to_jsonable(obj: Any) -> Any:
    """Dataclasses, enums, tuples and floats to JSON-safe values (see module docstring)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)
                if f.metadata.get("json", True)}
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, float):
        if math.isnan(obj):
            return None
        return obj if math.isfinite(obj) else ("inf" if obj > 0 else "-inf")
    return obj


def _rank(r: int | None, *, known: bool) -> str:
    return str(r) if r is not None else ("—" if known else "?")


def _why(change: QuestionChange, c: Comparison) -> str:
    """``doc#3: 2 → 9 (bm25 1 → 1, dense 3 → —)`` per relevant page; — not ranked, ? unknown."""
    kb, kc = c.base.has_fused, c.candidate.has_fused
    parts = []
    for p in change.pages:
        arms = ", ".join(f"{a.arm} {_rank(a.before, known=kb)} → {_rank(a.after, known=kc)}" for a in p.arms)
        parts.append(f"{p.page}: {_rank(p.before, known=kb)} → {_rank(p.after, known=kc)}"
                     + (f" ({arms})" if arms else ""))
    return "; ".join(parts) or "(no relevant page listed)"


def grouped_changes(c: Comparison, direction: str) -> list[tuple[QuestionChange, str]]:
    """One row per (config pair, question, answerer): the first change and all descriptions."""
    rows: dict[tuple[str, str, str], tuple[QuestionChange, list[str]]] = {}
    for ch in c.changes:
        if ch.direction == direction:
            key = (ch.config.label, ch.question_id, ch.answerer or "")
            rows.setdefault(key, (ch, []))[1].append(
                f"{ch.description} [{ch.answerer}]" if ch.answerer else ch.description)
    return [(ch, "; ".join(desc)) for ch, desc in rows.values()]


def _md_changes(c: Comparison, direction: str) -> list[str]:
    rows = grouped_changes(c, direction)
    if not rows:
        return []
    out = [f"| config | question | {direction} | relevant pages: rank before → after (per arm) |",
           "|---|---|---|---|"]
    out += [f"| `{_md(ch.config.label)}` | `{_md(ch.question_id)}` | {_md(d)} | "
            f"{_md(_why(ch, c))} |" for ch, d in rows]
    return out


def family_line(c: Comparison) -> str:
    """The line under every table of p-values: which family and adjustment they use."""
    return c.family.line()


def _sig(m: MetricComparison) -> str:
    return "yes" if m.significant else ("n/a" if math.isnan(m.p_adjusted) else "no")


def _md_metrics(c: Comparison) -> list[str]:
    ci = f"{c.confidence:.0%} CI (BCa)"
    adj, (moe, es) = f"p ({c.family.method})", effect_head(c.confidence)
    out = [f"| config | metric | n | base | candidate | Δ | {ci} | {moe} | {es} | p | {adj} | "
           "significant | W/T/L |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in c.metrics:
        out.append(f"| `{_md(m.config.label)}` | {_md(m.label)} | {m.n} | {_f(m.base_value)} | "
                   f"{_f(m.candidate_value)} | {_f(m.difference)} | "
                   f"[{_f(m.ci_low)}, {_f(m.ci_high)}] | {' | '.join(effect_cells(m.effect))} | {_f(m.p_value, 3)} | "
                   f"{_f(m.p_adjusted, 3)} | {_sig(m)} | {m.wins}/{m.ties}/{m.losses} |")
    out += ["", _md(family_line(c))]
    out += [f"* {_md(m.config.label)} {_md(m.label)}: {_md(m.note)}" for m in c.metrics if m.note]
    out += [f"* why: {_md(n)}" for n in c.notes]
    if c.unpaired:
        out.append(f"* {_md(c.unpaired_note())}")
    out += [f"* stability: {_md(st.describe())}" for st in c.stability]
    return out


def _md_header(c: Comparison) -> list[str]:
    out = [f"base: `{c.base.label}` · candidate: `{c.candidate.label}`"]
    if c.differences:
        out.append("**forced comparison**: " + _md("; ".join(c.differences)))
    if c.migrated:
        out.append("**old edition against new**, " + _md(c.migrated.describe()))
    if c.grown:
        out.append("**" + _md(c.grown.describe()) + "**")
    return out


def comparison_markdown(c: Comparison) -> str:
    out = ["## Comparison", "", *_md_header(c), "", *_md_metrics(c), ""]
    for direction in ("regression", "improvement"):
        rows = _md_changes(c, direction)
        if rows:
            out += [f"### {direction.capitalize()}s", "", *rows, ""]
    return "\n".join(out)


def gate_markdown(r: GateResult) -> str:
    c = r.comparison
    verdict = "PASS" if r.passed else "FAIL"
    out = [f"## Retrieval gate: {verdict}", "", *_md_header(c),
           f"config: `{_md(r.pair.label)}` · policy: `{_md(r.policy)}`", "",
           f"**{r.count(Status.FAIL)} failed**, {r.count(Status.WITHIN_TOLERANCE)} within "
           f"tolerance, {r.count(Status.OK)} ok ({len(r.checks)} checks)",
           *[f"> **{_md(line)}**" for line in unfailable(r)], "",
           "| status | check | expected | measured | message |", "|---|---|---|---|---|"]
    out += [f"| {_MARK[k.status]} | {_md(k.name)} | {_md(k.expected)} | {_md(k.measured)} | "
            f"{_md(k.message)} |" for k in r.checks]
    out += ["", _md(family_line(c))]
    out += ["", *gate_slices_markdown(r)] if r.slices or r.overlap else []
    if r.power:
        out += ["", *md_power(r)]
    if r.notes:
        out += ["", *[f"> note: {_md(n)}" for n in r.notes]]
    regressions = _md_changes(c, "regression")
    if regressions:
        out += ["", "### Regressions", "", *regressions]
    improvements = _md_changes(c, "improvement")
    if improvements:
        out += ["", "<details><summary>Improvements</summary>", "", *improvements, "",
                "</details>"]
    out += ["", "<details><summary>Metrics</summary>", "", *_md_metrics(c), "", "</details>", ""]
    out += _md_slice_metrics(r)
    return "\n".join(out)


def _md_slice_metrics(r: GateResult) -> list[str]:
    """Each slice's metric table and family line, folded away (regression/slices)."""
    out = []
    for s in r.slices:
        if s.comparison is not None:
            out += [f"<details><summary>Metrics of slice {_md(s.name)} ({_md(s.selector)}, "
                    f"{len(s.questions)} questions)</summary>", "", *_md_metrics(s.comparison), "",
                    "</details>", ""]
    return out


def _rich_changes(c: Comparison, direction: str) -> Table | None:
    rows = grouped_changes(c, direction)
    if not rows:
        return None
    t = Table(title=f"{direction}s", title_justify="left")
    for col in ("config", "question", direction, "relevant pages: rank before → after (per arm)"):
        t.add_column(col, overflow="fold")
    for ch, d in rows:
        t.add_row(ch.config.label, ch.question_id, d, _why(ch, c))
    return t


def _rich_metrics(c: Comparison) -> Table:
    t = Table(title=f"base {c.base.label} vs candidate {c.candidate.label}", title_justify="left")
    for col in ("config", "metric", "n", "base", "candidate", "Δ", f"{c.confidence:.0%} CI (BCa)",
                *effect_head(c.confidence), "p", f"p ({c.family.method})", "significant", "W/T/L"):
        t.add_column(col, overflow="fold")
    for m in c.metrics:
        t.add_row(m.config.label, m.label, str(m.n), _f(m.base_value), _f(m.candidate_value),
                  _f(m.difference), f"[{_f(m.ci_low)}, {_f(m.ci_high)}]", *effect_cells(m.effect),
                  _f(m.p_value, 3),
                  _f(m.p_adjusted, 3), _sig(m), f"{m.wins}/{m.ties}/{m.losses}")
    return t


def _rich_notes(c: Comparison) -> list[RenderableType]:
    """The correction family, then each metric's note (plain text: ids are not markup)."""

    out: list[RenderableType] = [Text(family_line(c))]
    out += [Text(f"  {m.config.label} {m.label}: {m.note}") for m in c.metrics if m.note]
    out += [Text(f"why: {n}") for n in c.notes]
    if c.unpaired:
        out.append(Text(c.unpaired_note(), style="yellow"))
    out += [Text(f"stability: {st.describe()}") for st in c.stability]
    return out


def comparison_renderables(c: Comparison) -> list[RenderableType]:
    out: list[RenderableType] = [_rich_metrics(c), *_rich_notes(c)]
    if c.differences:
        out.insert(0, "[yellow]forced comparison:[/yellow] " + "; ".join(c.differences))
    if c.migrated:
        out.insert(0, Text("old edition against new, " + c.migrated.describe()))
    if c.grown:
        out.insert(0, Text(c.grown.describe(), style="yellow"))
    out += [t for d in ("regression", "improvement") if (t := _rich_changes(c, d)) is not None]
    return out


def gate_renderables(r: GateResult) -> list[RenderableType]:
    t = Table(title=f"gate {r.pair.label}: base {r.comparison.base.label} vs candidate "
                    f"{r.comparison.candidate.label}", title_justify="left")
    for col in ("status", "check", "expected", "measured", "message"):
        t.add_column(col, overflow="fold")
    for k in r.checks:
        t.add_row(f"[{_STYLE[k.status]}]{k.status.value}[/]", k.name, k.expected, k.measured,
                  k.message)
    verdict = "[bold green]PASS[/]" if r.passed else "[bold red]FAIL[/]"
    out: list[RenderableType] = [t]

    out += [_rich_metrics(r.comparison), Text(family_line(r.comparison))]
    out += gate_slices_renderables(r)
    if r.power:
        out.append(rich_power(r))
    out += [Text(f"note: {n}", style="yellow") for n in r.notes]
    reg = _rich_changes(r.comparison, "regression")
    if reg is not None:
        out.append(reg)
    out.append(f"{verdict}: {r.count(Status.FAIL)} failed, {r.count(Status.WITHIN_TOLERANCE)} "
               f"within tolerance, {r.count(Status.OK)} ok")
    out += [Text(line, style="bold yellow") for line in unfailable(r)]
    return out


def _text(renderables: list[RenderableType]) -> str:
    buf = io.StringIO()
    # wide enough for the power table's twelve columns without folding a header
    Console(file=buf, width=200, color_system=None, force_terminal=False).print(Group(*renderables))
    return buf.getvalue()


def gate_junit(r: GateResult) -> str:
    suite_name = f"rulegauge gate {r.pair.label}"
    root = ET.Element("testsuites", name="rulegauge gate", tests=str(len(r.checks)),
                      failures=str(r.count(Status.FAIL)), errors="0")
    suite = ET.SubElement(root, "testsuite", name=suite_name, tests=str(len(r.checks)),
                          failures=str(r.count(Status.FAIL)), errors="0", skipped="0", time="0")
    props = ET.SubElement(suite, "properties")
    for k, v in (("base", r.comparison.base.label), ("candidate", r.comparison.candidate.label),
                 ("config", r.pair.label), ("policy", r.policy),
                 ("correction", r.comparison.family.describe()),
                 *(("cannot fail", line) for line in unfailable(r))):
        ET.SubElement(props, "property", name=k, value=v)
    tag = family_tag(r.comparison)
    for check in r.checks:
        case = ET.SubElement(suite, "testcase", classname=f"gate.{check.metric}", name=check.name,
                             time="0")
        detail = f"expected: {check.expected}\nmeasured: {check.measured}\n" + (
            f"questions: {', '.join(check.questions)}\n" if check.questions else "") + (
            f"family: {r.comparison.family.describe()}\n")
        message = f"{check.message} {tag}"
        if check.status is Status.FAIL:
            ET.SubElement(case, "failure", message=message, type="regression").text = detail
        else:
            ET.SubElement(case, "system-out").text = f"{check.status.value}: {message}\n{detail}"
    return _xml(root)


def family_tag(c: Comparison) -> str:
    """``[p family: holm over 6 test(s), alpha 0.05]``: the family, adjustment and alpha of
    the comparison's tests, named in every JUnit case message."""
    return f"[p family: {c.family.method} over {c.family.size} test(s), alpha {c.family.alpha:g}]"


def _xml(root: ET.Element) -> str:
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def gate_json(r: GateResult) -> str:
    d = {"passed": r.passed, "exit_code": r.exit_code, "policy": r.policy,
         "config": to_jsonable(r.pair), "checks": to_jsonable(r.checks), "notes": list(r.notes),
         "power": to_jsonable(r.power), "cannot_fail": list(unfailable(r)),
         "comparison": to_jsonable(r.comparison),
         "slices": to_jsonable(r.slices), "overlap": to_jsonable(r.overlap)}
    return json.dumps(d, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _error_junit(message: str) -> str:
    root = ET.Element("testsuites", name="rulegauge gate", tests="1", failures="0", errors="1")
    suite = ET.SubElement(root, "testsuite", name="rulegauge gate", tests="1", failures="0",
                          errors="1", skipped="0", time="0")
    case = ET.SubElement(suite, "testcase", classname="gate", name="gate input", time="0")
    first = message.splitlines()[0] if message else "bad input"
    ET.SubElement(case, "error", message=first, type="bad input").text = message
    return _xml(root)


ERROR_FORMATS: Registry[Callable[[str], str]] = Registry("gate report format")
ERROR_FORMATS.add("table", lambda m: f"gate error (bad input): {m}\n")
ERROR_FORMATS.add("markdown", lambda m: f"## Retrieval gate: ERROR (bad input)\n\n```\n{m}\n```\n")
ERROR_FORMATS.add("junit", _error_junit)
ERROR_FORMATS.add("json", lambda m: json.dumps({"passed": False, "exit_code": 2, "error": m},
                                               indent=2, ensure_ascii=False) + "\n")


def render_error(message: str, fmt: str) -> str:
    """The report of a gate that could not run (bad input, exit code 2)."""
    return ERROR_FORMATS.get(fmt)(message)


GATE_FORMATS: Registry[Callable[[GateResult], str]] = Registry("gate report format")
GATE_FORMATS.add("table", lambda r: _text(gate_renderables(r)))
GATE_FORMATS.add("markdown", gate_markdown)
GATE_FORMATS.add("junit", gate_junit)
GATE_FORMATS.add("json", gate_json)

COMPARISON_FORMATS: Registry[Callable[[Comparison], str]] = Registry("comparison format")
COMPARISON_FORMATS.add("table", lambda c: _text(comparison_renderables(c)))
COMPARISON_FORMATS.add("markdown", comparison_markdown)
COMPARISON_FORMATS.add("json", lambda c: json.dumps(to_jsonable(c), indent=2, ensure_ascii=False,
                                                    allow_nan=False) + "\n")
