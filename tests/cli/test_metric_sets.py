"""Runs of different metric sets live together in one runs folder (README order): after
``run -m recall@3 -m nDCG@20 -m RR@10``, ``report``, ``trend``, ``gate --run latest`` and
``compare`` of a default run all work; ``latest`` skips a newer run that lacks what the
command needs and says which and why; a damaged run is skipped by ``trend`` and by the
report's trend section, named in a warning."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rulegauge.store.rundir import open_run
from tests.helpers.common import LEXICAL, REPO, rulegauge

SAMPLE = REPO / "goldsets" / "sample.yaml"
CUSTOM = ("-m", "recall@3", "-m", "nDCG@20", "-m", "RR@10")
POLICY = """[gate]
config = "rrf_k60_bm25+boost"
[metrics."recall@5"]
max_drop = 0.02
[metrics."MRR@10"]
max_drop = 0.02
[metrics."nDCG@10"]
max_drop_relative = 0.05
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``a`` a default run, then ``b`` with the README's custom metrics (the newest)."""
    out = tmp_path_factory.mktemp("metric-sets")
    (out / "policy.toml").write_text(POLICY, encoding="utf-8")
    for rid, extra in (("a", ()), ("b", CUSTOM)):
        code, text = rulegauge("run", "-g", SAMPLE, "-c", LEXICAL, "-o", out, "--run-id", rid, "-q", *extra)
        assert code == 0, text
    return out


def _with_default_run(runs: Path) -> Path:
    if not (runs / "c").exists():
        code, text = rulegauge("run", "-g", SAMPLE, "-c", LEXICAL, "-o", runs, "--run-id", "c", "-q")
        assert code == 0, text
    return runs


def test_latest_needing_metrics_skips_the_custom_run_and_says_why(
        runs: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert open_run("latest", runs).run_id == "b"  # nothing needed: the newest
    with caplog.at_level(logging.WARNING, logger="rulegauge.store.rundir"):
        assert open_run("latest", runs, metrics=("recall@5", "MRR@10")).run_id == "a"
    assert "latest is run a; newer run(s) skipped: b (metric(s) recall@5 not scored)" in caplog.text
    from rulegauge.core.errors import RulegaugeError

    with pytest.raises(RulegaugeError, match=r"no complete retrieval run with metric\(s\) recall@9 .*"
                                             r"skipped: b \(metric\(s\) recall@9 not scored\); a \("):
        open_run("latest", runs, metrics=("recall@9",))


def test_gate_run_latest_gates_the_newest_run_with_the_policy_metrics(
        runs: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="rulegauge.store.rundir"):
        code, text = rulegauge("gate", "--baseline", runs / "a", "--run", "latest", "--runs-dir", runs,
                                "--policy", runs / "policy.toml", "--format", "json")
    assert code == 0, text
    out = json.loads(text[text.index("{"): text.rindex("}") + 1])
    assert out["passed"] is True
    assert {c["metric"] for c in out["checks"]} == {"recall@5", "MRR@10", "nDCG@10"}
    assert "newer run(s) skipped: b (metric(s)" in caplog.text


def test_report_trend_and_compare_in_the_readme_order(runs: Path, tmp_path: Path) -> None:
    code, text = rulegauge("report", "latest", "--runs-dir", runs, "-o", tmp_path / "b.html")
    assert code == 0, text  # the custom run's report draws its own metrics
    assert "recall@3" in (tmp_path / "b.html").read_text(encoding="utf-8")
    _with_default_run(runs)
    code, text = rulegauge("report", "latest", "--runs-dir", runs, "-o", tmp_path / "c.html")
    assert code == 0, text  # its trend section spans a, b, c: b has no recall@5 point
    page = (tmp_path / "c.html").read_text(encoding="utf-8")
    assert "Trend over runs" in page and "recall@5: not in run b" in page
    code, text = rulegauge("trend", "--runs-dir", runs, "-m", "recall@5", "-m", "recall@3",
                            "--min-history", "1", "--json")
    assert code == 0, text
    out = json.loads(text[text.index("{"): text.rindex("}") + 1])
    assert out["runs"] == ["a", "b", "c"] and out["skipped"] == []
    assert out["missing"] == ["recall@5: not in run b", "recall@3: not in run a, c"]
    assert out["checked"] > 0  # recall@5 of c against a; recall@3 has no history before b
    code, text = rulegauge("trend", "--runs-dir", runs, "-m", "recall@9")
    assert code == 2 and "recall@9 are in none of the runs; they have: " in text and "recall@3" in text
    code, text = rulegauge("compare", runs / "a", runs / "b", "--format", "markdown")
    assert code == 0, text  # MRR@10 (RR@10) is on both sides; the rest is named
    assert "| MRR@10 |" in text and "recall@5 (base only)" in text and "recall@3 (candidate only)" in text
    code, text = rulegauge("gate", "--baseline", runs / "b", "--run", runs / "c",
                            "--policy", runs / "policy.toml", "--format", "markdown")
    assert code == 0, text  # the policy metrics both have (MRR@10) are checked; the others named
    assert "MRR@10" in text and "recall@5 (candidate only)" in text and "checks were not made" in text


def test_a_damaged_run_is_skipped_by_trend_and_the_report(runs: Path, tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    _with_default_run(runs)
    folder = tmp_path / "runs"
    folder.mkdir()
    for rid in ("a", "c"):
        shutil.copytree(runs / rid, folder / rid, ignore=shutil.ignore_patterns(".lock"))
    configs = folder / "a" / "configs.parquet"
    pq.write_table(pq.read_table(configs).slice(1), configs)  # no longer its manifest hash
    code, text = rulegauge("trend", "--runs-dir", folder, "--json")
    assert code == 0, text
    assert "warning: run skipped: a (" in text and "configs.parquet does not match the hash" in text
    assert json.loads(text[text.index("{"): text.rindex("}") + 1])["runs"] == ["c"]
    # c's report still renders; its trend section names the run it left out
    with caplog.at_level(logging.WARNING, logger="rulegauge.analysis.trend_chart"):
        code, text = rulegauge("report", "c", "--runs-dir", folder, "-o", tmp_path / "c.html")
    assert code == 0, text
    assert "trend: run skipped: a (" in caplog.text
    page = (tmp_path / "c.html").read_text(encoding="utf-8")
    assert "Left out (cannot be opened): a (" in page
