"""Reviewing generated questions: accept, edit or reject each proposal, saved as made.

A review session serves one proposals file (:mod:`rulegauge.judging.proposals`) to any
number of reviewers. Each decision is appended to the decisions file the moment it is
made (one line, one ``write`` with ``O_APPEND``, then ``fsync``), so a session stopped
at any point resumes where each reviewer left off. A decision line::

    {"proposal_id": "bw-rules.p3.en.1", "decision": "edit", "question": "...",
     "answer": "...", "reviewer": "ann", "time": "2026-12-01T14:02:07Z",
     "seconds": 6.2, "proposals_sha256": "..."}

``accept`` keeps the proposal's question and answer; ``edit`` stores the reviewer's
question and answer sentence (the answer must still occur in the page,
:func:`rulegauge.judging.answer_match.locate`, and the page's wording of it is kept; an
edit that changes nothing is an ``accept``); ``reject`` drops it. *Skip* sets a
proposal aside for this reviewer until nothing else is left (not saved). One reviewer
deciding one proposal twice is refused; decisions of another proposals file (another
SHA-256) or of unknown proposals are reported with ``file:line`` before serving.
"""

from __future__ import annotations

import datetime as dt
import statistics
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rulegauge.core.errors import Problem, ValidationError
from rulegauge.core.jsonl import append_line, read_file_records
from rulegauge.judging.answer_match import locate, page_wording
from rulegauge.judging.proposals import Proposal, ProposalSet
from rulegauge.judging.session import JudgingError, Session

DECISIONS = ("accept", "edit", "reject")


@dataclass(frozen=True)
class Decision:
    proposal_id: str
    decision: str
    question: str
    answer: str
    reviewer: str
    time: str = ""
    seconds: float | None = None
    proposals_sha256: str = ""
    where: str = ""


def decision_row(d: Decision) -> dict[str, Any]:
    return {"proposal_id": d.proposal_id, "decision": d.decision, "question": d.question,
            "answer": d.answer, "reviewer": d.reviewer, "time": d.time, "seconds": d.seconds,
            "proposals_sha256": d.proposals_sha256}


def append_decision(path: Path, d: Decision) -> None:
    """One line, one write with O_APPEND, then fsync (a killed session loses nothing)."""
    append_line(path, decision_row(d))


def read_decisions(path: Path, *, missing_ok: bool = False) -> list[Decision]:
    """Every decision of a decisions file; one ValidationError with every bad line."""
    if missing_ok and not Path(path).exists():
        return []
    problems: list[Problem] = []
    records = read_file_records(path, problems, "decisions")
    out = []
    for r in records:
        rec = r.record
        bad = [k for k in ("proposal_id", "decision", "question", "answer", "reviewer")
               if not isinstance(rec.get(k), str)]
        if bad:
            problems.append(Problem(r.where, f"{', '.join(bad)} missing or not text"))
        elif rec["decision"] not in DECISIONS:
            problems.append(Problem(r.where, f"decision {rec['decision']!r}; one of "
                                    + ", ".join(DECISIONS)))
        else:
            secs = rec.get("seconds")
            out.append(Decision(rec["proposal_id"], rec["decision"], rec["question"],
                                rec["answer"], rec["reviewer"], str(rec.get("time") or ""),
                                float(secs) if isinstance(secs, int | float) else None,
                                str(rec.get("proposals_sha256") or ""), r.where))
    if problems:
        raise ValidationError(problems, f"{path}: invalid decisions")
    return out


def check_decisions(found: ProposalSet, decisions: list[Decision], source: str) -> None:
    """Decisions must be of this proposals file: known ids, its SHA-256, one per reviewer."""
    ids = {p.proposal_id for p in found.proposals}
    seen: dict[tuple[str, str], str] = {}
    problems = []
    for d in decisions:
        if d.proposal_id not in ids:
            problems.append(Problem(d.where, f"proposal {d.proposal_id} is not in {source}"))
        elif d.proposals_sha256 and d.proposals_sha256 != found.sha256:
            problems.append(Problem(d.where, f"decided on another proposals file than {source}"))
        elif (d.reviewer, d.proposal_id) in seen:
            problems.append(Problem(d.where, f"{d.reviewer} decided {d.proposal_id} twice "
                                    f"(first at {seen[(d.reviewer, d.proposal_id)]})"))
        else:
            seen[(d.reviewer, d.proposal_id)] = d.where
    if problems:
        raise ValidationError(problems, f"decisions of another proposals file than {source}")


class ReviewSession:
    """Thread-safe state of one review session (module docstring)."""

    def __init__(self, proposals: ProposalSet, decisions_path: Path) -> None:
        self.proposals, self.path = proposals, Path(decisions_path)
        self.items: list[Proposal] = list(proposals.proposals)
        self.by_id = {p.proposal_id: p for p in self.items}
        self._lock = threading.Lock()
        self.done: dict[str, dict[str, Decision]] = {}
        self.skipped: dict[str, set[str]] = {}
        found = read_decisions(self.path, missing_ok=True)
        check_decisions(proposals, found, proposals.path or "the proposals")
        for d in found:
            self.done.setdefault(d.reviewer, {})[d.proposal_id] = d

    def next_item(self, reviewer: str) -> int | None:
        """The reviewer's next proposal: first undecided and not skipped, else the first
        skipped (its skip forgotten); None when every proposal is decided."""
        Session.check_judge(reviewer)
        with self._lock:
            done, skipped = self.done.get(reviewer, {}), self.skipped.setdefault(reviewer, set())
            for i, p in enumerate(self.items):
                if p.proposal_id not in done and p.proposal_id not in skipped:
                    return i
            for i, p in enumerate(self.items):
                if p.proposal_id in skipped:
                    skipped.discard(p.proposal_id)
                    return i
        return None

    def _proposal(self, proposal_id: str) -> Proposal:
        if proposal_id not in self.by_id:
            raise JudgingError(f"proposal {proposal_id!r} is not in this file")
        return self.by_id[proposal_id]

    def decide(self, reviewer: str, proposal_id: str, decision: str, *,
               question: str | None = None, answer: str | None = None,
               seconds: float | None = None) -> Decision:
        """Record one decision; appended to the decisions file before this returns."""
        Session.check_judge(reviewer)
        p = self._proposal(proposal_id)
        if decision not in DECISIONS:
            raise JudgingError(f"decision must be one of {', '.join(DECISIONS)}, got {decision!r}")
        q, a = p.question, p.answer
        if decision == "edit":
            q = " ".join(str(question or "").split())
            if not q:
                raise JudgingError("an edited question cannot be empty")
            m = locate(str(answer or ""), self.proposals.page(p).text)
            if m is None:
                raise JudgingError(f"the answer sentence is not on page {p.page_key} (it must "
                                   "be copied from the page)")
            a = page_wording(self.proposals.page(p).text, m)
            decision = "edit" if (q, a) != (p.question, p.answer) else "accept"
        when = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
        d = Decision(proposal_id, decision, q, a, reviewer, when,
                     None if seconds is None else round(max(float(seconds), 0.0), 3),
                     self.proposals.sha256)
        with self._lock:
            if proposal_id in self.done.get(reviewer, {}):
                raise JudgingError(f"{reviewer} already decided {proposal_id}")
            append_decision(self.path, d)
            self.done.setdefault(reviewer, {})[proposal_id] = d
            self.skipped.setdefault(reviewer, set()).discard(proposal_id)
        return d

    def skip(self, reviewer: str, proposal_id: str) -> None:
        Session.check_judge(reviewer)
        self._proposal(proposal_id)
        with self._lock:
            self.skipped.setdefault(reviewer, set()).add(proposal_id)

    def progress(self, reviewer: str) -> dict[str, Any]:
        with self._lock:
            done = self.done.get(reviewer, {})
            times = [d.seconds for d in done.values() if d.seconds is not None]
            kinds = Counter(d.decision for d in done.values())
            return {"judge": reviewer, "done": len(done), "total": len(self.items),
                    "skipped": len(self.skipped.get(reviewer, set())),
                    **{k: kinds.get(k, 0) for k in DECISIONS},
                    "mean_seconds": statistics.fmean(times) if times else None,
                    "median_seconds": statistics.median(times) if times else None}
