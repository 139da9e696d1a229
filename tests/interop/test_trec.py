"""TREC files, external arms from an export, gold sets from qrels: round trips."""

from __future__ import annotations

from functools import partial

import pandas as pd
import pytest

from rulegauge.core.errors import ValidationError
from rulegauge.goldset import parse
from rulegauge.interop.export import export_run
from rulegauge.interop.qrels import goldset_from_qrels
from rulegauge.interop.trec import read_qrels, read_run, write_qrels, write_run
from rulegauge.pipeline.options import RunOptions
from rulegauge.pipeline.retrieval import SAMPLE_GOLDSET, run
from rulegauge.store.rundir import Run
from tests.helpers.common import LEXICAL

# derived and imported gold sets are written beside their output and name the
# documents where they lie (outside the gold set's folder)
load_goldset = partial(parse.load_goldset, allow_outside=True)

CID = "rrf_k60_bm25+boost"


@pytest.fixture(scope="module")
def base_run(tmp_path_factory):
    return Run(run(RunOptions(config=LEXICAL, runs_dir=tmp_path_factory.mktemp("runs"), run_id="base")).path)


def test_run_and_qrels_files_round_trip(tmp_path):
    rows = pd.DataFrame({"qid": ["q2", "q1", "q1"], "docid": ["d#2", "d#1", "e#4"],
                         "rank": [1, 2, 1], "score": [0.5, 0.25, 1 / 3]})
    write_run(rows, tmp_path / "r.trec", "tag")
    assert (tmp_path / "r.trec").read_text().splitlines()[0] == f"q1 Q0 e#4 1 {1 / 3!r} tag"
    back = [(x.qid, x.docid, x.rank, x.score) for x in read_run(tmp_path / "r.trec")]
    assert sorted(back) == sorted(rows.itertuples(index=False, name=None))
    write_qrels([("q1", "d#1", 1), ("q0", "d#2", 2)], tmp_path / "qrels")
    assert read_qrels(tmp_path / "qrels") == [("q0", "d#2", 2, 1), ("q1", "d#1", 1, 2)]


def test_malformed_run_and_qrels_lines_are_all_reported(tmp_path):
    (tmp_path / "r.trec").write_text("q Q0 d 1 1.0 t\nq Q0 d one 1.0 t\nshort line\n")
    with pytest.raises(ValidationError) as ei:
        read_run(tmp_path / "r.trec")
    assert "r.trec:2" in str(ei.value) and "r.trec:3" in str(ei.value)
    (tmp_path / "q").write_text("q 0 d x\nq 0 d\n")
    with pytest.raises(ValidationError) as ei:
        read_qrels(tmp_path / "q")
    assert "q:1" in str(ei.value) and "q:2" in str(ei.value)


def test_external_arm_with_exported_bm25_reproduces_fused_results(base_run, tmp_path):
    export_run(base_run, tmp_path / "trec", level="chunk", scores="original", configs=[],
               questions="retrieved")
    cfg = tmp_path / "ext.toml"
    cfg.write_text(f"""
[defaults]
k = 60
depth = 100
[arms.bm25x]
kind = "external"
path = "{tmp_path / 'trec' / 'arms' / 'bm25.trec'}"
[grid]
k = [60]
arms = [["bm25x", "boost"]]
""")
    again = Run(run(RunOptions(config=cfg, runs_dir=tmp_path, run_id="ext")).path)
    a = base_run.table("fused")
    a = a[a["config_id"] == CID].drop(columns=["config_id", "run_id"]).reset_index(drop=True)
    b = again.table("fused")
    b = b[b["config_id"] == "rrf_k60_bm25x+boost"].drop(
        columns=["config_id", "run_id"]).reset_index(drop=True)
    b = b.rename(columns={"rank_bm25x": "rank_bm25"})[a.columns]
    pd.testing.assert_frame_equal(a, b)
    assert again.manifest["arms"]["bm25x"]["kind"] == "external"


def test_external_arm_reports_unmatched_ids(base_run, tmp_path):
    bad = tmp_path / "bad.trec"
    bad.write_text("bw-01 Q0 nosuch#p0001.c000 1 2.0 x\nbw-01 Q0 bw-rules#3 2 1.0 x\nzz-99 Q0 bw-rules#4 1 1.0 x\n")
    cfg = tmp_path / "bad.toml"
    cfg.write_text(f'[arms.ext]\nkind = "external"\non_unmatched = "error"\npath = "{bad}"\n'
                   '[grid]\narms = [["ext", "boost"]]\n')
    with pytest.raises(ValidationError) as ei:
        run(RunOptions(config=cfg, runs_dir=tmp_path, run_id="bad"))
    text = str(ei.value)
    assert f"{bad}:1: id 'nosuch#p0001.c000' matches no chunk" in text
    assert f"{bad}:3: question 'zz-99' is not in the gold set" in text
    # the default keeps the unknown id at its rank as a foreign hit; both rows stay listed
    cfg.write_text(cfg.read_text().replace('on_unmatched = "error"\n', ""))
    ok = Run(run(RunOptions(config=cfg, runs_dir=tmp_path, run_id="keep")).path)
    info = ok.manifest["arms"]["ext"]
    assert info["unmatched_count"] == 2 and info["foreign_hits"] == 1 and info["on_unmatched"] == "keep"
    ranks = ok.table("arm_ranks")
    ranks = ranks[(ranks["arm"] == "ext") & (ranks["question_id"] == "bw-01")]
    assert ranks[["chunk_id", "rank", "foreign"]].values.tolist() == [
        ["nosuch#p0001.c000", 1, True], ["bw-rules#p0003.c000", 2, False]]
    cfg.write_text(cfg.read_text().replace('path = ', 'on_unmatched = "warn"\npath = '))
    with pytest.raises(ValidationError, match=r'on_unmatched = "warn" is no longer accepted.*"keep".*"drop"'):
        run(RunOptions(config=cfg, runs_dir=tmp_path, run_id="warn"))


@pytest.mark.parametrize("form", ["qrels.txt", "qrels-requirements.txt"])
def test_goldset_from_qrels_round_trip(base_run, tmp_path, form):
    export_run(base_run, tmp_path, configs=[], arms=[], questions="retrieved")
    q = base_run.table("questions")
    (tmp_path / "questions.tsv").write_text(
        "".join(f"{r.question_id}\t{r.question}\t{r.language}\n" for r in q.itertuples()), encoding="utf-8")
    out = goldset_from_qrels(tmp_path / form, tmp_path / "questions.tsv", SAMPLE_GOLDSET,
                             tmp_path / "imported.yaml")
    gs = load_goldset(out)
    orig = load_goldset(SAMPLE_GOLDSET)
    any_of = 0
    for a, b in zip(orig.questions, gs.questions, strict=True):
        assert a.question_id == b.question_id and a.relevant_pages == b.relevant_pages
        assert a.answerable == b.answerable
        if form == "qrels-requirements.txt":  # the any-of groups survive
            assert [set(r) for r in a.requirements] == [set(r) for r in b.requirements]
            any_of += any(len(r) > 1 for r in a.requirements)
    assert form == "qrels.txt" or any_of >= 10


def test_requirement_qrels_cannot_mix_forms_within_a_question(tmp_path):
    (tmp_path / "q.tsv").write_text("a\tWhat?\n")
    (tmp_path / "qrels").write_text("a 0 bw-rules#2 1\na::1 0 bw-rules#3 1\n")
    with pytest.raises(ValidationError, match="mixes plain"):
        goldset_from_qrels(tmp_path / "qrels", tmp_path / "q.tsv", SAMPLE_GOLDSET, tmp_path / "o.yaml")


def test_qrels_import_reports_every_problem(tmp_path):
    (tmp_path / "q.tsv").write_text("a\tWhat?\nbad line\n")
    (tmp_path / "qrels").write_text("a 0 bw-rules#2 1\nzz 0 bw-rules#2 1\n")
    with pytest.raises(ValidationError, match=r"bad line|expected qid"):
        goldset_from_qrels(tmp_path / "qrels", tmp_path / "q.tsv", SAMPLE_GOLDSET, tmp_path / "o.yaml")
