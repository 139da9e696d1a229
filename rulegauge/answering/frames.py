"""Run tables <-> answering records: load a run's inputs, build the reads, and turn
journaled answers into the ``answers``, ``citations`` and ``answer_metrics`` frames.

Row order of every frame: configs in the order chosen, questions in the order
of the ``questions`` table, answerers in the run's answering order; within an
answer, citations by marker position then number, metrics in registry order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from rulegauge.answering.answer_metrics import answer_context, score_answer
from rulegauge.answering.answer_rows import measured_answer_metrics
from rulegauge.answering.read import ReadOptions, ReadRow, answering_read
from rulegauge.answering.requests import AnswerRequest, Passage
from rulegauge.core.errors import RulegaugeError
from rulegauge.corpus.records import Chunk, Document, page_key
from rulegauge.goldset.records import Question
from rulegauge.store.readback import chunks_from_frame, documents_from_frame, questions_from_frame
from rulegauge.store.rundir import Run

Key = tuple[str, str]  # (question_id, config_id)


@dataclass(frozen=True)
class RunInputs:
    questions: dict[str, Question]
    documents: dict[str, Document]
    chunks: dict[str, Chunk]
    configs: pd.DataFrame = field(repr=False)
    fused: pd.DataFrame = field(repr=False)

    def default_config(self) -> str:
        """The first config of kind ``grid``, else the first config."""
        grid = self.configs[self.configs["kind"] == "grid"]
        pick = grid if len(grid) else self.configs
        if not len(pick):
            raise RulegaugeError("the run has no fusion configs to answer from")
        return str(pick["config_id"].iloc[0])

    def check_configs(self, config_ids: Sequence[str]) -> None:
        known = list(self.configs["config_id"])
        bad = [c for c in config_ids if c not in known]
        if bad:
            raise RulegaugeError(f"unknown config(s) {', '.join(bad)}; "
                               f"choose from: {', '.join(known)}")
        # the run's fused-row budget may have left a config's fused rows out (rulegauge run --fused-config)
        stored = set(self.fused["config_id"].astype(str))
        absent = [c for c in config_ids if c not in stored]
        if absent:
            raise RulegaugeError(f"no fused rows stored for config(s) {', '.join(absent)}; re-score the run "
                               f"with `rulegauge run --from RUN -c GRID --fused-config ID` to store them")

    def arms(self, config_id: str) -> list[str]:
        row = self.configs[self.configs["config_id"] == config_id]
        return [str(a) for a in row["arms"].iloc[0]]


def load_inputs(run: Run) -> RunInputs:
    """Load the tables answering needs (all must exist)."""
    missing = [t for t in ("questions", "documents", "chunks", "configs", "fused")
               if not run.has_table(t)]
    if missing:
        raise RulegaugeError(f"run {run.run_id} cannot be answered: no {', '.join(missing)} table(s)")
    facts = run.table("question_facts") if run.has_table("question_facts") else None
    judged = run.table("question_judgments") if run.has_table("question_judgments") else None
    unlabelled = (run.manifest.get("goldset") or {}).get("unlabelled") or ()
    return RunInputs(questions_from_frame(run.table("questions"), facts, judged, set(unlabelled)),
                     documents_from_frame(run.table("documents")),
                     chunks_from_frame(run.table("chunks")), run.table("configs"),
                     run.table("fused"))


@dataclass(frozen=True)
class ReadSet:
    """The read and the answerer request of every (question, config), in frame order."""

    reads: dict[Key, tuple[ReadRow, ...]]
    requests: dict[Key, AnswerRequest]


def build_reads(inputs: RunInputs, config_ids: Sequence[str], options: ReadOptions) -> ReadSet:
    fused = inputs.fused[inputs.fused["config_id"].isin(list(config_ids))]
    groups = {k: g for k, g in fused.groupby(["question_id", "config_id"], sort=False)}
    empty = fused.iloc[0:0]
    titles = {d.doc_id: d.title for d in inputs.documents.values()}
    reads, requests = {}, {}
    for cid in config_ids:
        arms = inputs.arms(cid)
        for qid, q in inputs.questions.items():
            rows = answering_read(q, groups.get((qid, cid), empty), inputs.chunks,
                                  inputs.documents, options, arms)
            reads[(qid, cid)] = rows
            passages = tuple(Passage(r.read_at, r.chunk_id, r.doc_id, r.page, r.heading,
                                     inputs.chunks[r.chunk_id].text, titles.get(r.doc_id, ""))
                             for r in rows)
            requests[(qid, cid)] = AnswerRequest(qid, q.question, q.language, passages)
    return ReadSet(reads, requests)


def reads_frame(rs: ReadSet, inputs: RunInputs) -> pd.DataFrame:
    rows = []
    for (qid, cid), read in rs.reads.items():
        rel = inputs.questions[qid].relevant_pages
        rows += [{"question_id": qid, "config_id": cid, "read_at": r.read_at,
                  "chunk_id": r.chunk_id, "doc_id": r.doc_id, "doc_kind": r.doc_kind,
                  "page": r.page, "heading": r.heading, "fused_rank": r.fused_rank,
                  "fused_score": r.fused_score, "rerank_rank": r.rerank_rank,
                  "rerank_score": r.rerank_score, "carried_by": r.carried_by, "slot": r.slot,
                  "relevant": page_key(r.doc_id, r.page) in rel} for r in read]
    cols = ["question_id", "config_id", "read_at", "chunk_id", "doc_id", "doc_kind", "page",
            "heading", "fused_rank", "fused_score", "rerank_rank", "rerank_score", "carried_by",
            "slot", "relevant"]
    return pd.DataFrame(rows, columns=cols)


def own_read_rows(own: Sequence[Sequence[Any]], inputs: RunInputs) -> tuple[ReadRow, ...]:
    """Read rows of an answerer that read its own passages (journal ``own_read``:
    ``[n, chunk_id, doc_id, page, heading]``); ranks and scores are unknown (0, NaN)."""
    kinds = {d.doc_id: d.kind for d in inputs.documents.values()}
    return tuple(ReadRow(int(n), str(chunk), str(doc), kinds.get(str(doc), ""), int(page),
                         str(heading), 0, math.nan, int(n), math.nan, "", "own")
                 for n, chunk, doc, page, heading in own)


def answer_frames(records: Mapping[str, Sequence[Mapping[str, Any]]], rs: ReadSet,
                  inputs: RunInputs,
                  judged: Mapping[tuple[str, str, str], tuple[bool | None, ...]] | None = None
                  ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(answers, citations, answer_metrics) from journal records per answerer label;
    ``judged`` maps (question, config, label) to the judge's verdict per fact."""
    answers, cits, metrics = [], [], []
    measured = set(measured_answer_metrics())  # the answers' columns, not rows (answer_rows)
    for label, recs in records.items():
        for rec in recs:
            key = (rec["question_id"], rec["config_id"])
            q = inputs.questions[key[0]]
            own = rec.get("own_read")
            read = rs.reads[key] if own is None else own_read_rows(own, inputs)
            ctx = answer_context(q, read, rec["outcome"], rec["text"], float(rec["latency_ms"]),
                                 judged=(judged or {}).get((key[0], key[1], label)))
            base = {"question_id": key[0], "config_id": key[1], "answerer": label}
            answers.append({**base, "answerer_name": rec["answerer_name"],
                            "model_id": rec["model_id"], "prompt_hash": rec["prompt_hash"],
                            "request_hash": rec["request_hash"], "text": rec["text"],
                            "outcome": rec["outcome"], "latency_ms": float(rec["latency_ms"]),
                            "tokens_in": rec.get("tokens_in"), "tokens_out": rec.get("tokens_out"),
                            "error": rec.get("error"), "fence_passed": ctx.fence.passed,
                            "fence_reason": ctx.fence.reason})
            cits += [{**base, "position": c.position, "marker": c.marker, "n": c.n,
                      "chunk_id": c.chunk_id, "doc_id": c.doc_id, "page": c.page,
                      "dangling": c.dangling, "relevant": c.relevant} for c in ctx.citations]
            metrics += [{**base, "metric": m, "value": v, "answerable": q.answerable}
                        for m, v in score_answer(ctx).items() if m not in measured]
    a = pd.DataFrame(answers, columns=["question_id", "config_id", "answerer", "answerer_name",
                                       "model_id", "prompt_hash", "request_hash", "text",
                                       "outcome", "latency_ms", "tokens_in", "tokens_out",
                                       "error", "fence_passed", "fence_reason"])
    a = a.astype({"tokens_in": "Int32", "tokens_out": "Int32"})
    c = pd.DataFrame(cits, columns=["question_id", "config_id", "answerer", "position", "marker",
                                    "n", "chunk_id", "doc_id", "page", "dangling", "relevant"])
    c = c.astype({"page": "Int32"})
    m = pd.DataFrame(metrics, columns=["question_id", "config_id", "answerer", "metric", "value",
                                       "answerable"])
    return a, c, m
