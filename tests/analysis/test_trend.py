"""``rulegauge trend``: series per run, mean +- k sigma alerts (formula), a planted drift
fires (exit 1), a flat history does not, ruling pages have their own series, bad input
exits 2."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from rulegauge.analysis.trend import SIGMA_FLOOR, collect_runs, trend
from rulegauge.analysis.trend_series import BANDS
from tests.helpers.common import LEXICAL, REPO, rulegauge

SAMPLE = REPO / "goldsets" / "sample.yaml"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four identical runs of the sample, then a fifth with bm25 made worse (the drift)."""
    out = tmp_path_factory.mktemp("trend")
    for i in range(1, 5):
        code, text = rulegauge("run", "-g", SAMPLE, "-c", LEXICAL, "-o", out, "--run-id", f"r{i}", "-q")
        assert code == 0, text
    return out


def _with_drift(runs: Path) -> Path:
    if not (runs / "r5").exists():
        code, text = rulegauge("run", "-g", SAMPLE, "-c", LEXICAL, "-o", runs, "--run-id", "r5", "-q",
                              "-p", "bm25.k1=0.05", "-p", "bm25.b=0.0")
        assert code == 0, text
    return runs


def test_alert_is_mean_plus_minus_k_sigma_of_the_history() -> None:
    from rulegauge.analysis.trend import _alerts  # the rule itself, on a hand-made series

    vals = [0.50, 0.52, 0.48, 0.50]  # history: mean 0.5, sigma (ddof 1) = sqrt(0.0008/3)
    sigma = math.sqrt(((0.0 ** 2) + 0.02 ** 2 + 0.02 ** 2 + 0.0 ** 2) / 3)
    for newest, fires in ((0.5 + 2.9 * sigma, False), (0.5 + 3.1 * sigma, True), (0.5 - 3.1 * sigma, True)):
        df = pd.DataFrame({"run_id": ["a", "b", "c", "d", "e"], "series": "metric", "config_id": "c",
                           "name": "m", "value": [*vals, newest]})
        alerts, checked, short = _alerts(df, "e", k=3.0, min_history=3)
        assert (checked, short) == (1, 0) and bool(alerts) is fires
        if alerts:
            assert alerts[0].mean == pytest.approx(0.5) and alerts[0].sigma == pytest.approx(sigma)


def test_flat_history_ignores_last_bit_noise_and_short_series_never_alert() -> None:
    from rulegauge.analysis.trend import _alerts

    df = pd.DataFrame({"run_id": list("abcd"), "series": "metric", "config_id": "c", "name": "m",
                       "value": [0.1 + 0.2, 0.3, 0.3, 0.3 + SIGMA_FLOOR / 10]})
    assert _alerts(df, "d", k=3.0, min_history=3)[0] == []
    assert _alerts(df, "d", k=3.0, min_history=4)[1:] == (0, 1)


def test_identical_runs_have_no_alert_and_every_series_kind(runs: Path) -> None:
    paths = [p for p in collect_runs(runs) if p.name != "r5"]
    t = trend(paths)
    assert t.alerts == () and t.checked > 0 and t.runs == ("r1", "r2", "r3", "r4")
    kinds = set(t.values["series"])
    assert {"metric", "band", "top1_arm", "voted_arm"} <= kinds
    band = t.values[(t.values.series == "band") & (t.values.run_id == "r1")]
    per_config = band.groupby("config_id")["value"].sum()
    assert (per_config <= 1 + 1e-12).all() and set(band["name"]) == {n for n, _, _ in BANDS}


def test_a_planted_drift_fires_and_exits_1(runs: Path) -> None:
    _with_drift(runs)
    code, text = rulegauge("trend", "--runs-dir", runs, "-m", "recall@5", "-c", "arm-bm25", "--json")
    assert code == 1
    out = json.loads(text[: text.rindex("}") + 1])
    assert [(a["series"], a["config_id"], a["name"]) for a in out["alerts"]] == [("metric", "arm-bm25", "recall@5")]
    assert out["alerts"][0]["direction"] == "down" and out["runs"][-1] == "r5"
    # a flat history alerts on any real change, whatever k; --tolerance is the change accepted
    code, text = rulegauge("trend", "--runs-dir", runs, "-m", "recall@5", "-c", "arm-bm25", "-k", "1000")
    assert code == 1
    code, text = rulegauge("trend", "--runs-dir", runs, "-m", "recall@5", "-c", "arm-bm25", "--tolerance", "0.1")
    assert code == 0 and "no alerts" in text


def test_rulings_runs_have_band_and_arm_series(tmp_path: Path) -> None:
    pages = REPO / "goldsets" / "sample-rulings"
    for i in range(2):
        code, text = rulegauge("rulings", "import", pages, "--out", tmp_path, "--run-id", f"p{i}")
        assert code == 0, text
    t = trend(collect_runs(tmp_path, kind="rulings"), kind="rulings", min_history=1)
    assert set(t.values["series"]) == {"band", "top1_arm"} and t.alerts == ()
    assert set(t.values["config_id"]) == {"production"}


def test_bad_input_exits_2(runs: Path, tmp_path: Path) -> None:
    code, text = rulegauge("trend", "--runs-dir", tmp_path)
    assert code == 2 and "no complete retrieval runs" in text
    code, text = rulegauge("trend", "--runs-dir", runs, "-c", "no-such-config")
    assert code == 2 and "no-such-config" in text
    code, text = rulegauge("trend", "--runs-dir", runs, "-m", "nope@3")
    assert code == 2 and "nope@3" in text
    code, text = rulegauge("trend", "--runs-dir", runs, "-k", "-1")
    assert code == 2 and "positive" in text


def test_trend_chart_labels_tell_every_run_apart() -> None:
    """The trend chart's x labels (rulegauge.analysis.trend_chart.run_labels): whole ids wrapped at
    separators, else the part that differs; they used to be the last 15 characters, the same
    ``-branch-feature`` for every nightly run of one branch."""
    from rulegauge.analysis.trend_chart import LABEL_CHARS, LABEL_LINES, run_labels

    nightly = [f"nightly-2026-12-0{i}-candidate-branch-feature" for i in range(1, 5)]
    got = run_labels(nightly)
    assert got[0] == "nightly-2026-12-\n01-candidate-\nbranch-feature" and len(set(got)) == 4
    assert [x.replace("\n", "") for x in got] == nightly  # whole, only wrapped
    longer = [f"nightly-2026-12-0{i}-candidate-branch-feature-with-a-long-name" for i in range(1, 4)]
    assert run_labels(longer) == ["…01-candidate…", "…02-candidate…", "…03-candidate…"]
    assert run_labels(["run-20261207-211112-45ad", "base"]) == ["run-20261207-\n211112-45ad", "base"]
    odd = run_labels(["y" * 30 + "1" + "z" * 60, "y" * 30 + "2" + "z" * 60])  # no separator, same ends
    assert len(set(odd)) == 2
    for label in (*got, *odd):
        rows = label.split("\n")
        assert len([r for r in rows if not r.startswith("(#")]) <= LABEL_LINES
        assert all(len(r) <= LABEL_CHARS for r in rows)
