"""One writer per run; the lock file is never opened through a link (rulegauge.store.runlock)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.store.rundir import RunWriter
from rulegauge.store.runlock import is_locked


def test_a_planted_lock_link_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    run = tmp_path / "runs" / "r1"
    run.mkdir(parents=True)
    (run / ".lock").symlink_to(victim)
    with pytest.raises(RulegaugeError, match="is a symbolic link"):
        RunWriter(run)
    assert victim.read_text(encoding="utf-8") == "precious"


def test_links_under_a_run_folder_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    run = tmp_path / "runs" / "r1"
    with RunWriter(run) as w:
        (run / ".partial").symlink_to(outside)
        with pytest.raises(RulegaugeError, match="is a symbolic link"):
            w.folder(".partial")
        with pytest.raises(RulegaugeError, match="is a symbolic link"):
            w.file(".partial/arm_ranks-bm25.parquet")
    assert not any(outside.iterdir())
    (tmp_path / "runs" / "r2").symlink_to(outside, target_is_directory=True)
    with pytest.raises(RulegaugeError, match="is a symbolic link"):
        RunWriter(tmp_path / "runs" / "r2")


def test_has_table_reads_the_manifest_and_a_complete_run_stays_complete(tmp_path: Path) -> None:
    run = tmp_path / "r1"
    with RunWriter(run) as w:
        (run / "questions.parquet").write_bytes(b"not recorded")
        assert not w.has_table("questions")
        w.update_manifest({"status": "complete"})
        w.mark_failed("refused: Bearer sk-abcdefghijkl")
        assert w.read_manifest()["status"] == "complete"
        w.update_manifest({"status": "running"})
        w.mark_failed("refused: Bearer sk-abcdefghijkl")
    m = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert m["status"] == "failed" and "sk-abcdefghijkl" not in m["error"]
    assert not is_locked(run)

