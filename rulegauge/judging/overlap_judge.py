"""``rulegauge judges overlap``: a rule that grades pooled pages by the question's words they hold.

An automatic judge with no model: offline, deterministic and instant, the baseline any
LLM judge must beat, and the automatic labels of the repository's own fixtures. For a
question and a page, ``Q`` is the set of the question's term stems (the judging page's
marking rule, :func:`rulegauge.judging.highlight.question_terms`: Snowball stems in the
question's language, words of three letters or more, question stop words never) and
``P`` the page's stems in that language; the coverage ``c = |Q & P| / |Q|`` (an exact
fraction) gives the grade::

    3 if c >= 4/5,  2 if c >= 3/5,  1 if c >= 3/10,  else 0

A question with no term (all stop words) grades every page 0. A question in another
language than the page finds no shared stem (the rule cannot translate): grade 0, which
is why this judge is weak on cross-lingual questions. Judgments are of ``judge_kind``
``llm`` (the judgments files' kind for every automatic judge) and ``judge_id``
``term-overlap-v1``, stamped with the pool's gold-set hash; each note holds ``c``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from fractions import Fraction

from rulegauge.core.text import Tokenizer
from rulegauge.corpus.records import split_page_key
from rulegauge.goldset.judgments import Judgment
from rulegauge.goldset.records import PageJudgment
from rulegauge.judging.highlight import question_terms
from rulegauge.judging.poolfile import Pool

JUDGE_ID = "term-overlap-v1"
THRESHOLDS = ((3, Fraction(4, 5)), (2, Fraction(3, 5)), (1, Fraction(3, 10)))
"""(grade, least coverage), best grade first."""


def overlap_grade(question: str, language: str, page_text: str) -> tuple[int, Fraction]:
    """(grade, coverage) of one page for one question (module docstring)."""
    terms = question_terms(question, language)
    if not terms:
        return 0, Fraction(0)
    found = set(Tokenizer(stem_language=language)(page_text))
    coverage = Fraction(len(terms & found), len(terms))
    return next((g for g, least in THRESHOLDS if coverage >= least), 0), coverage


def judge_by_overlap(pool: Pool, *, when: datetime | None = None) -> list[Judgment]:
    """One judgment per pooled page, in pool order."""
    stamp = (when or datetime.now(UTC)).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    questions = {q.question_id: q for q in pool.questions}
    out = []
    for p in pool.pages:
        q = questions[p.question_id]
        grade, coverage = overlap_grade(q.question, q.language, p.text)
        doc, number = split_page_key(p.page)
        out.append(Judgment(p.question_id, PageJudgment(
            doc, number, grade, "llm", JUDGE_ID, stamp,
            f"coverage {coverage.numerator}/{coverage.denominator}"), None, pool.goldset_sha256))
    return out
