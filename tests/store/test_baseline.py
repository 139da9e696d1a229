"""rulegauge.store.baseline: compact baselines, loading sides, and the baseline save command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from rulegauge.cli.compare import register
from rulegauge.core.errors import RulegaugeError
from rulegauge.regression.compare import compare_runs
from rulegauge.regression.gate_report import COMPARISON_FORMATS
from rulegauge.regression.pairing import ConfigPair
from rulegauge.store.baseline import BASELINE_FUSED_TOP, Side, load_side, save_baseline
from rulegauge.store.rundir import Run, file_sha256
from tests.helpers.comparison import answer_tables, base_lists, move, qid, write_run

TWO_CONFIGS = (("c3", "prod", "grid"), ("arm-bm25", "arm-bm25", "arm"))


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    ans, am = answer_tables({"fence_pass": dict.fromkeys([qid(1), qid(2)], 1.0)})
    return write_run(tmp_path / "runs" / "run-a", base_lists(), configs=TWO_CONFIGS,
                     answers=ans, answer_metrics=am)


def test_baseline_keeps_metrics_manifest_and_relevant_ranks(run_dir: Path, tmp_path: Path) -> None:
    run = Run(run_dir)
    path = save_baseline(run, tmp_path / "baselines" / "sample")
    b = Run(path)  # hashes are checked on open
    assert b.tables() == ["answer_metrics", "answers", "configs", "fused", "metrics", "questions"]
    assert b.manifest["baseline"]["name"] == "sample"
    assert b.manifest["baseline"]["source_run"] == "run-a"
    assert b.manifest["goldset"] == run.manifest["goldset"]
    assert b.manifest["corpus"] == run.manifest["corpus"]
    assert b.table("metrics").shape == run.table("metrics").shape
    fused = b.table("fused")
    # the rows of relevant pages, and the top 10 of every list (for RBO and Jaccard)
    full = run.table("fused")
    kept = full[full["relevant"] | (full["fused_rank"] <= BASELINE_FUSED_TOP)]
    assert len(fused) == len(kept) and fused["relevant"].sum() == 20 * 2
    assert b.manifest["baseline"]["fused_top"] == BASELINE_FUSED_TOP == 10
    assert set(b.table("answers")["text"]) == {""}
    assert sum(p.stat().st_size for p in path.iterdir()) < 100_000


def test_saving_twice_writes_the_same_tables(run_dir: Path, tmp_path: Path) -> None:
    a = save_baseline(Run(run_dir), tmp_path / "a")
    b = save_baseline(Run(run_dir), tmp_path / "b")
    for name in ("metrics", "fused", "questions", "configs"):
        assert file_sha256(a / f"{name}.parquet") == file_sha256(b / f"{name}.parquet")


def test_baseline_can_keep_selected_configs_only(run_dir: Path, tmp_path: Path) -> None:
    b = Run(save_baseline(Run(run_dir), tmp_path / "b", configs=["prod"]))
    assert set(b.table("metrics")["config_id"]) == {"c3"}
    assert b.manifest["baseline"]["configs"] == ["c3"]


def test_refuses_incomplete_runs_and_existing_baselines(tmp_path: Path, run_dir: Path) -> None:
    partial = write_run(tmp_path / "partial", base_lists(), status="running")
    with pytest.raises(RulegaugeError, match="not complete"):
        save_baseline(Run(partial), tmp_path / "x")
    save_baseline(Run(run_dir), tmp_path / "b")
    with pytest.raises(RulegaugeError, match="already exists"):
        save_baseline(Run(run_dir), tmp_path / "b")
    save_baseline(Run(run_dir), tmp_path / "b", configs=["c3"], overwrite=True)
    assert set(Run(tmp_path / "b").table("metrics")["config_id"]) == {"c3"}
    assert not list(tmp_path.glob(".b.*"))  # no temporary folder left behind


def test_comparing_against_the_baseline_equals_comparing_against_the_run(
        run_dir: Path, tmp_path: Path) -> None:
    cand = Run(write_run(tmp_path / "cand", move(base_lists(), "q07", "rb#7", 7),
                         configs=TWO_CONFIGS,
                         arm_ranks={("q07", "rb#7"): {"dense": None}}))
    baseline = Run(save_baseline(Run(run_dir), tmp_path / "b"))
    full = compare_runs(Run(run_dir), cand, configs=["prod"], n_resamples=300)
    compact = compare_runs(baseline, cand, configs=["prod"], n_resamples=300)
    assert compact.metrics == full.metrics
    assert [c.pages for c in compact.changes] == [c.pages for c in full.changes]
    (lost,) = [c for c in compact.regressions() if c.metric == "hit@5"]
    assert lost.config == ConfigPair("c3", "c3") and lost.question_id == "q07"
    arms = {a.arm: (a.before, a.after) for a in lost.pages[0].arms}
    assert arms == {"bm25": (2, 7), "dense": (2, None), "boost": (2, 7)}
    assert compact.base.label == "baseline b (run run-a)"


class TablesSide:
    """A minimal Side: a manifest and tables in memory (like imported production rulings)."""

    def __init__(self, manifest: dict[str, Any], tables: dict[str, pd.DataFrame]) -> None:
        self.manifest = manifest
        self._tables = tables

    @property
    def run_id(self) -> str:
        return str(self.manifest["run_id"])

    def has_table(self, name: str) -> bool:
        return name in self._tables

    def table(self, name: str) -> pd.DataFrame:
        return self._tables[name]


def test_a_side_without_fused_ranks_still_compares(run_dir: Path, tmp_path: Path) -> None:
    run = Run(run_dir)
    side = TablesSide({k: run.manifest[k] for k in ("run_id", "goldset", "corpus")},
                      {"metrics": run.table("metrics"), "questions": run.table("questions")})
    assert isinstance(side, Side)
    cand = Run(write_run(tmp_path / "cand", move(base_lists(), "q07", "rb#7", 7),
                         configs=TWO_CONFIGS))
    c = compare_runs(side, cand, configs=["c3"], n_resamples=100)
    assert not c.base.has_fused and c.candidate.has_fused
    (lost,) = [ch for ch in c.regressions() if ch.metric == "hit@5"]
    assert (lost.pages[0].before, lost.pages[0].after) == (None, 7)
    # "?": the base's rank is unknown (no fused table), not "not retrieved"
    assert "rb#7: ? → 7 (bm25 ? → 7, dense ? → 7, boost ? → 7)" in COMPARISON_FORMATS.get(
        "markdown")(c)


def test_load_side_by_path_baseline_name_run_id_and_latest(run_dir: Path) -> None:
    runs = run_dir.parent
    save_baseline(Run(run_dir), runs / "baselines" / "sample")
    assert load_side(run_dir).run_id == "run-a"
    assert load_side("run-a", runs_dir=runs).path == run_dir
    named = load_side("sample", runs_dir=runs)
    assert named.path == runs / "baselines" / "sample"
    assert named.manifest["baseline"]["name"] == "sample"
    assert load_side("latest", runs_dir=runs).path == run_dir
    with pytest.raises(RulegaugeError, match="not a run or baseline"):
        load_side("nope", runs_dir=runs)


def test_cli_baseline_save(run_dir: Path) -> None:
    app = typer.Typer()
    register(app)
    runs = run_dir.parent
    args = ["baseline", "save", "run-a", "sample", "--runs-dir", str(runs), "--dir",
            str(runs / "baselines")]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "saved baseline sample" in r.output
    assert (runs / "baselines" / "sample" / "metrics.parquet").exists()
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 2 and "already exists" in again.output
    assert CliRunner().invoke(app, [*args, "--overwrite"]).exit_code == 0
    bad = CliRunner().invoke(app, ["baseline", "save", "run-a", "../x", "--runs-dir", str(runs)])
    assert bad.exit_code == 2 and "plain folder name" in bad.output
    # a path for NAME (the form docs/gate.md once gave): the hint is the command that works
    bad = CliRunner().invoke(app, ["baseline", "save", "run-a", "baselines/our-game", "--runs-dir", str(runs)])
    assert bad.exit_code == 2 and "rulegauge baseline save run-a our-game --dir baselines" in bad.output
    assert not (runs.parent / "baselines").exists()
