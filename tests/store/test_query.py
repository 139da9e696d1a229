"""DuckDB views over every run: `rulegauge.store.query` and `rulegauge query`."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from rulegauge.cli.analysis import register
from rulegauge.core.errors import RulegaugeError
from rulegauge.store.query import query, views
from rulegauge.store.rundir import RunWriter, open_run
from tests.helpers.analysis import write_synthetic_run

ISSUE_SQL = "select config_id, avg(value) as v from metrics where metric = 'recall@5' group by 1"


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("runs")
    write_synthetic_run(d / "run-a", seed=0, with_answers=True, created="2025-01-01T00:00:00Z")
    write_synthetic_run(d / "run-b", seed=1, created="2025-01-02T00:00:00Z", status="running")
    # a run whose fused table has no rank_boost column (two arms only)
    a = open_run(d / "run-a")
    w = RunWriter(d / "run-c")
    w.update_manifest({"run_id": "run-c", "created": "2025-01-03T00:00:00Z", "status": "complete"})
    fused = a.table("fused")
    fused = fused[fused["config_id"] == "rrf-2"].drop(columns=["rank_boost"])
    w.write_table("fused", fused, {"rank_*": ["bm25", "dense"]})
    (d / "not-a-run").mkdir()
    return d


def _pooled_metrics(runs_dir: Path, *names: str) -> pd.DataFrame:
    return pd.concat([open_run(runs_dir / n).table("metrics") for n in names], ignore_index=True)


def test_issue_query_answers_across_runs(runs_dir: Path) -> None:
    got = query(ISSUE_SQL, runs_dir).set_index("config_id")["v"].sort_index()
    pooled = _pooled_metrics(runs_dir, "run-a", "run-b")
    expect = pooled[pooled["metric"] == "recall@5"].groupby("config_id")["value"].mean()
    pd.testing.assert_series_equal(got, expect.sort_index(), check_names=False)


def test_run_id_column_and_runs_view(runs_dir: Path) -> None:
    per_run = query("select run_id, count(*) as n from metrics group by 1 order by 1", runs_dir)
    assert list(per_run["run_id"]) == ["run-a", "run-b"]
    assert list(per_run["n"]) == [len(open_run(runs_dir / r).table("metrics")) for r in
                                  ("run-a", "run-b")]
    runs = query("select run_id, status from runs order by 1", runs_dir)
    assert list(runs.itertuples(index=False, name=None)) == [
        ("run-a", "complete"), ("run-b", "running"), ("run-c", "complete")]


def test_union_by_name_fills_missing_columns_with_null(runs_dir: Path) -> None:
    df = query("select run_id, count(*) as n, count(rank_boost) as boost from fused "
               "where config_id = 'rrf-2' group by 1 order by 1", runs_dir)
    c = df.set_index("run_id").loc["run-c"]
    assert c["n"] > 0 and c["boost"] == 0


def test_views_list_tables_of_any_run(runs_dir: Path) -> None:
    v = views(runs_dir)
    assert v[0] == "runs"
    assert {"metrics", "fused", "configs", "questions", "answers", "answer_metrics"} <= set(v)
    answers = query("select distinct run_id from answers", runs_dir)
    assert list(answers["run_id"]) == ["run-a"]


def test_errors_are_rulegauge_errors(runs_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(RulegaugeError, match="no runs under"):
        query("select 1", tmp_path / "empty")
    with pytest.raises(RulegaugeError, match=r"query failed(.|\n)*views: runs, "):
        query("select nope from metrics", runs_dir)


def _cli() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


def test_cli_query_formats(runs_dir: Path) -> None:
    runner = CliRunner()
    csv = runner.invoke(_cli(), ["query", ISSUE_SQL, "--runs-dir", str(runs_dir), "-f", "csv"])
    assert csv.exit_code == 0, csv.output
    got = pd.read_csv(io.StringIO(csv.output)).set_index("config_id")["v"]
    expect = query(ISSUE_SQL, runs_dir).set_index("config_id")["v"]
    assert got.sort_index().to_numpy() == pytest.approx(expect.sort_index().to_numpy(), rel=1e-15)
    js = runner.invoke(_cli(), ["query", ISSUE_SQL, "--runs-dir", str(runs_dir), "-f", "json"])
    assert js.exit_code == 0, js.output
    assert {r["config_id"] for r in json.loads(js.output)} == set(expect.index)
    table = runner.invoke(_cli(), ["query", ISSUE_SQL, "--runs-dir", str(runs_dir)])
    assert table.exit_code == 0 and "rrf-3" in table.output


def test_cli_query_bad_input_exits_2(runs_dir: Path) -> None:
    runner = CliRunner()
    bad_fmt = runner.invoke(_cli(), ["query", "select 1", "--runs-dir", str(runs_dir), "-f", "xml"])
    assert bad_fmt.exit_code == 2 and "table, tsv, markdown, csv, json" in bad_fmt.output
    bad_sql = runner.invoke(_cli(), ["query", "selec 1", "--runs-dir", str(runs_dir)])
    assert bad_sql.exit_code == 2 and "query failed" in bad_sql.output


def test_runs_view_says_kind_goldset_commit_and_model(tmp_path: Path) -> None:
    write_synthetic_run(tmp_path / "run-r", seed=0, created="2025-01-01T00:00:00Z")
    w = RunWriter(tmp_path / "run-r")
    w.update_manifest({"goldset": {"name": "sample"}, "git": {"commit": "abc123"},
                       "arms": {"dense": {"model": "e5-small"}, "bm25": {"k1": 1.5}}})
    w = RunWriter(tmp_path / "rulings-1")
    w.update_manifest({"run_id": "rulings-1", "created": "2025-01-02T00:00:00Z",
                       "status": "complete", "kind": "rulings"})
    w = RunWriter(tmp_path / "base")
    w.update_manifest({"run_id": "run-r", "created": "2025-01-03T00:00:00Z",
                       "status": "complete", "kind": "retrieval", "baseline": {"name": "base"}})
    got = query("select run_id, kind, goldset, commit, model from runs order by created",
                tmp_path)
    rows = [tuple(None if pd.isna(v) else v for v in r)
            for r in got.itertuples(index=False, name=None)]
    assert rows == [("run-r", "retrieval", "sample", "abc123", "e5-small"),
                    ("rulings-1", "rulings", None, None, None),
                    ("base", "baseline", None, None, None)]


def test_answerable_metrics_view_gives_the_honest_mean(runs_dir: Path) -> None:
    sql = ("select config_id, avg(value) as v from answerable_metrics "
           "where metric = 'recall@5' and run_id = 'run-a' group by 1 order by 1")
    got = query(sql, runs_dir).set_index("config_id")["v"]
    m = open_run(runs_dir / "run-a").table("metrics")
    m = m[(m["metric"] == "recall@5") & m["answerable"]]
    expect = m.groupby("config_id")["value"].mean().sort_index()
    pd.testing.assert_series_equal(got, expect, check_names=False)
    assert "answerable_metrics" in views(runs_dir)
