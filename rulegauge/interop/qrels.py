"""Build a gold set from judgements: a qrels file plus a questions file.

* qrels: ``qid 0 docid relevance`` with ``docid`` a page id ``doc#page``; every
  line with relevance > 0 makes that page a requirement of its own (plain qrels
  carry no "any of" structure). The requirements form written by ``rulegauge
  export`` (``qrels-requirements.txt``) has query ids ``<qid>::<n>``: the pages
  of ``<qid>::<n>`` become requirement n of ``<qid>``, any one of them meeting it.
  A question uses one form or the other. Grades are kept as a tag ``grade:<n>``
  on the question when any page has relevance > 1 (the v1 format has no grades).
* questions: TSV ``qid<TAB>question[<TAB>language]`` or JSONL with ``id``,
  ``question``, optional ``language``.
* documents: taken from an existing gold set (``--documents some.yaml``); a docid that
  is a collection's own id (what ``rulegauge export`` writes for an imported collection:
  :mod:`rulegauge.interop.docids`) names that collection document's page.

Questions without any relevant page become unanswerable (``pages: []``).
Unknown question ids in the qrels, and malformed lines, are all reported.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from rulegauge.core.errors import Problem, ValidationError
from rulegauge.core.jsonl import read_records
from rulegauge.corpus.loaders import labels_are_ids, page_labels
from rulegauge.corpus.records import page_key
from rulegauge.goldset.parse import load_goldset
from rulegauge.goldset.write import DraftQuestion, write_goldset
from rulegauge.interop.export import split_requirement_qid
from rulegauge.interop.trec import read_qrels


def read_questions(path: Path, default_language: str = "en") -> list[tuple[str, str, str, int]]:
    """(qid, question, language, line) from TSV or JSONL."""
    out: list[tuple[str, str, str, int]] = []
    problems: list[Problem] = []
    if path.suffix.lower() == ".jsonl":
        for r in read_records(path, problems):
            if "id" not in r.record or "question" not in r.record:
                problems.append(Problem(r.where, "need a JSON object with id and question"))
                continue
            out.append((str(r.record["id"]), str(r.record["question"]),
                        str(r.record.get("language", default_language)), r.line))
    for i, raw in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip() or path.suffix.lower() == ".jsonl":
            continue
        else:
            parts = raw.split("\t")
            if len(parts) < 2 or not parts[1].strip():
                problems.append(Problem(f"{path}:{i}", "expected qid<TAB>question[<TAB>language]"))
                continue
            out.append((parts[0].strip(), parts[1].strip(),
                        parts[2].strip() if len(parts) > 2 else default_language, i))
    if problems:
        raise ValidationError(problems, f"{path}: malformed questions file")
    return out


def collection_pages(documents_from: Path) -> dict[str, str]:
    """A collection's own document id -> its page id ``doc#page``, over the collection
    documents of the gold set ``documents_from`` (loader ``labels_are_ids``): what a TREC
    export of a run over an imported collection writes (:mod:`rulegauge.interop.docids`)
    comes back as the pages it names."""
    out: dict[str, str] = {}
    for spec in load_goldset(documents_from, check_pages=False, allow_outside=True).documents:
        if labels_are_ids(spec):
            for page, label in enumerate(page_labels(spec), start=1):
                if label:
                    out.setdefault(label, page_key(spec.doc_id, page))
    return out


def goldset_from_qrels(qrels: Path, questions: Path, documents_from: Path, out: Path,
                       name: str | None = None) -> Path:
    """Write a v1 gold set built from ``qrels`` + ``questions`` (see module docstring)."""
    qs = read_questions(Path(questions))
    judged = [(*split_requirement_qid(qid), doc, grade, line)
              for qid, doc, grade, line in read_qrels(Path(qrels))]
    src = yaml.safe_load(Path(documents_from).read_text(encoding="utf-8"))
    base = Path(documents_from).parent
    docs = [{**d, "path": str((base / d["path"]).resolve())} for d in src.get("documents", [])]
    doc_ids = {d["id"] for d in docs}
    if any(doc.split("#")[0] not in doc_ids for _, _, doc, _, _ in judged):
        ids = collection_pages(Path(documents_from))  # an export of an imported collection: its own ids
        judged = [(qid, n, ids.get(doc, doc), grade, line) for qid, n, doc, grade, line in judged]
    known = {q[0] for q in qs}
    problems = [Problem(f"{qrels}:{line}", f"question {qid!r} is not in {questions}")
                for qid, _, _, _, line in judged if qid not in known]
    problems += [Problem(f"{qrels}:{line}", f"docid {doc!r} is not a page id of a known document (doc#page)")
                 for _, _, doc, _, line in judged
                 if "#" not in doc or doc.split("#")[0] not in doc_ids or not doc.split("#")[1].isdigit()]
    forms: dict[str, set[bool]] = {}
    for qid, n, _, _, _ in judged:
        forms.setdefault(qid, set()).add(n is None)
    problems += [Problem(str(qrels), f"question {qid!r} mixes plain and '{qid}::<n>' requirement "
                                     "lines; use one form")
                 for qid, f in sorted(forms.items()) if len(f) > 1]
    seen: set[str] = set()
    for qid, _, _, line in qs:
        if qid in seen:
            problems.append(Problem(f"{questions}:{line}", f"duplicate question id {qid!r}"))
        seen.add(qid)
    if problems:
        raise ValidationError(problems, "cannot build a gold set from these judgements")
    rel: dict[str, dict[str, int]] = {}
    groups: dict[str, dict[int, set[str]]] = {}
    for qid, n, doc, grade, _ in judged:
        if grade > 0:
            rel.setdefault(qid, {})[doc] = max(grade, rel.get(qid, {}).get(doc, 0))
            if n is not None:
                groups.setdefault(qid, {}).setdefault(n, set()).add(doc)
    drafts = []
    for qid, text, lang, _ in qs:
        pages = rel.get(qid, {})
        tags = ("from-qrels",) + ((f"grade:{max(pages.values())}",) if pages and max(pages.values()) > 1 else ())
        reqs = (tuple(tuple(sorted(groups[qid][n])) for n in sorted(groups[qid])) if qid in groups
                else tuple((p,) for p in sorted(pages)))
        drafts.append(DraftQuestion(qid, text, lang, reqs, tags))
    return write_goldset(out, name or Path(out).stem, f"Imported from {Path(qrels).name} and {Path(questions).name}.",
                         docs, drafts, header=f"Built by `rulegauge goldset from-qrels` from {Path(qrels).name}.")
