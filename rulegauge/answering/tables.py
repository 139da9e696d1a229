"""Parquet tables of the answering stage: ``reads``, ``answers``, ``citations``,
``answer_metrics``, ``judge_verdicts``. Registered in :data:`rulegauge.store.schema.TABLES` on
import, after the kernel's (:mod:`rulegauge.store.tables`); the store loads this module
through the plug-in group ``rulegauge.tables`` (:mod:`rulegauge.core.plugins`) when it meets
one of these tables, so a run without answers never imports answering.

``answerer`` is the answerer's *label* in the run: the registered name
(``extractive``) or a ``label=name`` alias given on the command line
(``big=ollama``), so one answerer can run twice with different parameters.
"""

from __future__ import annotations

import rulegauge.store.tables  # noqa: F401 - the kernel's tables are registered first
from rulegauge.store.schema import F64, I32, B, Column, Kept, S, table

READS = table(
    "reads",
    "What the answerer read per question and config, in read order (the [n] of citations).",
    ("question_id", "config_id", "read_at"),
    Column("question_id", S, "gold question id"),
    Column("config_id", S, "fusion config the read was taken from"),
    Column("read_at", I32, "1-based position in the read; the answer cites it as [read_at]"),
    Column("chunk_id", S, "chunk read"),
    Column("doc_id", S, "document of the chunk"),
    Column("doc_kind", S, "rulebook, errata, expansion, faq or community"),
    Column("page", I32, "physical page of the chunk"),
    Column("heading", S, "heading path joined with ' · '"),
    Column("fused_rank", I32, "rank in the config's fused list"),
    Column("fused_score", F64, "fused RRF score"),
    Column("rerank_rank", I32, "rank after the re-ranker, within the candidate pool"),
    Column("rerank_score", F64, "the re-ranker's score"),
    Column("carried_by", S, "arms that ranked the chunk, in config order, joined with '+'"),
    Column("slot", S, "how it got its slot: reranker or floor:<name>"),
    Column("relevant", B, "the chunk's page is one of the question's relevant pages"),
)

ANSWERS = table(
    "answers", "One row per question, config and answerer (errors included).",
    ("question_id", "config_id", "answerer"),
    Column("question_id", S, "gold question id"),
    Column("config_id", S, "fusion config whose read was answered"),
    Column("answerer", S, "answerer label in this run"),
    Column("answerer_name", S, "registered answerer name"),
    Column("model_id", S, "model id the answerer reported"),
    Column("prompt_hash", S, "SHA-256 of the versioned prompt (rulegauge.answering.prompt)"),
    Column("request_hash", S, "SHA-256 of the question and passages shown (what was asked)"),
    Column("text", S, "answer text as returned (empty on error)"),
    Column("outcome", S, "answered, abstained or error"),
    Column("latency_ms", F64, "wall time of the call in milliseconds"),
    Column("tokens_in", I32, "prompt tokens, when the server reports them", nullable=True),
    Column("tokens_out", I32, "generated tokens, when the server reports them", nullable=True),
    Column("error", S, "error message when outcome is error", nullable=True),
    Column("fence_passed", B, "the answer fence's verdict (rulegauge.answering.fence)"),
    Column("fence_reason", S, "ok, or every failed fence rule"),
    kept=Kept(("config_id", "answerer", "question_id"), blank=("text",)),
)

CITATIONS = table(
    "citations", "One row per number of every citation marker of every answer.",
    ("question_id", "config_id", "answerer", "position", "n"),
    Column("question_id", S, "gold question id"),
    Column("config_id", S, "fusion config"),
    Column("answerer", S, "answerer label"),
    Column("position", I32, "character offset of the marker in the answer text"),
    Column("marker", S, "the marker as written, e.g. [2-4]"),
    Column("n", I32, "the passage number cited (ranges expanded)"),
    Column("chunk_id", S, "chunk read at position n; null when dangling", nullable=True),
    Column("doc_id", S, "document cited; null when dangling", nullable=True),
    Column("page", I32, "page cited; null when dangling", nullable=True),
    Column("dangling", B, "no passage was read at position n"),
    Column("relevant", B, "the cited page is one of the question's relevant pages"),
)

ANSWER_METRICS = table(
    "answer_metrics", "One row per question, config, answerer and answer metric (every metric but the "
    "measured ones, e.g. latency_ms: the answers table's column; rulegauge.answering.answer_rows).",
    ("question_id", "config_id", "answerer", "metric"),
    Column("question_id", S, "gold question id"),
    Column("config_id", S, "fusion config"),
    Column("answerer", S, "answerer label"),
    Column("metric", S, "canonical answer-metric name (rulegauge.answering.answer_metrics.answer_metric_names())"),
    Column("value", F64, "value at full precision (documented default when undefined; null where "
           "a metric has no value, e.g. fact_recall of a question without facts)", nullable=True),
    Column("answerable", B, "false for questions nothing in the corpus answers"),
    kept=Kept(("config_id", "answerer", "metric", "question_id")),
)

JUDGE_VERDICTS = table(
    "judge_verdicts",
    "The judge's verdict on whether an answer states each reference fact.",
    ("question_id", "config_id", "answerer", "fact"),
    Column("question_id", S, "gold question id"),
    Column("config_id", S, "fusion config"),
    Column("answerer", S, "answerer label whose answer was judged"),
    Column("fact", I32, "1-based fact position (question_facts)"),
    Column("judge", S, "label of the answerer that judged"),
    Column("judge_model", S, "model id the judge reported"),
    Column("judge_prompt_hash", S, "SHA-256 of the versioned judge prompt (rulegauge.answering.judge)"),
    Column("stated", B, "the judge said the answer states the fact", nullable=True),
    Column("reply", S, "the judge's reply as returned"),
    Column("error", S, "why there is no verdict (call failed, reply not YES/NO)", nullable=True),
)
