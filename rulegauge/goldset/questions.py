"""The ``questions:`` of a gold set: ids, languages, page requirements, games, facts.

:func:`read_questions` checks every entry and builds :class:`Question` records;
:func:`read_requirements` reads ``pages:`` (requirements, any-of lists, graded refs);
:func:`answer_facts` reads ``answer: {facts: ...}``. Every problem is recorded on the
:class:`~rulegauge.goldset.source.Source`, none raised.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import yaml

from rulegauge.core.limits import MAX_GRADE
from rulegauge.core.names import id_problem
from rulegauge.goldset.documents import Doc, PageBook, default_game
from rulegauge.goldset.grades import grade_problem, requirements_problem
from rulegauge.goldset.judged import parse_judged
from rulegauge.goldset.records import ANSWER_FIELDS, QUESTION_FIELDS, Fact, PageRef, Question, Requirement
from rulegauge.goldset.source import LANGUAGE, REF, Source, child, items, text_field


def graded(entry: Any, node: yaml.Node, src: Source, qid: str | None) -> tuple[Any, int | None]:
    """(ref, grade) of a page ref: ``doc#page`` or ``{ref: doc#page, grade: n}``, n in
    1..MAX_GRADE (:mod:`rulegauge.goldset.grades`). (None, None) after reporting a
    malformed graded ref."""
    if not isinstance(entry, dict):
        return entry, None
    grade = entry.get("grade")
    if set(entry) != {"ref", "grade"} or grade_problem(grade):
        src.add(node, f"bad graded page ref {_shown(entry)}: expected {{ref: doc#page, grade: n}} "
                      f"with an integer grade 1..{MAX_GRADE}", qid)
        return None, None
    return entry["ref"], grade


def _shown(entry: dict[Any, Any]) -> str:
    """A graded ref as written, without printing a 5,000-digit grade."""
    grade = entry.get("grade")
    if isinstance(grade, int) and not isinstance(grade, bool) and abs(grade) >= 10**40:
        entry = {**entry, "grade": "<huge>"}
    text = repr(entry)
    return text if len(text) <= 120 else text[:100] + "..."


def read_requirements(raw: Any, node: yaml.Node, src: Source, qid: str | None,
                  docs: dict[str, Doc], pages: PageBook) -> tuple[Requirement, ...]:
    if not isinstance(raw, list):
        src.add(node, f"'pages' must be a list of requirements ([] = unanswerable), got {raw!r}",
                qid)
        return ()
    reqs: list[Requirement] = []
    for item in raw:
        group = item if isinstance(item, list) else [item]
        if not group:
            src.add(node, "empty any-of list inside 'pages' (pages: [] marks unanswerable)", qid)
        refs: list[PageRef] = []
        for entry in group:
            ref, grade = graded(entry, node, src, qid)
            m = REF.match(ref) if isinstance(ref, str) else None
            if ref is None:
                continue
            if m is None:
                src.add(node, f"bad page ref {ref!r}: expected 'doc#page' or a list of them", qid)
            elif m["doc"] not in docs:
                src.add(node, f"unknown document {m['doc']!r} in {ref!r}; documents: "
                        + ", ".join(docs), qid)
            elif (page := pages.resolve(m["doc"], m["page"], node, qid)) is not None:
                refs.append(PageRef(m["doc"], page, grade))
        if len(set(refs)) < len(refs) or (refs and set(refs) in [set(r) for r in reqs]):
            src.add(node, f"page ref listed twice in {item!r}: a requirement counts once", qid)
        elif refs:
            reqs.append(tuple(refs))
    if (bad := requirements_problem(reqs)) is not None:
        src.add(node, bad, qid)
    return tuple(reqs)


def read_questions(raw: Any, node: yaml.Node, src: Source, docs: dict[str, Doc],
               pages: PageBook) -> tuple[Question, ...]:
    if raw is None:
        src.add(node, "gold set: missing required field 'questions'")
        return ()
    if not isinstance(raw, list) or not raw:
        src.add(node, "'questions' must be a non-empty list")
        return ()
    game0, edition0 = default_game(docs)
    editions: dict[str, set[str]] = {}
    broken: dict[str, set[str | None]] = {}  # games/editions of entries with problems
    for d in docs.values():
        if d.spec is not None:
            editions.setdefault(d.spec.game, set()).add(d.spec.edition)
        elif d.game is not None:
            broken.setdefault(d.game, set()).add(d.edition)
    out: list[Question] = []
    first_line: dict[str, int] = {}
    for entry, qnode in zip(raw, items(node, len(raw)), strict=True):
        if not isinstance(entry, dict):
            src.add(qnode, f"question entry must be a mapping, got {entry!r}")
            continue
        before = len(src.problems)
        qid = src.as_text(entry.get("id"), child(qnode, "id"), "id", None)
        if qid is None:
            src.add(qnode, "question: missing required field 'id'")
        elif not isinstance(qid, str) or not qid.strip():
            src.add(qnode, f"question id must be a non-empty string (quote numbers), got {qid!r}")
            qid = None
        elif id_problem("question id", qid):
            src.add(child(qnode, "id"), str(id_problem("question id", qid)))
            qid = None
        elif qid in first_line:
            src.add(qnode, f"duplicate question id (first at line {first_line[qid]})", qid)
        else:
            first_line[qid] = qnode.start_mark.line + 1
        unknown = sorted(str(k) for k in entry if k not in QUESTION_FIELDS)
        if unknown:
            src.add(qnode, f"unknown field(s) {', '.join(unknown)}; known: "
                    + ", ".join(QUESTION_FIELDS), qid)
        language = text_field(entry, "language", qnode, src, "question", qid)
        if language is not None and not LANGUAGE.match(language):
            src.add(qnode, f"language {language!r} is not a code like en, fa or pt-BR", qid)
        text = src.as_text(entry.get("question"), child(qnode, "question"), "question", qid)
        if "question" not in entry:
            src.add(qnode, "missing required field 'question'", qid)
        elif not isinstance(text, str) or not text.strip():
            src.add(qnode, "empty question", qid)
        reqs: tuple[Requirement, ...] = ()
        unlabelled = entry.get("unlabelled", False)
        if not isinstance(unlabelled, bool):
            src.add(qnode, f"'unlabelled' must be true or false, got {unlabelled!r}", qid)
        elif unlabelled and "pages" in entry:
            src.add(qnode, "an unlabelled question lists no pages: drop 'pages' or 'unlabelled'", qid)
        elif unlabelled and "judged" in entry:
            src.add(qnode, "an unlabelled question has no judgments: drop 'judged' or 'unlabelled'", qid)
        elif "pages" not in entry and not unlabelled:
            src.add(qnode, "missing required field 'pages' (use [] for unanswerable, or "
                    "unlabelled: true for a question nobody labelled)", qid)
        elif not unlabelled:
            reqs = read_requirements(entry["pages"], qnode, src, qid, docs, pages)
        tags = entry.get("tags", [])
        if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags):
            src.add(qnode, f"'tags' must be a list of strings, got {tags!r}", qid)
        named = text_field(entry, "game", qnode, src, "question", qid, required=False)
        edition = text_field(entry, "edition", qnode, src, "question", qid, required=False)
        game = named or game0
        if named is not None and named not in editions:
            if named not in broken:  # else its document's own problem is the one cause
                src.add(qnode, f"unknown game {named!r}; games: " + ", ".join(sorted(editions)), qid)
        elif (edition is not None and game is not None and edition not in editions.get(game, ())
              and edition not in broken.get(game, ())):
            src.add(qnode, f"unknown edition {edition!r} of {game!r}; editions: "
                    + ", ".join(sorted(editions.get(game, ()))), qid)
        if "edition" not in entry and game == game0:
            edition = edition0
        facts = answer_facts(entry.get("answer"), child(qnode, "answer"), src, qid)
        judged = parse_judged(entry.get("judged"), child(qnode, "judged"), docs,
                              partial(src.add, qid=qid), partial(pages.resolve, qid=qid))
        if len(src.problems) == before and isinstance(qid, str) and isinstance(text, str):
            out.append(Question(qid, text.strip(), str(language), reqs, tuple(tags), game, edition,
                                facts, judged, labelled=unlabelled is not True))
    return tuple(out)


def answer_facts(raw: Any, node: yaml.Node, src: Source, qid: str | None
                 ) -> tuple[Fact, ...]:
    """A question's ``answer: {facts: [...]}``: each fact a list of accepted phrasings
    (a lone string is one phrasing). Absent -> ``()``; every problem is recorded."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        src.add(node, f"'answer' must be a mapping like {{facts: [[...], ...]}}, got {raw!r}", qid)
        return ()
    unknown = sorted(str(k) for k in raw if k not in ANSWER_FIELDS)
    if unknown:
        src.add(node, f"answer: unknown field(s) {', '.join(unknown)}; known: "
                + ", ".join(ANSWER_FIELDS), qid)
    items = raw.get("facts")
    if not isinstance(items, list) or not items:
        src.add(node, "answer.facts must be a non-empty list of facts, each a list of "
                "accepted phrasings", qid)
        return ()
    out: list[Fact] = []
    for i, item in enumerate(items, start=1):
        group = [item] if isinstance(item, str) else item
        if (not isinstance(group, list) or not group
                or not all(isinstance(p, str) and p.strip() for p in group)):
            src.add(node, f"answer.facts[{i}] must be a phrasing or a non-empty list of "
                    f"non-empty phrasings, got {item!r}", qid)
            continue
        fact = tuple(dict.fromkeys(p.strip() for p in group))
        if fact in out:
            src.add(node, f"answer.facts[{i}] repeats an earlier fact", qid)
            continue
        out.append(fact)
    return tuple(out)
