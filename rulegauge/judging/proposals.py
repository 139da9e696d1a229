"""Proposal files: what ``rulegauge goldset generate`` writes and the review page serves.

JSON lines. Line 1 is the header (provenance and the run's counts), then each page
that yielded proposals followed by its proposals::

    {"proposals": 1, "generator": {"kind": "rules", "id": "rules-v1", "answerer":
     "extractive", "model": "rules-v1", "prompt": null, "seed": 0, "per_page": 3},
     "languages": ["en"], "documents": [{"id": "bw-rules", "path": "/abs/rules.txt",
     "sha256": "...", "kind": "rulebook", "game": "...", "edition": "en-1",
     "language": "en", "title": "..."}], "dedup": {"rule": "...", "threshold": "4/5"},
     "counts": {"pages_read": 12, "empty_pages": 2, "proposals": 20, ...}}
    {"type": "page", "doc_id": "bw-rules", "page": 3, "text": "..."}
    {"type": "proposal", "id": "bw-rules.p3.en.1", "doc_id": "bw-rules", "page": 3,
     "heading": ["Setup"], "language": "en", "question": "...", "answer": "...",
     "start": 120, "end": 171, "match": "exact", "rule": "count"}

``answer`` is the page's own wording of the answering sentence, ``text[start:end]``
of its page with whitespace collapsed; ``heading`` is the chunker's heading path at
that place. Reading reports every problem with ``file:line`` (bad JSON, no header,
missing or mistyped keys, a proposal before its page, an id given twice, offsets
outside the page).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rulegauge.core import atomic
from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import Problem, ValidationError
from rulegauge.core.jsonl import dumps_lines, read_file_records

PROPOSALS_VERSION = 1


@dataclass(frozen=True)
class ProposalPage:
    doc_id: str
    page: int
    text: str

    @property
    def key(self) -> str:
        return f"{self.doc_id}#{self.page}"


@dataclass(frozen=True)
class Proposal:
    """A generated question, the page it came from and the sentence that answers it."""

    proposal_id: str
    doc_id: str
    page: int
    heading: tuple[str, ...]
    language: str
    question: str
    answer: str
    start: int
    end: int
    match: str
    """``exact`` or ``fuzzy`` (:mod:`rulegauge.judging.answer_match`)."""
    rule: str
    """The rule that made it (rule-based generator), or ``llm``."""

    @property
    def page_key(self) -> str:
        return f"{self.doc_id}#{self.page}"


@dataclass(frozen=True)
class ProposalSet:
    header: dict[str, Any]
    pages: tuple[ProposalPage, ...]
    proposals: tuple[Proposal, ...]
    path: str = ""
    sha256: str = field(default="", compare=False)

    def page(self, proposal: Proposal) -> ProposalPage:
        return next(p for p in self.pages if (p.doc_id, p.page) == (proposal.doc_id,
                                                                    proposal.page))


def proposal_row(p: Proposal) -> dict[str, Any]:
    return {"type": "proposal", "id": p.proposal_id, "doc_id": p.doc_id, "page": p.page,
            "heading": list(p.heading), "language": p.language, "question": p.question,
            "answer": p.answer, "start": p.start, "end": p.end, "match": p.match,
            "rule": p.rule}


def write_proposals(found: ProposalSet, path: Path | str) -> Path:
    """Write ``found`` atomically (module docstring's layout); pages without a proposal
    are left out."""
    lines: list[dict[str, Any]] = [{"proposals": PROPOSALS_VERSION, **found.header}]
    for page in found.pages:
        mine = [p for p in found.proposals if (p.doc_id, p.page) == (page.doc_id, page.page)]
        if mine:
            lines.append({"type": "page", "doc_id": page.doc_id, "page": page.page,
                          "text": page.text})
            lines += [proposal_row(p) for p in mine]
    return atomic.write_text(path, dumps_lines(lines))


def is_proposals_file(path: Path | str) -> bool:
    """Whether the first line of ``path`` is a proposals header."""
    try:
        with open(path, encoding="utf-8") as fh:
            first = fh.readline()
        head = json.loads(first)
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(head, dict) and "proposals" in head


_PROPOSAL_KEYS: dict[str, type | tuple[type, ...]] = {
    "id": str, "doc_id": str, "page": int, "heading": list, "language": str, "question": str,
    "answer": str, "start": int, "end": int, "match": str, "rule": str}


def _check(rec: dict[str, Any], keys: dict[str, type | tuple[type, ...]], where: str,
           problems: list[Problem]) -> bool:
    bad = [k for k, t in keys.items() if not isinstance(rec.get(k), t)
           or isinstance(rec.get(k), bool)]
    problems += [Problem(where, f"{k!r} missing or of the wrong type") for k in bad]
    return not bad


def read_proposals(path: Path | str) -> ProposalSet:
    """Read a proposals file; one :class:`ValidationError` with every problem."""
    problems: list[Problem] = []
    records = read_file_records(path, problems, "proposals")
    if not records or "proposals" not in records[0].record:
        raise ValidationError([*problems, Problem(f"{path}:1", "not a proposals file (its first "
                               "line must be the header written by rulegauge goldset generate)")],
                              f"{path}: invalid proposals")
    head = dict(records[0].record)
    if head.pop("proposals") != PROPOSALS_VERSION:
        problems.append(Problem(records[0].where, f"proposals version; rulegauge reads "
                                f"version {PROPOSALS_VERSION}"))
    _check(head, {"generator": dict, "languages": list, "documents": list, "counts": dict},
           records[0].where, problems)
    pages: dict[tuple[str, int], ProposalPage] = {}
    out: list[Proposal] = []
    seen: dict[str, str] = {}
    for r in records[1:]:
        rec, where = r.record, r.where
        if rec.get("type") == "page":
            if _check(rec, {"doc_id": str, "page": int, "text": str}, where, problems):
                pages[(rec["doc_id"], rec["page"])] = ProposalPage(rec["doc_id"], rec["page"],
                                                                   rec["text"])
        elif rec.get("type") == "proposal":
            if not _check(rec, _PROPOSAL_KEYS, where, problems):
                continue
            page = pages.get((rec["doc_id"], rec["page"]))
            if page is None:
                problems.append(Problem(where, f"proposal {rec['id']}: its page "
                                        f"{rec['doc_id']}#{rec['page']} must come first"))
            elif rec["id"] in seen:
                problems.append(Problem(where, f"proposal id {rec['id']} given twice (first at "
                                        f"{seen[rec['id']]})"))
            elif not 0 <= rec["start"] < rec["end"] <= len(page.text):
                problems.append(Problem(where, f"proposal {rec['id']}: answer offsets outside "
                                        "its page"))
            else:
                seen[rec["id"]] = where
                out.append(Proposal(rec["id"], rec["doc_id"], rec["page"],
                                    tuple(str(h) for h in rec["heading"]), rec["language"],
                                    rec["question"], rec["answer"], rec["start"], rec["end"],
                                    rec["match"], rec["rule"]))
        else:
            problems.append(Problem(where, f"unknown line type {rec.get('type')!r} "
                                    "(page or proposal)"))
    if problems:
        raise ValidationError(problems, f"{path}: invalid proposals")
    return ProposalSet(head, tuple(pages.values()), tuple(out), str(path), file_sha256(path))
