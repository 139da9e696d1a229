"""HTML report: config comparison, band frames, figures, self-containment, `rulegauge report`."""

from __future__ import annotations

import base64
import math
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from rulegauge.analysis import report
from rulegauge.analysis.bands import run_band_tables
from rulegauge.analysis.figures import band_figure
from rulegauge.analysis.headline import headline, interval_frame
from rulegauge.cli.analysis import register
from rulegauge.core.errors import RulegaugeError
from rulegauge.regression.service import SERVICE_CONFIG, service_config
from rulegauge.store.rundir import Run, open_run
from tests.helpers.analysis import write_synthetic_run

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return open_run(write_synthetic_run(tmp_path_factory.mktemp("runs") / "run-report"))


def test_comparison_reference_is_the_best_and_diffs_are_paired(run: Run) -> None:
    c = report.config_comparison(run, "recall@5", n_resamples=500, seed=3)
    assert list(c.columns[:5]) == ["config_id", "value", "diff", "ci_lo", "ci_hi"]
    assert c["reference"].sum() == 1 and bool(c["reference"].iloc[0])
    assert list(c["value"]) == sorted(c["value"], reverse=True)
    ref = c.iloc[0]
    assert (ref["diff"], ref["ci_lo"], ref["ci_hi"]) == (0.0, 0.0, 0.0)
    # recall@5 is averaged over answerable questions: diff = mean(config) - mean(reference)
    m = run.table("metrics")
    m = m[(m["metric"] == "recall@5") & m["answerable"]]
    means = m.groupby("config_id")["value"].mean()
    for _, row in c.iterrows():
        assert row["value"] == pytest.approx(means[row["config_id"]])
        assert row["diff"] == pytest.approx(means[row["config_id"]] - means[ref["config_id"]])
        assert row["ci_lo"] <= row["diff"] + 1e-12 and row["diff"] <= row["ci_hi"] + 1e-12
        assert row["n"] == int(run.table("questions")["answerable"].sum())


def test_comparison_is_reproducible_with_a_seed(run: Run) -> None:
    a = report.config_comparison(run, "nDCG@10", reference="rrf-2", n_resamples=300, seed=7)
    b = report.config_comparison(run, "nDCG@10", reference="rrf-2", n_resamples=300, seed=7)
    assert a.equals(b)
    assert a.loc[a["reference"], "config_id"].item() == "rrf-2"


def test_comparison_prints_each_tests_effect_size(run: Run) -> None:
    """Beside each paired test: the t margin of error and Cohen's d_z of the differences
    (rulegauge.regression.effect_size), as compare gives them; the reference has none."""
    from rulegauge.regression.compare import compare_runs

    c = report.config_comparison(run, "recall@5", n_resamples=300, seed=1)
    ref = c.loc[c["reference"], "config_id"].item()
    comp = compare_runs(run, run, configs=[(ref, x) for x in c["config_id"] if x != ref],
                        metrics=["recall@5"], force=True, n_resamples=300, seed=1)
    effects = {m.config.candidate: m.effect for m in comp.metrics}
    for row in c.itertuples():
        e = effects.get(row.config_id)
        if row.reference or e is None:
            assert math.isnan(row.moe)
        else:
            assert row.moe == e.moe and (row.d_z == e.d_z or math.isnan(e.d_z))


def test_comparison_infinite_values_get_a_note_not_an_interval(run: Run) -> None:
    c = report.config_comparison(run, "first_rel_rank", n_resamples=200)
    inf_rows = c[c["note"].str.contains("non-finite", na=False)]
    assert inf_rows["ci_lo"].isna().all()


def test_comparison_unknown_metric_or_reference_raises(run: Run) -> None:
    with pytest.raises(RulegaugeError, match="no known direction"):
        report.config_comparison(run, "bogus_metric")
    with pytest.raises(RulegaugeError, match="rrf-3"):
        report.config_comparison(run, "recall@5", reference="nope", n_resamples=100)


def test_band_frames_cover_every_config_and_cell(run: Run) -> None:
    tables = run_band_tables(run)
    ov = report.overview_frame(tables)
    assert list(ov["config_id"]) == [t.config_id for t in tables]
    assert ov.set_index("config_id").loc["rrf-2", "ceiling"] == pytest.approx(2 / 61)
    cells = report.cells_frame(tables)
    assert len(cells) == sum(len(t.cells) for t in tables)
    assert {"score_p05", "score_p95", "ratio_p50"} <= set(cells.columns)


def test_figures_render_to_png(run: Run) -> None:
    tables = run_band_tables(run)
    figs = [report.ratio_figure(run.table("fused"), tables),
            report.comparison_figure(report.config_comparison(run, n_resamples=100), "recall@5"),
            report.heatmap_figure(run.table("metrics"), "recall@5")]
    for fig in figs:
        assert base64.b64decode(report.png_base64(fig)).startswith(PNG_MAGIC)
    # no empty panels: one per config, one per (arms, k) group of the band chart
    assert len(figs[0].axes) == len(tables)
    band = band_figure(run.table("fused"), tables)
    groups = {(len(t.anchors.arms), t.anchors.k if len(t.anchors.arms) > 1 else 0)
              for t in tables}
    assert len(band.axes) == len(groups)
    assert all(fig.get_size_inches()[0] <= 13.4 for fig in (*figs, band))


def test_write_report_is_self_contained(run: Run, tmp_path: Path) -> None:
    out = report.write_report(run, tmp_path / "sub" / "r.html", n_resamples=200)
    html = out.read_text(encoding="utf-8")
    images = re.findall(r'<img [^>]*src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(images) >= 3
    assert all(base64.b64decode(i).startswith(PNG_MAGIC) for i in images)
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I)
    assert not re.search(r"https?://", html)
    # one inline script (table sorting), nothing loaded from anywhere
    assert "<link" not in html and html.count("<script>") == 1 and "<script src" not in html
    for cid in run.table("configs")["config_id"]:
        assert cid in html
    assert "Score bands" in html and "Summary per config" in html
    # the intervals are BCa (scipy's method="BCa" equivalent) and say so; each test its d_z
    assert "percentile bootstrap" not in html and "95% BCa bootstrap" in html and "d_z" in html
    # read top-down: headline, intervals, comparison, bands, summary
    order = [html.index(x) for x in ("class='cards'", "Configs by metric",
                                      "Against the service config", "Score bands",
                                      "Summary per config")]
    assert order == sorted(order)
    assert html.count('class="dataframe sortable"') >= 4


def test_service_config_by_id_or_parameters(run: Run) -> None:
    configs = run.table("configs")
    assert service_config(configs) == "rrf-3"  # k=60, bm25+dense+boost, weights 1
    renamed = configs.assign(config_id=configs["config_id"].replace("rrf-3", SERVICE_CONFIG))
    assert service_config(renamed) == SERVICE_CONFIG
    assert service_config(configs[configs["config_id"] != "rrf-3"]) is None


def test_headline_best_against_service_is_a_paired_difference(run: Run) -> None:
    comp = report.config_comparison(run, "recall@5", reference="rrf-3", n_resamples=300)
    h = headline(comp, "rrf-3", "recall@5")
    m = run.table("metrics")
    m = m[(m["metric"] == "recall@5") & m["answerable"]]
    means = m.groupby("config_id")["value"].mean()
    best = sorted(means.index, key=lambda c: (-means[c], c))[0]
    assert h.best == best and h.best_value == pytest.approx(means[best])
    assert h.service_value == pytest.approx(means["rrf-3"])
    assert h.diff == pytest.approx(means[best] - means["rrf-3"])
    assert h.ci_lo <= h.diff + 1e-12 <= h.ci_hi + 2e-12
    assert h.wins + h.ties + h.losses == h.n


def test_interval_frame_holds_means_with_bootstrap_intervals(run: Run) -> None:
    f = interval_frame(run.table("metrics"), ("recall@5", "first_rel_rank"), n_resamples=300)
    r5 = f[f["metric"] == "recall@5"]
    assert list(r5["value"]) == sorted(r5["value"], reverse=True)
    assert ((r5["lo"] <= r5["value"] + 1e-12) & (r5["value"] <= r5["hi"] + 1e-12)).all()
    assert f[f["metric"] == "first_rel_rank"]["lo"].isna().all()  # a median: no interval
    again = interval_frame(run.table("metrics"), ("recall@5",), n_resamples=300)
    assert again.equals(r5.reset_index(drop=True))


def test_report_with_answers_has_an_answers_section(tmp_path: Path) -> None:
    r = open_run(write_synthetic_run(tmp_path / "run-ans", seed=4, with_answers=True))
    html = report.render_html(r, n_resamples=200)
    assert "<h2>Answers</h2>" in html and "extractive" in html and "echo" in html
    plain = report.render_html(open_run(write_synthetic_run(tmp_path / "run-plain", seed=4)),
                               n_resamples=200)
    assert "<h2>Answers</h2>" not in plain


@pytest.mark.slow
def test_report_renders_in_chromium_at_1400_and_390px(tmp_path: Path) -> None:
    from tests.helpers.analysis import grid_configs
    from tests.helpers.browser import ARTEFACTS, render_at, webdriver_skip_reason

    reason = webdriver_skip_reason()
    if reason:
        pytest.skip(reason)
    r = open_run(write_synthetic_run(tmp_path / "run-browser", seed=5, n_questions=30,
                                     with_answers=True, configs=grid_configs()))
    page = report.write_report(r, tmp_path / "report.html", n_resamples=300, top=3)
    shots = tmp_path / "shots"
    for width in (1400, 390):
        png = shots / f"{width}.png"
        scroll, inner = render_at(page, width, png, tmp_path / f"profile-{width}")
        assert inner == width, f"viewport is {inner} px, asked for {width}"
        assert scroll <= inner, f"page is {scroll} px wide in a {width} px viewport"
        assert png.read_bytes().startswith(PNG_MAGIC) and png.stat().st_size > 20_000
    from rulegauge.analysis.report_html import READABLE_PX
    from tests.helpers.browser import shown_label_px

    labels = shown_label_px(page, 390, tmp_path / "profile-labels")
    assert labels and min(labels) >= READABLE_PX - 0.05, labels  # chart text readable on a phone
    ARTEFACTS.mkdir(exist_ok=True)
    (ARTEFACTS / "report.png").write_bytes((shots / "1400.png").read_bytes())
    (ARTEFACTS / "report-390.png").write_bytes((shots / "390.png").read_bytes())


def _cli() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


def test_cli_report_writes_one_file(run: Run, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(_cli(), ["report", str(run.path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.exists() and "wrote" in result.output


def test_cli_report_bad_input_exits_2(run: Run, tmp_path: Path) -> None:
    result = CliRunner().invoke(_cli(), ["report", str(run.path), "-o", str(tmp_path / "r.html"),
                                         "--metric", "bogus_metric"])
    assert result.exit_code == 2
    assert "no known direction" in result.output
