"""Oracle parity with ir-measures and ranx, any-of questions included, both ways round.

* export -> oracle: the files ``rulegauge export`` writes, read by ir-measures and ranx
  as their users read them (no ``make_comparable``), give rulegauge's per-question
  hit@k, P@k, MRR@k and nDCG@k on every answerable question; recall@k equals R@k
  only without any-of groups, and equals the requirements qrels' Success@k averaged
  per question everywhere.
* oracle input -> rulegauge: a TREC run and a requirements qrels written here (not by
  rulegauge) enter through ``goldset from-qrels`` and an external arm; rulegauge's
  metrics equal what ir-measures and ranx compute from those same files.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import ir_measures
import numpy as np
import pytest
from ir_measures import RR, P, R, Success, nDCG

from rulegauge.interop.export import export_run, split_requirement_qid
from rulegauge.interop.qrels import goldset_from_qrels
from rulegauge.metrics.ranking import DEFAULT_METRICS
from rulegauge.pipeline.options import RunOptions
from rulegauge.pipeline.retrieval import SAMPLE_GOLDSET, run
from rulegauge.store.rundir import Run
from tests.helpers.common import LEXICAL

CID = "rrf_k60_bm25+boost"
MEASURES = {"hit@5": Success @ 5, "P@5": P @ 5, "MRR@10": RR @ 10, "nDCG@10": nDCG @ 10}
METRICS = (*DEFAULT_METRICS, "P@5")
RANX = {"hit@5": "hit_rate@5", "P@5": "precision@5", "MRR@10": "mrr@10", "nDCG@10": "ndcg@10"}


@pytest.fixture(scope="module")
def base_run(tmp_path_factory) -> Run:
    return Run(run(RunOptions(config=LEXICAL, runs_dir=tmp_path_factory.mktemp("runs"),
                              run_id="base", metrics=METRICS)).path)


@pytest.fixture(scope="module")
def exported(base_run, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export")
    export_run(base_run, out)
    return out


def _rulegauge(run_: Run, config: str) -> dict[tuple[str, str], float]:
    m = run_.table("metrics")
    m = m[(m["config_id"] == config) & m["answerable"]]
    return {(r.question_id, r.metric): float(r.value) for r in m.itertuples()}


def _requirements(run_: Run) -> dict[str, list[list[str]]]:
    q = run_.table("questions")
    return {r.question_id: json.loads(r.requirements) for r in q.itertuples() if r.answerable}


def _per_query(measure, qrels: Path, trec: Path) -> dict[str, float]:
    return {x.query_id: x.value for x in ir_measures.iter_calc(
        [measure], list(ir_measures.read_trec_qrels(str(qrels))),
        list(ir_measures.read_trec_run(str(trec))))}


def _requirement_recall(per_req: dict[str, float]) -> dict[str, float]:
    by_q: dict[str, list[float]] = defaultdict(list)
    for qid, v in sorted(per_req.items()):
        by_q[split_requirement_qid(qid)[0]].append(v)
    return {q: float(np.mean(v)) for q, v in by_q.items()}


def _expanded_run(trec: Path, reqs: dict[str, list[list[str]]], out: Path) -> Path:
    """The run with each question's lines repeated under each requirement query id."""
    lines = []
    for raw in trec.read_text(encoding="utf-8").splitlines():
        qid, rest = raw.split(" ", 1)
        lines += [f"{qid}::{n} {rest}" for n in range(1, len(reqs.get(qid, [])) + 1)]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


# ---------------------------------------------------------------------------
# export -> oracle
# ---------------------------------------------------------------------------

def test_ir_measures_matches_the_rulegauge_per_question_with_any_of(base_run, exported, tmp_path):
    reqs = _requirements(base_run)
    any_of = {q for q, rs in reqs.items() if any(len(r) > 1 for r in rs)}
    assert len(any_of) >= 10  # the sample's any-of questions are in the comparison
    ours = _rulegauge(base_run, CID)
    trec = exported / f"{CID}.trec"
    for metric, measure in MEASURES.items():
        ref = _per_query(measure, exported / "qrels.txt", trec)
        assert set(ref) == set(reqs), metric  # every answerable question, none dropped
        for qid in reqs:
            assert ours[(qid, metric)] == pytest.approx(ref[qid], abs=1e-12), (metric, qid)
    # recall@5: R@5 over pages only where requirements are single pages
    r5 = _per_query(R @ 5, exported / "qrels.txt", trec)
    differs = {q for q in reqs if abs(r5[q] - ours[(q, "recall@5")]) > 1e-12}
    assert differs and differs <= any_of
    # ... and the requirements qrels' Success@5, averaged per question, everywhere
    expanded = _expanded_run(trec, reqs, tmp_path / "expanded.trec")
    by_req = _requirement_recall(_per_query(Success @ 5, exported / "qrels-requirements.txt",
                                            expanded))
    assert set(by_req) == set(reqs)
    for qid in reqs:
        assert ours[(qid, "recall@5")] == pytest.approx(by_req[qid], abs=1e-12), qid


@pytest.mark.slow  # ranx compiles numba kernels on first use (several seconds)
def test_ranx_reads_the_export_without_make_comparable(base_run, exported):
    from ranx import Qrels, compare, evaluate, fuse
    from ranx import Run as RanxRun

    qrels = Qrels.from_file(str(exported / "qrels.txt"), kind="trec")
    names = [CID, "arm-bm25", "arm-boost"]
    runs = [RanxRun.from_file(str(exported / f"{n}.trec"), kind="trec", name=n) for n in names]
    runs.append(RanxRun.from_file(str(exported / "arms" / "bm25.trec"), kind="trec", name="bm25"))
    reqs = _requirements(base_run)
    for n, r in zip(names, runs, strict=False):
        got = evaluate(qrels, r, list(RANX.values()), make_comparable=False)
        ours = _rulegauge(base_run, n)
        for metric, ranx_name in RANX.items():
            mean = float(np.mean([ours[(q, metric)] for q in reqs]))
            assert got[ranx_name] == pytest.approx(mean, abs=1e-12), (n, metric)
    report = compare(qrels, runs, ["ndcg@10"], make_comparable=False)
    assert set(report.to_dict()["model_names"]) == {*names, "bm25"}
    fused = fuse(runs[:3], method="rrf")
    assert set(fused.keys()) == set(reqs)
    # requirement form: hit_rate@5 per requirement query, averaged per question = recall@5
    qr = Qrels.from_file(str(exported / "qrels-requirements.txt"), kind="trec")
    rows = RanxRun.from_file(str(exported / f"{CID}.trec"), kind="trec").to_dict()
    expanded = RanxRun.from_dict({f"{q}::{n}": rows[q] for q, rs in reqs.items()
                                  for n in range(1, len(rs) + 1)})
    per = evaluate(qr, expanded, "hit_rate@5", return_mean=False)
    by_q = _requirement_recall(dict(zip(qr.keys(), map(float, per), strict=True)))
    ours = _rulegauge(base_run, CID)
    for qid in reqs:
        assert ours[(qid, "recall@5")] == pytest.approx(by_q[qid], abs=1e-12), qid


# ---------------------------------------------------------------------------
# oracle input -> rulegauge
# ---------------------------------------------------------------------------

def _oracle_inputs(base_run: Run, folder: Path) -> tuple[Path, Path, Path, dict[str, list]]:
    """A seeded random TREC page run and a requirements qrels (with any-of groups)
    for 20 of the sample's questions, written here in the oracles' own formats."""
    rng = np.random.default_rng(20261130)
    chunks = base_run.table("chunks")
    pages = sorted({f"{d}#{p}" for d, p in zip(chunks["doc_id"], chunks["page"], strict=True)})
    q = base_run.table("questions").sort_values("question_id").head(20)
    reqs: dict[str, list[list[str]]] = {}
    qrels, run_lines = [], []
    for i, qid in enumerate(q["question_id"]):
        picks = rng.permutation(len(pages))
        # requirement 1: one page; requirement 2 (every other question): any of three
        groups = [[pages[picks[0]]]] + ([[pages[j] for j in picks[1:4]]] if i % 2 else [])
        reqs[qid] = groups
        qrels += [f"{qid}::{n} 0 {p} 1" for n, g in enumerate(groups, start=1) for p in g]
        ranked = [pages[j] for j in rng.permutation(len(pages))[:12]]
        run_lines += [f"{qid} Q0 {p} {r} {1.0 / r!r} oracle" for r, p in enumerate(ranked, 1)]
    (folder / "req.qrels").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    page_qrels = sorted({f"{split_requirement_qid(x.split()[0])[0]} 0 {x.split()[2]} 1"
                         for x in qrels})
    (folder / "page.qrels").write_text("\n".join(page_qrels) + "\n", encoding="utf-8")
    (folder / "run.trec").write_text("\n".join(run_lines) + "\n", encoding="utf-8")
    (folder / "qs.tsv").write_text("".join(f"{r.question_id}\t{r.question}\t{r.language}\n"
                                           for r in q.itertuples()), encoding="utf-8")
    return folder / "req.qrels", folder / "page.qrels", folder / "run.trec", reqs


def test_oracle_format_input_scored_by_the_rulegauge_matches_ir_measures(base_run, tmp_path):
    req_qrels, page_qrels, trec, reqs = _oracle_inputs(base_run, tmp_path)
    gold = goldset_from_qrels(req_qrels, tmp_path / "qs.tsv", SAMPLE_GOLDSET, tmp_path / "g.yaml")
    cfg = tmp_path / "ext.toml"
    cfg.write_text(f'[defaults]\nk = 60\ndepth = 100\n[arms.oracle]\nkind = "external"\n'
                   f'path = "{trec}"\n[grid]\nk = [60]\narms = [["oracle"]]\n', encoding="utf-8")
    scored = Run(run(RunOptions(goldset=gold, config=cfg, runs_dir=tmp_path, run_id="o",
                                   metrics=METRICS, allow_outside=True)).path)  # imported set
    ours = _rulegauge(scored, "arm-oracle")
    assert {q for q, _ in ours} == set(reqs)
    for metric, measure in MEASURES.items():
        ref = _per_query(measure, page_qrels, trec)
        for qid in reqs:
            assert ours[(qid, metric)] == pytest.approx(ref.get(qid, 0.0), abs=1e-12), (metric, qid)
    expanded = _expanded_run(trec, reqs, tmp_path / "expanded.trec")
    by_req = _requirement_recall(_per_query(Success @ 5, req_qrels, expanded))
    r5 = _per_query(R @ 5, page_qrels, trec)
    for qid in reqs:
        assert ours[(qid, "recall@5")] == pytest.approx(by_req.get(qid, 0.0), abs=1e-12), qid
        if all(len(g) == 1 for g in reqs[qid]):
            assert ours[(qid, "recall@5")] == pytest.approx(r5.get(qid, 0.0), abs=1e-12), qid


@pytest.mark.slow  # ranx's numba kernels
def test_oracle_format_input_scored_by_the_rulegauge_matches_ranx(base_run, tmp_path):
    from ranx import Qrels, evaluate
    from ranx import Run as RanxRun

    req_qrels, page_qrels, trec, reqs = _oracle_inputs(base_run, tmp_path)
    gold = goldset_from_qrels(req_qrels, tmp_path / "qs.tsv", SAMPLE_GOLDSET, tmp_path / "g.yaml")
    cfg = tmp_path / "ext.toml"
    cfg.write_text(f'[arms.oracle]\nkind = "external"\npath = "{trec}"\n'
                   '[grid]\narms = [["oracle"]]\n', encoding="utf-8")
    scored = Run(run(RunOptions(goldset=gold, config=cfg, runs_dir=tmp_path, run_id="o",
                                   metrics=METRICS, allow_outside=True)).path)  # imported set
    ours = _rulegauge(scored, "arm-oracle")
    got = evaluate(Qrels.from_file(str(page_qrels), kind="trec"),
                   RanxRun.from_file(str(trec), kind="trec"), list(RANX.values()))
    for metric, ranx_name in RANX.items():
        mean = float(np.mean([ours[(q, metric)] for q in reqs]))
        assert got[ranx_name] == pytest.approx(mean, abs=1e-12), metric
