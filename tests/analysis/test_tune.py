"""Cross-validated config selection: `rulegauge.analysis.tune` and `rulegauge tune`."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from rulegauge.analysis.tune import OTHER, strata, tune_frame
from rulegauge.cli.analysis import register
from rulegauge.core.errors import RulegaugeError
from tests.helpers.analysis import write_synthetic_run
from tests.helpers.common import REPO


def _frames(values: dict[str, list[float]], languages: list[str],
            unanswerable: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """metrics/questions frames: ``values[config][i]`` is question i's recall@5."""
    n = len(languages)
    qids = [f"q{i:02d}" for i in range(n + unanswerable)]
    questions = pd.DataFrame({"question_id": qids,
                              "language": languages + ["en"] * unanswerable,
                              "answerable": [True] * n + [False] * unanswerable})
    rows = [{"question_id": q, "config_id": c, "metric": "recall@5",
             "value": v[i] if i < n else 0.0, "answerable": i < n}
            for c, v in values.items() for i, q in enumerate(qids)]
    return pd.DataFrame(rows), questions


def _synthetic(seed: int = 0, n: int = 40) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    langs = ["en"] * (n // 2) + ["ru"] * (n // 4) + ["de"] * (n - n // 2 - n // 4)
    skill = {"c-a": 0.55, "c-b": 0.5, "c-c": 0.45, "c-d": 0.5, "c-e": 0.4}
    values = {c: list((rng.random(n) < p).astype(float)) for c, p in skill.items()}
    return _frames(values, langs, unanswerable=3)


def test_a_dominant_config_wins_every_fold_with_no_gap():
    n = 20
    metrics, questions = _frames({"good": [1.0] * n, "bad": [0.0] * n}, ["en"] * 10 + ["de"] * 10)
    r = tune_frame(metrics, questions, "recall@5", n_folds=4, seed=0)
    assert r.wins == {"good": 4}
    assert (r.in_sample, r.held_out, r.gap) == (1.0, 1.0, 0.0)
    assert all(f.chosen == "good" and f.test_value == 1.0 for f in r.folds)


def test_held_out_is_the_pooled_value_of_the_config_chosen_on_the_other_folds():
    metrics, questions = _synthetic()
    r = tune_frame(metrics, questions, "recall@5", n_folds=5, seed=11)
    ans = metrics[metrics["answerable"]]
    wide = ans.pivot(index="question_id", columns="config_id", values="value")
    assert r.n_questions == len(wide) == 40  # unanswerable questions are out of scope
    assert sorted(q for f in r.folds for q in f.test_questions) == sorted(wide.index)
    pooled = []
    for f in r.folds:
        train = wide.drop(index=list(f.test_questions))
        means = train.mean()
        # best on the training questions, ties by config id
        best = sorted(means.index, key=lambda c: (-means[c], c))[0]
        assert f.chosen == best
        assert f.train_value == pytest.approx(means[best])
        assert f.test_value == pytest.approx(wide.loc[list(f.test_questions), best].mean())
        pooled += list(wide.loc[list(f.test_questions), best])
    assert r.held_out == pytest.approx(sum(pooled) / len(pooled))
    full = wide.mean()
    assert r.best_in_sample == sorted(full.index, key=lambda c: (-full[c], c))[0]
    assert r.in_sample == pytest.approx(full.max())
    assert r.gap == pytest.approx(r.in_sample - r.held_out)
    assert sum(r.wins.values()) == 5


def test_folds_are_stratified_by_language_and_seeded():
    metrics, questions = _synthetic()
    a = tune_frame(metrics, questions, n_folds=5, seed=3)
    b = tune_frame(metrics, questions, n_folds=5, seed=3)
    c = tune_frame(metrics, questions, n_folds=5, seed=4)
    assert a == b
    assert [f.test_questions for f in a.folds] != [f.test_questions for f in c.folds]
    lang = questions.set_index("question_id")["language"]
    for code, total in lang.iloc[:40].value_counts().items():
        per_fold = [sum(lang[q] == code for q in f.test_questions) for f in a.folds]
        assert max(per_fold) - min(per_fold) <= 1 and sum(per_fold) == total


def test_lower_is_better_metric_flips_the_choice_and_the_gap_sign():
    n = 12
    metrics, questions = _frames({"a": [1.0] * n, "b": [3.0] * n}, ["en"] * n)
    metrics["metric"] = "first_rel_rank"
    r = tune_frame(metrics, questions, "first_rel_rank", n_folds=3, seed=0)
    assert not r.higher_is_better and r.aggregate == "median"
    assert r.wins == {"a": 3} and r.in_sample == 1.0 and r.gap == 0.0


def test_rare_languages_pool_into_one_stratum():
    langs = pd.Series(["en"] * 10 + ["fa"] * 2 + ["es"] * 2)
    assert list(strata(langs, 3)) == ["en"] * 10 + [OTHER] * 4
    # still too small: folded into the largest language
    assert set(strata(pd.Series(["en"] * 10 + ["fa"]), 3)) == {"en"}


def test_exact_ties_go_to_the_smaller_config_id():
    # 0.1 + 0.2 + 0.3 and 0.3 + 0.2 + 0.1 differ as naive float sums; fsum ties them
    metrics, questions = _frames({"z": [0.1, 0.2, 0.3, 0.6], "y": [0.3, 0.2, 0.1, 0.6]},
                                 ["en"] * 4)
    r = tune_frame(metrics, questions, n_folds=2, seed=0)
    assert r.best_in_sample == "y"


def test_bad_input_names_the_problem():
    metrics, questions = _frames({"a": [1.0] * 3}, ["en"] * 3)
    with pytest.raises(RulegaugeError, match="too few for 5 folds"):
        tune_frame(metrics, questions, n_folds=5)
    with pytest.raises(RulegaugeError, match="no known direction"):
        tune_frame(metrics, questions, "bogus")
    with pytest.raises(RulegaugeError, match="at least 2 folds"):
        tune_frame(metrics, questions, n_folds=1)


def _cli() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


def test_cli_tune_tables_and_json(tmp_path: Path):
    run = write_synthetic_run(tmp_path / "run-tune", seed=2, n_questions=20)
    res = CliRunner().invoke(_cli(), ["tune", str(run), "--folds", "4", "--seed", "1"])
    assert res.exit_code == 0, res.output
    assert "held-out" in res.output and "folds won" in res.output and "gap" in res.output
    res = CliRunner().invoke(_cli(), ["tune", str(run), "--folds", "4", "--json",
                                      "--metric", "nDCG@10"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["metric"] == "nDCG@10" and len(data["folds"]) == 4
    assert math.isclose(data["gap"], data["in_sample"] - data["held_out"])
    bad = CliRunner().invoke(_cli(), ["tune", str(run), "--folds", "99"])
    assert bad.exit_code == 2 and "too few" in bad.output


def test_tune_in_a_fresh_process(tmp_path: Path):
    run = write_synthetic_run(tmp_path / "run-proc", seed=3, n_questions=16)
    rulegauge = Path(sys.executable).parent / "rulegauge"
    outs = [subprocess.run([str(rulegauge), "tune", str(run), "--json", "--folds", "3"],
                           capture_output=True, text=True, cwd=REPO, timeout=120,
                           env={**os.environ, "PYTHONHASHSEED": seed})
            for seed in ("1", "2")]
    for o in outs:
        assert o.returncode == 0, o.stderr
    assert json.loads(outs[0].stdout) == json.loads(outs[1].stdout)


def test_cli_tune_chooses_among_the_configs_given(tmp_path: Path):
    run = write_synthetic_run(tmp_path / "run-only", seed=2, n_questions=20)
    pick = ["arm-bm25", "arm-dense"]
    res = CliRunner().invoke(_cli(), ["tune", str(run), "--folds", "4", "--json", "-c", pick[0], "-c", pick[1]])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["n_configs"] == 2 and {f["chosen"] for f in out["folds"]} <= set(pick)
    bad = CliRunner().invoke(_cli(), ["tune", str(run), "-c", "no-such"])
    assert bad.exit_code == 2 and "no-such" in bad.output


def test_tune_gives_the_best_configs_stability_and_its_statistical_ties():
    """tune's stability: the in-sample best's share of bootstrap resamples at the top and the
    configs its permutation tests (one family, Holm) cannot separate from it; an identical
    twin always ties, a config that loses on every question does not."""
    from rulegauge.regression.stability import stability

    n = 24
    good = [1.0] * 18 + [0.0] * 6
    metrics, questions = _frames({"good": good, "twin": list(good), "bad": [0.0] * n},
                                 ["en"] * 12 + ["de"] * 12)
    r = tune_frame(metrics, questions, "recall@5", n_folds=3, seed=2)
    assert r.stability is not None and r.stability.chosen == r.best_in_sample == "good"
    values = {"good": np.array(good), "twin": np.array(good), "bad": np.zeros(n)}
    assert r.stability.tied == ("twin",) == stability(values, "good", higher_is_better=True,
                                                      n_resamples=1000, seed=2).tied
    assert r.stability.stays_best == 1.0 and r.stability.sole_best == 0.0  # the twin is always there
    assert "stays best in 100% of 1000" in r.stability.describe()
    assert "tied with 1 other(s): twin" in r.stability.describe()
