"""Import a TREC-style collection: topics, graded qrels and a JSONL or TSV corpus.

``rulegauge goldset import-trec TOPICS QRELS --corpus CORPUS -o OUT`` reads:

* TOPICS, either the classic SGML-like format (TREC ad hoc, Robust04, the Web tracks)::

      <top>
      <num> Number: 301
      <title> International Organized Crime
      <desc> Description: ...
      </top>

  one ``<top>`` ... ``</top>`` per topic, the id after ``<num>`` (a leading ``Number:``
  dropped), the query the ``<title>`` field (a leading ``Topic:`` dropped; it may run over
  several lines until the next tag; ``<desc>`` and ``<narr>`` are not read), or a TSV of
  ``qid<TAB>query`` lines (MS MARCO's queries files), told apart by the first non-blank
  character (``<``: SGML);
* QRELS, TREC's ``qid iteration docid relevance`` lines (whitespace-separated, the
  iteration ignored); a relevance >= 1 is the grade, 0 or below (some tracks judge spam
  -2) a judged non-relevant document, bounded by :data:`rulegauge.core.limits.MAX_GRADE`
  either way (:mod:`rulegauge.goldset.grades`);
* CORPUS, BEIR's ``corpus.jsonl`` records (``_id``, ``title``, ``text``:
  :mod:`rulegauge.corpus.collection`) when its name ends in ``.jsonl``, else a TSV of
  ``id<TAB>text`` or ``id<TAB>title<TAB>text`` lines (MS MARCO's ``collection.tsv``; a
  first line whose id is ``id``, ``_id``, ``docid`` or ``pid`` is a header).

and writes OUT as every collection import does (:mod:`rulegauge.goldset.collection_import`:
streamed, bounded memory, corpus files of ``--shard-size`` documents, ``goldset.yaml`` with
graded requirements). Only topics the qrels judge become questions. Every file is UTF-8,
a BOM allowed (:mod:`rulegauge.goldset.import_text`). Problems are named with
``file:line`` and reported together.

Reference: Voorhees and Harman (eds.), "TREC: Experiment and Evaluation in Information
Retrieval", MIT Press 2005 (topic and qrels formats); ``trec_eval``'s qrels reader.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rulegauge.core.errors import Problem, ValidationError
from rulegauge.corpus.collection import CollectionDoc, iter_docs
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

_TAG = re.compile(r"^\s*<(/?)([A-Za-z]+)>\s*(.*)$")
_NUM = re.compile(r"^(number\s*:)?\s*", re.IGNORECASE)
_TOPIC = re.compile(r"^(topic\s*:)?\s*", re.IGNORECASE)
HEADER_IDS = ("id", "_id", "docid", "pid")


@dataclass(frozen=True)
class TrecImport:
    """What to import: topics, qrels and corpus files, the output folder, the documents per
    corpus file, the language, the gold-set name (default: the corpus's folder name)."""

    topics: Path
    qrels: Path
    corpus: Path
    out: Path
    shard_size: int = 50_000
    language: str = "en"
    name: str | None = None


def read_trec_qrels(path: Path, problems: list[Problem]) -> list[Qrel]:
    """(query id, document id, relevance, file:line) of a TREC qrels file."""
    out: list[Qrel] = []
    for n, line in enumerate(read_lines(path, problems), start=1):
        parts = line.split()
        if not parts:
            continue
        where = f"{path}:{n}"
        if len(parts) != 4:
            problems.append(Problem(where, "expected 'qid iteration docid relevance'"))
        elif bad := relevance_problem(parts[3]):
            problems.append(Problem(where, bad))
        else:
            out.append((parts[0], parts[2], int(parts[3]), where))
        stop_at_limit(problems)
    return out


def _sgml_topics(lines: Iterator[tuple[int, str]], path: Path,
                 problems: list[Problem]) -> Iterator[tuple[str, str, str]]:
    """(id, title, file:line) of each ``<top>`` block."""
    start: int | None = None
    num = field = None
    title: list[str] = []
    for n, line in lines:
        m = _TAG.match(line)
        if m is None:
            if field == "title":
                title.append(line.strip())
            continue
        closing, tag, rest = m.group(1), m.group(2).lower(), m.group(3)
        if tag == "top" and not closing:
            if start is not None:
                problems.append(Problem(f"{path}:{start}", "<top> without </top>"))
            start, num, field, title = n, None, None, []
        elif tag == "top":
            where = f"{path}:{start or n}"
            text = " ".join(" ".join(title).split())
            if start is None:
                problems.append(Problem(f"{path}:{n}", "</top> without <top>"))
            elif not num or not text:
                problems.append(Problem(where, "a topic needs a <num> and a non-empty <title>"))
            else:
                yield num, text, where
            start = None
        else:
            field = tag if not closing else None
            if tag == "num" and not closing:
                num = _NUM.sub("", rest).split("<")[0].strip() or None
            elif tag == "title" and not closing:
                title = [_TOPIC.sub("", rest).split("</title>")[0].strip()]
    if start is not None:
        problems.append(Problem(f"{path}:{start}", "<top> without </top>"))


def _tsv_topics(lines: Iterator[tuple[int, str]], path: Path,
                problems: list[Problem]) -> Iterator[tuple[str, str, str]]:
    for n, line in lines:
        if not line.strip():
            continue
        qid, tab, text = line.rstrip("\r\n").partition("\t")
        if not tab or not qid.strip() or not text.strip():
            problems.append(Problem(f"{path}:{n}", "expected qid<TAB>query"))
        else:
            yield qid.strip(), " ".join(text.split()), f"{path}:{n}"


def read_topics(path: Path, wanted: set[str], problems: list[Problem]) -> dict[str, str]:
    """Query id -> text of the topics in ``wanted`` (the judged ones), SGML or TSV."""
    out: dict[str, str] = {}
    numbered = enumerate(read_lines(path, problems), start=1)
    first = next(((n, line) for n, line in numbered if line.strip()), None)
    if first is None:
        return out
    rest = itertools.chain([first], numbered)  # streamed: the file is never all in memory
    read = _sgml_topics if first[1].lstrip().startswith("<") else _tsv_topics
    for qid, text, where in read(rest, path, problems):
        if qid in out:
            problems.append(Problem(where, f"topic {qid!r} appears twice"))
        elif qid in wanted:
            out[qid] = text
        stop_at_limit(problems)
    return out


def tsv_docs(lines: Iterator[str], source: Path, problems: list[Problem]) -> Iterator[CollectionDoc]:
    """Documents of a TSV corpus (module docstring), in file order; bad lines and repeated
    ids appended to ``problems`` with ``source:line``."""
    seen: dict[str, int] = {}
    for n, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        parts = line.split("\t")
        if n == 1 and parts[0].strip().lower() in HEADER_IDS:
            continue
        if len(parts) not in (2, 3) or not parts[0].strip():
            problems.append(Problem(f"{source}:{n}", "expected id<TAB>text or id<TAB>title<TAB>text"))
            continue
        doc_id = parts[0].strip()
        if doc_id in seen:
            problems.append(Problem(f"{source}:{n}", f"id {doc_id!r} appears twice (first on line {seen[doc_id]})"))
            continue
        seen[doc_id] = n
        title, text = (parts[1], parts[2]) if len(parts) == 3 else ("", parts[1])
        yield CollectionDoc(doc_id, title.strip(), text.strip(), n)


def import_trec(job: TrecImport, progress: Progress | None = None) -> Imported:
    """Import ``job``'s files into ``job.out`` (module docstring)."""
    missing = [Problem(str(p), "file not found") for p in (job.topics, job.qrels, job.corpus) if not p.is_file()]
    if missing:
        raise ValidationError(missing, summary="cannot import")
    out = Output(job.out, job.name or job.corpus.resolve().parent.name, job.shard_size, job.language)
    check_output(out)
    problems: list[Problem] = []
    qrels = read_trec_qrels(job.qrels, problems)
    topics = read_topics(job.topics, {q for q, _, _, _ in qrels}, problems)
    docs = iter_docs if job.corpus.name.endswith(".jsonl") else tsv_docs
    return write_collection(Collection(job.corpus, docs, qrels, topics, job.topics, (job.topics, job.qrels),
                                       "import-trec", str(job.corpus.parent), f"topics {job.topics.name}"),
                            out, progress, problems)
