"""Metrics with prediction-powered intervals over a run (rulegauge.judging.ppi_run), the
model-free judge (rulegauge.judging.overlap_judge), the report's section
(rulegauge.judging.ppi_section) and ``rulegauge judges ppi`` / ``overlap`` from the CLI."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from rulegauge.cli import app
from rulegauge.goldset.judgments import read_judgments
from rulegauge.goldset.labels import LabelSet
from rulegauge.judging.overlap_judge import JUDGE_ID, overlap_grade
from rulegauge.judging.ppi import classical_interval, ppi_interval
from rulegauge.judging.ppi_run import PpiRequest, question_values
from rulegauge.judging.ppi_run import ppi_run as run_ppi
from rulegauge.judging.ppi_section import filled_sections, ppi_frame
from rulegauge.judging.rankings import page_lists
from rulegauge.store.rundir import Run
from tests.helpers.common import REPO
from tests.helpers.judging import LEXICAL_CONFIG, lexical_run, sample_copy

runner = CliRunner()
HAND = REPO / "goldsets" / "sample-judgments-hand.jsonl"


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Run, Path]:
    """A lexical run of the sample and the overlap judge's labels of its depth-10 pool."""
    folder = tmp_path_factory.mktemp("ppi")
    gold = sample_copy(folder)
    r = lexical_run(gold, folder / "runs", "lex")
    pool, auto = folder / "pool.jsonl", folder / "auto.jsonl"
    out = runner.invoke(app, ["pool", str(r.path), "-k", "10", "--include-judged", "-c",
                              LEXICAL_CONFIG, "-o", str(pool)])
    assert out.exit_code == 0, out.output
    out = runner.invoke(app, ["judges", "overlap", str(pool), "-o", str(auto)])
    assert out.exit_code == 0, out.output
    return gold, r, auto


def test_question_values_score_each_question_with_ir_measures_and_0_without_qrels() -> None:
    lists = pd.DataFrame({"question_id": ["q1", "q1", "q1", "q2"], "config_id": ["c"] * 4,
                          "page_id": ["d#1", "d#2", "d#3", "d#1"], "page_rank": [1, 2, 3, 1]})
    labels = LabelSet("l", "judgments", {("q1", "d#1"): 0, ("q1", "d#2"): 2, ("q1", "d#4"): 1},
                      frozenset(), frozenset({"q1"}))
    v = question_values(lists, labels, ["q1", "q2"], "nDCG@10")
    dcg = 2 / math.log2(3)  # grade 2 at rank 2; d#4 (grade 1) never ranked
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert v.loc["c", "q1"] == pytest.approx(dcg / ideal)
    assert v.loc["c", "q2"] == 0.0  # no qrels for q2: its value is 0, never dropped
    assert question_values(lists, labels, ["q1", "q2"], "R@2").loc["c"].tolist() == [0.5, 0.0]


def test_overlap_grades_by_the_share_of_question_stems_on_the_page() -> None:
    q = "Which guild lights the lanterns of the harbour first?"  # 5 stems, "which", "the" not
    assert overlap_grade(q, "en", "The harbour guild lights its lanterns.") == (
        3, Fraction(4, 5))
    assert overlap_grade(q, "en", "Guilds light lanterns.") == (2, Fraction(3, 5))
    assert overlap_grade(q, "en", "A guild lighting.") == (1, Fraction(2, 5))
    assert overlap_grade(q, "en", "A guild.") == (0, Fraction(1, 5))
    assert overlap_grade(q, "de", "Die Gilde.") == (0, Fraction(0))  # no shared stem
    assert overlap_grade("How and why?", "en", "How and why.") == (0, Fraction(0))


def test_ppi_over_a_run_matches_the_formulas_on_its_question_values(
        setup: tuple[Path, Run, Path]) -> None:
    gold, r, auto = setup
    rows = read_judgments(auto)
    assert {j.judgment.judge_id for j in rows} == {JUDGE_ID} and len(rows) > 500
    res = run_ppi(PpiRequest(r, (HAND,), (auto,), ("nDCG@10", "R@5"), LEXICAL_CONFIG,
                             tuned=False))
    qt = r.table("questions")
    answerable = [q for q, a in zip(qt["question_id"], qt["answerable"], strict=True) if a]
    assert res.sample == tuple(f"bw-{i:02d}" for i in range(1, 17) if f"bw-{i:02d}" in answerable)
    assert (res.questions, res.human_judgments, res.auto_judgments) == (len(answerable), 40,
                                                                         len(rows))
    configs = sorted(set(page_lists(r)["config_id"]))
    assert [(x.metric, x.config_id, x.baseline) for x in res.rows if x.metric == "R@5"] == [
        *(("R@5", c, None) for c in configs),
        *(("R@5", c, LEXICAL_CONFIG) for c in configs if c != LEXICAL_CONFIG)]
    # recompute one row and one difference from the label sets the module documents
    from rulegauge.goldset.labels import from_goldset, load_labels, overlay
    from rulegauge.goldset.parse import load_goldset

    gs = load_goldset(gold, allow_outside=True)
    base = from_goldset(gs)
    h = overlay(base, load_labels(HAND, against=gs))
    a = overlay(load_labels(auto, against=gs), base)
    vh, va = (question_values(page_lists(r), x, answerable, "R@5") for x in (h, a))
    sample, rest = list(res.sample), [q for q in answerable if q not in res.sample]
    row = next(x for x in res.rows if (x.metric, x.config_id, x.baseline) == (
        "R@5", "arm-bm25", None))
    assert row.ppi == ppi_interval(vh.loc["arm-bm25", sample], va.loc["arm-bm25", sample],
                                   va.loc["arm-bm25", rest])
    assert row.classical == classical_interval(vh.loc["arm-bm25", sample])
    assert row.human_only == pytest.approx(vh.loc["arm-bm25"].mean())
    d = next(x for x in res.rows if (x.metric, x.config_id, x.baseline) == (
        "R@5", "arm-bm25", LEXICAL_CONFIG))
    dh, da = (f.loc["arm-bm25"] - f.loc[LEXICAL_CONFIG] for f in (vh, va))
    assert d.ppi == ppi_interval(dh[sample], da[sample], da[rest])
    assert set(res.tau) == {"nDCG@10", "R@5"} and all(
        t is None or -1 <= t <= 1 for t in res.tau.values())
    tuned = run_ppi(PpiRequest(r, (HAND,), (auto,), ("R@5",)))
    assert all(0 <= x.ppi.lam <= 1 for x in tuned.rows)
    frame = ppi_frame(res, "R@5")
    assert len(frame) == len(configs) * 2 - 1 and frame["PPI low"].le(frame["PPI high"]).all()


def test_the_report_section_shows_both_label_sets_and_tau(setup: tuple[Path, Run, Path]) -> None:
    _, r, auto = setup
    parts = filled_sections(r, (HAND,), (auto,), lambda message: None)
    page = "\n".join(parts)
    assert "Human-only and filled judgments" in page and "class='tau'>" in page
    assert "<th>human-only</th>" in page and "<th>filled</th>" in page
    assert "<th>PPI low</th>" in page and "<th>classical low</th>" in page
    assert filled_sections(r, (), (), lambda message: None) == ()
    from rulegauge.analysis.report import SUMMARY_HEADING, write_report

    html = write_report(r, r.path.parent / "report.html", sections=parts, n_resamples=50,
                        top=3).read_text(encoding="utf-8")
    assert html.index("Human-only and filled judgments") < html.index(SUMMARY_HEADING)
    assert html.count("class='tau'>") == 1


def test_cli_ppi_prints_human_labels_used_and_both_intervals(setup: tuple[Path, Run, Path]) -> None:
    _, r, auto = setup
    out = runner.invoke(app, ["judges", "ppi", str(r.path), "--human", str(HAND), "--auto",
                              str(auto), "-b", LEXICAL_CONFIG, "--format", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output[out.output.index("{"):])
    assert "human labels on 16 (40 judgments)" in doc["notes"][0]
    assert "classical interval on the 16 human-labelled questions" in doc["notes"][0]
    assert doc["notes"][-1].startswith("Kendall's tau-b of the configs' orders by nDCG@10")
    (table,) = doc["tables"]
    assert table["columns"][:5] == ["config", "PPI estimate", "PPI 95% CI", "human sample mean",
                                    "classical 95% CI"]
    assert [row[0] for row in table["rows"]] == [
        "arm-bm25", "arm-boost", LEXICAL_CONFIG, f"arm-bm25 - {LEXICAL_CONFIG}",
        f"arm-boost - {LEXICAL_CONFIG}"]


def test_cli_ppi_bad_inputs_exit_2_naming_them(setup: tuple[Path, Run, Path],
                                               tmp_path: Path) -> None:
    _, r, auto = setup
    one = tmp_path / "one.jsonl"
    one.write_text(HAND.read_text().splitlines()[0] + "\n")
    cases = [
        (["--human", str(auto), "--auto", str(auto)], "judged by LLM judges only"),
        (["--human", str(one), "--auto", str(auto)], "cover 1 answerable question(s)"),
        (["--human", str(HAND), "--auto", str(auto), "-b", "nope"], "config 'nope' has no stored"),
        (["--human", str(HAND), "--auto", str(auto), "-m", "NotAMetric@3"],
         "unknown ir_measures metric 'NotAMetric@3'"),
        (["--human", str(tmp_path / "missing.jsonl"), "--auto", str(auto)], "missing.jsonl"),
    ]
    for args, message in cases:
        out = runner.invoke(app, ["judges", "ppi", str(r.path), *args])
        assert out.exit_code == 2, (args, out.output)
        assert message in " ".join(out.output.split()), (args, out.output)
        assert "Traceback" not in out.output
