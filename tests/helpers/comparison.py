"""Synthetic run directories for compare / gate / baseline tests."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa

from rulegauge.goldset.records import PageJudgment, PageRef, Question
from rulegauge.metrics.ranking import score_ranking
from rulegauge.store.rundir import RunWriter
from rulegauge.store.schema import spec

ARMS = ("bm25", "dense", "boost")
METRICS = ("hit@1", "hit@5", "recall@5", "MRR@10", "first_rel_rank", "top_score_ratio")
N_ANSWERABLE = 20
UNANSWERABLE = ("q21", "q22")
K = 60.0


def qid(i: int) -> str:
    return f"q{i:02d}"


def base_lists() -> dict[str, list[str]]:
    """Question -> fused page order: q01..q20 find their page rb#i at rank 1 + i % 3,
    among filler pages; the unanswerable ones get filler only."""
    lists = {}
    for i in range(1, N_ANSWERABLE + 1):
        filler = [f"fl#{j}" for j in range(1, 10)]
        filler.insert(i % 3, f"rb#{i}")
        lists[qid(i)] = filler
    for q in UNANSWERABLE:
        lists[q] = [f"fl#{j}" for j in range(1, 10)]
    return lists


def move(lists: Mapping[str, list[str]], question: str, page: str, rank: int | None
         ) -> dict[str, list[str]]:
    """A copy of ``lists`` with ``page`` moved to 1-based ``rank`` (None: dropped)."""
    out = {q: list(v) for q, v in lists.items()}
    out[question].remove(page)
    if rank is not None:
        out[question].insert(rank - 1, page)
    return out


def _question(q: str, judged: Sequence[str] = ()) -> Question:
    """``judged``: pages (``doc#page``) the gold set judged non-relevant for ``q``."""
    marks = tuple(PageJudgment(p.split("#")[0], int(p.split("#")[1]), 0, "human", "tester") for p in judged)
    if q in UNANSWERABLE:
        return Question(q, f"question {q}?", "en", (), judged=marks)
    return Question(q, f"question {q}?", "en", ((PageRef("rb", int(q[1:])),),), judged=marks)


def write_run(path: Path, lists: Mapping[str, Sequence[str]], *,
              configs: Sequence[tuple[str, str, str]] = (("c3", "prod", "grid"),),
              arm_ranks: Mapping[tuple[str, str], Mapping[str, int | None]] | None = None,
              goldset_sha: str | None = "gold-1", corpus_hash: str | None = "corpus-1",
              answers: pd.DataFrame | None = None, answer_metrics: pd.DataFrame | None = None,
              status: str = "complete", metrics: Sequence[str] = METRICS,
              judged: Mapping[str, Sequence[str]] | None = None) -> Path:
    """A run whose every config ranks pages as ``lists`` says (one chunk per page).

    Every arm ranks each page at its fused rank unless ``arm_ranks[(question, page)]``
    says otherwise (None: the arm did not rank it). Metrics come from
    rulegauge.metrics.ranking.score_ranking, so they are what the pipeline would compute.
    """
    w = RunWriter(path)
    manifest: dict[str, object] = {"run_id": path.name, "created": "2025-01-01T00:00:00+00:00",
                                   "status": "running", "config": {"sha256": "cfg-" + path.name}}
    if goldset_sha is not None:
        manifest["goldset"] = {"name": "synthetic", "path": "synthetic.yaml",
                               "sha256": goldset_sha}
    if corpus_hash is not None:
        manifest["corpus"] = {"content_hash": corpus_hash}
    w.update_manifest(manifest)
    questions = [_question(q, (judged or {}).get(q, ())) for q in lists]
    w.write_table("questions", pd.DataFrame([{
        "question_id": q.question_id, "goldset": "synthetic", "language": "en",
        "question": q.question, "game": "G", "tags": [],
        "requirements": json.dumps([[str(r) for r in req] for req in q.requirements]),
        "n_requirements": len(q.requirements), "answerable": q.answerable} for q in questions]))
    w.write_table("configs", pd.DataFrame([{
        "config_id": cid, "name": name, "kind": kind, "method": "rrf", "k": K,
        "arms": list(ARMS), "weights": [1.0] * 3, "depths": [10] * 3,
        "ceiling": 3 / (K + 1), "params": "{}"} for cid, name, kind in configs]))
    fused, rows = [], []
    for cid, _, _ in configs:
        for q in questions:
            pages = list(lists[q.question_id])
            for i, page in enumerate(pages):
                doc, no = page.split("#")
                row = {"question_id": q.question_id, "config_id": cid,
                       "chunk_id": f"{doc}#p{int(no):04d}.c000", "doc_id": doc, "page": int(no),
                       "fused_rank": i + 1, "fused_score": 3 / (K + i + 1), "ceiling": 3 / (K + 1),
                       "score_ratio": (K + 1) / (K + i + 1), "n_arms": 3, "arms_voted": 3,
                       "relevant": page in q.relevant_pages, "page_rank": i + 1, "foreign": False}
                override = (arm_ranks or {}).get((q.question_id, page), {})
                for a in ARMS:
                    row[f"rank_{a}"] = override.get(a, i + 1) if a in override else i + 1
                fused.append(row)
            scores = score_ranking(pages, q, metrics, top_score=3 / (K + 1), ceiling=3 / (K + 1))
            rows += [{"question_id": q.question_id, "config_id": cid, "metric": m,
                         "value": v, "answerable": q.answerable} for m, v in scores.items()]
    fused_df = pd.DataFrame(fused)
    for a in ARMS:
        fused_df[f"rank_{a}"] = pd.array(fused_df[f"rank_{a}"], dtype="Int32")
    w.write_table("fused", fused_df, {"rank_*": list(ARMS)})
    w.write_table("metrics", pd.DataFrame(rows))
    if answers is not None:
        w.write_table("answers", answers)
    if answer_metrics is not None:
        w.write_table("answer_metrics", answer_metrics)
    w.update_manifest({"status": status})
    return path


def answer_tables(values: Mapping[str, Mapping[str, float]],
                  outcomes: Mapping[str, str] | None = None,
                  answerers: Sequence[str] = ("extractive",), config: str = "c3"
                  ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``answers`` and ``answer_metrics`` frames: values[metric][question] per answerer."""

    qs = sorted({q for per_q in values.values() for q in per_q})
    # every column of the registered schema gets a neutral value; the ones read here are set
    schema = spec("answers").schema()
    neutral = {pa.string(): "x", pa.int32(): 0, pa.float64(): 1.0, pa.bool_(): True}
    rows = []
    for a in answerers:
        for q in qs:
            row = {f.name: None if f.nullable else neutral.get(f.type, "x") for f in schema}
            row.update(question_id=q, config_id=config, answerer=a,
                       outcome=(outcomes or {}).get(q, "answered"), text="an answer [1]")
            rows.append(row)
    answers = pa.Table.from_pylist(rows, schema=schema).to_pandas()
    metrics = pd.DataFrame([{
        "question_id": q, "config_id": config, "answerer": a, "metric": m, "value": v,
        "answerable": q not in UNANSWERABLE}
        for a in answerers for m, per_q in values.items() for q, v in per_q.items()])
    return answers, metrics


