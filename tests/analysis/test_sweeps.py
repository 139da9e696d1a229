"""Metric against k and against one arm's weight: which configs form a line."""

from __future__ import annotations

import json

import pandas as pd

from rulegauge.analysis.sweeps import sweep_figure, sweep_frame, sweep_params
from tests.helpers.analysis import grid_configs


def _configs() -> pd.DataFrame:
    return pd.DataFrame([
        {"config_id": cid, "name": cid, "kind": kind, "method": "rrf", "k": k, "arms": list(arms),
         "weights": list(weights), "depths": [10] * len(arms), "params": json.dumps({"k": k})}
        for cid, kind, arms, weights, k in grid_configs()])


def test_k_lines_group_configs_that_differ_only_in_k() -> None:
    configs = _configs()
    values = pd.Series({c: float(i) for i, c in enumerate(configs["config_id"])})
    f = sweep_frame(configs, values, "k")
    assert sorted(f["line"].unique()) == ["bm25+dense", "bm25+dense+boost"]
    three = f[f["line"] == "bm25+dense+boost"]
    # the weighted configs hold another weight: not on the k line; arms alone never
    assert list(three["x"]) == [10.0, 30.0, 60.0, 90.0]
    assert list(three["config_id"]) == [f"rrf_k{k}_bm25+dense+boost" for k in (10, 30, 60, 90)]
    assert list(three["value"]) == [values[c] for c in three["config_id"]]
    assert not f["config_id"].str.startswith("arm-").any()


def test_weight_line_holds_k_and_the_other_weights() -> None:
    configs = _configs()
    f = sweep_frame(configs, pd.Series(dtype=float), "weight:dense")
    assert list(f["x"]) == [0.5, 1.0, 2.0]
    assert list(f["config_id"]) == ["rrf_k60_bm25+dense+boost_w-dense0.5",
                                    "rrf_k60_bm25+dense+boost",
                                    "rrf_k60_bm25+dense+boost_w-dense2"]
    assert f["value"].isna().all()  # no value given: NaN, never 0
    assert sweep_params(configs) == ["k", "weight:dense"]


def test_no_line_without_two_values_and_the_figure_draws() -> None:
    configs = _configs()
    one_k = configs[configs["k"] == 60.0]
    assert "k" not in sweep_params(one_k)
    f = sweep_frame(configs, pd.Series({c: 0.5 for c in configs["config_id"]}), "k")
    fig = sweep_figure(f, "recall@5", ("rrf_k60_bm25+dense",), "rrf_k60_bm25+dense+boost")
    ax = fig.axes[0]
    assert len(ax.get_lines()) == 2 and ax.get_xlabel() == "RRF k"
    assert fig.get_size_inches()[0] <= 13.4
