"""The ``production`` answerer: the service's own answers, from imported ruling pages.

A rulings run (``rulegauge rulings import PAGES`` then ``rulegauge rulings score RUN
--goldset G.yaml [--mapping M.yaml]``) holds production's answer to each ruling
and, in ``ruling_matches``, the gold question it matches. This answerer replays
those answers beside offline candidates, on the same answer metrics:

* it *covers* the gold questions with a counted match (``covers``): the runner asks
  it nothing else and writes no row for the other questions, so comparisons pair
  it only on the questions production was asked;
* the answer is the page's ``answer_text`` as printed, the outcome the page's
  (a word outside answered/abstained/error counts as answered), the latency its
  total time, the tokens and model (answerer pin) the page's;
* production numbers its citations by its own reference list, not by our
  answering read, so the response carries that list as its own ``read``
  (:attr:`AnswerResponse.read`): ``[n]`` resolves to the n-th reference, its
  production document mapped to the gold document (and page offset) exactly as
  ``rulegauge rulings score`` maps it. ``context_recall`` of this answerer is
  therefore taken over the pages it cites, not over what it read.

The gold set and mapping are the ones the rulings run was scored with (paths in
its manifest). A question the rulings run does not cover is never asked; asking
anyway returns an ``error`` response naming the question.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, ClassVar

from rulegauge.answering.answerers.base import ANSWERERS
from rulegauge.answering.requests import OUTCOMES, AnswerRequest, AnswerResponse, Passage
from rulegauge.core.errors import ConfigError, RulegaugeError
from rulegauge.goldset.parse import load_goldset
from rulegauge.rulings.evaluate import page_id
from rulegauge.rulings.mapping import Mapping, load_mapping
from rulegauge.rulings.match import ProdDoc, map_documents
from rulegauge.store.rundir import Run


def _none(x: Any) -> Any:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


@ANSWERERS.register("production")
class ProductionAnswerer:
    """Answers with production's rulings, matched to gold questions."""

    name: ClassVar[str] = "production"

    def __init__(self, *, rulings: str) -> None:
        path = Path(rulings)
        try:
            run = Run(path)
        except (RulegaugeError, OSError) as exc:
            raise ConfigError(f"production: cannot open rulings run {path}: {exc}") from None
        if run.manifest.get("kind") != "rulings":
            raise ConfigError(f"production: {path} is not a rulings run (make one with: "
                              "rulegauge rulings import PAGES)")
        if not run.has_table("ruling_matches"):
            raise ConfigError(f"production: rulings run {path} has not been scored on a gold "
                              f"set: run rulegauge rulings score {path} --goldset GOLDSET.yaml")
        self.run_path = str(path.resolve())
        self.run_id = run.run_id
        self.goldset = dict(run.manifest.get("goldset") or {})
        self._answers = self._load(run)

    def _load(self, run: Any) -> dict[str, AnswerResponse]:
        gs = load_goldset(self.goldset["path"], check_pages=False)
        mp = (run.manifest.get("rulings") or {}).get("mapping") or {}
        mapping = load_mapping(Path(mp["path"])) if mp.get("path") else Mapping()
        matches = run.table("ruling_matches")
        rulings = {str(r["question_id"]): r for r in run.table("rulings").to_dict("records")}
        cits = run.table("ruling_citations")
        out: dict[str, AnswerResponse] = {}
        for m in matches[matches["counted"]].itertuples(index=False):
            r = rulings[str(m.question_id)]
            c = cits[cits["question_id"] == m.question_id].sort_values("n")
            prod = {str(d): ProdDoc(str(d), _none(k), _none(t)) for d, k, t in
                    zip(c["doc_id"], c["doc_kind"], c["doc_title"], strict=True) if _none(d)}
            docs = map_documents(prod.values(), _none(r["game"]), _none(r["edition"]), gs, mapping)
            read = []
            for x in c.itertuples(index=False):
                pid = page_id(x.doc_id, x.page, docs) or f"production:{x.doc_id}#0"
                doc, _, page = pid.rpartition("#")
                read.append(Passage(int(x.n), f"production:{m.question_id}:[{int(x.n)}]", doc,
                                    int(page), str(_none(x.heading) or ""), ""))
            text = r.get("answer_text") if isinstance(r.get("answer_text"), str) else ""
            outcome = str(_none(r.get("outcome")) or "answered")
            outcome = outcome if outcome in OUTCOMES else "answered"
            total = _none(r.get("total_ms"))
            out[str(m.gold_question_id)] = AnswerResponse(
                text=text, outcome="error" if not text.strip() and outcome != "error" else outcome,
                model_id=str(_none(r.get("answerer_model")) or "production"),
                latency_ms=float(total) if total is not None else math.nan,
                tokens_in=_count(r.get("tokens_in")), tokens_out=_count(r.get("tokens_out")),
                error=None if text.strip() else f"ruling {m.question_id} shows no answer text",
                read=tuple(read))
        return out

    def covers(self, request: AnswerRequest) -> bool:
        return request.question_id in self._answers

    def answer(self, request: AnswerRequest) -> AnswerResponse:
        found = self._answers.get(request.question_id)
        if found is None:
            return AnswerResponse("", "error", "production", 0.0,
                                  error=f"production: no counted ruling matches question "
                                        f"{request.question_id} in {self.run_id}")
        return found

    def describe(self) -> dict[str, Any]:
        return {"answerer": self.name, "model_id": "production", "rulings_run": self.run_id,
                "rulings_path": self.run_path, "goldset": self.goldset.get("name"),
                "goldset_sha256": self.goldset.get("sha256"), "questions": len(self._answers)}


def _count(x: Any) -> int | None:
    x = _none(x)
    return int(x) if x is not None else None
