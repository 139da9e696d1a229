"""Label sets: one relevance grade per (question, page), from a gold set or a judgments file.

What agreement measures compare and what qrels exports write. A **gold set** labels
its listed pages with their grades (1 where none is given) and its judged pages with
their consolidated grade (0 for judged non-relevant); a **judgments file** labels each
judged pair with the consolidated grade of its judges
(:func:`rulegauge.goldset.records.consolidate`: people over models, lower median).
Pairs whose grade comes from LLM judges only are kept in ``llm`` so every output can
mark them. ``questions`` is the set of question ids the label set speaks for (a gold
set: all of its questions; a judgments file: those it judges).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rulegauge.core.errors import ValidationError
from rulegauge.goldset.judgments import Judgment, check_judgments, read_judgments
from rulegauge.goldset.parse import load_goldset
from rulegauge.goldset.records import GoldSet, consolidate

Pair = tuple[str, str]
"""(question id, page id ``doc#page``)."""


@dataclass(frozen=True)
class LabelSet:
    name: str
    kind: str
    """``goldset`` or ``judgments``."""
    grades: dict[Pair, int]
    llm: frozenset[Pair]
    questions: frozenset[str]

    def grade(self, pair: Pair) -> int | None:
        """The pair's grade, or None when this label set never judged it."""
        return self.grades.get(pair)

    def relevant(self, question_id: str) -> dict[str, int]:
        """Page id -> grade of the question's relevant pages (grade >= 1)."""
        return {p: g for (q, p), g in self.grades.items() if q == question_id and g >= 1}


def from_goldset(goldset: GoldSet) -> LabelSet:
    """Listed pages with their grades, judged pages with their judged grade."""
    grades: dict[Pair, int] = {}
    llm: set[Pair] = set()
    for q in goldset.questions:
        for page in sorted(q.judged_pages()):
            grades[(q.question_id, page)] = q.page_grades.get(page, 0)
        listed = {str(r) for req in q.requirements for r in req}
        llm |= {(q.question_id, p) for p in q.llm_only_pages if p not in listed}
    return LabelSet(str(goldset.path), "goldset", grades, frozenset(llm),
                    frozenset(q.question_id for q in goldset.questions))


def from_judgments(judgments: Iterable[Judgment], name: str | Path,
                   judge: str | None = None) -> LabelSet:
    """Consolidated grade per judged pair (``judge``: only that judge's judgments)."""
    by_q: dict[str, list[Judgment]] = {}
    for j in judgments:
        if judge is None or j.judgment.judge_id == judge:
            by_q.setdefault(j.question_id, []).append(j)
    grades: dict[Pair, int] = {}
    llm: set[Pair] = set()
    for qid, js in sorted(by_q.items()):
        for page, grade in consolidate(j.judgment for j in js).items():
            grades[(qid, page)] = grade
            kinds = {j.judgment.judge_kind for j in js if j.page == page}
            if kinds == {"llm"}:
                llm.add((qid, page))
    return LabelSet(str(name), "judgments", grades, frozenset(llm), frozenset(by_q))


def overlay(base: LabelSet, top: LabelSet) -> LabelSet:
    """``base`` with ``top``'s grades where ``top`` judged a pair (the label set a
    judgments file gives when added to a gold set); named after ``top``."""
    grades = {**base.grades, **top.grades}
    llm = (base.llm - set(top.grades)) | top.llm
    return LabelSet(top.name, top.kind, grades, frozenset(llm), base.questions | top.questions)


def is_goldset_path(path: Path | str) -> bool:
    """Gold sets are YAML files (``.yaml``/``.yml``); anything else is a judgments file."""
    return Path(path).suffix.lower() in (".yaml", ".yml")


def load_labels(path: Path | str, *, judge: str | None = None,
                against: GoldSet | None = None) -> LabelSet:
    """A gold set (validated, outside documents allowed) or a judgments file (JSON lines or
    graded TREC qrels, told apart by content) as a :class:`LabelSet`; ``judge``: only that
    judge's judgments (of a qrels file: the judge its lines are by, default the file's
    stem); ``against``: check the judgments against that gold set (unknown questions,
    documents, pages, another gold set's hash) and raise them all."""
    path = Path(path)
    if is_goldset_path(path):
        return from_goldset(load_goldset(path, allow_outside=True))
    judgments = read_judgments(path, qrels_judge=judge)
    if against is not None:
        problems = check_judgments(judgments, against)
        if problems:
            raise ValidationError(problems, f"{path}: judgments that do not fit {against.path}")
    return from_judgments(judgments, path, judge)
