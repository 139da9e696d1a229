"""`rulegauge run --from RUN` re-scores stored arm ranks; size limits refuse before writing.

CLI cases run in fresh processes (subprocess), as a user runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from rulegauge.pipeline.grid_tables import StorePolicy, grid_size
from rulegauge.pipeline.options import RunOptions
from rulegauge.pipeline.rescore import rescore
from rulegauge.pipeline.retrieval import run
from rulegauge.store.rundir import Run
from tests.helpers.common import LEXICAL

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def rulegauge(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "import sys; from rulegauge.cli import main; sys.exit(main())",
                           *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    return run(RunOptions(config=LEXICAL, runs_dir=out, run_id="src"))


def test_from_reproduces_the_source_tables_for_the_same_grid(source, tmp_path):
    again = rescore(RunOptions(config=LEXICAL, runs_dir=tmp_path, run_id="again", source_run=source.path))
    a, b = Run(source.path), Run(again.path)
    assert a.has_table("question_facts") and b.has_table("question_facts")  # answer correctness survives
    for name in ("questions", "question_facts", "documents", "chunks", "arm_ranks", "configs", "fused", "metrics"):
        # every row carries the id of the run that wrote it: copied tables keep the source's
        pd.testing.assert_frame_equal(a.table(name).drop(columns="run_id"),
                                      b.table(name).drop(columns="run_id"), obj=name)
    m = b.manifest
    assert m["source_run"]["run_id"] == "src"
    assert m["source_run"]["tables"]["arm_ranks"] == a.manifest["tables"]["arm_ranks"]["sha256"]
    assert m["goldset"] == a.manifest["goldset"] and m["corpus"] == a.manifest["corpus"]


def test_from_scores_a_new_grid_and_stores_fused_rows_to_a_depth(source, tmp_path):
    grid = tmp_path / "g.toml"
    grid.write_text('[grid]\nk = [60, 10, 1]\narms = [["bm25", "boost"]]\n'
                    'weights = [{}, {boost = 0.5}, {bm25 = 2}]\n')
    new = rescore(RunOptions(config=grid, runs_dir=tmp_path, run_id="n", source_run=source.path,
                         store=StorePolicy(depth=5)))
    r = Run(new.path)
    cfg = r.table("configs")
    assert len(cfg) == 3 * 3 + 2  # grid plus arm-bm25, arm-boost
    met = r.table("metrics")
    assert set(met["config_id"]) == set(cfg["config_id"])
    assert len(met) == len(cfg) * r.table("questions").shape[0] * len(r.manifest["metrics"])
    fused = r.table("fused")
    assert fused["fused_rank"].max() == 5
    # the arm-bm25 config reproduces the source's arm-bm25 metrics
    src = Run(source.path).table("metrics")
    key = ["question_id", "metric"]
    pd.testing.assert_frame_equal(
        src[src["config_id"] == "arm-bm25"].sort_values(key).reset_index(drop=True)[[*key, "value"]],
        met[met["config_id"] == "arm-bm25"].sort_values(key).reset_index(drop=True)[[*key, "value"]])


def test_from_refuses_ranks_the_source_does_not_hold(source, tmp_path):
    grid = tmp_path / "deep.toml"
    grid.write_text('[defaults]\ndepth = 500\n[grid]\narms = [["bm25", "dense"]]\n')
    p = rulegauge("run", "--from", str(source.path), "-c", str(grid), "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert "dense" in p.stderr + p.stdout and "Traceback" not in p.stderr
    assert not (tmp_path / "out").exists()


def test_grid_of_tens_of_thousands_exits_2_and_writes_nothing(tmp_path):
    grid = tmp_path / "huge.toml"
    ks = ", ".join(str(k) for k in range(1, 101))
    ws = ", ".join(f"{{boost = {w}}}" for w in range(1, 51))
    grid.write_text(f'[grid]\nk = [{ks}]\narms = [["bm25", "boost"], ["dense", "boost"]]\nweights = [{ws}]\n')
    assert grid_size(grid) == 100 * 2 * 50
    p = rulegauge("run", "-c", str(grid), "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert p.returncode == 2
    assert "10,000 configs" in p.stderr + p.stdout and "Traceback" not in p.stderr
    assert not (tmp_path / "out").exists()


def test_fused_table_over_the_row_budget_exits_2_and_writes_nothing(tmp_path):
    p = rulegauge("run", "-c", str(LEXICAL), "-o", str(tmp_path / "out"), "--max-fused-rows", "1000",
                cwd=tmp_path)
    assert p.returncode == 2
    out = p.stderr + p.stdout
    assert "row budget is 1,000" in out and "--fused-depth" in out and "Traceback" not in p.stderr
    assert not (tmp_path / "out").exists()


def test_unknown_fused_config_exits_2(tmp_path):
    p = rulegauge("run", "-c", str(LEXICAL), "-o", str(tmp_path / "out"), "--fused-config", "nope",
                cwd=tmp_path)
    assert p.returncode == 2 and "nope" in p.stderr + p.stdout
    assert not (tmp_path / "out").exists()


def test_from_in_a_fresh_process_prints_and_writes(source, tmp_path):
    p = rulegauge("run", "--from", str(source.path), "-c", str(LEXICAL), "-o", str(tmp_path),
                "--run-id", "cli", "--fused-config", "none", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    r = Run(tmp_path / "cli")
    assert r.manifest["status"] == "complete" and len(r.table("fused")) == 0
    pd.testing.assert_frame_equal(r.table("metrics").drop(columns="run_id"),
                                  Run(source.path).table("metrics").drop(columns="run_id"))
    assert set(r.table("metrics")["run_id"]) == {"cli"}


def test_answering_a_config_whose_fused_rows_were_not_stored_is_refused(source, tmp_path):
    from rulegauge.answering.runner import answer_run
    from rulegauge.core.errors import RulegaugeError

    r = rescore(RunOptions(config=LEXICAL, runs_dir=tmp_path, run_id="nf", source_run=source.path,
                       store=StorePolicy(configs=("none",))))
    with pytest.raises(RulegaugeError, match="no fused rows stored"):
        answer_run(r.path, [("extractive", {})])


def test_from_carries_explicit_judgments_so_judged_metrics_stay_equal(source, tmp_path):
    import shutil

    from tests.helpers.common import REPO

    gold = tmp_path / "goldsets"
    shutil.copytree(REPO / "goldsets", gold)
    text = (gold / "sample.yaml").read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith("  - {id: bw-01,"))
    judged = line[:-1] + (", judged: [{ref: bw-rules#2, grade: 0, kind: human, judge: t},"
                          " {ref: bw-rules#4, grade: 0, kind: human, judge: t}]}")
    (gold / "sample.yaml").write_text(text.replace(line, judged), encoding="utf-8")
    src = run(RunOptions(goldset=gold / "sample.yaml", config=LEXICAL, runs_dir=tmp_path, run_id="j"))
    again = rescore(RunOptions(config=LEXICAL, runs_dir=tmp_path, run_id="j2", source_run=src.path))
    a, b = Run(src.path), Run(again.path)
    assert len(a.table("question_judgments")) == 2 and b.has_table("question_judgments")
    pd.testing.assert_frame_equal(a.table("metrics").drop(columns="run_id"),
                                  b.table("metrics").drop(columns="run_id"))
    plain = Run(source.path).table("metrics")
    judged_at = a.table("metrics")
    key = ["question_id", "config_id", "metric"]
    both = plain.merge(judged_at, on=key, suffixes=("_plain", "_judged"))
    moved = both[both["value_plain"] != both["value_judged"]]
    assert set(moved["question_id"]) == {"bw-01"}  # only the judged question's values move
    assert set(moved["metric"]) <= {"Judged@10", "nDCG(judged_only=True)@10"} and len(moved)


def test_from_fuses_the_stored_arm_scores_as_a_fresh_run_does(source, tmp_path):
    """Score-based methods read ``arm_ranks.score``: re-scored from the source, a CombSUM /
    hybrid grid gives the fresh run's metrics (not the all-tied scores of missing ones)."""
    grid = tmp_path / "m.toml"
    grid.write_text('[defaults]\ndepth = 100\n[grid]\nmethod = ["combsum", "hybrid"]\nnorm = ["min-max"]\n'
                    'arms = [["bm25", "boost"]]\nweights = [{}, {boost = 0.3}]\n')
    fresh = run(RunOptions(config=grid, runs_dir=tmp_path, run_id="fresh"))
    again = rescore(RunOptions(config=grid, runs_dir=tmp_path, run_id="again", source_run=source.path))
    a, b = Run(fresh.path).table("metrics"), Run(again.path).table("metrics")
    assert (a["config_id"].str.startswith("combsum")).any() and (a["config_id"].str.startswith("hybrid")).any()
    pd.testing.assert_frame_equal(a.drop(columns="run_id"), b.drop(columns="run_id"))
