"""The report on a grid: charted configs (top N, -c), every config in the tables,
sweeps, band small multiples, ties and significance in the headline, the CLI."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from rulegauge.analysis import report
from rulegauge.analysis.headline import Headline
from rulegauge.analysis.report_html import headline_html
from rulegauge.cli.analysis import register
from rulegauge.core.config_order import config_sort_key
from rulegauge.regression.service import SERVICE_CONFIG
from rulegauge.store.rundir import Run, open_run
from tests.helpers.analysis import grid_configs, write_synthetic_run

GRID = grid_configs()
ARMS_ALONE = {c for c, kind, *_ in GRID if kind == "arm"}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return open_run(write_synthetic_run(tmp_path_factory.mktemp("runs") / "run-grid", seed=2,
                                        configs=GRID))


def _panels(html: str) -> list[str]:
    return re.findall(r'<img alt="score bands of ([^"]+)"', html)


def test_charts_show_top_n_service_and_arms_tables_show_all(run: Run) -> None:
    html = report.render_html(run, n_resamples=200, top=2)
    comp = report.config_comparison(run, "recall@5", reference=SERVICE_CONFIG, n_resamples=200)
    expected = [c for c in comp["config_id"]
                if c in set(comp["config_id"][:2]) | ARMS_ALONE | {SERVICE_CONFIG}]
    assert _panels(html) == expected  # one band panel per charted config, best first
    assert f"{len(expected)} of {len(GRID)}" in html
    for cid, *_ in GRID:  # every config is in the comparison and summary tables
        assert html.count(f"<td>{cid}</td>") >= 2, cid
    assert "against fusion parameters" in html
    assert 'alt="recall@5 against k"' in html and 'alt="recall@5 against the weight of dense"' in html


def test_explicit_configs_replace_top_n(run: Run) -> None:
    chosen = ["rrf_k90_bm25+dense", SERVICE_CONFIG]
    html = report.render_html(run, n_resamples=200, config_ids=chosen)
    assert sorted(_panels(html)) == sorted(chosen)
    assert "the 2 configs chosen with -c" in html


def test_progress_hears_each_slow_step(run: Run) -> None:
    heard: list[str] = []
    report.render_html(run, n_resamples=100, top=1, progress=heard.append)
    assert any(m.startswith("comparing 13 configs") for m in heard)
    assert heard[-1] == "drawing figures"


def _headline(best: str, ci: tuple[float, float], service: str = "svc", *,
              significant: bool = False) -> Headline:
    return Headline("recall@5", best, 0.8, service, 0.7, 0.1, ci[0], ci[1], 0.2, 3, 10, 1, 14,
                    p_adjusted=0.01 if significant else 0.4, significant=significant,
                    family="holm over 12 tests at alpha 0.05")


def test_headline_names_a_tie_and_says_not_significant() -> None:
    tie = headline_html(_headline("a", (-0.02, 0.25)), ("a", "b", "c"))
    assert "tie of 3 configs at 0.800: a, b, c" in tie
    assert "not significant" in tie and "<b class=ns>+0.100</b>" in tie
    sig = headline_html(_headline("a", (0.02, 0.25), significant=True), ("a",))
    assert "not significant" not in sig and "<b>+0.100</b>" in sig and "(tie)" not in sig
    # the interval alone excludes 0, but the multiplicity rule does not flag it: not significant
    unflagged = headline_html(_headline("a", (0.02, 0.25)), ("a",))
    assert "not significant (adjusted p not below alpha, holm over 12 tests" in unflagged
    from rulegauge.regression.stability import Stability

    shaky = Stability("a", 12, 14, 1000, 0, 0.41, 0.2, ("b", "c"), "tied: rule")
    card = headline_html(replace(_headline("a", (0.02, 0.25)), stability=shaky), ("a",))
    assert "best, or tied with 2 others, on recall@5" in card and "stays best in 41% of 1000" in card
    svc_tied = headline_html(_headline("a", (0.0, 0.0)), ("a", "svc"))
    assert "ties for best with 1 other config" in svc_tied


def test_report_headline_ties_on_the_real_comparison(run: Run) -> None:
    comp = report.config_comparison(run, "hit@5", reference=SERVICE_CONFIG, n_resamples=200)
    best = comp["value"].iloc[0]
    tied = sorted(comp.loc[comp["value"] == best, "config_id"], key=config_sort_key)
    html = report.render_html(run, metric="hit@5", n_resamples=200)
    if len(tied) > 1:
        assert f"tie of {len(tied)} configs" in html
        assert ", ".join(tied[:6]) in html
    else:
        assert "(tie)" not in html


def _cli() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


def test_cli_top_and_config_options(run: Run, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    res = CliRunner().invoke(_cli(), ["report", str(run.path), "-o", str(out), "--top", "1",
                                      "-c", "rrf_k10_bm25+dense", "-c", SERVICE_CONFIG])
    assert res.exit_code == 0, res.output
    assert sorted(_panels(out.read_text(encoding="utf-8"))) == sorted(
        ["rrf_k10_bm25+dense", SERVICE_CONFIG])
    assert re.search(r"\d\d:\d\d:\d\d report: comparing 13 configs", res.output)


def test_cli_unknown_config_exits_2_and_writes_nothing(run: Run, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    res = CliRunner().invoke(_cli(), ["report", str(run.path), "-o", str(out),
                                      "-c", "rrf_k61_bm25+dense+boost", "-c", "nope"])
    assert res.exit_code == 2
    assert "unknown config id 'rrf_k61_bm25+dense+boost' (did you mean" in res.output
    assert "'nope'" in res.output and "Traceback" not in res.output
    assert not out.exists()


def test_trend_section_over_earlier_runs_of_the_gold_set(tmp_path: Path) -> None:
    from rulegauge.analysis.trend_chart import trend_runs
    from rulegauge.store.rundir import RunWriter

    runs = tmp_path / "runs"
    for i, seed in enumerate((1, 2, 3)):
        p = write_synthetic_run(runs / f"run-{i}", seed=seed, created=f"2025-0{i + 1}-01T00:00:00+00:00")
        RunWriter(p).update_manifest({"goldset": {"name": "synthetic"}})
    first, last = open_run(runs / "run-0"), open_run(runs / "run-2")
    assert [p.name for p in trend_runs(last)] == ["run-0", "run-1", "run-2"]
    assert trend_runs(first) == [runs.resolve() / "run-0"]
    html = report.render_html(last, n_resamples=100, top=1)
    assert "<h2>Trend over runs</h2>" in html and "The last 3 complete runs" in html
    assert 'alt="recall@5 per run"' in html and 'alt="score band shares per run"' in html
    assert "<h2>Trend over runs</h2>" not in report.render_html(first, n_resamples=100, top=1)


def test_cli_bands_config_filter(run: Run) -> None:
    import json

    res = CliRunner().invoke(_cli(), ["bands", str(run.path), "--json", "-c", SERVICE_CONFIG,
                                      "-c", "arm-bm25"])
    assert res.exit_code == 0, res.output
    assert sorted(t["config_id"] for t in json.loads(res.output)) == ["arm-bm25", SERVICE_CONFIG]
    bad = CliRunner().invoke(_cli(), ["bands", str(run.path), "-c", "rrf_k6_bm25+dense"])
    assert bad.exit_code == 2 and "unknown config id 'rrf_k6_bm25+dense'" in bad.output


def test_a_wide_grid_is_ranked_one_way_in_the_report_and_the_run_summary(tmp_path: Path) -> None:
    """15 values of k x 2 arm subsets (many configs tie on recall@5): the report's charted top
    N and the run summary rank by the same metric, ties in numeric config order (rrf_k6
    before rrf_k8 before rrf_k10, never text order), both show the service config and both
    name the same best config."""
    import io
    import itertools

    from rich.console import Console

    from rulegauge.cli.summary import print_summary
    from rulegauge.metrics.selection import rank_configs

    grid = grid_configs(ks=(*(float(k) for k in range(2, 31, 2)), 60.0), dense_weights=())
    run = open_run(write_synthetic_run(tmp_path / "wide", seed=5, configs=grid))
    comp = report.config_comparison(run, "recall@5", reference=SERVICE_CONFIG, n_resamples=50)
    ranked = list(comp["config_id"])
    values = dict(zip(comp["config_id"], comp["value"], strict=True))
    assert ranked == rank_configs(values)
    tied_pairs = [(a, b) for a, b in itertools.pairwise(ranked) if values[a] == values[b]]
    assert tied_pairs and all(config_sort_key(a) < config_sort_key(b) for a, b in tied_pairs)
    assert any("_k8_" in b and "_k10_" in c for _, b, c in zip(ranked, ranked[1:], ranked[2:], strict=False))
    html = report.render_html(run, n_resamples=50, top=10)
    charted = _panels(html)
    assert charted == [c for c in ranked if c in set(ranked[:10]) | ARMS_ALONE | {SERVICE_CONFIG}]
    assert SERVICE_CONFIG in charted
    out = io.StringIO()
    print_summary(run.path, Console(file=out, width=250), rows=12)
    text = out.getvalue()
    best = re.search(r"best by recall@5: (\S+)", text)
    assert best is not None and best.group(1) == ranked[0]
    assert ranked[0] in html.split("best on recall@5", 1)[1][:400]  # the report's headline
    printed = [c for c in re.findall(r"│ (\S+) +│", text) if c in values]
    fused = [c for c in ranked if not c.startswith("arm-")]
    shown = [c for c in printed if not c.startswith("arm-")]
    top = fused[: len(shown)]
    assert shown == (top if SERVICE_CONFIG in top else [*top[:-1], SERVICE_CONFIG])
    assert printed[len(shown):] == ["arm-bm25", "arm-boost", "arm-dense"]
    assert f"showing 12 of {len(grid)} configs" in text
