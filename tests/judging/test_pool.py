"""rulegauge pool (rulegauge.judging.pool) and pool files (rulegauge.judging.poolfile)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rulegauge.core.errors import RulegaugeError, ValidationError
from rulegauge.corpus.records import page_keys
from rulegauge.goldset.judgments import Judgment, write_judgments
from rulegauge.goldset.parse import load_goldset
from rulegauge.goldset.records import PageJudgment
from rulegauge.judging.pool import PoolRequest, build_pool, page_texts
from rulegauge.judging.poolfile import read_pool, write_pool
from rulegauge.store.rundir import Run
from tests.helpers.judging import LEXICAL_CONFIG, lexical_run, sample_copy


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    folder = tmp_path_factory.mktemp("pool")
    return lexical_run(sample_copy(folder), folder / "runs", "lex")


def top_pages(frame: pd.DataFrame, rank: str, depth: int) -> set[tuple[str, str]]:
    """(question, page) of the top ``depth`` pages by ``rank`` per group, the slow way."""
    out = set()
    frame = frame.assign(key=page_keys(frame["doc_id"], frame["page"]))
    for (_, qid), g in frame.groupby(["list", "question_id"]):
        seen: list[str] = []
        for key in g.sort_values([rank, "chunk_id"])["key"]:
            if key not in seen:
                seen.append(key)
        out |= {(str(qid), k) for k in seen[:depth]}
    return out


def test_pool_is_the_top_k_of_config_and_arms_minus_the_judged(sample_run: Run) -> None:
    pool = build_pool(PoolRequest((sample_run,), 3, (LEXICAL_CONFIG,)))
    gs = load_goldset(pool.goldset_path)
    fused = sample_run.table("fused")
    fused = fused[fused["config_id"] == LEXICAL_CONFIG].assign(list="config")
    arms = sample_run.table("arm_ranks").rename(columns={"arm": "list"})
    expected = top_pages(fused, "fused_rank", 3) | top_pages(arms, "rank", 3)
    judged = {(q.question_id, p) for q in gs.questions for p in q.judged_pages()}
    assert {(p.question_id, p.page) for p in pool.pages} == expected - judged
    assert pool.goldset_sha256 == gs.sha256 == sample_run.manifest["goldset"]["sha256"]
    for p in pool.pages:
        assert p.text and {f.kind for f in p.found_by} <= {"config", "arm"}
        assert all(1 <= f.rank <= 3 for f in p.found_by)
    q = next(q for q in pool.questions if q.question_id == "bw-14")
    assert [g[0] for g in q.gold] == ["bw-rules#5"] and "lantern" in q.gold[0][2].lower()


def test_pool_order_and_file_round_trip(sample_run: Run, tmp_path: Path) -> None:
    pool = build_pool(PoolRequest((sample_run,), 2, (LEXICAL_CONFIG,)))
    order = [q.question_id for q in pool.questions]
    keys = [(order.index(p.question_id), min(f.rank for f in p.found_by), p.page)
            for p in pool.pages]
    assert keys == sorted(keys)
    path = write_pool(pool, tmp_path / "pool.jsonl")
    assert read_pool(path) == pool
    head = json.loads(path.read_text().splitlines()[0])
    assert head["goldset_sha256"] == pool.goldset_sha256 and head["pages"] == len(pool.pages)


def test_include_judged_keeps_the_gold_pages(sample_run: Run) -> None:
    pool = build_pool(PoolRequest((sample_run,), 3, (LEXICAL_CONFIG,)))
    every = build_pool(PoolRequest((sample_run,), 3, (LEXICAL_CONFIG,), include_judged=True))
    gs = load_goldset(pool.goldset_path)
    judged = {(q.question_id, p) for q in gs.questions for p in q.judged_pages()}
    extra = {(p.question_id, p.page) for p in every.pages} - {(p.question_id, p.page)
                                                              for p in pool.pages}
    assert extra and extra <= judged


def test_judgments_given_to_pool_are_left_out(sample_run: Run, tmp_path: Path) -> None:
    pool = build_pool(PoolRequest((sample_run,), 2, (LEXICAL_CONFIG,)))
    first = pool.pages[0]
    doc, page = first.page.split("#")
    jf = write_judgments(tmp_path / "j.jsonl", [
        Judgment(first.question_id, PageJudgment(doc, int(page), 0, "human", "ann"))])
    again = build_pool(PoolRequest((sample_run,), 2, (LEXICAL_CONFIG,), (jf,)))
    assert set(again.pages) == set(pool.pages) - {first}


def test_qrels_given_to_pool_are_left_out_too(sample_run: Run, tmp_path: Path) -> None:
    pool = build_pool(PoolRequest((sample_run,), 2, (LEXICAL_CONFIG,)))
    first, second = pool.pages[0], pool.pages[1]
    qrels = tmp_path / "judged.qrels"  # graded TREC qrels, told apart from JSON lines by content
    qrels.write_text(f"{first.question_id} 0 {first.page} 0\n{second.question_id} 0 {second.page} 2\n",
                     encoding="utf-8")
    again = build_pool(PoolRequest((sample_run,), 2, (LEXICAL_CONFIG,), (qrels,)))
    assert set(again.pages) == set(pool.pages) - {first, second}


def test_bad_requests_are_refused_with_every_reason(sample_run: Run, tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as err:
        build_pool(PoolRequest((sample_run,), 3, ("nope",)))
    assert "run lex has no config 'nope'; configs: arm-bm25" in str(err.value)
    with pytest.raises(ValidationError, match="has no service config"):
        build_pool(PoolRequest((sample_run,), 3))
    other = tmp_path / "other"
    gold = sample_copy(other)
    gold.write_text(gold.read_text().replace("description:", "# changed\ndescription:", 1))
    foreign = lexical_run(gold, other / "runs", "other")
    with pytest.raises(ValidationError, match="is of another gold set"):
        build_pool(PoolRequest((sample_run, foreign), 3, (LEXICAL_CONFIG,)))
    gold.write_text(gold.read_text() + "\n# edited after the run\n")
    with pytest.raises(ValidationError, match="the gold set changed since run other"):
        build_pool(PoolRequest((foreign,), 3, (LEXICAL_CONFIG,)))


def test_page_text_puts_overlapping_chunks_back_together() -> None:
    chunks = pd.DataFrame({"chunk_id": ["d#p1.c0", "d#p1.c1", "d#p1.c2"], "doc_id": ["d"] * 3,
                           "page": [1] * 3, "char_start": [0, 4, 20], "char_end": [8, 12, 23],
                           "text": ["abcdefgh", "efghijkl", "xyz"]})
    assert page_texts(chunks, {"d#1"}) == {"d#1": "abcdefghijkl xyz"}


def test_bad_pool_files_name_the_line(tmp_path: Path) -> None:
    p = tmp_path / "pool.jsonl"
    p.write_text('{"type": "question"}\n')
    with pytest.raises(ValidationError, match=r"pool.jsonl:1: not a pool file"):
        read_pool(p)
    head = {"pool": 1, "goldset": "g", "goldset_path": "g.yaml", "goldset_sha256": "ab",
            "runs": [], "depth": 2, "configs": []}
    q = {"type": "question", "question_id": "q1", "question": "Q?", "language": "en", "gold": []}
    page = {"type": "page", "question_id": "q1", "page": "d#1", "found_by": [], "text": "t"}
    lines = [head, {**page, "question_id": "q0"}, q, page, page, {**page, "page": "d"},
             {"type": "chunk"}]
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(ValidationError) as err:
        read_pool(p)
    found = [str(x) for x in err.value.problems]
    assert found[0].startswith(f"{p}:2: page d#1 of question 'q0', which the pool does not hold")
    assert found[1] == f"{p}:5: question q1: d#1 pooled twice (first at {p}:4)"
    assert found[2].startswith(f"{p}:6: not a page id")
    assert found[3].startswith(f"{p}:7: unknown line type 'chunk'")


def test_a_rescored_run_keeps_the_judgments_of_its_gold_set(tmp_path: Path) -> None:
    from rulegauge.goldset.merge import merge_judgments
    from rulegauge.pipeline.options import RunOptions
    from rulegauge.pipeline.rescore import rescore
    from rulegauge.pipeline.retrieval import run
    from tests.helpers.common import LEXICAL

    gold = sample_copy(tmp_path)
    jf = write_judgments(tmp_path / "j.jsonl", [
        Judgment("bw-14", PageJudgment("bw-faq", 2, 0, "human", "ann")),
        Judgment("bw-01", PageJudgment("bw-rules", 3, 1, "llm", "m@p"))])
    v2 = merge_judgments(gold, [jf], gold.with_name("v2.yaml")).path
    metrics = ("Judged@10", "nDCG@10")
    first = Run(run(RunOptions(goldset=v2, config=LEXICAL, runs_dir=tmp_path / "runs",
                               run_id="a", metrics=metrics)).path)
    again = Run(rescore(RunOptions(source_run=first.path, config=LEXICAL, runs_dir=tmp_path / "runs",
                               run_id="b", metrics=metrics)).path)
    assert again.table("question_judgments").equals(first.table("question_judgments"))
    assert len(first.table("question_judgments")) == 2
    ma, mb = (r.table("metrics").sort_values(["config_id", "metric", "question_id"])
              .reset_index(drop=True) for r in (first, again))
    assert ma["value"].equals(mb["value"])


def test_pool_files_are_identical_across_hash_seeds(sample_run: Run, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from tests.helpers.common import REPO

    outs = []
    for seed in ("1", "4242"):
        out = tmp_path / f"pool-{seed}.jsonl"
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        res = subprocess.run([sys.executable, "-c", "from rulegauge.cli import main; main()",
                              "pool", str(sample_run.path), "-k", "3", "-c", LEXICAL_CONFIG,
                              "-o", str(out)], env=env, capture_output=True, text=True,
                             timeout=300, check=False)
        assert res.returncode == 0, res.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_a_pool_cut_short_is_refused_naming_both_counts(sample_run: Run, tmp_path: Path) -> None:
    # issue 33 (9): the header's counts are checked against what the file holds
    path = write_pool(build_pool(PoolRequest((sample_run,), 3, (LEXICAL_CONFIG,))),
                      tmp_path / "pool.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    said = json.loads(lines[0])["pages"]
    path.write_text("".join(lines[:-2]), encoding="utf-8")
    with pytest.raises(ValidationError) as err:
        read_pool(path)
    assert str(err.value.problems[0]) == (
        f"{path}:1: the header says {said} pages, {said - 2} are present: the file was cut "
        "short or edited; write it again with rulegauge pool")


def test_pool_depth_is_bounded_like_every_depth(sample_run: Run) -> None:
    with pytest.raises(RulegaugeError, match="--depth: depth must be between 1 and 10,000, "
                                             "got 1,000,000,000"):
        build_pool(PoolRequest((sample_run,), 10**9, (LEXICAL_CONFIG,)))
