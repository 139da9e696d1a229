"""Write v1 gold-set YAML (for gold sets imported from qrels or derived from structure).

Document paths are written relative to the output file, as the format requires.
Callers validate what was written by loading it back with
:func:`rulegauge.goldset.parse.load_goldset` (``rulegauge.interop.qrels`` and ``rulegauge.goldset.derive`` do).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rulegauge.core import atomic
from rulegauge.goldset.judged import judged_entries
from rulegauge.goldset.records import PageJudgment


@dataclass(frozen=True)
class DraftQuestion:
    question_id: str
    question: str
    language: str
    requirements: tuple[tuple[str, ...], ...]  # each requirement: alternatives "doc#page"
    tags: tuple[str, ...] = ()
    judged: tuple[PageJudgment, ...] = ()
    """Explicit judgments, written as the question's ``judged:`` list (physical refs)."""
    extra: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    grades: tuple[tuple[str, int], ...] = ()
    """(ref, grade) of graded refs: written as ``{ref, grade}`` (other refs have grade 1)."""


def write_goldset(path: Path, name: str, description: str, documents: Sequence[dict[str, Any]],
                  questions: Sequence[DraftQuestion], *, derived: bool = False,
                  page_basis: str = "physical", header: str = "") -> Path:
    """Write a gold set; ``documents`` are dicts with an absolute or cwd-relative ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    docs = []
    for d in documents:
        dd = dict(d)
        dd["path"] = os.path.relpath(Path(dd["path"]).resolve(), path.parent.resolve())
        docs.append(dd)
    qs = []
    for q in questions:
        grade = dict(q.grades)
        refs = [[{"ref": ref, "grade": grade[ref]} if grade.get(ref, 1) != 1 else ref for ref in r]
                for r in q.requirements]
        reqs: list[Any] = [r if len(r) > 1 else r[0] for r in refs]
        item: dict[str, Any] = {"id": q.question_id, "language": q.language, "question": q.question,
                                "pages": reqs}
        if q.tags:
            item["tags"] = list(q.tags)
        item.update(q.extra)
        if q.judged:
            item["judged"] = judged_entries(q.judged)
        qs.append(item)
    body: dict[str, Any] = {"goldset": name, "version": 1, "description": description}
    if page_basis != "physical":
        body["pages"] = page_basis
    if derived:
        body["derived"] = True
    body["documents"] = docs
    body["questions"] = qs
    text = yaml.safe_dump(body, allow_unicode=True, sort_keys=False, width=120)
    comment = "".join(f"# {line}\n" for line in header.splitlines()) if header else ""
    atomic.write_text(path, comment + text)
    return path
