"""The project's own regression gate: the sample's retrieval against the committed
baseline (runs/baselines/sample) under docs/ci/gate-policy.toml.

A change that hurts the sample's retrieval fails this test, and so CI. When a change
is *meant* to move the numbers (or changes chunking, which changes the corpus hash),
re-save the baseline: `rulegauge run --run-id new && rulegauge baseline save new sample
--overwrite --policy docs/ci/gate-policy-slices.toml` and commit runs/baselines/sample.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from rulegauge.cli import app
from rulegauge.goldset.parse import load_goldset
from rulegauge.metrics.ranking import score_ranking
from rulegauge.pipeline.options import RunOptions
from rulegauge.pipeline.retrieval import SAMPLE_GOLDSET, run
from rulegauge.store.rundir import Run, RunWriter
from tests.helpers.common import REPO

BASELINE = REPO / "runs" / "baselines" / "sample"
POLICY = REPO / "docs" / "ci" / "gate-policy.toml"
CONFIG = "rrf_k60_bm25+dense+boost"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def fresh_run(tmp_path_factory):
    if not BASELINE.exists():
        pytest.fail(f"committed baseline {BASELINE} is missing")
    out = tmp_path_factory.mktemp("runs")
    return run(RunOptions(runs_dir=out, run_id="candidate")).path


def gate(*args):
    return CliRunner().invoke(app, ["gate", "--baseline", str(BASELINE), "--policy", str(POLICY), *args])


def test_unchanged_sample_passes_the_gate(fresh_run, tmp_path):
    res = gate("--run", str(fresh_run), "--junit", str(tmp_path / "g.xml"))
    assert res.exit_code == 0, res.output
    assert (tmp_path / "g.xml").exists()


def test_dropping_the_dense_arm_fails_naming_metrics_and_questions(fresh_run):
    res = gate("--run", str(fresh_run), "--candidate-config", "rrf_k60_bm25+boost")
    assert res.exit_code == 1, res.output
    assert "FAIL" in res.output and "MRR@10" in res.output
    assert "bw-" in res.output  # the regressed questions are named


def test_missing_policy_exits_2(fresh_run, tmp_path):
    res = CliRunner().invoke(app, ["gate", "--baseline", str(BASELINE), "--run", str(fresh_run),
                                   "--policy", str(tmp_path / "nope.toml")])
    assert res.exit_code == 2
    assert "nope.toml" in res.output


def drop_page(src: Path, dst: Path, question: str, page: str, below: int = 8) -> Run:
    """A copy of run ``src`` in which ``page``'s chunks of ``question`` (config CONFIG)
    are moved below the first ``below`` other chunks, its fused ranks, page ranks and
    metrics recomputed, and the tables re-hashed: a candidate that lost that page."""
    shutil.copytree(src, dst)
    r = Run(dst)
    fused, metrics = r.table("fused"), r.table("metrics")
    sel = (fused["config_id"] == CONFIG) & (fused["question_id"] == question)
    rows = fused[sel].sort_values("fused_rank")
    key = rows["doc_id"] + "#" + rows["page"].astype(str)
    moved, kept = rows[key == page], rows[key != page]
    assert len(moved), f"{page} is not in {question}'s fused list"
    rows = pd.concat([kept.iloc[:below], moved, kept.iloc[below:]])
    rows = rows.assign(fused_rank=range(1, len(rows) + 1))
    pages = list(dict.fromkeys(rows["doc_id"] + "#" + rows["page"].astype(str)))
    rank_of = {p: i for i, p in enumerate(pages, start=1)}
    rows = rows.assign(page_rank=[rank_of[f"{d}#{p}"] for d, p in zip(rows["doc_id"], rows["page"],
                                                                     strict=True)])
    fused = pd.concat([fused[~sel], rows], ignore_index=True)
    q = {x.question_id: x for x in load_goldset(SAMPLE_GOLDSET).questions}[question]
    msel = (metrics["config_id"] == CONFIG) & (metrics["question_id"] == question)
    ranking = [m for m in metrics.loc[msel, "metric"] if not m.startswith("top_score")]
    values = score_ranking(pages, q, ranking)
    metrics.loc[msel, "value"] = [values.get(m, v) for m, v in
                                  zip(metrics.loc[msel, "metric"], metrics.loc[msel, "value"],
                                      strict=True)]
    w = RunWriter(dst)
    w.write_table("fused", fused, {"rank_*": sorted(c[5:] for c in fused.columns
                                                     if c.startswith("rank_"))})
    w.write_table("metrics", metrics)
    return Run(dst)


# the policy as it was before 2026-11-30: errata questions pinned on hit@5
HIT_PINNED = """
[gate]
config = "rrf_k60_bm25+dense+boost"
[metrics."hit@5"]
pinned = ["bw-13", "bw-14", "bw-42", "bw-51"]
"""


def test_the_errata_trap_dropping_the_errata_page_fails_the_gate(fresh_run, tmp_path):
    """bw-13 needs the errata page AND the rulebook page it corrects. With the errata
    page pushed out of the top 5, hit@5 stays 1 (the superseded rulebook page alone
    satisfies it) while recall@5 falls 1 -> 0.5: a policy pinning bw-13 on hit@5
    passes; the example policy, pinning errata questions on recall@5, fails naming it."""
    cand = drop_page(fresh_run, tmp_path / "runs" / "no-errata", "bw-13", "bw-errata#1")
    m = cand.table("metrics")
    m = m[(m["config_id"] == CONFIG) & (m["question_id"] == "bw-13")].set_index("metric")["value"]
    assert (m["hit@5"], m["recall@5"]) == (1.0, 0.5)
    old = tmp_path / "hit-pinned.toml"
    old.write_text(HIT_PINNED, encoding="utf-8")
    trap = CliRunner().invoke(app, ["gate", "--baseline", str(BASELINE), "--policy", str(old),
                                    "--run", str(cand.path)])
    assert trap.exit_code == 0, trap.output  # the trap: hit@5 cannot see the lost errata
    # ... though the gate now warns about such pins
    assert "pinned bw-13 on hit@5 has 2 requirements" in trap.output
    assert "pinned bw-42 on hit@5 has 2 requirements" in trap.output
    res = gate("--run", str(cand.path))
    assert res.exit_code == 1, res.output
    assert "pinned bw-13 lost recall@5 (1 -> 0.5)" in res.output
    assert "requirements: its hit" not in res.output  # the example policy pins no such hit


def _dense_backend(manifest: dict) -> str | None:
    return (manifest.get("arms", {}).get("dense") or {}).get("backend_resolved")


def test_the_committed_baseline_is_the_codes_own(fresh_run, tmp_path):
    """A fresh run of the sample, saved as a baseline the way the docs say, equals the
    committed one in every table: not "within tolerance", identical (the baseline is the
    code's own, so a change that moves any number must re-save it, in the same commit).

    Dense scores depend on the embedding backend the CPU gets (`auto`: the fastest backend the
    agreement table (rulegauge/embedding/agreement.py) measured to retrieve as torch-fp32 does on
    that CPU, torch-fp32 where none is measured; docs/dense.md): on a machine whose backend differs from the
    baseline's, the configs without the dense arm must still be identical and the others are
    left to the gate's tolerances (test_unchanged_sample_passes_the_gate)."""
    import json

    from rulegauge.store.baseline import save_baseline

    new = save_baseline(Run(fresh_run), tmp_path / "sample")
    old_manifest = json.loads((BASELINE / "manifest.json").read_text(encoding="utf-8"))
    new_manifest = json.loads((new / "manifest.json").read_text(encoding="utf-8"))
    same_backend = _dense_backend(old_manifest) == _dense_backend(new_manifest)
    tables = sorted(p.stem for p in BASELINE.glob("*.parquet"))
    fresh_tables = sorted(p.stem for p in new.glob("*.parquet"))
    # a baseline saved before search times were kept lacks only that table (re-save it)
    assert set(tables) <= set(fresh_tables) and set(fresh_tables) - set(tables) <= {"search_latency"}
    timing = ["run_id", "latency_ms"]  # a measurement of the machine: never equal across runs
    for name in tables:
        old = pd.read_parquet(BASELINE / f"{name}.parquet").drop(columns=timing, errors="ignore")
        fresh = pd.read_parquet(new / f"{name}.parquet").drop(columns=timing, errors="ignore")
        if not same_backend and "config_id" in old.columns:
            lexical = ~old["config_id"].astype(str).str.contains("dense")
            old = old[lexical].reset_index(drop=True)
            fresh = fresh[~fresh["config_id"].astype(str).str.contains("dense")].reset_index(drop=True)
        pd.testing.assert_frame_equal(old, fresh, check_exact=True, obj=f"baseline table {name}")
    if same_backend:  # its expected numbers too, as `baseline save --policy` writes them
        from rulegauge.regression.expected import EXPECTED, expected_scope, expected_yaml

        kept, slices = expected_scope(Run(fresh_run), [], REPO / "docs" / "ci" / "gate-policy-slices.toml")
        assert (BASELINE / EXPECTED).read_text(encoding="utf-8") == expected_yaml(Run(fresh_run), kept, slices)
