"""Import a BEIR-format collection: a gold set with graded requirements plus its corpus.

``rulegauge goldset import-beir DIR --split test -o OUT`` reads BEIR's layout::

    DIR/corpus.jsonl        {"_id": ..., "title": ..., "text": ...}      one document a line
    DIR/queries.jsonl       {"_id": ..., "text": ...}                    one query a line
    DIR/qrels/<split>.tsv   query-id <TAB> corpus-id <TAB> score         (a header line allowed)

and writes the folder OUT (it must not exist; filled beside it and renamed when complete,
so a failed import leaves nothing):

* ``OUT/corpus-00001.jsonl`` ...: the documents in file order, ``shard_size`` a file, in
  the loader format ``collection`` (:mod:`rulegauge.corpus.collection`: one page per
  document, labelled by its ``_id``), so a collection of any size is a few files;
* ``OUT/goldset.yaml``: one question per query with qrels in the split, in the order the
  qrels first name them; every document with score >= 1 is a requirement of its own
  with its score as grade (graded nDCG; recall@k is then the share of relevant documents
  found, the field's R@k); score 0 is a ``judged:`` entry (grade 0, kind human, judge
  ``qrels``); a query with no score >= 1 is unanswerable (``pages: []``). Documents are
  ``kind: rulebook`` of one game named after the collection (rulegauge's kinds are a
  rule service's; docs/real-corpora.md says what that means for the ``boost`` arm).

Memory: the corpus is streamed line by line (its texts are never all in memory); what is
kept is the id -> (file, page) map and the queries in the split. Problems (missing files,
bad JSON, missing fields, repeated ids, scores that are not integers >= 0, qrels naming
a query or document that does not exist) are collected with ``file:line`` and raised as
one :class:`~rulegauge.core.errors.ValidationError` (at most :data:`MAX_PROBLEMS`).

Reference: Thakur et al., "BEIR", NeurIPS 2021 Datasets and Benchmarks (the layout and
its qrels' TSV header ``query-id corpus-id score``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from rulegauge.core.atomic import atomic_dir
from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import Problem, ValidationError
from rulegauge.core.jsonl import dumps_line, iter_records
from rulegauge.corpus.collection import iter_docs
from rulegauge.goldset.parse import load_goldset
from rulegauge.goldset.records import PageJudgment
from rulegauge.goldset.write import DraftQuestion, write_goldset

MAX_PROBLEMS = 100
"""Problems collected before an import stops reading (a wrong file would give millions)."""
GOLDSET_FILE = "goldset.yaml"
Progress = Callable[[str, int], Any]  # stage(description, total) -> context manager giving advance(n)


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


@dataclass(frozen=True)
class Imported:
    """What an import wrote: the gold set, its corpus files and counts."""

    goldset: Path
    shards: tuple[Path, ...]
    documents: int
    questions: int
    unanswerable: int
    relevant: int
    judged_zero: int


def _stop(problems: list[Problem]) -> None:
    if len(problems) >= MAX_PROBLEMS:
        raise ValidationError(problems[:MAX_PROBLEMS], summary=f"cannot import (stopped after {MAX_PROBLEMS} problems)")


def read_qrels(path: Path, problems: list[Problem]) -> list[tuple[str, str, int, str]]:
    """(query id, corpus id, score, file:line) of a BEIR qrels TSV (header line skipped)."""
    out: list[tuple[str, str, int, str]] = []
    with path.open(encoding="utf-8") as fh:
        for n, raw in enumerate(fh, start=1):
            line = raw.rstrip("\n").rstrip("\r")
            parts = line.split("\t")
            if not line.strip() or (n == 1 and parts[:2] == ["query-id", "corpus-id"]):
                continue
            where = f"{path}:{n}"
            if len(parts) != 3 or not parts[0].strip() or not parts[1].strip():
                problems.append(Problem(where, "expected query-id<TAB>corpus-id<TAB>score"))
            elif not parts[2].strip().isdigit():
                problems.append(Problem(where, f"score must be an integer >= 0, got {parts[2]!r}"))
            else:
                out.append((parts[0].strip(), parts[1].strip(), int(parts[2]), where))
            _stop(problems)
    return out


def read_queries(path: Path, wanted: set[str], problems: list[Problem]) -> dict[str, str]:
    """Query id -> text of the queries in ``wanted`` (the split's), from ``queries.jsonl``."""
    out: dict[str, str] = {}
    with path.open(encoding="utf-8") as fh:
        for rec in iter_records(fh, path, problems):
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
            _stop(problems)
    return out


def _lines(fh: Any, advance: Callable[[int], object], digest: Any, problems: list[Problem],
           path: Path) -> Iterator[str]:
    """A binary file's lines as text, hashing and reporting bytes read; an undecodable
    line is a problem naming it (and yields a blank line, so line numbers hold)."""
    for n, raw in enumerate(fh, start=1):
        digest.update(raw)
        advance(len(raw))
        try:
            yield raw.decode("utf-8-sig" if n == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            problems.append(Problem(f"{path}:{n}", f"not UTF-8 ({exc.reason} at byte {exc.start})"))
            yield ""


class _Shards:
    """Corpus files of at most ``size`` documents, opened one at a time."""

    def __init__(self, folder: Path, size: int) -> None:
        self.folder, self.size = folder, size
        self.paths: list[Path] = []
        self.fh: TextIO | None = None
        self.count = 0

    def add(self, record: dict[str, str]) -> tuple[str, int]:
        if self.fh is None or self.count == self.size:
            self.close()
            self.paths.append(self.folder / f"corpus-{len(self.paths) + 1:05d}.jsonl")
            self.fh = self.paths[-1].open("w", encoding="utf-8")
            self.count = 0
        self.fh.write(dumps_line(record))
        self.count += 1
        return self.paths[-1].stem, self.count

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None


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
    name = job.name or job.source.resolve().name
    if job.out.exists():
        raise ValidationError([Problem(str(job.out), "exists: choose a new output folder")],
                              summary="cannot import")
    if job.shard_size < 1:
        raise ValidationError([Problem("--shard-size", f"must be >= 1, got {job.shard_size}")],
                              summary="cannot import")
    problems: list[Problem] = []
    qrels = read_qrels(qrels_path, problems)
    queries = read_queries(queries_path, {q for q, _, _, _ in qrels}, problems)
    stage = progress or (lambda description, total: nullcontext(lambda n: None))
    digest = hashlib.sha256()
    with atomic_dir(job.out) as tmp:
        shards = _Shards(tmp, job.shard_size)
        where: dict[str, tuple[str, int]] = {}
        with corpus_path.open("rb") as fh, stage(f"importing {corpus_path.name} (bytes)",
                                                 corpus_path.stat().st_size) as advance:
            try:
                for doc in iter_docs(_lines(fh, advance, digest, problems, corpus_path), corpus_path, problems):
                    where[doc.doc_id] = shards.add({"_id": doc.doc_id, "title": doc.title, "text": doc.text})
                    _stop(problems)
            finally:
                shards.close()
        drafts = _questions(qrels, queries, where, problems)
        if problems:
            raise ValidationError(problems, summary="cannot import")
        header = (f"imported by rulegauge goldset import-beir from {job.source} (split {job.split})\n"
                  f"corpus.jsonl sha256 {digest.hexdigest()}\n"
                  f"queries.jsonl sha256 {file_sha256(queries_path)}\n"
                  f"qrels/{job.split}.tsv sha256 {file_sha256(qrels_path)}")
        documents = [{"id": p.stem, "path": str(p), "kind": "rulebook", "game": name, "edition": "1",
                      "language": job.language, "title": f"{name} {p.stem}", "format": "collection"}
                     for p in shards.paths]
        write_goldset(tmp / GOLDSET_FILE, name, f"{name} ({job.split} split), imported from BEIR format",
                      documents, [_draft(d, job.language) for d in drafts], header=header)
        load_goldset(tmp / GOLDSET_FILE)  # what was written reads back
    relevant = sum(len(d[2]) for d in drafts)
    return Imported(job.out / GOLDSET_FILE, tuple(job.out / p.name for p in shards.paths), len(where),
                    len(drafts), sum(1 for d in drafts if not d[2]), relevant,
                    sum(len(d[3]) for d in drafts))


Draft = tuple[str, str, list[tuple[str, int]], list[str]]  # id, text, (ref, grade) >= 1, refs judged 0


def _questions(qrels: list[tuple[str, str, int, str]], queries: dict[str, str],
               where: dict[str, tuple[str, int]], problems: list[Problem]) -> list[Draft]:
    """One draft per query, in the order the qrels first name them; refs checked."""
    drafts: dict[str, Draft] = {}
    seen: set[tuple[str, str]] = set()
    for qid, doc_id, score, at in qrels:
        if qid not in queries:
            problems.append(Problem(at, f"query {qid!r} is not in queries.jsonl"))
            continue
        if doc_id not in where:
            problems.append(Problem(at, f"document {doc_id!r} is not in corpus.jsonl"))
            continue
        if (qid, doc_id) in seen:
            problems.append(Problem(at, f"query {qid!r} judges document {doc_id!r} twice"))
            continue
        seen.add((qid, doc_id))
        shard, page = where[doc_id]
        d = drafts.setdefault(qid, (qid, queries[qid], [], []))
        if score >= 1:
            d[2].append((f"{shard}#{page}", score))
        else:
            d[3].append(f"{shard}#{page}")
    return list(drafts.values())


def _draft(d: Draft, language: str) -> DraftQuestion:
    qid, text, graded, zero = d
    judged = tuple(PageJudgment(ref.split("#")[0], int(ref.split("#")[1]), 0, "human", "qrels")
                   for ref in zero)
    return DraftQuestion(qid, text, language, tuple((ref,) for ref, _ in graded), judged=judged,
                         grades=tuple((ref, g) for ref, g in graded if g != 1))
