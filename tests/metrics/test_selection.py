"""Which configs the report charts: top N + service + arms alone, explicit ids, ties."""

from __future__ import annotations

import pandas as pd
import pytest

from rulegauge.core.errors import ConfigError
from rulegauge.metrics.selection import chosen_configs, primary_metric, rank_configs, ties_with

CONFIGS = pd.DataFrame({"config_id": ["a", "b", "c", "svc", "arm-x", "arm-y"],
                        "kind": ["grid", "grid", "grid", "grid", "arm", "arm"]})
RANKED = ["b", "a", "arm-x", "c", "svc", "arm-y"]  # best first


def test_top_n_adds_the_service_config_and_every_arm_alone_in_rank_order() -> None:
    assert chosen_configs(RANKED, CONFIGS, top=2, service="svc") == ("b", "a", "arm-x", "svc",
                                                                     "arm-y")
    assert chosen_configs(RANKED, CONFIGS, top=1) == ("b", "arm-x", "arm-y")
    assert chosen_configs(RANKED, CONFIGS, top=100, service="svc") == tuple(RANKED)


def test_explicit_ids_are_exactly_those_in_rank_order() -> None:
    assert chosen_configs(RANKED, CONFIGS, explicit=["svc", "a"], service="svc") == ("a", "svc")


def test_unknown_ids_are_all_named_with_a_suggestion() -> None:
    with pytest.raises(ConfigError) as exc:
        chosen_configs(RANKED, CONFIGS, explicit=["a", "sv", "zzz"])
    text = str(exc.value)
    assert "'sv'" in text and "did you mean svc" in text and "'zzz'" in text
    with pytest.raises(ConfigError, match="--top"):
        chosen_configs(RANKED, CONFIGS, top=0)


def test_ties_are_equal_aggregates_within_a_few_ulps() -> None:
    # 0.1 + 0.2 is not 0.3 in floats: summation order must not break a tie
    values = pd.Series({"a": 0.1 + 0.2, "b": 0.3, "c": 0.3 + 1e-9, "d": float("nan")})
    assert ties_with(values, "b") == ("a", "b")
    assert ties_with(values, "c") == ("c",)
    assert ties_with(values, "d") == ("d",)


def test_tied_ids_are_listed_in_numeric_config_order() -> None:
    values = pd.Series({"rrf_k100_x": 1.0, "rrf_k10_x": 1.0, "rrf_k6_x": 1.0, "arm-x": 1.0})
    assert ties_with(values, "rrf_k10_x") == ("rrf_k6_x", "rrf_k10_x", "rrf_k100_x", "arm-x")


def test_rank_configs_best_first_ties_in_numeric_config_order() -> None:
    # 0.1 + 0.2 and 0.3 differ in the last bit: a tie, ordered k6 < k8 < k10 < k100, never as text
    values = {"rrf_k100_x": 0.3, "rrf_k10_x": 0.1 + 0.2, "rrf_k8_x": 0.3, "rrf_k6_x": 0.1 + 0.2,
              "rrf_k2_x": 0.5, "arm-x": 0.3, "rrf_k4_x": float("nan"), "rrf_k12_x": 0.2}
    assert rank_configs(values) == ["rrf_k2_x", "rrf_k6_x", "rrf_k8_x", "rrf_k10_x", "rrf_k100_x", "arm-x",
                                    "rrf_k12_x", "rrf_k4_x"]
    lower = rank_configs({"b": 2.0, "a10": 1.0, "a9": 1.0, "c": float("inf")}, higher_is_better=False)
    assert lower == ["a9", "a10", "b", "c"]


def test_primary_metric_is_recall_at_5_by_default_else_the_first_chosen() -> None:
    from rulegauge.metrics.ranking import DEFAULT_METRICS

    assert primary_metric({"metrics": list(DEFAULT_METRICS)}) == "recall@5"
    assert primary_metric({}) == "recall@5"  # a manifest older than its metrics list
    assert primary_metric({"metrics": ["top_score", "nDCG@20", "recall@5"]}) == "nDCG@20"
    assert primary_metric({"metrics": ["top_score"]}) == "recall@5"
