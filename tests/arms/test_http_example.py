"""docs/grids/http-live.toml against the reference service with all three arms (real model)."""

from __future__ import annotations

import pandas as pd
import pytest

from rulegauge.pipeline.retrieval import RunOptions, run
from tests.helpers.common import REPO
from tests.helpers.reference_service import reference_service

EXAMPLE = REPO / "docs" / "grids" / "http-live.toml"


@pytest.mark.slow
def test_example_grid_gives_the_in_process_ranks(tmp_path):
    with reference_service(("bm25", "dense", "boost")) as svc:
        grid = tmp_path / "http-live.toml"
        grid.write_text(EXAMPLE.read_text(encoding="utf-8").replace(
            "http://127.0.0.1:8700/search", svc.url), encoding="utf-8")
        res = run(RunOptions(config=grid, runs_dir=tmp_path / "runs", run_id="live"))
    df = pd.read_parquet(res.path / "arm_ranks.parquet")

    def by(arm: str) -> dict[tuple[str, str], int]:
        sub = df[df["arm"] == arm]
        return dict(zip(zip(sub["question_id"], sub["chunk_id"], strict=True), sub["rank"], strict=True))

    for arm in ("bm25", "dense", "boost"):
        disclosed, inproc = by(f"live_{arm}"), by(arm)
        assert disclosed and all(inproc[k] == r for k, r in disclosed.items()), arm
    fused = pd.read_parquet(res.path / "fused.parquet")
    f = fused[(fused["config_id"] == "rrf_k60_bm25+dense+boost") & (fused["fused_rank"] <= 100)]
    live = df[df["arm"] == "live"]
    assert list(zip(f["question_id"], f["chunk_id"], f["fused_rank"], strict=True)) == \
        list(zip(live["question_id"], live["chunk_id"], live["rank"], strict=True))
    d1, d2 = by("decoded_1"), by("decoded_2")
    own = [by(a) for a in ("bm25", "dense", "boost")]
    assert len(d1) > 0.5 * len(live)
    for key, r1 in d1.items():
        truth = sorted(r for r in (o.get(key) for o in own) if r is not None)
        assert truth[0] == r1 and (key not in d2 or truth[1] == d2[key]), key
