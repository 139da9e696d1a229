"""Where one label of a question goes in a new edition: answering sentences, flags, reviews.

The label rules of :mod:`rulegauge.goldset.migrate` (its docstring states them) over the
page alignment of :mod:`rulegauge.goldset.align`: :func:`move_label` carries a
``doc#page`` of one question to the new page holding it, or flags it with the reason and
its candidate pages; :func:`read_review` and :func:`apply_review` carry flagged labels to
the candidates reviewers graded ``REVIEW_GRADE`` or more. The answering sentence of a
label is the gold set's quote (:func:`quotes`) or the old page's sentence sharing the most
stemmed terms with the question and its facts (:func:`anchors`).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from rulegauge.core.errors import Problem, ValidationError
from rulegauge.core.text import Tokenizer, tokenize
from rulegauge.corpus import loaders
from rulegauge.corpus.records import DocumentSpec, page_key, split_page_key
from rulegauge.goldset import align as al
from rulegauge.goldset.judgments import read_judgments
from rulegauge.goldset.records import GoldSet, Question

MIN_TERMS = 2
DEFAULT_MIN_CONFIDENCE = al.WHOLE
REVIEW_GRADE = 2
STOPWORDS = frozenset(("the", "and", "of", "to", "is", "in", "you", "your", "a", "an", "are", "that",
                   "with", "for", "on", "each", "it", "do", "does", "i", "my", "can", "what",
                   "how", "when", "who", "which", "there", "be", "or", "if", "at", "by", "as",
                   "this", "from", "may", "get", "me", "we", "us"))
_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?=\S)")


@dataclass(frozen=True)
class LabelMove:
    """Where one label of one question went: ``new`` when carried, ``flag`` when not."""

    question_id: str
    old: str
    new: tuple[str, ...]
    confidence: Fraction | None
    how: str
    flag: str = ""
    candidates: tuple[str, ...] = ()
    anchor: str = ""

    @property
    def carried(self) -> bool:
        return not self.flag


@dataclass(frozen=True)
class DocumentMigration:
    doc_id: str
    old_path: str
    new_path: str
    old_sha256: str
    new_sha256: str
    old_texts: tuple[str, ...] = field(repr=False)
    new_texts: tuple[str, ...] = field(repr=False)
    alignment: al.Alignment = field(repr=False)
    note: str = ""
    """Why the pages were aligned as they were, when shingles found no shared text
    (:mod:`rulegauge.goldset.editions`)."""
    aligned_by: Mapping[str, Any] = field(default_factory=dict, repr=False)
    locator: al.Locate | None = field(default=None, repr=False)


def page_text(text: str, headings: tuple[tuple[str, ...], ...]) -> str:
    """A page as aligned: its outline headings, then its text."""
    heads = [h for path in headings for h in path]
    return "\n".join([*dict.fromkeys(heads), text])


def texts(spec: DocumentSpec) -> tuple[tuple[str, ...], str]:
    doc, pages = loaders.load_document(spec)
    return tuple(page_text(p.text, p.outline_headings) for p in pages), doc.source_sha256 or ""


def sentences(text: str) -> list[str]:
    return [s.strip() for line in text.splitlines() for s in _SENTENCE.split(line) if s.strip()]


class Locator:
    """Shingle sets of the new edition's pages, per shingle size (short sentences)."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.texts = texts
        self.cache: dict[int, list[al.Shingles]] = {}

    def share(self, sentence: str, page: int) -> Fraction:
        toks = tokenize(sentence)
        size = min(al.SHINGLE, len(toks)) or 1
        if size not in self.cache:
            self.cache[size] = [al.shingles(t, size) for t in self.texts]
        return al.share(al.shingles(sentence, size), self.cache[size][page - 1])


def anchors(q: Question, old_text: str, quotes: Mapping[tuple[str, str], str], label: str,
             stem: Tokenizer) -> tuple[list[str], list[str]]:
    """(the answering sentences, the runners-up within one term) of ``q`` on its old page."""
    quote = quotes.get((q.question_id, label))
    if quote:
        return [quote], []
    terms = set(stem(" ".join([q.question, *(p for f in q.facts for p in f)])))
    scored = [(len(set(stem(s)) & terms), s) for s in sentences(old_text)]
    top = max((n for n, _ in scored), default=0)
    if top < MIN_TERMS:
        return [], []
    return [s for n, s in scored if n == top], [s for n, s in scored if n == top - 1]


def locate(sentence: str, parts: Sequence[int], where: al.Locate) -> list[tuple[int, Fraction]]:
    """The parts holding ``sentence`` whole (share >= WHOLE), best first."""
    found = [(j, where.share(sentence, j)) for j in parts]
    return sorted([(j, c) for j, c in found if c >= al.WHOLE], key=lambda x: (-x[1], x[0]))


def move_label(q: Question, label: str, dm: DocumentMigration, quotes: Mapping[tuple[str, str], str],
                stem: Tokenizer, where: al.Locate, min_conf: Fraction) -> LabelMove:
    doc, page = split_page_key(label)
    pa = dm.alignment.of(page)
    keys = [page_key(doc, j) for j, _ in pa.parts]
    best, tied = anchors(q, dm.old_texts[page - 1], quotes, label, stem)
    anchor = " | ".join(best)

    def flag(why: str, cands: Sequence[str] = keys) -> LabelMove:
        return LabelMove(q.question_id, label, (), None, pa.kind, why, tuple(cands), anchor)

    if pa.kind in ("duplicated", "removed"):
        return flag(f"page {pa.kind} in the new edition" + ("" if pa.kind == "removed" else
                    f" (pages {', '.join(map(str, pa.whole))} each hold it)"))
    if pa.kind in ("kept", "moved"):
        target, conf = pa.whole[0], dict(pa.parts)[pa.whole[0]]
        changed = [s for s in best if where.share(s, target) < al.WHOLE]
        if changed:
            return flag("its answering sentence changed in the new edition: "
                        f"{changed[0][:120]!r}", [page_key(doc, target)])
        how = pa.kind
    else:
        if not best:
            return flag(f"page {pa.kind} across pages {', '.join(map(str, (j for j, _ in pa.parts)))} "
                        "and no answering sentence tells which part holds the answer")
        parts = [j for j, _ in pa.parts]
        homes = {s: locate(s, parts, where) for s in best}
        lost = [s for s, h in homes.items() if not h]
        if lost:
            return flag(f"its answering sentence is on no page of the new edition whole "
                        f"(changed, or broken across pages): {lost[0][:120]!r}")
        pages = {h[0][0] for h in homes.values()} | {h[0][0] for s in tied
                                                      if (h := locate(s, parts, where))}
        if len(pages) > 1:
            return flag("the sentences that best answer it lie on different pages "
                        f"({', '.join(map(str, sorted(pages)))})")
        target = pages.pop()
        conf = min(dict(h)[target] for h in homes.values())
        how = f"{pa.kind}: answering sentence"
    if conf < min_conf:
        return flag(f"confidence {float(conf):.3f} below {float(min_conf):.3f}", [page_key(doc, target)])
    return LabelMove(q.question_id, label, (page_key(doc, target),), conf, how, "", (), anchor)


def quotes(goldset: GoldSet) -> dict[tuple[str, str], str]:
    """(question, page) -> the answering sentence the gold set records (goldset accept)."""
    prov = goldset.extra.get("provenance")
    qs = prov.get("questions") if isinstance(prov, dict) else None
    out = {}
    for qid, rec in (qs or {}).items() if isinstance(qs, dict) else ():
        if isinstance(rec, dict) and isinstance(rec.get("answer"), str) and isinstance(rec.get("page"), str):
            out[(str(qid), rec["page"])] = rec["answer"]
    return out


Review = dict[tuple[str, str], tuple[int, str, str]]
"""(question, page) -> (grade, judges, the ``file:line`` of its first row) of a review."""


def read_review(path: Path, goldset: GoldSet) -> Review:
    """(question, page) -> (grade, judges, where) of a review of the flagged labels'
    candidates: people's grades when any, else the models'; lower median of several."""
    found = read_judgments(path)
    bad = [Problem(str(path), f"question {j.question_id}: judged against another gold set "
                   f"({j.goldset_sha256[:12]}) than {goldset.name} ({goldset.sha256[:12]})")
           for j in found if j.goldset_sha256 and j.goldset_sha256 != goldset.sha256]
    if bad:
        raise ValidationError(bad[:20], f"{path}: a review of another gold set's migration")
    by: dict[tuple[str, str], list[Any]] = {}
    first: dict[tuple[str, str], str] = {}
    for j in found:
        by.setdefault((j.question_id, j.page), []).append(j.judgment)
        first.setdefault((j.question_id, j.page), j.where or str(path))
    out = {}
    for key, js in by.items():
        human = [j for j in js if j.judge_kind == "human"]
        use = human or js
        out[key] = (int(statistics.median_low([j.grade for j in use])),
                    ", ".join(sorted({j.judge_id for j in use})), first[key])
    return out


def review_problems(review: Review, asked: Mapping[str, Sequence[str]], questions: set[str],
                    pages: Mapping[str, int]) -> list[Problem]:
    """A problem for every review row that reviews nothing of this migration, naming the row:
    an unknown question, a question with no flagged label (``asked``: question -> the
    candidate pages of its flagged labels, what the review file offered), a page that is
    not one of the new edition (``pages``: migrated document -> its page count), or a page
    the review file did not offer. Such a row would otherwise be dropped without a word."""
    problems = []
    for (q, page), (_, _, where) in review.items():  # in file order
        doc, n = split_page_key(page)
        if q not in questions:
            why = f"question {q} is not in the gold set"
        elif q not in asked:
            why = (f"question {q} has no flagged label in this migration: nothing of it is "
                   "under review (a review of another migration, or other --min-confidence?)")
        elif doc not in pages or not 1 <= n <= pages[doc]:
            known = f" ({doc} has {pages[doc]} pages)" if doc in pages else ""
            why = f"question {q}: page {page} is not a page of the new edition{known}"
        elif page not in asked[q]:
            why = (f"question {q}: page {page} is not among the candidates the review file "
                   f"offered for it ({', '.join(asked[q])})")
        else:
            continue
        problems.append(Problem(where, why))
    return problems


def apply_review(m: LabelMove, review: Review) -> LabelMove:
    seen = [(c, review[(m.question_id, c)]) for c in m.candidates if (m.question_id, c) in review]
    if not seen:
        return m
    good = tuple(c for c, (g, _, _) in seen if g >= REVIEW_GRADE)
    who = ", ".join(sorted({w for _, (_, w, _) in seen}))
    if not good:
        return LabelMove(m.question_id, m.old, (), None, m.how, f"reviewed by {who}: no candidate "
                         f"page graded {REVIEW_GRADE} or more ({m.flag})", m.candidates, m.anchor)
    return LabelMove(m.question_id, m.old, good, None, f"reviewed by {who}", "", m.candidates,
                     m.anchor)


