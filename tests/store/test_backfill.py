"""Runs written before foreign hits were kept (no ``foreign`` column in ``arm_ranks`` and
``fused``) still open, re-score, compare and save as baselines; every other missing column is
still refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import ProvenanceError
from rulegauge.pipeline.options import RunOptions
from rulegauge.pipeline.rescore import rescore
from rulegauge.pipeline.retrieval import run
from rulegauge.regression.compare import compare_runs
from rulegauge.store.baseline import save_baseline
from rulegauge.store.rundir import Run
from rulegauge.store.schema import TABLES, backfilled
from tests.helpers.common import LEXICAL


def _drop_column(run_dir: Path, table: str, column: str) -> None:
    """Rewrite ``table`` without ``column``, as a run of an older version wrote it, hash updated."""
    path = run_dir / f"{table}.parquet"
    t = pq.read_table(path)
    pq.write_table(t.drop_columns([column]), path)
    m = json.loads((run_dir / "manifest.json").read_text())
    m["tables"][table]["sha256"] = file_sha256(path)
    (run_dir / "manifest.json").write_text(json.dumps(m))


@pytest.fixture(scope="module")
def older(tmp_path_factory: pytest.TempPathFactory) -> Run:
    tmp = tmp_path_factory.mktemp("older")
    res = run(RunOptions(config=LEXICAL, runs_dir=tmp / "runs", run_id="older"))
    for table in ("arm_ranks", "fused"):
        _drop_column(res.path, table, "foreign")
    return Run(res.path)


def test_an_older_run_opens_and_reads_as_without_foreign_hits(older: Run) -> None:
    assert "foreign" not in older.table("arm_ranks").columns
    spec = TABLES.get("fused")
    assert [c.name for c in spec.columns if c.backfill is not None] == ["foreign"]
    filled = backfilled("fused", older.table("fused"))
    assert not filled["foreign"].any() and len(filled) == len(older.table("fused"))


def test_rescore_compare_and_baseline_of_an_older_run(older: Run, tmp_path: Path) -> None:
    again = Run(rescore(RunOptions(config=LEXICAL, runs_dir=older.path.parent, run_id="again",
                                   source_run="older")).path)
    assert "foreign" not in pq.read_schema(again.path / "arm_ranks.parquet").names  # copied byte for byte
    assert not again.table("fused")["foreign"].any()  # the new run's own fused rows have it
    pd.testing.assert_frame_equal(
        again.table("metrics").drop(columns="run_id"), older.table("metrics").drop(columns="run_id"))
    assert compare_runs(older, again, n_resamples=100).regressions() == ()
    base = Run(save_baseline(older, tmp_path / "base"))
    assert "foreign" in base.table("fused").columns and not base.table("fused")["foreign"].any()


def test_another_missing_column_is_still_refused(older: Run, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(older.path, copy)
    _drop_column(copy, "fused", "relevant")
    with pytest.raises(ProvenanceError, match=r"fused\.parquet lacks the declared column"):
        Run(copy)
