"""The fact judge: versioned prompt, YES/NO verdicts stored with model and prompt hash."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from rulegauge.answering.answerers import make_answerer
from rulegauge.answering.judge import judge_prompt_hash, messages, verdict
from rulegauge.answering.runner import answer_run
from rulegauge.core.errors import ConfigError, RulegaugeError
from rulegauge.store.rundir import Run, RunWriter
from tests.helpers.answering import register_echo, write_run
from tests.helpers.chat_server import chat_server, ok, status


@pytest.mark.parametrize(("reply", "stated"), [
    ("YES", True), ("yes.", True), ("**No**", False), ("NO - it says 7", False),
    ("Maybe", None), ("", None)])
def test_verdict(reply: str, stated: bool | None) -> None:
    assert verdict(reply) is stated


def test_prompt_names_question_answer_and_every_phrasing() -> None:
    m = messages("Q?", "The answer [1].", ("5 cards", "five cards"))
    assert m[0]["role"] == "system" and "YES or NO" in m[0]["content"]
    assert "Q?" in m[1]["content"] and "The answer [1]." in m[1]["content"]
    assert "5 cards / five cards" in m[1]["content"]
    assert len(judge_prompt_hash()) == 64


def add_facts(run_dir: Path) -> None:
    RunWriter(run_dir).write_table("question_facts", pd.DataFrame([
        {"question_id": "q-move", "fact": 1, "phrasings": ["three spaces", "3 spaces"]},
        {"question_id": "q-move", "fact": 2, "phrasings": ["harbour"]},
        {"question_id": "q-score", "fact": 1, "phrasings": ["three points"]}]))


def test_judged_run_stores_verdicts_and_judge_fact_recall(tmp_path: Path) -> None:
    register_echo()
    run_dir = write_run(tmp_path / "r")
    add_facts(run_dir)
    # preflight chat, the judge's own 4 answers, then echo's q-move fact 1, fact 2, q-score
    script = [ok("OK"), *[ok("It moves [1].")] * 4, ok("YES"), ok("NO"), status(400)]
    with chat_server(script, models=["j"]) as srv:
        answer_run(run_dir, [("echo", {}), ("judge=openai", {
            "model": "j", "base_url": srv.base_url, "retries": 0})], judge="judge",
            configs=["rrf-3"])
        bodies = [r.body for r in srv.requests if r.path == "/v1/chat/completions"]
    run = Run(run_dir)
    v = run.table("judge_verdicts")
    echo = v[v["answerer"] == "echo"].sort_values(["question_id", "fact"])
    assert echo[["question_id", "fact"]].values.tolist() == [["q-move", 1], ["q-move", 2],
                                                             ["q-score", 1]]
    assert echo["stated"].tolist()[:2] == [True, False]
    assert pd.isna(echo["stated"].tolist()[2]) and "HTTP 400" in echo["error"].tolist()[2]
    assert set(v["judge_model"]) == {"j"} and set(v["judge_prompt_hash"]) == {judge_prompt_hash()}
    assert "three spaces / 3 spaces" in bodies[5]["messages"][1]["content"]
    m = run.table("answer_metrics")
    j = m[(m["metric"] == "judge_fact_recall") & (m["answerer"] == "echo")].set_index(
        "question_id")["value"]
    assert j["q-move"] == 0.5 and math.isnan(j["q-score"])
    det = m[(m["metric"] == "fact_recall") & (m["answerer"] == "echo")].set_index(
        "question_id")["value"]
    assert math.isnan(det["q-none"]) and det["q-move"] == 0.0
    assert run.manifest["answering"]["judge"]["prompt"]["sha256"] == judge_prompt_hash()
    assert json.dumps(run.manifest["answering"]["judge"]["answerer"]) == '"judge"'


def test_a_judge_must_take_a_free_prompt(tmp_path: Path) -> None:
    from rulegauge.answering.judge import chat_function

    with pytest.raises(ConfigError, match="cannot judge"):
        chat_function(make_answerer("extractive"))
    register_echo()
    run_dir = write_run(tmp_path / "r")
    with pytest.raises(RulegaugeError, match="judge 'nobody' is not one of the answerers"):
        answer_run(run_dir, [("echo", {})], judge="nobody")
