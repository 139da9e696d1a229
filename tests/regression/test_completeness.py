"""A gate compares two complete runs over the same questions (rulegauge.regression.completeness)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.regression.completeness import check_gateable, extra_questions
from rulegauge.store.rundir import Run, RunWriter
from tests.helpers.analysis import write_synthetic_run


def _cut(path: Path, keep: int) -> Run:
    m = Run(path).table("metrics")
    qids = sorted(m["question_id"].unique())[:keep]
    with RunWriter(path) as w:
        w.write_table("metrics", m[m["question_id"].isin(qids)].drop(columns="run_id"))
    return Run(path)


def test_missing_questions_are_named(tmp_path: Path) -> None:
    base = Run(write_synthetic_run(tmp_path / "base"))
    cand = _cut(write_synthetic_run(tmp_path / "cand", seed=1), 1)
    with pytest.raises(RulegaugeError, match="lacks 13 of the base's 14 questions") as info:
        check_gateable(base, cand, "rrf-3", "rrf-3")
    assert "has no metrics for 13 of its 14 questions" in str(info.value)
    assert extra_questions(cand, base, "rrf-3", "rrf-3") == sorted(
        set(base.table("questions")["question_id"]) - set(cand.table("metrics")["question_id"]))


@pytest.mark.parametrize("status", ["running", "failed"])
def test_an_incomplete_side_is_refused(tmp_path: Path, status: str) -> None:
    base = Run(write_synthetic_run(tmp_path / "base"))
    cand = Run(write_synthetic_run(tmp_path / "cand", status=status))
    with pytest.raises(RulegaugeError, match=f"is not complete \\(status '{status}'\\)"):
        check_gateable(base, cand, "rrf-3", "rrf-3")
    check_gateable(base, Run(write_synthetic_run(tmp_path / "ok", seed=2)), "rrf-3", "rrf-3")
