"""Production against gold: score an imported rulings run on a gold set.

For every ruling: the match (``rulegauge.rulings.match``) and the answer fence
recomputed on ``answer_text`` with the service's own rules
(``rulegauge.answering.fence.SERVICE_PARAMS``) beside the figures the page
reported (``fence_agrees``: same verdict, non-space count and glyph count, and
density within half a unit of the printed 5th decimal).

For every *counted* match (config ``production``):

* ``metrics``: the page-level metrics (``rulegauge.metrics.ranking.score_ranking``) of the
  passage search's pages in fused order, production doc ids mapped to gold
  documents (unmapped pages are never relevant); ``top_score`` is fused rank 1's
  score and the ceiling ``n_arms / (k + 1)``. A value the page cannot give is
  left out rather than defaulted: no ``top_score_ratio`` row when the page does
  not tell the arm count, no metric rows at all when it shows no passage-search
  row (a truncated page is not a miss), no ``latency_ms`` without a total time.
* ``answer_metrics`` (answerer ``production``): every metric of
  ``rulegauge.answering.answer_metrics.answer_metric_names()``; the answer's ``[n]`` markers
  resolve to its reference list (production numbers citations by that list,
  not by read order), ``context_recall`` reads the answerer-read rows and
  ``latency_ms`` is the page's total time.

These tables, with ``questions``, make the rulings run a side that
``rulegauge.regression.compare`` can read (:func:`rulings_as_run_tables`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from rulegauge.answering.answer_metrics import AnswerContext, score_answer
from rulegauge.answering.citations import CitedPassage, citation_stats, parse_markers, resolve
from rulegauge.answering.fence import DEFAULT_PARAMS, SERVICE_PARAMS, check
from rulegauge.answering.read import ReadRow
from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import RulegaugeError
from rulegauge.core.tablerows import records
from rulegauge.core.tablerows import rows as table_rows
from rulegauge.corpus.records import page_key, split_page_key
from rulegauge.goldset.parse import load_goldset
from rulegauge.goldset.records import GoldSet, Question
from rulegauge.metrics.ranking import DEFAULT_METRICS, score_ranking
from rulegauge.rulings.mapping import DocTarget, Mapping, load_mapping
from rulegauge.rulings.match import Match, ProdDoc, RulingKey, map_documents, match_rulings
from rulegauge.store.rundir import Run, RunWriter
from rulegauge.store.tables import TABLES

CONFIG_ID = "production"
ANSWERER = "production"
RULING_TABLES = ("rulings", "ruling_refs", "ruling_reads", "ruling_citations")


@dataclass(frozen=True)
class Scored:
    """Frames produced by :func:`score_rulings`, by table name."""

    frames: tuple[tuple[str, pd.DataFrame], ...]
    matches: tuple[Match, ...]

    def table(self, name: str) -> pd.DataFrame:
        return dict(self.frames)[name]


def _none(x: Any) -> Any:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def page_id(doc_id: Any, page: Any, docs: dict[str, DocTarget]) -> str | None:
    """The gold ``doc#page`` of a production (document, page), through the document
    mapping and its page offset; None when either is missing or the document is unmapped."""
    if _none(page) is None or _none(doc_id) is None:
        return None
    t = docs.get(str(doc_id))
    return (page_key(t.doc_id, int(page) + t.page_offset) if t
            else page_key(f"production:{doc_id}", int(page)))


def fence_columns(text: Any, reported: dict[str, Any]) -> dict[str, Any]:
    """Reported and recomputed fence figures of one answer text (module docstring)."""
    out = {"fence_reported_passed": _none(reported.get("fence_passed")),
           "fence_reported_density": _none(reported.get("fence_letter_density")),
           "fence_reported_nonspace": _none(reported.get("fence_nonspace_chars")),
           "fence_reported_glyphs": _none(reported.get("fence_glyph_tokens"))}
    if not isinstance(text, str):
        return {**out, "fence_passed": None, "fence_letter_density": None,
                "fence_nonspace_chars": None, "fence_glyph_tokens": None, "fence_agrees": None}
    f = check(text, SERVICE_PARAMS)
    rep = [out["fence_reported_passed"], out["fence_reported_density"],
           out["fence_reported_nonspace"], out["fence_reported_glyphs"]]
    agrees = None if any(x is None for x in rep) else bool(
        rep[0] == f.passed and int(rep[2]) == f.nonspace_chars and int(rep[3]) == f.glyph_tokens
        and abs(float(rep[1]) - f.letter_density) <= 0.5e-5 + 1e-12)
    return {**out, "fence_passed": f.passed, "fence_letter_density": f.letter_density,
            "fence_nonspace_chars": f.nonspace_chars, "fence_glyph_tokens": f.glyph_tokens,
            "fence_agrees": agrees}


def _answer_metrics(q: Question, r: dict[str, Any], reads: pd.DataFrame, cits: pd.DataFrame,
                    docs: dict[str, DocTarget]) -> dict[str, float]:
    def split(pid: str | None) -> tuple[str, int]:
        return split_page_key(pid or page_key("production:?", 0))

    read_rows: list[ReadRow] = []
    for x in table_rows(reads, index=True):
        doc, page = split(page_id(x.doc_id, x.page, docs))
        read_rows.append(ReadRow(int(x.read_at), f"production:{x.question_id}:{x.read_at}", doc,
                            str(_none(x.doc_kind) or ""), page, str(_none(x.heading) or ""),
                            int(_none(x.fused_rank) or 0), float(_none(x.fused_score) or math.nan),
                            int(x.read_at), math.nan, str(_none(x.carried_by) or ""),
                            str(_none(x.slot) or "")))
    passages = []
    for c in table_rows(cits, index=True):
        doc, page = split(page_id(c.doc_id, c.page, docs))
        passages.append(CitedPassage(int(c.n), f"production:{c.question_id}:[{c.n}]", doc, page))
    answer_text = r.get("answer_text")
    text = answer_text if isinstance(answer_text, str) else ""
    found = resolve(parse_markers(text), passages, q.relevant_pages)
    stats = citation_stats(found, [[str(ref) for ref in req] for req in q.requirements])
    ctx = AnswerContext(q, tuple(read_rows), str(r["outcome"]), text,
                        float(_none(r.get("total_ms")) or math.nan), found, stats,
                        check(text, DEFAULT_PARAMS))
    return score_answer(ctx)


def score_rulings(tables: dict[str, pd.DataFrame], gs: GoldSet, mapping: Mapping | None = None,
                  metrics: Sequence[str] | None = None) -> Scored:
    """Score the ruling tables of a rulings run on ``gs`` (see the module docstring)."""
    mapping = mapping or Mapping()

    wanted = tuple(metrics or DEFAULT_METRICS)
    rulings = tables["rulings"]
    recs = {str(r["question_id"]): r for r in records(rulings)}
    keys = [RulingKey(q, _none(r["question"]), _none(r["game"]), _none(r["edition"]))
            for q, r in recs.items()]
    matches = match_rulings(keys, gs, mapping)
    groups = {name: dict(tuple(tables[name].groupby("question_id", sort=False)))
              for name in RULING_TABLES[1:]}
    empty = {name: tables[name].iloc[0:0] for name in RULING_TABLES[1:]}
    match_rows, metric_rows, answer_rows = [], [], []
    for m in matches:
        r = recs[m.question_id]
        part = {n: groups[n].get(m.question_id, empty[n]) for n in groups}
        prod = {str(d): ProdDoc(str(d), _none(k), _none(t)) for f in part.values()
                for d, k, t in zip(f["doc_id"], f["doc_kind"], f["doc_title"], strict=True)
                if _none(d) is not None}
        docs = map_documents(prod.values(), _none(r["game"]), _none(r["edition"]), gs, mapping)
        row: dict[str, Any] = {"question_id": m.question_id, "gold_question_id": m.gold_question_id,
                               "goldset": gs.name, "matched_by": m.matched_by, "reason": m.reason,
                               "counted": m.counted, "unmapped_docs": sorted(set(prod) - set(docs)),
                               "citation_precision": None, "citation_recall": None,
                               **fence_columns(r.get("answer_text"), r)}
        if m.counted and m.gold_question_id is not None:
            q = gs.question_by_id[m.gold_question_id]
            refs = part["ruling_refs"].sort_values("fused_rank")
            if len(refs):
                pages = [p for p in (page_id(d, pg, docs) for d, pg in
                                     zip(refs["doc_id"], refs["page"], strict=True)) if p]
                top = float(_none(refs["fused_score"].iloc[0]) or 0.0)
                ceiling = _none(r.get("ceiling"))
                vals = score_ranking(pages, q, wanted, top, float(ceiling or 0.0))
                if ceiling is None:
                    vals.pop("top_score_ratio", None)  # unknown arm count: no ceiling, no row
                metric_rows += [{"question_id": q.question_id, "config_id": CONFIG_ID, "metric": k,
                                 "value": v, "answerable": q.answerable} for k, v in vals.items()]
            else:
                row["reason"] = "no passage-search rows on the page: retrieval not scored"
            if _none(r.get("outcome")) is None:
                row["reason"] = "; ".join(x for x in (row["reason"], "the page shows no outcome: "
                                                      "answer not scored") if x)
            else:
                ans = _answer_metrics(q, r, part["ruling_reads"], part["ruling_citations"], docs)
                row["citation_precision"] = ans.get("citation_precision")
                row["citation_recall"] = ans.get("citation_recall")
                answer_rows += [{"question_id": q.question_id, "config_id": CONFIG_ID,
                                 "answerer": ANSWERER, "metric": k, "value": v,
                                 "answerable": q.answerable} for k, v in ans.items()
                                if not math.isnan(v)]  # e.g. latency when no total time
        match_rows.append(row)
    return Scored(_frames(match_rows, metric_rows, answer_rows, gs, matches), matches)


def _frames(match_rows: list[dict[str, Any]], metric_rows: list[dict[str, Any]],
            answer_rows: list[dict[str, Any]], gs: GoldSet,
            matches: Sequence[Match]) -> tuple[tuple[str, pd.DataFrame], ...]:
    def frame(name: str, rows: list[dict[str, Any]]) -> pd.DataFrame:
        return pd.DataFrame(rows, columns=[c.name for c in TABLES.get(name).columns])

    counted = {m.gold_question_id for m in matches if m.counted}
    questions = [{"question_id": q.question_id, "goldset": gs.name, "language": q.language,
                  "question": q.question, "game": q.game, "tags": list(q.tags),
                  "requirements": json.dumps([[str(r) for r in req] for req in q.requirements],
                                             ensure_ascii=False),
                  "n_requirements": len(q.requirements), "answerable": q.answerable}
                 for q in gs.questions if q.question_id in counted]
    return (("ruling_matches", frame("ruling_matches", match_rows)),
            ("metrics", frame("metrics", metric_rows)),
            ("answer_metrics", frame("answer_metrics", answer_rows)),
            ("questions", frame("questions", questions)))


def score_run(run_path: Path, goldset_path: Path, mapping_path: Path | None = None,
              metrics: Sequence[str] | None = None) -> Scored:
    """Score a rulings run in place: write its ``ruling_matches``, ``metrics``,
    ``answer_metrics`` and ``questions`` tables and record the gold set (name,
    path, SHA-256) and mapping file in the manifest."""
    run = Run(Path(run_path))
    if run.manifest.get("kind") != "rulings":
        raise RulegaugeError(f"{run_path} is a {run.manifest.get('kind')!r} run, not a rulings run "
                           "(make one with: rulegauge rulings import FILES)")
    gs = load_goldset(goldset_path, check_pages=False, allow_outside=True)
    mapping = load_mapping(mapping_path) if mapping_path else Mapping()
    scored = score_rulings({n: run.table(n) for n in RULING_TABLES}, gs, mapping, metrics)
    writer = RunWriter(run.path)
    for name, df in scored.frames:
        writer.write_table(name, df)
    writer.update_manifest({
        "goldset": {"name": gs.name, "path": gs.path, "sha256": gs.sha256,
                    "questions": len(gs.questions), "derived": gs.derived,
                    "page_basis": gs.page_basis},
        "rulings": {"mapping": ({"path": str(mapping_path),
                                 "sha256": file_sha256(Path(mapping_path))}
                                if mapping_path else None),
                    "matched": sum(m.counted for m in scored.matches)}})
    return scored


def rulings_as_run_tables(run: Any) -> dict[str, pd.DataFrame]:
    """The ``metrics``, ``answer_metrics`` and ``questions`` tables of a scored rulings
    run (config ``production``), for ``rulegauge.regression.compare``; raises when the run has not
    been scored on a gold set yet."""
    if (run.manifest or {}).get("kind") != "rulings":
        raise RulegaugeError(f"run {run.run_id} is not a rulings run")
    if not run.has_table("metrics"):
        raise RulegaugeError(f"rulings run {run.run_id} has not been scored on a gold set: run "
                           f"rulegauge rulings score {run.run_id} --goldset GOLDSET.yaml")
    return {name: run.table(name) for name in ("metrics", "answer_metrics", "questions")}
