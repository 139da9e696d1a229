"""Judging sessions (rulegauge.judging.session), the server's API (rulegauge.judging.server)
and the highlighting (rulegauge.judging.highlight), without a browser."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from rulegauge.core.errors import ValidationError
from rulegauge.goldset.judgments import read_judgments
from rulegauge.judging import page
from rulegauge.judging.highlight import highlight, question_terms
from rulegauge.judging.poolfile import FoundBy, Pool, PoolPage, PoolQuestion
from rulegauge.judging.server import CSP, serve_in_thread
from rulegauge.judging.session import JudgingError, Session
from tests.helpers.local_client import post_as_page


def tiny_pool() -> Pool:
    qs = (PoolQuestion("q1", "How many lanterns may a guild light?", "en",
                       (("d#1", 1, "A guild lights lanterns."),)),
          PoolQuestion("q2", "When does the game end?", "en", ()))
    found = (FoundBy("r1", "bm25", "arm", 1),)
    pages = (PoolPage("q1", "d#2", found, "Each guild may light two lanterns <b>."),
             PoolPage("q1", "d#3", found, "Storms."), PoolPage("q2", "d#4", found, "The end."))
    return Pool("g", "g.yaml", "ab" * 32, ("r1",), 3, ("c",), qs, pages)


def test_judge_skip_resume_and_refusals(tmp_path: Path) -> None:
    jf = tmp_path / "j.jsonl"
    s = Session(tiny_pool(), jf)
    assert s.next_item("ann") == 0
    s.skip("ann", "q1", "d#2")
    assert s.next_item("ann") == 1
    s.record("ann", "q1", "d#3", 0, note=" storms only ", seconds=2.0)
    s.record("ann", "q2", "d#4", 3, seconds=4.0)
    assert s.next_item("ann") == 0  # the skipped item comes back last
    with pytest.raises(JudgingError, match="already judged"):
        s.record("ann", "q1", "d#3", 1)
    for bad in (4, -1, True, "2", None):
        with pytest.raises(JudgingError, match="grade must be 0, 1, 2 or 3"):
            s.record("ann", "q1", "d#2", bad)
    with pytest.raises(JudgingError, match="not in this pool"):
        s.record("ann", "q1", "d#9", 1)
    with pytest.raises(JudgingError, match="judge id"):
        s.next_item("a b")
    p = s.progress("ann")
    assert (p.done, p.total, p.mean_seconds, p.median_seconds) == (2, 3, 3.0, 3.0)
    rows = read_judgments(jf)
    assert [(j.question_id, j.page, j.judgment.grade, j.judgment.note) for j in rows] == [
        ("q1", "d#3", 0, "storms only"), ("q2", "d#4", 3, "")]
    assert all(j.goldset_sha256 == "ab" * 32 and j.judgment.judge_kind == "human" for j in rows)
    again = Session(tiny_pool(), jf)  # resumes: what was judged is done
    assert again.progress("ann").done == 2 and again.next_item("ann") == 0
    assert again.next_item("bob") == 0


def test_a_judgments_file_of_another_pool_is_refused(tmp_path: Path) -> None:
    jf = tmp_path / "j.jsonl"
    jf.write_text(json.dumps({"question_id": "q1", "page": "d#7", "grade": 1, "judge_kind":
                              "human", "judge_id": "ann"}) + "\n" + json.dumps(
        {"question_id": "q1", "page": "d#2", "grade": 1, "judge_kind": "human",
         "judge_id": "ann", "goldset_sha256": "cd" * 32}) + "\n")
    with pytest.raises(ValidationError) as err:
        Session(tiny_pool(), jf, pool_path="p.jsonl")
    assert [str(p) for p in err.value.problems] == [
        f"{jf}:1: question q1: d#7 is not in the pool p.jsonl",
        f"{jf}:2: judged against another gold set than the pool's (g.yaml)"]


def test_agreement_of_several_judges(tmp_path: Path) -> None:
    s = Session(tiny_pool(), tmp_path / "j.jsonl")
    for judge, grades in (("ann", (2, 0, 3)), ("bob", (2, 1, 3)), ("cy", (2, 0, 3))):
        for (qid, pid), g in zip((("q1", "d#2"), ("q1", "d#3"), ("q2", "d#4")), grades,
                                 strict=True):
            s.record(judge, qid, pid, g)
    a = s.agreement()
    assert a["judges"] == ["ann", "bob", "cy"] and a["shared_items"] == 3
    ann_cy = next(p for p in a["pairs"] if p["judges"] == ["ann", "cy"])
    assert ann_cy["kappa"] == pytest.approx(1.0) and ann_cy["agreement"] == 1.0
    assert a["disagreements"] == [{"question_id": "q1", "page": "d#3",
                                   "grades": {"ann": 0, "bob": 1, "cy": 0}}]
    assert a["fleiss"] is not None and a["fleiss"] < 1.0 and a["llm_judges"] == []


def test_llm_judgments_in_the_file_count_as_an_llm_judge(tmp_path: Path) -> None:
    jf = tmp_path / "j.jsonl"
    jf.write_text(json.dumps({"question_id": "q1", "page": "d#2", "grade": 2, "judge_kind": "llm",
                              "judge_id": "qwen@p1"}) + "\n")
    s = Session(tiny_pool(), jf)
    s.record("ann", "q1", "d#2", 2)
    a = s.agreement()
    assert a["llm_judges"] == ["qwen@p1"] and a["pairs"][0]["judges"] == ["ann", "qwen@p1"]


def test_api_serves_the_page_and_refuses_bad_requests(tmp_path: Path) -> None:
    s = Session(tiny_pool(), tmp_path / "j.jsonl")
    server, _ = serve_in_thread(s)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with urllib.request.urlopen(base + "/") as r:
            assert r.headers["Content-Security-Policy"] == CSP
            html = r.read().decode()
        assert "http://" not in html and "https://" not in html  # nothing from elsewhere
        state = json.load(urllib.request.urlopen(base + "/api/state?judge=ann"))
        item = state["item"]
        assert (item["question_id"], item["page"]) == ("q1", "d#2")
        assert "<mark>lanterns</mark>" in item["html"] and "&lt;b&gt;" in item["html"]
        assert item["gold"][0]["page"] == "d#1"
        status, reply = post_as_page(base, "/api/judge", {"judge": "ann", "question_id": "q1",
                                                          "page": "d#2", "grade": 7})
        assert status == 400 and "grade must be" in reply["error"]
    finally:
        server.shutdown()
        server.server_close()
    assert server.server_address[0] == "127.0.0.1"


def test_highlight_marks_question_words_by_stem_and_escapes() -> None:
    terms = question_terms("How many lanterns may the guild light?", "en")
    assert "the" not in terms and "how" not in terms
    out = highlight("Lanterns & a <lantern> lit by THE guilds", terms, "en")
    assert out == ("<mark>Lanterns</mark> &amp; a &lt;<mark>lantern</mark>&gt; lit by THE "
                   "<mark>guilds</mark>")
    assert "<button id=\"grade-3\">" in page.render()
