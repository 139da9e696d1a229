"""Parquet table schemas, registered by name: the single source of column names.

The kernel's tables (every retrieval run) are declared here, :data:`KERNEL_TABLES`; each
product declares its own in a module of its own (:mod:`rulegauge.answering.tables`,
:mod:`rulegauge.rulings.tables`), registered through the plug-in group ``rulegauge.tables``
(:mod:`rulegauge.core.plugins`), which :func:`rulegauge.store.schema.spec` loads on the first
name it does not know. ``docs/schemas.md`` is generated from the registry with the group
loaded (``python -m rulegauge.store > docs/schemas.md``; a test checks it is current).
Columns named with a trailing ``*`` are families: ``rank_*`` means one ``rank_<arm>``
column per arm of the run.
"""

from __future__ import annotations

import pyarrow as pa

from rulegauge.core import plugins
from rulegauge.store.schema import (
    F64,
    I32,
    IF_PRESENT,
    REQUIRED,
    RUN_ID,
    SCHEMA_VERSION,
    TABLES,
    B,
    Column,
    Kept,
    S,
    TableSpec,
    load_tables,
    table,
)

__all__ = ["KERNEL_TABLES", "TABLES", "Column", "TableSpec", "markdown", "table"]

QUESTIONS = table(
    "questions", "One row per gold question.", ("question_id",),
    Column("question_id", S, "gold question id"),
    Column("goldset", S, "gold set name"),
    Column("language", S, "language code of the question"),
    Column("question", S, "question text as written"),
    Column("game", S, "game the question is asked about", nullable=True),
    Column("tags", pa.list_(S), "tags from the gold set"),
    Column("requirements", S, 'JSON list of requirements, each a list of "doc#page" refs (any one satisfies)'),
    Column("n_requirements", I32, "number of requirements (0 = unanswerable)"),
    Column("answerable", B, "false when nothing in the corpus answers the question"),
    kept=Kept(("question_id",)), carried=REQUIRED, record="rulegauge.goldset.records.Question",
)

QUESTION_FACTS = table(
    "question_facts",
    "Reference facts of the gold questions (answer: {facts: ...}); one row per fact.",
    ("question_id", "fact"),
    Column("question_id", S, "gold question id"),
    Column("fact", I32, "1-based position of the fact in the question's list"),
    Column("phrasings", pa.list_(S), "accepted phrasings of the fact (any one states it)"),
    carried=IF_PRESENT, record="rulegauge.goldset.records.Question (facts)",
)

QUESTION_JUDGMENTS = table(
    "question_judgments",
    "Explicit relevance judgments of the gold questions (`judged:` in the gold set); one row per "
    "question, page and judge. Grade 0 is judged non-relevant, a different fact from never judged: "
    "`Judged@k` and the condensed-list metrics read them, and `rulegauge run --from` carries them.",
    ("question_id", "doc_id", "page", "judge_kind", "judge_id"),
    Column("question_id", S, "gold question id"),
    Column("doc_id", S, "document of the judged page"),
    Column("page", I32, "physical page judged"),
    Column("grade", I32, "0 not relevant, 1 related, 2 relevant, 3 answers it"),
    Column("judge_kind", S, "human or llm"),
    Column("judge_id", S, "the person, or the model and prompt hash"),
    Column("time", S, "ISO 8601 UTC time of the judgment (empty when unknown)"),
    Column("note", S, "the judge's note"),
    carried=IF_PRESENT, record="rulegauge.goldset.records.Question (judged)",
)

DOCUMENTS = table(
    "documents", "One row per corpus document.", ("doc_id",),
    Column("doc_id", S, "document id from the gold set"),
    Column("kind", S, "rulebook, errata, expansion, faq or community"),
    Column("game", S, "game the document belongs to"),
    Column("edition", S, "edition tag, e.g. en-1"),
    Column("language", S, "language code"),
    Column("title", S, "document title"),
    Column("path", S, "source file path as given", nullable=True),
    Column("source_sha256", S, "SHA-256 of the source file", nullable=True),
    Column("pages", I32, "number of physical pages"),
    carried=REQUIRED, record="rulegauge.corpus.records.Document",
)

CHUNKS = table(
    "chunks", "One row per corpus chunk.", ("chunk_id",),
    Column("chunk_id", S, "doc#pNNNN.cNNN; sorts in document, page, position order"),
    Column("doc_id", S, "document id"),
    Column("doc_kind", S, "rulebook, errata, expansion, faq or community"),
    Column("page", I32, "1-based physical page"),
    Column("page_label", S, "printed page label, where the source has one", nullable=True),
    Column("heading_path", S, "heading path joined with ' · '"),
    Column("char_start", I32, "start offset in the normalised page text"),
    Column("char_end", I32, "end offset (exclusive) in the normalised page text"),
    Column("text", S, "chunk text"),
    carried=REQUIRED, record="rulegauge.corpus.records.Chunk",
)

ARM_RANKS = table(
    "arm_ranks", "Each arm's ranked list per question (to the arm's depth).",
    ("question_id", "arm", "chunk_id"),
    Column("question_id", S, "gold question id"),
    Column("arm", S, "arm name"),
    Column("chunk_id", S, "chunk id"),
    Column("doc_id", S, "document of the chunk"),
    Column("page", I32, "physical page of the chunk"),
    Column("rank", I32, "1-based rank under this arm (score desc, chunk id asc)"),
    Column("score", F64, "the arm's own score (bm25 score, cosine, boost score)"),
    Column("foreign", B, "the id matches no chunk of the corpus (an id the arm read from outside: another "
           "game's page, a stale edition) and keeps its rank as a non-relevant hit; then `chunk_id` and "
           "`doc_id` are the reply id and `page` is 0, a page of its own (docs/arms.md, Foreign hits). "
           "Runs written before foreign hits were kept lack the column: read as false", backfill=False),
    carried=REQUIRED,
)

SEARCH_LATENCY = table(
    "search_latency",
    "Each arm's search time per question, in milliseconds: measured, so kept out of `metrics` (a rerun's "
    "tables are equal but for this column); the `http` arm times every call, an in-process arm its whole "
    "search, shared evenly by its questions; the preflight's warm-up call is never recorded. Read as the "
    "metrics `search_p50_ms` and `search_p95_ms` per config (rulegauge.metrics.latency, docs/metrics.md).",
    ("question_id", "arm"),
    Column("question_id", S, "gold question id"),
    Column("arm", S, "arm name"),
    Column("timing", S, "call (this question's own request, timed) or batch (the arm's search time / "
           "its questions)"),
    Column("latency_ms", F64, "search time in milliseconds; null when unknown (the call failed, or a "
           "journal record from before latencies were kept)", nullable=True),
    kept=Kept(("arm", "question_id")), carried=IF_PRESENT,
)

FUSED = table(
    "fused", "Fused ranking per question and config: every chunk any of the config's arms ranked within its "
    "depth, in fused order. It grows as questions x configs x chunks, so it has a row budget: `rulegauge run` "
    "stores it for the configs of `--fused-config` (default all; `none` = no rows) to `--fused-depth` rows "
    "per question and config (default 0 = the whole list), and refuses, before writing anything, a run "
    "whose fused rows could exceed `--max-fused-rows` (default 5,000,000: 231k rows are 2.3 MB of Parquet, "
    "and every reader loads the table whole). The `metrics` table always covers every config; rows "
    "not stored are recomputable from `arm_ranks` with `rulegauge run --from RUN -c GRID --fused-config ID`. "
    "The manifest's `fused_rows` records what was stored (configs, depth, rows). The rows are cut from the same "
    "pass that scores the metrics and written as they come, in row groups of whole configs (about 262k rows).",
    ("question_id", "config_id", "chunk_id"),
    Column("question_id", S, "gold question id"),
    Column("config_id", S, "fusion config id"),
    Column("chunk_id", S, "chunk id"),
    Column("doc_id", S, "document of the chunk"),
    Column("page", I32, "physical page of the chunk"),
    Column("fused_rank", I32, "1-based rank in the fused list (exact rational score desc, chunk id asc)"),
    Column("fused_score", F64, "the method's fused score (RRF: sum over voting arms of w_a / (k + rank_a))"),
    Column("ceiling", F64, "the method's ceiling (RRF: sum over the config's arms of w_a / (k + 1)); "
           "null when it has none", nullable=True),
    Column("score_ratio", F64, "fused_score / ceiling; null when the method has no ceiling", nullable=True),
    Column("n_arms", I32, "number of arms in the config"),
    Column("arms_voted", I32, "number of arms whose top-depth list holds the chunk"),
    Column("relevant", B, "the chunk's page is one of the question's relevant pages"),
    Column("page_rank", I32, "rank of the chunk's page in the page list (chunks collapsed to pages in fused order)"),
    Column("foreign", B, "a foreign hit: an id an arm read from outside that matches no chunk of the corpus, "
           "in its place as a non-relevant hit (`chunk_id`, `doc_id`: the reply id; `page` 0). Runs written "
           "before foreign hits were kept lack the column: read as false", backfill=False),
    Column("rank_*", I32, "rank under each arm of the run (null: the arm did not rank it within the config's depth)"),
    kept=Kept(("config_id", "question_id", "fused_rank"), only="relevant", top="fused_rank"),
)

METRICS = table(
    "metrics", "One row per question, config and metric (every question, every metric).",
    ("question_id", "config_id", "metric"),
    Column("question_id", S, "gold question id", statistics=False),  # every row group has every question
    Column("config_id", S, "fusion config id (single-arm configs are named arm-<name>)"),
    Column("metric", S, "canonical metric name, e.g. recall@5, nDCG@10", statistics=False),
    Column("value", F64, "metric value at full precision"),
    Column("answerable", B, "ranking-metric means are taken over answerable questions only"),
    kept=Kept(("config_id", "metric", "question_id")),
)

CONFIGS = table(
    "configs", "The expanded fusion configs of the run.", ("config_id",),
    Column("config_id", S, "stable id derived from the parameters"),
    Column("name", S, "readable name"),
    Column("kind", S, "grid (from the config file) or arm (one arm alone)"),
    Column("method", S, "fusion method name (every registered one: `rulegauge list`, docs/fusion.md)"),
    Column("k", F64, "RRF k; null for a method without k", nullable=True),
    Column("arms", pa.list_(S), "arms fused, in order"),
    Column("weights", pa.list_(F64), "per-arm weights"),
    Column("depths", pa.list_(I32), "per-arm depth cutoffs"),
    Column("ceiling", F64, "the method's ceiling (RRF: sum of w_a / (k + 1)); null when it has none "
           "(docs/fusion.md)", nullable=True),
    Column("params", S, "JSON of every parameter (with the method's, e.g. norm, mean), for provenance"),
    kept=Kept(("config_id",)),
)


KERNEL_TABLES = tuple(TABLES.names())
"""The tables declared above: the kernel's (a run of these alone loads no product)."""


def _facts(spec: TableSpec) -> list[str]:
    """The table's declared facts as Markdown lines (none: no lines)."""
    out = []
    if spec.kept is not None:
        how = f"sorted by {', '.join(spec.kept.sort)}"
        how += f"; only rows where `{spec.kept.only}`" if spec.kept.only else "; every row"
        how += f"; {', '.join(f'`{c}`' for c in spec.kept.blank)} blanked" if spec.kept.blank else ""
        out.append(f"Kept in baselines: {how}.")
    if spec.carried is not None:
        out.append(f"Carried by `rulegauge run --from`: {spec.carried}.")
    if spec.record:
        out.append(f"Read back into: `{spec.record}` (`rulegauge.store.readback`).")
    return [*(f"{line}  " for line in out[:-1]), *out[-1:], ""] if out else []


def markdown() -> str:
    """Render every table of rulegauge's own as Markdown (the content of docs/schemas.md): the
    kernel's, then each product's (the ``rulegauge.tables`` group loaded); an installed
    package's tables are its own to document."""
    load_tables()
    out = ["# Parquet tables", "",
           "Generated from the table declarations (`rulegauge/store/tables.py`, the kernel's; "
           "`rulegauge/answering/tables.py`, `rulegauge/rulings/tables.py`) by `python -m rulegauge.store`; "
           "do not edit by hand.", "",
           f"Schema version {SCHEMA_VERSION}. Every file explains itself: each Parquet field's "
           "metadata holds its `description` (the meaning below) and the file metadata holds "
           "`rulegauge.table`, `rulegauge.table_doc`, `rulegauge.schema_version` and `rulegauge.key` "
           "(`pyarrow.parquet.read_schema(path)` shows them). Every table starts with "
           "`run_id`.", ""]
    for name, spec in TABLES.items():
        if plugins.origin("rulegauge.tables", name) != plugins.BUILTIN:
            continue
        out += [f"## `{name}`", "", spec.doc, "", f"Key: {', '.join(spec.key)}", "",
                *_facts(spec), "| column | type | nullable | meaning |", "|---|---|---|---|"]
        for c in (RUN_ID, *spec.columns):
            out.append(f"| `{c.name}` | {c.type} | {'yes' if c.nullable or c.name.endswith('*') else 'no'} | {c.doc} |")
        out.append("")
    return "\n".join(out)
