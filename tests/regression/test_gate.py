"""rulegauge.regression.gate: policy parsing, verdicts and exit codes, per-question changes, reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pandas as pd
import pytest
import typer
from junitparser import Failure, JUnitXml
from typer.testing import CliRunner

from rulegauge.cli.compare import register
from rulegauge.core.errors import ConfigError, RulegaugeError, ValidationError
from rulegauge.regression.compare import compare_runs
from rulegauge.regression.gate import (
    EXIT_BAD_INPUT,
    EXIT_PASS,
    EXIT_REGRESSION,
    Check,
    GateResult,
    Status,
    run_gate,
)
from rulegauge.regression.gate_report import COMPARISON_FORMATS, GATE_FORMATS, render_error
from rulegauge.regression.pins import pin_notes
from rulegauge.regression.policy import PolicyError, load_policy, parse_policy
from rulegauge.store.rundir import Run
from tests.helpers.common import FIXTURES, REPO
from tests.helpers.comparison import N_ANSWERABLE, base_lists, move, qid, write_run
from tests.helpers.comparison import answer_tables as _answer_tables

POLICIES = FIXTURES / "policies"
# MRR@10 of base_lists(): six questions at rank 1, seven at 2, seven at 3
BASE_MRR = (6 * 1 + 7 / 2 + 7 / 3) / N_ANSWERABLE


@pytest.fixture
def runs(tmp_path: Path) -> dict[str, Path]:
    """base, an identical candidate, one that loses q07's hit@5 and one that loses ten."""
    worse = base_lists()
    for i in range(1, 11):
        worse = move(worse, qid(i), f"rb#{i}", 9)
    return {
        "base": write_run(tmp_path / "base", base_lists()),
        "same": write_run(tmp_path / "same", base_lists()),
        "lost": write_run(tmp_path / "lost", move(base_lists(), "q07", "rb#7", 7)),
        "worse": write_run(tmp_path / "worse", worse),
    }


def gate(name: str, runs: dict[str, Path], candidate: str, **kw: object) -> GateResult:
    return run_gate(load_policy(POLICIES / name), Run(runs["base"]), Run(runs[candidate]), **kw)


def by_name(result: GateResult) -> dict[str, Check]:
    return {c.name: c for c in result.checks}


def test_policy_fixture_parses_with_canonical_names() -> None:
    p = load_policy(POLICIES / "strict.toml")
    assert p.config == "prod" and p.alpha == 0.05 and p.n_resamples == 2000
    assert p.metric_names() == ("hit@5", "MRR@10", "first_rel_rank")
    hit5 = p.metrics[0]
    assert (hit5.floor, hit5.max_drop, hit5.pinned) == (0.9, 0.0, ("q07",))
    lower = parse_policy({"metrics": {"ndcg@10": {"max_drop": 0.1}}})
    assert lower.metric_names() == ("nDCG@10",)


def test_malformed_policy_lists_every_problem_with_its_key() -> None:
    path = POLICIES / "malformed-keys.toml"
    with pytest.raises(PolicyError) as err:
        load_policy(path)
    text = str(err.value)
    for key, why in (("gate.alpha", "must be > 0.0 and < 1.0"), ("gate.seeds", "unknown key"),
                     ("gate.n_resamples", "integer >= 1"), ("metrics.hit@5.max_drop", ">= 0.0"),
                     ("metrics.hit@5.floor", "finite number"),
                     ("metrics.hit@5.pinned", "list of question ids"),
                     ("metrics.no_such_metric", "unknown metric"),
                     ("metrics.MRR@10.max_dorp", "unknown key"), ("extra", "unknown key")):
        assert f"{path}: {key}: " in text and why in text, (key, why)
    assert len(err.value.problems) == 10  # the MRR@10 table also asks for no check
    assert isinstance(err.value, ValidationError) and isinstance(err.value, ConfigError)


@pytest.mark.parametrize(("name", "why"), [("malformed-syntax.toml", "not valid TOML"),
                                           ("empty.toml", "give at least one metric table"),
                                           ("absent.toml", "cannot read policy file")])
def test_unreadable_or_empty_policy_is_refused(name: str, why: str) -> None:
    with pytest.raises(PolicyError, match=why):
        load_policy(POLICIES / name)


def test_identical_runs_pass(runs: dict[str, Path]) -> None:
    result = gate("strict.toml", runs, "same")
    assert result.passed and result.exit_code == EXIT_PASS
    assert {c.status for c in result.checks} == {Status.OK}
    # hit@5: floor, max_drop, alpha, 1 pinned; MRR@10: 2 drops, alpha; first_rel_rank: drop, alpha
    assert len(result.checks) == 4 + 3 + 2


def test_one_question_losing_hit5_fails_and_is_named(runs: dict[str, Path]) -> None:
    result = gate("strict.toml", runs, "lost")
    assert not result.passed and result.exit_code == EXIT_REGRESSION
    checks = by_name(result)
    assert checks["hit@5 floor"].status is Status.OK  # 19/20 >= 0.9
    drop = checks["hit@5 max_drop"]
    assert drop.status is Status.FAIL and drop.questions == ("q07",)
    assert drop.measured_value == pytest.approx(1 / N_ANSWERABLE)
    assert "q07" in drop.message and "allowed 0" in drop.message
    pinned = checks["hit@5 pinned q07"]
    assert pinned.status is Status.FAIL and pinned.message == "pinned q07 lost hit@5 (1 -> 0)"
    # one question in twenty is no significant change
    assert checks["hit@5 significance"].status is Status.WITHIN_TOLERANCE
    mrr = checks["MRR@10 max_drop"]
    assert mrr.status is Status.WITHIN_TOLERANCE
    assert mrr.measured_value == pytest.approx((1 / 2 - 1 / 7) / N_ANSWERABLE)
    rel = checks["MRR@10 max_drop_relative"]
    assert rel.measured_value == pytest.approx((1 / 2 - 1 / 7) / N_ANSWERABLE / BASE_MRR)
    assert rel.status is Status.WITHIN_TOLERANCE
    # the median first relevant rank stays 2
    assert checks["first_rel_rank max_drop"].status is Status.OK
    assert {c.name for c in result.failures()} == {"hit@5 max_drop", "hit@5 pinned q07"}


def test_a_drop_inside_the_allowance_is_within_tolerance(runs: dict[str, Path]) -> None:
    result = gate("tolerant.toml", runs, "lost")  # no config named: the sole grid configs pair
    checks = by_name(result)
    assert checks["hit@5 max_drop"].status is Status.WITHIN_TOLERANCE  # 1/20 <= 0.05
    assert result.passed and result.exit_code == EXIT_PASS


def test_many_questions_worse_fail_the_significance_check(runs: dict[str, Path]) -> None:
    result = gate("strict.toml", runs, "worse")
    sig = by_name(result)["MRR@10 significance"]
    assert sig.status is Status.FAIL and sig.measured_value < 0.05  # type: ignore[operator]
    assert sig.questions == tuple(qid(i) for i in range(1, 11))
    floor = by_name(result)["hit@5 floor"]
    assert floor.status is Status.FAIL and floor.measured_value == pytest.approx(10 / 20)


def test_lower_is_better_floor_and_infinite_relative_drop() -> None:
    from rulegauge.regression.compare import MetricComparison
    from rulegauge.regression.gate import CHECKS
    from rulegauge.regression.pairing import ConfigPair
    from rulegauge.regression.policy import MetricPolicy

    m = MetricComparison(ConfigPair("c", "c"), None, "first_rel_rank", False, "median",
                         "answerable", 3, 2.0, 4.0, 2.0, 0.5, 0.5, 0.0, 3.0, 0, 2, 1, ("q1",), ())
    floor = CHECKS.get("floor")(MetricPolicy("first_rel_rank", floor=3.0), m, None)[0]
    assert floor.status is Status.FAIL and floor.expected == "<= 3"
    zero = MetricComparison(ConfigPair("c", "c"), None, "hit@5", True, "mean", "answerable", 3,
                            0.0, -0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0, 3, 0, (), ())
    rel = CHECKS.get("max_drop_relative")(MetricPolicy("hit@5", max_drop_relative=0.1), zero, None)
    assert rel[0].status is Status.OK and rel[0].measured_value == 0.0


def test_unknown_pinned_question_is_bad_input(runs: dict[str, Path]) -> None:
    policy = parse_policy({"metrics": {"hit@5": {"pinned": ["q99"]}}}, "inline.toml")
    with pytest.raises(RulegaugeError, match="pinned question 'q99' is not among the 20"):
        run_gate(policy, Run(runs["base"]), Run(runs["same"]))


def test_answer_metric_floors_need_an_unambiguous_answerer(tmp_path: Path) -> None:
    qs = [qid(i) for i in range(1, 11)]
    values = {"fence_pass": {**dict.fromkeys(qs, 1.0), "q03": 0.0},
              "citation_precision": dict.fromkeys(qs, 0.75)}
    ans, am = _answer_tables(values, answerers=("extractive", "echo"))
    base = Run(write_run(tmp_path / "b", base_lists(), answers=ans, answer_metrics=am))
    result = run_gate(load_policy(POLICIES / "answers.toml"), base, base)
    checks = by_name(result)
    fence = checks["fence_pass [extractive] floor"]
    assert fence.status is Status.FAIL and fence.measured_value == pytest.approx(9 / 10)
    assert checks["citation_precision [extractive] floor"].status is Status.OK
    ambiguous = parse_policy({"gate": {"config": "c3"}, "metrics": {"fence_pass": {"floor": 0.5}}})
    with pytest.raises(RulegaugeError, match=r"several answerers \(echo, extractive\)"):
        run_gate(ambiguous, base, base)


def test_junit_has_one_case_per_check_and_failures_carry_the_message(
        runs: dict[str, Path], tmp_path: Path) -> None:
    result = gate("strict.toml", runs, "lost")
    path = tmp_path / "gate.xml"
    path.write_text(GATE_FORMATS.get("junit")(result), encoding="utf-8")
    xml = JUnitXml.fromfile(str(path))
    cases = [case for suite in xml for case in suite]
    assert [c.name for c in cases] == [c.name for c in result.checks]
    failed = {c.name: r for c in cases for r in c.result if isinstance(r, Failure)}
    assert set(failed) == {c.name for c in result.failures()}
    family = result.comparison.family
    tag = f"[p family: {family.method} over {family.size} test(s), alpha {family.alpha:g}]"
    for check in result.failures():  # each case names its family, adjustment and alpha
        assert failed[check.name].message == f"{check.message} {tag}"
        assert "q07" in failed[check.name].text and f"family: {family.describe()}" in failed[check.name].text
    outs = [c.system_out for c in cases if not any(isinstance(r, Failure) for r in c.result)]
    assert outs and all(tag in (o or "") for o in outs)


def test_markdown_json_and_table_reports(runs: dict[str, Path]) -> None:
    result = gate("strict.toml", runs, "lost")
    md = GATE_FORMATS.get("markdown")(result)
    assert md.startswith("## Retrieval gate: FAIL")
    assert "| ❌ FAIL | hit@5 max_drop |" in md
    assert "`q07` | first relevant page moved down (2 -> 7); lost hit@5" in md
    assert "rb#7: 2 → 7 (bm25 2 → 7, dense 2 → 7, boost 2 → 7)" in md
    data = json.loads(GATE_FORMATS.get("json")(result))
    assert data["passed"] is False and data["exit_code"] == 1
    assert [c["status"] for c in data["checks"]].count("fail") == 2
    assert "q07" in GATE_FORMATS.get("table")(result)
    cmp_json = json.loads(COMPARISON_FORMATS.get("json")(result.comparison))
    assert cmp_json["base"]["run_id"] == "base"


def test_error_reports_are_valid_documents(tmp_path: Path) -> None:
    path = tmp_path / "err.xml"
    path.write_text(render_error("policy.toml: not valid TOML", "junit"), encoding="utf-8")
    (case,) = [c for s in JUnitXml.fromfile(str(path)) for c in s]
    assert case.result[0].message == "policy.toml: not valid TOML"
    assert json.loads(render_error("boom", "json")) == {"passed": False, "exit_code": 2,
                                                       "error": "boom"}


def _cli() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


def test_cli_gate_exit_codes_and_outputs(runs: dict[str, Path], tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["gate", "--baseline", str(runs["base"]), "--policy", str(POLICIES / "strict.toml")]
    ok = runner.invoke(_cli(), [*args, "--run", str(runs["same"])])
    assert ok.exit_code == EXIT_PASS, ok.output
    out = tmp_path / "out"
    bad = runner.invoke(_cli(), [*args, "--run", str(runs["lost"]), "--markdown",
                                 str(out / "g.md"), "--junit", str(out / "g.xml"), "--json-file",
                                 str(out / "g.json")])
    assert bad.exit_code == EXIT_REGRESSION
    assert "q07" in bad.output and "hit@5 max_drop" in bad.output
    assert "q07" in (out / "g.md").read_text(encoding="utf-8")
    assert json.loads((out / "g.json").read_text(encoding="utf-8"))["exit_code"] == 1
    assert len([c for s in JUnitXml.fromfile(str(out / "g.xml")) for c in s]) == 4 + 3 + 2


@pytest.mark.parametrize(("policy", "why"), [("absent.toml", "cannot read policy file"),
                                             ("malformed-keys.toml", "metrics.hit@5.max_drop")])
def test_cli_gate_bad_policy_exits_2_with_the_reason(runs: dict[str, Path], tmp_path: Path,
                                                     policy: str, why: str) -> None:
    junit = tmp_path / "g.xml"
    r = CliRunner().invoke(_cli(), ["gate", "--baseline", str(runs["base"]), "--run",
                                    str(runs["same"]), "--policy", str(POLICIES / policy),
                                    "--junit", str(junit)])
    assert r.exit_code == EXIT_BAD_INPUT
    assert why in r.output
    (case,) = [c for s in JUnitXml.fromfile(str(junit)) for c in s]
    assert why in case.result[0].text


def test_cli_gate_refuses_other_gold_set(tmp_path: Path, runs: dict[str, Path]) -> None:
    other = write_run(tmp_path / "other", base_lists(), goldset_sha="gold-2")
    args = ["gate", "--baseline", str(runs["base"]), "--run", str(other), "--policy",
            str(POLICIES / "tolerant.toml")]
    r = CliRunner().invoke(_cli(), args)
    assert r.exit_code == EXIT_BAD_INPUT and "gold set sha256" in r.output
    assert CliRunner().invoke(_cli(), [*args, "--force"]).exit_code == EXIT_PASS


def test_cli_compare_formats(runs: dict[str, Path]) -> None:
    runner = CliRunner()
    base = ["compare", str(runs["base"]), str(runs["lost"]), "--n-resamples", "200"]
    r = runner.invoke(_cli(), [*base, "--format", "json", "--metric", "hit@5"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert [m["metric"] for m in data["metrics"]] == ["hit@5"]
    assert data["changes"][0]["question_id"] == "q07"
    md = runner.invoke(_cli(), [*base, "--format", "markdown"])
    assert md.exit_code == 0 and "### Regressions" in md.output
    table = runner.invoke(_cli(), base)
    assert table.exit_code == 0 and "lost hit@5" in table.output
    wrong = runner.invoke(_cli(), [*base, "--format", "yaml"])
    assert wrong.exit_code == EXIT_BAD_INPUT and "table, markdown, json" in wrong.output
    lone = runner.invoke(_cli(), [*base, "--candidate-config", "c3"])
    assert lone.exit_code == EXIT_BAD_INPUT and "exactly one --config" in lone.output
    paired = runner.invoke(_cli(), [*base, "-c", "prod", "--candidate-config", "c3", "-f", "json"])
    assert paired.exit_code == 0 and json.loads(paired.output)["pairs"] == [
        {"base": "c3", "candidate": "c3"}]


def test_compare_with_the_policy_and_the_gate_share_one_holm_family(runs: dict[str, Path]) -> None:
    """The gate adjusts over its policy's metrics; ``compare --policy`` compares exactly
    those, so both print the same family and the same p_holm (the sample once showed
    hit@5 p_holm 0.719 in compare and 0.240 in gate)."""
    policy = POLICIES / "strict.toml"
    g = gate("strict.toml", runs, "worse")
    fam = g.comparison.family
    assert fam.members == (("c3", "hit@5"), ("c3", "MRR@10"), ("c3", "first_rel_rank"))
    r = CliRunner().invoke(_cli(), ["compare", str(runs["base"]), str(runs["worse"]),
                                    "--policy", str(policy), "--format", "json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert [tuple(x) for x in data["family"]["members"]] == list(fam.members)
    gate_p = {m.metric: m.p_adjusted for m in g.comparison.metrics}
    assert {m["metric"]: m["p_adjusted"] for m in data["metrics"]} == gate_p
    # a compare over every metric is a bigger family: larger p_adjusted, and it says so
    every = compare_runs(Run(runs["base"]), Run(runs["worse"]), seed=0, n_resamples=2000)
    assert every.family.size > fam.size
    assert every.find("hit@5", g.pair).p_adjusted >= gate_p["hit@5"]
    for fmt in ("table", "markdown"):
        assert "p (holm) family: holm over 3 test(s)" in GATE_FORMATS.get(fmt)(g)
    assert "p (holm) family" in CliRunner().invoke(
        _cli(), ["compare", str(runs["base"]), str(runs["worse"]), "--policy", str(policy)]).output
    bad = CliRunner().invoke(_cli(), ["compare", str(runs["base"]), str(runs["worse"]),
                                      "--policy", str(policy), "--metric", "hit@1"])
    assert bad.exit_code == EXIT_BAD_INPUT and "--policy sets the metrics" in bad.output


class _Questions:
    """A side holding only a questions table (what pin_notes reads)."""

    manifest: ClassVar[dict] = {}
    run_id = "q"

    def has_table(self, name: str) -> bool:
        return name == "questions"

    def table(self, name: str) -> pd.DataFrame:
        return pd.DataFrame({"question_id": ["e1", "s1"],
                             "requirements": ['[["er#1"], ["rb#5"]]', '[["rb#3", "faq#1"]]']})


def test_hit_pins_on_several_requirements_get_a_note() -> None:
    policy = parse_policy({"metrics": {"hit@5": {"pinned": ["e1", "s1"]},
                                       "recall@5": {"pinned": ["e1"]},
                                       "fence_pass": {"floor": 0.9}}})
    (note,) = pin_notes(policy, _Questions())
    assert note.startswith("pinned e1 on hit@5 has 2 requirements") and "recall@5" in note


def test_comparison_with_the_same_seed_renders_identically(runs: dict[str, Path]) -> None:
    a = compare_runs(Run(runs["base"]), Run(runs["worse"]), seed=3, n_resamples=500)
    b = compare_runs(Run(runs["base"]), Run(runs["worse"]), seed=3, n_resamples=500)
    assert COMPARISON_FORMATS.get("json")(a) == COMPARISON_FORMATS.get("json")(b)


WORSE_CONFIG = """
[[configs]]
name = "worse"
k = 1
arms = ["bm25", "dense", "boost"]
depths = {bm25 = 1, dense = 1, boost = 1}
"""


@pytest.mark.slow
def test_sample_gate_passes_unchanged_and_fails_worse_configs(tmp_path: Path) -> None:
    """The issue's acceptance test on the real sample: two pipeline runs, the second with
    the default grid plus a k=1, depth-1 config (at most three chunks: worse than the
    service config whatever the embedding backend); gated against the first one's baseline
    with the example policy of docs/ci."""
    from rulegauge.fusion.configs import DEFAULT_CONFIG
    from rulegauge.pipeline.options import RunOptions
    from rulegauge.pipeline.retrieval import run
    from rulegauge.store.baseline import save_baseline

    runs_dir = tmp_path / "runs"
    grid = tmp_path / "grid.toml"
    grid.write_text(DEFAULT_CONFIG.read_text(encoding="utf-8") + WORSE_CONFIG, encoding="utf-8")
    base = run(RunOptions(runs_dir=runs_dir, run_id="base")).path
    run(RunOptions(config=grid, runs_dir=runs_dir, run_id="cand"))
    save_baseline(Run(base), runs_dir / "baselines" / "sample")
    policy = REPO / "docs" / "ci" / "gate-policy.toml"
    args = ["gate", "--baseline", "sample", "--run", "cand", "--policy", str(policy),
            "--runs-dir", str(runs_dir)]
    runner = CliRunner()
    same = runner.invoke(_cli(), args)
    assert same.exit_code == EXIT_PASS, same.output
    for candidate_config in ("worse", "rrf_k60_bm25+boost"):  # k=1 depth 1; dense dropped
        out = tmp_path / f"{candidate_config}.json"
        r = runner.invoke(_cli(), [*args, "--candidate-config", candidate_config, "--json-file",
                                   str(out)])
        assert r.exit_code == EXIT_REGRESSION, r.output
        failed = [c for c in json.loads(out.read_text(encoding="utf-8"))["checks"]
                  if c["status"] == "fail"]
        assert "MRR@10" in {c["metric"] for c in failed}
        assert all(c["questions"] and c["questions"][0].startswith("bw-") for c in failed)
        assert failed[0]["questions"][0] in r.output
    broken = tmp_path / "broken.toml"
    broken.write_text("[metrics.hit@5]\nmax_drop = 0.1\n", encoding="utf-8")
    bad = runner.invoke(_cli(), ["gate", "--baseline", "sample", "--run", "cand", "--policy",
                                 str(broken), "--runs-dir", str(runs_dir)])
    assert bad.exit_code == EXIT_BAD_INPUT and "not valid TOML" in bad.output


JUDGED_METRICS = ("MRR@10", "MRR(judged_only=True)@10", "Judged@10", "nDCG@10", "nDCG(judged_only=True)@10")


def _judged_policy(tmp_path: Path, floor: float | None = None) -> Path:
    p = tmp_path / "judged.toml"
    p.write_text('[gate]\nconfig = "c3"\n\n[metrics."MRR@10"]\nmax_drop = 0\n'
                 + (f'\n[metrics."Judged@10"]\nfloor = {floor}\n' if floor is not None else ""),
                 encoding="utf-8")
    return p


def _judged_runs(tmp_path: Path) -> dict[str, Path]:
    """q01 finds rb#1 at rank 2 behind fl#1; fl#1 and fl#2 are judged non-relevant for q01.
    ``new``: an unjudged page moves above rb#1; ``judged``: the judged fl#2 does."""
    judged = {"q01": ("fl#1", "fl#2")}
    base = base_lists()
    unjudged = move(base, "q01", "fl#5", 1)
    judged_worse = move(base, "q01", "fl#2", 1)
    kw = {"metrics": JUDGED_METRICS, "judged": judged}
    return {"base": write_run(tmp_path / "b", base, **kw), "new": write_run(tmp_path / "n", unjudged, **kw),
            "judged": write_run(tmp_path / "j", judged_worse, **kw),
            "plain": write_run(tmp_path / "p", unjudged, metrics=("MRR@10",), judged=judged)}


def test_a_regression_on_unjudged_pages_is_named_and_one_on_judged_pages_is_not(tmp_path):
    runs = _judged_runs(tmp_path)
    policy = load_policy(_judged_policy(tmp_path))
    new = run_gate(policy, Run(runs["base"]), Run(runs["new"]))
    assert new.exit_code == EXIT_REGRESSION and by_name(new)["MRR@10 max_drop"].questions == ("q01",)
    [note] = [n for n in new.notes if "unjudged" in n]
    assert note.startswith("MRR@10: 1 of the 1 questions") and "MRR(judged_only=True)@10 (q01)" in note
    judged = run_gate(policy, Run(runs["base"]), Run(runs["judged"]))
    assert judged.exit_code == EXIT_REGRESSION  # fl#2 is judged non-relevant: a real regression
    assert not [n for n in judged.notes if "unjudged" in n]
    plain = run_gate(policy, Run(runs["plain"]), Run(runs["plain"]))  # no condensed variant stored: no note
    assert plain.exit_code == EXIT_PASS and not plain.notes


def test_judged_at_k_floor_is_a_policy_key(tmp_path):
    runs = _judged_runs(tmp_path)
    # q01's top 10: fl#1, rb#1 and fl#2 judged of 10 pages; every other question: its page only
    judged_mean = (3 / 10 + 19 / 10) / N_ANSWERABLE
    ok = run_gate(load_policy(_judged_policy(tmp_path, floor=0.1)), Run(runs["base"]), Run(runs["base"]))
    assert by_name(ok)["Judged@10 floor"].status is Status.OK
    assert by_name(ok)["Judged@10 floor"].measured_value == pytest.approx(judged_mean, abs=1e-12)
    low = run_gate(load_policy(_judged_policy(tmp_path, floor=0.5)), Run(runs["base"]), Run(runs["base"]))
    assert low.exit_code == EXIT_REGRESSION and "misses the floor" in by_name(low)["Judged@10 floor"].message


def _policy_file(tmp_path: Path, extra: str, metric: str = "") -> Path:
    p = tmp_path / "p.toml"
    p.write_text('[gate]\nconfig = "prod"\nalpha = 0.05\nn_resamples = 2000\n' + extra
                 + '\n[metrics."hit@5"]\nmax_drop = 0.02\n' + metric, encoding="utf-8")
    return p


def test_gate_prints_the_mde_beside_max_drop_and_require_mde_is_exit_2(
        runs: dict[str, Path], tmp_path: Path) -> None:
    from rulegauge.regression.power import mde

    stated = _policy_file(tmp_path, "power = 0.8\n", "sd = 0.3\n")
    g = run_gate(load_policy(stated), Run(runs["base"]), Run(runs["worse"]))
    (w,) = g.power
    assert w.estimate is not None and w.estimate.source == "stated"
    assert w.mde == pytest.approx(mde(0.3, w.n, 0.8, 0.05)) and w.mde_ok is False
    text = GATE_FORMATS.get("table")(g)
    assert "detectable drops" in text and "MDE <= max_drop" in text
    assert "p (holm) family" in GATE_FORMATS.get("markdown")(g)
    strict = _policy_file(tmp_path, "require_mde = true\n", "sd = 0.3\n")
    r = CliRunner().invoke(_cli(), ["gate", "-b", str(runs["base"]), "-r", str(runs["worse"]),
                                    "--policy", str(strict)])
    assert r.exit_code == EXIT_BAD_INPUT
    assert "require_mde" in r.output and "hit@5: MDE" in r.output
    assert "questions by the t-test)" in r.output


def test_the_mde_is_the_permutation_tests_by_resampling_unless_the_policy_says_t_test(
        runs: dict[str, Path], tmp_path: Path) -> None:
    """Without a stated SD the comparison's own differences are at hand, so the MDE is the
    gate's permutation test's over resampled differences (its n_resamples and seed), the
    t-test's beside it; ``power_method = "t-test"`` gives the t-test's."""
    from rulegauge.regression.power import mde
    from rulegauge.regression.power_resample import resampled_power

    own = _policy_file(tmp_path, 'sd_source = "comparison"\nseed = 3\n')
    (w,) = run_gate(load_policy(own), Run(runs["base"]), Run(runs["worse"])).power
    assert w.method == "resampled" and w.estimate is not None and w.estimate.centred is not None
    found = resampled_power(w.estimate.centred, w.n, 0.05, n_resamples=2000, seed=3)
    assert w.mde == found.mde(0.8) and w.t_mde == pytest.approx(mde(w.estimate.sd, w.n, 0.8, 0.05))
    g = run_gate(load_policy(own), Run(runs["base"]), Run(runs["worse"]))
    assert "resampled" in GATE_FORMATS.get("table")(g) and '"centred"' not in GATE_FORMATS.get("json")(g)
    t = _policy_file(tmp_path, 'sd_source = "comparison"\npower_method = "t-test"\n')
    (wt,) = run_gate(load_policy(t), Run(runs["base"]), Run(runs["worse"])).power
    assert wt.method == "t-test" and wt.mde == wt.t_mde == w.t_mde


def test_policy_multiplicity_keys_are_checked(tmp_path: Path) -> None:
    from rulegauge.regression.policy import PolicyError

    with pytest.raises(PolicyError) as exc:
        load_policy(_policy_file(tmp_path, 'adjustment = "bonferroni"\nfamily = "all"\nrequire_mde = 1\n'
                                 'power_method = "bootstrap"\nsd_source = "past"\n'))
    text = str(exc.value) + " ".join(str(p) for p in getattr(exc.value, "problems", []))
    assert "adjustment" in text and "family" in text and "require_mde" in text
    assert "power_method" in text and "sd_source" in text  # every problem, together
    ok = load_policy(_policy_file(tmp_path, 'adjustment = "bh"\nfamily = "grid"\n'))
    assert (ok.adjustment, ok.family) == ("bh", "grid")

