"""``rulegauge judges agreement`` over graded TREC qrels (told apart from JSON lines by
content): Cohen's kappa on two qrels files equals scikit-learn's (oracle), the judge id
comes from the flag, a qrels file and a JSON-lines file compare pair by pair."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from typer.testing import CliRunner

from rulegauge.cli import app
from rulegauge.goldset.judgments import Judgment, is_qrels, read_judgments, write_judgments
from rulegauge.goldset.labels import load_labels
from rulegauge.goldset.records import PageJudgment
from rulegauge.judging.compare_labels import compare

runner = CliRunner()


def _qrels(path: Path, rows: list[tuple[str, str, int]]) -> Path:
    path.write_text("".join(f"{q} 0 {p} {g}\n" for q, p, g in rows), encoding="utf-8")
    return path


@pytest.fixture
def two_judges(tmp_path: Path) -> tuple[Path, Path, list[int], list[int]]:
    """Two graded qrels files over 60 shared pairs (seeded), each with pairs of its own."""
    rng = np.random.default_rng(36)
    pairs = [(f"q{i // 4:02d}", f"rules#{i % 4 + 1}") for i in range(60)]
    a = rng.integers(0, 4, len(pairs)).tolist()
    # b agrees with a on about two thirds of the pairs, else grades at random
    b = [g if rng.random() < 0.65 else int(rng.integers(0, 4)) for g in a]
    fa = _qrels(tmp_path / "ann.qrels", [(q, p, g) for (q, p), g in zip(pairs, a, strict=True)]
                + [("q99", "rules#9", 3)])
    fb = _qrels(tmp_path / "bob.txt", [(q, p, g) for (q, p), g in reversed(list(zip(pairs, b, strict=True)))]
                + [("q98", "rules#8", 1)])
    return fa, fb, a, b


def test_kappa_of_two_graded_qrels_files_equals_scikit_learns(two_judges) -> None:
    fa, fb, a, b = two_judges
    res = runner.invoke(app, ["judges", "agreement", str(fa), str(fb), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)["agreement"]
    assert out["pairs"] == 60 and (out["a"], out["b"]) == (str(fa), str(fb))
    assert out["kappa"] == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    binary = cohen_kappa_score([int(g >= 1) for g in a], [int(g >= 1) for g in b])
    assert out["binary_kappa"] == pytest.approx(binary, abs=1e-12)
    assert out["accuracy"] == pytest.approx(np.mean(np.array(a) == np.array(b)))


def test_the_judge_id_comes_from_the_flag_or_the_file_stem(two_judges, tmp_path: Path) -> None:
    fa, fb, _, _ = two_judges
    assert is_qrels(fa) and is_qrels(fb)
    assert {j.judgment.judge_id for j in read_judgments(fa)} == {"ann"}
    assert {j.judgment.judge_id for j in read_judgments(fb, qrels_judge="bob-2")} == {"bob-2"}
    assert load_labels(fb, judge="bob-2").grades == load_labels(fb).grades
    # a JSON-lines file of the same grades compares with the qrels file pair by pair
    jl = write_judgments(tmp_path / "ann.jsonl", [
        Judgment(j.question_id, PageJudgment(j.judgment.doc_id, j.judgment.page, j.judgment.grade,
                                             "human", "ann")) for j in read_judgments(fa)])
    assert not is_qrels(jl)
    same = compare(load_labels(jl), load_labels(fa), resamples=10)
    assert same.pairs == 61 and same.accuracy == 1.0


def test_bad_qrels_name_file_and_line(tmp_path: Path) -> None:
    bad = _qrels(tmp_path / "bad.qrels", [("q1", "rules#1", 2)])
    with bad.open("a", encoding="utf-8") as f:
        f.write("q1 0 rules#2\nq1 0 rules#1 1\n")
    res = runner.invoke(app, ["judges", "agreement", str(bad), str(bad)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert f"{bad}:2" in res.output and "expected 'qid 0 docid relevance'" in res.output
    ok = _qrels(tmp_path / "x.qrels", [("q1", "rules#1", 2)])
    res = runner.invoke(app, ["judges", "agreement", str(ok), str(ok), "--judge-a", "not a judge!"])
    assert res.exit_code == 2 and "give a valid judge id with --judge" in res.output
