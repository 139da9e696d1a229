"""Explicit relevance judgments of a gold question: the ``judged:`` list, read and written.

One entry judges one page for one question::

    judged:
      - {ref: bw-rules#3, grade: 0, kind: human, judge: alice, time: "2026-12-01T11:02:07Z",
         note: "about storms, not the fog"}

``grade`` is 0-3 (0 = judged non-relevant, a different fact from never judged),
``kind`` is ``human`` or ``llm``, ``judge`` names the person or the model and prompt
hash; ``time`` (ISO 8601) and ``note`` are optional. Several judges may judge one
page; one judge judging one page twice is an error, and so are grades outside 0-3,
unknown documents, pages out of range and unknown keys. The checks of the fields
(:func:`judgment_fields`) are shared with the judgments file
(:mod:`rulegauge.goldset.judgments`), so both say the same thing about the same mistake.

Reference: ``goldsets/README.md`` (section *Judged pages*).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import yaml

from rulegauge.goldset.records import GRADES, JUDGE_KINDS, JUDGED_FIELDS, PageJudgment

AddProblem = Callable[[yaml.Node, str], None]
"""Records one problem at a YAML node (the parser's own placement: file:line, question)."""
ResolvePage = Callable[[str, str, yaml.Node], int | None]
"""(doc id, page token, node) -> physical page, or None after recording why not."""


def judgment_fields(entry: Mapping[str, Any], *, keys: Sequence[str] = JUDGED_FIELDS,
                    names: Mapping[str, str] | None = None) -> tuple[dict[str, Any], list[str]]:
    """Check the non-page fields of one judgment: grade, kind, judge, time, note.

    ``keys`` are the allowed keys (anything else is reported); ``names`` maps this
    function's field names (``grade``, ``kind``, ``judge``, ``time``, ``note``) to the
    caller's (a judgments file says ``judge_kind``). Returns (clean values keyed by
    this function's names, messages); values of fields with problems are left out.
    """
    name = {k: k for k in ("grade", "kind", "judge", "time", "note")} | dict(names or {})
    out: dict[str, Any] = {}
    problems = []
    unknown = sorted(str(k) for k in entry if k not in keys)
    if unknown:
        problems.append(f"unknown key(s) {', '.join(unknown)}; known: {', '.join(keys)}")
    grade = entry.get(name["grade"])
    if not isinstance(grade, int) or isinstance(grade, bool) or grade not in GRADES:
        problems.append(f"{name['grade']} must be an integer 0-3 (0 = not relevant, "
                        f"3 = answers it), got {grade!r}")
    else:
        out["grade"] = grade
    kind = entry.get(name["kind"])
    if kind not in JUDGE_KINDS:
        problems.append(f"{name['kind']} must be one of {', '.join(JUDGE_KINDS)}, got {kind!r}")
    else:
        out["kind"] = kind
    judge = entry.get(name["judge"])
    if not isinstance(judge, str) or not judge.strip() or any(c.isspace() for c in judge.strip()):
        problems.append(f"{name['judge']} must be a non-empty id without spaces (a person, or "
                        f"model@prompt-hash), got {judge!r}")
    else:
        out["judge"] = judge.strip()
    when = entry.get(name["time"], "")
    if isinstance(when, dt.datetime):  # YAML reads an unquoted timestamp as a datetime
        when = when.isoformat()
    if not isinstance(when, str) or (when and not _iso_time(when)):
        problems.append(f"{name['time']} must be an ISO 8601 time like 2026-12-01T11:02:07Z, "
                        f"got {when!r}")
    else:
        out["time"] = when
    note = entry.get(name["note"], "")
    if not isinstance(note, str):
        problems.append(f"{name['note']} must be a string, got {note!r}")
    else:
        out["note"] = note.strip()
    return out, problems


def _iso_time(text: str) -> bool:
    try:
        dt.datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def parse_judged(raw: Any, node: yaml.Node, doc_ids: Collection[str], add: AddProblem,
                 resolve: ResolvePage) -> tuple[PageJudgment, ...]:
    """A question's ``judged:`` list -> judgments, in file order; every problem recorded
    through ``add`` at the entry's own node. Absent (None) -> ``()``."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        add(node, f"'judged' must be a list of {{ref, grade, kind, judge}} entries, got {raw!r}")
        return ()
    entry_nodes = list(node.value) if isinstance(node, yaml.SequenceNode) else [node] * len(raw)
    out: list[PageJudgment] = []
    first: dict[tuple[str, str], int] = {}
    for entry, enode in zip(raw, entry_nodes, strict=True):
        if not isinstance(entry, dict):
            add(enode, f"judged: entry must be a mapping {{ref, grade, kind, judge}}, got {entry!r}")
            continue
        fields, problems = judgment_fields(entry)
        for message in problems:
            add(enode, f"judged: {message}")
        ref = entry.get("ref")
        doc, sep, token = ref.rpartition("#") if isinstance(ref, str) else ("", "", "")
        page = None
        if not sep or not doc or not token:
            add(enode, f"judged: bad page ref {ref!r}: expected 'doc#page'")
        elif doc not in doc_ids:
            add(enode, f"judged: unknown document {doc!r} in {ref!r}; documents: "
                + ", ".join(doc_ids))
        else:
            page = resolve(doc, token, enode)
        if page is None or problems:
            continue
        judgment = PageJudgment(doc, page, fields["grade"], fields["kind"], fields["judge"],
                                fields["time"], fields["note"])
        pair = (judgment.key, judgment.judge_id)
        if pair in first:
            add(enode, f"judged: {judgment.key} judged twice by {judgment.judge_id} "
                f"(first at line {first[pair]}); one judge judges a page once")
            continue
        first[pair] = enode.start_mark.line + 1
        out.append(judgment)
    return tuple(out)


def judged_entries(judgments: Sequence[PageJudgment],
                   ref: Callable[[PageJudgment], str] | None = None) -> list[dict[str, Any]]:
    """The ``judged:`` list of a question as plain YAML data, in the given order.

    ``ref`` writes a judgment's page ref (default ``doc#page``, physical); a
    label-basis gold set passes one that writes the printed label."""
    out = []
    for j in judgments:
        item: dict[str, Any] = {"ref": ref(j) if ref else j.key, "grade": j.grade,
                                "kind": j.judge_kind, "judge": j.judge_id}
        if j.time:
            item["time"] = j.time
        if j.note:
            item["note"] = j.note
        out.append(item)
    return out
