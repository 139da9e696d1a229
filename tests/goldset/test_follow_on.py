"""A wrong document path is reported once: the questions of its game are not reported
again as "unknown game" / "unknown edition" (issue 26: 43 problems, 37 of them follow-on)."""

from __future__ import annotations

import shutil
from pathlib import Path

from rulegauge.goldset.parse import read_goldset
from tests.helpers.common import REPO


def _goldset(tmp: Path, other_path: str) -> Path:
    shutil.copy(REPO / "goldsets" / "sample" / "brackwater-rulebook.txt", tmp / "a.txt")
    shutil.copy(REPO / "goldsets" / "sample" / "brackwater-rulebook.txt", tmp / "b.txt")
    questions = "".join(
        f"  - id: q{i}\n    question: How many lanterns?\n    language: en\n"
        f"    game: {game}\n    edition: en-1\n    pages: [{doc}#1]\n"
        for i, (game, doc) in enumerate([("Alpha", "a"), ("Beta", "b"), ("Beta", "b"), ("Beta", "b")]))
    path = tmp / "gold.yaml"
    path.write_text(
        "goldset: two-games\nversion: 1\ndocuments:\n"
        "  - {id: a, path: a.txt, kind: rulebook, game: Alpha, edition: en-1, language: en}\n"
        f"  - {{id: b, path: {other_path}, kind: rulebook, game: Beta, edition: en-1, language: en}}\n"
        "questions:\n" + questions, encoding="utf-8")
    return path


def test_a_wrong_path_is_one_problem_not_one_per_question(tmp_path: Path) -> None:
    gold, problems = read_goldset(_goldset(tmp_path, "no-such.txt"), check_pages=True)
    assert gold is None
    assert [p.message for p in problems] == [
        f"document b: missing document file {(tmp_path / 'no-such.txt').resolve()}"]


def test_the_right_path_loads_and_an_unknown_game_is_still_reported(tmp_path: Path) -> None:
    gold, problems = read_goldset(_goldset(tmp_path, "b.txt"), check_pages=True)
    assert problems == [] and gold is not None and len(gold.questions) == 4
    path = _goldset(tmp_path, "b.txt")
    path.write_text(path.read_text(encoding="utf-8").replace("game: Beta\n", "game: Gamma\n", 1),
                    encoding="utf-8")
    _, problems = read_goldset(path, check_pages=True)
    assert len(problems) == 1 and "unknown game 'Gamma'" in problems[0].message
