"""TREC export/import, external arms, qrels import: round trips against the harness."""

from __future__ import annotations

import json

import ir_measures
import pandas as pd
import pytest
from ir_measures import RR, R, nDCG
from typer.testing import CliRunner

from harness.cli import app
from harness.core.errors import ValidationError
from harness.goldset.parse import load_goldset
from harness.interop.qrels import goldset_from_qrels
from harness.interop.trec import export_run, read_run, to_ir_measures, to_ranx
from harness.pipeline.retrieval import SAMPLE_GOLDSET, RunOptions, run
from harness.store.rundir import Run
from tests.helpers.common import LEXICAL

CID = "rrf_k60_bm25+boost"


@pytest.fixture(scope="module")
def base_run(tmp_path_factory):
    return Run(run(RunOptions(config=LEXICAL, runs_dir=tmp_path_factory.mktemp("runs"), run_id="base")).path)


def test_trec_export_evaluated_by_ir_measures_matches_harness(base_run, tmp_path):
    files = export_run(base_run, tmp_path, level="page", scores="rank")
    assert {f.name for f in files} >= {"arm-bm25.trec", "arm-boost.trec", f"{CID}.trec", "qrels.txt"}
    run_df = pd.DataFrame([(x.qid, x.docid, x.score) for x in read_run(tmp_path / f"{CID}.trec")],
                          columns=["query_id", "doc_id", "score"])
    lines = (tmp_path / "qrels.txt").read_text().splitlines()
    qrels = pd.DataFrame([[*ln.split()[::2], int(ln.split()[3])] for ln in lines],
                         columns=["query_id", "doc_id", "relevance"])
    ref = {(x.query_id, str(x.measure)): x.value
           for x in ir_measures.iter_calc([R @ 5, RR @ 10, nDCG @ 10], qrels, run_df)}
    q = base_run.table("questions")
    m = base_run.table("metrics")
    m = m[m["config_id"] == CID].set_index(["question_id", "metric"])["value"]
    single = {r.question_id for r in q.itertuples()
              if r.answerable and all(len(req) == 1 for req in json.loads(r.requirements))}
    assert single
    for qid in q.loc[q["answerable"], "question_id"]:
        assert m[(qid, "MRR@10")] == pytest.approx(ref.get((qid, "RR@10"), 0.0), abs=1e-12)
        assert m[(qid, "nDCG@10")] == pytest.approx(ref.get((qid, "nDCG@10"), 0.0), abs=1e-12)
        if qid in single:  # requirement recall equals R@k without any-of alternatives
            assert m[(qid, "recall@5")] == pytest.approx(ref.get((qid, "R@5"), 0.0), abs=1e-12)


def test_python_exports_for_ranx_and_ir_measures(base_run):
    qrels, rows = to_ir_measures(base_run, CID)
    assert list(qrels.columns) == ["query_id", "doc_id", "relevance"]
    assert list(rows.columns) == ["query_id", "doc_id", "score"]
    rq, rr = to_ranx(base_run, CID)
    assert set(rr.keys()) <= set(base_run.table("questions")["question_id"])
    assert len(rq.keys()) > 0


def test_external_arm_with_exported_bm25_reproduces_fused_results(base_run, tmp_path):
    export_run(base_run, tmp_path / "trec", level="chunk", scores="original", configs=[])
    cfg = tmp_path / "ext.toml"
    cfg.write_text(f"""
[defaults]
k = 60
depth = 100
[arms.bm25x]
kind = "external"
path = "{tmp_path / 'trec' / 'arm-bm25.trec'}"
[grid]
k = [60]
arms = [["bm25x", "boost"]]
""")
    again = Run(run(RunOptions(config=cfg, runs_dir=tmp_path, run_id="ext")).path)
    a = base_run.table("fused")
    a = a[a["config_id"] == CID].drop(columns=["config_id", "run_id"]).reset_index(drop=True)
    b = again.table("fused")
    b = b[b["config_id"] == "rrf_k60_bm25x+boost"].drop(
        columns=["config_id", "run_id"]).reset_index(drop=True)
    b = b.rename(columns={"rank_bm25x": "rank_bm25"})[a.columns]
    pd.testing.assert_frame_equal(a, b)
    assert again.manifest["arms"]["bm25x"]["kind"] == "external"


def test_external_arm_reports_unmatched_ids(base_run, tmp_path):
    bad = tmp_path / "bad.trec"
    bad.write_text("bw-01 Q0 nosuch#p0001.c000 1 2.0 x\nbw-01 Q0 bw-rules#3 2 1.0 x\nzz-99 Q0 bw-rules#4 1 1.0 x\n")
    cfg = tmp_path / "bad.toml"
    cfg.write_text(f'[arms.ext]\nkind = "external"\npath = "{bad}"\n[grid]\narms = [["ext", "boost"]]\n')
    with pytest.raises(ValidationError) as ei:
        run(RunOptions(config=cfg, runs_dir=tmp_path, run_id="bad"))
    text = str(ei.value)
    assert f"{bad}:1: id 'nosuch#p0001.c000' matches no chunk" in text
    assert f"{bad}:3: question 'zz-99' is not in the gold set" in text
    cfg.write_text(cfg.read_text().replace('path = ', 'on_unmatched = "warn"\npath = '))
    ok = Run(run(RunOptions(config=cfg, runs_dir=tmp_path, run_id="warn")).path)
    assert ok.manifest["arms"]["ext"]["unmatched_count"] == 2


def test_goldset_from_qrels_round_trip(base_run, tmp_path):
    export_run(base_run, tmp_path, configs=[], arms=[])
    q = base_run.table("questions")
    (tmp_path / "questions.tsv").write_text(
        "".join(f"{r.question_id}\t{r.question}\t{r.language}\n" for r in q.itertuples()), encoding="utf-8")
    out = goldset_from_qrels(tmp_path / "qrels.txt", tmp_path / "questions.tsv", SAMPLE_GOLDSET,
                             tmp_path / "imported.yaml")
    gs = load_goldset(out)
    orig = load_goldset(SAMPLE_GOLDSET)
    for a, b in zip(orig.questions, gs.questions, strict=True):
        assert a.question_id == b.question_id and a.relevant_pages == b.relevant_pages
        assert a.answerable == b.answerable


def test_qrels_import_reports_every_problem(tmp_path):
    (tmp_path / "q.tsv").write_text("a\tWhat?\nbad line\n")
    (tmp_path / "qrels").write_text("a 0 bw-rules#2 1\nzz 0 bw-rules#2 1\n")
    with pytest.raises(ValidationError, match=r"bad line|expected qid"):
        goldset_from_qrels(tmp_path / "qrels", tmp_path / "q.tsv", SAMPLE_GOLDSET, tmp_path / "o.yaml")


def test_cli_export(base_run, tmp_path):
    res = CliRunner().invoke(app, ["export", str(base_run.path), "--format", "trec", "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert (tmp_path / f"{CID}.trec").exists()
    res = CliRunner().invoke(app, ["export", str(base_run.path), "--format", "csv"])
    assert res.exit_code == 2 and "only trec" in res.output
