"""Gate checks that cannot fail (rulegauge.regression.check_reach): a significance check
whose test can never be flagged says so in every report, and the gate really does pass
however bad the candidate is; compare's family line says when nothing can be flagged."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rulegauge.cli import app
from rulegauge.regression.check_reach import unfailable
from rulegauge.regression.gate import Status, run_gate
from rulegauge.regression.gate_report import GATE_FORMATS
from rulegauge.regression.policy import parse_policy
from rulegauge.store.rundir import Run
from tests.helpers.comparison import base_lists, move, qid, write_run


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Run]:
    tmp = tmp_path_factory.mktemp("reach")
    worse = base_lists()
    for i in range(1, 21):  # every answerable question loses its page from the top 5
        worse = move(worse, qid(i), f"rb#{i}", 9)
    return Run(write_run(tmp / "base", base_lists())), Run(write_run(tmp / "worse", worse))


def _policy(**gate: object) -> object:
    return parse_policy({"gate": {"config": "c3", "alpha": 0.05, **gate},
                         "metrics": {m: {"alpha": 0.05} for m in ("hit@5", "recall@5", "MRR@10")}}, "<test>")


def test_too_few_resamples_for_the_family_cannot_fail_and_says_so(pair: tuple[Run, Run]) -> None:
    """20 questions, every one worse on all three metrics: with 40 resamples the smallest p
    is 2/41 = 0.049, times 3 tests = 0.146 >= 0.05, so the gate passes (within tolerance)
    and every format says its significance checks cannot fail."""
    result = run_gate(_policy(n_resamples=40), *pair)
    sig = [c for c in result.checks if c.kind == "alpha"]
    assert result.passed and all(c.status is Status.WITHIN_TOLERANCE for c in sig)
    lines = unfailable(result)
    assert len(lines) == 3 and lines[0] == (
        "hit@5 significance cannot fail: with 20 questions and 40 resamples the smallest p is "
        "0.0488 x 3 tests (Holm's first step) = 0.146 >= alpha 0.05; it needs n_resamples >= 120 "
        "or a smaller family")
    assert lines[0] in GATE_FORMATS.get("table")(result)
    assert f"> **{lines[0]}**" in GATE_FORMATS.get("markdown")(result)
    assert json.loads(GATE_FORMATS.get("json")(result))["cannot_fail"] == list(lines)
    props = ET.fromstring(GATE_FORMATS.get("junit")(result)).iter("property")
    assert [p.get("value") for p in props if p.get("name") == "cannot fail"] == list(lines)
    assert "CANNOT FLAG ANYTHING" in result.comparison.family.limit
    enough = run_gate(_policy(n_resamples=200), *pair)  # 3 x 2/201 < 0.05: it can, and does
    assert unfailable(enough) == () and not enough.passed


def test_few_questions_cannot_fail_whatever_the_resamples(tmp_path: Path) -> None:
    """Five answerable questions: the exact test's smallest p is 2/32 = 0.0625."""
    lists = {q: v for q, v in base_lists().items() if q in {qid(i) for i in range(1, 6)}}
    worse = lists
    for i in range(1, 6):
        worse = move(worse, qid(i), f"rb#{i}", 9)
    base, cand = Run(write_run(tmp_path / "b", lists)), Run(write_run(tmp_path / "w", worse))
    result = run_gate(parse_policy({"gate": {"config": "c3", "alpha": 0.05},
                                    "metrics": {"hit@5": {"alpha": 0.05}}}, "<test>"), base, cand)
    (line,) = unfailable(result)
    assert result.passed and line == ("hit@5 significance cannot fail: with 5 questions and 10000 "
                                      "resamples the smallest p is 0.0625 >= alpha 0.05; it needs at "
                                      "least 6 questions per test")


def test_compare_family_line_says_it_cannot_flag_anything(pair: tuple[Run, Run]) -> None:
    base, worse = pair
    r = CliRunner().invoke(app, ["compare", str(base.path), str(worse.path), "--n-resamples", "100",
                                 "--json"])
    assert r.exit_code == 0, r.output
    family = json.loads(r.output)["family"]
    assert family["limit"].startswith("CANNOT FLAG ANYTHING") and family["flagged"] == []
    assert f"raise the resamples to at least {2 * len(family['members']) * 20:,}" in family["limit"]
