"""Gold sets that grow (rulegauge.regression.grown): a pull request that adds gold questions is
gated on the questions both runs share and lists the added ones; a question whose content
changed under its id, or another corpus, is still refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from rulegauge.cli.compare import register
from rulegauge.core.errors import RulegaugeError
from rulegauge.regression.compare import compare_runs
from rulegauge.regression.gate import EXIT_BAD_INPUT, EXIT_PASS, EXIT_REGRESSION, run_gate
from rulegauge.regression.grown import grown_goldset
from rulegauge.regression.policy import parse_policy
from rulegauge.store.rundir import Run
from tests.helpers.comparison import base_lists, move, write_run
from tests.helpers.slices import tagged_run

POLICY = {"gate": {"config": "c3", "n_resamples": 500},
          "metrics": {"hit@5": {"max_drop": 0.0}, "MRR@10": {"max_drop": 0.0}}}
ADDED = ("q23", "q24", "q25")


def grown_lists(lists: dict[str, list[str]]) -> dict[str, list[str]]:
    """``lists`` plus three new answerable questions, each finding its page at rank 1."""
    return {**lists, **{q: [f"rb#{int(q[1:])}", *[f"fl#{j}" for j in range(1, 10)]] for q in ADDED}}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    root = tmp_path_factory.mktemp("grown")
    worse = move(base_lists(), "q07", "rb#7", 9)
    removed = {q: v for q, v in base_lists().items() if q != "q20"}
    return {"base": tagged_run(root / "base", base_lists()),
            "grown": tagged_run(root / "grown", grown_lists(base_lists()), goldset_sha="gold-2"),
            "grown-worse": tagged_run(root / "grown-worse", grown_lists(worse), goldset_sha="gold-2"),
            "removed": tagged_run(root / "removed", removed, goldset_sha="gold-3"),
            "changed": tagged_run(root / "changed", grown_lists(base_lists()), goldset_sha="gold-4",
                                  versions={"q05": 2, "q11": 2}),
            "other-corpus": tagged_run(root / "other-corpus", grown_lists(base_lists()),
                                       goldset_sha="gold-2", corpus_hash="corpus-2"),
            "old": Run(write_run(root / "old", grown_lists(base_lists()), goldset_sha="gold-2"))}


def test_a_pull_request_adding_three_questions_gates_on_the_shared_ones(runs) -> None:
    result = run_gate(parse_policy(POLICY), runs["base"], runs["grown"])
    assert result.exit_code == EXIT_PASS, [c.message for c in result.failures()]
    grown = result.comparison.grown
    assert grown is not None and grown.added == ADDED and grown.removed == () and grown.shared == 22
    assert {m.n for m in result.comparison.metrics} == {20}  # the shared answerable questions
    assert not result.comparison.forced and result.comparison.differences == ()
    note = ("gold set changed from synthetic gold-1 to synthetic gold-2: 3 added (q23, q24, q25), "
            "0 removed; compared on the 22 question(s) both share")
    assert note in result.notes


def test_the_shared_questions_still_fail_when_they_regress(runs) -> None:
    result = run_gate(parse_policy(POLICY), runs["base"], runs["grown-worse"])
    assert result.exit_code == EXIT_REGRESSION
    assert {q for c in result.failures() for q in c.questions} == {"q07"}


def test_removed_questions_are_listed_and_left_out(runs) -> None:
    result = run_gate(parse_policy(POLICY), runs["base"], runs["removed"])
    assert result.exit_code == EXIT_PASS
    grown = result.comparison.grown
    assert grown is not None and (grown.added, grown.removed, grown.shared) == ((), ("q20",), 21)


@pytest.mark.parametrize(("name", "why"), [
    ("changed", "2 question(s) changed content under the same id (q05, q11)"),
    ("other-corpus", "corpus content hash: base corpus-1 vs candidate corpus-2"),
    ("old", "the candidate records no question digests")])
def test_changed_content_another_corpus_or_no_digests_are_refused(runs, name: str, why: str) -> None:
    with pytest.raises(RulegaugeError, match="use force") as exc:
        run_gate(parse_policy(POLICY), runs["base"], runs[name])
    assert why in str(exc.value)
    assert grown_goldset(runs["base"], runs[name])[0] is None


def test_compare_and_the_cli_list_the_added_questions(runs, tmp_path: Path) -> None:
    c = compare_runs(runs["base"], runs["grown"], metrics=["hit@5"])
    assert c.grown is not None and c.grown.added == ADDED
    app = typer.Typer()
    register(app)
    md = tmp_path / "g.md"
    policy = tmp_path / "p.toml"
    policy.write_text('[gate]\nconfig = "c3"\n[metrics."hit@5"]\nmax_drop = 0.0\n', encoding="utf-8")
    r = CliRunner().invoke(app, ["gate", "--baseline", str(runs["base"].path), "--run",
                                 str(runs["grown"].path), "--policy", str(policy), "--markdown", str(md)])
    assert r.exit_code == EXIT_PASS, r.output
    assert "3 added (q23, q24, q25)" in r.output
    assert "**gold set changed from synthetic gold-1 to synthetic gold-2: 3 added (q23, q24, q25)" in \
        md.read_text(encoding="utf-8")
    doc = json.loads(CliRunner().invoke(app, ["compare", str(runs["base"].path),
                                              str(runs["grown"].path), "--json"]).output)
    assert doc["grown"]["added"] == list(ADDED)
    bad = CliRunner().invoke(app, ["gate", "--baseline", str(runs["base"].path), "--run",
                                   str(runs["changed"].path), "--policy", str(policy)])
    assert bad.exit_code == EXIT_BAD_INPUT and "q05, q11" in bad.output
