"""The report's slice and overlap sections (rulegauge.analysis.report_slices)."""

from __future__ import annotations

from pathlib import Path

from rulegauge.analysis.report_slices import overlap_html, slice_frame, slices_html
from tests.helpers.comparison import base_lists, move
from tests.helpers.slices import tagged_run

TAGS = {"q01": ["errata"], "q02": ["errata"], "q03": ["solo"], "q21": ["errata"]}


def test_slice_frame_aggregates_each_tag_in_the_metrics_scope(tmp_path: Path) -> None:
    run = tagged_run(tmp_path / "runs" / "a", base_lists(), tags=TAGS)
    frame = slice_frame(run.table("metrics"), run.table("questions"), "MRR@10", ["c3"])
    # errata: q01 (rank 2) and q02 (rank 3) in scope, q21 is unanswerable; solo has one question
    assert frame.to_dict("records") == [{"slice": "tag errata", "n": 2, "c3": (1 / 2 + 1 / 3) / 2}]
    assert "Per slice: MRR@10" in "".join(slices_html(run, "MRR@10", ["c3"]))


def test_overlap_with_the_previous_run_of_the_gold_set(tmp_path: Path) -> None:
    first = tagged_run(tmp_path / "runs" / "a", base_lists())
    assert overlap_html(first, ["c3"]) == []  # no earlier run
    second = tagged_run(tmp_path / "runs" / "b", move(base_lists(), "q01", "rb#1", 9))
    text = "".join(overlap_html(second, ["c3", "missing"]))
    assert "against run a" in text and "RBO(p=0.9)@10" in text
    assert "<td>q01 0.873</td>" in text
    assert "not measured: missing: run a holds no fused row of config missing" in text
