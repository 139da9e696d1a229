"""``rulegauge goldset generate`` and ``rulegauge goldset accept`` from the CLI: counts in the
summary and the manifest, bad input named with exit 2 and nothing written."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rulegauge.cli import app
from rulegauge.judging.proposals import read_proposals
from rulegauge.judging.review import ReviewSession
from tests.helpers.common import REPO

runner = CliRunner()
SAMPLE_DOCS = REPO / "goldsets" / "sample"


def test_generate_over_the_sample_folder_reports_its_counts(tmp_path: Path) -> None:
    out = tmp_path / "out" / "proposals.jsonl"
    res = runner.invoke(app, ["goldset", "generate", str(SAMPLE_DOCS), "-a", "extractive",
                              "--lang", "en", "-o", str(out)])
    assert res.exit_code == 0, res.output
    manifest = json.loads(out.with_name("proposals.jsonl.manifest.json").read_text())
    c = manifest["counts"]
    found = read_proposals(out)
    assert found.header["counts"] == c and c["proposals"] == len(found.proposals) > 0
    # the folder: the four sample documents (21 pages), the rulebook's second printing (15) and its
    # German edition (13): --lang sets the proposals' language, it does not pick documents
    assert c["pages_read"] == 21 + 15 + 13 and c["documents"] == 6
    for key, label in (("proposals", "proposals from"), ("empty_pages", "empty pages:"),
                       ("duplicates_removed", "duplicates removed:"),
                       ("unparseable_replies", "unparseable replies:")):
        assert f"{c[key]} {label}" in res.output or f"{label} {c[key]}" in res.output
    assert len(manifest["lists"]["duplicates"]) == c["duplicates_removed"]
    assert "Jaccard" in manifest["dedup"]["rule"]
    assert sorted(p.name for p in out.parent.iterdir()) == ["proposals.jsonl",
                                                           "proposals.jsonl.manifest.json"]


def test_accepted_proposals_become_a_gold_set_rulegauge_validates(tmp_path: Path) -> None:
    out = tmp_path / "p.jsonl"
    res = runner.invoke(app, ["goldset", "generate", str(REPO / "goldsets" / "sample.yaml"),
                              "-a", "extractive", "--page", "bw-rules#3", "-o", str(out)])
    assert res.exit_code == 0, res.output
    found = read_proposals(out)
    s = ReviewSession(found, tmp_path / "p.decisions.jsonl")
    s.decide("ann", found.proposals[0].proposal_id, "accept")
    s.decide("ann", found.proposals[1].proposal_id, "reject")
    gold = tmp_path / "gold.yaml"
    res = runner.invoke(app, ["goldset", "accept", str(out), str(tmp_path / "p.decisions.jsonl"),
                              "-o", str(gold)])
    assert res.exit_code == 0, res.output
    assert "1 questions (decisions of ann: 1 accept, 1 reject" in res.output
    res = runner.invoke(app, ["validate", str(gold), "--allow-outside"])
    assert res.exit_code == 0, res.output
    assert "1 questions" in res.output


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(("args", "message"), [
    (["missing-folder"], "no such file or folder: missing-folder"),
    ([str(SAMPLE_DOCS), "--lang", "xx"], "unknown language 'xx'"),
    ([str(SAMPLE_DOCS), "--page", "brackwater-rulebook#13"], "page out of range"),
    ([str(SAMPLE_DOCS), "--page", "nope#1"], "no document 'nope'"),
])
def test_bad_input_exits_2_naming_it_and_writes_nothing(args: list[str], message: str,
                                                        tmp_path: Path) -> None:
    out = tmp_path / "p.jsonl"
    res = runner.invoke(app, ["goldset", "generate", *args, "-a", "extractive", "-o", str(out)])
    assert res.exit_code == 2, res.output
    assert message in res.output and "Traceback" not in res.output
    assert list(tmp_path.iterdir()) == []


def test_unknown_answerer_and_a_dead_endpoint_exit_2_before_any_work(tmp_path: Path) -> None:
    out = tmp_path / "p.jsonl"
    res = runner.invoke(app, ["goldset", "generate", str(SAMPLE_DOCS), "-a", "oracle",
                              "-o", str(out)])
    assert res.exit_code == 2 and "unknown answerer 'oracle'" in res.output, res.output
    res = runner.invoke(app, ["goldset", "generate", str(SAMPLE_DOCS), "-a", "openai",
                              "-p", "openai.model=m", "-p",
                              f"openai.base_url=http://127.0.0.1:{closed_port()}",
                              "-o", str(out)])
    assert res.exit_code == 2, res.output
    assert "generator preflight failed; nothing was asked" in res.output
    assert list(tmp_path.iterdir()) == []


def test_proposals_are_the_same_bytes_whatever_the_hash_seed(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    outs = []
    for seed in ("1", "2"):
        out = tmp_path / f"p{seed}.jsonl"
        subprocess.run([sys.executable, "-c", "from rulegauge.cli import main; main()", "goldset",
                        "generate", str(SAMPLE_DOCS), "-a", "extractive", "-o", str(out)],
                       check=True, capture_output=True, env={**os.environ, "PYTHONHASHSEED": seed})
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and outs[0].count(b'"type": "proposal"') > 10
