"""The answers themselves, side by side: one record per question and config.

:func:`answers_view` gives, for every question answered in a run (and config),
the read the answerers were shown (``n``, document, page, heading, whether the
page is relevant), the question's relevant pages and reference facts, and each
answerer's answer: outcome, text, error, the answer fence's verdict, its
citations resolved to pages and marked right (a relevant page) or wrong (an
irrelevant page, or a dangling number), which facts it states
(:mod:`rulegauge.answering.facts`) and the judge's verdicts when the run was
judged. Records are plain JSON-ready dicts for the HTML report and ``rulegauge
answerers --answers``.

``disagree`` is true when the answerers differ in outcome, in whether they cite
a wrong page, or in which facts they state; ``disagreement_only`` keeps only
those questions. Order: configs as answered, questions in ``questions`` table
order, answerers in answering order.
"""

from __future__ import annotations

import html
import json
import math
from typing import Any

import pandas as pd

from rulegauge.answering.facts import facts_stated
from rulegauge.core.errors import RulegaugeError
from rulegauge.core.tablerows import rows
from rulegauge.store.readback import questions_from_frame
from rulegauge.store.rundir import Run


def _none(x: Any) -> Any:
    if x is None or (isinstance(x, float) and math.isnan(x)) or x is pd.NA:
        return None
    return x


def _signature(a: dict[str, Any]) -> tuple[Any, ...]:
    wrong = any(not c["right"] for c in a["citations"])
    return (a["outcome"], wrong, tuple(a["facts_stated"]))


def answers_view(run: Run, config_id: str | None = None, *, disagreement_only: bool = False,
                 answerers: list[str] | None = None) -> list[dict[str, Any]]:
    """Per question and config: read, answers, citations, fence and fact verdicts."""
    if not run.has_table("answers"):
        raise RulegaugeError(f"run {run.run_id} has no answers yet; run `rulegauge answer` first")
    from rulegauge.answering.sidebyside import answerer_order

    answers = run.table("answers")
    order = answerer_order(run, set(answers["answerer"]), answerers)
    facts = run.table("question_facts") if run.has_table("question_facts") else None
    judged = run.table("question_judgments") if run.has_table("question_judgments") else None
    questions = questions_from_frame(run.table("questions"), facts, judged)
    reads = run.table("reads") if run.has_table("reads") else pd.DataFrame(
        columns=["question_id", "config_id", "read_at", "doc_id", "page", "heading", "relevant"])
    cits = run.table("citations")
    verdicts = run.table("judge_verdicts") if run.has_table("judge_verdicts") else None
    configs = list(dict.fromkeys(answers["config_id"]))
    if config_id is not None:
        if config_id not in configs:
            raise RulegaugeError(f"config {config_id!r} was not answered; choose from: "
                               f"{', '.join(configs)}")
        configs = [config_id]
    a_by = {k: g for k, g in answers.groupby(["config_id", "question_id"], sort=False)}
    r_by = {k: g for k, g in reads.groupby(["config_id", "question_id"], sort=False)}
    c_by = {k: g for k, g in cits.groupby(["config_id", "question_id", "answerer"], sort=False)}
    v_by = ({} if verdicts is None else
            {k: g for k, g in verdicts.groupby(["config_id", "question_id", "answerer"],
                                                sort=False)})
    out = []
    for cid in configs:
        for qid, q in questions.items():
            group = a_by.get((cid, qid))
            if group is None:
                continue
            read = r_by.get((cid, qid))
            rec: dict[str, Any] = {
                "config_id": cid, "question_id": qid, "question": q.question,
                "language": q.language, "answerable": q.answerable,
                "relevant_pages": sorted(q.relevant_pages), "facts": [list(f) for f in q.facts],
                "read": [] if read is None else [
                    {"n": int(r.read_at), "doc_id": r.doc_id, "page": int(r.page),
                     "heading": r.heading, "relevant": bool(r.relevant)}
                    for r in rows(read.sort_values("read_at"))],
                "answers": []}
            by_label = {r.answerer: r for r in rows(group)}
            for label in order:
                a = by_label.get(label)
                if a is None:
                    continue
                c = c_by.get((cid, qid, label))
                v = v_by.get((cid, qid, label))
                rec["answers"].append({
                    "answerer": label, "model_id": a.model_id, "outcome": a.outcome,
                    "text": a.text, "error": _none(a.error), "latency_ms": float(a.latency_ms),
                    "fence_passed": bool(a.fence_passed), "fence_reason": a.fence_reason,
                    "citations": [] if c is None else [
                        {"marker": x.marker, "n": int(x.n), "doc_id": _none(x.doc_id),
                         "page": None if _none(x.page) is None else int(x.page),
                         "dangling": bool(x.dangling), "right": bool(x.relevant)}
                        for x in rows(c)],
                    "facts_stated": list(facts_stated(a.text, q.facts, q.language))
                    if a.outcome != "error" else [False] * len(q.facts),
                    "judge": None if v is None else [
                        None if _none(x) is None else bool(x)
                        for x in v.sort_values("fact")["stated"]]})
            sigs = {_signature(x) for x in rec["answers"]}
            rec["disagree"] = len(sigs) > 1
            if rec["disagree"] or not disagreement_only:
                out.append(rec)
    return out


def to_json(records: list[dict[str, Any]]) -> str:
    return json.dumps(records, indent=2, ensure_ascii=False)


def _cite(c: dict[str, Any]) -> str:
    where = "dangling" if c["dangling"] else f"{c['doc_id']} p.{c['page']}"
    mark = "right" if c["right"] else "wrong"
    return f"<span class='cite {mark}'>[{c['n']}] {html.escape(where)} ({mark})</span>"


def answers_html(records: list[dict[str, Any]]) -> str:
    """The answers section of the HTML report: one block per question (read, answers with
    citations marked right/wrong, fence and fact verdicts) and a checkbox that shows only
    the questions the answerers disagree on."""
    e = html.escape
    out = ["<div class='answers-view'>",
           "<label><input type='checkbox' onclick=\"document.querySelectorAll("
           "'.answers-view .agree').forEach(x => x.style.display = this.checked ? 'none' : '')\">"
           " only questions the answerers disagree on</label>"]
    for r in records:
        cls = "disagree" if r["disagree"] else "agree"
        out.append(f"<details class='{cls}'><summary>{e(r['question_id'])} "
                   f"[{e(r['config_id'])}] {e(r['question'])}"
                   f"{' — answerers disagree' if r['disagree'] else ''}</summary>")
        out.append("<p class='note'>relevant: " + e(", ".join(r["relevant_pages"]) or "none "
                   "(unanswerable)") + "; facts: "
                   + e("; ".join(" / ".join(f) for f in r["facts"]) or "none") + "</p>")
        out.append("<div class='scroll'><table><tr><th>n</th><th>document</th><th>page</th><th>heading</th></tr>"
                   + "".join(f"<tr class='{'right' if x['relevant'] else ''}'><td>{x['n']}</td>"
                             f"<td>{e(x['doc_id'])}</td><td>{x['page']}</td>"
                             f"<td>{e(x['heading'])}</td></tr>" for x in r["read"])
                   + "</table></div>")  # long headings scroll inside the page, never widen it
        for a in r["answers"]:
            facts = ", ".join("stated" if x else "missing" for x in a["facts_stated"])
            judge = ("" if a["judge"] is None else "; judge: " + ", ".join(
                "-" if x is None else ("yes" if x else "no") for x in a["judge"]))
            fence = "passed" if a["fence_passed"] else f"failed ({a['fence_reason']})"
            body = e(a["text"]) if a["outcome"] != "error" else e(f"error: {a['error']}")
            out.append(f"<div class='answer'><b>{e(a['answerer'])}</b> ({e(a['outcome'])}, "
                       f"fence {e(fence)}; facts: {e(facts) or 'none'}{e(judge)})"
                       f"<pre>{body}</pre>{' '.join(_cite(c) for c in a['citations'])}</div>")
        out.append("</details>")
    out.append("</div>")
    return "\n".join(out)
