"""Config ids sort by method, arm subset, then numbers by value; single-arm configs last."""

from __future__ import annotations

import random

from rulegauge.core.config_order import config_sort_key, natural_key, sort_configs
from rulegauge.fusion.records import config_id


def test_k_values_sort_by_value_not_text() -> None:
    ids = [config_id("rrf", k, ("bm25", "dense"), (1.0, 1.0), (100, 100), 100)
           for k in (100, 10, 68, 6, 70, 60, 1)]
    assert sort_configs(ids) == [f"rrf_k{k}_bm25+dense" for k in (1, 6, 10, 60, 68, 70, 100)]
    assert sorted(ids) != sort_configs(ids)  # as text, k100 comes before k6


def test_method_then_arm_subset_then_parameters_then_single_arms() -> None:
    expected = ["combmnz_minmax_bm25+dense", "combmnz_zscore_bm25+dense",
                "hybrid_minmax_arith_w-dense0.25_bm25+dense", "hybrid_minmax_arith_w-dense0.5_bm25+dense",
                "rrf_k6_bm25+dense", "rrf_k60_bm25+dense", "rrf_k60_bm25+dense_d-dense20",
                "rrf_k60_bm25+dense_w-dense0.5", "rrf_k6_bm25+dense+boost", "rrf_k100_bm25+dense+boost",
                "arm-bm25", "arm-boost", "arm-dense"]
    shuffled = expected[:]
    random.Random(7).shuffle(shuffled)
    assert sort_configs(shuffled) == expected


def test_natural_key_pairs_text_with_numeric_values() -> None:
    assert natural_key("k6") < natural_key("k10") < natural_key("k60") < natural_key("k100")
    assert natural_key("w-dense0.25") < natural_key("w-dense0.5") < natural_key("w-dense2")
    # the key is total: ids that compare equal by value keep apart by the full id
    assert config_sort_key("rrf_k6_bm25") != config_sort_key("rrf_k06_bm25")
