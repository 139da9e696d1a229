"""The real-model tier: llama.cpp's OpenAI-compatible server with the packaged Qwen2.5 GGUF.

A module fixture starts ``python -m llama_cpp.server`` on 127.0.0.1 (tests/helpers/
llama_server.py); ``rulegauge answer --suite`` then asks the ``openai`` answerer, through
the preflight, three questions of the embedded sample (an answerable one, an errata one,
an unanswerable one) in a fresh process: a real server, a real model, real citations,
fence and fact verdicts. Skipped with the reason when the ``llama`` extra is not
installed; under ``RULEGAUGE_REQUIRE_LLAMA=1`` (``.ci/run``) that is a failure.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rulegauge.pipeline.options import RunOptions
from rulegauge.pipeline.retrieval import run
from rulegauge.store.rundir import Run
from tests.helpers.common import FIXTURES, LEXICAL
from tests.helpers.llama_server import LlamaServer, required_llama_server, rulegauge_cli

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")  # stopped when this module is done, not at the end of CI
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    with required_llama_server(tmp_path_factory.mktemp("llama") / "server.log") as s:
        yield s


def test_openai_answerer_against_a_real_llama_cpp_server(server: LlamaServer,
                                                         tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run(RunOptions(goldset=FIXTURES / "goldsets" / "sample-three.yaml", config=LEXICAL,
                   runs_dir=runs, run_id="r", allow_outside=True))
    suite = tmp_path / "suite.toml"
    suite.write_text(f"""
[suite]
name = "real-server"
[answerers.extractive]
provider = "extractive"
[answerers.local]
provider = "openai"
model = "{server.model}"
endpoint = "{server.base_url}"
timeout_s = 600
retries = 0
concurrency = 1
[answerers.local.parameters]
max_tokens = 64
""")
    start = time.perf_counter()
    out = rulegauge_cli("answer", "r", "--runs-dir", str(runs), "--suite", str(suite),
                      "--pool", "40", "--final", "3", cwd=tmp_path)
    seconds = time.perf_counter() - start
    assert out.returncode == 0, out.stdout + out.stderr
    r = Run(runs / "r")
    answers = r.table("answers")
    local = answers[answers["answerer"] == "local"].set_index("question_id")
    assert sorted(local.index) == ["bw-04", "bw-13", "bw-52"]
    assert (local["outcome"] != "error").all(), local["error"].tolist()
    assert (local["model_id"] == server.model).all()
    assert local["tokens_in"].notna().all() and (local["tokens_in"] > 50).all()
    assert local["fence_reason"].str.len().gt(0).all()  # a real fence verdict on real text
    cits = r.table("citations")
    real = cits[(cits["answerer"] == "local") & ~cits["dangling"]]
    assert len(real) >= 1, local["text"].tolist()  # the model cites passages it read
    assert set(real["doc_id"]) <= {"bw-rules", "bw-errata"}
    metrics = r.table("answer_metrics")
    facts = metrics[(metrics["answerer"] == "local") & (metrics["metric"] == "fact_recall")]
    assert facts.set_index("question_id")["value"].notna().sum() == 2  # bw-52 has no facts
    manifest = r.manifest["answering"]
    assert manifest["suite"]["name"] == "real-server" and len(manifest["suite"]["sha256"]) == 64
    assert manifest["answerers"]["local"]["describe"]["endpoint"].startswith(server.base_url)
    side = rulegauge_cli("answerers", "r", "--runs-dir", str(runs), "--format", "json",
                       cwd=tmp_path)
    assert side.returncode == 0, side.stderr
    fig = json.loads(side.stdout)
    assert {a["answerer"] for a in fig["answerers"]} == {"extractive", "local"}
    (tmp_path / "timing.json").write_text(json.dumps({
        "startup_s": server.startup_s, "answer_cmd_s": seconds,
        "latency_ms": local["latency_ms"].tolist()}))
    print(f"llama.cpp server: startup {server.startup_s:.1f} s, answer command {seconds:.1f} s, "
          f"latency per question {local['latency_ms'].round(0).tolist()} ms")
