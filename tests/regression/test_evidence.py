"""The "why" evidence of a comparison: page moves and what a side cannot show."""

from __future__ import annotations

import pandas as pd

from rulegauge.regression.evidence import PageMove, SideEvidence, evidence_notes, page_moves


class _FusedSide:
    """A side whose fused table holds rows for ``configs`` only, cut at ``depth``."""

    def __init__(self, configs: list[str], depth: int) -> None:
        self.manifest = {"fused_rows": {"configs": configs, "depth": depth}}
        self.run_id = "r1"
        self._fused = pd.DataFrame({"question_id": ["q1"] * len(configs), "config_id": configs,
                                    "doc_id": ["d"] * len(configs), "page": [1] * len(configs),
                                    "page_rank": [1] * len(configs), "rank_bm25": [1] * len(configs)})

    def has_table(self, name: str) -> bool:
        return name == "fused"

    def table(self, name: str) -> pd.DataFrame:
        return self._fused


def test_evidence_notes_name_configs_without_rows_and_cut_lists():
    notes = evidence_notes(SideEvidence(_FusedSide(["a"], 20), {"a", "b"}))  # type: ignore[arg-type]
    assert len(notes) == 2
    assert notes[0].startswith("r1: no fused rows stored for b,") and "--fused-config ID" in notes[0]
    assert "depth 20" in notes[1]
    assert evidence_notes(SideEvidence(_FusedSide(["a", "b"], 0), {"a", "b"})) == []  # type: ignore[arg-type]


def test_page_moves_best_ranked_first_with_each_arms_rank():
    base = SideEvidence(_FusedSide(["a"], 0), {"a"})  # type: ignore[arg-type]
    moves = page_moves("q1", ["d#1", "d#9"], base, "a", base, "a")
    assert [m.page for m in moves] == ["d#1", "d#9"]  # d#9 never retrieved: last
    assert moves[0] == PageMove("d#1", 1, 1, moves[0].arms) and moves[0].arms[0].before == 1
    assert (moves[1].before, moves[1].after) == (None, None)
