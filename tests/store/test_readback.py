"""rulegauge.store.readback: run tables back to the records they were written from."""

from rulegauge.pipeline.options import RunOptions
from rulegauge.pipeline.retrieval import SAMPLE_GOLDSET, run
from rulegauge.store.readback import chunks_from_frame, documents_from_frame, questions_from_frame
from rulegauge.store.rundir import Run
from tests.helpers.common import LEXICAL


def test_questions_facts_documents_and_chunks_round_trip(tmp_path):
    result = run(RunOptions(config=LEXICAL, runs_dir=tmp_path, run_id="r"))
    r = Run(result.path)
    assert result.goldset is not None and result.corpus is not None
    questions = questions_from_frame(r.table("questions"), r.table("question_facts"))
    assert list(questions) == [q.question_id for q in result.goldset.questions]
    for q in result.goldset.questions:
        back = questions[q.question_id]
        assert (back.requirements, back.language, back.facts) == (q.requirements, q.language, q.facts)
    assert any(q.facts for q in questions.values())
    without = questions_from_frame(r.table("questions"))
    assert all(q.facts == () for q in without.values())
    docs = documents_from_frame(r.table("documents"))
    assert set(docs) == {d.doc_id for d in result.corpus.documents}
    chunks = chunks_from_frame(r.table("chunks"))
    assert [chunks[c.chunk_id] for c in result.corpus.chunks] == list(result.corpus.chunks)
    assert SAMPLE_GOLDSET.exists()


def test_judgments_come_back_with_their_questions(tmp_path):
    import pandas as pd

    from rulegauge.goldset.records import PageJudgment

    questions = pd.DataFrame([{"question_id": "q1", "goldset": "g", "language": "en",
                               "question": "Q?", "game": None, "tags": [],
                               "requirements": '[["d#1"]]', "n_requirements": 1,
                               "answerable": True}])
    judged = pd.DataFrame([{"question_id": "q1", "doc_id": "d", "page": 3, "grade": 0,
                            "judge_kind": "human",
                            "judge_id": "ann", "time": "", "note": "no"}])
    q = questions_from_frame(questions, judgments=judged)["q1"]
    assert q.judged == (PageJudgment("d", 3, 0, "human", "ann", "", "no"),)
    assert q.judged_pages() == frozenset({"d#1", "d#3"})
