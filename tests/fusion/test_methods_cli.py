"""Every fusion method through the commands a user runs: one `rulegauge run` over a grid of
methods, then bands, tune, report, compare, export and query on it (CLI tier)."""

from __future__ import annotations

import contextlib
import json
import traceback
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers.common import REPO

GRID = """
metrics = ["hit@1", "recall@5", "nDCG@10", "top_score_ratio"]
[defaults]
k = 60
depth = 100
[grid]
method = ["rrf", "combsum", "combmnz", "hybrid", "relscore", "borda", "isr"]
k = [20, 60]
norm = ["min-max", "z-score", "l2"]
mean = ["arithmetic", "harmonic"]
arms = [["bm25", "boost"]]
weights = [{}, {bm25 = 0.7, boost = 0.3}]
"""


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str


def rulegauge(*args: str, cwd: Path) -> Ran:
    """``rulegauge ARGS`` run from ``cwd`` in this process (typer's CliRunner, stdout and stderr
    apart): these tests check each command's output on every method, not a fresh process
    (that has its own tests, e.g. tests/cli/test_quiet_start.py); a process per command
    cost about 3 CPU-s of imports each."""

    from typer.testing import CliRunner

    from rulegauge.cli import app

    with contextlib.chdir(cwd):
        res = CliRunner().invoke(app, list(args))
    crash = res.exception if res.exception is not None and not isinstance(res.exception, SystemExit) else None
    why = "".join(traceback.format_exception(crash)) if crash is not None else ""
    return Ran(res.exit_code, res.stdout, res.stderr + why)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("methods")
    (tmp / "grid.toml").write_text(GRID, encoding="utf-8")
    res = rulegauge("run", "-g", str(REPO / "goldsets" / "sample.yaml"), "-c", str(tmp / "grid.toml"),
                  "--out", str(tmp / "runs"), "--run-id", "m", "--quiet", cwd=tmp)
    assert res.returncode == 0, res.stderr
    return tmp / "runs" / "m"


def test_one_run_scores_every_method_with_readable_ids(run: Path) -> None:
    configs = pd.read_parquet(run / "configs.parquet")
    ids = set(configs["config_id"])
    assert {"rrf_k20_bm25+boost", "rrf_k60_bm25+boost", "combsum_minmax_bm25+boost",
            "combsum_zscore_w-bm250.7-boost0.3_bm25+boost", "combmnz_minmax_bm25+boost",
            "hybrid_minmax_arith_bm25+boost", "hybrid_l2_harm_w-bm250.7-boost0.3_bm25+boost",
            "relscore_bm25+boost", "borda_bm25+boost", "isr_bm25+boost"} <= ids
    assert not any(i.startswith(("combsum_l2", "hybrid_zscore")) for i in ids)  # values a method does not take
    by_id = configs.set_index("config_id")
    assert pd.isna(by_id.loc["borda_bm25+boost", "ceiling"]) and pd.isna(by_id.loc["borda_bm25+boost", "k"])
    assert by_id.loc["hybrid_minmax_arith_bm25+boost", "ceiling"] == 1.0
    assert json.loads(by_id.loc["hybrid_l2_harm_bm25+boost", "params"])["norm"] == "l2"
    metrics = pd.read_parquet(run / "metrics.parquet")
    per = metrics.groupby("config_id").size()
    assert per.nunique() == 1 and set(per.index) == ids  # every question x metric for every config
    ratio = metrics[(metrics["metric"] == "top_score_ratio") & (metrics["config_id"] == "borda_bm25+boost")]
    assert ratio["value"].isna().all()  # no ceiling: no ratio, never a plausible 0
    fused = pd.read_parquet(run / "fused.parquet")
    assert set(fused["config_id"]) == ids


def test_consumers_work_for_every_method(run: Path) -> None:
    bands = rulegauge("bands", str(run), "--json", cwd=run.parent)
    assert bands.returncode == 0, bands.stderr
    tables = {t["config_id"]: t for t in json.loads(bands.stdout)}
    assert "no ceiling" in tables["borda_bm25+boost"]["anchors"]["axis"]
    assert tables["rrf_k60_bm25+boost"]["anchors"]["ceiling"] == pytest.approx(2 / 61)
    tune = rulegauge("tune", str(run), "--folds", "3", cwd=run.parent)
    assert tune.returncode == 0, tune.stderr
    assert "per fusion method" in tune.stdout and "borda" in tune.stdout and "hybrid" in tune.stdout
    report = rulegauge("report", str(run), "-o", str(run.parent / "r.html"), cwd=run.parent)
    assert report.returncode == 0, report.stderr
    html = (run.parent / "r.html").read_text(encoding="utf-8")
    assert "Best setting of each fusion method" in html and "fusion method" in html
    export = rulegauge("export", str(run), "--format", "trec", "-o", str(run.parent / "trec"), cwd=run.parent)
    assert export.returncode == 0, export.stderr
    assert (run.parent / "trec" / "borda_bm25+boost.trec").exists()
    compare = rulegauge("compare", str(run), str(run), cwd=run.parent)
    assert compare.returncode == 0, compare.stderr
