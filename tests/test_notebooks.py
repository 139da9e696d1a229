"""The analysis notebooks, stored clean and executed headless; the analysis
commands end to end.

Execution is marked slow (a kernel per notebook). Runs used: a fresh run of the
embedded sample (default grid, extractive answerer: what ``rulegauge run
--answerer extractive`` makes, so ``.ci/run`` executes every notebook on a fresh
sample run), a synthetic run without answers (the answerers notebook must say
so, not fail), and the run named by ``RULEGAUGE_RUN`` when that variable is set.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import nbformat
import pytest

from tests.helpers.analysis import write_synthetic_run
from tests.helpers.common import REPO

NOTEBOOKS = REPO / "notebooks"
NAMES = ("score_bands", "compare_configs", "answerers")
MIN_FIGURES = {"score_bands": 3, "compare_configs": 2, "answerers": 4}


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_stored_clean_with_a_parameter_cell(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code)
    params = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1 and "RULEGAUGE_RUN" in params[0].source
    assert '"latest"' in params[0].source


def _execute(name: str, run: Path, monkeypatch: pytest.MonkeyPatch) -> nbformat.NotebookNode:
    from nbclient import NotebookClient

    monkeypatch.setenv("RULEGAUGE_RUN", str(run))
    # the kernel imports rulegauge from the checkout even when it is not pip-installed
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    return nb


def _outputs(nb: nbformat.NotebookNode) -> list[dict]:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]


def _figures(nb: nbformat.NotebookNode) -> int:
    return sum("image/png" in o.get("data", {}) for o in _outputs(nb))


@pytest.fixture(scope="module")
def sample_runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh run of the embedded sample with the default grid and answers."""
    from rulegauge.answering.stage import answering_stage
    from rulegauge.pipeline.options import RunOptions
    from rulegauge.pipeline.retrieval import run

    d = tmp_path_factory.mktemp("sample-runs")
    run(RunOptions(runs_dir=d, run_id="sample", stages=answering_stage((("extractive", {}),))))
    return d


@pytest.fixture(scope="module")
def runs(sample_runs_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("runs")
    out = {"with_answers": sample_runs_dir / "sample",
           "no_answers": write_synthetic_run(d / "run-plain", seed=1)}
    if os.environ.get("RULEGAUGE_RUN"):
        out["RULEGAUGE_RUN"] = Path(os.environ["RULEGAUGE_RUN"])
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_and_draws(name: str, runs: dict[str, Path],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    for label, run in runs.items():
        if label == "no_answers" and name != "answerers":
            continue
        nb = _execute(name, run, monkeypatch)
        errors = [o for o in _outputs(nb) if o.get("output_type") == "error"]
        assert not errors, f"{name} on {label}: {errors}"
        text = json.dumps(_outputs(nb))
        if label == "no_answers":
            assert "has no answers table" in text and _figures(nb) == 0
        elif label == "with_answers" or name != "answerers":
            assert _figures(nb) >= MIN_FIGURES[name], f"{name} on {label}: too few figures"
        if name == "score_bands" and label != "no_answers":
            # identical ROC curves share a legend entry instead of hiding each other
            assert "distinct curves" in text
            assert re.search(r"\d+ panels \(arm count x arms voted\), 0 empty", text), text[:2000]
        if name == "compare_configs" and label == "with_answers":
            from rulegauge.regression.service import service_config
            from rulegauge.store.rundir import Run

            service = service_config(Run(run).table("configs"))
            assert service and f"Reference config: `{service}`" in text  # not the best config


@pytest.mark.slow
def test_commands_on_a_fresh_sample_run(sample_runs_dir: Path, tmp_path: Path) -> None:
    import typer
    from typer.testing import CliRunner

    from rulegauge.cli.analysis import register

    app = typer.Typer()
    register(app)
    runner, where = CliRunner(), ["--runs-dir", str(sample_runs_dir)]
    bands = runner.invoke(app, ["bands", "latest", *where])
    assert bands.exit_code == 0, bands.output
    assert "ceiling 0.04918" in bands.output and "ceiling 0.03279" in bands.output  # 3/61, 2/61
    assert "one arm #1 0.01639" in bands.output and "healthy band" in bands.output
    out = tmp_path / "report.html"
    rep = runner.invoke(app, ["report", "latest", "-o", str(out), *where])
    assert rep.exit_code == 0, rep.output
    assert out.read_text(encoding="utf-8").count("data:image/png;base64,") >= 3
    sql = "select config_id, avg(value) from metrics where metric = 'recall@5' group by 1"
    q = runner.invoke(app, ["query", sql, *where, "-f", "csv"])
    assert q.exit_code == 0, q.output
    assert "rrf" in q.output and "arm-bm25" in q.output


def test_heat_map_columns_are_in_numeric_config_order(tmp_path: Path) -> None:
    from rulegauge.analysis.report import heatmap_figure
    from rulegauge.core.config_order import sort_configs
    from rulegauge.store.rundir import open_run
    from tests.helpers.analysis import grid_configs

    run = open_run(write_synthetic_run(tmp_path / "run", seed=2, configs=grid_configs(ks=(6.0, 10.0, 60.0))))
    metrics = run.table("metrics")
    fig = heatmap_figure(metrics, "recall@5")
    shown = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    ids = sorted(set(metrics["config_id"]))
    assert shown == sort_configs(ids) and shown != ids  # text order differs (k10 before k6, arm-* first)


def test_cell_labels_contrast_with_their_cells() -> None:
    from matplotlib import colormaps

    from rulegauge.analysis.figures import _luminance, text_colour

    def contrast(a: float, b: float) -> float:
        return (max(a, b) + 0.05) / (min(a, b) + 0.05)

    for v in [i / 50 for i in range(51)]:
        cell = colormaps["viridis"](v)
        ink = 1.0 if text_colour(cell) == "white" else 0.0  # white's luminance is 1, black's 0
        assert contrast(_luminance(cell), ink) >= 4.5, (v, text_colour(cell))
