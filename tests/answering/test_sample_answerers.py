"""The embedded sample answered by extractive, replay and production side by side:
the answers view, the side-by-side formats, and the answerer gate."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rulegauge.answering.answers_view import answers_html, answers_view
from rulegauge.answering.runner import answer_run
from rulegauge.answering.sidebyside import side_by_side
from rulegauge.answering.sidebyside_print import to_markdown, to_records
from rulegauge.cli.answer import register
from rulegauge.pipeline.options import RunOptions
from rulegauge.pipeline.retrieval import run
from rulegauge.regression.gate import run_gate
from rulegauge.regression.policy import parse_policy
from rulegauge.rulings.evaluate import score_run
from rulegauge.rulings.importer import import_rulings
from rulegauge.store.rundir import Run
from tests.helpers.common import LEXICAL, REPO, typer_app

SAMPLE = REPO / "goldsets" / "sample.yaml"
PAGES = REPO / "goldsets" / "sample-rulings"


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Run:
    root = tmp_path_factory.mktemp("sample")
    r = run(RunOptions(goldset=SAMPLE, config=LEXICAL, runs_dir=root, run_id="s"))
    rulings = import_rulings([PAGES], root, "rulings", 100, "half_up").path
    score_run(rulings, SAMPLE, PAGES / "mapping.yaml")
    answer_run(r.path, [("strict=extractive", {"threshold": 0.7})])
    recording = root / "strict.jsonl"
    rows = Run(r.path).table("answers")
    recording.write_text("\n".join(json.dumps({"question_id": x.question_id, "text": x.text,
                                                "outcome": x.outcome, "model_id": "recorded"})
                                   for x in rows.itertuples()) + "\n")
    answer_run(r.path, [("extractive", {}), ("replay", {"path": str(recording)}),
                        ("production", {"rulings": str(rulings)})])
    return Run(r.path)


def test_production_is_paired_only_on_the_questions_it_answered(sample: Run) -> None:
    answers = sample.table("answers")
    assert sorted(answers[answers["answerer"] == "production"]["question_id"]) == [
        "bw-13", "bw-14", "bw-30", "bw-52"]
    assert (answers.groupby("answerer").size()[["strict", "extractive", "replay"]] == 57).all()
    sbs = side_by_side(sample)
    ex = sbs.exclusions[0]
    assert (ex.questions, ex.compared, ex.not_covered) == (57, 4, 53)
    alone = side_by_side(sample, answerers=["strict", "extractive", "replay"])
    assert alone.exclusions[0].compared == 57
    # replaying strict's answers reproduces strict's figures exactly
    s, rp = (next(r for r in alone.rows if r.answerer == x) for x in ("strict", "replay"))
    assert dict(s.means)["citation_precision"] == dict(rp.means)["citation_precision"]
    assert dict(s.means)["fact_recall"] == dict(rp.means)["fact_recall"]
    prod = next(r for r in sbs.rows if r.answerer == "production")
    assert dict(prod.means)["fact_recall"] == pytest.approx(2 / 3)  # bw-30 misses the errata


def test_answers_view_resolves_citations_and_marks_them(sample: Run) -> None:
    recs = answers_view(sample)
    assert len(recs) == 57
    r13 = next(r for r in recs if r["question_id"] == "bw-13")
    assert [x["n"] for x in r13["read"]] == list(range(1, len(r13["read"]) + 1))
    assert {"doc_id", "page", "heading", "relevant"} <= set(r13["read"][0])
    prod = next(a for a in r13["answers"] if a["answerer"] == "production")
    assert [(c["doc_id"], c["page"], c["right"]) for c in prod["citations"]] == [
        ("bw-errata", 1, True), ("bw-rules", 5, True)]
    assert prod["facts_stated"] == [True] and prod["fence_passed"] in (True, False)
    r30 = next(r for r in recs if r["question_id"] == "bw-30")
    p30 = next(a for a in r30["answers"] if a["answerer"] == "production")
    assert p30["facts_stated"] == [False, False]
    only = answers_view(sample, disagreement_only=True)
    assert 0 < len(only) < 57 and all(r["disagree"] for r in only)
    page = answers_html(recs)
    assert page.count("<details") == 57 and "class='cite right'" in page
    assert "bw-errata p.1 (right)" in page and "only questions the answerers disagree on" in page
    # every read's table scrolls in its own box: long headings never widen the page
    assert page.count("<div class='scroll'><table>") == page.count("<table>") == 57


def test_formats_and_cli(sample: Run) -> None:
    sbs = side_by_side(sample, answerers=["strict", "extractive"])
    md = to_markdown(sbs)
    assert "| metric | strict | extractive | extractive - strict |" in md
    assert "| fact recall |" in md and "compared over 57 of 57 questions" in md
    rec = to_records(sbs)
    assert rec["baseline"] == "strict" and {d["metric"] for d in rec["differences"]} >= {
        "fact_recall", "citation_precision"}
    app = typer_app(register)
    base = ["answerers", str(sample.path)]
    res = CliRunner().invoke(app, [*base, "--format", "json", "-a", "strict", "-a", "production"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["exclusions"][0]["compared"] == 4
    res = CliRunner().invoke(app, [*base, "--answers", "--disagreement"])
    assert res.exit_code == 0 and all(r["disagree"] for r in json.loads(res.output))
    res = CliRunner().invoke(app, [*base, "--format", "html"])
    assert res.exit_code == 2 and "unknown format 'html'" in res.output


def test_gate_one_answerer_against_another(sample: Run) -> None:
    policy = parse_policy({"gate": {"base_answerer": "strict", "candidate_answerer": "replay",
                                    "n_resamples": 200},
                           "metrics": {"fact_recall": {"max_drop": 0.0},
                                       "citation_precision": {"alpha": 0.05}}})
    res = run_gate(policy, sample, sample)
    assert res.exit_code == 0 and all(c.metric in ("fact_recall", "citation_precision")
                                      for c in res.checks)
    assert "replay vs strict" in res.checks[0].name
    worse = parse_policy({"gate": {"base_answerer": "extractive",
                                   "candidate_answerer": "production"},
                          "metrics": {"fact_recall": {"floor": 0.99}}})
    res = run_gate(worse, sample, sample)
    assert res.exit_code == 1
    assert res.checks[0].measured_value == pytest.approx(2 / 3)
