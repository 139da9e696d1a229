"""Side-by-side answerer table: scoped means, paired differences, seeded bootstrap; never
over error rows (b's error on q-storm takes q-storm out of every statistic)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from rulegauge.answering.runner import answer_run
from rulegauge.answering.sidebyside import side_by_side
from rulegauge.answering.sidebyside_print import print_side_by_side, render, to_markdown, to_records
from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.stats import bootstrap_ci
from rulegauge.store.rundir import Run
from tests.helpers.answering import EchoAnswerer, register_echo, write_run


@pytest.fixture
def answered(tmp_path: Path) -> Run:
    register_echo()
    EchoAnswerer.calls = []
    path = write_run(tmp_path / "run-sbs")
    # a: cites [1]; b: cites [1][2], 3 ms slower, fails on q-storm
    answer_run(path, [("a=echo", {}), ("b=echo", {"cite": "[1][2]", "latency": 8.0,
                                                  "fail_on": "q-storm"})],
               configs=["rrf-3", "arm-bm25"])
    return Run(path)


def row(sbs, config: str, label: str):
    return next(r for r in sbs.rows if r.config_id == config and r.answerer == label)


def diff(sbs, config: str, label: str, metric: str):
    return next(d for d in sbs.diffs
                if (d.config_id, d.answerer, d.metric) == (config, label, metric))


def test_means_follow_metric_scopes(answered: Run) -> None:
    sbs = side_by_side(answered, n_resamples=200)
    a, b = row(sbs, "rrf-3", "a"), row(sbs, "rrf-3", "b")
    assert (a.questions, a.errors, b.errors) == (4, 0, 1)
    ex = sbs.exclusion("rrf-3")
    assert (ex.questions, ex.compared, ex.errors, ex.not_covered) == (4, 3, 1, 0)
    assert b.mean("fence_pass") == 1.0
    # citation recall over the answerable compared questions (q-storm is out: b erred);
    # a cites [1] only: q-move: rb#2 is [1] -> 1; q-score: needs rb#3 ([1]) and er#1 ([2]) -> 1/2
    assert a.mean("citation_recall") == (1 + 1 / 2) / 2
    # b: q-move [1]=rb#2, [2]=faq#1 -> 1; q-score [1]+[2] -> 1
    assert b.mean("citation_recall") == (1 + 1) / 2
    # abstention accuracy over the 3 compared questions; b's error is not counted as wrong
    assert (a.mean("abstention_correct"), b.mean("abstention_correct")) == (1.0, 1.0)
    assert a.latency_p50 == 5.0 and b.latency_p95 == pytest.approx(8.0, abs=50.0)


def test_paired_differences_against_the_first_answerer(answered: Run) -> None:
    sbs = side_by_side(answered, n_resamples=500, seed=3)
    assert sbs.baseline == "a"
    assert not any(d.answerer == "a" for d in sbs.diffs)
    rec = diff(sbs, "rrf-3", "b", "citation_recall")
    per_q = np.array([1 - 1, 1 - 1 / 2])  # q-move, q-score; q-storm (b's error) left out
    assert rec.shared == 2 and rec.mean_diff == pytest.approx(per_q.mean(), abs=1e-15)
    assert (rec.ci_low, rec.ci_high) == bootstrap_ci(per_q, n_resamples=500, seed=3)
    assert diff(sbs, "rrf-3", "b", "fence_pass").shared == 3
    prec = diff(sbs, "rrf-3", "b", "citation_precision")
    # precision: q-move a=1 b=1/2 (faq#1 not relevant); q-score a=1 b=1; never the error row
    assert prec.mean_diff == pytest.approx(((1 / 2 - 1) + (1 - 1)) / 2, abs=1e-15)
    # the error rows themselves are counted, not averaged
    assert all(d.shared <= 3 for d in sbs.diffs if d.config_id == "rrf-3")


def test_citation_precision_is_over_answers_that_cite_abstention_beside_it(tmp_path: Path) -> None:
    """ALCE's precision: an abstention cites nothing and is left out, so an answerer that
    abstains more (c abstains on the answerable q-score) keeps a's precision; the abstention
    rate and accuracy say what it did instead."""
    register_echo()
    path = write_run(tmp_path / "run-abstain")
    answer_run(path, [("a=echo", {}), ("c=echo", {"abstain_on": "q-score"})], configs=["rrf-3"])
    sbs = side_by_side(Run(path), n_resamples=100)
    a, c = row(sbs, "rrf-3", "a"), row(sbs, "rrf-3", "c")
    # a cites [1], a relevant page, on the three answerable questions; c on two (not q-score)
    assert a.mean("citation_precision") == 1.0 and c.mean("citation_precision") == 1.0
    assert diff(sbs, "rrf-3", "c", "citation_precision").shared == 2  # q-move, q-storm: both cite
    # 4 questions: a abstains on q-none (unanswerable) only; c on q-score too
    assert (a.mean("abstained"), c.mean("abstained")) == (1 / 4, 2 / 4)
    assert (a.mean("abstention_correct"), c.mean("abstention_correct")) == (1.0, 3 / 4)
    text = to_markdown(sbs)
    assert "cit. precision (citing)" in text and "abstention rate" in text and "abstention acc." in text


def test_bootstrap_is_reproducible_by_seed(answered: Run) -> None:
    one = side_by_side(answered, seed=11, n_resamples=300)
    two = side_by_side(answered, seed=11, n_resamples=300)
    assert to_records(one) == to_records(two)  # records: NaN (untested p) as None compares equal
    other = side_by_side(answered, seed=12, n_resamples=300)
    d1, d2 = (diff(s, "rrf-3", "b", "latency_ms") for s in (one, other))
    assert d1.mean_diff == d2.mean_diff


def test_baseline_and_config_can_be_chosen(answered: Run) -> None:
    sbs = side_by_side(answered, config_id="arm-bm25", baseline="b", n_resamples=100)
    assert {r.config_id for r in sbs.rows} == {"arm-bm25"}
    assert {d.answerer for d in sbs.diffs} == {"a"}
    with pytest.raises(RulegaugeError, match="choose from: a, b"):
        side_by_side(answered, baseline="zzz")
    with pytest.raises(RulegaugeError, match="rrf-3, arm-bm25"):
        side_by_side(answered, config_id="nope")


def test_metric_with_nothing_in_scope_has_no_difference(answered: Run) -> None:
    sbs = side_by_side(answered, n_resamples=100)
    # no_citation is scoped to answered answers: a answered 3, b only 2 (error, abstention)
    assert diff(sbs, "rrf-3", "b", "no_citation").shared == 2  # q-storm error, q-none abstained
    assert all(not math.isnan(d.mean_diff) for d in sbs.diffs if d.shared)


def test_render_and_print(answered: Run) -> None:
    tables = render(side_by_side(answered, n_resamples=100))
    assert len(tables) == 2
    console = Console(record=True, width=160)
    print_side_by_side(answered, console)
    out = console.export_text()
    assert "answerers on config rrf-3" in out and "b - a" in out and "n=3" in out


def test_unanswered_run_raises(tmp_path: Path) -> None:
    run = Run(write_run(tmp_path / "run-empty"))
    with pytest.raises(RulegaugeError, match="rulegauge answer"):
        side_by_side(run)


def test_differences_use_the_one_multiplicity_rule(answered: Run) -> None:
    """The answerers' p-values: the gate's permutation test on each paired difference,
    adjusted as ONE family (every config, answerer and metric with a direction) by the
    rule of report/compare/gate; abstained (no direction) and empty pairs untested."""
    import json

    from typer.testing import CliRunner

    from rulegauge.cli import app
    from rulegauge.metrics.multiplicity import family_of
    from rulegauge.metrics.stats import permutation_test

    for adjustment in ("holm", "bh"):
        sbs = side_by_side(answered, n_resamples=300, seed=5, adjustment=adjustment)
        tested = [d for d in sbs.diffs if not math.isnan(d.p_value)]
        assert {d.metric for d in sbs.diffs if math.isnan(d.p_value) and d.shared} == {"abstained"}
        rec = diff(sbs, "rrf-3", "b", "citation_recall")
        assert rec.p_value == permutation_test(np.array([0.0, 0.5]), 300, 5).p_value
        adjusted, family = family_of([d.member for d in sbs.diffs], [d.p_value for d in sbs.diffs],
                                     adjustment)
        assert sbs.family == replace(family, scope=sbs.family.scope, limit=sbs.family.limit)
        # at most 3 paired questions: the smallest p is 2/2^3 = 0.25 (rulegauge.metrics.reach)
        assert sbs.family.limit.startswith("CANNOT FLAG ANYTHING: its smallest possible p is 0.25")
        assert sbs.family.size == len(tested) and sbs.family.method == adjustment
        assert [d.p_adjusted for d in sbs.diffs] == pytest.approx(list(adjusted), nan_ok=True)
        assert {d.member for d in sbs.diffs if d.significant} == set(family.flagged)
    console = Console(record=True, width=250)
    print_side_by_side(answered, console, adjustment="bh")
    out = console.export_text()
    assert f"p (bh) family: bh over {sbs.family.size} test(s)" in out and "p (bh) " in out
    assert "p (bh) family" in to_markdown(sbs)
    r = CliRunner().invoke(app, ["answerers", str(answered.path), "--json", "--adjustment", "bh"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["family"]["method"] == "bh" and data["family"]["size"] == sbs.family.size
    assert all("p_adjusted" in d and "significant" in d for d in data["differences"])
    bad = CliRunner().invoke(app, ["answerers", str(answered.path), "--adjustment", "nope"])
    assert bad.exit_code == 2 and "nope" in bad.output


def test_each_difference_carries_its_effect_size(answered: Run) -> None:
    """Beside the BCa interval: the t margin of error and Cohen's d_z of the same paired
    differences (rulegauge.regression.effect_size), in every format."""
    from rulegauge.regression.effect_size import paired_effect

    sbs = side_by_side(answered, n_resamples=300, seed=1)
    rec = diff(sbs, "rrf-3", "b", "citation_recall")
    assert rec.effect == paired_effect(np.array([0.0, 0.5]))
    records = {(d["config_id"], d["metric"]): d for d in to_records(sbs)["differences"]}
    assert records[("rrf-3", "citation_recall")]["d_z"] == pytest.approx(rec.effect.d_z)
    assert "±MOE (95% t) d_z" in to_markdown(sbs)
    assert f"±{rec.effect.moe:.3f} d_z {rec.effect.d_z:.2f}" in to_markdown(sbs)


def test_answerers_in_a_fresh_process_loads_latency_and_the_same_family(answered: Run) -> None:
    """``rulegauge answerers`` reads a run in a process that never answered: the measured
    latency and its paired test are there, the family is the one ``rulegauge answer``
    (which loads every answerer first) prints."""
    import json
    import subprocess
    import sys

    exe = Path(sys.executable).with_name("rulegauge")
    done = subprocess.run([str(exe), "answerers", str(answered.path), "--json"], capture_output=True,
                          text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    in_process = side_by_side(answered)
    assert data["family"]["size"] == in_process.family.size
    assert ["rrf-3: a -> b", "latency_ms"] in data["family"]["members"]
    assert all(a["means"]["latency_ms"] is not None for a in data["answerers"])
