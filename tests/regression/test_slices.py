"""Slices of the gold set gated on their own (rulegauge.regression.slices): a regression of
one tag's questions fails the gate even when the whole set improves, and only then."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
import typer
from junitparser import JUnitXml
from typer.testing import CliRunner

from rulegauge.cli.compare import register
from rulegauge.core.errors import RulegaugeError
from rulegauge.regression.gate import EXIT_BAD_INPUT, EXIT_PASS, EXIT_REGRESSION, Status, run_gate
from rulegauge.regression.policy import PolicyError, load_policy, parse_policy
from rulegauge.regression.slice_select import parse_slice
from rulegauge.store.rundir import Run
from tests.helpers.common import REPO
from tests.helpers.comparison import base_lists, move, qid
from tests.helpers.slices import tagged_run

ERRATA = ("q01", "q02", "q03", "q04")
POLICY = """
[gate]
config = "c3"
alpha = 0.05
n_resamples = 500    # the tests' gates: cheap resampling, same decisions here

[metrics."MRR@10"]
max_drop = 0.0

[slices.errata]
tag = "errata"
[slices.errata.metrics."MRR@10"]
max_drop = 0.0
[slices.errata.metrics.first_rel_rank]
max_worse = 1          # at most one errata question may lose rank on its first relevant page
"""


def improved(lists: dict[str, list[str]], skip: tuple[str, ...] = ERRATA) -> dict[str, list[str]]:
    """Every answerable question outside ``skip`` finds its page at rank 1."""
    for i in range(1, 21):
        if qid(i) not in skip:
            lists = move(lists, qid(i), f"rb#{i}", 1)
    return lists


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    root = tmp_path_factory.mktemp("slices")
    tags = {q: ["errata"] for q in ERRATA} | {"q05": ["scoring"]}
    errata_worse = base_lists()
    for q in ("q01", "q02", "q04"):  # q03 is at rank 1 already: moved too, it would not change
        errata_worse = move(errata_worse, q, f"rb#{int(q[1:])}", 9)
    policy = root / "policy.toml"
    policy.write_text(POLICY, encoding="utf-8")
    return {"base": tagged_run(root / "base", base_lists(), tags=tags),
            # only the errata slice regresses; every other question improves
            "slice-worse": tagged_run(root / "slice-worse", improved(errata_worse), tags=tags),
            # the whole set improves and the slice holds
            "better": tagged_run(root / "better", improved(base_lists()), tags=tags),
            "policy": policy}  # type: ignore[dict-item]


def test_a_tag_slice_regression_fails_the_gate_while_the_whole_set_improves(runs) -> None:
    result = run_gate(load_policy(runs["policy"]), runs["base"], runs["slice-worse"])
    assert result.exit_code == EXIT_REGRESSION
    checks = {c.name: c for c in result.checks}
    assert checks["MRR@10 max_drop"].status is Status.OK  # the mean over every question improved
    assert result.comparison.metrics[0].difference > 0
    drop = checks["slice errata: MRR@10 max_drop"]
    assert drop.status is Status.FAIL and drop.slice == "errata"
    assert drop.questions == ("q01", "q02", "q04")
    worse = checks["slice errata: first_rel_rank max_worse"]
    assert (worse.status, worse.measured_value, worse.expected_value) == (Status.FAIL, 3.0, 1.0)
    assert "3 of 4 question(s) got worse, allowed 1: q01, q02, q04" in worse.message
    (outcome,) = result.slices
    assert (outcome.name, outcome.selector, outcome.questions) == ("errata", "tag errata", ERRATA)
    assert outcome.failing_questions() == ("q01", "q02", "q04")
    # the slice's tests are one family of their own, adjusted by the one rule
    assert outcome.comparison is not None
    family = outcome.comparison.family
    assert family.method == "holm" and family.members == (("c3", "MRR@10"), ("c3", "first_rel_rank"))
    assert family.scope.startswith("slice errata (tag errata, 4 questions)")


def test_the_whole_set_improving_with_the_slice_holding_passes(runs) -> None:
    result = run_gate(load_policy(runs["policy"]), runs["base"], runs["better"])
    assert result.exit_code == EXIT_PASS, [c.message for c in result.failures()]
    slice_checks = [c for c in result.checks if c.slice == "errata"]
    # max_drop, max_worse and (the policy's alpha) a significance check per slice metric
    assert {c.kind for c in slice_checks} == {"max_drop", "max_worse", "alpha"}
    assert {c.status for c in slice_checks} == {Status.OK}


def test_without_the_slice_the_average_hides_the_regression(runs) -> None:
    whole_only = POLICY.split("[slices.errata]")[0]
    result = run_gate(parse_policy(tomllib.loads(whole_only)), runs["base"],
                      runs["slice-worse"])
    assert result.exit_code == EXIT_PASS


def _cli() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


def test_cli_names_the_failing_slice_and_its_questions_in_every_report(runs, tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = CliRunner().invoke(_cli(), [
        "gate", "--baseline", str(runs["base"].path), "--run", str(runs["slice-worse"].path),
        "--policy", str(runs["policy"]), "--markdown", str(out / "g.md"), "--junit",
        str(out / "g.xml"), "--json-file", str(out / "g.json")])
    assert r.exit_code == EXIT_REGRESSION, r.output
    assert "slice errata: MRR@10 max_drop" in r.output
    md = (out / "g.md").read_text(encoding="utf-8")
    assert "| errata | tag errata | 4 | FAIL | 2 | q01, q02, q04 |" in md
    assert "<summary>Metrics of slice errata (tag errata, 4 questions)</summary>" in md
    failures = {c.name: c.result[0] for s in JUnitXml.fromfile(str(out / "g.xml")) for c in s
                if c.result and c.result[0]._tag == "failure"}
    assert set(failures) == {"slice errata: MRR@10 max_drop", "slice errata: first_rel_rank max_worse"}
    assert "q01, q02, q04" in failures["slice errata: first_rel_rank max_worse"].message
    report = json.loads((out / "g.json").read_text(encoding="utf-8"))
    assert report["slices"][0]["questions"] == list(ERRATA)
    assert {c["slice"] for c in report["checks"]} == {"", "errata"}


def test_compare_prints_a_table_and_family_per_slice(runs) -> None:
    r = CliRunner().invoke(_cli(), ["compare", str(runs["base"].path), str(runs["slice-worse"].path),
                                    "-m", "MRR@10", "--slice", "tag=errata", "--slice",
                                    "questions=q05,q06", "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    errata, pair = doc["slices"]
    assert errata["name"] == "tag=errata" and errata["questions"] == list(ERRATA)
    (m,) = errata["comparison"]["metrics"]
    assert (m["n"], m["losses"], m["wins"]) == (4, 3, 0)
    assert errata["comparison"]["family"]["scope"].startswith("slice tag=errata (tag errata, 4 questions)")
    assert pair["questions"] == ["q05", "q06"]
    table = CliRunner().invoke(_cli(), ["compare", str(runs["base"].path),
                                        str(runs["slice-worse"].path), "-m", "MRR@10", "--slice",
                                        "tag=errata"])
    assert "slice tag=errata (tag errata): 4 questions" in table.output


def test_a_slice_that_selects_nothing_or_unknown_ids_is_bad_input(runs, tmp_path: Path) -> None:
    for body, why in (('[slices.none]\ntag = "nope"\n[slices.none.metrics."hit@5"]\nmax_drop = 0',
                       "slice none (tag nope) selects none of the 22 questions both runs share"),
                      ('[slices.ids]\nquestions = ["q01", "q99"]\n[slices.ids.metrics."hit@5"]\nmax_drop = 0',
                       "slice ids: question(s) q99 are not among the 22 questions")):
        p = tmp_path / "p.toml"
        p.write_text('[gate]\nconfig = "c3"\n' + body, encoding="utf-8")
        with pytest.raises(RulegaugeError, match=why.replace("(", r"\(").replace(")", r"\)")):
            run_gate(load_policy(p), runs["base"], runs["better"])
        r = CliRunner().invoke(_cli(), ["gate", "--baseline", str(runs["base"].path), "--run",
                                        str(runs["better"].path), "--policy", str(p)])
        assert r.exit_code == EXIT_BAD_INPUT and "Traceback" not in r.output


def test_malformed_slices_list_every_problem() -> None:
    with pytest.raises(PolicyError) as exc:
        parse_policy({"gate": {"config": "c3"}, "slices": {
            "a": {"metrics": {"hit@5": {"max_drop": 0}}},
            "b": {"tag": "x", "answerable": "yes", "colour": 1},
            "c": {"questions": [], "overlap": {"min_rbo": 2, "depth": 0, "p": 1.0}},
            "d": {"tag": "x", "metrics": {"hit@5": {"max_worse": -1}}}}}, "p.toml")
    text = str(exc.value)
    for part in ("slices.a: selects nothing", "slices.b: asks for no check",
                 "slices.b.answerable: must be true or false", "slices.b.colour: unknown key",
                 "slices.c.questions: must be a non-empty list", "slices.c.overlap.min_rbo",
                 "slices.c.overlap.depth", "slices.c.overlap.p",
                 "slices.d.metrics.hit@5.max_worse: must be an integer >= 0"):
        assert part in text, part


def test_a_policy_may_be_slices_alone_and_slice_options_parse() -> None:
    pol = parse_policy({"slices": {"log": {"labelled": False, "overlap": {"min_rbo": 0.8}}}})
    assert pol.metrics == () and pol.slices[0].labelled is False
    assert pol.slices[0].overlap is not None and pol.slices[0].overlap.depth == 10
    assert parse_slice("answerable=false").answerable is False
    assert parse_slice("questions=a, b").questions == ("a", "b")
    with pytest.raises(RulegaugeError, match="--slice 'colour=red'"):
        parse_slice("colour=red")


SAMPLE_POLICY = REPO / "docs" / "ci" / "gate-policy-slices.toml"


@pytest.mark.parametrize(("candidate", "code", "said"), [
    # dense alone: MRR@10 of every question 0.6012 -> 0.7579, yet 2 of the 5 scoring questions
    # lose rank on their first relevant page
    ("arm-dense", EXIT_REGRESSION, "first_rel_rank: 2 of 5 question(s) got worse, allowed 1: "
                                   "bw-24, bw-25"),
    ("rrf_k60_bm25+dense", EXIT_PASS, "first_rel_rank: 1 of 5 question(s) got worse, allowed 1: bw-25")])
def test_the_example_slice_policy_on_the_committed_sample_baseline(candidate: str, code: int,
                                                                   said: str) -> None:
    r = CliRunner().invoke(_cli(), ["gate", "--baseline", str(REPO / "runs" / "baselines" / "sample"),
                                    "--run", str(REPO / "runs" / "baselines" / "sample"),
                                    "--candidate-config", candidate, "--policy", str(SAMPLE_POLICY),
                                    "--format", "markdown"])
    assert r.exit_code == code, r.output
    assert said in r.output
    assert "MRR@10 did not get worse" in r.output  # the whole set improves in both
    # 5 scoring questions: 2/2^5 = 0.0625, so their significance check cannot fail, and says so
    assert ("slice scoring: its significance checks cannot fail: with 5 question(s) the smallest "
            "adjusted sign-flip p is 0.0625") in r.output
    assert "slice errata: its significance" not in r.output  # 6 questions: 2/2^6 < 0.05
