"""TREC run files and qrels: read, write, and export a harness run.

Run file lines are ``qid Q0 docid rank score tag``; qrels lines ``qid 0 docid rel``.
A docid is a page id ``doc#page`` (``level="page"``) or a chunk id
(``level="chunk"``).

Tie rule. trec_eval (and so ir-measures' pytrec_eval backend) re-sorts each
query's lines by score descending and breaks ties by docid *descending*; the
harness breaks ties by id *ascending*. So that trec_eval scores exactly the
harness's order, the default ``scores="rank"`` writes ``1/rank`` as the score
(strictly decreasing); ``scores="original"`` writes the arm's or fused score,
whose ties trec_eval may order differently.

Page level. A page takes the rank of its best-ranked chunk (first occurrence in
the list) and that chunk's score; ranks are renumbered 1..n over pages.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from harness.core.errors import Problem, ValidationError
from harness.corpus.records import page_keys

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
    with open(path, "w", encoding="utf-8") as f:
        for r in df.itertuples(index=False):
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
    with open(path, "w", encoding="utf-8") as f:
        for qid, docid, rel in sorted(rows):
            f.write(f"{qid} 0 {docid} {rel}\n")
    return path


def read_qrels(path: Path) -> list[tuple[str, str, int, int]]:
    """(qid, docid, relevance, line) from a qrels file; malformed lines all reported."""
    out, problems = [], []
    for i, raw in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        parts = raw.split()
        if not parts:
            continue
        if len(parts) != 4:
            problems.append(Problem(f"{path}:{i}", f"expected 'qid 0 docid relevance', got {raw!r}"))
            continue
        try:
            out.append((parts[0], parts[2], int(parts[3]), i))
        except ValueError:
            problems.append(Problem(f"{path}:{i}", f"relevance must be an integer: {raw!r}"))
    if problems:
        raise ValidationError(problems, f"{path}: malformed qrels")
    return out


def ranked_rows(df: pd.DataFrame, rank_col: str, score_col: str, level: str, scores: str) -> pd.DataFrame:
    """(qid, docid, rank, score) from arm_ranks or fused rows of one arm or config."""
    if level not in LEVELS or scores not in SCORE_MODES:
        raise ValueError(f"level must be one of {LEVELS} and scores one of {SCORE_MODES}")
    d = df.sort_values(["question_id", rank_col], kind="stable")
    if level == "page":
        d = d.assign(docid=page_keys(d["doc_id"], d["page"])).drop_duplicates(["question_id", "docid"])
    else:
        d = d.assign(docid=d["chunk_id"])
    rank = d.groupby("question_id").cumcount() + 1
    score = 1.0 / rank if scores == "rank" else d[score_col]
    return pd.DataFrame({"qid": d["question_id"].to_numpy(), "docid": d["docid"].to_numpy(),
                         "rank": rank.to_numpy(), "score": score.to_numpy()})


def qrels_rows(questions: pd.DataFrame) -> list[tuple[str, str, int]]:
    """Page-level qrels from a run's ``questions`` table: every listed page is relevant (1)."""
    rows = set()
    for q in questions.itertuples():
        for req in json.loads(q.requirements):
            for page in req:
                rows.add((q.question_id, page, 1))
    return sorted(rows)


def export_run(run, out_dir: Path, level: str = "page", scores: str = "rank",
               configs: list[str] | None = None, arms: list[str] | None = None) -> list[Path]:
    """Write ``arm-<name>.trec`` per arm, ``<config_id>.trec`` per config and
    ``qrels.txt`` (page level) from a :class:`harness.store.rundir.Run`."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    ar = run.table("arm_ranks")
    for arm in arms if arms is not None else sorted(ar["arm"].unique()):
        rows = ranked_rows(ar[ar["arm"] == arm], "rank", "score", level, scores)
        written.append(write_run(rows, out_dir / f"arm-{arm}.trec", f"harness-{arm}"))
    fused = run.table("fused")
    for cid in configs if configs is not None else sorted(fused["config_id"].unique()):
        rows = ranked_rows(fused[fused["config_id"] == cid], "fused_rank", "fused_score", level, scores)
        written.append(write_run(rows, out_dir / f"{cid}.trec", cid))
    written.append(write_qrels(qrels_rows(run.table("questions")), out_dir / "qrels.txt"))
    return written


def to_ir_measures(run, config_id: str, level: str = "page") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(qrels, run) DataFrames with ir-measures' column names for one config."""
    fused = run.table("fused")
    rows = ranked_rows(fused[fused["config_id"] == config_id], "fused_rank", "fused_score", level, "rank")
    qrels = pd.DataFrame(qrels_rows(run.table("questions")), columns=["query_id", "doc_id", "relevance"])
    return qrels, rows.rename(columns={"qid": "query_id", "docid": "doc_id"})[["query_id", "doc_id", "score"]]


def to_ranx(run, config_id: str, level: str = "page"):  # type: ignore[no-untyped-def]
    """(ranx.Qrels, ranx.Run) for one config."""
    from ranx import Qrels, Run  # deferred: heavy import

    qrels, rows = to_ir_measures(run, config_id, level)
    qd: dict[str, dict[str, int]] = {}
    for r in qrels.itertuples():
        qd.setdefault(r.query_id, {})[r.doc_id] = int(r.relevance)
    rd: dict[str, dict[str, float]] = {}
    for r in rows.itertuples():
        rd.setdefault(r.query_id, {})[r.doc_id] = float(r.score)
    return Qrels.from_dict(qd), Run.from_dict(rd, name=config_id)
