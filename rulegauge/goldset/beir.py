"""Import a BEIR-format collection: a gold set with graded requirements plus its corpus.

``rulegauge goldset import-beir DIR --split test -o OUT`` reads BEIR's layout::

    DIR/corpus.jsonl        {"_id": ..., "title": ..., "text": ...}      one document a line
    DIR/queries.jsonl       {"_id": ..., "text": ...}                    one query a line
    DIR/qrels/<split>.tsv   query-id <TAB> corpus-id <TAB> score         (a header line allowed)

and writes the folder OUT as every collection import does
(:mod:`rulegauge.goldset.collection_import`: corpus files of ``shard_size`` documents in
the loader format ``collection``, and ``goldset.yaml`` with one question per query with
qrels in the split, each document with score >= 1 a requirement with its score as grade,
score 0 or below a ``judged:`` grade 0). Scores are integers of at most
:data:`rulegauge.core.limits.MAX_GRADE` (:mod:`rulegauge.goldset.grades`); every file is
UTF-8, a BOM allowed (:mod:`rulegauge.goldset.import_text`); the corpus is streamed.
Problems (missing files, bad JSON, missing fields, repeated ids, qrels naming a query or
document that does not exist) are collected with ``file:line`` and raised together.

Reference: Thakur et al., "BEIR", NeurIPS 2021 Datasets and Benchmarks (the layout and
its qrels' TSV header ``query-id corpus-id score``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rulegauge.core.errors import Problem, ValidationError
from rulegauge.core.jsonl import iter_records
from rulegauge.corpus.collection import iter_docs
from rulegauge.goldset.collection_import import (
    Collection,
    Imported,
    Output,
    Progress,
    Qrel,
    check_output,
    stop_at_limit,
    write_collection,
)
from rulegauge.goldset.grades import relevance_problem
from rulegauge.goldset.import_text import read_lines


@dataclass(frozen=True)
class BeirImport:
    """What to import: the collection folder, the qrels split, the output folder, the
    documents per corpus file, the language of documents and queries, the gold-set name
    (default: the collection folder's name)."""

    source: Path
    out: Path
    split: str = "test"
    shard_size: int = 50_000
    language: str = "en"
    name: str | None = None


def read_qrels(path: Path, problems: list[Problem]) -> list[Qrel]:
    """(query id, corpus id, score, file:line) of a BEIR qrels TSV (header line skipped;
    scores bounded: :func:`rulegauge.goldset.grades.relevance_problem`)."""
    out: list[Qrel] = []
    for n, raw in enumerate(read_lines(path, problems), start=1):
        line = raw.rstrip("\n").rstrip("\r")
        parts = line.split("\t")
        if not line.strip() or (n == 1 and parts[:2] == ["query-id", "corpus-id"]):
            continue
        where = f"{path}:{n}"
        if len(parts) != 3 or not parts[0].strip() or not parts[1].strip():
            problems.append(Problem(where, "expected query-id<TAB>corpus-id<TAB>score"))
        elif bad := relevance_problem(parts[2].strip(), "score"):
            problems.append(Problem(where, bad))
        else:
            out.append((parts[0].strip(), parts[1].strip(), int(parts[2]), where))
        stop_at_limit(problems)
    return out


def read_queries(path: Path, wanted: set[str], problems: list[Problem]) -> dict[str, str]:
    """Query id -> text of the queries in ``wanted`` (the split's), from ``queries.jsonl``."""
    out: dict[str, str] = {}
    for rec in iter_records(read_lines(path, problems), path, problems):
        obj = rec.record
        if not isinstance(obj, dict) or not isinstance(obj.get("_id"), str) \
                or not isinstance(obj.get("text"), str):
            problems.append(Problem(rec.where, "need a JSON object with string _id and text"))
        elif obj["_id"] in wanted:
            if obj["_id"] in out:
                problems.append(Problem(rec.where, f"query {obj['_id']!r} appears twice"))
            elif not obj["text"].strip():
                problems.append(Problem(rec.where, f"query {obj['_id']!r} has an empty text"))
            else:
                out[obj["_id"]] = obj["text"].strip()
        stop_at_limit(problems)
    return out


def _inputs(src: Path, split: str) -> tuple[Path, Path, Path]:
    files = (src / "corpus.jsonl", src / "queries.jsonl", src / "qrels" / f"{split}.tsv")
    missing = [Problem(str(p), "file not found (a BEIR folder has corpus.jsonl, queries.jsonl, "
                       "qrels/<split>.tsv)") for p in files if not p.is_file()]
    if missing:
        raise ValidationError(missing, summary="cannot import")
    return files


def import_beir(job: BeirImport, progress: Progress | None = None) -> Imported:
    """Import ``job.source`` into ``job.out`` (module docstring)."""
    corpus_path, queries_path, qrels_path = _inputs(job.source, job.split)
    out = Output(job.out, job.name or job.source.resolve().name, job.shard_size, job.language)
    check_output(out)
    problems: list[Problem] = []
    qrels = read_qrels(qrels_path, problems)
    queries = read_queries(queries_path, {q for q, _, _, _ in qrels}, problems)
    return write_collection(Collection(corpus_path, iter_docs, qrels, queries, queries_path,
                                       (queries_path, qrels_path), "import-beir", str(job.source),
                                       f"{job.split} split"), out, progress, problems)
