"""End-to-end retrieval runs on the embedded sample (lexical arms: no model needed)."""

from __future__ import annotations

import json

import ir_measures
import numpy as np
import pandas as pd
import pytest
from ir_measures import RR, Success, nDCG

from rulegauge.arms.bm25 import BM25Arm
from rulegauge.core.errors import ProvenanceError
from rulegauge.pipeline.options import RunOptions
from rulegauge.pipeline.retrieval import SAMPLE_GOLDSET, run
from rulegauge.store.rundir import Run
from rulegauge.store.tables import TABLES
from tests.helpers.common import LEXICAL

CORE_TABLES = ("questions", "documents", "chunks", "arm_ranks", "fused", "metrics", "configs")


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    return run(RunOptions(config=LEXICAL, runs_dir=out, run_id="a"))


def test_run_writes_every_table_with_registered_schema(sample_run):
    r = Run(sample_run.path)
    assert r.manifest["status"] == "complete"
    for name in CORE_TABLES:
        df = r.table(name)
        assert len(df) > 0, name
        want = [c.name for c in TABLES.get(name).columns if not c.name.endswith("*")]
        assert set(want) <= set(df.columns), name
    assert {"rank_bm25", "rank_boost"} <= set(r.table("fused").columns)
    m = r.manifest
    assert m["goldset"]["sha256"] and m["corpus"]["content_hash"] and m["config"]["sha256"]
    assert m["arms"]["bm25"]["version"] and "commit" in m["git"]
    assert m["packages"]["rank-bm25"] == "0.2.2"


def test_every_question_has_every_metric(sample_run):
    r = Run(sample_run.path)
    metrics, questions, configs = r.table("metrics"), r.table("questions"), r.table("configs")
    counts = metrics.groupby(["config_id", "metric"]).size()
    assert (counts == len(questions)).all()
    assert len(counts) == len(configs) * len(r.manifest["metrics"])
    unans = metrics[~metrics["answerable"] & (metrics["metric"] == "recall@5")]
    assert len(unans) == len(configs) * int((~questions["answerable"]).sum()) > 0


def test_fused_scores_recomputed_from_arm_ranks(sample_run):
    r = Run(sample_run.path)
    ar, fused, configs = r.table("arm_ranks"), r.table("fused"), r.table("configs")
    for c in configs.itertuples():
        f = fused[fused["config_id"] == c.config_id]
        expected = np.zeros(len(f))
        for arm, w, depth in zip(c.arms, c.weights, c.depths, strict=True):
            a = ar[(ar["arm"] == arm) & (ar["rank"] <= depth)].set_index(["question_id", "chunk_id"])["rank"]
            ranks = a.reindex(pd.MultiIndex.from_frame(f[["question_id", "chunk_id"]])).to_numpy()
            expected += np.where(np.isnan(ranks), 0.0, w / (c.k + np.nan_to_num(ranks, nan=1.0)))
        assert np.abs(expected - f["fused_score"].to_numpy()).max() <= 1e-12
        assert np.allclose(f["ceiling"], sum(w / (c.k + 1) for w in c.weights), atol=0, rtol=0)
        # fused ranks restart at 1 and follow score desc, chunk id asc
        for _, g in f.groupby("question_id"):
            g2 = g.sort_values(["fused_score", "chunk_id"], ascending=[False, True])
            assert g2["fused_rank"].tolist() == list(range(1, len(g) + 1))


def test_page_metrics_match_ir_measures_on_sample(sample_run):
    r = Run(sample_run.path)
    fused, metrics, questions = r.table("fused"), r.table("metrics"), r.table("questions")
    qrels = pd.DataFrame([(q.question_id, p, 1) for q in questions.itertuples()
                          for req in json.loads(q.requirements) for p in req],
                         columns=["query_id", "doc_id", "relevance"]).drop_duplicates()
    answerable = set(questions.loc[questions["answerable"], "question_id"])
    measures = {"hit@5": Success @ 5, "MRR@10": RR @ 10, "nDCG@10": nDCG @ 10}
    for cid, f in fused.groupby("config_id"):
        pages = f.sort_values(["question_id", "fused_rank"]).drop_duplicates(["question_id", "doc_id", "page"])
        run_df = pd.DataFrame({"query_id": pages["question_id"],
                               "doc_id": pages["doc_id"] + "#" + pages["page"].astype(str),
                               "score": 1.0 / pages["page_rank"]})
        ref = {(x.query_id, str(x.measure)): x.value
               for x in ir_measures.iter_calc(list(measures.values()), qrels, run_df)}
        mine = metrics[metrics["config_id"] == cid].set_index(["question_id", "metric"])["value"]
        for qid in answerable:
            for name, measure in measures.items():
                assert mine[(qid, name)] == pytest.approx(ref.get((qid, str(measure)), 0.0), abs=1e-12)


def test_same_inputs_give_identical_tables(sample_run, tmp_path):
    again = run(RunOptions(config=LEXICAL, runs_dir=tmp_path, run_id="b"))
    a, b = Run(sample_run.path), Run(again.path)
    for name in CORE_TABLES:
        # every row carries its run's id; everything else is identical
        assert set(a.table(name)["run_id"]) == {a.run_id} and set(b.table(name)["run_id"]) == {"b"}
        pd.testing.assert_frame_equal(a.table(name).drop(columns="run_id"),
                                      b.table(name).drop(columns="run_id"))


def test_interrupted_run_resumes_without_redoing_arms(tmp_path, monkeypatch):
    calls = []
    real_prepare = BM25Arm.prepare

    def counting(self, corpus, ctx):
        calls.append(1)
        return real_prepare(self, corpus, ctx)

    monkeypatch.setattr(BM25Arm, "prepare", counting)
    import rulegauge.pipeline.lifecycle as lifecycle_module

    def boom(*a, **k):
        raise KeyboardInterrupt

    with monkeypatch.context() as mp:
        mp.setattr(lifecycle_module, "grid_tables", boom)
        with pytest.raises(KeyboardInterrupt):
            run(RunOptions(config=LEXICAL, runs_dir=tmp_path, run_id="r"))
    assert calls == [1]
    partial = Run(tmp_path / "r", verify=True)
    # never left running: the manifest says failed, and why; the finished arms are kept for the resume
    assert partial.manifest["status"] == "failed" and partial.manifest["error"] == "interrupted (KeyboardInterrupt)"
    assert partial.has_table("arm_ranks")
    done = run(RunOptions(config=LEXICAL, runs_dir=tmp_path, run_id="r"))
    assert calls == [1]  # bm25 was not prepared again
    assert Run(done.path).manifest["status"] == "complete"


def test_resume_with_changed_inputs_is_refused(tmp_path):
    run(RunOptions(config=LEXICAL, runs_dir=tmp_path, run_id="r"))
    other = tmp_path / "other.toml"
    other.write_text(LEXICAL.read_text().replace("k = [60]", "k = [10]"))
    with pytest.raises(ProvenanceError, match="config sha256"):
        run(RunOptions(config=other, runs_dir=tmp_path, run_id="r"))


def test_tampered_table_fails_provenance_check(sample_run, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(sample_run.path, copy)
    (copy / "metrics.parquet").write_bytes(b"garbage")
    with pytest.raises(ProvenanceError, match=r"metrics\.parquet does not match"):
        Run(copy)


def test_sample_goldset_is_embedded():
    assert SAMPLE_GOLDSET.exists()
