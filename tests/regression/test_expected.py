"""A baseline's expected numbers (rulegauge.regression.expected): `baseline save` writes
expected.yaml beside the tables, a re-save shows the means that moved in its diff, and the
gate refuses a baseline whose tables disagree with it."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner

from rulegauge.cli.compare import register
from rulegauge.core.errors import RulegaugeError
from rulegauge.regression.expected import EXPECTED, check_expected, expected_yaml
from rulegauge.regression.gate import EXIT_BAD_INPUT, EXIT_PASS
from rulegauge.regression.slice_select import parse_slice
from rulegauge.store.rundir import Run
from tests.helpers.comparison import N_ANSWERABLE, base_lists, move
from tests.helpers.slices import tagged_run

POLICY = """[gate]
config = "c3"
[metrics."hit@5"]
max_drop = 0.0
[slices.errata]
tag = "errata"
[slices.errata.metrics."MRR@10"]
max_drop = 0.0
"""
TAGS = {"q01": ["errata"], "q02": ["errata"]}


def _cli() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("expected")
    runs = root / "runs"
    tagged_run(runs / "a", base_lists(), tags=TAGS)
    tagged_run(runs / "b", move(base_lists(), "q01", "rb#1", 9), tags=TAGS)
    (root / "p.toml").write_text(POLICY, encoding="utf-8")
    out = {"root": root, "policy": root / "p.toml", "runs": runs}
    for name in ("a", "b"):
        r = CliRunner().invoke(_cli(), ["baseline", "save", name, f"base-{name}", "--dir",
                                        str(root / "baselines"), "--runs-dir", str(runs),
                                        "--policy", str(root / "p.toml")])
        assert r.exit_code == 0, r.output
        out[name] = root / "baselines" / f"base-{name}"
    return out


def test_baseline_save_writes_the_expected_numbers(saved) -> None:
    text = (saved["a"] / EXPECTED).read_text(encoding="utf-8")
    assert text.startswith("# Expected numbers of this baseline")
    doc = yaml.safe_load(text)
    assert doc["goldset"] == {"name": "synthetic", "sha256": "gold-1"}
    (config,) = doc["configs"]  # the policy's gated config only
    every = doc["configs"]["c3"]["every question"]
    assert config == "c3" and every["questions"] == 22
    assert every["MRR@10"] == (6 * 1 + 7 / 2 + 7 / 3) / N_ANSWERABLE  # full precision
    errata = doc["configs"]["c3"]["slices"]["errata"]
    assert errata["selects"] == {"tag": "errata"} and errata["questions"] == 2
    assert errata["MRR@10"] == (1 / 2 + 1 / 3) / 2  # q01 at rank 2, q02 at rank 3


def test_a_resave_shows_the_means_that_moved_in_its_diff(saved) -> None:
    a = (saved["a"] / EXPECTED).read_text(encoding="utf-8").splitlines()
    b = (saved["b"] / EXPECTED).read_text(encoding="utf-8").splitlines()
    changed = [line for line in difflib.unified_diff(a, b, lineterm="", n=0)
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    keys = sorted({line[1:].split(":")[0].strip() for line in changed})
    # q01 fell from rank 2 to 9: hit@5, recall@5, MRR@10 and first_rel_rank move, in both
    # the whole set and the errata slice; nothing else does
    assert keys == ["MRR@10", "first_rel_rank", "hit@5", "recall@5"]
    assert len(changed) == 2 * (4 + 4 - 1)  # the slice's first_rel_rank is a median: 2.5 -> 6


def test_the_gate_checks_the_tables_against_the_file(saved, tmp_path: Path) -> None:
    gate = ["gate", "--baseline", str(saved["a"]), "--run", str(saved["runs"] / "a"),
            "--policy", str(saved["policy"])]
    assert CliRunner().invoke(_cli(), gate).exit_code == EXIT_PASS
    path = saved["a"] / EXPECTED
    text = path.read_text(encoding="utf-8")
    doc = yaml.safe_load(text)
    doc["configs"]["c3"]["slices"]["errata"]["MRR@10"] = 0.5
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    try:
        r = CliRunner().invoke(_cli(), gate)
        assert r.exit_code == EXIT_BAD_INPUT
        assert "c3 (slice errata): MRR@10 is 0.5 in expected.yaml, 0.41666666666666663 in the tables" \
            in r.output.replace("\n", "")
    finally:
        path.write_text(text, encoding="utf-8")
    check_expected(Run(saved["a"]))  # restored: agrees again


def test_other_gold_set_or_missing_config_in_the_file_are_named(saved, tmp_path: Path) -> None:
    side = Run(saved["a"])
    doc = yaml.safe_load((saved["a"] / EXPECTED).read_text(encoding="utf-8"))
    doc["goldset"]["sha256"] = "other"
    doc["configs"]["gone"] = {"every question": {"hit@5": 1.0}}
    copy = tmp_path / "copy"
    import shutil

    shutil.copytree(saved["a"], copy)
    (copy / EXPECTED).write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(RulegaugeError) as exc:
        check_expected(Run(copy))
    assert "gold set sha256 is 'other'" in str(exc.value)
    assert "config gone is in expected.yaml but not in the metrics table" in str(exc.value)
    assert side.path.name == "base-a"


def test_expected_yaml_without_a_policy_covers_every_config(saved) -> None:
    run = Run(saved["runs"] / "a")
    doc = yaml.safe_load(expected_yaml(run, ["c3"], [parse_slice("questions=q01,q03")]))
    sl = doc["configs"]["c3"]["slices"]["questions=q01,q03"]
    assert sl["selects"] == {"questions": ["q01", "q03"]} and sl["hit@5"] == 1.0


def test_the_committed_sample_file_is_reproduced_under_any_hash_seed() -> None:
    """Two interpreters with different PYTHONHASHSEED write the committed expected.yaml."""
    import os
    import subprocess
    import sys

    from tests.helpers.common import REPO

    code = ("import sys; from rulegauge.regression.expected import expected_scope, expected_yaml; "
            "from rulegauge.store.rundir import Run; r = Run(sys.argv[1]); "
            "k, s = expected_scope(r, [], sys.argv[2]); sys.stdout.write(expected_yaml(r, k, s))")
    sample = REPO / "runs" / "baselines" / "sample"
    outs = {subprocess.run([sys.executable, "-c", code, str(sample),
                            str(REPO / "docs" / "ci" / "gate-policy-slices.toml")],
                           capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}
    assert outs == {(sample / EXPECTED).read_text(encoding="utf-8")}
