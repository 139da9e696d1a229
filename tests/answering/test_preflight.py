"""Preflight and the failure policy: a dead endpoint exits 2 before anything is asked;
error rows never enter statistics; above the error rate the command exits 1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rulegauge.answering.answerers import make_answerer
from rulegauge.answering.preflight import preflight_all
from rulegauge.answering.runner import answer_run
from rulegauge.answering.sidebyside import side_by_side
from rulegauge.cli.answer import register
from rulegauge.core.errors import ValidationError
from rulegauge.store.rundir import Run
from tests.helpers.answering import QUESTIONS, write_run
from tests.helpers.chat_server import chat_server, ok, status
from tests.helpers.common import typer_app
from tests.helpers.llama_server import free_port

N_Q = len(QUESTIONS)


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return write_run(tmp_path / "run-1")


def dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}"  # nothing listens there


def test_preflight_names_a_dead_endpoint_and_a_missing_model() -> None:
    with chat_server(models=["llama3:8b"]) as srv:
        a = {"dead": make_answerer("ollama", model="m", base_url=dead_url()),
             "nomodel": make_answerer("ollama", model="qwen:1b", base_url=srv.base_url),
             "fine": make_answerer("ollama", model="llama3:8b", base_url=srv.base_url),
             "tagless": make_answerer("openai", model="llama3:8b", base_url=srv.base_url),
             "local": make_answerer("extractive")}
        problems = preflight_all(a, timeout_s=5)
        paths = [r.path for r in srv.requests]
    text = "\n".join(map(str, problems))
    assert [p.where.split()[1] for p in problems] == ["dead", "nomodel"]
    assert "cannot reach http://127.0.0.1:" in text and "Connection refused" in text
    assert "model 'qwen:1b' is not on the server" in text and "it has: llama3:8b" in text
    # the ready ones were asked one tiny request each, after their model list
    assert paths.count("/api/chat") == 1 and paths.count("/v1/chat/completions") == 1
    assert paths.count("/api/tags") == 2 and paths.count("/v1/models") == 1


def test_preflight_reports_a_failing_test_request() -> None:
    with chat_server([status(500)], models=["m"]) as srv:
        problems = preflight_all({"x": make_answerer("openai", model="m",
                                                     base_url=srv.base_url)}, timeout_s=5)
    assert "a one-line test request" in str(problems[0]) and "HTTP 500" in str(problems[0])


def test_dead_endpoint_fails_before_anything_is_asked_or_written(run_dir: Path) -> None:
    before = sorted(p.name for p in run_dir.iterdir())
    with pytest.raises(ValidationError) as e:
        answer_run(run_dir, [("extractive", {}), ("small=ollama",
                                                  {"model": "m", "base_url": dead_url()})])
    assert "answerer small (ollama)" in str(e.value) and "nothing was asked" in str(e.value)
    assert sorted(p.name for p in run_dir.iterdir()) == before  # no reads, no journal
    assert "answering" not in Run(run_dir).manifest


def test_cli_dead_endpoint_exits_2_in_a_fresh_process(run_dir: Path, tmp_path: Path) -> None:
    suite = tmp_path / "s.toml"
    suite.write_text(f'[answerers.small]\nprovider = "ollama"\nmodel = "qwen2.5:0.5b"\n'
                     f'endpoint = "{dead_url()}"\n')
    exe = Path(sys.executable).with_name("rulegauge")
    out = subprocess.run([str(exe), "answer", str(run_dir), "--suite", str(suite)],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "COLUMNS": "250"})
    assert out.returncode == 2, out.stdout + out.stderr
    assert "answerer small (ollama)" in out.stderr and "cannot reach" in out.stderr
    assert "Traceback" not in out.stderr
    assert not (run_dir / "reads.parquet").exists()


def test_errors_are_rows_statistics_leave_them_out_and_the_rate_fails(run_dir: Path) -> None:
    # the server fails the first question for good (retries 0), answers the rest
    with chat_server([ok("OK"), status(500)], models=["m"]) as srv:
        s = answer_run(run_dir, [("extractive", {}), ("flaky=openai", {
            "model": "m", "base_url": srv.base_url, "retries": 0})], max_workers=1)
    assert dict(s.errors) == {"extractive": 0, "flaky": 1}
    assert s.error_rate("flaky") == pytest.approx(1 / N_Q)
    assert s.over_error_rate() == ("flaky",)  # 25% > the default 5%
    sbs = side_by_side(Run(run_dir))
    ex = sbs.exclusion("rrf-3")
    assert (ex.questions, ex.compared, ex.errors, ex.not_covered) == (N_Q, N_Q - 1, 1, 0)
    d = next(x for x in sbs.diffs if x.metric == "citation_precision")
    assert d.shared <= N_Q - 1  # never paired over the error row
    row = next(r for r in sbs.rows if r.answerer == "flaky")
    assert row.errors == 1 and row.questions == N_Q


def test_cli_exits_1_above_the_error_rate_and_0_within_it(run_dir: Path) -> None:
    app = typer_app(register)
    with chat_server([ok("OK"), status(500)], models=["m"]) as srv:
        args = ["answer", str(run_dir), "-a", "flaky=openai", "-p", f"flaky.base_url={srv.base_url}",
                "-p", "flaky.model=m", "-p", "flaky.retries=0", "-w", "1"]
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 1, res.output
        assert "flaky: error rate 25.0% is above the limit 5.0%" in res.output
        assert "excluded 1 (1 with an error row" in " ".join(res.output.split())
        res = CliRunner().invoke(app, [*args, "--max-error-rate", "0.5"])
        assert res.exit_code == 0, res.output


def test_run_with_a_dead_answerer_fails_before_retrieval(tmp_path: Path) -> None:
    from rulegauge.answering.stage import answering_stage
    from rulegauge.pipeline.options import RunOptions
    from rulegauge.pipeline.retrieval import run
    from tests.helpers.common import FIXTURES, LEXICAL

    opts = RunOptions(goldset=FIXTURES / "goldsets" / "sample-three.yaml", config=LEXICAL,
                      runs_dir=tmp_path / "runs", run_id="r", allow_outside=True,
                      stages=answering_stage((("small=ollama", {"model": "m", "base_url": dead_url()}),)))
    with pytest.raises(ValidationError, match="answerer small"):
        run(opts)
    assert not (tmp_path / "runs" / "r").exists()
