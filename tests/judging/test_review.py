"""Reviewing generated questions (rulegauge.judging.review, the server's proposal mode) and
turning the accepted ones into a gold set (rulegauge.judging.accept)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from rulegauge.core.errors import RulegaugeError, ValidationError
from rulegauge.goldset.parse import load_goldset
from rulegauge.judging.accept import accept
from rulegauge.judging.generate import GenerateRequest, RuleGenerator, generate, load
from rulegauge.judging.proposals import ProposalSet, read_proposals, write_proposals
from rulegauge.judging.review import ReviewSession, read_decisions
from rulegauge.judging.server import CSP, serve_in_thread
from rulegauge.judging.session import JudgingError
from tests.helpers.judging import sample_copy
from tests.helpers.local_client import post_as_page


@pytest.fixture
def proposals(tmp_path: Path) -> Path:
    gold = sample_copy(tmp_path)
    req = GenerateRequest(load_goldset(gold).documents, ("en",), 2,
                          ("bw-rules#3", "bw-rules#5", "bw-rules#6"))
    result = generate(req, RuleGenerator(), load(req))
    return write_proposals(result.proposals, tmp_path / "proposals.jsonl")


def test_the_proposals_file_reads_back_as_written(proposals: Path) -> None:
    found = read_proposals(proposals)
    assert len(found.proposals) == 6 and len(found.pages) == 3
    assert found.header["counts"]["proposals"] == 6 and len(found.sha256) == 64
    broken = proposals.with_name("broken.jsonl")
    lines = proposals.read_text().splitlines()
    row = json.loads(lines[2])
    row["end"] = 10**6
    broken.write_text("\n".join([lines[0], lines[2], json.dumps(row)]) + "\n")
    with pytest.raises(ValidationError) as err:
        read_proposals(broken)
    assert "broken.jsonl:2" in str(err.value) and "must come first" in str(err.value)


def test_accept_edit_reject_resume_and_refusals(proposals: Path, tmp_path: Path) -> None:
    found = read_proposals(proposals)
    decisions = tmp_path / "decisions.jsonl"
    s = ReviewSession(found, decisions)
    a, b, c = found.proposals[:3]
    s.decide("ann", a.proposal_id, "accept", seconds=2.5)
    with pytest.raises(JudgingError, match="not on page"):
        s.decide("ann", b.proposal_id, "edit", question="Q?", answer="the moon is cheese")
    edited = s.decide("ann", b.proposal_id, "edit", question="  Who goes first? ",
                      answer=b.answer.lower().rstrip("."))
    assert (edited.decision, edited.question, edited.answer) == ("edit", "Who goes first?",
                                                                 b.answer)
    s.skip("ann", c.proposal_id)
    assert s.items[s.next_item("ann") or 0].proposal_id == found.proposals[3].proposal_id
    s.decide("ann", c.proposal_id, "reject")
    with pytest.raises(JudgingError, match="already decided"):
        s.decide("ann", a.proposal_id, "reject")
    with pytest.raises(JudgingError, match="must be one of"):
        s.decide("ann", found.proposals[3].proposal_id, "maybe")
    assert s.progress("ann") == {  # one decision was timed
        "judge": "ann", "done": 3, "total": 6, "skipped": 0, "accept": 1, "edit": 1,
        "reject": 1, "mean_seconds": 2.5, "median_seconds": 2.5}
    # resumed from the file: the decided ones count as done
    again = ReviewSession(read_proposals(proposals), decisions)
    assert again.progress("ann")["done"] == 3 and again.next_item("bob") == 0
    # decisions of another proposals file are refused, naming the line
    other = ProposalSet({**found.header}, found.pages, found.proposals, "other", "0" * 64)
    with pytest.raises(ValidationError, match=r"decisions.jsonl:1"):
        ReviewSession(other, decisions)
    # the accepted and edited ones become a gold set that loads
    out = accept(proposals, decisions, tmp_path / "goldsets" / "generated.yaml")
    gs = load_goldset(out.path)
    assert [q.question_id for q in gs.questions] == [a.proposal_id, b.proposal_id]
    assert gs.question_by_id[b.proposal_id].question == "Who goes first?"
    assert [str(r) for req in gs.questions[0].requirements for r in req] == [a.page_key]
    prov = gs.extra["provenance"]
    assert isinstance(prov, dict) and prov["decisions"]["reject"] == 1
    assert prov["questions"][b.proposal_id]["answer"] == b.answer
    assert prov["generator"]["id"] == "rules-v1" and prov["documents"][0]["sha256"]
    assert gs.derived


def test_accept_needs_a_reviewer_when_several_reviewed(proposals: Path, tmp_path: Path) -> None:
    found = read_proposals(proposals)
    decisions = tmp_path / "d.jsonl"
    s = ReviewSession(found, decisions)
    s.decide("ann", found.proposals[0].proposal_id, "accept")
    s.decide("bob", found.proposals[0].proposal_id, "reject")
    with pytest.raises(RulegaugeError, match="choose one with --reviewer"):
        accept(proposals, decisions, tmp_path / "g.yaml")
    with pytest.raises(ValidationError, match="bob accepted no proposal"):
        accept(proposals, decisions, tmp_path / "g.yaml", reviewer="bob")
    assert not (tmp_path / "g.yaml").exists()
    assert accept(proposals, decisions, tmp_path / "g.yaml", reviewer="ann").questions == 1
    assert len(read_decisions(decisions)) == 2


def test_the_server_serves_proposal_mode_on_localhost(proposals: Path, tmp_path: Path) -> None:
    found = read_proposals(proposals)
    server, _ = serve_in_thread(ReviewSession(found, tmp_path / "d.jsonl"))
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with urllib.request.urlopen(base + "/", timeout=10) as r:
            html = r.read().decode()
            assert r.headers["Content-Security-Policy"] == CSP
        assert 'id="accept"' in html and "http" not in html.replace("http-equiv", "")
        with urllib.request.urlopen(base + "/api/state?judge=ann", timeout=10) as r:
            item = json.loads(r.read())["item"]
        assert item["proposal_id"] == found.proposals[0].proposal_id
        assert item["text"][item["start"]:item["end"]].split() == item["answer"].split()
        status, state = post_as_page(base, "/api/decide", {"judge": "ann", "decision": "reject",
                                                   "proposal_id": item["proposal_id"]})
        assert status == 200 and state["progress"]["reject"] == 1  # type: ignore[index]
        status, state = post_as_page(base, "/api/decide", {"judge": "ann", "decision": "edit",
                                                   "proposal_id": found.proposals[1].proposal_id,
                                                   "question": "", "answer": "x"})
        assert status == 400 and "cannot be empty" in str(state["error"])
    finally:
        server.shutdown()
        server.server_close()
    assert server.server_address[0] == "127.0.0.1"
