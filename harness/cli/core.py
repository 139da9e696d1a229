"""Core commands: run, list, validate."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from harness.cli.catalog import all_registries
from harness.cli.errors import bad_input_exits_2
from harness.cli.progress import rich_progress
from harness.cli.summary import print_summary
from harness.core.errors import ConfigError


def register(app: typer.Typer) -> None:
    app.command("run")(run_cmd)
    app.command("list")(list_cmd)
    app.command("validate")(validate_cmd)


def run_cmd(
    goldset: Path = typer.Option(None, "--goldset", "-g", help="Gold set YAML (default: the embedded sample)."),
    config: Path = typer.Option(None, "--config", "-c", help="Fusion grid TOML (default: harness/data/default-grid.toml)."),
    out: Path = typer.Option(Path("runs"), "--out", "-o", help="Folder that holds run directories."),
    run_id: str = typer.Option(None, "--run-id", help="Run id (default: timestamped). An existing id resumes that run."),
    answerer: list[str] = typer.Option([], "--answerer", "-a", help="Also answer with these answerers (e.g. extractive)."),
    param: list[str] = typer.Option([], "--param", "-p", help="Parameter NAME.KEY=VALUE for an arm or answerer, e.g. bm25.k1=1.2."),
    answer_config: list[str] = typer.Option([], "--answer-config", help="Configs to answer (default: the first grid config)."),
    cache_dir: Path = typer.Option(None, "--cache-dir", help="Model and embedding cache (default: $HARNESS_CACHE or ~/.cache/harness)."),
    metric: list[str] = typer.Option([], "--metric", "-m", help="Metric to compute (repeat; default: the grid's `metrics`, else the built-in list). ranx / ir_measures names are accepted: Success@5, RR@10, ndcg@10 (docs/metrics.md)."),
) -> None:
    """Run a gold set through every arm and fusion config; write runs/<run_id>/.

    Example: harness run --goldset ../shared/goldsets/secret-hitler.yaml --answerer extractive -m recall@3 -m nDCG@20
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `harness --help` stays fast
    from harness.pipeline.retrieval import RunOptions, run

    with bad_input_exits_2():
        params = _parse_params(param)
        # an answerer may be given as LABEL=NAME; its parameters are keyed by the label
        labels = {a.split("=")[0] for a in answerer}
        answerers = tuple((a, params.get(a.split("=")[0], {})) for a in answerer)
        arm_overrides = {k: v for k, v in params.items() if k not in labels}
        opts = RunOptions(goldset=goldset, config=config, runs_dir=out, run_id=run_id,
                          answerers=answerers, answer_configs=tuple(answer_config) or None,
                          cache_dir=cache_dir, arm_overrides=arm_overrides,
                          metrics=tuple(metric) or None)
        with rich_progress() as progress:
            result = run(opts, progress=progress)
    print_summary(result.path)


def _parse_params(items: list[str]) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        name, dot, field = key.partition(".")
        if not sep or not dot or not name or not field:
            raise ConfigError(f"--param {item!r}: expected NAME.KEY=VALUE, e.g. bm25.k1=1.2")
        out.setdefault(name, {})[field] = _coerce(value)
    return out


def _coerce(value: str) -> object:
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(value.lower(), value)


def list_cmd() -> None:
    """List registered arms, fusion methods, metrics, answerers, loaders and tables.

    Example: harness list
    """

    table = Table("registry", "names")
    for kind, names in all_registries().items():
        table.add_row(kind, ", ".join(names))
    Console().print(table)


def validate_cmd(goldset: Path = typer.Argument(..., help="Gold set YAML to check.")) -> None:
    """Check a gold set and report every problem at once (exit 2 if any).

    Example: harness validate goldsets/sample.yaml
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `harness --help` stays fast
    from harness.goldset.parse import load_goldset

    with bad_input_exits_2():
        gs = load_goldset(goldset)
    Console().print(f"[green]OK[/green] {goldset}: {len(gs.questions)} questions, "
                    f"{len(gs.documents)} documents, "
                    f"{sum(not q.answerable for q in gs.questions)} unanswerable")
