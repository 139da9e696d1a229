"""Search latency gated: an ``http`` endpoint made twice as slow fails ``max_increase``.

The endpoint is started here and sleeps a fixed time per call; the baseline is saved on
the fast one. Robust at any load: the sleeps (500 ms, 1 s) are large against
scheduling noise (a first version with 150 / 300 ms passed a doubled endpoint once at load 8,
its baseline's median inflated by the load), the five calls run at once (the sleeps overlap),
the gate compares medians (p50) and allows +50%, so a doubled endpoint fails unless the load
adds 167 ms to the baseline's median call, and an unchanged one passes unless it adds 250 ms.
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest

from rulegauge.pipeline.retrieval import RunOptions, run
from rulegauge.regression.gate import EXIT_PASS, EXIT_REGRESSION, Status, run_gate
from rulegauge.regression.policy import PolicyError, parse_policy
from rulegauge.store.baseline import save_baseline
from rulegauge.store.rundir import Run
from tests.helpers import search_endpoint as se
from tests.helpers.common import FIXTURES

FAST_S, SLOW_S = 0.5, 1.0
POLICY = {"gate": {"config": "arm-live"},
          "metrics": {"search_p50_ms": {"max_increase": 50}, "search_p95_ms": {"max_increase": 200}}}


def _run(tmp: Path, run_id: str, delay_s: float) -> Run:
    def reply(req: dict) -> se.Behaviour:
        time.sleep(delay_s)  # the service's search time
        return se.json({"hits": [{"doc": "pr-rules", "p": 1, "s": 1.0}, {"doc": "pr-errata", "p": 1, "s": 0.5}]})

    with se.search_endpoint(reply) as ep:
        grid = tmp / f"{run_id}.toml"
        grid.write_text(f'''[arms.live]
kind = "http"
url = "{ep.url}"
body = {{ q = "{{question}}" }}
doc = "doc"
page = "p"
score = "s"
concurrency = 5
[grid]
k = [60]
arms = [["live"]]
''', encoding="utf-8")
        res = run(RunOptions(goldset=FIXTURES / "goldsets" / "mini.yaml", config=grid,
                             runs_dir=tmp / "runs", run_id=run_id))
        asked = len(ep.requests)
    r = Run(res.path)
    lat = r.table("search_latency")
    assert asked == 6 and len(lat) == 5  # the preflight's warm-up call asked, never recorded
    assert set(lat["timing"]) == {"call"} and lat["latency_ms"].notna().all()
    assert (lat["latency_ms"] >= delay_s * 1000).all()  # a call cannot beat the endpoint's sleep
    return r


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, Run, Run]:
    tmp = tmp_path_factory.mktemp("latency")
    fast = _run(tmp, "fast", FAST_S)
    base = Run(save_baseline(fast, tmp / "baselines" / "fast"))
    return base, _run(tmp, "same", FAST_S), _run(tmp, "slow", SLOW_S)


def test_twice_as_slow_an_endpoint_fails_the_gate(runs: tuple[Run, Run, Run]) -> None:
    base, _, slow = runs
    result = run_gate(parse_policy(POLICY), base, slow)
    assert result.exit_code == EXIT_REGRESSION
    check = next(c for c in result.checks if c.name == "search_p50_ms max_increase")
    assert check.status is Status.FAIL and check.measured_value is not None
    assert check.measured_value > 0.5  # doubled: about +100% (a fraction of the base)
    assert check.expected == "worsening <= 50.00%" and "allowed 50.00%" in check.message


def test_the_same_endpoint_passes_the_gate(runs: tuple[Run, Run, Run]) -> None:
    base, same, _ = runs
    result = run_gate(parse_policy(POLICY), base, same)
    assert result.exit_code == EXIT_PASS, [c.message for c in result.failures()]
    m = result.comparison.find("search_p50_ms", result.pair)
    assert m is not None and m.aggregate == "median" and m.n == 5


def test_config_latency_is_the_calls_p50_and_p95_over_the_questions(runs: tuple[Run, Run, Run]) -> None:
    from rulegauge.metrics.latency import config_latency, latency_rows

    _, same, _ = runs
    lat, configs = same.table("search_latency"), same.table("configs")
    per = config_latency(lat, configs)
    one = per[per["config_id"] == "arm-live"].set_index("question_id")["latency_ms"]
    pd.testing.assert_series_equal(one.sort_index(), lat.set_index("question_id")["latency_ms"].sort_index(),
                                   check_names=False)
    rows = {(r.what, r.name): r for r in latency_rows(lat, configs, ["arm-live"])}
    v = lat["latency_ms"].to_numpy()
    import numpy as np

    assert rows[("arm", "live")].p50 == float(np.median(v))
    assert rows[("config", "arm-live")].p95 == float(np.quantile(v, 0.95))
    assert rows[("config", "arm-live")].timing == "call"


def test_max_increase_is_refused_on_a_metric_better_higher() -> None:
    with pytest.raises(PolicyError, match=r"max_increase.*better higher"):
        parse_policy({"metrics": {"hit@5": {"max_increase": 10}}})
