"""Write an imported test collection: a gold set with graded requirements plus its corpus files.

What ``goldset import-beir`` (:mod:`rulegauge.goldset.beir`) and ``goldset import-trec``
(:mod:`rulegauge.goldset.trec`) share, once each format's reader has read its queries and
qrels (:class:`Collection`). :func:`write_collection` writes the folder ``out`` (it must
not exist; filled beside it and renamed when complete, so a failed import leaves nothing):

* ``out/corpus-00001.jsonl`` ...: the documents in corpus-file order, ``shard_size`` a
  file (1..:data:`rulegauge.corpus.formats.MAX_PAGES`) and never more than
  :data:`SHARD_BYTES` (the loader's limit of a text document), in the loader format
  ``collection`` (:mod:`rulegauge.corpus.collection`: one page per document, labelled by
  its id, which runs keep and exports write), so a collection of any size is a few files;
* ``out/goldset.yaml``: one question per query the qrels judge, in the order the qrels
  first name them; every document with a grade >= 1 is a requirement of its own with its
  grade (graded nDCG; recall@k is then the share of relevant documents found, the
  field's R@k); a grade <= 0 is a ``judged:`` entry (grade 0, kind human, judge
  ``qrels``); a query with no grade >= 1 is unanswerable (``pages: []``). Documents are
  ``kind: rulebook`` of one game named after the collection (rulegauge's kinds are a
  rule service's; docs/real-corpora.md says what that means for the ``boost`` arm).
  The header records the importing command and the SHA-256 of every input file.

Memory: the corpus is streamed line by line (its texts are never all in memory); what is
kept is the id -> (file, page) map and the judged queries. Problems (bad lines, repeated
ids, qrels naming a query or document that does not exist, a pair judged twice, a query
with more relevant documents than a question holds, a document too long for one corpus
line) are collected with the input's ``file:line`` and raised as one
:class:`~rulegauge.core.errors.ValidationError` (at most :data:`MAX_PROBLEMS`), before
anything is renamed into place; no message names the temporary folder.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from rulegauge.core.atomic import atomic_dir
from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import Problem, RulegaugeError, ValidationError
from rulegauge.core.jsonl import dumps_line
from rulegauge.core.limits import MAX_REQUIREMENTS, MAX_TEXT_DOCUMENT_BYTES, MAX_TEXT_LINE, count_problem
from rulegauge.core.names import id_problem
from rulegauge.corpus.collection import CollectionDoc
from rulegauge.corpus.formats import MAX_PAGES
from rulegauge.goldset.import_text import text_lines
from rulegauge.goldset.parse import load_goldset
from rulegauge.goldset.records import PageJudgment
from rulegauge.goldset.source import LANGUAGE
from rulegauge.goldset.write import DraftQuestion, write_goldset

MAX_PROBLEMS = 100
"""Problems collected before an import stops reading (a wrong file would give millions)."""
GOLDSET_FILE = "goldset.yaml"
SHARD_BYTES = MAX_TEXT_DOCUMENT_BYTES
"""The most bytes a corpus file holds: what the ``collection`` loader reads (64 MiB)."""
Progress = Callable[[str, int], Any]  # stage(description, total) -> context manager giving advance(n)
Qrel = tuple[str, str, int, str]  # query id, document id, grade, file:line
DocReader = Callable[[Iterator[str], Path, list[Problem]], Iterator[CollectionDoc]]


@dataclass(frozen=True)
class Collection:
    """What a format's reader gives the writer: the corpus file and how its lines become
    documents, the qrels and the judged queries' texts, the other input files (hashed
    into the header), the command, where it read from, and a note for the description
    (e.g. ``test split``)."""

    corpus: Path
    docs: DocReader
    qrels: list[Qrel]
    queries: dict[str, str]
    queries_file: Path
    inputs: tuple[Path, ...]
    command: str
    origin: str
    note: str


@dataclass(frozen=True)
class Output:
    """Where and how to write: the new folder, documents per corpus file, the language of
    documents and queries, the gold-set name."""

    out: Path
    name: str
    shard_size: int = 50_000
    language: str = "en"


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


def stop_at_limit(problems: list[Problem]) -> None:
    """Raise once :data:`MAX_PROBLEMS` problems are collected."""
    if len(problems) >= MAX_PROBLEMS:
        raise ValidationError(problems[:MAX_PROBLEMS], summary=f"cannot import (stopped after {MAX_PROBLEMS} problems)")


def check_output(job: Output) -> None:
    """The output folder must be new, the shard size 1..MAX_PAGES and the language a
    language code (before anything is read)."""
    if job.out.exists():
        raise ValidationError([Problem(str(job.out), "exists: choose a new output folder")],
                              summary="cannot import")
    problems = []
    bad = count_problem("shard size", job.shard_size, maximum=MAX_PAGES)
    if bad:
        problems.append(Problem("--shard-size", bad + " (documents a corpus file holds)"))
    if not LANGUAGE.match(job.language):
        problems.append(Problem("--language", f"{job.language!r} is not a code like en, fa or pt-BR"))
    if problems:
        raise ValidationError(problems, summary="cannot import")


class _Shards:
    """Corpus files of at most ``size`` documents and :data:`SHARD_BYTES` bytes, opened one
    at a time, written in binary (the byte count is what the loader's limit counts)."""

    def __init__(self, folder: Path, size: int) -> None:
        self.folder, self.size = folder, size
        self.paths: list[Path] = []
        self.fh: BinaryIO | None = None
        self.count = self.bytes = 0

    def add(self, line: bytes) -> tuple[str, int]:
        """Write one corpus line; (file stem, line number) of where it went."""
        if self.fh is None or self.count == self.size or self.bytes + len(line) > SHARD_BYTES:
            self.close()
            self.paths.append(self.folder / f"corpus-{len(self.paths) + 1:05d}.jsonl")
            self.fh = self.paths[-1].open("wb")
            self.count = self.bytes = 0
        self.fh.write(line)
        self.count += 1
        self.bytes += len(line)
        return self.paths[-1].stem, self.count

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None


def _corpus_line(doc: CollectionDoc) -> bytes:
    return dumps_line({"_id": doc.doc_id, "title": doc.title, "text": doc.text}).encode("utf-8")


def write_collection(c: Collection, job: Output, progress: Progress | None = None,
                     found: Sequence[Problem] = ()) -> Imported:
    """Stream ``c``'s corpus into ``job.out`` and write its gold set (module docstring);
    ``found``: problems the reader already has (of the queries or qrels), reported with
    the corpus's."""
    check_output(job)
    problems: list[Problem] = list(found)
    stage = progress or (lambda description, total: nullcontext(lambda n: None))
    digest = hashlib.sha256()
    with atomic_dir(job.out) as tmp, _named_as(tmp, job.out):
        shards = _Shards(tmp, job.shard_size)
        where: dict[str, tuple[str, int]] = {}
        with c.corpus.open("rb") as fh, stage(f"importing {c.corpus.name} (bytes)",
                                              c.corpus.stat().st_size) as advance:
            def seen(raw: bytes) -> None:
                digest.update(raw)
                advance(len(raw))

            try:
                for doc in c.docs(text_lines(fh, c.corpus, problems, seen), c.corpus, problems):
                    line = _corpus_line(doc)
                    if len(line) > MAX_TEXT_LINE:  # what the loader would refuse in the corpus file
                        problems.append(Problem(f"{c.corpus}:{doc.line}", (
                            f"document {doc.doc_id!r} is {len(line):,} bytes as a corpus line, above "
                            f"the limit of {MAX_TEXT_LINE:,} a document")))
                        where[doc.doc_id] = ("", 0)  # known: its qrels are not reported again
                    else:
                        where[doc.doc_id] = shards.add(line)
                    stop_at_limit(problems)
            finally:
                shards.close()
        drafts = _questions(c, where, problems)
        if problems:
            raise ValidationError(problems, summary="cannot import")
        header = "\n".join([f"imported by rulegauge goldset {c.command} from {c.origin} ({c.note})",
                            f"{c.corpus.name} sha256 {digest.hexdigest()}",
                            *(f"{p.name} sha256 {file_sha256(p)}" for p in c.inputs)])
        documents = [{"id": p.stem, "path": str(p), "kind": "rulebook", "game": job.name, "edition": "1",
                      "language": job.language, "title": f"{job.name} {p.stem}", "format": "collection"}
                     for p in shards.paths]
        write_goldset(tmp / GOLDSET_FILE, job.name, f"{job.name} ({c.note}), imported by {c.command}",
                      documents, [_draft(d, job.language) for d in drafts], header=header)
        _reads_back(tmp, job.out)
    return Imported(job.out / GOLDSET_FILE, tuple(job.out / p.name for p in shards.paths), len(where),
                    len(drafts), sum(1 for d in drafts if not d[2]), sum(len(d[2]) for d in drafts),
                    sum(len(d[3]) for d in drafts))


Draft = tuple[str, str, list[tuple[str, int]], list[str]]  # id, text, (ref, grade) >= 1, refs judged 0


@contextmanager
def _named_as(tmp: Path, out: Path) -> Iterator[None]:
    """An OSError on a file of the temporary folder (a full disk) names the file as it would
    have been named (``out/corpus-00002.jsonl``), never the folder, which is removed."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None or str(tmp) not in str(exc.filename):
            raise
        raise OSError(exc.errno, exc.strerror, str(exc.filename).replace(str(tmp), str(out))) from None


def _reads_back(tmp: Path, out: Path) -> None:
    """Load what was written, as ``validate`` will; a refusal names the files by the names
    they would have had (``out/...``), never the temporary folder, which is removed."""
    try:
        load_goldset(tmp / GOLDSET_FILE)
    except RulegaugeError as exc:
        problems = exc.problems if isinstance(exc, ValidationError) else (Problem(str(out), str(exc)),)
        named = [Problem(p.where.replace(str(tmp), str(out)), p.message.replace(str(tmp), str(out)))
                 for p in problems]
        raise ValidationError(named, summary=f"cannot import: the gold set it would write does not "
                              f"load, so nothing was written to {out}") from None


def _questions(c: Collection, where: dict[str, tuple[str, int]], problems: list[Problem]) -> list[Draft]:
    """One draft per query, in the order the qrels first name them; refs, query ids and
    the number of relevant documents a query (:data:`MAX_REQUIREMENTS`) checked."""
    drafts: dict[str, Draft] = {}
    seen: set[tuple[str, str]] = set()
    first: dict[str, str] = {}
    bad_ids: set[str] = set()
    for qid, doc_id, grade, at in c.qrels:
        if qid not in first:  # checked once, named at its first line
            first[qid] = at
            if (bad := id_problem("query id", qid)) is not None:
                problems.append(Problem(at, bad))
                bad_ids.add(qid)
        if qid in bad_ids:
            continue
        if qid not in c.queries:
            problems.append(Problem(at, f"query {qid!r} is not in {c.queries_file.name}"))
            continue
        if doc_id not in where:
            problems.append(Problem(at, f"document {doc_id!r} is not in {c.corpus.name}"))
            continue
        if (qid, doc_id) in seen:
            problems.append(Problem(at, f"query {qid!r} judges document {doc_id!r} twice"))
            continue
        seen.add((qid, doc_id))
        shard, page = where[doc_id]
        d = drafts.setdefault(qid, (qid, c.queries[qid], [], []))
        if grade >= 1:
            d[2].append((f"{shard}#{page}", grade))
        else:
            d[3].append(f"{shard}#{page}")
    problems += [Problem(first[qid], f"query {qid!r} has {len(d[2]):,} relevant documents, above the "
                         f"limit of {MAX_REQUIREMENTS:,} requirements a question")
                 for qid, d in drafts.items() if len(d[2]) > MAX_REQUIREMENTS]
    return list(drafts.values())


def _draft(d: Draft, language: str) -> DraftQuestion:
    qid, text, graded, zero = d
    judged = tuple(PageJudgment(ref.split("#")[0], int(ref.split("#")[1]), 0, "human", "qrels")
                   for ref in zero)
    return DraftQuestion(qid, text, language, tuple((ref,) for ref, _ in graded), judged=judged,
                         grades=tuple((ref, g) for ref, g in graded if g != 1))
