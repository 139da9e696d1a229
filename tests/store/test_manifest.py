"""Manifest shape and table columns checked when a run is opened (rulegauge.store.manifest)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import ProvenanceError, RulegaugeError
from rulegauge.store.manifest import read_manifest, shape_problems
from rulegauge.store.rundir import Run
from tests.helpers.analysis import write_synthetic_run

SHA = "0" * 64


@pytest.mark.parametrize(("manifest", "fragment"), [
    ([], "must be a JSON object"),
    ({"tables": []}, "'tables' must map"),
    ({"tables": {"metrics": "abc"}}, "'tables.metrics' must be"),
    ({"tables": {"metrics": {"sha256": "zz"}}}, "64 hex digits"),
    ({"tables": {"metrics": {"sha256": SHA, "rows": -2}}}, "must be a count"),
    ({"tables": {"../x": {"sha256": SHA}}}, "bad table name"),
    ({"status": 3}, "'status' must be text"),
])
def test_malformed_manifests_are_named(manifest: object, fragment: str) -> None:
    assert any(fragment in p for p in shape_problems(manifest))


def test_a_good_manifest_has_no_problem() -> None:
    assert shape_problems({"run_id": "r", "status": "complete",
                           "tables": {"metrics": {"sha256": SHA, "rows": 3}}}) == []


def test_run_open_refuses_a_malformed_manifest_and_a_link(tmp_path: Path) -> None:
    run = write_synthetic_run(tmp_path / "s1")
    m = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    (run / "manifest.json").write_text(json.dumps({**m, "tables": []}), encoding="utf-8")
    with pytest.raises(ProvenanceError, match="malformed manifest"):
        Run(run)
    (tmp_path / "foreign.json").write_text(json.dumps(m), encoding="utf-8")
    (run / "manifest.json").unlink()
    (run / "manifest.json").symlink_to(tmp_path / "foreign.json")
    with pytest.raises(RulegaugeError, match="is a symbolic link"):
        read_manifest(run)


def test_a_table_with_its_hash_but_not_its_columns_is_refused(tmp_path: Path) -> None:
    run = write_synthetic_run(tmp_path / "s1")
    p = run / "metrics.parquet"
    pq.write_table(pq.read_table(p).drop_columns(["answerable"]), p)
    m = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    m["tables"]["metrics"]["sha256"] = file_sha256(p)
    (run / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    with pytest.raises(ProvenanceError, match=r"metrics.parquet lacks the declared column\(s\) "
                                              "answerable"):
        Run(run)
