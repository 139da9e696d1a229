"""A live service that searches the whole library: its foreign hits keep their ranks (``keep``),
stop the run (``error``) or are left out with a warning of what moved up (``drop``); the
``http-ranks`` arm reading its disclosed ranks keeps them too."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rulegauge.core.errors import ValidationError
from rulegauge.pipeline.retrieval import RunOptions, run
from tests.helpers import search_endpoint as se

OTHER = "other-game#p0003.c001"  # a chunk of another game: the service searches the whole library
HITS = [{"id": OTHER, "score": 9.0, "ranks": {"bm25": 1}},
        {"id": "bw-rules#p0001.c000", "score": 5.0, "ranks": {"bm25": 2}},
        {"id": "bw-rules#p0002.c000", "score": 4.0, "ranks": {"bm25": 3}}]


def _grid(path: Path, url: str, rule: str | None) -> Path:
    path.write_text(f'''[arms.live]
kind = "http"
url = "{url}"
body = {{ q = "{{question}}" }}
chunk = "id"
score = "score"
arm_ranks = "ranks"
{f'on_unmatched = "{rule}"' if rule else ""}
[arms.live_bm25]
kind = "http-ranks"
of = "live"
disclosed = "bm25"
[grid]
k = [60]
arms = [["live", "live_bm25"]]
''', encoding="utf-8")
    return path


URL: list[str] = []


def _run(tmp_path: Path, rule: str | None, hits: list[dict] = HITS):  # type: ignore[no-untyped-def]
    with se.search_endpoint([se.json({"hits": hits})]) as ep:
        URL[:] = [ep.url]
        return run(RunOptions(config=_grid(tmp_path / "g.toml", ep.url, rule), runs_dir=tmp_path / "runs",
                              run_id="r", metrics=("MRR@10", "foreign@5")))


def test_keep_by_default_stores_the_hit_at_its_rank_and_fuses_it(tmp_path) -> None:
    res = _run(tmp_path, None)
    ranks = pd.read_parquet(res.path / "arm_ranks.parquet")
    for arm in ("live", "live_bm25"):
        q1 = ranks[(ranks["arm"] == arm) & (ranks["question_id"] == "bw-01")]
        assert q1[["chunk_id", "rank", "foreign", "doc_id", "page"]].values.tolist() == [
            [OTHER, 1, True, OTHER, 0], ["bw-rules#p0001.c000", 2, False, "bw-rules", 1],
            ["bw-rules#p0002.c000", 3, False, "bw-rules", 2]], arm
    fused = pd.read_parquet(res.path / "fused.parquet")
    top = fused[(fused["config_id"] == "rrf_k60_live+live_bm25") & (fused["fused_rank"] == 1)]
    assert (top["chunk_id"] == OTHER).all() and top["foreign"].all() and (top["arms_voted"] == 2).all()
    info = json.loads((res.path / "manifest.json").read_text())["arms"]
    assert info["live"]["on_unmatched"] == "keep" and info["live"]["foreign_hits"] == 57
    assert info["live"]["unmatched_count"] == 57 and info["live"]["unmatched"][0] == (
        f"question bw-01: id {OTHER!r} matches no chunk or page of the corpus")
    assert info["live"]["warning"].startswith(f"57 hit(s) in 57 of 57 questions have ids that match no chunk "
                                              f"of the corpus (e.g. {OTHER!r}): kept at their ranks")
    m = pd.read_parquet(res.path / "metrics.parquet")
    foreign5 = m[(m["config_id"] == "arm-live") & (m["metric"] == "foreign@5")]["value"]
    assert (foreign5 == 1 / 3).all()  # one page of three listed, for every question


def test_drop_leaves_them_out_and_warns_how_many_moved_up(tmp_path) -> None:
    res = _run(tmp_path, "drop")
    ranks = pd.read_parquet(res.path / "arm_ranks.parquet")
    q1 = ranks[(ranks["arm"] == "live") & (ranks["question_id"] == "bw-01")]
    assert q1[["chunk_id", "rank"]].values.tolist() == [["bw-rules#p0001.c000", 1], ["bw-rules#p0002.c000", 2]]
    assert not ranks["foreign"].any()
    info = json.loads((res.path / "manifest.json").read_text())["arms"]["live"]
    assert (info["dropped_hits"], info["moved_up"], info["foreign_hits"]) == (57, 114, 0)
    assert info["warning"].startswith('on_unmatched = "drop" left out 57 hit(s) in 57 of 57 questions whose ids '
                                      "match no chunk of the corpus, so 114 hit(s) below them moved up")


def test_error_stops_the_run_naming_the_ids(tmp_path) -> None:
    with pytest.raises(ValidationError) as info:
        _run(tmp_path, "error")
    assert f"ids matching no chunk or page: {OTHER!r}" in str(info.value)  # the preflight's question


def test_an_id_that_cannot_be_kept_is_refused(tmp_path) -> None:
    bad = [{"id": "other\u200bgame#1", "score": 9.0, "ranks": {}}, *HITS[1:]]
    with pytest.raises(ValidationError) as info:
        _run(tmp_path, None, bad)
    text = str(info.value)
    assert "reply ids that cannot be kept as foreign hits" in text
    assert "question bw-01: id 'other\\u200bgame#1' holds invisible or control characters (U+200B" in text


def test_replies_with_no_id_of_the_corpus_are_refused(tmp_path) -> None:
    """A replayed record whose every id is foreign: the reply fields read no id of the corpus."""
    res = _run(tmp_path, None)
    record = res.path / "arms-journal" / "live.jsonl"
    lines = [json.loads(x) for x in record.read_text().splitlines()]
    for rec in lines:
        rec["hits"] = [{**h, "id": f"x-{h['id']}"} for h in rec["hits"]]
    replayed = tmp_path / "all-foreign.jsonl"
    replayed.write_text("".join(json.dumps(r) + "\n" for r in lines))
    grid = _grid(tmp_path / "r.toml", URL[0], None)  # the recorded requests: nothing is asked
    grid.write_text(grid.read_text().replace('score = "score"', f'score = "score"\nreplay = "{replayed}"'))
    with pytest.raises(ValidationError, match="no id of any reply matches a chunk or page of the corpus"):
        run(RunOptions(config=grid, runs_dir=tmp_path / "runs", run_id="replayed"))
