import pytest

from rulegauge.core.errors import ConfigError, ValidationError
from rulegauge.fusion.configs import DEFAULT_CONFIG, expand, load_config


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


def _known():  # type: ignore[no-untyped-def]
    from rulegauge.arms import ARMS, load_builtin_arms
    from rulegauge.fusion.fuse import FUSION_METHODS

    load_builtin_arms()
    return {"known_arms": ARMS.names(), "known_methods": FUSION_METHODS.names(),
            "arm_classes": dict(ARMS.items())}


def _toml_blocks(text: str) -> list[str]:
    """Fenced ```toml blocks and indented blocks after 'File format (TOML)::'."""
    import re

    blocks = re.findall(r"```toml\n(.*?)```", text, flags=re.S)
    for m in re.finditer(r"\(TOML\)(?:::)?\n\n((?:    .*\n|\n)+)", text):
        blocks.append("\n".join(line[4:] for line in m.group(1).splitlines()))
    return blocks


def test_docstring_example_grid_validates():
    import tomllib

    from rulegauge.fusion import configs

    (block,) = _toml_blocks(configs.__doc__ or "")
    rc = expand(tomllib.loads(block), "configs.py docstring", **_known())
    ids = [c.config_id for c in rc.configs]
    assert "rrf_k60_bm25+dense+boost" in ids and "rrf_k20_bm25+dense_d-dense20" in ids
    assert rc.get("rrf_k60_bm25+dense+boost").name == "prod"  # the explicit config keeps its name
    assert len(ids) == len(set(ids))
    assert any("kept once" in n for n in rc.notes)


def test_every_grid_example_in_docs_validates():
    import tomllib

    from tests.helpers.common import REPO

    files = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")),
             REPO / "goldsets" / "README.md"]
    grids = [(f, b) for f in files for b in _toml_blocks(f.read_text(encoding="utf-8"))
             if "[grid]" in b or "[[configs]]" in b]
    grids += [(f, f.read_text(encoding="utf-8"))
              for f in sorted((REPO / "rulegauge" / "data").glob("*.toml"))]
    assert grids, "no example grids found"
    for f, block in grids:
        expand(tomllib.loads(block), str(f), **_known())


def test_every_policy_example_in_docs_loads(tmp_path):
    from rulegauge.regression.policy import load_policy
    from tests.helpers.common import REPO

    policies = sorted(p for p in (REPO / "docs").rglob("*.toml")
                      if "[gate]" in p.read_text(encoding="utf-8"))
    blocks = [(doc, b) for doc in sorted((REPO / "docs").rglob("*.md"))
              for b in _toml_blocks(doc.read_text(encoding="utf-8"))
              if "[gate]" in b or "[metrics" in b]
    for i, (doc, block) in enumerate(blocks):
        policies.append(tmp_path / f"{doc.stem}-{i}.toml")
        policies[-1].write_text(block, encoding="utf-8")
    assert len(policies) >= 2
    for p in policies:
        load_policy(p)


def test_cartesian_duplicates_are_merged_with_a_note():
    raw = {"grid": {"k": [60], "arms": [["bm25", "dense", "boost"], ["bm25", "dense"]],
                    "weights": [{}, {"boost": 0.5}]}}
    rc = expand(raw, "g.toml")
    ids = [c.config_id for c in rc.configs if c.kind == "grid"]
    assert ids == ["rrf_k60_bm25+dense+boost", "rrf_k60_bm25+dense+boost_w-boost0.5",
                   "rrf_k60_bm25+dense"]
    assert rc.notes == ("g.toml: 2 grid combinations give the same config rrf_k60_bm25+dense "
                        "(weights or depths for arms it does not fuse do not apply); kept once",)


def test_explicit_duplicates_are_still_errors():
    raw = {"configs": [{"arms": ["bm25"]}, {"arms": ["bm25"], "k": 60}]}
    with pytest.raises(ValidationError, match="duplicate config 'rrf_k60_bm25'"):
        expand(raw)


@pytest.mark.parametrize(("raw", "message"), [
    ({"grid": {"k": [float("nan")], "arms": [["bm25"]]}}, "k must be > 0 and finite, got nan"),
    ({"grid": {"k": [float("inf")], "arms": [["bm25"]]}}, "k must be > 0 and finite, got inf"),
    ({"grid": {"k": ["sixty"], "arms": [["bm25"]]}}, "k must be a number > 0, got 'sixty'"),
    ({"grid": {"k": [True], "arms": [["bm25"]]}}, "k must be a number > 0, got True"),
    ({"grid": {"arms": [["bm25"]], "weights": [{"bm25": float("nan")}]}}, "finite, got nan"),
    ({"grid": {"arms": [["bm25"]], "weights": [{"bm25": "sixty"}]}}, "weight must be a number"),
    ({"defaults": {"depth": 2.5}, "grid": {"arms": [["bm25"]]}}, "depth must be an integer"),
    ({"grid": {"arms": [["bm25"]], "depths": [{"bm25": 2.5}]}}, "depth must be an integer"),
    ({"configs": [{"arms": ["bm25"], "weight": {"bm25": 2}}]}, "unknown key 'weight'; allowed:"),
    ({"grdi": {}, "grid": {"arms": [["bm25"]]}}, "unknown key 'grdi'; allowed: defaults, arms"),
    ({"defaults": {"kk": 1}, "grid": {"arms": [["bm25"]]}}, "unknown key 'kk'; allowed: k, depth"),
    ({"grid": {"arms": [["bm25"]], "wieghts": [{}]}}, "unknown key 'wieghts'"),
    ({"grid": {"arms": "bm25"}}, "must be a non-empty list"),
    ({"arms": {"bm25": {"bogus": 1}}, "grid": {"arms": [["bm25"]]}},
     "arm bm25: unknown parameter 'bogus'; it accepts: k1, b, epsilon, idf_floor, stem"),
    ({"arms": {"bm25": {"k1": float("nan")}}, "grid": {"arms": [["bm25"]]}},
     "k1 must be a finite number, got nan"),
    ({"arms": {"dense": {"batch_size": 2.5}}, "grid": {"arms": [["dense"]]}},
     "batch_size must be an integer, got 2.5"),
])
def test_bad_values_and_unknown_keys_are_errors(raw, message):
    with pytest.raises(ValidationError) as ei:
        expand(raw, "c.toml", **_known())
    assert message in str(ei.value)
