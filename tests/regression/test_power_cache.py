"""rulegauge.regression.power_cache: a kept result equals a computed one, bit for bit; a
damaged or foreign entry is computed again; a cache that cannot be written changes nothing;
the folder is bounded."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from rulegauge.regression import power_cache as C
from rulegauge.regression.power_models import QuestionPool, loss_power
from rulegauge.regression.power_resample import resampled_power

POOL = np.array([-0.5, 0.0, 0.0, 0.0, 0.5, 1.0, -1.0, 0.25]) - 0.03125


def test_kept_results_equal_computed_ones(tmp_path: Path) -> None:
    cold = C.cached_resampled(POOL, 20, 0.05, n_resamples=300, draws=60, seed=4, cache_dir=tmp_path)
    warm = C.cached_resampled(POOL, 20, 0.05, n_resamples=300, draws=60, seed=4, cache_dir=tmp_path)
    assert cold == warm == resampled_power(POOL, 20, 0.05, n_resamples=300, draws=60, seed=4)
    pool = QuestionPool(np.array([1.0, 0.5, 0.0, 1.0]), np.array([0.1, -0.1, 0.0, 0.0]), 0.0)
    lc = C.cached_loss(pool, 12, 0.05, n_resamples=300, draws=50, seed=1, cache_dir=tmp_path)
    lw = C.cached_loss(pool, 12, 0.05, n_resamples=300, draws=50, seed=1, cache_dir=tmp_path)
    assert lc == lw == loss_power(pool, 12, 0.05, n_resamples=300, draws=50, seed=1)
    other = C.cached_resampled(POOL, 20, 0.05, n_resamples=300, draws=60, seed=5, cache_dir=tmp_path)
    assert other.thresholds != cold.thresholds  # another seed is another key
    assert len(list((tmp_path / C.FOLDER).glob("*.json"))) == 3


def test_damaged_or_foreign_entries_are_computed_again(tmp_path: Path) -> None:
    first = C.cached_resampled(POOL, 16, 0.05, n_resamples=200, draws=30, cache_dir=tmp_path)
    (entry,) = (tmp_path / C.FOLDER).glob("*.json")
    for text in ("{not json", json.dumps({"key": "other", "values": [0.0] * 30}),
                 json.dumps({"key": entry.stem, "values": [1.0, 0.0] * 15}),  # not sorted
                 json.dumps({"key": entry.stem, "values": ["nan"] * 30})):
        entry.write_text(text, encoding="utf-8")
        assert C.cached_resampled(POOL, 16, 0.05, n_resamples=200, draws=30, cache_dir=tmp_path) == first
        assert json.loads(entry.read_text(encoding="utf-8"))["key"] == entry.stem  # replaced


def test_a_cache_that_cannot_be_written_changes_nothing(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder", encoding="utf-8")
    got = C.cached_resampled(POOL, 16, 0.05, n_resamples=200, draws=30, cache_dir=blocked)
    assert got == resampled_power(POOL, 16, 0.05, n_resamples=200, draws=30)
    assert C.cached_number("x", lambda: 2.5, cache_dir=blocked, a=1) == 2.5


def test_numbers_keep_inf_never_nan(tmp_path: Path) -> None:
    calls: list[int] = []

    def once(value: float) -> float:
        calls.append(1)
        return value

    assert C.cached_number("n", lambda: once(math.inf), cache_dir=tmp_path, a=1) == math.inf
    assert C.cached_number("n", lambda: once(0.0), cache_dir=tmp_path, a=1) == math.inf
    assert math.isnan(C.cached_number("m", lambda: once(math.nan), cache_dir=tmp_path, a=1))
    assert math.isnan(C.cached_number("m", lambda: once(math.nan), cache_dir=tmp_path, a=1))
    assert len(calls) == 3  # inf read back; NaN computed each time


def test_the_folder_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(C, "KEEP", 3)
    for i in range(6):
        C.cached_number("k", lambda: 1.0, cache_dir=tmp_path, i=i)
    assert len(list((tmp_path / C.FOLDER).glob("*.json"))) == 3
