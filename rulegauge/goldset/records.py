"""Gold sets (v1 format): documents plus questions with page requirements.

Format (see ``goldsets/README.md``)::

    goldset: name
    version: 1
    description: ...
    pages: physical            # optional: physical (default) or label
    derived: false             # optional: true for sets generated from structure
    documents:
      - {id: sh-rules, path: rules.pdf, kind: rulebook, game: G, edition: en-1, language: en}
    questions:
      - {id: q1, language: en, question: "...", pages: [doc#2, [doc#4, doc#5]], tags: [...]}

Each element of ``pages`` is one *requirement*: a page ref ``doc#page`` or a list
of refs of which any one satisfies it. A ref may carry a relevance grade,
``{ref: doc#page, grade: 2}`` (an integer >= 1; refs without one have grade 1), used
by graded nDCG; every other metric treats a graded page as relevant. A question is fully covered when every
requirement is met; every listed page is relevant. ``pages: []`` means nothing
in the corpus answers the question (unanswerable); ``unlabelled: true`` instead of ``pages``
marks a question nobody labelled (a query-log question: overlap only, no judged metric).

Loading (:func:`load_goldset`, :func:`validate_goldset`) checks everything and
reports every problem at once, placed as ``file:line`` (YAML node marks) and, for
a question, ``file:line: question ID``. Conventions:

* document ``path`` is relative to the YAML file and stored absolute; keys other
  than id, path, kind, game, edition, language and title are loader options
  (``DocumentSpec.options``, sorted, lists frozen to tuples);
* ``pages: label`` refs name printed page labels (``doc#iv``) and are converted to
  physical pages at load time; a document without any labels is labelled by
  its physical numbers; a label printed on two pages is an error;
* a question's game/edition default to the only game of the gold set and the
  edition of its rulebook(s) when they share one; otherwise they stay None;
* ``answer: {facts: [[phrasing, alt phrasing], ...]}`` gives reference facts
  (each a non-empty list of non-empty strings, or one string); parsed by
  :func:`rulegauge.goldset.parse.answer_facts`;
* ``judged: [{ref: doc#page, grade: 0-3, kind: human|llm, judge: ID, time: ..., note: ...}]``
  records explicit relevance judgments (:class:`PageJudgment`), e.g. merged from a
  judging session (``rulegauge goldset merge``); a page judged 0 is *judged non-relevant*,
  which is a different fact from *never judged*. Grades out of 0-3, unknown documents or
  pages and two judgments of one page by one judge are errors;
* a ref listed twice in a question, a repeated requirement, an empty any-of
  list and unknown question fields are errors; unknown top-level keys are kept
  in ``GoldSet.extra``.

Reference: ``goldsets/README.md`` (the v1 format in full).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

from rulegauge.corpus.records import DocumentSpec, page_key


@dataclass(frozen=True)
class PageRef:
    """A reference to one page: ``doc_id#page`` (1-based, physical unless the
    gold set declares ``pages: label``, then the printed label)."""

    doc_id: str
    page: int
    grade: int | None = field(default=None, compare=False)
    """Graded relevance (>= 1) when the gold set gives one; None means 1 (binary).
    Not part of equality: the same page with two grades is the same ref."""

    def __str__(self) -> str:
        return page_key(self.doc_id, self.page)


JUDGE_KINDS = ("human", "llm")
"""Who made a judgment: a person, or a model (judge id = model + prompt hash)."""

GRADES = (0, 1, 2, 3)
"""Judgment grades: 0 not relevant, 1 related, 2 relevant (partly answers), 3 answers it
(the TREC / UMBRELA 0-3 scale)."""


@dataclass(frozen=True)
class PageJudgment:
    """One explicit judgment of one page for one question.

    ``grade`` is 0-3 (:data:`GRADES`; 0 = judged non-relevant), ``judge_kind`` one of
    :data:`JUDGE_KINDS`, ``judge_id`` names the person or the model and prompt hash
    (``qwen2.5-1.5b@prompt:1a2b3c``), ``time`` is ISO 8601 UTC (empty when unknown).
    """

    doc_id: str
    page: int
    grade: int
    judge_kind: str
    judge_id: str
    time: str = ""
    note: str = ""

    @property
    def key(self) -> str:
        """The judged page's id ``doc#page``."""
        return page_key(self.doc_id, self.page)


def consolidate(judgments: Iterable[PageJudgment]) -> dict[str, int]:
    """Page id -> one grade from several judgments of it: the people's when any person
    judged the page, else the models'; several of one kind -> the lower median
    (``statistics.median_low``, so two judges at 1 and 2 give 1). Pages sorted."""
    by_page: dict[str, dict[str, list[int]]] = {}
    for j in judgments:
        by_page.setdefault(j.key, {}).setdefault(j.judge_kind, []).append(j.grade)
    return {p: statistics.median_low(kinds.get("human") or kinds["llm"])
            for p, kinds in sorted(by_page.items())}


Requirement = tuple[PageRef, ...]
"""Any one of these pages satisfies the requirement."""

Fact = tuple[str, ...]
"""One reference fact: accepted phrasings of it (any one stated = the fact stated)."""


@dataclass(frozen=True)
class Question:
    question_id: str
    question: str
    language: str
    requirements: tuple[Requirement, ...]
    tags: tuple[str, ...] = ()
    game: str | None = None
    edition: str | None = None
    facts: tuple[Fact, ...] = ()
    """Reference facts a correct answer states (``answer: {facts: ...}``); each fact
    is a tuple of accepted phrasings, any language."""
    judged: tuple[PageJudgment, ...] = ()
    """Explicit judgments (``judged:``), in file order; several judges may judge one page."""
    labelled: bool = True
    """False for a question nobody labelled (``unlabelled: true``: a query-log question): no
    requirement, so it is out of every judged metric's mean like an unanswerable one, but it
    is not unanswerable either; it counts only where no judgment is read (overlap, RBO)."""

    @property
    def answerable(self) -> bool:
        return len(self.requirements) > 0

    @cached_property
    def relevant_pages(self) -> frozenset[str]:
        """Every listed page id (``doc#page``) is relevant, and so is every page whose
        explicit judgments give a grade >= 1 (:attr:`judged_grades`)."""
        listed = {str(r) for req in self.requirements for r in req}
        return frozenset(listed | {p for p, g in self.judged_grades.items() if g >= 1})

    @cached_property
    def page_grades(self) -> dict[str, int]:
        """Relevant page id -> grade (1 where the gold set gives none; the highest
        where a page is listed with several). A page judged relevant (grade >= 1)
        gets its judged grade; a listed page keeps at least its listed grade even
        where a judge gave it less (the requirement is the gold author's word)."""
        out: dict[str, int] = {}
        for req in self.requirements:
            for r in req:
                out[str(r)] = max(out.get(str(r), 0), r.grade or 1)
        for p, g in sorted(self.judged_grades.items()):
            if g >= 1:
                out[p] = max(out.get(p, 0), g)
        return out

    @cached_property
    def judged_grades(self) -> dict[str, int]:
        """Judged page id -> the grade its explicit judgments give: people's
        judgments when there are any, else the models'; several judges of one
        kind -> the lower median of their grades (``statistics.median_low``)."""
        return consolidate(self.judged)

    @cached_property
    def llm_only_pages(self) -> frozenset[str]:
        """Judged pages whose grade comes from LLM judges only (always marked in outputs)."""
        human = {j.key for j in self.judged if j.judge_kind == "human"}
        return frozenset(j.key for j in self.judged if j.judge_kind == "llm" and j.key not in human)

    def judged_pages(self) -> frozenset[str]:
        """Every page with a relevance decision: the requirement pages (listed =
        relevant) and every explicitly judged page, relevant or not (``doc#page``
        ids via :func:`~rulegauge.corpus.records.page_key`). A ranked page outside
        this set is *unjudged* (what ``Judged@k`` counts, after ir_measures)."""
        return self._judged_pages

    @cached_property
    def _judged_pages(self) -> frozenset[str]:
        listed = {page_key(r.doc_id, r.page) for req in self.requirements for r in req}
        return frozenset(listed | {j.key for j in self.judged})

    @property
    def graded(self) -> bool:
        """True when any page ref carries an explicit grade, or a judged page's grade
        is above 1 (a page judged 1 counts as a plain relevant page)."""
        return (any(r.grade is not None for req in self.requirements for r in req)
                or any(g > 1 for g in self.judged_grades.values()))


@dataclass(frozen=True)
class GoldSet:
    name: str
    version: int
    description: str
    path: str
    sha256: str
    documents: tuple[DocumentSpec, ...]
    questions: tuple[Question, ...]
    page_basis: str = "physical"
    derived: bool = False
    extra: dict[str, object] = field(default_factory=dict, compare=False, hash=False)
    notes: tuple[str, ...] = field(default=(), compare=False, hash=False)
    """What was accepted with a second look (scalars read as text), ``file:line: ...``."""

    @cached_property
    def question_by_id(self) -> dict[str, Question]:
        return {q.question_id: q for q in self.questions}


FORMAT_VERSION = 1
PAGE_BASES = ("physical", "label")
QUESTION_FIELDS = ("id", "language", "question", "pages", "tags", "game", "edition", "answer",
                   "judged", "unlabelled")
JUDGED_FIELDS = ("ref", "grade", "kind", "judge", "time", "note")
"""Keys of one ``judged:`` entry (ref, grade, kind and judge required)."""
ANSWER_FIELDS = ("facts",)
DOCUMENT_FIELDS = ("id", "path", "kind", "game", "edition", "language")
