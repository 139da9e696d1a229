"""Score bands: anchors, quantiles, ROC separation, validation, the `rulegauge bands` command."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import typer
from sklearn.metrics import roc_auc_score
from typer.testing import CliRunner

from rulegauge.analysis import bands
from rulegauge.cli.analysis import register
from rulegauge.core.errors import ValidationError
from rulegauge.store.rundir import open_run
from tests.helpers.analysis import write_synthetic_run

K = 60.0


def _configs(*rows: tuple[str, tuple[str, ...], tuple[float, ...], float]) -> pd.DataFrame:
    return pd.DataFrame([{"config_id": cid, "name": cid, "kind": "grid", "method": "rrf", "k": k,
                          "arms": list(arms), "weights": list(w), "depths": [10] * len(arms),
                          "ceiling": sum(w) / (k + 1), "params": "{}"}
                         for cid, arms, w, k in rows])


def _row(q: str, chunk: str, rank: int, score: float, relevant: bool,
         bm25: int | None, dense: int | None, boost: int | None) -> dict[str, object]:
    ceiling = 3 / (K + 1)
    voted = sum(r is not None for r in (bm25, dense, boost))
    return {"question_id": q, "config_id": "c3", "chunk_id": chunk, "doc_id": "rb", "page": rank,
            "fused_rank": rank, "fused_score": score, "ceiling": ceiling,
            "score_ratio": score / ceiling, "n_arms": 3, "arms_voted": voted,
            "relevant": relevant, "page_rank": rank, "rank_bm25": bm25, "rank_dense": dense,
            "rank_boost": boost}


def _hand_fused() -> pd.DataFrame:
    """q1 (answerable): a relevant, 3 votes; b 2 votes; c boost alone.
    q2 (unanswerable): e 2 votes ranks above d (1 vote)."""
    rows = [
        _row("q1", "a", 1, 1 / 61 + 1 / 62 + 1 / 61, True, 1, 2, 1),
        _row("q1", "b", 2, 1 / 62 + 1 / 61, False, 2, 1, None),
        _row("q1", "c", 3, 1 / 62, False, None, None, 2),
        _row("q2", "e", 1, 1 / 61 + 1 / 61, False, 1, None, 1),
        _row("q2", "d", 2, 1 / 61, False, None, 1, None),
    ]
    df = pd.DataFrame(rows)
    for col in ("rank_bm25", "rank_dense", "rank_boost"):
        df[col] = df[col].astype("Int32")
    return df


CONFIG3 = ("c3", ("bm25", "dense", "boost"), (1.0, 1.0, 1.0), K)


def test_anchors_equal_weights_three_and_two_arms() -> None:
    a3 = bands.anchors(60, ("bm25", "dense", "boost"), (1, 1, 1))
    assert a3.vote_tops == pytest.approx((1 / 61, 2 / 61, 3 / 61))
    assert a3.ceiling == pytest.approx(0.04918, abs=5e-6)
    a2 = bands.anchors(60, ("bm25", "dense"), (1, 1))
    assert (a2.one_arm_top, a2.two_arm_top, a2.ceiling) == pytest.approx((1 / 61, 2 / 61, 2 / 61))


def test_anchors_weighted_and_single_arm() -> None:
    a = bands.anchors(30, ("bm25", "dense", "boost"), (1.0, 1.5, 0.5))
    assert (a.one_arm_top, a.two_arm_top, a.ceiling) == pytest.approx(
        (1.5 / 31, (1.5 + 1.0) / 31, (1.0 + 1.5 + 0.5) / 31))
    one = bands.anchors(60, ("dense",), (1.0,))
    assert one.ceiling == pytest.approx(1 / 61)
    assert math.isnan(one.two_arm_top)
    with pytest.raises(ValueError, match="equal in length"):
        bands.anchors(60, ("bm25", "dense"), (1.0,))


def test_summarise_linear_quantiles_and_empty() -> None:
    s = bands.summarise(np.array([1.0, 2.0, 3.0, 4.0]))
    assert s.n == 4
    assert (s.mean, s.p05, s.p50, s.p95) == pytest.approx((2.5, 1 + 0.05 * 3, 2.5, 1 + 0.95 * 3))
    empty = bands.summarise(np.array([]))
    assert empty.n == 0 and math.isnan(empty.p50) and math.isnan(empty.mean)


def test_separation_youden_ties_take_the_highest_threshold() -> None:
    scores = np.array([0.9, 0.5, 0.7, 0.1])
    labels = np.array([True, True, False, False])
    s = bands.separation(scores, labels, "toy")
    # pairs (pos > neg): 0.9>0.7, 0.9>0.1, 0.5>0.1 -> 3 of 4
    assert s.auc == pytest.approx(3 / 4)
    assert s.auc == pytest.approx(roc_auc_score(labels, scores))
    # J = 1/2 at thresholds 0.9 and 0.5: the higher one wins
    assert (s.threshold, s.youden_j, s.tpr, s.fpr, s.precision) == pytest.approx(
        (0.9, 1 / 2, 1 / 2, 0.0, 1.0))
    assert s.reason is None


def test_separation_single_class_is_nan_with_reason_not_half() -> None:
    s = bands.separation([0.2, 0.4], [True, True], "top hits")
    assert math.isnan(s.auc) and math.isnan(s.threshold)
    assert s.reason is not None and "all 2 top hits are relevant" in s.reason
    none = bands.separation([], [], "top hits")
    assert math.isnan(none.auc) and "no observations" in (none.reason or "")


def test_separation_equal_scores_say_why_no_threshold() -> None:
    s = bands.separation([1.0, 1.0, 1.0], [True, False, True], "top hits")
    assert math.isnan(s.threshold)
    assert s.reason is not None and "every score is equal" in s.reason


def test_band_table_on_hand_built_fused() -> None:
    (t,) = bands.band_tables(_hand_fused(), _configs(CONFIG3), top_k=5)
    cells = {(c.arms_voted, c.relevant): c for c in t.cells}
    assert sorted(cells) == [(1, False), (2, False), (3, True)]
    assert cells[(1, False)].score.n == 2
    assert cells[(1, False)].score.p50 == pytest.approx((1 / 62 + 1 / 61) / 2)
    assert cells[(3, True)].ratio.p50 == pytest.approx((1 / 61 + 1 / 62 + 1 / 61) / (3 / 61))
    # the only relevant hit is q1's a: a zero-width band at its score
    overall = t.bands[0]
    assert overall.arms_voted is None and overall.n == 1
    assert (overall.score_lo, overall.score_hi) == pytest.approx((1 / 61 + 1 / 62 + 1 / 61,) * 2)
    assert [b.arms_voted for b in t.bands] == [None, 3]
    # c is carried by the boost arm alone (and is not relevant)
    assert t.boost is not None
    assert (t.boost.n_topk, t.boost.n_alone, t.boost.n_alone_relevant, t.boost.n_questions) == (
        5, 1, 0, 1)
    assert t.boost.share == pytest.approx(1 / 5) and t.boost.precision == 0.0
    # top hits: a (relevant) above e (not): perfectly separated, threshold = a's ratio
    assert t.top_hit.auc == 1.0
    assert t.top_hit.threshold == pytest.approx((1 / 61 + 1 / 62 + 1 / 61) / (3 / 61))
    assert (t.n_questions, t.n_no_hits) == (2, 0)


def test_top_k_limits_the_cells() -> None:
    (t,) = bands.band_tables(_hand_fused(), _configs(CONFIG3), top_k=1)
    assert sum(c.score.n for c in t.cells) == 2  # one top hit per question
    assert t.boost is not None and t.boost.n_alone == 0
    with pytest.raises(ValueError, match="top_k"):
        bands.band_tables(_hand_fused(), _configs(CONFIG3), top_k=0)


def test_questions_without_hits_are_counted() -> None:
    questions = pd.DataFrame({"question_id": ["q1", "q2", "q3"]})
    (t,) = bands.band_tables(_hand_fused(), _configs(CONFIG3), questions)
    assert (t.n_questions, t.n_no_hits) == (3, 1)


def test_validate_reports_every_problem_together() -> None:
    bad = _hand_fused()
    bad.loc[0, "score_ratio"] = 0.5
    bad.loc[1, "arms_voted"] = 3
    bad.loc[2, "fused_score"] = 1 / 61
    bad.loc[2, "score_ratio"] = (1 / 61) / (3 / 61)
    bad.loc[3, "config_id"] = "nope"
    with pytest.raises(ValidationError) as exc:
        bands.band_tables(bad, _configs(CONFIG3))
    text = str(exc.value)
    assert len(exc.value.problems) == 4
    for needle in ("score_ratio != fused_score / ceiling", "arms_voted !=",
                   "fused_score != sum of w/(k+rank)",
                   "config ids not in configs.parquet: ['nope']"):
        assert needle in text
    assert "question q1" in text


def test_validate_missing_columns_and_wrong_ceiling() -> None:
    with pytest.raises(ValidationError, match="missing columns"):
        bands.band_tables(_hand_fused().drop(columns=["score_ratio"]), _configs(CONFIG3))
    cfg = _configs(CONFIG3)
    cfg.loc[0, "ceiling"] = 2 / 61
    with pytest.raises(ValidationError, match="ceiling"):
        bands.band_tables(_hand_fused(), cfg)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_synthetic_run(tmp_path_factory.mktemp("runs") / "run-bands")


def test_synthetic_run_every_config_in_order(run_dir: Path) -> None:
    run = open_run(run_dir)
    tables = bands.run_band_tables(run)
    from rulegauge.core.config_order import sort_configs

    assert [t.config_id for t in tables] == sort_configs(run.table("configs")["config_id"])
    by_id = {t.config_id: t for t in tables}
    assert by_id["rrf-2"].anchors.ceiling == pytest.approx(2 / (60 + 1))
    assert by_id["rrf-3"].anchors.ceiling == pytest.approx(3 / (60 + 1))
    assert by_id["rrf-2"].boost is None and by_id["arm-boost"].boost is None
    assert by_id["rrf-3"].boost is not None
    assert math.isnan(by_id["arm-bm25"].anchors.two_arm_top)
    # single-arm configs: every top hit scores the ceiling, so no gate threshold exists
    assert "every score is equal" in (by_id["arm-dense"].top_hit.reason or "")
    assert bands.run_band_tables(run) == tables


def _cli() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


def test_cli_bands_prints_anchors_and_two_arm_ceiling(run_dir: Path) -> None:
    result = CliRunner().invoke(_cli(), ["bands", str(run_dir), "--top-k", "5"])
    assert result.exit_code == 0, result.output
    assert "ceiling 0.04918" in result.output  # 3/61
    assert "ceiling 0.03279" in result.output  # 2/61 on the two-arm config
    assert "one arm #1 0.01639" in result.output
    assert "healthy band" in result.output and "AUC" in result.output


def test_cli_bands_json_is_strict_json(run_dir: Path) -> None:
    result = CliRunner().invoke(_cli(), ["bands", str(run_dir), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert "NaN" not in result.output
    two = next(d for d in data if d["config_id"] == "rrf-2")
    assert two["anchors"]["ceiling"] == pytest.approx(2 / 61)
    assert next(d for d in data if d["config_id"] == "arm-bm25")["anchors"]["two_arm_top"] is None


def test_cli_bands_bad_run_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(_cli(), ["bands", str(tmp_path / "missing")])
    assert result.exit_code == 2
    assert "not a run directory" in result.output


def test_exact_ties_share_one_float_before_thresholds():
    # k=20: ranks (20, 8, 15) and (1, 4, -) both score exactly 5/56; their floats differ
    from rulegauge.analysis.anchors import config_anchors
    from rulegauge.analysis.bands import _exact_ties_share_floats

    config = pd.Series({"config_id": "c", "name": "c", "kind": "grid", "k": 20.0, "arms": ["a", "b", "c"],
                        "weights": [1.0, 1.0, 1.0], "depths": [100, 100, 100], "ceiling": 3 / 21})
    s1, s2 = 1 / 40 + 1 / 28 + 1 / 35, 1 / 21 + 1 / 24 + 0.0
    assert s1 != s2
    rows = pd.DataFrame({"fused_score": [s1, s2], "score_ratio": [s1 * 7, s2 * 7],
                         "rank_a": pd.array([20, 1], dtype="Int32"), "rank_b": pd.array([8, 4], dtype="Int32"),
                         "rank_c": pd.array([15, None], dtype="Int32")})
    out = _exact_ties_share_floats(rows, config_anchors(config), config)
    assert out["fused_score"].nunique() == 1 and out["score_ratio"].nunique() == 1
    assert rows["fused_score"].nunique() == 2  # input not modified
