"""The judging commands from the CLI (rulegauge.cli.judging, rulegauge goldset merge):
output, exit codes, every bad input named with its file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rulegauge.cli import app
from rulegauge.goldset.judgments import Judgment, write_judgments
from rulegauge.goldset.records import PageJudgment
from rulegauge.store.rundir import Run
from tests.helpers.judging import LEXICAL_CONFIG, lexical_run, sample_copy
from tests.helpers.local_client import post_as_page

runner = CliRunner()


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Run]:
    folder = tmp_path_factory.mktemp("cli-judging")
    gold = sample_copy(folder)
    return gold, lexical_run(gold, folder / "runs", "lex")


def llm_judgments(path: Path, pool: Path) -> Path:
    """An 'LLM' that calls a pooled page relevant when it shares a word with its gold page."""
    rows = [json.loads(x) for x in pool.read_text().splitlines()[1:]]
    gold = {r["question_id"]: " ".join(g["text"] for g in r["gold"]).lower().split()
            for r in rows if r["type"] == "question"}
    out = []
    for r in rows:
        if r["type"] == "page":
            doc, page = r["page"].split("#")
            words = set(gold[r["question_id"]])
            shared = len(words & set(r["text"].lower().split()))
            grade = 0 if not words else min(3, shared // 40)
            out.append(Judgment(r["question_id"], PageJudgment(doc, int(page), grade, "llm",
                                                               "overlap@p0")))
    return write_judgments(path, out)


def test_pool_merge_agreement_export_import(setup: tuple[Path, Run], tmp_path: Path) -> None:
    gold, r = setup
    pool = tmp_path / "pool.jsonl"
    out = runner.invoke(app, ["pool", str(r.path), "-k", "2", "-c", LEXICAL_CONFIG, "-o",
                              str(pool)])
    assert out.exit_code == 0, out.output
    assert "unjudged pages for 57 of 57 questions" in out.output
    llm = llm_judgments(tmp_path / "llm.jsonl", pool)
    out = runner.invoke(app, ["judges", "agreement", str(llm), str(gold), "--run", str(r.path),
                              "--resamples", "100"])
    assert out.exit_code == 0, out.output
    assert "never judged by the gold set: taken as grade 0" in out.output
    assert "LLM-judged [llm]" in out.output and "always-most-common baseline" in out.output
    assert "Kendall's tau between config rankings by nDCG@10 (3 configs" in out.output
    js = runner.invoke(app, ["judges", "agreement", str(llm), str(gold), "--json",
                             "--resamples", "100"])
    data = json.loads(js.output)["agreement"]
    assert data["pairs"] == data["assumed_zero"] == data["llm_pairs"] > 0
    assert sum(map(sum, data["confusion"])) == data["pairs"]
    qrels = tmp_path / "llm.qrels"
    out = runner.invoke(app, ["judges", "export", str(llm), "-o", str(qrels)])
    assert out.exit_code == 0 and "LLM-judged only" in out.output
    back = tmp_path / "back.jsonl"
    out = runner.invoke(app, ["judges", "import", str(qrels), "--judge", "overlap@p0", "--kind",
                              "llm", "-g", str(gold), "-o", str(back)])
    assert out.exit_code == 0, out.output
    new = gold.with_name("sample-llm.yaml")
    out = runner.invoke(app, ["goldset", "merge", str(gold), str(back), "-o", str(new)])
    assert out.exit_code == 0, out.output
    assert "(llm)" in out.output
    out = runner.invoke(app, ["validate", str(new)])
    assert out.exit_code == 0, out.output


def test_bad_inputs_exit_2_naming_file_and_line(setup: tuple[Path, Run], tmp_path: Path) -> None:
    gold, r = setup
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"question_id": "bw-99", "page": "bw-rules#2", "grade": 5,
                               "judge_kind": "human", "judge_id": "ann"}) + "\n"
                   + json.dumps({"question_id": "bw-99", "page": "bw-rules#2", "grade": 1,
                                 "judge_kind": "human", "judge_id": "ann"}) + "\n")
    out = runner.invoke(app, ["goldset", "merge", str(gold), str(bad), "-o",
                              str(tmp_path / "x.yaml")])
    assert out.exit_code == 2 and f"{bad}:1: grade must be an integer 0-3" in out.output
    assert not (tmp_path / "x.yaml").exists()
    out = runner.invoke(app, ["pool", str(r.path), "-c", "nope", "-o", str(tmp_path / "p.jsonl")])
    assert out.exit_code == 2 and "has no config 'nope'" in out.output
    assert not (tmp_path / "p.jsonl").exists()
    pool = tmp_path / "pool.jsonl"
    assert runner.invoke(app, ["pool", str(r.path), "-c", LEXICAL_CONFIG, "-k", "1", "-o",
                               str(pool)]).exit_code == 0
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text(json.dumps({"question_id": "bw-01", "page": "bw-rules#1", "grade": 1,
                                   "judge_kind": "human", "judge_id": "ann",
                                   "goldset_sha256": "0" * 64}) + "\n")
    out = runner.invoke(app, ["judge", str(pool), "-j", str(foreign), "--port", "0"])
    assert out.exit_code == 2 and f"{foreign}:1:" in out.output
    out = runner.invoke(app, ["judges", "agreement", str(bad), str(gold)])
    assert out.exit_code == 2 and f"{bad}:1: grade must be an integer 0-3" in out.output
    bad.write_text(bad.read_text().splitlines()[1] + "\n")
    out = runner.invoke(app, ["judges", "agreement", str(bad), str(gold)])
    assert out.exit_code == 2 and f"{bad}:1: unknown question 'bw-99'" in out.output


def test_judge_serves_until_sigterm_and_keeps_every_judgment(setup: tuple[Path, Run],
                                                             tmp_path: Path) -> None:
    import os
    import re
    import signal
    import subprocess
    import sys

    from tests.helpers.common import REPO

    _, r = setup
    pool = tmp_path / "pool.jsonl"
    assert runner.invoke(app, ["pool", str(r.path), "-c", LEXICAL_CONFIG, "-k", "1", "-o",
                               str(pool)]).exit_code == 0
    first = next(x for x in map(json.loads, pool.read_text().splitlines()[1:])
                 if x["type"] == "page")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", "from rulegauge.cli import main; main()",
                             "judge", str(pool), "--port", "0"], env=env,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        url = None
        for line in proc.stderr:  # the first line names the address
            found = re.search(r"http://127\.0\.0\.1:\d+/", line)
            if found:
                url = found.group()
                break
        assert url is not None
        body = json.dumps({"judge": "ann", "question_id": first["question_id"],
                           "page": first["page"], "grade": 2, "seconds": 1.5}).encode()
        status, reply = post_as_page(url.rstrip("/"), "/api/judge", json.loads(body))
        assert status == 200 and reply["progress"]["done"] == 1
    finally:
        proc.send_signal(signal.SIGTERM)
        _, rest = proc.communicate(timeout=60)  # reads and closes the pipe
    assert proc.returncode == 0 and "stopped; judgments are in" in rest
    saved = [json.loads(x) for x in pool.with_name("pool.judgments.jsonl").read_text().splitlines()]
    assert [(j["question_id"], j["page"], j["grade"]) for j in saved] == [
        (first["question_id"], first["page"], 2)]
