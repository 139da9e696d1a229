"""rulegauge.interop.export: file names, counts, the question set and padding, collisions."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from rulegauge.cli import app
from rulegauge.core.errors import ValidationError
from rulegauge.interop.export import (
    NO_RESULT,
    export_run,
    requirement_qid,
    requirement_rows,
    split_requirement_qid,
)
from rulegauge.interop.trec import read_qrels, read_run
from rulegauge.pipeline.grid_tables import StorePolicy
from rulegauge.pipeline.options import RunOptions
from rulegauge.pipeline.retrieval import run
from rulegauge.store.rundir import Run
from tests.helpers.common import LEXICAL

CID = "rrf_k60_bm25+boost"


@pytest.fixture(scope="module")
def base_run(tmp_path_factory):
    return Run(run(RunOptions(config=LEXICAL, runs_dir=tmp_path_factory.mktemp("runs"),
                              run_id="base")).path)


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def test_arm_runs_and_single_arm_configs_get_distinct_files(base_run, tmp_path):
    res = export_run(base_run, tmp_path)
    configs = sorted(base_run.table("fused")["config_id"].unique())
    arms = sorted(base_run.table("arm_ranks")["arm"].unique())
    assert "arm-bm25" in configs  # the single-arm config, named like the old arm file
    expected = ({f"{c}.trec" for c in configs} | {f"arms/{a}.trec" for a in arms}
                | {"qrels.txt", "qrels-requirements.txt"})
    assert _files(tmp_path) == expected
    assert len(res.files) == len(expected) == len(configs) + len(arms) + 2
    # the arm's own list keeps its arm scores; the single-arm config is its own file
    arm = read_run(tmp_path / "arms" / "bm25.trec")
    cfg = read_run(tmp_path / "arm-bm25.trec")
    assert {x.tag for x in arm} == {"rulegauge-bm25"} and {x.tag for x in cfg} == {"arm-bm25"}


def test_every_run_holds_exactly_the_answerable_questions(base_run, tmp_path):
    res = export_run(base_run, tmp_path)
    q = base_run.table("questions")
    answerable = set(q.loc[q["answerable"], "question_id"])
    assert res.questions == len(answerable) < len(q)
    assert {x[0] for x in read_qrels(tmp_path / "qrels.txt")} == answerable
    req_ids = {split_requirement_qid(x[0])[0] for x in read_qrels(tmp_path / "qrels-requirements.txt")}
    assert req_ids == answerable
    padded = dict(res.padded)
    for f in tmp_path.rglob("*.trec"):
        lines = read_run(f)
        assert {x.qid for x in lines} == answerable, f.name
        empty = {x.qid for x in lines if x.docid == NO_RESULT}
        assert padded[str(f.relative_to(tmp_path))] == len(empty)
        for x in lines:
            if x.docid == NO_RESULT:  # the only line of its question, rank 1, score 0
                assert (x.rank, x.score) == (1, 0.0)
                assert sum(y.qid == x.qid for y in lines) == 1
    # bm25 alone finds nothing for some cross-lingual questions: they are padded, not lost
    assert padded["arms/bm25.trec"] > 0


def test_retrieved_question_set_writes_every_list_and_no_placeholder(base_run, tmp_path):
    export_run(base_run, tmp_path, questions="retrieved", configs=[CID], arms=["bm25"])
    fused = base_run.table("fused")
    lines = read_run(tmp_path / f"{CID}.trec")
    assert {x.qid for x in lines} == set(fused.loc[fused["config_id"] == CID, "question_id"])
    assert all(x.docid != NO_RESULT for x in lines)
    ar = base_run.table("arm_ranks")
    assert {x.qid for x in read_run(tmp_path / "arms" / "bm25.trec")} == \
        set(ar.loc[ar["arm"] == "bm25", "question_id"])


class _Renamed:
    """A run whose fused table holds one config twice, under ids differing in case."""

    def __init__(self, run: Run) -> None:
        self._run = run
        self.run_id = run.run_id
        self.manifest = run.manifest

    def has_table(self, name: str) -> bool:
        return self._run.has_table(name)

    def table(self, name: str) -> pd.DataFrame:
        df = self._run.table(name)
        if name == "fused":
            twin = df[df["config_id"] == CID].assign(config_id=CID.upper())
            df = pd.concat([df, twin], ignore_index=True)
        return df


def test_colliding_names_are_refused_before_anything_is_written(base_run, tmp_path):
    with pytest.raises(ValidationError) as ei:
        export_run(_Renamed(base_run), tmp_path / "out")
    assert "share one file name" in str(ei.value) and CID.upper() in str(ei.value)
    assert not (tmp_path / "out").exists()


def test_unknown_config_is_refused(base_run, tmp_path):
    with pytest.raises(ValidationError, match="no such config"):
        export_run(base_run, tmp_path / "out", configs=["nope"])
    assert not (tmp_path / "out").exists()


def test_requirement_ids_round_trip_and_rows_expand():
    assert split_requirement_qid(requirement_qid("bw-01", 3)) == ("bw-01", 3)
    assert split_requirement_qid("a::b") == ("a::b", None)
    assert split_requirement_qid("a::1::2") == ("a::1", 2)
    qs = pd.DataFrame({"question_id": ["a", "b"], "requirements": ['[["x#1"], ["y#1", "y#2"]]', '[["z#1"]]']})
    rows = pd.DataFrame({"qid": ["a", "a", "b"], "docid": ["y#2", "x#1", "z#1"],
                         "rank": [1, 2, 1], "score": [1.0, 0.5, 1.0]})
    out = requirement_rows(rows, qs)
    assert sorted(out["qid"].unique()) == ["a::1", "a::2", "b::1"]
    assert len(out) == 2 * 2 + 1


def test_cli_prints_the_count_of_files_on_disk(base_run, tmp_path):
    res = CliRunner().invoke(app, ["export", str(base_run.path), "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert f"wrote {len(_files(tmp_path))} files" in res.output
    assert "rulegauge:no-result" in res.output  # says which files were padded
    res = CliRunner().invoke(app, ["export", str(base_run.path), "--format", "csv"])
    assert res.exit_code == 2 and "choose trec or mlflow" in res.output
    res = CliRunner().invoke(app, ["export", str(base_run.path), "--questions", "some"])
    assert res.exit_code == 2 and "answerable" in res.output
    res = CliRunner().invoke(app, ["export", str(base_run.path), "--config", "nope",
                                   "-o", str(tmp_path / "x")])
    assert res.exit_code == 2 and "no such config" in res.output and not (tmp_path / "x").exists()


def test_a_scored_config_without_stored_rows_says_how_to_store_them(tmp_path):
    src = run(RunOptions(config=LEXICAL, runs_dir=tmp_path, run_id="narrow",
                         store=StorePolicy(("arm-bm25",), 5, 5_000_000)))
    r = Run(src.path)
    with pytest.raises(ValidationError) as err:
        export_run(r, tmp_path / "out", configs=[CID])
    text = str(err.value)
    assert "scored, but its fused rows were not stored (the run stores them for 1 of" in text
    assert f"rulegauge run --from narrow -c GRID --fused-config {CID}" in text
    assert not (tmp_path / "out").exists()  # nothing written
    out = CliRunner().invoke(app, ["export", str(src.path), "-o", str(tmp_path / "ok")])
    assert out.exit_code == 0 and "fused rows were stored to depth 5" in out.output
