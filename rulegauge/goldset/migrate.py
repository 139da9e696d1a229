"""``rulegauge goldset migrate OLD --document ID=NEW_FILE -o NEW``: a gold set carried to a new edition.

Each migrated document's old and new pages are aligned by content
(:mod:`rulegauge.goldset.align`), and every page label ``doc#page`` of a question is
carried to the new page that now holds it, or *flagged*; a label is never guessed:

* the old page is ``kept`` or ``moved`` whole onto one new page: carried there, with the
  page's containment as confidence, unless its answering sentence (below) changed
  (errata reflowed into the rules): flagged ``changed``;
* the page was ``split`` (or ``changed``): the answering sentence decides: carried to
  the one part that holds it whole; flagged when no sentence is known, the sentence is
  on no part whole (changed or broken across pages), or the sentences tied for best lie
  on different parts;
* ``duplicated`` (two new pages each hold it whole) and ``removed`` pages: flagged.

The *answering sentence* of a (question, label) is the gold set's own quote where it has
one (the ``answer`` a reviewed proposal kept, ``provenance.questions`` of ``goldset
accept``), else the old page's sentence sharing the most stemmed terms with the
question and its reference facts (at least ``MIN_TERMS``); sentences within one term
of the best count as tied. A carried label's confidence is the containment that carried
it (page or sentence), and a label is carried only at ``min_confidence`` (default 0.8)
or more. Labels on documents not migrated are carried unchanged (confidence 1).

A question is carried when every one of its labels is; otherwise it is *held out* of the
new version (left out, never half-migrated), listed with the reason, and its flagged
labels' candidate pages go to a review file. Reviewers' judgments of those candidates
(``rulegauge judge`` on the review file, then ``--review``) carry a flagged label to the
candidates graded 2 or more (people's grades first, lower median); graded lower, it
stays held out; a review row that reviews nothing of this migration (an unknown or
unflagged question, a page not of the new edition or not offered) is refused, by line
(:func:`rulegauge.goldset.relabel.review_problems`). A new edition with no text (no page
holding a character) is refused before anything is aligned. ``judged:`` entries on
migrated documents are carried where their page moved whole, and dropped otherwise
(unjudged, not wrongly judged).

The new file carries ``provenance:`` (``migrated_by``): the source gold set's path and
SHA-256, the method and its version and thresholds, each migrated document's old and new
path, SHA-256, page counts, page alignment and inserted pages, every label's old page,
new page(s), confidence and how, the held-out questions, and the review applied; a
source provenance is kept under ``previous``. :func:`migration_summary` is what a run
records of it, and what ``compare`` and ``gate`` check a baseline against
(:mod:`rulegauge.regression.pairing`). Only physical-page gold sets are migrated.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

from rulegauge.core import atomic
from rulegauge.core.errors import Problem, RulegaugeError, ValidationError
from rulegauge.core.text import Tokenizer
from rulegauge.corpus.records import DocumentSpec, page_key, split_page_key
from rulegauge.goldset import align as al
from rulegauge.goldset import editions
from rulegauge.goldset.parse import load_goldset
from rulegauge.goldset.records import GoldSet
from rulegauge.goldset.relabel import (
    DEFAULT_MIN_CONFIDENCE,
    MIN_TERMS,
    STOPWORDS,
    DocumentMigration,
    LabelMove,
    apply_review,
    move_label,
    quotes,
    read_review,
    review_problems,
    texts,
)

MIGRATED_BY = "rulegauge goldset migrate"


@dataclass(frozen=True)
class Migration:
    path: Path
    source: GoldSet
    documents: tuple[DocumentMigration, ...]
    labels: tuple[LabelMove, ...]
    held_out: tuple[tuple[str, str], ...]
    """(question id, reason) of the questions left out of the new version."""
    carried: int
    reviewed: int = 0

    @property
    def flagged(self) -> tuple[LabelMove, ...]:
        return tuple(m for m in self.labels if not m.carried)


def parse_documents(values: Sequence[str]) -> dict[str, Path]:
    """``ID=NEW_FILE`` options -> {id: path}; malformed or repeated ones raise (exit 2)."""
    out: dict[str, Path] = {}
    problems = []
    for v in values:
        doc, sep, path = (x.strip() for x in v.partition("="))
        if not sep or not doc or not path:
            problems.append(Problem("--document", f"expected ID=NEW_FILE, got {v!r}"))
        elif doc in out:
            problems.append(Problem("--document", f"document {doc!r} given twice"))
        else:
            out[doc] = Path(path)
    if problems:
        raise ValidationError(problems, "bad options")
    return out


def _ref_data(ref: Any, new: str) -> Any:
    return {**ref, "ref": new} if isinstance(ref, dict) else new


def _requirements(raw_pages: list[Any], moves: Mapping[str, LabelMove]) -> list[Any] | None:
    """The question's ``pages:`` with every ref carried; None when two requirements now
    share a page (merged pages: the question is held out)."""
    out: list[Any] = []
    seen: set[str] = set()
    for req in raw_pages:
        alts = req if isinstance(req, list) else [req]
        new_alts: list[Any] = []
        mine: set[str] = set()
        for ref in alts:
            old = ref["ref"] if isinstance(ref, dict) else str(ref)
            for n in moves[old].new:
                if n not in mine:
                    mine.add(n)
                    new_alts.append(_ref_data(ref, n))
        if mine & seen:
            return None
        seen |= mine
        out.append(new_alts if len(new_alts) > 1 or isinstance(req, list) else new_alts[0])
    return out


def _f(x: Fraction | None) -> float | None:
    return None if x is None else round(float(x), 3)


@dataclass(frozen=True)
class _Written:
    """What the provenance of a migration says: its inputs and its outcome."""

    gold: Path
    out: Path
    goldset: GoldSet
    docs: Sequence[DocumentMigration]
    labels: Sequence[LabelMove]
    held: Sequence[tuple[str, str]]
    min_conf: Fraction
    review: Path | None


def _provenance(w: _Written, raw: Mapping[str, Any]) -> dict[str, Any]:
    gold, out, goldset, docs, labels, held, min_conf, review = (
        w.gold, w.out, w.goldset, w.docs, w.labels, w.held, w.min_conf, w.review)
    def rel(p: Path | str) -> str:
        return os.path.relpath(Path(p).resolve(), out.parent.resolve())

    prov: dict[str, Any] = {
        "migrated_by": MIGRATED_BY,
        "source": {"path": rel(gold), "goldset": goldset.name, "sha256": goldset.sha256},
        "method": {"name": al.METHOD, "version": al.METHOD_VERSION, "shingle": al.SHINGLE,
                   "part": str(al.PART), "whole": str(al.WHOLE), "min_confidence": str(min_conf),
                   "min_terms": MIN_TERMS},
        "documents": [{
            "id": d.doc_id,
            "old": {"path": rel(d.old_path), "sha256": d.old_sha256, "pages": d.alignment.old_pages},
            "new": {"path": rel(d.new_path), "sha256": d.new_sha256, "pages": d.alignment.new_pages},
            "pages": [{"old": p.old_page, "kind": p.kind,
                       "new": [[j, _f(c)] for j, c in p.parts], "coverage": _f(p.coverage)}
                      for p in d.alignment.pages],
            "inserted": list(d.alignment.inserted),
            **({"aligned_by": dict(d.aligned_by), "note": d.note} if d.note else {})} for d in docs],
        "labels": [{"question": m.question_id, "old": m.old, "new": list(m.new),
                    "confidence": _f(m.confidence), "how": m.how,
                    **({"flag": m.flag, "candidates": list(m.candidates)} if m.flag else {})}
                   for m in labels],
        "held_out": [{"question": q, "reason": r} for q, r in held]}
    if review is not None:
        from rulegauge.core.digest import file_sha256

        prov["review"] = {"path": rel(review), "sha256": file_sha256(review)}
    if "provenance" in raw:
        prov["previous"] = raw["provenance"]
    return prov


def migrate(gold: Path | str, documents: Mapping[str, Path], out: Path | str, *,
            allow_outside: bool = False, min_confidence: Fraction = DEFAULT_MIN_CONFIDENCE,
            review: Path | None = None) -> Migration:
    """Write ``out``: ``gold`` carried to the new files of ``documents`` (module docstring).
    Raises one :class:`ValidationError` with every input problem before anything is written."""
    gold, out = Path(gold), Path(out)
    goldset = load_goldset(gold, allow_outside=allow_outside)
    specs = {d.doc_id: d for d in goldset.documents}
    problems = [Problem("--document", f"unknown document {d!r}; documents: {', '.join(specs)}")
                for d in documents if d not in specs]
    problems += [Problem("--document", f"{d}: file not found: {p}") for d, p in documents.items()
                 if d in specs and not p.is_file()]
    if goldset.page_basis != "physical":
        problems.append(Problem(str(gold), "only gold sets on physical pages can be migrated "
                                "(this one has pages: label)"))
    if not documents:
        problems.append(Problem("--document", "name at least one document: ID=NEW_FILE"))
    if out.resolve() == gold.resolve():
        problems.append(Problem(str(out), "the new version must be a new file (-o), not GOLD"))
    if problems:
        raise ValidationError(problems, "cannot migrate this gold set")
    docs: dict[str, DocumentMigration] = {}
    empty: list[Problem] = []
    for d, new_path in documents.items():
        spec = specs[d]
        old_texts, old_sha = texts(spec)
        new_spec = DocumentSpec(d, str(new_path.resolve()), spec.kind, spec.game, spec.edition,
                                spec.language, spec.title, spec.options)
        new_texts, new_sha = texts(new_spec)
        if not any(t.strip() for t in new_texts):
            empty.append(Problem("--document", f"{d}: {new_path} has no text ({len(new_texts)} "
                                 "page(s), none with text): no label can be carried to it; is it "
                                 "the right file (a scanned PDF needs OCR first)?"))
            continue
        if old_sha == new_sha:
            raise ValidationError([Problem("--document", f"{d}: {new_path} is the same file as "
                                           "the gold set's (same SHA-256): nothing to migrate")])
        docs[d] = DocumentMigration(d, spec.path, str(new_path), old_sha, new_sha, old_texts,
                                    new_texts, al.align(old_texts, new_texts))
    if empty:
        raise ValidationError(empty, "the new edition has no text")
    docs = {d: editions.realign(dm) for d, dm in docs.items()}  # no shared text (another language?)
    quoted = quotes(goldset)
    stems = {d: Tokenizer(stem_language=specs[d].language, min_len=2, stopwords=STOPWORDS) for d in docs}
    where = {d: editions.locator(dm) for d, dm in docs.items()}
    reviewed = read_review(review, goldset) if review is not None else {}
    moves: dict[tuple[str, str], LabelMove] = {}
    asked: dict[str, list[str]] = {}  # question -> candidates of its flagged labels
    for q in goldset.questions:
        for ref in dict.fromkeys(str(r) for req in q.requirements for r in req):
            doc, _ = split_page_key(ref)
            if doc not in docs:
                m = LabelMove(q.question_id, ref, (ref,), Fraction(1), "document unchanged")
            else:
                m = move_label(q, ref, docs[doc], quoted, stems[doc], where[doc], min_confidence)
                if m.flag:
                    asked.setdefault(q.question_id, []).extend(m.candidates)
                if m.flag and reviewed:
                    m = apply_review(m, reviewed)
            moves[(q.question_id, ref)] = m
    unused = review_problems(reviewed, asked, set(goldset.question_by_id),
                             {d: len(dm.new_texts) for d, dm in docs.items()})
    if unused:
        raise ValidationError(unused, f"{review}: review rows that review nothing of this migration")
    raw = yaml.safe_load(gold.read_text(encoding="utf-8-sig"))  # validated above: safe to load
    for d in raw["documents"]:
        full = Path(docs[d["id"]].new_path) if d["id"] in docs else gold.parent / d["path"]
        d["path"] = os.path.relpath(full.resolve(), out.parent.resolve())
    held: list[tuple[str, str]] = []
    kept_questions = []
    dropped_judged = 0
    by_id = goldset.question_by_id
    for item in raw["questions"]:
        q = by_id[str(item["id"])]
        mine = {old: m for (qid, old), m in moves.items() if qid == q.question_id}
        flagged = [m for m in mine.values() if not m.carried]
        if flagged:
            held.append((q.question_id, "; ".join(f"{m.old}: {m.flag}" for m in flagged)))
            continue
        pages = _requirements(list(item.get("pages") or []), mine)
        if pages is None:
            held.append((q.question_id, "two of its requirements now fall on one page (pages merged)"))
            continue
        item["pages"] = pages
        if item.get("judged"):
            kept_j = []
            for j in item["judged"]:
                doc, page = split_page_key(str(j["ref"]))
                if doc not in docs:
                    kept_j.append(j)
                    continue
                pa = docs[doc].alignment.of(page)
                if pa.kind in ("kept", "moved"):
                    kept_j.append({**j, "ref": page_key(doc, pa.whole[0])})
                else:
                    dropped_judged += 1
            item["judged"] = kept_j
            if not kept_j:
                del item["judged"]
        kept_questions.append(item)
    if not kept_questions:
        raise RulegaugeError(f"{gold}: no question could be carried to the new edition; nothing "
                             "written (every one is held out: " + "; ".join(f"{q}: {r}" for q, r in held[:5])
                             + (" ..." if len(held) > 5 else "") + ")")
    raw["questions"] = kept_questions
    labels = list(moves.values())
    raw["provenance"] = _provenance(_Written(gold, out, goldset, list(docs.values()), labels, held,
                                             min_confidence, review), raw)
    if dropped_judged:
        raw["provenance"]["judged_dropped"] = dropped_judged
    text = yaml.safe_dump(raw, allow_unicode=True, sort_keys=False, width=100)
    header = (f"# {out.name}: {gold.name} carried to a new edition of "
              f"{', '.join(docs)} by `{MIGRATED_BY}` (see provenance:)\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(out, header + text)
    try:
        load_goldset(out, allow_outside=True)
    except ValidationError:
        out.unlink(missing_ok=True)
        raise
    by_review = sum(1 for m in labels if m.how.startswith("reviewed by") and m.carried)
    return Migration(out, goldset, tuple(docs.values()), tuple(labels), tuple(held),
                     len(kept_questions), by_review)


def migration_summary(goldset: Any) -> dict[str, Any] | None:
    """What a run records of a migrated gold set (``manifest.goldset.migration``): the
    source gold set's SHA-256, each migrated document's old and new SHA-256, the method,
    the held-out questions and the labels carried to another page; None for a gold set
    ``goldset migrate`` did not write."""
    prov = (getattr(goldset, "extra", None) or {}).get("provenance")
    if not isinstance(prov, dict) or prov.get("migrated_by") != MIGRATED_BY:
        return None
    src, method = prov.get("source") or {}, prov.get("method") or {}
    held = {str(h.get("question")) for h in prov.get("held_out") or [] if isinstance(h, dict)}
    return {"source": src.get("goldset"), "source_sha256": src.get("sha256"),
            "method": method.get("name"), "method_version": method.get("version"),
            "documents": {str(d.get("id")): {"old_sha256": (d.get("old") or {}).get("sha256"),
                                             "new_sha256": (d.get("new") or {}).get("sha256")}
                          for d in prov.get("documents") or [] if isinstance(d, dict)},
            "held_out": sorted(held),
            # question + old page -> new page, where a label was carried to another page
            "labels": {f"{x.get('question')} {x.get('old')}": " ".join(x.get("new") or [])
                       for x in prov.get("labels") or [] if isinstance(x, dict)
                       and str(x.get("question")) not in held
                       and not x.get("flag") and list(x.get("new") or []) != [x.get("old")]}}
