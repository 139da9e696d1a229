"""rulegauge.regression.compare: joining two runs, per-metric statistics, per-question changes.

``write_run`` builds a small synthetic run directory through rulegauge.store.rundir.RunWriter;
test_gate.py and test_baseline.py import it from here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.info import metric_info
from rulegauge.metrics.stats import holm
from rulegauge.regression.compare import compare_runs
from rulegauge.regression.pairing import ConfigPair, resolve_config_pairs
from rulegauge.store.rundir import Run
from tests.helpers.comparison import METRICS, N_ANSWERABLE, answer_tables, base_lists, move, qid, write_run


@pytest.fixture
def base_run(tmp_path: Path) -> Run:
    return Run(write_run(tmp_path / "base", base_lists()))


def test_identical_runs_have_no_difference_and_no_change(tmp_path: Path, base_run: Run) -> None:
    cand = Run(write_run(tmp_path / "cand", base_lists()))
    c = compare_runs(base_run, cand, n_resamples=500)
    assert c.pairs == (ConfigPair("c3", "c3"),)
    assert {m.metric for m in c.metrics} == set(METRICS)
    for m in c.metrics:
        assert m.difference == 0.0
        assert (m.wins, m.losses) == (0, 0)
        assert m.p_value == 1.0 and m.p_adjusted == 1.0
        assert m.ci_low == m.ci_high == 0.0
    assert c.changes == ()
    assert c.differences == () and not c.forced


def test_one_question_losing_hit5_is_named_with_pages_and_arm_ranks(tmp_path: Path,
                                                                   base_run: Run) -> None:
    # q07 had rb#7 at rank 1 + 7 % 3 = 2; the candidate pushes it to 7, dense no longer ranks it
    lists = move(base_lists(), "q07", "rb#7", 7)
    cand = Run(write_run(tmp_path / "cand", lists, arm_ranks={("q07", "rb#7"): {"dense": None}}))
    c = compare_runs(base_run, cand, n_resamples=500)
    hit5 = c.find("hit@5", ConfigPair("c3", "c3"))
    assert hit5 is not None
    assert hit5.n == N_ANSWERABLE  # unanswerable questions are left out of ranking means
    assert hit5.base_value == 1.0
    assert hit5.candidate_value == pytest.approx((N_ANSWERABLE - 1) / N_ANSWERABLE)
    assert hit5.difference == pytest.approx(-1 / N_ANSWERABLE)
    assert hit5.worsening == pytest.approx(1 / N_ANSWERABLE)
    assert (hit5.wins, hit5.ties, hit5.losses) == (0, N_ANSWERABLE - 1, 1)
    assert hit5.worse == ("q07",)
    assert hit5.value_of("q07") == (1.0, 0.0)
    lost = [ch for ch in c.regressions() if ch.metric == "hit@5"]
    assert [(ch.question_id, ch.description) for ch in lost] == [("q07", "lost hit@5")]
    (page,) = lost[0].pages
    assert (page.page, page.before, page.after) == ("rb#7", 2, 7)
    arms = {a.arm: (a.before, a.after) for a in page.arms}
    assert arms == {"bm25": (2, 7), "dense": (2, None), "boost": (2, 7)}
    moved = [ch for ch in c.regressions() if ch.metric == "first_rel_rank"]
    assert [ch.description for ch in moved] == ["first relevant page moved down (2 -> 7)"]
    mrr = c.find("MRR@10", ConfigPair("c3", "c3"))
    assert mrr is not None and mrr.difference == pytest.approx((1 / 7 - 1 / 2) / N_ANSWERABLE)


def test_improvements_are_listed_separately(tmp_path: Path, base_run: Run) -> None:
    # q02 had rb#2 at rank 3; the candidate finds it first
    cand = Run(write_run(tmp_path / "cand", move(base_lists(), "q02", "rb#2", 1)))
    c = compare_runs(base_run, cand, n_resamples=200)
    assert c.regressions() == ()
    assert {(ch.question_id, ch.description) for ch in c.improvements()} == {
        ("q02", "gained hit@1"), ("q02", "first relevant page moved up (3 -> 1)")}


def test_holm_is_applied_across_the_metrics_of_a_config(tmp_path: Path, base_run: Run) -> None:
    lists = base_lists()
    for i in range(1, 9):
        lists = move(lists, qid(i), f"rb#{i}", 9)
    c = compare_runs(base_run, Run(write_run(tmp_path / "cand", lists)), n_resamples=2_000)
    ps = [m.p_value for m in c.metrics]
    assert [m.p_adjusted for m in c.metrics] == pytest.approx(holm(ps).tolist(), nan_ok=True)
    assert c.family.size == sum(not math.isnan(p) for p in ps)
    assert c.family.members == tuple(("c3", m.metric) for m in c.metrics
                                     if not math.isnan(m.p_value))
    mrr = c.find("MRR@10", ConfigPair("c3", "c3"))
    assert mrr is not None and mrr.p_value < 0.05 and mrr.ci_high < 0.0


def test_one_holm_family_spans_every_config_pair(tmp_path: Path) -> None:
    # two config pairs compared in one call: one family of 2 x metrics tests, not one per pair
    lists = base_lists()
    for i in range(1, 9):
        lists = move(lists, qid(i), f"rb#{i}", 9)
    two = (("c3", "prod", "grid"), ("c2", "other", "grid"))
    base = Run(write_run(tmp_path / "base", base_lists(), configs=two))
    cand = Run(write_run(tmp_path / "cand", lists, configs=two))
    c = compare_runs(base, cand, n_resamples=1_000)
    assert {m.config.base for m in c.metrics} == {"c2", "c3"}
    ps = [m.p_value for m in c.metrics]
    assert [m.p_adjusted for m in c.metrics] == pytest.approx(holm(ps).tolist(), nan_ok=True)
    assert c.family.size == sum(not math.isnan(p) for p in ps) > len(METRICS)
    assert "c2 (" in c.family.describe() and "c3 (" in c.family.describe()
    # the same metric of one pair, compared alone, is adjusted over a smaller family
    alone = compare_runs(base, cand, configs=["c3"], metrics=["MRR@10"], n_resamples=1_000)
    assert alone.family.size == 1 and alone.metrics[0].p_adjusted == alone.metrics[0].p_value


def test_a_p_value_and_interval_that_disagree_are_noted(tmp_path: Path, base_run: Run) -> None:
    # three questions lose hit@5, none gains: p ~ 0.25 while every bootstrap CI sits below 0
    lists = base_lists()
    for i in (4, 5, 6):
        lists = move(lists, qid(i), f"rb#{i}", 8)
    c = compare_runs(base_run, Run(write_run(tmp_path / "cand", lists)), metrics=["hit@5"],
                     n_resamples=4_000)
    (m,) = c.metrics
    assert (m.losses, m.wins) == (3, 0)
    assert m.p_value > 0.05 and m.ci_high < 0.0
    assert "disagree" in m.note and "3 of 20 questions differ" in m.note


def test_same_seed_same_numbers(tmp_path: Path, base_run: Run) -> None:
    lists = base_lists()
    for i in (3, 5, 8, 13):
        lists = move(lists, qid(i), f"rb#{i}", 6)
    cand = Run(write_run(tmp_path / "cand", lists))
    a = compare_runs(base_run, cand, seed=7, n_resamples=3_000)
    b = compare_runs(base_run, cand, seed=7, n_resamples=3_000)
    assert a == b


def test_different_gold_sets_or_corpora_are_refused_unless_forced(tmp_path: Path,
                                                                  base_run: Run) -> None:
    other = Run(write_run(tmp_path / "other", base_lists(), goldset_sha="gold-2",
                          corpus_hash="corpus-9"))
    with pytest.raises(RulegaugeError) as err:
        compare_runs(base_run, other)
    msg = str(err.value)
    assert "gold set sha256: base gold-1 vs candidate gold-2" in msg
    assert "corpus content hash: base corpus-1 vs candidate corpus-9" in msg
    forced = compare_runs(base_run, other, force=True, n_resamples=100)
    assert forced.forced and len(forced.differences) == 2


def test_missing_provenance_counts_as_a_difference(tmp_path: Path, base_run: Run) -> None:
    bare = Run(write_run(tmp_path / "bare", base_lists(), corpus_hash=None))
    expected = r"corpus content hash: base corpus-1 vs candidate \(missing\)"
    with pytest.raises(RulegaugeError, match=expected):
        compare_runs(base_run, bare)


def test_configs_pair_by_name_or_explicitly(tmp_path: Path, base_run: Run) -> None:
    cand = Run(write_run(tmp_path / "cand", base_lists(),
                         configs=(("c2", "prod", "grid"), ("arm-bm25", "arm-bm25", "arm"))))
    assert resolve_config_pairs(base_run, cand, ["prod"]) == (ConfigPair("c3", "c2"),)
    assert resolve_config_pairs(base_run, cand, [("c3", "c2")]) == (ConfigPair("c3", "c2"),)
    # no shared id: the sole grid config of each side is paired
    assert resolve_config_pairs(base_run, cand) == (ConfigPair("c3", "c2"),)
    expected = r"candidate: config 'nope' .*choose one of: c2 \(prod\), arm-bm25"
    with pytest.raises(RulegaugeError, match=expected):
        resolve_config_pairs(base_run, cand, [("c3", "nope")])


def test_no_shared_config_is_an_error_listing_both_sides(tmp_path: Path, base_run: Run) -> None:
    cand = Run(write_run(tmp_path / "cand", base_lists(),
                         configs=(("x1", "x1", "grid"), ("x2", "x2", "grid"))))
    expected = "no config in common: base has c3; candidate has x1, x2"
    with pytest.raises(RulegaugeError, match=expected):
        compare_runs(base_run, cand)


def test_unknown_metric_lists_what_both_sides_have(tmp_path: Path, base_run: Run) -> None:
    # a named metric on neither side is named; the others are compared
    c = compare_runs(base_run, base_run, metrics=["hit@5", "hit@3"], n_resamples=100)
    assert [m.metric for m in c.metrics] == ["hit@5"] and c.unpaired == ("hit@3 (neither side)",)
    assert c.unpaired_note() == "not compared (not on both sides): hit@3 (neither side)"
    expected = r"metric\(s\) hit@3 not on both sides; both have: MRR@10"
    with pytest.raises(RulegaugeError, match=expected):  # none of them: bad input
        compare_runs(base_run, base_run, metrics=["hit@3"])


def test_selected_metrics_keep_their_order(base_run: Run) -> None:
    c = compare_runs(base_run, base_run, metrics=["MRR@10", "hit@1"], n_resamples=100)
    assert [m.metric for m in c.metrics] == ["MRR@10", "hit@1"]


def test_infinite_first_rel_rank_is_compared_without_a_test(tmp_path: Path,
                                                            base_run: Run) -> None:
    cand = Run(write_run(tmp_path / "cand", move(base_lists(), "q04", "rb#4", None)))
    c = compare_runs(base_run, cand, n_resamples=200)
    frr = c.find("first_rel_rank", ConfigPair("c3", "c3"))
    assert frr is not None and not frr.higher_is_better and frr.aggregate == "median"
    assert math.isnan(frr.p_value) and "non-finite" in frr.note
    assert (frr.wins, frr.losses) == (0, 1)
    assert frr.value_of("q04") == (2.0, math.inf)
    (gone,) = [ch for ch in c.regressions() if ch.metric == "first_rel_rank"]
    assert gone.description == "first relevant page moved down (2 -> not retrieved)"
    assert (gone.pages[0].before, gone.pages[0].after) == (2, None)


def test_answer_metrics_use_their_scope_and_name_lost_citations(tmp_path: Path) -> None:
    qs = [qid(i) for i in range(1, 5)]
    base_vals = {"citation_recall": dict.fromkeys(qs, 1.0), "fence_pass": dict.fromkeys(qs, 1.0)}
    cand_vals = {"citation_recall": {**dict.fromkeys(qs, 1.0), "q02": 0.0},
                 "fence_pass": {**dict.fromkeys(qs, 1.0), "q03": 0.0}}
    b = Run(write_run(tmp_path / "b", base_lists(), **_answers(base_vals)))
    c_run = Run(write_run(tmp_path / "c", base_lists(), **_answers(cand_vals, {"q04": "error"})))
    c = compare_runs(b, c_run, metrics=["citation_recall", "fence_pass"], n_resamples=200)
    fence = c.find("fence_pass", ConfigPair("c3", "c3"), "extractive")
    assert fence is not None and fence.scope == "responded"
    # q04 errored in the candidate: out of the "responded" scope, so 3 paired questions
    assert fence.n == 3 and fence.candidate_value == pytest.approx(2 / 3)
    assert "in scope: 4 base, 3 candidate, 3 paired" in fence.note
    descriptions = {(ch.question_id, ch.description) for ch in c.regressions()}
    assert ("q02", "citation lost (citation_recall 1 -> 0)") in descriptions
    assert ("q03", "answer now fails the fence") in descriptions
    assert all(ch.answerer == "extractive" for ch in c.regressions())


def test_latency_is_compared_from_the_answers_column(tmp_path: Path) -> None:
    """latency_ms is measured: its values are the answers' column, not answer_metrics rows."""
    qs = [qid(i) for i in range(1, 5)]
    sides = []
    for name, slow in (("b", {}), ("c", {"q02": 900.0})):
        tables = _answers({"citation_recall": dict.fromkeys(qs, 1.0)})
        tables["answers"]["latency_ms"] = [slow.get(q, 100.0) for q in tables["answers"]["question_id"]]
        assert "latency_ms" not in set(tables["answer_metrics"]["metric"])
        sides.append(Run(write_run(tmp_path / name, base_lists(), **tables)))
    c = compare_runs(*sides, metrics=["latency_ms"], n_resamples=200)
    lat = c.find("latency_ms", ConfigPair("c3", "c3"), "extractive")
    assert lat is not None and lat.n == 4
    assert (lat.base_value, lat.candidate_value) == (100.0, 300.0)  # means: (3 x 100 + 900) / 4
    assert lat.value_of("q02") == (100.0, 900.0)


def _answers(values: Mapping[str, Mapping[str, float]],
             outcomes: Mapping[str, str] | None = None) -> dict[str, pd.DataFrame]:
    answers, metrics = answer_tables(values, outcomes)
    return {"answers": answers, "answer_metrics": metrics}


def test_metric_directions_come_from_the_registries() -> None:
    hit = metric_info("hit@5")
    frr = metric_info("first_rel_rank")
    assert hit is not None and hit.higher_is_better and hit.scope == "answerable"
    assert frr is not None and not frr.higher_is_better
    ratio = metric_info("top_score_ratio")
    assert ratio is not None and ratio.scope == "all"
    latency = metric_info("latency_ms")
    assert latency is not None and not latency.higher_is_better
    assert metric_info("abstained") is None  # no better direction
    assert metric_info("no-such-metric") is None


def test_answer_scopes_need_the_answers_table(tmp_path: Path, base_run: Run) -> None:
    _, metrics = answer_tables({"fence_pass": {"q01": 1.0}})
    side = Run(write_run(tmp_path / "c", base_lists(), answer_metrics=metrics))
    expected = "metric fence_pass: this metric's scope needs answer outcomes"
    with pytest.raises(RulegaugeError, match=expected):
        compare_runs(side, side, metrics=["fence_pass"])
