"""Parquet tables of an imported set of production rulings (a run of kind ``rulings``).

Registered in :data:`rulegauge.store.schema.TABLES` on import (loaded by the store through
the plug-in group ``rulegauge.tables`` when it meets one of these tables). ``question_id`` is the
*ruling's* id (its file name, ``rulegauge.rulings.parse.ruling_id``); the gold
question it matches is ``gold_question_id`` in ``ruling_matches``. ``doc_id`` is
production's document id (the ``corpus doc N`` number); ``ceiling`` is the exact
``n_arms / (k + 1)`` and ``score_ratio = fused_score / ceiling``, as in ``fused``.
"""

from __future__ import annotations

import pyarrow as pa

import rulegauge.answering.tables  # noqa: F401 - registered first, whoever imports first
from rulegauge.store.schema import F64, I32, B, Column, S, table

LS = pa.list_(S)


def _opt(name: str, type_: pa.DataType, doc: str) -> Column:
    return Column(name, type_, doc, nullable=True)


RULINGS = table(
    "rulings", "One row per imported ruling page; null where the page does not show a field.",
    ("question_id",),
    Column("question_id", S, "ruling id: the page's file name without extension"),
    Column("source_file", S, "path of the page as given"),
    Column("source_sha256", S, "SHA-256 of the page file"),
    _opt("title", S, "the page's first line (Ruling — <game>)"),
    _opt("question", S, "the question as asked"),
    _opt("game", S, "game from the 'Asked with' line"),
    _opt("edition", S, "edition tag from the 'Asked with' line, e.g. bg-191300-en-1e"),
    _opt("badge", S, "the outcome badge under the question"),
    _opt("answer_text", S,
         "the answer as printed, [n] markers and Markdown kept (what the fence measured)"),
    _opt("signoff", S, "closing line after the reference list"),
    Column("n_answer_refs", I32, "entries in the answer's reference list"),
    _opt("outcome", S, "answered, abstained or error (other words kept lower-cased)"),
    _opt("outcome_label", S, "the outcome line as printed"),
    _opt("corpus_profile", S, "corpus profile line"),
    _opt("answerer_pin", S, "answerer pin as printed (model, think flag, digest)"),
    _opt("answerer_model", S, "first word of the answerer pin"),
    _opt("search_ms", F64, "passage search (retrieval) time, ms"),
    _opt("ask_ms", F64, "ask time, ms"),
    _opt("total_ms", F64, "total time, ms"),
    _opt("queued_ms", F64, "single-flight queue wait, ms"),
    _opt("generation_ms", F64, "single-flight generation time, ms"),
    _opt("first_delta_ms", F64, "time to the first streamed delta (includes retrieval), ms"),
    _opt("gateway_ms", F64, "gateway work, ms"),
    _opt("refs_json", S, "raw retrieval refs JSON as printed"),
    _opt("citations_json", S, "raw citations JSON as printed"),
    _opt("boost_provenance", S, "boost provenance line"),
    _opt("boosted_docs", LS, "production doc ids the boost arm carried"),
    _opt("errata_matched", B, "whether a registered errata card matched the query"),
    _opt("boost_settings", S, "JSON object of the key=value settings on the boost line"),
    _opt("answered_before", S, "answered-before recall line"),
    _opt("similarity_threshold", F64, "answered-before similarity threshold"),
    _opt("fence_verdict", S, "fence verdict word (passed, failed...)"),
    _opt("fence_passed", B, "fence verdict as reported"),
    _opt("fence_letter_density", F64, "letter density as reported (5 decimals)"),
    _opt("fence_nonspace_chars", I32, "non-space characters as reported"),
    _opt("fence_floor", F64, "letter-density floor as reported"),
    _opt("fence_glyph_tokens", I32, "glyph-index tokens as reported"),
    _opt("fence_glyph_max", I32, "glyph-index token maximum as reported"),
    _opt("retained_until", S, "debug row retention date as printed"),
    _opt("k", F64, "RRF k (stated on the page; 60 assumed with a warning)"),
    _opt("arms_fused", LS, "arms fused as rulegauge arm names (dense, bm25, boost), printed order"),
    _opt("arms_fused_raw", S, "arms fused line as printed"),
    _opt("n_arms", I32, "number of fused arms"),
    _opt("ceiling", F64, "n_arms / (k + 1)"),
    _opt("ceiling_reported", F64, "ceiling as printed"),
    _opt("floors_armed", LS, "floors armed for this ask (base_rulebook, errata, per_book)"),
    _opt("floors_not_armed", LS, "floors stated as not armed"),
    _opt("candidate_pool", I32, "passages the answering read scored"),
    _opt("candidate_pool_ceiling", I32, "ceiling of the candidate pool"),
    _opt("tokens_in", I32, "prompt tokens"),
    _opt("tokens_out", I32, "generated tokens"),
    _opt("tokens_per_sec", F64, "generation speed, tokens per second"),
    _opt("generation_s", F64, "seconds of generation behind tokens_per_sec"),
    _opt("stream_path", S, "stream path (streamed, ...)"),
    _opt("abstain_rationale", S, "abstain rationale line"),
    _opt("setup_shape", S, "setup-shape decision"),
    _opt("errata_registry", S, "errata registry line"),
    _opt("errata_cards", I32, "errata cards the game registers"),
    _opt("errata_edition", S, "edition the errata registry is keyed on"),
    Column("n_search", I32, "passage-search rows"),
    Column("n_reads", I32, "answerer-read rows"),
    Column("n_citations", I32, "citations"),
    Column("n_decoded", I32, "distinct fused ranks decoded"),
    Column("n_decoded_unique", I32, "of those, with exactly one consistent rank tuple"),
    Column("notes", S, 'JSON object "section: label" -> explanatory line as printed'),
    Column("unknown", S, 'kept verbatim: JSON {"sections": {head: text}, "fields": '
           '{label: value}, "tables": [text]}'),
    Column("warnings", LS, "parse warnings (file:line: message)"),
)

_ROW_DOC = (
    _opt("doc_id", S, "production document id (corpus doc N)"),
    _opt("doc_kind", S, "rulebook, errata, ... from the document's upper-case prefix"),
    _opt("doc_title", S, "document as printed, without (corpus doc N)"),
    _opt("heading", S, "heading path joined with ' · '"),
    _opt("page", I32, "page as printed"),
)

RULING_REFS = table(
    "ruling_refs",
    "The passage search's rows per ruling (raw refs JSON merged with the printed table).",
    ("question_id", "fused_rank"),
    Column("question_id", S, "ruling id"),
    Column("fused_rank", I32, "1-based position in production's fused list"),
    *_ROW_DOC,
    _opt("fused_score", F64, "fused RRF score as printed (6 decimals)"),
    _opt("ceiling", F64, "n_arms / (k + 1)"),
    _opt("score_ratio", F64, "fused_score / ceiling"),
    _opt("band", S, "the score cell's verdict word"),
    _opt("snippet", S, "snippet from the raw JSON"),
    _opt("snippet_chars", I32, "snippet characters as printed"),
    Column("in_json", B, "the raw refs JSON has this row"),
    Column("in_table", B, "the printed table has this row"),
)

RULING_READS = table(
    "ruling_reads", "What the answerer read per ruling, in read order.",
    ("question_id", "read_at"),
    Column("question_id", S, "ruling id"),
    Column("read_at", I32, "1-based position in the read"),
    *_ROW_DOC,
    _opt("fused_rank", I32, "rank in production's fused list"),
    _opt("fused_score", F64, "fused RRF score as printed"),
    _opt("ceiling", F64, "n_arms / (k + 1)"),
    _opt("score_ratio", F64, "fused_score / ceiling"),
    _opt("carried_by", S, "arms that carried it, rulegauge names joined with '+' in printed order"),
    _opt("carried_by_raw", S, "carried-by cell as printed"),
    _opt("n_carried", I32, "number of arms that carried it"),
    _opt("slot", S, "reranker, floor:<name>, or the cell as printed"),
    _opt("slot_raw", S, "slot cell as printed"),
)

RULING_CITATIONS = table(
    "ruling_citations", "The answer's citations [n] per ruling.",
    ("question_id", "n"),
    Column("question_id", S, "ruling id"),
    Column("n", I32, "citation number [n]"),
    *_ROW_DOC,
    _opt("quote", S, "quote sent on the wire (null: none)"),
    _opt("quote_chars", I32, "quote characters (null: no quote on the wire)"),
    Column("cited_in_answer", B, "the answer text has a marker naming n"),
    Column("in_answer_list", B, "the answer's reference list has [n]"),
    Column("in_json", B, "the raw citations JSON has item n"),
    Column("in_table", B, "the chosen-chunks table has [n]"),
)

RULING_DECODES = table(
    "ruling_decodes",
    "Per-arm rank tuples that reproduce each fused score (rulegauge.arms.rrf_decode).",
    ("question_id", "fused_rank"),
    Column("question_id", S, "ruling id"),
    Column("fused_rank", I32, "1-based position in production's fused list"),
    _opt("doc_id", S, "production document id"),
    _opt("page", I32, "page as printed"),
    Column("fused_score", F64, "fused RRF score as printed"),
    Column("ceiling", F64, "n_arms / (k + 1)"),
    Column("score_ratio", F64, "fused_score / ceiling"),
    Column("k", F64, "RRF k used"),
    Column("n_arms", I32, "arms fused"),
    Column("depth", I32, "deepest rank tried per arm"),
    Column("rounding", S, "rounding rule (half_up, half_even)"),
    Column("in_search", B, "the passage-search list shows this fused rank"),
    Column("in_read", B, "the answerer-read list shows this fused rank"),
    _opt("carried_by", S, "arms that carried it (read rows), joined with '+'"),
    _opt("n_carried", I32, "size of the carried-by set"),
    Column("n_candidates", I32, "rank tuples reproducing the score within depth"),
    Column("unique", B, "exactly one rank tuple reproduces the score"),
    Column("candidates", S, "JSON list of rank tuples (null = arm did not rank it)"),
    Column("n_consistent", I32, "candidates left after the carried-by and one-rank-per-arm checks"),
    Column("consistent", S, "JSON list of those candidates"),
    _opt("ranks", pa.list_(I32), "the single consistent tuple (null entries: arm did not rank it)"),
    _opt("decoded_score", F64, "exact sum of 1/(k + r) over ranks"),
    _opt("reproduces", B, "decoded_score rounds to fused_score"),
    Column("flags", LS, "decoding flags: above_ceiling, impossible, beyond_depth, tie, "
           "carried_by_mismatch, rank_conflict, order_violation, ..."),
)

RULING_MATCHES = table(
    "ruling_matches",
    "Each ruling against the gold set: matched question, citations, recomputed fence.",
    ("question_id",),
    Column("question_id", S, "ruling id"),
    _opt("gold_question_id", S, "gold question matched (null: none)"),
    Column("goldset", S, "gold set name"),
    _opt("matched_by", S, "mapping (named in the mapping file) or question (same game, "
         "edition and normalised text)"),
    _opt("reason", S, "why nothing matched, or why the match is not counted"),
    Column("counted", B, "this ruling's rows are the gold question's production rows"),
    Column("unmapped_docs", LS, "production doc ids with no gold document"),
    _opt("citation_precision", F64, "relevant cited pages / cited pages"),
    _opt("citation_recall", F64, "requirements with a cited page / requirements"),
    _opt("fence_reported_passed", B, "fence verdict the page reported"),
    _opt("fence_reported_density", F64, "letter density the page reported"),
    _opt("fence_reported_nonspace", I32, "non-space characters the page reported"),
    _opt("fence_reported_glyphs", I32, "glyph-index tokens the page reported"),
    _opt("fence_passed", B, "fence recomputed on answer_text with the service's rules"),
    _opt("fence_letter_density", F64, "recomputed letter density"),
    _opt("fence_nonspace_chars", I32, "recomputed non-space characters"),
    _opt("fence_glyph_tokens", I32, "recomputed glyph-index tokens"),
    _opt("fence_agrees", B,
         "verdict, non-space and glyph counts equal, density within 0.5e-5 of the page's"),
)
