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


def test_reals_are_finite_and_bounded_and_never_a_traceback() -> None:
    from rulegauge.core.limits import REALS, real_problem

    assert real_problem("sd", 0.3, open_low=True) is None
    assert real_problem("delta", 0.0) is None
    assert real_problem("sd", 0.0, open_low=True) == (
        f"sd must be a finite number > 0 and at most {REALS['sd']:g}, got 0.0")
    assert real_problem("delta", -5000) == (
        f"delta must be a finite number >= 0 and at most {REALS['delta']:g}, got -5000")
    for bad in (float("inf"), float("nan"), 1e308):
        assert real_problem("sd", bad, open_low=True) is not None
    assert "a number of 321 characters" in (real_problem("delta", 10**320) or "")
    assert real_problem("sd", True) == "sd must be a number, got True"
    assert real_problem("sd", "1") == "sd must be a number, got '1'"
    from rulegauge.core.limits import MAX_LATENCY_MS, latency_problem  # latencies: their own bound

    assert latency_problem(0.0) is None and latency_problem(None) is None
    assert latency_problem(-5000) == f"latency_ms must be a finite number within 0..{MAX_LATENCY_MS:,.0f} ms, got -5000"


def test_work_is_bounded_by_the_product_of_counts() -> None:
    from rulegauge.core.limits import WORK, work_problem

    assert work_problem("resampled comparisons", {"draws": 2000, "sign patterns": 10_000}) is None
    assert work_problem("resampled comparisons", {"draws": 100_000, "sign patterns": 1_000_000}) == (
        "draws 100,000 x sign patterns 1,000,000 = 100,000,000,000 resampled comparisons, above the "
        f"bound of {WORK['resampled comparisons']:,}; lower one of them")
