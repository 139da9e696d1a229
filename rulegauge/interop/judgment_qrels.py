"""Judgments and gold sets as graded TREC qrels, and qrels back to a judgments file.

Export (:func:`write_label_qrels`): one line ``qid 0 doc#page grade`` per labelled
pair of a :class:`~rulegauge.goldset.labels.LabelSet`, grade 0 included (in TREC qrels a
0 line means *judged non-relevant*, which is what ``Judged@k`` in ir_measures counts).
A judgments file's several judges of a pair collapse to one grade (people over models,
lower median); ``--judge`` exports one judge's. LLM-only pairs are listed in a
``.llm.txt`` file beside the qrels (qrels have no column for them).

Import (:func:`judgments_from_qrels`): each qrels line becomes one judgment by the
named judge (``judge_kind`` human or llm), grades 0-3 only; with a gold set the
questions, documents and pages are checked and the gold set's hash is stamped on each
row. Every problem is reported with ``file:line``.
"""

from __future__ import annotations

from pathlib import Path

from rulegauge.core.errors import Problem, ValidationError
from rulegauge.corpus.records import split_page_key
from rulegauge.goldset.judged import judgment_fields
from rulegauge.goldset.judgments import Judgment, check_judgments
from rulegauge.goldset.labels import LabelSet
from rulegauge.goldset.records import GoldSet, PageJudgment
from rulegauge.interop.trec import read_qrels, write_qrels


def write_label_qrels(labels: LabelSet, path: Path) -> tuple[Path, Path | None]:
    """Write graded qrels of ``labels``; the LLM-only pairs (if any) to ``<stem>.llm.txt``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_qrels(((q, p, g) for (q, p), g in labels.grades.items()), path)
    if not labels.llm:
        return path, None
    marks = path.with_name(path.stem + ".llm.txt")
    marks.write_text("".join(f"{q} {p}\n" for q, p in sorted(labels.llm)), encoding="utf-8")
    return path, marks


def judgments_from_qrels(qrels: Path, judge_id: str, judge_kind: str, *,
                         goldset: GoldSet | None = None, time: str = "") -> list[Judgment]:
    """The qrels lines as judgments by ``judge_id``; every problem raised together."""
    problems: list[Problem] = []
    out: list[Judgment] = []
    _, bad = judgment_fields({"grade": 0, "kind": judge_kind, "judge": judge_id, "time": time})
    if bad:
        raise ValidationError([Problem("--judge/--kind", m) for m in bad], "bad judge options")
    seen: dict[tuple[str, str], int] = {}
    for qid, docid, grade, line in read_qrels(Path(qrels)):
        where = f"{qrels}:{line}"
        try:
            doc, page = split_page_key(docid)
        except ValueError:
            problems.append(Problem(where, f"docid {docid!r} is not a page id 'doc#page'"))
            continue
        if not 0 <= grade <= 3:
            problems.append(Problem(where, f"relevance {grade} outside 0-3"))
            continue
        if (qid, docid) in seen:
            problems.append(Problem(where, f"question {qid}: {docid} listed twice (first at line "
                                    f"{seen[(qid, docid)]})"))
            continue
        seen[(qid, docid)] = line
        out.append(Judgment(qid, PageJudgment(doc, page, grade, judge_kind, judge_id, time),
                            goldset_sha256=goldset.sha256 if goldset else "", where=where))
    if goldset is not None:
        problems += check_judgments(out, goldset)
    if problems:
        raise ValidationError(problems, f"{qrels}: cannot import these qrels")
    return out
