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
from rulegauge.judging.blind import UNBLINDED, View, blind_order
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
    s = Session(tiny_pool(), jf, view=UNBLINDED)  # pool order: the indices below are the pool's
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
    assert all((j.view, j.order_seed) == ("unblinded", None) for j in rows)
    again = Session(tiny_pool(), jf, view=UNBLINDED)  # resumes: what was judged is done
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
    s = Session(tiny_pool(), tmp_path / "j.jsonl", view=UNBLINDED)
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
        assert item["found_by"] == ["bm25 (arm #1)"] and state["view"] == {"name": "unblinded",
                                                                           "seed": None}
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


def many_pool(questions: int = 6, pages: int = 5) -> Pool:
    qs = tuple(PoolQuestion(f"q{i}", f"Question {i}?", "en", ()) for i in range(questions))
    return Pool("g", "g.yaml", "ab" * 32, ("r1",), 5, ("svc",), qs, tuple(
        PoolPage(f"q{i}", f"d#{k + 1}", (FoundBy("r1", "svc", "config", k + 1),), f"text {k}")
        for i in range(questions) for k in range(pages)))


def test_blind_order_is_a_seeded_permutation_keeping_questions_together() -> None:
    pool = many_pool()
    first, again = blind_order(pool.pages, 7), blind_order(pool.pages, 7)
    assert first == again and sorted(first, key=repr) == sorted(pool.pages, key=repr)
    assert first != list(pool.pages) and blind_order(pool.pages, 8) != first
    runs = [p.question_id for p in first]  # each question's pages in one run
    assert len([q for k, q in enumerate(runs) if k == 0 or runs[k - 1] != q]) == 6
    # within questions the systems' order is gone too: ranks are not 1, 2, 3, ... everywhere
    ranks = [[p.found_by[0].rank for p in first if p.question_id == f"q{i}"] for i in range(6)]
    assert any(r != sorted(r) for r in ranks)
    with pytest.raises(ValueError, match="seed"):
        View(seed=-1)


def test_the_blind_default_hides_finders_and_records_view_and_seed(tmp_path: Path) -> None:
    jf = tmp_path / "j.jsonl"
    s = Session(many_pool(), jf, view=View(seed=11))
    assert s.items == blind_order(many_pool().pages, 11)
    server, _ = serve_in_thread(s)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        state = json.load(urllib.request.urlopen(base + "/api/state?judge=ann"))
        assert "found_by" not in state["item"] and state["view"] == {"name": "blind", "seed": 11}
        assert "svc" not in json.dumps(state) and "#1" not in json.dumps(state)
        item = state["item"]
        status, _ = post_as_page(base, "/api/judge", {"judge": "ann", "grade": 2, "question_id":
                                                      item["question_id"], "page": item["page"]})
        assert status == 200
    finally:
        server.shutdown()
        server.server_close()
    (row,) = read_judgments(jf)
    assert (row.pair, row.view, row.order_seed) == ((item["question_id"], item["page"]),
                                                    "blind", 11)
    assert json.loads(jf.read_text())["view"] == "blind"
    assert Session(many_pool(), jf).view == View(seed=0)  # the default: blind, seed 0


def test_a_bad_view_or_seed_in_a_judgments_file_is_named(tmp_path: Path) -> None:
    jf = tmp_path / "j.jsonl"
    base = {"question_id": "q1", "page": "d#2", "grade": 1, "judge_kind": "human"}
    jf.write_text("\n".join(json.dumps({**base, "judge_id": j, **extra}) for j, extra in (
        ("ann", {"view": "peeking"}), ("bob", {"order_seed": -3}),
        ("cy", {"order_seed": True}))) + "\n")
    with pytest.raises(ValidationError) as err:
        read_judgments(jf)
    assert [str(p) for p in err.value.problems] == [
        f"{jf}:1: view must be one of blind, unblinded, got 'peeking'",
        f"{jf}:2: order_seed must be an integer 0..4294967295, got -3",
        f"{jf}:3: order_seed must be an integer 0..4294967295, got True"]
