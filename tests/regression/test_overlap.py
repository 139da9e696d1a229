"""Overlap between two runs without judgments (rulegauge.regression.overlap): RBO and Jaccard
of each question's top k, a gate on them over unlabelled questions, and compare's table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from rulegauge.cli.compare import register
from rulegauge.metrics.overlap import jaccard, rbo_ext
from rulegauge.pipeline.retrieval import RunOptions, run
from rulegauge.regression.gate import EXIT_PASS, EXIT_REGRESSION, Status, run_gate
from rulegauge.regression.overlap import OverlapUnavailable, pair_overlap
from rulegauge.regression.pairing import ConfigPair
from rulegauge.regression.policy import parse_policy
from rulegauge.store.baseline import save_baseline
from rulegauge.store.rundir import Run, RunWriter
from tests.helpers.common import FIXTURES
from tests.helpers.comparison import base_lists, move
from tests.helpers.slices import tagged_run

C3 = ConfigPair("c3", "c3")
LOG_POLICY = {"gate": {"config": "c3", "n_resamples": 500}, "slices": {"log": {
    "labelled": False, "overlap": {"min_rbo": 0.8, "min_jaccard": 0.8}}}}


def chunks(pages: list[str]) -> list[str]:
    return [f"{p.split('#')[0]}#p{int(p.split('#')[1]):04d}.c000" for p in pages]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    root = tmp_path_factory.mktemp("overlap")
    log = ("q21", "q22")  # no gold page: nobody labelled them
    reversed_log = {**base_lists(), **{q: list(reversed(base_lists()[q])) for q in log}}
    labelled_moved = move(base_lists(), "q01", "rb#1", 9)
    return {"base": tagged_run(root / "base", base_lists(), unlabelled=log),
            "log-reordered": tagged_run(root / "log-reordered", reversed_log, unlabelled=log),
            "labelled-moved": tagged_run(root / "labelled-moved", labelled_moved, unlabelled=log)}


def test_rbo_and_jaccard_per_question_are_the_lists_own(runs) -> None:
    ov = pair_overlap(runs["base"], runs["labelled-moved"], C3, depth=10, p=0.9)
    assert ov.n == 22 and (ov.depth, ov.p, ov.rbo_name) == (10, 0.9, "RBO(p=0.9)@10")
    by_q = {q.question_id: q for q in ov.questions}
    a, b = base_lists()["q01"], move(base_lists(), "q01", "rb#1", 9)["q01"]
    assert by_q["q01"].rbo == pytest.approx(rbo_ext(chunks(a), chunks(b), 0.9, 10), abs=1e-15)
    assert by_q["q01"].rbo < 1.0 and by_q["q01"].jaccard == jaccard(a, b, 10) == 1.0  # same ten
    assert all(q.rbo == 1.0 for q in ov.questions if q.question_id != "q01")
    assert ov.rbo_median == 1.0 and ov.lowest(1)[0].question_id == "q01"
    assert ov.describe_lowest() == f"q01 {by_q['q01'].rbo:.3g}"


def test_a_gate_on_rbo_over_unlabelled_questions_passes_and_fails_as_planted(runs) -> None:
    policy = parse_policy(LOG_POLICY)
    passed = run_gate(policy, runs["base"], runs["labelled-moved"])
    assert passed.exit_code == EXIT_PASS  # the labelled question moved; the log did not
    (outcome,) = passed.slices
    assert outcome.questions == ("q21", "q22") and outcome.overlap is not None
    assert (outcome.overlap.rbo_median, outcome.overlap.jaccard_median) == (1.0, 1.0)
    failed = run_gate(policy, runs["base"], runs["log-reordered"])
    assert failed.exit_code == EXIT_REGRESSION
    rbo = {c.kind: c for c in failed.checks}["min_rbo"]
    reordered = list(reversed(base_lists()["q21"]))
    want = rbo_ext(chunks(base_lists()["q21"]), chunks(reordered), 0.9, 10)
    assert rbo.status is Status.FAIL and rbo.measured_value == pytest.approx(want, abs=1e-15)
    assert rbo.questions == ("q21", "q22") and rbo.name == "slice log: overlap median RBO(p=0.9)@10"
    assert {c.kind: c for c in failed.checks}["min_jaccard"].status is Status.OK  # same nine pages
    # an unlabelled question never enters a judged metric's mean
    means = {m.metric: m for m in failed.comparison.metrics}
    assert means == {}  # the policy gates no metric: overlap alone


def test_a_whole_set_overlap_rule_and_the_json_report(runs) -> None:
    from rulegauge.regression.gate_report import GATE_FORMATS

    policy = parse_policy({"gate": {"config": "c3"}, "overlap": {"min_rbo": 0.999, "depth": 5}})
    result = run_gate(policy, runs["base"], runs["labelled-moved"])
    assert result.exit_code == EXIT_PASS  # the median is 1.0: one question of 22 moved
    doc = json.loads(GATE_FORMATS.get("json")(result))
    assert doc["overlap"]["depth"] == 5 and doc["overlap"]["rbo_median"] == 1.0
    md = GATE_FORMATS.get("markdown")(result)
    assert "| c3 | 22 | 1 | " in md and "RBO(p=0.9)@5" in md


def test_a_baseline_keeps_the_top_ten_and_says_so_beyond(runs, tmp_path: Path) -> None:
    base = Run(save_baseline(runs["base"], tmp_path / "b"))
    ov = pair_overlap(base, runs["labelled-moved"], C3, depth=10)
    assert ov.n == 22 and ov.questions[0].base_n == 10
    with pytest.raises(OverlapUnavailable, match="a baseline keeps the top 10 of every list"):
        pair_overlap(base, runs["labelled-moved"], C3, depth=11)
    old = RunWriter(base.path)  # a baseline saved before the top of every list was kept
    old.update_manifest({"baseline": {**base.manifest["baseline"], "fused_top": 0}})
    with pytest.raises(OverlapUnavailable, match="re-save it"):
        pair_overlap(Run(base.path), runs["labelled-moved"], C3)


def _cli() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


def test_compare_prints_rbo_and_jaccard_between_two_runs(runs) -> None:
    args = ["compare", str(runs["base"].path), str(runs["log-reordered"].path), "-m", "hit@5"]
    table = CliRunner().invoke(_cli(), args)
    assert table.exit_code == 0, table.output
    assert "median RBO" in table.output and "median Jaccard" in table.output
    assert "RBO(p=0.9)@10, Jaccard@10" in table.output
    md = CliRunner().invoke(_cli(), [*args, "--format", "markdown", "--rbo-p", "0.5",
                                     "--overlap-depth", "3"])
    assert "RBO(p=0.5)@3" in md.output and "| c3 | 22 |" in md.output
    doc = json.loads(CliRunner().invoke(_cli(), [*args, "--json"]).output)
    (ov,) = doc["overlap"]
    assert ov["config"] == {"base": "c3", "candidate": "c3"} and len(ov["questions"]) == 22
    bad = CliRunner().invoke(_cli(), [*args, "--rbo-p", "1.0"])
    assert bad.exit_code == 2 and "persistence p must be in (0, 1)" in bad.output


@pytest.fixture(scope="module")
def log_runs(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The pipeline on a gold set with unlabelled questions (bm25 + boost)."""
    tmp = tmp_path_factory.mktemp("log")
    res = run(RunOptions(goldset=FIXTURES / "goldsets" / "mini-log.yaml",
                         config=FIXTURES / "configs" / "lexical.toml", runs_dir=tmp / "runs",
                         run_id="log"))
    return Run(res.path)


def test_unlabelled_questions_run_stay_out_of_judged_means_and_gate_on_overlap(log_runs) -> None:
    r = log_runs
    assert r.manifest["goldset"]["unlabelled"] == ["log-1", "log-2", "log-3", "log-4"]
    assert len(r.manifest["goldset"]["question_digests"]) == 6
    m = r.table("metrics")
    hit = m[(m["metric"] == "hit@5") & (m["config_id"] == "rrf_k60_bm25+boost")]
    assert set(hit.loc[hit["answerable"], "question_id"]) == {"m-1", "m-2"}  # the judged mean's
    policy = parse_policy({"gate": {"config": "rrf_k60_bm25+boost"}, "slices": {"log": {
        "labelled": False, "overlap": {"min_rbo": 0.999}}}})
    same = run_gate(policy, r, r)
    assert same.exit_code == EXIT_PASS and same.slices[0].overlap.rbo_median == 1.0
    other = run_gate(policy, r, r, candidate_config="arm-bm25")
    assert other.slices[0].questions == ("log-1", "log-2", "log-3", "log-4")
    assert other.slices[0].overlap.rbo_median < 0.999 and other.exit_code == EXIT_REGRESSION
