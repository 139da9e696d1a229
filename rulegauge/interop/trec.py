"""TREC run files and qrels: read and write.

Run file lines are ``qid Q0 docid rank score tag``; qrels lines ``qid 0 docid rel``.
A docid is a page id ``doc#page`` (``level="page"``; a page of an imported
collection is its collection's own document id: :mod:`rulegauge.interop.docids`) or a
chunk id (``level="chunk"``).

Tie rule. trec_eval (and so ir-measures' pytrec_eval backend) re-sorts each
query's lines by score descending and breaks ties by docid *descending*; the
rulegauge breaks ties by id *ascending*. So that trec_eval scores exactly the
rulegauge's order, the default ``scores="rank"`` writes ``1/rank`` as the score
(strictly decreasing); ``scores="original"`` writes the arm's or fused score,
whose ties trec_eval may order differently.

A run is exported by :mod:`rulegauge.interop.export`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rulegauge.core.atomic import atomic_path
from rulegauge.core.errors import Problem, ValidationError
from rulegauge.core.tablerows import rows as table_rows
from rulegauge.goldset.judgments import read_qrels_lines

# docid granularity and score column of an export (rulegauge.interop.export)
LEVELS = ("page", "chunk")
SCORE_MODES = ("rank", "original")


@dataclass(frozen=True)
class TrecLine:
    qid: str
    docid: str
    rank: int
    score: float
    tag: str
    line: int


def write_run(rows: pd.DataFrame, path: Path, tag: str) -> Path:
    """Write ``rows`` (qid, docid, rank, score) as a TREC run file, sorted by qid, rank."""
    df = rows.sort_values(["qid", "rank"], kind="stable")
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        for r in table_rows(df):
            f.write(f"{r.qid} Q0 {r.docid} {int(r.rank)} {r.score!r} {tag}\n")
    return path
def read_run(path: Path) -> list[TrecLine]:
    """Parse a TREC run file; every malformed line is reported (file:line)."""
    out, problems = [], []
    for i, raw in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        parts = raw.split()
        if len(parts) != 6:
            problems.append(Problem(f"{path}:{i}",
                                    f"expected 6 fields 'qid Q0 docid rank score tag', got {len(parts)}"))
            continue
        try:
            out.append(TrecLine(parts[0], parts[2], int(parts[3]), float(parts[4]), parts[5], i))
        except ValueError:
            problems.append(Problem(f"{path}:{i}", f"rank must be an integer and score a number: {raw!r}"))
    if problems:
        raise ValidationError(problems, f"{path}: malformed TREC run file")
    return out


def write_qrels(rows: Iterable[tuple[str, str, int]], path: Path) -> Path:
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        for qid, docid, rel in sorted(rows):
            f.write(f"{qid} 0 {docid} {rel}\n")
    return path


def read_qrels(path: Path) -> list[tuple[str, str, int, int]]:
    """(qid, docid, relevance, line) from a qrels file; malformed lines all reported
    (:func:`rulegauge.goldset.judgments.read_qrels_lines`, the one qrels reader)."""
    return read_qrels_lines(path)
