"""Bounds on sizes and user-given counts (rulegauge.core.limits)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.core.limits import COUNTS, check_count, check_size, count_problem, size_problem


def test_counts_are_bounded_both_ways() -> None:
    assert check_count("folds", 5, minimum=2) == 5
    assert count_problem("folds", COUNTS["folds"] + 1) == (
        f"folds must be between 1 and {COUNTS['folds']:,}, got {COUNTS['folds'] + 1:,}")
    assert count_problem("depth", 0) is not None
    assert count_problem("depth", True) == "depth must be an integer, got True"
    with pytest.raises(RulegaugeError, match="pool must be between"):
        check_count("pool", 10**9)


def test_sizes_are_checked_without_reading(tmp_path: Path) -> None:
    p = tmp_path / "big.txt"
    with open(p, "wb") as f:
        f.truncate(3 << 20)  # sparse: nothing is read or written
    assert size_problem(p, 4 << 20) is None
    assert "3,145,728 bytes, above the limit of 2,097,152" in (size_problem(p, 2 << 20) or "")
    with pytest.raises(RulegaugeError, match="above the limit"):
        check_size(p, 1 << 20, "document")
    assert size_problem(tmp_path / "missing", 1) is None
