"""``rulegauge goldset accept PROPOSALS DECISIONS -o GOLD``: reviewed proposals -> a gold set.

Every proposal a reviewer accepted or edited becomes a question of a v1 gold set
(:mod:`rulegauge.goldset.records`): id = the proposal id, its language, the (edited)
question, ``pages: [doc#page]`` (the page it came from), tag ``generated``. Rejected and
undecided proposals are left out (and counted). The documents are those of the
proposals file (paths rewritten relative to the new file). The set is marked
``derived: true`` and carries a ``provenance:`` mapping: the generator (kind, id, model,
prompt version and SHA-256), each source document's SHA-256, the proposals and decisions
files' SHA-256, the reviewer, the counts of the generation run, and per question its
page, heading path, answer sentence and decision.

A decisions file holding several reviewers needs ``reviewer`` (which one's decisions
make the set); decisions of another proposals file, or of unknown proposals, are errors
with ``file:line``. The file is written atomically and loaded back (validated with
:func:`rulegauge.goldset.parse.load_goldset`) before this returns; on a problem nothing is
left behind.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rulegauge.core import atomic
from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import Problem, RulegaugeError, ValidationError
from rulegauge.goldset.parse import load_goldset
from rulegauge.judging.proposals import read_proposals
from rulegauge.judging.review import check_decisions, read_decisions


@dataclass(frozen=True)
class Accepted:
    path: Path
    questions: int
    decisions: tuple[tuple[str, int], ...]
    """(decision, count) of the reviewer, plus ``undecided``."""
    reviewer: str


def _reviewer(found: list[Any], reviewer: str | None, source: Path) -> str:
    names = sorted({d.reviewer for d in found})
    if reviewer is not None:
        if reviewer not in names:
            raise RulegaugeError(f"{source}: no decisions by {reviewer!r}; reviewers: "
                               f"{', '.join(names) or '(none)'}")
        return reviewer
    if len(names) != 1:
        raise RulegaugeError(f"{source}: " + ("no decisions" if not names else
                           f"decisions by {len(names)} reviewers ({', '.join(names)}): choose "
                           "one with --reviewer"))
    return str(names[0])


def accept(proposals_path: Path, decisions_path: Path, out: Path, *, name: str | None = None,
           reviewer: str | None = None) -> Accepted:
    """Write the gold set of the accepted proposals (module docstring)."""
    proposals_path, decisions_path, out = Path(proposals_path), Path(decisions_path), Path(out)
    found = read_proposals(proposals_path)
    decisions = read_decisions(decisions_path)
    check_decisions(found, decisions, str(proposals_path))
    who = _reviewer(decisions, reviewer, decisions_path)
    mine = {d.proposal_id: d for d in decisions if d.reviewer == who}
    kept = [(p, mine[p.proposal_id]) for p in found.proposals
            if p.proposal_id in mine and mine[p.proposal_id].decision != "reject"]
    if not kept:
        raise ValidationError([Problem(str(decisions_path), f"{who} accepted no proposal")],
                              "nothing to make a gold set of")
    if out.resolve() in (proposals_path.resolve(), decisions_path.resolve()):
        raise RulegaugeError(f"{out}: the gold set must be a new file")
    head = found.header
    docs = []
    for d in head["documents"]:
        entry = {k: d[k] for k in ("id", "kind", "game", "edition", "language") if k in d}
        entry["path"] = os.path.relpath(Path(d["path"]).resolve(), out.parent.resolve())
        if d.get("title"):
            entry["title"] = d["title"]
        docs.append(entry)
    used = {p.doc_id for p, _ in kept}
    docs = [d for d in docs if d["id"] in used]
    questions = [{"id": p.proposal_id, "language": p.language, "question": d.question,
                  "pages": [p.page_key], "tags": ["generated", d.decision]} for p, d in kept]
    counts = Counter(d.decision for d in mine.values())
    counts["undecided"] = len(found.proposals) - len(mine)
    gen = head["generator"]
    provenance = {
        "generated_by": "rulegauge goldset generate", "accepted_by": "rulegauge goldset accept",
        "generator": {k: gen.get(k) for k in ("kind", "id", "answerer", "provider", "model",
                                              "prompt", "seed", "per_page")},
        "documents": [{"id": d["id"], "sha256": d.get("sha256", "")} for d in head["documents"]
                      if d["id"] in used],
        "proposals": {"path": str(proposals_path), "sha256": found.sha256},
        "decisions": {"path": str(decisions_path), "sha256": file_sha256(decisions_path),
                      "reviewer": who, **{k: counts.get(k, 0) for k in (
                          "accept", "edit", "reject", "undecided")}},
        "generation": head.get("counts", {}),
        "dedup": head.get("dedup", {}),
        "questions": {p.proposal_id: {"page": p.page_key, "heading": list(p.heading),
                                      "answer": d.answer, "decision": d.decision,
                                      "proposed": p.question} for p, d in kept}}
    body = {"goldset": name or out.stem, "version": 1,
            "description": f"{len(kept)} generated questions accepted by {who} "
                           f"({gen.get('id')}; rulegauge goldset generate + accept)",
            "derived": True, "documents": docs, "questions": questions,
            "provenance": provenance}
    text = (f"# {out.name}: generated questions reviewed by {who} (see provenance:)\n"
            + yaml.safe_dump(body, allow_unicode=True, sort_keys=False, width=100))
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(out, text)
    try:
        load_goldset(out, allow_outside=True)
    except ValidationError:
        out.unlink(missing_ok=True)
        raise
    return Accepted(out, len(kept), tuple(sorted(counts.items())), who)
