"""The replay answerer: recorded answers from JSONL or Parquet."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rulegauge.answering.answerers.replay import ReplayAnswerer, load_recording
from rulegauge.answering.requests import AnswerRequest
from rulegauge.core.errors import ConfigError, ValidationError


def _req(qid: str) -> AnswerRequest:
    return AnswerRequest(qid, "Why?", "en", ())


ROWS = [
    {"question_id": "q1", "config_id": "A", "text": "Three tiles [1].", "outcome": "answered",
     "model_id": "gemma4:26b", "latency_ms": 5691.0, "tokens_in": 3260, "tokens_out": 840},
    {"question_id": "q1", "config_id": "B", "text": "Two tiles [2].", "outcome": "answered",
     "model_id": "gemma4:26b", "latency_ms": 4000.5, "tokens_in": 3000, "tokens_out": 800},
    {"question_id": "q2", "config_id": "A", "text": "ABSTAIN: not covered",
     "model_id": "gemma4:26b", "latency_ms": 900.0},
    {"question_id": "q3", "config_id": "A", "text": "", "outcome": "error",
     "error": "HTTP 500", "latency_ms": 10.0},
]


def _jsonl(tmp_path: Path, rows: list[dict], name: str = "rec.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    return p


def test_jsonl_replay_by_question_and_config(tmp_path: Path) -> None:
    a = ReplayAnswerer(path=_jsonl(tmp_path, ROWS), config_id="A")
    r = a.answer(_req("q1"))
    assert (r.text, r.outcome, r.model_id, r.latency_ms, r.tokens_in, r.tokens_out, r.error) == \
        ("Three tiles [1].", "answered", "gemma4:26b", 5691.0, 3260, 840, None)
    assert ReplayAnswerer(path=_jsonl(tmp_path, ROWS), config_id="B").answer(_req("q1")).text \
        == "Two tiles [2]."


def test_missing_outcome_is_derived_from_text(tmp_path: Path) -> None:
    r = ReplayAnswerer(path=_jsonl(tmp_path, ROWS), config_id="A").answer(_req("q2"))
    assert r.outcome == "abstained" and r.tokens_in is None


def test_recorded_error_rows_replay_as_errors(tmp_path: Path) -> None:
    r = ReplayAnswerer(path=_jsonl(tmp_path, ROWS), config_id="A").answer(_req("q3"))
    assert (r.outcome, r.text, r.error) == ("error", "", "HTTP 500")


def test_missing_question_is_an_error_response(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, ROWS)
    r = ReplayAnswerer(path=path, config_id="A").answer(_req("q9"))
    assert r.outcome == "error" and r.text == ""
    assert "q9" in r.error and str(path) in r.error and "config A" in r.error
    assert r.latency_ms >= 0


def test_parquet_matches_jsonl(tmp_path: Path) -> None:
    pq_path = tmp_path / "rec.parquet"
    pd.DataFrame(ROWS).to_parquet(pq_path)
    js = load_recording(_jsonl(tmp_path, ROWS), "A")
    pq = load_recording(pq_path, "A")
    # columns with gaps come back from Parquet as float with NaN: same records
    assert {k: v for k, v in pq.items() if k != "q3"} == {k: v for k, v in js.items() if k != "q3"}
    assert pq["q3"].model_id == "replay:rec.parquet" and js["q3"].model_id == "replay:rec.jsonl"
    assert pq["q1"].tokens_in == 3260 and isinstance(pq["q1"].tokens_in, int)


def test_replays_a_run_answers_table_with_both_filters(tmp_path: Path) -> None:
    rows = [{**r, "answerer": lab, "answerer_name": "ollama", "fence_passed": True}
            for r in ROWS for lab in ("big", "small")]
    p = tmp_path / "answers.parquet"
    pd.DataFrame(rows).to_parquet(p)
    with pytest.raises(ValidationError, match="filter with config_id / answerer"):
        ReplayAnswerer(path=p, config_id="A")
    a = ReplayAnswerer(path=p, config_id="A", answerer="small")
    assert a.answer(_req("q1")).text == "Three tiles [1]."
    d = a.describe()
    assert d["answers"] == 3 and d["model_ids"] == ["gemma4:26b", "replay:answers.parquet"]
    assert len(d["sha256"]) == 64


def test_every_problem_is_reported_with_its_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join([
        json.dumps({"question_id": "q1", "text": "ok [1]"}),
        "{not json",
        json.dumps({"text": "no id"}),
        json.dumps({"question_id": "q2", "text": "x", "outcome": "maybe"}),
        json.dumps({"question_id": "q3", "text": "x", "tokens_in": -1}),
        json.dumps({"question_id": "q1", "text": "again [1]"}),
    ]) + "\n", encoding="utf-8")
    with pytest.raises(ValidationError) as exc:
        load_recording(p)
    # the JSON error is reported first, on its own
    assert len(exc.value.problems) == 1 and "bad.jsonl:2: invalid JSON" in str(exc.value)
    lines = p.read_text(encoding="utf-8").splitlines()
    p.write_text("\n".join(lines[:1] + lines[2:]) + "\n", encoding="utf-8")
    with pytest.raises(ValidationError) as exc:
        load_recording(p)
    msg = str(exc.value)
    assert len(exc.value.problems) == 4
    assert "bad.jsonl:2: question_id is missing" in msg
    assert "bad.jsonl:3: question q2: outcome 'maybe'" in msg
    assert "bad.jsonl:4: question q3: tokens_in=-1" in msg
    assert "bad.jsonl:5: question q1: second recorded answer" in msg


def test_bad_files_and_filters(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        ReplayAnswerer(path=tmp_path / "nope.jsonl")
    csv = tmp_path / "rec.csv"
    csv.write_text("question_id,text\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\.parquet, \.jsonl"):
        ReplayAnswerer(path=csv)
    no_cfg = _jsonl(tmp_path, [{"question_id": "q1", "text": "x [1]"}], "nocfg.jsonl")
    with pytest.raises(ConfigError, match="has no config_id"):
        ReplayAnswerer(path=no_cfg, config_id="A")
    empty_answer = _jsonl(tmp_path, [{"question_id": "q1", "text": " ", "outcome": "answered"},
                                     {"question_id": "q2", "text": "x", "outcome": "error"}],
                          "empty.jsonl")
    with pytest.raises(ValidationError) as exc:
        ReplayAnswerer(path=empty_answer)
    assert "answered with empty text" in str(exc.value)
    assert "error row must have empty text" in str(exc.value)
