"""``arm_frame`` (the ``arm_ranks`` rows of one arm) against the frame built the old way:
one Python tuple per Hit record and a chunk lookup per row. Same schema, dtypes, rows and
floats, whether an arm returns columns (``bm25``, ``boost``) or records (an external list)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest

from rulegauge.arms import ArmContext, load_builtin_arms
from rulegauge.arms.bm25 import BM25Arm
from rulegauge.arms.boost import BoostArm
from rulegauge.arms.results import ArmResult, Hit, HitColumns
from rulegauge.pipeline.arm_frame import COLUMNS, arm_frame
from tests.helpers.common import q
from tests.helpers.generated_corpus import generated_corpus, generated_questions

load_builtin_arms()


def frame_the_old_way(results, corpus) -> pd.DataFrame:
    """The arm frame as ``rulegauge.pipeline.retrieval`` built it before columns (the oracle),
    with a foreign hit (an id the result declares foreign) as its own page: reply id, page 0."""
    rows = [(r.question_id, r.arm, h.chunk_id, h.rank, h.score) for r in results for h in r.hits]
    df = pd.DataFrame(rows, columns=["question_id", "arm", "chunk_id", "rank", "score"])
    by_id = corpus.chunk_by_id
    df["doc_id"] = [by_id[c].doc_id if c in by_id else c for c in df["chunk_id"]]
    df["page"] = [by_id[c].page if c in by_id else 0 for c in df["chunk_id"]]
    df["foreign"] = [c not in by_id for c in df["chunk_id"]]
    return df.astype({"rank": "int32", "page": "int32", "score": "float64", "foreign": "bool"})


@pytest.fixture(scope="module")
def generated():
    corpus, vocab = generated_corpus(seed=11, n_chunks=600, vocab_size=1200)
    return corpus, generated_questions(seed=12, vocab=vocab, n=40)


def test_bm25_columns_give_the_old_frame(generated, tmp_path) -> None:
    corpus, questions = generated
    arm = BM25Arm()
    arm.prepare(corpus, ArmContext(tmp_path))
    results = [replace(r, arm="full-text") for r in arm.search([*questions, q("none", "zzzqqq")], 25)]
    assert all(isinstance(r.found, HitColumns) for r in results[:-1]) and results[-1].found == ()
    got = arm_frame(results, corpus)
    assert not any("hits" in r.__dict__ for r in results)  # no Hit record was built for the table
    pd.testing.assert_frame_equal(got, frame_the_old_way(results, corpus), check_exact=True)
    assert tuple(got.columns) == COLUMNS and len(got) == sum(r.n_hits for r in results) > 0
    assert got["arm"].eq("full-text").all()


def test_records_and_mixed_results_give_the_old_frame(generated, tiny_corpus, tmp_path) -> None:
    boost = BoostArm()
    boost.prepare(tiny_corpus, ArmContext(tmp_path))
    columns = boost.search([q("a", "lantern tokens"), q("b", "boat harbour")], 10)
    records = [ArmResult(r.question_id, r.arm, r.hits, r.empty_reason) for r in columns]
    assert all(isinstance(r.found, HitColumns) and r.n_hits for r in columns)
    assert all(isinstance(r.found, tuple) for r in records) and records == columns
    for results in (columns, records):
        pd.testing.assert_frame_equal(arm_frame(results, tiny_corpus), frame_the_old_way(results, tiny_corpus),
                                      check_exact=True)
    corpus, questions = generated
    bm25 = BM25Arm()
    bm25.prepare(corpus, ArmContext(tmp_path))
    cols = bm25.search(questions[:3], 5)
    ids = [c.chunk_id for c in corpus.chunks]
    mixed = [cols[0], ArmResult("x", "bm25", (Hit(ids[7], 1, 3.0), Hit(ids[2], 2, 3.0))), cols[2]]
    pd.testing.assert_frame_equal(arm_frame(mixed, corpus), frame_the_old_way(mixed, corpus), check_exact=True)


def test_no_hits_give_an_empty_typed_frame(tiny_corpus) -> None:
    for results in ([], [ArmResult("a", "bm25", (), "why")]):
        got = arm_frame(results, tiny_corpus)
        assert tuple(got.columns) == COLUMNS and len(got) == 0
        assert got.dtypes[["rank", "score", "page", "foreign"]].astype(str).tolist() == [
            "int32", "float64", "int32", "bool"]


def test_a_chunk_outside_the_corpus_is_refused(tiny_corpus) -> None:
    with pytest.raises(KeyError, match="nowhere"):
        arm_frame([ArmResult("a", "ext", (Hit("nowhere", 1, 1.0),))], tiny_corpus)


def test_foreign_hits_are_rows_of_their_own_at_their_ranks(tiny_corpus) -> None:
    """An id the result declares foreign keeps its rank: reply id, document = reply id, page 0,
    foreign true; the same foreign id in two questions is one appended row; the corpus's own
    columns are untouched."""
    ids = [c.chunk_id for c in tiny_corpus.chunks]
    results = [ArmResult("a", "live", (Hit("other#p0003.c001", 1, 9.0), Hit(ids[1], 2, 5.0)),
                         foreign=frozenset({"other#p0003.c001"})),
               ArmResult("b", "live", (Hit(ids[0], 1, 4.0), Hit("other#p0003.c001", 2, 3.0), Hit("stale#7", 3, 2.0)),
                         foreign=frozenset({"other#p0003.c001", "stale#7"})),
               ArmResult("c", "live", (Hit(ids[2], 1, 1.0),))]
    got = arm_frame(results, tiny_corpus)
    pd.testing.assert_frame_equal(got, frame_the_old_way(results, tiny_corpus), check_exact=True)
    assert got["foreign"].tolist() == [True, False, False, True, True, False]
    assert got.loc[got["foreign"], ["chunk_id", "doc_id", "page"]].values.tolist() == [
        ["other#p0003.c001", "other#p0003.c001", 0], ["other#p0003.c001", "other#p0003.c001", 0],
        ["stale#7", "stale#7", 0]]
    assert len(tiny_corpus.chunk_columns) == len(ids)  # the corpus's columns gained no row
