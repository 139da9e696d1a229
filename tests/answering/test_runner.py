"""answer_run: tables, every metric for every question, journal resume, errors, CLI."""

from __future__ import annotations

import json
import math
import threading
import time
from pathlib import Path
from typing import ClassVar

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from rulegauge.answering.answer_metrics import answer_metric_names
from rulegauge.answering.answer_rows import answer_metric_frame, measured_answer_metrics
from rulegauge.answering.journal import JOURNAL_DIR, Journal
from rulegauge.answering.read import ReadOptions
from rulegauge.answering.requests import AnswerRequest, AnswerResponse
from rulegauge.answering.runner import answer_run
from rulegauge.cli.answer import parse_answerer_params, register
from rulegauge.core.errors import ConfigError, RulegaugeError, ValidationError
from rulegauge.store.rundir import Run
from tests.helpers.answering import QUESTIONS, EchoAnswerer, register_echo, write_run

N_Q = len(QUESTIONS)


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    register_echo()
    EchoAnswerer.calls = []
    return write_run(tmp_path / "run-1")


def test_tables_hold_every_question_and_every_metric(run_dir: Path) -> None:
    s = answer_run(run_dir, [("echo", {}), ("extractive", {})], configs=["rrf-3", "arm-bm25"])
    assert s.answerers == ("echo", "extractive") and s.configs == ("rrf-3", "arm-bm25")
    assert dict(s.asked) == {"echo": 2 * N_Q, "extractive": 2 * N_Q}
    run = Run(run_dir)
    answers = run.table("answers")
    assert len(answers) == 2 * 2 * N_Q
    m = run.table("answer_metrics")
    stored = set(answer_metric_names()) - set(measured_answer_metrics())
    assert "latency_ms" in answer_metric_names() and "latency_ms" not in stored
    assert len(m) == 2 * 2 * N_Q * len(stored)
    assert set(m["metric"]) == stored  # wall time is the answers' column: reruns' tables are equal
    every = answer_metric_frame(run)  # what side by side, compare and gate read
    assert len(every) == 2 * 2 * N_Q * len(answer_metric_names())
    lat = every[every["metric"] == "latency_ms"].merge(answers, on=["question_id", "config_id", "answerer"])
    assert len(lat) == 2 * 2 * N_Q and (lat["value"] == lat["latency_ms"]).all()
    # fact recall is undefined (NaN) without reference facts (none here) and unjudged
    facts = m["metric"].isin(["fact_recall", "judge_fact_recall"])
    # citation precision is undefined (NaN) for an answer that cites nothing (ALCE)
    precision = m["metric"] == "citation_precision"
    assert not m[~facts & ~precision]["value"].isna().any()
    assert m[facts]["value"].isna().all()
    key = ["question_id", "config_id", "answerer"]
    cits = run.table("citations")
    citing = set(map(tuple, cits[~cits["dangling"].astype(bool)][key].itertuples(index=False)))
    undefined = m[precision].set_index(key)["value"].isna()
    assert undefined.any() and not undefined.all()
    assert all(bool(u) == (k not in citing) for k, u in undefined.items())
    reads = run.table("reads")
    assert set(reads["config_id"]) == {"rrf-3", "arm-bm25"}
    cits = run.table("citations")
    assert set(cits["answerer"]) == {"echo", "extractive"}
    manifest = run.manifest["answering"]
    assert manifest["order"] == ["echo", "extractive"]
    assert manifest["answerers"]["echo"]["describe"] == {"model_id": "echo-1", "cite": "[1]"}
    assert manifest["read_options"] == ReadOptions().describe()
    assert len(manifest["prompt"]["sha256"]) == 64
    assert set(answers["prompt_hash"]) == {manifest["prompt"]["sha256"]}


def test_default_config_is_the_first_grid_config(run_dir: Path) -> None:
    s = answer_run(run_dir, [("echo", {})])
    assert s.configs == ("rrf-3",)
    assert set(Run(run_dir).table("answers")["config_id"]) == {"rrf-3"}


def test_metric_values_follow_their_definitions(run_dir: Path) -> None:
    answer_run(run_dir, [("echo", {"cite": "[1][9]"})])
    m = answer_metric_frame(Run(run_dir)).set_index(["question_id", "metric"])["value"]
    # q-score needs rb#3 and er#1; the read's [1] is rb#3 (fused #1), [9] does not exist
    assert m[("q-score", "citation_precision")] == 1 / 1
    assert m[("q-score", "citation_recall")] == 1 / 2
    assert m[("q-score", "dangling_markers")] == 1
    assert m[("q-score", "context_recall")] == 2 / 2
    assert m[("q-none", "abstained")] == 1 and m[("q-none", "abstention_correct")] == 1
    assert m[("q-move", "abstention_correct")] == 1 and m[("q-move", "no_citation")] == 0
    assert math.isnan(m[("q-none", "citation_precision")])  # cites nothing: no precision (ALCE)
    assert m[("q-move", "latency_ms")] == 5.0
    text = "The rules answer this [1][9]."
    letters, nonspace = sum(c.isalpha() for c in text), len(text.replace(" ", ""))
    assert m[("q-move", "letter_density")] == letters / nonspace


def test_killed_run_resumes_without_asking_finished_questions(run_dir: Path) -> None:
    with pytest.raises(KeyboardInterrupt):
        answer_run(run_dir, [("echo", {"stop_after": 3})], max_workers=1)
    journal = Journal(run_dir / JOURNAL_DIR / "echo.jsonl").load()
    assert len(journal) == 2  # calls 1 and 2 finished; call 3 was interrupted
    assert not Run(run_dir).has_table("answers")
    EchoAnswerer.calls = []
    # same label and parameters: the journal holds the run's answers so far
    with pytest.raises(RulegaugeError, match="was used in this run"):
        answer_run(run_dir, [("echo", {})], max_workers=1)
    s = answer_run(run_dir, [("echo", {"stop_after": 3})], max_workers=2)
    assert len(EchoAnswerer.calls) == N_Q - 2
    assert dict(s.asked) == {"echo": N_Q - 2} and dict(s.reused) == {"echo": 2}
    assert len(Run(run_dir).table("answers")) == N_Q
    EchoAnswerer.calls = []
    answer_run(run_dir, [("echo", {"stop_after": 3})])
    assert EchoAnswerer.calls == []  # everything was answered


def test_failed_calls_are_rows_and_retry_errors_asks_them_again(run_dir: Path) -> None:
    answer_run(run_dir, [("echo", {"fail_on": "q-storm"})])
    answers = Run(run_dir).table("answers").set_index("question_id")
    assert answers.loc["q-storm", "outcome"] == "error"
    assert answers.loc["q-storm", "error"] == "RuntimeError: server said no"
    assert answers.loc["q-storm", "text"] == "" and not answers.loc["q-storm", "fence_passed"]
    assert pd.isna(answers.loc["q-storm", "tokens_in"]) and answers.loc["q-move", "tokens_in"] == 10
    m = Run(run_dir).table("answer_metrics").set_index(["question_id", "metric"])["value"]
    assert m[("q-storm", "error")] == 1 and m[("q-storm", "abstention_correct")] == 0
    EchoAnswerer.calls = []
    answer_run(run_dir, [("echo", {"fail_on": "q-storm"})])
    assert EchoAnswerer.calls == []
    answer_run(run_dir, [("echo", {"fail_on": "q-storm"})], retry_errors=True)
    assert EchoAnswerer.calls == ["q-storm"]


def test_torn_last_journal_line_is_cut_and_asked_again(run_dir: Path) -> None:
    answer_run(run_dir, [("echo", {})])
    path = run_dir / JOURNAL_DIR / "echo.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + lines[-1][:20], encoding="utf-8")
    EchoAnswerer.calls = []
    answer_run(run_dir, [("echo", {})])
    assert len(EchoAnswerer.calls) == 1
    assert len(path.read_text(encoding="utf-8").splitlines()) == N_Q


def test_damaged_journal_line_is_reported_with_file_and_line(run_dir: Path) -> None:
    answer_run(run_dir, [("echo", {})])
    path = run_dir / JOURNAL_DIR / "echo.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text(lines[0] + "{not json\n" + "".join(lines[1:]), encoding="utf-8")
    with pytest.raises(ValidationError, match=r"echo\.jsonl:2"):
        answer_run(run_dir, [("echo", {})])


def test_stale_answers_are_asked_again(run_dir: Path) -> None:
    answer_run(run_dir, [("echo", {})])
    path = run_dir / JOURNAL_DIR / "echo.jsonl"
    recs = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    recs[0]["request_hash"] = "0" * 64  # as if the passages read had changed
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    EchoAnswerer.calls = []
    answer_run(run_dir, [("echo", {})])
    assert EchoAnswerer.calls == [recs[0]["question_id"]]


def test_second_answerer_joins_an_answered_run(run_dir: Path) -> None:
    answer_run(run_dir, [("echo", {})])
    EchoAnswerer.calls = []
    answer_run(run_dir, [("other=echo", {"cite": "[2]"})])
    assert len(EchoAnswerer.calls) == N_Q
    answers = Run(run_dir).table("answers")
    assert list(dict.fromkeys(answers["answerer"])) == ["echo", "other"]
    assert set(answers[answers["answerer"] == "other"]["answerer_name"]) == {"echo"}


def test_changing_read_options_or_configs_on_an_answered_run_raises(run_dir: Path) -> None:
    answer_run(run_dir, [("echo", {})])
    with pytest.raises(RulegaugeError, match="read_options"):
        answer_run(run_dir, [("echo", {})], read_options=ReadOptions(final=2))
    with pytest.raises(RulegaugeError, match="configs"):
        answer_run(run_dir, [("echo", {})], configs=["arm-bm25"])
    answer_run(run_dir, [("echo", {})], read_options=ReadOptions(), configs=["rrf-3"])


def test_bad_answerer_input_lists_the_choices(run_dir: Path) -> None:
    with pytest.raises(RulegaugeError, match="choose one of: ") as exc:
        answer_run(run_dir, [("nope", {})])
    assert {"echo", "extractive"} <= set(str(exc.value).split(": ")[-1].split(", "))
    with pytest.raises(RulegaugeError, match="labels repeat: echo"):
        answer_run(run_dir, [("echo", {}), ("echo", {})])
    with pytest.raises(ConfigError, match=r"unknown parameter\(s\) colour"):
        answer_run(run_dir, [("echo", {"colour": "red"})])
    with pytest.raises(RulegaugeError, match="unknown config"):
        answer_run(run_dir, [("echo", {})], configs=["nope"])


def test_parse_answerer_params() -> None:
    got = parse_answerer_params(["ollama.model=gemma4:26b", "ollama.temperature=0.2",
                                 "extractive.stem=false", "x.n=3"])
    assert got == {"ollama": {"model": "gemma4:26b", "temperature": 0.2},
                   "extractive": {"stem": False}, "x": {"n": 3}}
    with pytest.raises(ConfigError, match=r"LABEL\.KEY=VALUE"):
        parse_answerer_params(["model=x"])


def _app() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


def test_cli_answer_and_answerers(run_dir: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(_app(), ["answer", str(run_dir), "--answerer", "echo",
                                 "--answerer", "extractive", "--workers", "1"])
    assert res.exit_code == 0, res.output
    assert "echo: asked 4" in res.output and "extractive - echo" in res.output
    res = runner.invoke(_app(), ["answerers", str(run_dir), "--config", "rrf-3"])
    assert res.exit_code == 0, res.output
    assert "cit. precision" in res.output and "latency p95" in res.output


@pytest.mark.parametrize("args, message", [
    (["--answerer", "nope"], "unknown answerer 'nope'"),
    (["--answerer", "echo", "--param", "echo"], "LABEL.KEY=VALUE"),
    (["--answerer", "echo", "--param", "other.x=1"], "not given with --answerer"),
    (["--answerer", "echo", "--reranker", "nope"], "unknown reranker"),
    (["--answerer", "echo", "--config", "nope"], "unknown config"),
])
def test_cli_bad_input_exits_2(run_dir: Path, args: list[str], message: str) -> None:
    res = CliRunner().invoke(_app(), ["answer", str(run_dir), *args])
    assert res.exit_code == 2, res.output
    assert message in " ".join(res.output.split())


def test_cli_answerers_on_an_unanswered_run_exits_2(run_dir: Path) -> None:
    res = CliRunner().invoke(_app(), ["answerers", str(run_dir)])
    assert res.exit_code == 2 and "rulegauge answer" in res.output


class _Gauge(EchoAnswerer):
    """Records how many calls run at once."""

    max_concurrency: ClassVar[int | None] = None
    lock = threading.Lock()
    now = 0
    peak = 0

    def answer(self, request: AnswerRequest) -> AnswerResponse:
        cls = type(self)
        with cls.lock:
            cls.now += 1
            cls.peak = max(cls.peak, cls.now)
        time.sleep(0.02)
        with cls.lock:
            cls.now -= 1
        return super().answer(request)


class _Serial(_Gauge):
    max_concurrency: ClassVar[int | None] = 1


@pytest.mark.parametrize("cls, workers, peak", [(_Gauge, 2, 2), (_Gauge, 1, 1), (_Serial, 2, 1)])
def test_calls_in_flight_are_bounded(tmp_path: Path, cls: type[_Gauge], workers: int,
                                     peak: int) -> None:
    from rulegauge.answering.answerers.base import ANSWERERS

    name = f"gauge-{cls.__name__.lower()}"
    if name not in ANSWERERS:
        ANSWERERS.add(name, cls)
    cls.peak = cls.now = 0
    answer_run(write_run(tmp_path / "run-g"), [(name, {})], max_workers=workers)
    assert cls.peak == peak
