"""``rulegauge goldset merge GOLD JUDGMENTS... -o NEW``: judgments -> a new gold-set version.

Every judgment of the judgments files becomes an entry of its question's ``judged:``
list (:mod:`rulegauge.goldset.judged`), grade 0 included: from then on the page is
*judged non-relevant*, no longer *unjudged*. Everything else of the source file is
kept as it is (questions, requirements, grades, facts, unknown top-level keys);
document paths are rewritten relative to the new file. The new file carries a
``provenance:`` mapping: the source gold set's path and SHA-256, each judgments
file's SHA-256 and row count, the judges (id, kind, judgments) and what the merge
added; a source that had provenance keeps it under ``provenance.previous``.

Conventions: a judgment already in the gold set (same question, page and judge, same
grade) is counted as already present and not repeated, so merging a file twice
changes nothing; the same judge with another grade is a conflict (an error naming
both places). A listed page judged 0 stays listed (the requirement is the gold
author's word) and is reported as a possible gold-set error. The new file is
written atomically and loaded back (validated) before the command succeeds.
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
from rulegauge.core.errors import Problem, ValidationError
from rulegauge.corpus import loaders
from rulegauge.goldset.judged import judged_entries
from rulegauge.goldset.judgments import Judgment, collect_judgments, line_order
from rulegauge.goldset.parse import load_goldset
from rulegauge.goldset.records import GoldSet, PageJudgment


@dataclass(frozen=True)
class MergeResult:
    path: Path
    added: int
    already_present: int
    grades: tuple[tuple[int, int], ...]
    """(grade, judgments added with it), grade ascending."""
    judges: tuple[tuple[str, str, int], ...]
    """(judge id, kind, judgments added), by judge id."""
    listed_judged_zero: tuple[str, ...]
    """``question: page by judge`` for listed pages some judge gave grade 0."""


def _label_ref(goldset: GoldSet) -> Any:
    """Writes a judgment's ref in the gold set's page basis (labels on ``pages: label``)."""
    if goldset.page_basis != "label":
        return None
    labels: dict[str, list[str | None]] = {}
    docs = {d.doc_id: d for d in goldset.documents}

    def ref(j: PageJudgment) -> str:
        if j.doc_id not in labels:
            found = loaders.page_labels(docs[j.doc_id])
            labels[j.doc_id] = (found if any(x is not None for x in found)
                                else [str(i) for i in range(1, len(found) + 1)])
        return f"{j.doc_id}#{labels[j.doc_id][j.page - 1]}"

    return ref


def _new_judgments(goldset: GoldSet, judgments: list[Judgment]
                   ) -> tuple[dict[str, list[PageJudgment]], int, list[Problem]]:
    """Per question, the judgments not yet in the gold set; how many were; conflicts."""
    existing = {(q.question_id, j.key, j.judge_id): j for q in goldset.questions for j in q.judged}
    new: dict[str, list[PageJudgment]] = {}
    present, problems = 0, []
    for j in judgments:
        key = (j.question_id, j.page, j.judgment.judge_id)
        old = existing.get(key)
        if old is not None and old.grade == j.judgment.grade:
            present += 1
        elif old is not None:
            problems.append(Problem(j.where, f"question {j.question_id}: {j.judgment.judge_id} "
                                    f"graded {j.page} {j.judgment.grade} here but {old.grade} in "
                                    f"{goldset.path}; one judge judges a page once"))
        else:
            new.setdefault(j.question_id, []).append(j.judgment)
    return new, present, problems


def merge_judgments(gold: Path | str, judgment_files: list[Path], out: Path | str, *,
                    allow_outside: bool = False, qrels_judge: str | None = None,
                    qrels_kind: str = "human") -> MergeResult:
    """Write ``out``: the gold set ``gold`` with the judgments added (module docstring);
    a judgments file may be graded qrels, its lines by ``qrels_judge`` (default the file's
    stem) of ``qrels_kind`` (:func:`rulegauge.goldset.judgments.read_judgments`).
    Raises one :class:`ValidationError` with every problem before anything is written."""
    gold, out = Path(gold), Path(out)
    goldset = load_goldset(gold, allow_outside=allow_outside)
    judgments, problems = collect_judgments(judgment_files, goldset, qrels_judge=qrels_judge,
                                            qrels_kind=qrels_kind)
    new, present, conflicts = _new_judgments(goldset, judgments)
    problems = sorted(problems + conflicts, key=line_order)  # every line's problems at once
    if out.resolve() == gold.resolve():
        problems.append(Problem(str(out), "the new version must be a new file (-o), not GOLD"))
    if problems:
        raise ValidationError(problems, "cannot merge these judgments")
    raw = yaml.safe_load(gold.read_text(encoding="utf-8-sig"))  # validated above: safe to load
    for d in raw["documents"]:
        full = (gold.parent / d["path"]).resolve()
        d["path"] = os.path.relpath(full, out.parent.resolve())
    ref = _label_ref(goldset)
    for q in raw["questions"]:
        qid = str(q["id"])
        if qid in new:
            q["judged"] = list(q.get("judged") or []) + judged_entries(new[qid], ref)
    added = [j for js in new.values() for j in js]
    by_judge = Counter((j.judge_id, j.judge_kind) for j in added)
    rows = Counter(str(Path(j.where.rsplit(":", 1)[0])) for j in judgments)
    provenance: dict[str, Any] = {
        "merged_by": "rulegauge goldset merge",
        "source": {"path": os.path.relpath(gold.resolve(), out.parent.resolve()),
                   "goldset": goldset.name, "sha256": goldset.sha256},
        "judgments": [{"path": str(p), "sha256": file_sha256(Path(p)),
                       "rows": rows.get(str(Path(p)), 0)} for p in judgment_files],
        "judges": [{"id": i, "kind": k, "judgments": n} for (i, k), n in sorted(by_judge.items())],
        "added": len(added), "already_present": present}
    if "provenance" in raw:
        provenance["previous"] = raw["provenance"]
    raw["provenance"] = provenance
    text = yaml.safe_dump(raw, allow_unicode=True, sort_keys=False, width=100)
    header = (f"# {out.name}: {gold.name} with {len(added)} judgments merged by "
              "`rulegauge goldset merge` (see provenance:)\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(out, header + text)
    try:
        load_goldset(out, allow_outside=True)
    except ValidationError:
        out.unlink(missing_ok=True)
        raise
    listed = {q.question_id: {str(r) for req in q.requirements for r in req}
              for q in goldset.questions}
    zero = tuple(f"{j.question_id}: {j.page} by {j.judgment.judge_id}" for j in judgments
                 if j.judgment.grade == 0 and j.page in listed.get(j.question_id, set()))
    return MergeResult(out, len(added), present,
                       tuple(sorted(Counter(j.grade for j in added).items())),
                       tuple((i, k, n) for (i, k), n in sorted(by_judge.items())), zero)
