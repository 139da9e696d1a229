"""``latest`` is the newest run that fits the command (rulegauge.store.fits, rulegauge.store.runscan):
the same gold set by hash, the configs it names; runs that do not fit are named with why, and a
run with a malformed manifest is left out with a warning instead of breaking the scan."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.store import runscan
from rulegauge.store.fits import Wants
from rulegauge.store.rundir import open_run
from rulegauge.store.runscan import readable, scan
from tests.helpers.analysis import CONFIGS, write_synthetic_run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """old (14 questions, the full grid), newer (another gold set: 12 questions), newest (the first
    gold set, arm configs only), and a damaged folder."""
    root = tmp_path_factory.mktemp("runs")
    write_synthetic_run(root / "old", created="2025-01-01T00:00:00+00:00")
    write_synthetic_run(root / "newer", n_questions=12, created="2025-01-02T00:00:00+00:00")
    write_synthetic_run(root / "newest", created="2025-01-03T00:00:00+00:00",
                        configs=tuple(c for c in CONFIGS if c[1] == "arm"))
    (root / "damaged").mkdir()
    (root / "damaged" / "manifest.json").write_text('{"tables": {"metrics": "x"}}', encoding="utf-8")
    return root


def _gold(runs: Path, run_id: str) -> str:
    return str(json.loads((runs / run_id / "manifest.json").read_text())["goldset"]["sha256"])


def test_the_same_gold_set_by_hash(runs: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert _gold(runs, "old") == _gold(runs, "newest") != _gold(runs, "newer")
    wants = Wants.of(manifest=json.loads((runs / "newer" / "manifest.json").read_text()))
    with caplog.at_level(logging.WARNING):
        got = open_run("latest", runs, wants=wants)
    assert got.run_id == "newer"
    wants = Wants.of(manifest=json.loads((runs / "old" / "manifest.json").read_text()))
    assert open_run("latest", runs, wants=wants).run_id == "newest"


def test_the_configs_the_command_names(runs: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        got = open_run("latest", runs, wants=Wants.of(configs=["rrf-3"]))
    assert got.run_id == "newer"
    assert "newer run(s) skipped: newest (no config rrf-3)" in caplog.text
    assert open_run("latest", runs, wants=Wants.of(configs=["arm-bm25"])).run_id == "newest"
    with pytest.raises(RulegaugeError, match=r"with config\(s\) rrf-9 under .*skipped: newest \(no config rrf-9\)"):
        open_run("latest", runs, wants=Wants.of(configs=["rrf-9"]))


def test_a_damaged_run_is_left_out_with_a_warning_naming_it(runs: Path, caplog: pytest.LogCaptureFixture,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runscan, "_WARNED", set())  # warned once per process: earlier tests read it too
    assert [s.path.name for s in scan(runs)] == ["damaged", "old", "newer", "newest"]  # no created: first
    assert "'tables.metrics' must be" in scan(runs)[0].damaged
    with caplog.at_level(logging.WARNING):
        assert [p.name for p, _ in readable(runs)] == ["old", "newer", "newest"]
        assert open_run("latest", runs).run_id == "newest"
    assert "run damaged left out" in caplog.text and "damaged/manifest.json" in caplog.text
