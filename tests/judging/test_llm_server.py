"""The LLM relevance judge against a real llama.cpp server with the packaged Qwen2.5 1.5B.

One server for the module (the fixture pattern of tests/answering/test_llama_server.py);
a SMALL pool (3 pages of a lexical run of the sample, depth 1, judged pages kept: each
page is a prompt of ~20 s of CPU, and what is tested is the round trip, the counts and the
cache, which one page already decides) so that the tier stays a few minutes on two cores:
``rulegauge judges llm`` in a fresh process, then ``rulegauge judges agreement`` against the
gold set and against the hand judgments of the sample (goldsets/sample-judgments-hand.jsonl).
The kappa itself is a measurement
(docs/judging.md), not asserted: a model's grades are not a property of this code.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from rulegauge.goldset.judgments import read_judgments
from rulegauge.judging.pool import PoolRequest, build_pool
from rulegauge.judging.poolfile import write_pool
from tests.helpers.common import REPO
from tests.helpers.judging import LEXICAL_CONFIG, lexical_run, sample_copy
from tests.helpers.llama_server import LlamaServer, required_llama_server, rulegauge_cli

pytestmark = pytest.mark.slow
PAGES = 3
HAND = REPO / "goldsets" / "sample-judgments-hand.jsonl"


@pytest.fixture(scope="module")  # one server for the module
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    with required_llama_server(tmp_path_factory.mktemp("llama") / "server.log") as s:
        yield s


def suite(path: Path, server: LlamaServer) -> Path:
    path.write_text(f"""[suite]
name = "judge"
[answerers.local]
provider = "openai"
model = "{server.model}"
endpoint = "{server.base_url}"
timeout_s = 600
retries = 0
[answerers.local.parameters]
max_tokens = 4
[judge]
answerer = "local"
""")
    return path


def test_llm_judge_on_a_small_sample_pool(server: LlamaServer, tmp_path: Path) -> None:
    gold = sample_copy(tmp_path)
    run = lexical_run(gold, tmp_path / "runs", "lex")
    pool = build_pool(PoolRequest((run,), 1, (LEXICAL_CONFIG,), include_judged=True))
    hand = {j.pair for j in read_judgments(HAND)}
    small = replace(pool, pages=tuple(p for p in pool.pages
                                      if (p.question_id, p.page) in hand)[:PAGES])
    assert len(small.pages) == PAGES
    path = write_pool(small, tmp_path / "pool.jsonl")
    out = tmp_path / "llm.jsonl"
    res = rulegauge_cli("judges", "llm", str(path), "--suite", str(suite(tmp_path / "s.toml",
                      server)), "-o", str(out), cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    summary = json.loads((tmp_path / "llm.jsonl.summary.json").read_text())
    judged = read_judgments(out)
    assert summary["pairs"] == PAGES and summary["calls"] == PAGES
    assert len(judged) + summary["unparseable_pairs"] == PAGES and summary["failed_pairs"] == 0
    assert {j.judgment.judge_kind for j in judged} == {"llm"}
    assert {j.judgment.judge_id for j in judged} == {summary["judge_id"]}
    again = rulegauge_cli("judges", "llm", str(path), "--suite", str(tmp_path / "s.toml"),
                        "-o", str(tmp_path / "again.jsonl"), "--cache",
                        str(tmp_path / "llm.jsonl.cache.jsonl"), cwd=tmp_path)
    assert again.returncode == 0 and f"0 calls, {PAGES} cached" in again.stdout, again.stdout
    for reference in (gold, HAND):
        agree = rulegauge_cli("judges", "agreement", str(out), str(reference), "--json",
                            "--resamples", "200", cwd=tmp_path)
        assert agree.returncode == 0, agree.stdout + agree.stderr
        figures = json.loads(agree.stdout)["agreement"]
        assert figures["pairs"] >= 1 and figures["llm_pairs"] == figures["pairs"]
        print(f"{reference.name}: {figures['pairs']} pairs, kappa {figures['kappa']}")


def test_llm_generates_questions_for_one_sample_page(server: LlamaServer, tmp_path: Path) -> None:
    """``rulegauge goldset generate`` with the real model on one page: the reply is counted
    (proposals, answers not in the page, or unparseable; never dropped) and a rerun comes
    from the cache. What the model proposes is a measurement (docs/judging.md)."""
    s = tmp_path / "gen.toml"
    s.write_text(suite(tmp_path / "s.toml", server).read_text().replace(
        "max_tokens = 4", "max_tokens = 120"))
    args = ("goldset", "generate", str(REPO / "goldsets" / "sample.yaml"), "--suite", str(s),
            "-a", "local", "--page", "bw-rules#3", "-n", "1")
    res = rulegauge_cli(*args, "-o", str(tmp_path / "p.jsonl"), cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    m = json.loads((tmp_path / "p.jsonl.manifest.json").read_text())
    c = m["counts"]
    assert (c["pages_read"], c["calls"], c["failed_calls"]) == (1, 1, 0)
    assert c["unparseable_replies"] == len(m["lists"]["unparseable"])
    assert c["answers_not_in_page"] == len(m["lists"]["answers_not_in_page"])
    assert m["generator"]["kind"] == "llm" and m["generator"]["prompt"]["version"] == "questions-v1"
    again = rulegauge_cli(*args, "-o", str(tmp_path / "q.jsonl"), "--cache",
                        str(tmp_path / "p.jsonl.cache.jsonl"), cwd=tmp_path)
    assert again.returncode == 0 and "calls: 0, cached: 1" in again.stdout, again.stdout
    print(res.stdout)
