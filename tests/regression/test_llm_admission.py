"""rulegauge.regression.llm_admission: a gate admits LLM judgments only above a stated kappa,
shown by an agreement record; a gold set with LLM-only pages is found and noted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.goldset.judgments import Judgment, write_judgments
from rulegauge.goldset.merge import merge_judgments
from rulegauge.goldset.records import PageJudgment
from rulegauge.regression.gate import Status, run_gate
from rulegauge.regression.llm_admission import llm_kappa_check, llm_notes, llm_only_pairs
from rulegauge.regression.policy import PolicyError, parse_policy
from rulegauge.store.rundir import Run
from tests.helpers.comparison import base_lists, write_run
from tests.helpers.judging import sample_copy


def record(path: Path, kappa: float | None, llm_pairs: int = 40) -> Path:
    path.write_text(json.dumps({"agreement": {"kappa": kappa, "llm_pairs": llm_pairs,
                                              "pairs": 40}, "ranking": None}))
    return path


def test_the_check_needs_a_record_showing_the_kappa(tmp_path: Path) -> None:
    assert llm_kappa_check(0.5, None, 3)[0] is False
    assert "missing" in llm_kappa_check(0.5, tmp_path / "none.json", 3)[1]
    assert llm_kappa_check(0.5, record(tmp_path / "lo.json", 0.42), 3)[:1] == (False,)
    ok, message, kappa = llm_kappa_check(0.5, record(tmp_path / "hi.json", 0.61), 3)
    assert ok and kappa == 0.61 and "0.610" in message
    assert llm_kappa_check(0.5, record(tmp_path / "u.json", None), 3)[0] is False
    assert llm_kappa_check(0.5, record(tmp_path / "h.json", 0.9, llm_pairs=0), 3)[0] is False
    assert llm_kappa_check(0.5, None, 0)[0] is True  # no LLM-only page to admit
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    with pytest.raises(RulegaugeError, match=r"bad\.json: not the output"):
        llm_kappa_check(0.5, bad, 3)


def test_llm_only_pages_of_a_merged_gold_set_are_counted_and_noted(tmp_path: Path) -> None:
    gold = sample_copy(tmp_path)
    judged = write_judgments(tmp_path / "llm.jsonl", [Judgment("bw-01", PageJudgment(
        "bw-faq", 1, 2, "llm", "m@abc"))])
    merged = tmp_path / "goldsets" / "merged.yaml"
    merge_judgments(gold, [judged], merged)
    from rulegauge.goldset.parse import load_goldset

    sha = load_goldset(merged).sha256
    manifest = {"goldset": {"path": str(merged), "sha256": sha}}
    assert llm_only_pairs(manifest) == 1
    assert llm_only_pairs({"goldset": {"path": str(gold), "sha256": "x"}}) is None  # edited
    assert "1 LLM-only judged pages" in llm_notes(manifest, None)[0]
    assert llm_notes(manifest, 0.6) == ()


def test_policy_keys_and_the_gate_check(tmp_path: Path) -> None:
    base = Run(write_run(tmp_path / "base", base_lists()))
    raw = {"gate": {"config": "prod", "min_llm_kappa": 0.6, "llm_agreement": "agree.json"},
           "metrics": {"hit@5": {"max_drop": 0.0}}}
    where = str(tmp_path / "policy.toml")
    policy = parse_policy(raw, where)
    assert (policy.min_llm_kappa, policy.llm_agreement) == (0.6, "agree.json")
    missing = {c.name: c for c in run_gate(policy, base, base).checks}["llm_kappa"]
    assert missing.status is Status.FAIL and "agree.json" in missing.message
    record(tmp_path / "agree.json", 0.55)
    low = run_gate(policy, base, base)
    assert not low.passed and low.exit_code == 1
    record(tmp_path / "agree.json", 0.7)
    assert run_gate(policy, base, base).passed
    no_floor = parse_policy({"gate": {"config": "prod"}, "metrics": raw["metrics"]}, where)
    assert "llm_kappa" not in {c.name for c in run_gate(no_floor, base, base).checks}
    with pytest.raises(PolicyError, match="min_llm_kappa"):
        parse_policy({"gate": {"min_llm_kappa": 2}, "metrics": raw["metrics"]}, where)
