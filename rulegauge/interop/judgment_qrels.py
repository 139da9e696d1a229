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

from dataclasses import replace
from pathlib import Path

from rulegauge.core import atomic
from rulegauge.core.errors import ValidationError
from rulegauge.goldset.judgments import Judgment, check_judgments, parse_qrels_judgments
from rulegauge.goldset.labels import LabelSet
from rulegauge.goldset.records import GoldSet
from rulegauge.interop.trec import write_qrels


def write_label_qrels(labels: LabelSet, path: Path) -> tuple[Path, Path | None]:
    """Write graded qrels of ``labels``; the LLM-only pairs (if any) to ``<stem>.llm.txt``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_qrels(((q, p, g) for (q, p), g in labels.grades.items()), path)
    if not labels.llm:
        return path, None
    marks = path.with_name(path.stem + ".llm.txt")
    atomic.write_text(marks, "".join(f"{q} {p}\n" for q, p in sorted(labels.llm)))
    return path, marks


def judgments_from_qrels(qrels: Path, judge_id: str, judge_kind: str, *,
                         goldset: GoldSet | None = None, time: str = "") -> list[Judgment]:
    """The qrels lines as judgments by ``judge_id``
    (:func:`rulegauge.goldset.judgments.qrels_judgments`), checked against ``goldset``
    when given and stamped with its hash; every problem raised together."""
    out, problems = parse_qrels_judgments(qrels, judge_id, judge_kind, time=time)
    if goldset is not None:
        problems += check_judgments(out, goldset)
    if problems:
        raise ValidationError(problems, f"{qrels}: cannot import these qrels")
    return [replace(j, goldset_sha256=goldset.sha256) for j in out] if goldset is not None else out
