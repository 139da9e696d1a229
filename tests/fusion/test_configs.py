import pytest

from harness.core.errors import ConfigError, ValidationError
from harness.fusion.configs import DEFAULT_CONFIG, expand, load_config


def test_grid_expands_to_stable_named_configs_plus_single_arms():
    raw = {"defaults": {"k": 60, "depth": 50},
           "grid": {"k": [60, 10], "arms": [["bm25", "dense"]], "weights": [{}, {"dense": 0.5}],
                    "depths": [{}, {"dense": 20}]}}
    rc = expand(raw)
    ids = [c.config_id for c in rc.configs]
    assert ids[:4] == ["rrf_k60_bm25+dense", "rrf_k60_bm25+dense_d-dense20",
                       "rrf_k60_bm25+dense_w-dense0.5", "rrf_k60_bm25+dense_w-dense0.5_d-dense20"]
    assert ids[-2:] == ["arm-bm25", "arm-dense"]
    assert len(ids) == 2 * 2 * 2 + 2
    assert expand(raw).configs == rc.configs  # same parameters -> same ids
    assert rc.depth_for("dense") == 50 and rc.depth_for("bm25") == 50


def test_all_problems_reported_together():
    raw = {"grid": {"k": [0], "arms": [["bm25", "bm25"], ["nope"]], "weights": [{"x": 1}]}}
    with pytest.raises(ValidationError) as ei:
        expand(raw, "grid.toml", known_arms=["bm25", "dense"], known_methods=["rrf"])
    text = str(ei.value)
    assert "k must be > 0" in text and "distinct" in text and "unknown arm 'nope'" in text
    assert "arm 'x' is in no arm set of the grid" in text
    assert len(ei.value.problems) >= 4


def test_default_config_loads(tmp_path):
    rc = load_config(DEFAULT_CONFIG)
    assert "rrf_k60_bm25+dense+boost" in [c.config_id for c in rc.configs]
    bad = tmp_path / "bad.toml"
    bad.write_text("[grid\n")
    with pytest.raises(ConfigError, match=r"bad\.toml: not valid TOML"):
        load_config(bad)
