"""Answer metrics: registered by canonical name, one value per question, config
and answerer, every metric for every question.

Each metric has a *scope*: the questions its mean is taken over. The value is
always stored (a documented default where the metric is undefined), and means
(``harness.answering.sidebyside``) filter rows by scope:

* ``all``: every question;
* ``answerable``: questions with at least one requirement;
* ``answered``: answers whose outcome is ``answered``;
* ``responded``: answers whose outcome is not ``error``.

============================  =====================================================  ==========
metric                        definition (default where undefined)                   scope
============================  =====================================================  ==========
``context_recall``            requirements with a page in the read / requirements    answerable
                              (0.0 for an unanswerable question)
``citation_precision``        relevant distinct cited pages / distinct cited pages   answerable
                              (0.0 when nothing resolvable is cited)
``citation_recall``           requirements with a cited page / requirements (0.0)    answerable
``dangling_markers``          distinct cited numbers with no passage read            all
``no_citation``               1 if an answered answer cites no passage read          answered
                              (0.0 when not answered)
``abstained``                 1 if the outcome is abstained                          all
``abstention_correct``        1 if abstained exactly when the question is            all
                              unanswerable (an error counts 0)
``fence_pass``                1 if the answer fence passes (0.0 on error: empty)     responded
``letter_density``            the fence's letters / non-space chars (0.0 if empty)   responded
``latency_ms``                wall time of the call                                  all
``error``                     1 if the outcome is error                              all
``fact_recall``               reference facts stated / facts                         responded
                              (NaN for a question without facts: left out of means;
                              :mod:`harness.answering.facts`)
============================  =====================================================  ==========

References: context recall and citation precision/recall follow Gao et al.,
"Enabling Large Language Models to Generate Text with Citations" (ALCE, EMNLP
2023), at page level instead of statement level.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.answering.citations import (
    Citation,
    CitationStats,
    CitedPassage,
    citation_stats,
    parse_markers,
    resolve,
)
from harness.answering.facts import fact_recall
from harness.answering.fence import DEFAULT_PARAMS, FenceParams, FenceResult, check
from harness.answering.read import ReadRow, context_recall
from harness.core.registry import Registry
from harness.goldset.records import Question

SCOPES = ("all", "answerable", "answered", "responded")


@dataclass(frozen=True)
class AnswerContext:
    """Everything a metric may read about one answer."""

    question: Question
    reads: tuple[ReadRow, ...]
    outcome: str
    text: str
    latency_ms: float
    citations: tuple[Citation, ...]
    stats: CitationStats
    fence: FenceResult


@dataclass(frozen=True)
class AnswerMetric:
    name: str
    scope: str
    doc: str
    compute: Callable[[AnswerContext], float]


ANSWER_METRICS: Registry[AnswerMetric] = Registry("answer metric")


def _metric(name: str, scope: str, doc: str, compute: Callable[[AnswerContext], float]) -> None:
    if scope not in SCOPES:
        raise ValueError(f"metric {name}: unknown scope {scope!r}; choose one of {SCOPES}")
    ANSWER_METRICS.add(name, AnswerMetric(name, scope, doc, compute))


def _flag(b: bool) -> float:
    return 1.0 if b else 0.0


_metric("context_recall", "answerable", "requirements with a page in the read / requirements",
        lambda c: context_recall(c.reads, c.question))
_metric("citation_precision", "answerable", "relevant cited pages / cited pages",
        lambda c: c.stats.precision)
_metric("citation_recall", "answerable", "requirements with a cited page / requirements",
        lambda c: c.stats.recall)
_metric("dangling_markers", "all", "distinct cited numbers with no passage read",
        lambda c: float(c.stats.dangling))
_metric("no_citation", "answered", "1 if an answered answer cites no passage read",
        lambda c: _flag(c.outcome == "answered" and c.stats.resolved == 0))
_metric("abstained", "all", "1 if the answerer abstained",
        lambda c: _flag(c.outcome == "abstained"))
_metric("abstention_correct", "all", "1 if abstained exactly when unanswerable (error: 0)",
        lambda c: _flag(c.outcome != "error"
                        and (c.outcome == "abstained") == (not c.question.answerable)))
_metric("fence_pass", "responded", "1 if the answer fence passes the text",
        lambda c: _flag(c.fence.passed))
_metric("letter_density", "responded", "letters / non-space characters of the text",
        lambda c: c.fence.letter_density)
_metric("latency_ms", "all", "wall time of the call in ms", lambda c: float(c.latency_ms))
_metric("error", "all", "1 if the call failed", lambda c: _flag(c.outcome == "error"))
_metric("fact_recall", "responded", "reference facts stated / facts (NaN without facts)",
        lambda c: fact_recall(c.text, c.question.facts, c.question.language))


def in_scope(scope: str, answerable: bool, outcome: str) -> bool:
    """Whether a question/answer belongs to the mean of a metric with ``scope``."""
    return {"all": True, "answerable": answerable, "answered": outcome == "answered",
            "responded": outcome != "error"}[scope]


def answer_context(question: Question, reads: Sequence[ReadRow], outcome: str, text: str,
                   latency_ms: float, fence_params: FenceParams = DEFAULT_PARAMS) -> AnswerContext:
    """Parse the markers of ``text``, map them to ``reads`` and apply the fence."""
    passages = [CitedPassage(r.read_at, r.chunk_id, r.doc_id, r.page) for r in reads]
    cits = resolve(parse_markers(text), passages, question.relevant_pages)
    reqs = [[str(ref) for ref in req] for req in question.requirements]
    return AnswerContext(question, tuple(reads), outcome, text, latency_ms, cits,
                         citation_stats(cits, reqs), check(text, fence_params))


def score_answer(ctx: AnswerContext) -> dict[str, float]:
    """Every registered answer metric of one answer, in registry order."""
    return {name: float(m.compute(ctx)) for name, m in ANSWER_METRICS.items()}
