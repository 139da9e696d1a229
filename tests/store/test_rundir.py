"""Run directories: `latest` by kind, run_id and self-describing Parquet metadata."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import typer
from typer.testing import CliRunner

from rulegauge.cli.analysis import register
from rulegauge.core.errors import RulegaugeError
from rulegauge.store.rundir import RunWriter, open_run
from rulegauge.store.schema import SCHEMA_VERSION, TABLES
from tests.helpers.analysis import write_synthetic_run


def _rulings_run(path: Path, created: str) -> Path:
    """A run directory of kind ``rulings`` (what ``rulegauge rulings import`` writes)."""
    w = RunWriter(path)
    w.update_manifest({"run_id": path.name, "created": created, "status": "complete",
                       "kind": "rulings"})
    return path


@pytest.fixture()
def runs_dir(tmp_path: Path) -> Path:
    write_synthetic_run(tmp_path / "run-old", seed=0, created="2025-01-01T00:00:00+00:00")
    write_synthetic_run(tmp_path / "run-new", seed=1, created="2025-01-02T00:00:00+00:00")
    _rulings_run(tmp_path / "rulings-newest", "2025-01-03T00:00:00+00:00")
    return tmp_path


def test_latest_is_the_newest_run_of_the_kind_asked_for(runs_dir: Path) -> None:
    assert open_run("latest", runs_dir).path.name == "run-new"
    assert open_run("latest", runs_dir, kind="rulings").path.name == "rulings-newest"
    assert open_run("latest", runs_dir, kind=None).path.name == "rulings-newest"
    # a path or an id opens that run whatever its kind
    assert open_run("rulings-newest", runs_dir).path.name == "rulings-newest"


def test_latest_of_a_kind_with_no_run_says_which_kind(tmp_path: Path) -> None:
    _rulings_run(tmp_path / "rulings-only", "2025-01-03T00:00:00+00:00")
    with pytest.raises(RulegaugeError, match="no complete retrieval run"):
        open_run("latest", tmp_path)


def test_bands_and_report_latest_skip_a_later_rulings_import(runs_dir: Path,
                                                             tmp_path: Path) -> None:
    app = typer.Typer()
    register(app)
    bands = CliRunner().invoke(app, ["bands", "latest", "--json", "--runs-dir", str(runs_dir)])
    assert bands.exit_code == 0, bands.output
    assert {t["config_id"] for t in json.loads(bands.stdout)} >= {"rrf-3", "rrf-2"}
    out = tmp_path / "r.html"
    rep = CliRunner().invoke(app, ["report", "latest", "-o", str(out), "--runs-dir",
                                   str(runs_dir)])
    assert rep.exit_code == 0, rep.output
    assert "Run run-new" in out.read_text(encoding="utf-8")


def test_every_table_has_run_id_descriptions_and_schema_version(tmp_path: Path) -> None:
    run = write_synthetic_run(tmp_path / "run-meta", seed=2, with_answers=True)
    names = open_run(run).tables()
    assert {"questions", "configs", "fused", "metrics", "answers", "answer_metrics"} <= set(names)
    for name in names:
        schema = pq.read_schema(run / f"{name}.parquet")
        spec = TABLES.get(name)
        assert schema.names[0] == "run_id"
        assert set(pq.read_table(run / f"{name}.parquet", columns=["run_id"])
                   .column("run_id").to_pylist()) == {"run-meta"}
        meta = schema.metadata
        assert meta[b"rulegauge.schema_version"] == SCHEMA_VERSION.encode()
        assert meta[b"rulegauge.table"] == name.encode()
        assert meta[b"rulegauge.table_doc"] == spec.doc.encode()
        assert b"pandas" in meta  # pyarrow's own key survives
        docs = {c.name: c.doc for c in spec.columns}
        for field in schema:
            desc = field.metadata[b"description"].decode()
            if field.name in docs:
                assert desc == docs[field.name]
            elif field.name.startswith("rank_"):
                assert desc.startswith(docs["rank_*"])
            else:
                assert field.name == "run_id" and "run" in desc


def test_statistics_are_written_for_the_columns_that_declare_them(tmp_path: Path) -> None:
    # the metrics table: every row group holds every question and metric, and one run id
    run = write_synthetic_run(tmp_path / "run-stats", seed=3)
    for name in ("metrics", "fused"):  # flat tables (Parquet keeps no statistics of list columns)
        meta = pq.ParquetFile(run / f"{name}.parquet").metadata
        names = pq.read_schema(run / f"{name}.parquet").names
        want = set(TABLES.get(name).statistics({"rank_*": [n[5:] for n in names if n.startswith("rank_")]}))
        for g in range(meta.num_row_groups):
            kept = {meta.schema.column(i).path.split(".")[0] for i in range(meta.num_columns)
                    if meta.row_group(g).column(i).is_stats_set}
            assert kept == want, name
    assert {"run_id", "question_id", "metric"}.isdisjoint(TABLES.get("metrics").statistics())
    assert {"config_id", "value", "answerable"} <= set(TABLES.get("metrics").statistics())


def test_a_table_copied_from_another_run_gets_this_runs_id(tmp_path: Path) -> None:
    a = open_run(write_synthetic_run(tmp_path / "run-a", seed=3))
    w = RunWriter(tmp_path / "run-b")
    w.update_manifest({"run_id": "run-b", "status": "complete"})
    w.write_table("metrics", a.table("metrics"))
    assert set(open_run(tmp_path / "run-b").table("metrics")["run_id"]) == {"run-b"}
