"""`rulegauge query` is read-only over the run tables and survives broken runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.store.query import query
from tests.helpers.analysis import write_synthetic_run


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("q") / "runs"
    write_synthetic_run(d / "good", created="2025-01-01T00:00:00Z")
    return d


@pytest.mark.parametrize("sql", [
    "copy (select 1 as x) to '{out}'",
    "copy metrics to '{out}'",
    "select * from read_csv('/etc/passwd')",
    "select * from read_text('/etc/hostname')",
    "select * from read_parquet('{runs}/good/metrics.parquet')",
    "install httpfs",
    "load httpfs",
    "attach '{out}' as x",
    "set enable_external_access = true",
    "set autoinstall_known_extensions = true",
    "select * from 'https://example.com/x.csv'",
])
def test_sql_cannot_touch_files_extensions_or_network(runs_dir: Path, tmp_path: Path,
                                                      sql: str) -> None:
    out = tmp_path / "leak.csv"
    with pytest.raises(RulegaugeError, match="query failed"):
        query(sql.format(out=out, runs=runs_dir), runs_dir)
    assert not out.exists()


def test_views_still_answer(runs_dir: Path) -> None:
    df = query("select run_id, count(*) as n from metrics group by 1", runs_dir)
    assert list(df["run_id"]) == ["good"] and int(df["n"].iloc[0]) > 0
    assert list(query("select run_id from runs", runs_dir)["run_id"]) == ["good"]


def test_a_truncated_table_skips_that_run_only(tmp_path: Path,
                                               caplog: pytest.LogCaptureFixture) -> None:
    runs = tmp_path / "runs"
    write_synthetic_run(runs / "a", created="2025-01-01T00:00:00Z")
    write_synthetic_run(runs / "b", seed=1, created="2025-01-02T00:00:00Z")
    target = runs / "b" / "fused.parquet"
    target.write_bytes(target.read_bytes()[:100])
    with caplog.at_level("WARNING"):
        df = query("select run_id, count(*) as n from fused group by 1", runs)
    assert list(df["run_id"]) == ["a"]
    assert any("fused.parquet: not readable Parquet, run b left out" in r.message
               for r in caplog.records)
    both = query("select run_id, count(*) as n from metrics group by 1 order by 1", runs)
    assert list(both["run_id"]) == ["a", "b"]  # b's other tables still count
