"""Answer metrics: registered by canonical name, one value per question, config
and answerer, every metric for every question.

Each metric has a *scope*: the questions its mean is taken over, declared with its
direction and description in :mod:`rulegauge.answering.metric_facts` (the table below is a
summary). The value is always stored (a documented default where the metric is
undefined), and means (``rulegauge.answering.sidebyside``) filter rows by scope:

* ``all``: every question;
* ``answerable``: questions with at least one requirement;
* ``answered``: answers whose outcome is ``answered``;
* ``responded``: answers whose outcome is not ``error``.

============================  =====================================================  ==========
metric                        definition (default where undefined)                   scope
============================  =====================================================  ==========
``context_recall``            requirements with a page in the read / requirements    answerable
                              (0.0 for an unanswerable question)
``citation_precision``        relevant distinct cited pages / distinct cited pages,  answerable
                              over answers that cite (NaN when nothing resolvable
                              is cited: left out of means; ALCE's definition)
``citation_recall``           requirements with a cited page / requirements (0.0)    answerable
``dangling_markers``          distinct cited numbers with no passage read            all
``no_citation``               1 if an answered answer cites no passage read          answered
                              (0.0 when not answered)
``abstained``                 1 if the outcome is abstained (its mean: the           all
                              abstention rate)
``abstention_correct``        1 if abstained exactly when the question is            all
                              unanswerable (an error counts 0; its mean: the
                              abstention accuracy; NaN for an unlabelled question)
``fence_pass``                1 if the answer fence passes (0.0 on error: empty)     responded
``letter_density``            the fence's letters / non-space chars (0.0 if empty)   responded
``latency_ms``                wall time of the call (measured: the ``answers``       all
                              column, not stored in ``answer_metrics``;
                              :mod:`rulegauge.answering.answer_rows`)
``error``                     1 if the outcome is error                              all
``fact_recall``               reference facts stated / facts                         responded
                              (NaN for a question without facts: left out of means;
                              :mod:`rulegauge.answering.facts`)
``judge_fact_recall``         facts the judge says are stated / facts (NaN when not  responded
                              judged or a verdict is missing; ``answering.judge``)
============================  =====================================================  ==========

References: context recall and citation precision/recall follow Gao et al.,
"Enabling Large Language Models to Generate Text with Citations" (ALCE, EMNLP
2023), at page level instead of statement level.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rulegauge.answering import metric_facts  # noqa: F401 - declares the answer metrics computed here
from rulegauge.answering.citations import (
    Citation,
    CitationStats,
    CitedPassage,
    citation_stats,
    parse_markers,
    resolve,
)
from rulegauge.answering.facts import fact_recall
from rulegauge.answering.fence import DEFAULT_PARAMS, FenceParams, FenceResult, check
from rulegauge.answering.read import ReadRow, context_recall
from rulegauge.core.errors import RegistryError
from rulegauge.goldset.records import Question
from rulegauge.metrics.contract import check_values
from rulegauge.metrics.family import METRICS, implement
from rulegauge.metrics.info import resolve as resolve_metric


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
    judged: tuple[bool | None, ...] | None = None
    """The judge's verdict per reference fact (None: not judged; an item None: no verdict)."""


def _metric(name: str, compute: Callable[[AnswerContext], float]) -> None:
    """Bind the computation of the answer metric ``name`` declared in :mod:`rulegauge.answering.metric_facts`."""
    if METRICS.get(name).kind != "answer":
        raise RegistryError(f"metric {name} is declared as {METRICS.get(name).kind}, not answer")
    implement(name, compute)


def _flag(b: bool) -> float:  # noqa: FBT001 - converts a value, not a flag
    return 1.0 if b else 0.0


_metric("context_recall", lambda c: context_recall(c.reads, c.question))
# ALCE's precision is over the statements that cite: an answer that cites nothing (an
# abstention, a bare answer) has no citation precision (NaN, left out of means), so an
# answerer that abstains more does not look like one that cites wrongly
_metric("citation_precision", lambda c: c.stats.precision if c.stats.cited_pages else math.nan)
_metric("citation_recall", lambda c: c.stats.recall)
_metric("dangling_markers", lambda c: float(c.stats.dangling))
_metric("no_citation", lambda c: _flag(c.outcome == "answered" and c.stats.resolved == 0))
_metric("abstained", lambda c: _flag(c.outcome == "abstained"))
# a question nobody labelled has no right answer to abstain on: not applicable (NaN)
_metric("abstention_correct",
        lambda c: _flag(c.outcome != "error" and (c.outcome == "abstained") == (not c.question.answerable))
        if c.question.labelled else math.nan)
_metric("fence_pass", lambda c: _flag(c.fence.passed))
_metric("letter_density", lambda c: c.fence.letter_density)
_metric("latency_ms", lambda c: float(c.latency_ms))
_metric("error", lambda c: _flag(c.outcome == "error"))
_metric("fact_recall", lambda c: fact_recall(c.text, c.question.facts, c.question.language))
_metric("judge_fact_recall", lambda c: _judged_recall(c.judged))


def answer_context(question: Question, reads: Sequence[ReadRow], outcome: str, text: str,
                   latency_ms: float, fence_params: FenceParams = DEFAULT_PARAMS,
                   judged: tuple[bool | None, ...] | None = None) -> AnswerContext:
    """Parse the markers of ``text``, map them to ``reads`` and apply the fence."""
    passages = [CitedPassage(r.read_at, r.chunk_id, r.doc_id, r.page) for r in reads]
    cits = resolve(parse_markers(text), passages, question.relevant_pages)
    reqs = [[str(ref) for ref in req] for req in question.requirements]
    return AnswerContext(question, tuple(reads), outcome, text, latency_ms, cits,
                         citation_stats(cits, reqs), check(text, fence_params), judged)


def _judged_recall(judged: tuple[bool | None, ...] | None) -> float:
    """Facts the judge said are stated / facts; NaN unjudged or with a missing verdict."""
    if not judged or any(v is None for v in judged):
        return math.nan
    return sum(1 for v in judged if v) / len(judged)


def answer_metric_names() -> list[str]:
    """Every answer metric, in declaration order."""
    return [name for name, f in METRICS.items() if f.kind == "answer"]


def score_answer(ctx: AnswerContext) -> dict[str, float]:
    """Every answer metric of one answer, in declaration order, each checked against its
    declared bounds where it is computed (:mod:`rulegauge.metrics.contract`: NaN is "not
    applicable" for answer metrics; a value out of bounds stops the run naming the metric)."""
    out = {name: float(METRICS.get(name).compute(ctx)) for name in answer_metric_names()}
    for name, value in out.items():
        check_values(resolve_metric(name), np.array([value]), [ctx.question.question_id])
    return out
