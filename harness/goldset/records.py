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
in the corpus answers the question (unanswerable).

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
  :func:`harness.goldset.parse.answer_facts`;
* a ref listed twice in a question, a repeated requirement, an empty any-of
  list and unknown question fields are errors; unknown top-level keys are kept
  in ``GoldSet.extra``.

Reference: ``goldsets/README.md`` (the v1 format in full).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from harness.corpus.records import DocumentSpec, page_key


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

    @property
    def answerable(self) -> bool:
        return len(self.requirements) > 0

    @cached_property
    def relevant_pages(self) -> frozenset[str]:
        """Every listed page id (``doc#page``) is relevant."""
        return frozenset(str(r) for req in self.requirements for r in req)

    @cached_property
    def page_grades(self) -> dict[str, int]:
        """Relevant page id -> grade (1 where the gold set gives none; the highest
        where a page is listed with several)."""
        out: dict[str, int] = {}
        for req in self.requirements:
            for r in req:
                out[str(r)] = max(out.get(str(r), 0), r.grade or 1)
        return out

    @property
    def graded(self) -> bool:
        """True when any page ref carries an explicit grade."""
        return any(r.grade is not None for req in self.requirements for r in req)


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
QUESTION_FIELDS = ("id", "language", "question", "pages", "tags", "game", "edition", "answer")
ANSWER_FIELDS = ("facts",)
DOCUMENT_FIELDS = ("id", "path", "kind", "game", "edition", "language")
