"""``benchmarks/reproduce.py`` on the tidepool collection (tests/fixtures/beir), as a user runs it.

Its figures are checked against an independent chain: bm25s's ``lucene`` method on whole
documents (title and text, the preset's analyzer) and ir_measures' nDCG@10 and R@100 on
the collection's own qrels and ids.
"""

import json
import subprocess
import sys

import pytest

from rulegauge.arms.analyzers import lucene_english
from tests.helpers.common import FIXTURES, REPO

TIDEPOOL = FIXTURES / "beir" / "tidepool"
SCRIPT = REPO / "benchmarks" / "reproduce.py"


def reproduce(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=REPO)


def figures(stdout):
    out = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0].startswith(("arm-", "rrf_")):
            out[(parts[0], parts[1])] = (float(parts[2]), parts[3], parts[4])
    return out


def oracle_run():
    """bm25s-lucene's top 100 of every judged query (ties by id), its qrels, and ir_measures."""
    bm25s = pytest.importorskip("bm25s", reason="bm25s (a dev dependency) is the oracle")
    ir_measures = pytest.importorskip("ir_measures", reason="ir_measures (a dev dependency) is the oracle")
    analyze = lucene_english()
    docs = [json.loads(line) for line in (TIDEPOOL / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    model = bm25s.BM25(k1=0.9, b=0.4, method="lucene", dtype="float64")
    model.index([analyze(f"{d['title']}\n\n{d['text']}") for d in docs], show_progress=False)
    queries = {q["_id"]: q["text"] for q in map(json.loads, (TIDEPOOL / "queries.jsonl").read_text().splitlines())}
    lines = (TIDEPOOL / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]
    qrels = [ir_measures.Qrel(q, d, int(s)) for q, d, s in (line.split("\t") for line in lines)]
    ranked = {}
    for qid in sorted({r.query_id for r in qrels}):
        ids = model.get_tokens_ids(analyze(queries[qid]))
        scores = model.get_scores(ids)
        best = sorted(range(len(docs)), key=lambda i: (-scores[i], docs[i]["_id"]))[:100]
        ranked[qid] = [(docs[i]["_id"], float(scores[i])) for i in best if scores[i] > 0]
    return ranked, qrels, ir_measures


def oracle():
    ranked, qrels, ir_measures = oracle_run()
    run = [ir_measures.ScoredDoc(q, d, s) for q, hits in ranked.items() for d, s in hits]
    agg = ir_measures.calc_aggregate([ir_measures.nDCG @ 10, ir_measures.R @ 100], qrels, run)
    return {m: agg[ir_measures.parse_measure(n)] for m, n in (("nDCG@10", "nDCG@10"), ("recall@100", "R@100"))}


def test_import_beir_and_one_run_rank_as_bm25s_lucene(tmp_path):
    """The done-when of issue 35 through the CLI: ``goldset import-beir`` and one
    ``rulegauge run`` (lucene preset, whole documents, depth in documents) give every
    query's top 100 of bm25s-lucene (same ids in the same order, ties by id, scores to
    float64 rounding) and whole-document nDCG@10 within 0.005 of it."""
    from typer.testing import CliRunner

    from rulegauge.cli import app
    from rulegauge.store.rundir import Run

    runner = CliRunner()
    res = runner.invoke(app, ["goldset", "import-beir", str(TIDEPOOL), "--split", "test", "-o", str(tmp_path / "g")])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["run", "-g", str(tmp_path / "g" / "goldset.yaml"), "-c",
                              str(REPO / "docs" / "grids" / "beir-bm25.toml"), "--chunking", "page",
                              "--depth-unit", "page", "-o", str(tmp_path / "runs"), "--run-id", "t", "-q"])
    assert res.exit_code == 0, res.output
    run = Run(tmp_path / "runs" / "t")
    label = dict(zip(run.table("chunks")["chunk_id"], run.table("chunks")["page_label"], strict=True))
    ranks = run.table("arm_ranks").sort_values(["question_id", "rank"])
    ranked, _, _ = oracle_run()
    for qid, want in ranked.items():
        got = ranks[ranks["question_id"] == qid]
        assert [label[c] for c in got["chunk_id"]] == [d for d, _ in want], qid
        assert list(got["score"]) == pytest.approx([s for _, s in want], rel=1e-12), qid
    m = run.table("metrics")
    ndcg = m[(m["config_id"] == "arm-bm25") & (m["metric"] == "nDCG@10") & m["question_id"].isin(list(ranked))]
    assert abs(float(ndcg["value"].mean()) - oracle()["nDCG@10"]) < 0.005


def test_tidepool_figures_equal_bm25s_lucene_with_ir_measures():
    res = reproduce(TIDEPOOL, "--arms", "bm25")
    assert res.returncode == 0, res.stderr
    got = figures(res.stdout)
    want = oracle()
    for metric, value in want.items():
        ours, published, _ = got[("arm-bm25", metric)]
        assert abs(ours - value) < 5e-4, (metric, ours, value)  # printed to 4 decimals
        assert published == "-"
    assert "no published figures for 'tidepool'" in res.stdout
    assert "arm bm25: searching" in res.stderr  # progress on stderr, results on stdout


def test_a_known_collection_prints_the_published_figure_and_the_difference():
    res = reproduce(TIDEPOOL, "--arms", "bm25", "--collection", "scifact")
    assert res.returncode == 0, res.stderr
    ours, published, diff = figures(res.stdout)[("arm-bm25", "nDCG@10")]
    assert published == "0.6789" and diff == f"{ours - 0.6789:+.4f}"
    assert "regressions-beir-v1.0.0-scifact.flat.md" in res.stdout


def test_bad_input_exits_2_naming_the_file(tmp_path):
    res = reproduce(tmp_path, "--arms", "bm25")
    assert res.returncode == 2 and "corpus.jsonl: file not found" in res.stderr
    assert "Traceback" not in res.stderr
    assert reproduce(TIDEPOOL, "--arms", "sparse").returncode == 2
