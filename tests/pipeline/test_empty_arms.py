"""Arms that return nothing say so: counts in the manifest and run summary, a warning.

The case from the trust issue: a gold set over several games whose questions carry
no ``game`` leaves the boost arm empty for every question.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from rulegauge.arms.base import empty_counts, empty_warning
from rulegauge.arms.boost import NO_GAME
from rulegauge.arms.results import ArmResult, Hit
from rulegauge.pipeline.options import RunOptions
from rulegauge.pipeline.retrieval import run
from tests.helpers.common import FIXTURES, LEXICAL, REPO


def two_game_goldset(folder: Path, with_game: bool) -> Path:
    """Lanterns of Brackwater and Pebble Race in one gold set (copies of our own texts)."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "goldsets" / "sample" / "brackwater-rulebook.txt", folder / "lanterns.txt")
    shutil.copy(FIXTURES / "goldsets" / "docs" / "pebble-rules.txt", folder / "pebble.txt")
    g1 = ", game: Lanterns" if with_game else ""
    g2 = ", game: Pebble Race" if with_game else ""
    text = f"""goldset: two-games
version: 1
documents:
  - {{id: lb, path: lanterns.txt, kind: rulebook, game: Lanterns, edition: en-1, language: en}}
  - {{id: pr, path: pebble.txt, kind: rulebook, game: Pebble Race, edition: en-1, language: en}}
questions:
  - {{id: a, language: en, question: "How many points does a lit lantern score?", pages: [lb#1]{g1}}}
  - {{id: b, language: en, question: "Where do pebbles start?", pages: [pr#1]{g2}}}
  - {{id: c, language: en, question: "How far does a pebble move?", pages: [pr#1]{g2}}}
"""
    path = folder / "two-games.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_counts_and_warning_rules():
    hit = (Hit("c", 1, 1.0),)
    res = [ArmResult("1", "x", ()), ArmResult("2", "x", (), "why"), ArmResult("3", "x", (), "why"),
           ArmResult("4", "x", hit)]
    info = empty_counts(res)
    assert info == {"questions": 4, "empty_questions": 3, "empty_reasons": {"why": 2}}
    w = empty_warning("x", info)
    assert w is not None and "3 of 4" in w and "2 questions: why" in w
    assert empty_warning("x", empty_counts(res[1:])) is not None
    assert empty_warning("x", empty_counts(res[2:])) is None  # exactly half: no warning
    assert empty_warning("x", empty_counts([])) is None


def test_boost_empty_without_game_is_counted_in_manifest(tmp_path):
    gs = two_game_goldset(tmp_path / "gs", with_game=False)
    result = run(RunOptions(goldset=gs, config=LEXICAL, runs_dir=tmp_path / "runs", run_id="r"))
    arms = json.loads((result.path / "manifest.json").read_text())["arms"]
    assert arms["boost"]["empty_questions"] == 3 and arms["boost"]["questions"] == 3
    assert arms["boost"]["empty_reasons"] == {NO_GAME: 3}
    assert arms["bm25"]["empty_questions"] == 0
    gs2 = two_game_goldset(tmp_path / "gs2", with_game=True)
    result = run(RunOptions(goldset=gs2, config=LEXICAL, runs_dir=tmp_path / "runs", run_id="r2"))
    arms = json.loads((result.path / "manifest.json").read_text())["arms"]
    assert arms["boost"]["empty_questions"] == 0


def test_cli_prints_counts_and_warns_on_stderr(tmp_path):
    gs = two_game_goldset(tmp_path / "gs", with_game=False)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "250"}
    proc = subprocess.run([str(Path(sys.executable).parent / "rulegauge"), "run", "-g", str(gs), "-c", str(LEXICAL),
                           "--out", str(tmp_path / "runs"), "--run-id", "cli"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "questions with no hits, per arm: bm25 0 of 3, boost 3 of 3" in proc.stdout
    err = " ".join(proc.stderr.split())
    assert "warning: arm boost returned nothing for 3 of 3 questions" in err
    assert NO_GAME in err
    assert "warning" not in proc.stdout


def test_external_arm_says_which_questions_its_file_lacks(tmp_path, tiny_corpus):
    from rulegauge.arms.base import ArmContext
    from rulegauge.arms.external import NO_ROWS, ExternalArm
    from rulegauge.goldset.records import Question

    path = tmp_path / "run.jsonl"
    path.write_text('{"question_id": "a", "rank": 1, "chunk_id": "rb#p0001.c000"}\n', encoding="utf-8")
    arm = ExternalArm(str(path))
    arm.prepare(tiny_corpus, ArmContext(tmp_path))
    a, b = arm.search([Question("a", "x", "en", ()), Question("b", "y", "en", ())], 10)
    assert a.hits and a.empty_reason is None
    assert b.hits == () and b.empty_reason == NO_ROWS
