"""A synthetic run directory for the answering tests (our own text, no shared data).

Game "Lanterns of the Bay": a rulebook (4 pages), an errata (1 page), an
expansion (2 pages) and a community FAQ (1 page); one chunk per page. Fused
rows follow weighted RRF at k=60 from the per-arm ranks in RANKS, so scores are
exact formulas; fused ranks come from :func:`rulegauge.core.ordering.order`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from rulegauge.answering.answerers.base import ANSWERERS
from rulegauge.answering.requests import AnswerRequest, AnswerResponse
from rulegauge.core.ordering import order
from rulegauge.corpus.records import chunk_key
from rulegauge.store.rundir import RunWriter

K = 60.0
ARMS = ("bm25", "dense", "boost")
DOCS = (  # doc_id, kind, title
    ("rb", "rulebook", "Lanterns Rulebook"),
    ("er", "errata", "Lanterns Errata"),
    ("ex", "expansion", "Lanterns: Storm Expansion"),
    ("faq", "faq", "Community FAQ"),
)
TEXTS = {
    ("rb", 1): "Setup. Each player takes five lantern tokens and a harbour board.",
    ("rb", 2): "Turn order. On your turn move your boat up to three harbour spaces.",
    ("rb", 3): "Scoring. A lit lantern scores two points at the end of the game.",
    ("rb", 4): "End of game. The game ends when the lantern supply is empty.",
    ("er", 1): "Correction to scoring: a lit lantern scores three points, not two.",
    ("ex", 1): "Storm cards. When a storm card is drawn every boat drifts one space.",
    ("ex", 2): "Lighthouse. A boat next to the lighthouse may light a lantern for free.",
    ("faq", 1): "Can a boat move four spaces? No, a boat moves at most three spaces.",
}
# question_id, text, requirements, per-arm ranks {arm: [doc#page in rank order]}
QUESTIONS: tuple[tuple[str, str, list[list[str]], dict[str, list[str]]], ...] = (
    ("q-move", "How many spaces may a boat move on a turn?", [["rb#2"]],
     {"bm25": ["faq#1", "rb#2", "ex#1"], "dense": ["rb#2", "faq#1", "rb#1"],
      "boost": ["rb#2", "rb#1"]}),
    ("q-score", "How many points does a lit lantern score?", [["rb#3"], ["er#1"]],
     {"bm25": ["rb#3", "er#1", "ex#2", "rb#4"], "dense": ["rb#3", "ex#2", "er#1"],
      "boost": ["er#1", "rb#3"]}),
    ("q-storm", "What happens when a storm card is drawn?", [["ex#1"]],
     {"bm25": ["ex#1", "rb#2"], "dense": ["ex#1", "faq#1"], "boost": ["rb#2"]}),
    ("q-none", "Can players trade lantern tokens with each other?", [],
     {"bm25": ["rb#1", "rb#4"], "dense": ["rb#1", "ex#2"], "boost": ["rb#1"]}),
)
CONFIGS = (("rrf-3", "grid", ARMS), ("arm-bm25", "arm", ("bm25",)))


def cid(ref: str) -> str:
    doc, page = ref.split("#")
    return chunk_key(doc, int(page), 0)


def fused_rows() -> pd.DataFrame:
    rows = []
    for qid, _, reqs, ranks in QUESTIONS:
        relevant = {r for req in reqs for r in req}
        for config_id, _, arms in CONFIGS:
            scores: dict[str, float] = {}
            arm_rank: dict[str, dict[str, int]] = {a: {} for a in ARMS}
            for a in arms:
                for r, ref in enumerate(ranks[a], start=1):
                    scores[ref] = scores.get(ref, 0.0) + 1.0 / (K + r)
                    arm_rank[a][ref] = r
            refs = list(scores)
            idx = order([scores[r] for r in refs], [cid(r) for r in refs])
            ceiling = len(arms) / (K + 1)
            for fr, i in enumerate(idx, start=1):
                ref = refs[i]
                doc, page = ref.split("#")
                row: dict[str, Any] = {
                    "question_id": qid, "config_id": config_id, "chunk_id": cid(ref),
                    "doc_id": doc, "page": int(page), "fused_rank": fr,
                    "fused_score": scores[ref], "ceiling": ceiling,
                    "score_ratio": scores[ref] / ceiling, "n_arms": len(arms),
                    "arms_voted": sum(ref in arm_rank[a] for a in arms),
                    "relevant": ref in relevant, "page_rank": fr, "foreign": False}
                for a in ARMS:
                    row[f"rank_{a}"] = arm_rank[a].get(ref)
                rows.append(row)
    df = pd.DataFrame(rows)
    return df.astype({f"rank_{a}": "Int32" for a in ARMS})


def write_run(path: Path) -> Path:
    """Write the synthetic run (manifest + five tables) to ``path``."""
    w = RunWriter(path)
    w.update_manifest({"run_id": path.name, "status": "complete"})
    w.write_table("questions", pd.DataFrame([{
        "question_id": qid, "goldset": "lanterns", "language": "en", "question": text,
        "game": "Lanterns", "tags": [], "requirements": json.dumps(reqs),
        "n_requirements": len(reqs), "answerable": bool(reqs)}
        for qid, text, reqs, _ in QUESTIONS]))
    w.write_table("documents", pd.DataFrame([{
        "doc_id": d, "kind": kind, "game": "Lanterns", "edition": "en-1", "language": "en",
        "title": title, "path": None, "source_sha256": None,
        "pages": max(p for (dd, p) in TEXTS if dd == d)} for d, kind, title in DOCS]))
    kinds = {d: kind for d, kind, _ in DOCS}
    w.write_table("chunks", pd.DataFrame([{
        "chunk_id": chunk_key(d, p, 0), "doc_id": d, "doc_kind": kinds[d], "page": p,
        "page_label": None, "heading_path": text.split(".")[0], "char_start": 0,
        "char_end": len(text), "text": text} for (d, p), text in TEXTS.items()]))
    w.write_table("configs", pd.DataFrame([{
        "config_id": c, "name": c, "kind": kind, "method": "rrf", "k": K, "arms": list(arms),
        "weights": [1.0] * len(arms), "depths": [10] * len(arms), "ceiling": len(arms) / (K + 1),
        "params": "{}"} for c, kind, arms in CONFIGS]))
    w.write_table("fused", fused_rows(), {"rank_*": list(ARMS)})
    return path


class EchoAnswerer:
    """Cites passage 1 (and the relevant-looking ones); abstains on 'trade'; counts calls.

    ``stop_after`` raises KeyboardInterrupt on that call (a killed run);
    ``fail_on`` raises RuntimeError for that question id (a failed call); ``abstain_on``
    abstains on that question id too.
    """

    name: ClassVar[str] = "echo"
    calls: ClassVar[list[str]] = []

    def __init__(self, *, stop_after: int = 0, fail_on: str = "", cite: str = "[1]",
                 latency: float = 5.0, abstain_on: str = "") -> None:
        self.stop_after, self.fail_on, self.cite, self.latency = stop_after, fail_on, cite, latency
        self.abstain_on = abstain_on

    def answer(self, request: AnswerRequest) -> AnswerResponse:
        type(self).calls.append(request.question_id)
        if self.stop_after and len(type(self).calls) == self.stop_after:
            raise KeyboardInterrupt
        if request.question_id == self.fail_on:
            raise RuntimeError("server said no")
        if "trade" in request.question or request.question_id == self.abstain_on:
            return AnswerResponse("ABSTAIN: the rules do not say.", "abstained", "echo-1",
                                  self.latency)
        return AnswerResponse(f"The rules answer this {self.cite}.", "answered", "echo-1",
                              self.latency, tokens_in=10, tokens_out=5)

    def describe(self) -> dict[str, Any]:
        return {"model_id": "echo-1", "cite": self.cite}


def register_echo() -> None:
    if "echo" not in ANSWERERS:
        ANSWERERS.add("echo", EchoAnswerer)

