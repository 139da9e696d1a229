"""The LLM relevance judge (rulegauge.judging.llm, rulegauge judges llm): grade parsing,
majority and disagreement, unparseable verdicts never grade 0, the reply cache, the
judgments it writes, and an endpoint that is down failing before any work."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rulegauge.cli import app
from rulegauge.goldset.judgments import read_judgments
from rulegauge.judging.llm import (
    MAX_PAGE_CHARS,
    Chat,
    JudgeRequest,
    VerdictCache,
    judge_id,
    judge_pool,
    majority,
    messages,
    parse_grade,
    prompt_hash,
)
from rulegauge.judging.poolfile import FoundBy, Pool, PoolPage, PoolQuestion, write_pool
from tests.helpers.chat_server import chat_server, ok
from tests.helpers.llama_server import free_port

runner = CliRunner()
FOUND = (FoundBy("r", "bm25", "arm", 1),)


def tiny_pool() -> Pool:
    qs = (PoolQuestion("q1", "How many policies does the President draw?", "en", ()),
          PoolQuestion("q2", "Can the Chancellor veto?", "en", ()))
    pages = (PoolPage("q1", "rb#1", FOUND, "The President draws three policy tiles."),
             PoolPage("q1", "rb#2", FOUND, "Setup: shuffle the deck."),
             PoolPage("q2", "rb#3", FOUND, "x" * (MAX_PAGE_CHARS + 10)))
    return Pool("g", "g.yaml", "ab" * 32, ("r",), 2, ("c",), qs, pages)


@pytest.mark.parametrize(("reply", "grade"), [
    ("3", 3), ("  **2**", 2), ("0.", 0), ("Grade: 1", 1), ("##final score: 2", 2),
    ("O: 3", 3), ("final grade = 0", 0)])
def test_grades_are_read_from_the_first_digit(reply: str, grade: int) -> None:
    assert parse_grade(reply) == grade


@pytest.mark.parametrize("reply", ["", "relevant", "4", "2.5", "12", "The page is 3", None])
def test_anything_else_is_unparseable_never_zero(reply: str | None) -> None:
    assert parse_grade(reply) is None  # type: ignore[arg-type]


def test_majority_keeps_the_most_common_and_ties_go_low() -> None:
    assert majority([2, 3, 2]) == 2
    assert majority([3, 1]) == 1
    assert majority([0]) == 0


def test_prompt_is_versioned_hashed_and_cuts_long_pages() -> None:
    assert len(prompt_hash()) == 64
    assert judge_id("qwen 1.5b") == f"qwen_1.5b@{prompt_hash()[:12]}"
    user = messages("Q?", "y" * (MAX_PAGE_CHARS + 5))[1]["content"]
    assert "y" * MAX_PAGE_CHARS in user and "y" * (MAX_PAGE_CHARS + 1) not in user
    assert "Q?" in user


def scripted(replies: dict[tuple[str, int], str], calls: list[tuple[str, int]]) -> Chat:
    def chat(msgs: list[dict[str, str]], key: str, seed: int) -> tuple[str, str | None]:
        page = key.split("|")[2]
        calls.append((page, seed))
        reply = replies.get((page, seed), "2")
        return ("", "HTTP 500") if reply == "FAIL" else (reply, None)
    return chat


def test_majority_disagreement_unparseable_and_failures(tmp_path: Path) -> None:
    calls: list[tuple[str, int]] = []
    replies = {("rb#1", 5): "3", ("rb#1", 6): "3", ("rb#1", 7): "1",
               ("rb#2", 5): "nonsense", ("rb#2", 6): "maybe", ("rb#2", 7): "no idea",
               ("rb#3", 5): "FAIL", ("rb#3", 6): "FAIL", ("rb#3", 7): "FAIL"}
    req = JudgeRequest(tiny_pool(), scripted(replies, calls), "m", samples=3, seed=5)
    found, s = judge_pool(req, VerdictCache(tmp_path / "c.jsonl"))
    assert [(j.page, j.judgment.grade) for j in found] == [("rb#1", 3)]
    j = found[0].judgment
    assert (j.judge_kind, j.judge_id, j.note) == ("llm", judge_id("m"), "llm samples 3 3 1")
    assert found[0].goldset_sha256 == "ab" * 32
    assert (s.pairs, s.judged, s.unparseable_pairs, s.failed_pairs) == (3, 1, 1, 1)
    assert (s.unparseable_samples, s.failed_samples, s.truncated_pages) == (3, 3, 1)
    assert s.disagreement_rate == 1.0 and s.calls == 9
    assert sorted({seed for _, seed in calls}) == [5, 6, 7]


def test_cache_asks_nothing_twice_and_keys_on_page_text(tmp_path: Path) -> None:
    cache = tmp_path / "c.jsonl"
    calls: list[tuple[str, int]] = []
    pool = tiny_pool()
    first, s1 = judge_pool(JudgeRequest(pool, scripted({}, calls), "m", 2), VerdictCache(cache))
    assert s1.calls == 6 and s1.disagreement_rate == 0.0
    again, s2 = judge_pool(JudgeRequest(pool, scripted({}, calls), "m", 2), VerdictCache(cache))
    assert s2.calls == 0 and s2.cached == 6
    assert [j.judgment.grade for j in again] == [j.judgment.grade for j in first]
    edited = replace(pool, pages=(pool.pages[0], PoolPage("q1", "rb#2", FOUND, "Edited text."),
                                  pool.pages[2]))
    _, s3 = judge_pool(JudgeRequest(edited, scripted({}, calls), "m", 2), VerdictCache(cache))
    assert s3.calls == 2  # only the page whose text changed
    _, s4 = judge_pool(JudgeRequest(pool, scripted({}, calls), "other-model", 2),
                       VerdictCache(cache))
    assert s4.calls == 6


def suite(path: Path, endpoint: str) -> Path:
    path.write_text(f"""[suite]
name = "j"
[answerers.local]
provider = "openai"
model = "stub"
endpoint = "{endpoint}"
retries = 0
[answerers.local.parameters]
temperature = 0.7
[judge]
answerer = "local"
""")
    return path


def test_cli_judges_a_pool_through_a_chat_server(tmp_path: Path) -> None:
    pool = write_pool(tiny_pool(), tmp_path / "pool.jsonl")
    out = tmp_path / "llm.jsonl"
    with chat_server([ok("OK"), ok("3"), ok("1"), ok("junk")], models=["stub"]) as server:
        res = runner.invoke(app, ["judges", "llm", str(pool), "--suite",
                                  str(suite(tmp_path / "s.toml", server.base_url)), "-o", str(out)])
        bodies = [r.body for r in server.requests if r.path.endswith("/chat/completions")]
    assert res.exit_code == 0, res.output
    assert [(j.page, j.judgment.grade) for j in read_judgments(out)] == [("rb#1", 3), ("rb#2", 1)]
    assert all(b["temperature"] == 0.0 and b["seed"] == 0 for b in bodies[1:])
    summary = json.loads((tmp_path / "llm.jsonl.summary.json").read_text())
    assert summary["unparseable_pairs"] == 1 and summary["unparseable"][0]["reply"] == "junk"
    assert "unparseable: 1 pages" in res.output


def test_cli_exits_2_before_any_work_when_the_judge_is_down(tmp_path: Path) -> None:
    pool = write_pool(tiny_pool(), tmp_path / "pool.jsonl")
    dead = f"http://127.0.0.1:{free_port()}"
    out = tmp_path / "llm.jsonl"
    res = runner.invoke(app, ["judges", "llm", str(pool), "--suite",
                              str(suite(tmp_path / "s.toml", dead)), "-o", str(out),
                              "--preflight-timeout", "2"])
    assert res.exit_code == 2, res.output
    assert "cannot reach" in res.output and "answerer local" in res.output
    assert not out.exists() and not (tmp_path / "llm.jsonl.cache.jsonl").exists()


def test_cli_bad_pool_and_unknown_judge_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"pool": 1}\n{"type": "page"}\n')
    s = suite(tmp_path / "s.toml", "http://127.0.0.1:9")
    res = runner.invoke(app, ["judges", "llm", str(bad), "--suite", str(s), "-o", "x.jsonl"])
    assert res.exit_code == 2 and "bad.jsonl:2" in res.output
    pool = write_pool(tiny_pool(), tmp_path / "pool.jsonl")
    res = runner.invoke(app, ["judges", "llm", str(pool), "--suite", str(s), "--judge", "nope",
                              "-o", "x.jsonl"])
    assert res.exit_code == 2 and "no answerer labelled 'nope'" in res.output
