"""A run's configs logged to MLflow, one MLflow run per config (``rulegauge export RUN
--format mlflow``).

Each config becomes an MLflow run named by its config id in one experiment (default
``rulegauge``): **params** are the config's columns of the ``configs`` table (``method``,
``k``, ``arms``, ``weights``, ``depths``, ``kind``, ``ceiling``, ``name`` and the method's
``params`` JSON; lists joined with ``,``) plus ``n_answerable``; **metrics** are every
metric's mean over the answerable questions (the rows with ``answerable`` true; an
infinite ``first_rel_rank`` of a question with no relevant page makes its mean
infinite: it is logged as is, never as a plausible number); **tags** are
``rulegauge.run_id``, ``rulegauge.config_id``, ``rulegauge.goldset`` (name), ``rulegauge.goldset_sha256``,
``rulegauge.commit`` and ``rulegauge.kind``; **artifacts** are the run's ``manifest.json``,
``metric-names.json`` (MLflow name -> canonical rulegauge name) and, when given or present
in the run folder as ``report.html``, the HTML report.

MLflow metric names allow only letters, digits and ``_-. :/``: ``@`` becomes ``_at_`` and
every other character outside that set ``_`` (``nDCG(judged_only=True)@10`` ->
``nDCG_judged_only_True__at_10``); two names mapping to one raise. A run already
logged to the experiment (tag ``rulegauge.run_id``) is refused unless ``replace``, which
deletes its earlier MLflow runs first.

The default store is the local folder ``mlruns`` (MLflow's file store, which MLflow 3
keeps behind ``MLFLOW_ALLOW_FILE_STORE=true``: set here for ``file:`` URIs unless the
user set it); nothing goes over the network unless the URI is a server's. ``mlflow`` is
imported inside :func:`log_run` (the ``[mlflow]`` extra).
Reference: https://mlflow.org/docs/latest/ml/tracking/
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rulegauge.core.errors import RulegaugeError
from rulegauge.store.rundir import Run

DEFAULT_EXPERIMENT = "rulegauge"
_BAD_CHARS = re.compile(r"[^\w\-. :/]")


def mlflow_name(metric: str) -> str:
    """The MLflow-safe spelling of a rulegauge metric name (module docstring)."""
    return _BAD_CHARS.sub("_", metric.replace("@", "_at_"))


def default_uri(folder: Path = Path("mlruns")) -> str:
    return folder.resolve().as_uri()


@dataclass(frozen=True)
class LoggedRun:
    """What :func:`log_run` wrote: the experiment, and one MLflow run id per config."""

    tracking_uri: str
    experiment_id: str
    runs: tuple[tuple[str, str], ...]  # (config_id, MLflow run id), in the configs table's order
    replaced: int


def _value(x: Any) -> str:
    if hasattr(x, "tolist"):
        x = x.tolist()
    if isinstance(x, list | tuple):
        return ",".join(_value(v) for v in x)
    if isinstance(x, float) and x.is_integer():
        return str(int(x)) if abs(x) < 1e15 else repr(x)
    return str(x)


def config_params(run: Run) -> dict[str, dict[str, str]]:
    """Per config id, the MLflow params (module docstring), as strings."""
    configs = run.table("configs")
    return {str(row["config_id"]): {str(k): _value(v) for k, v in row.items()
                                    if k not in ("run_id", "config_id")}
            for row in configs.to_dict(orient="records")}


def config_means(run: Run) -> dict[str, dict[str, float]]:
    """Per config id, every metric's mean over answerable questions (canonical names)."""
    metrics = run.table("metrics")
    ans = metrics[metrics["answerable"]]
    means = ans.groupby(["config_id", "metric"], sort=True)["value"].mean().reset_index()
    out: dict[str, dict[str, float]] = {}
    for config_id, metric, value in zip(means["config_id"], means["metric"], means["value"],
                                        strict=True):
        out.setdefault(str(config_id), {})[str(metric)] = float(value)
    return out


def _names(metric_names: set[str]) -> dict[str, str]:
    mapping: dict[str, str] = {}
    for name in sorted(metric_names):
        safe = mlflow_name(name)
        if safe in mapping:
            raise RulegaugeError(f"metrics {mapping[safe]!r} and {name!r} have one MLflow name {safe!r}")
        mapping[safe] = name
    return mapping


def _prepare_store(uri: str) -> None:
    if uri.startswith("file:"):
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
        from urllib.parse import unquote, urlparse

        folder = Path(unquote(urlparse(uri).path))
        folder.mkdir(parents=True, exist_ok=True)  # OSError: an unwritable place (exit 2)
        if not os.access(folder, os.W_OK):
            raise RulegaugeError(f"{folder}: the MLflow store is not writable")
    elif uri.startswith(("http:", "https:")):  # a server: fail fast rather than retry for minutes
        os.environ.setdefault("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
        os.environ.setdefault("MLFLOW_HTTP_REQUEST_TIMEOUT", "30")


def log_run(run: Run, tracking_uri: str, *, experiment: str = DEFAULT_EXPERIMENT,
            report: Path | None = None, replace: bool = False) -> LoggedRun:
    """Log every config of ``run`` as an MLflow run (module docstring)."""
    if report is not None and not report.is_file():
        raise RulegaugeError(f"--report {report}: no such file")
    report = report or (run.path / "report.html" if (run.path / "report.html").is_file() else None)
    params, means = config_params(run), config_means(run)
    names = _names({m for per in means.values() for m in per})
    _prepare_store(tracking_uri)
    from mlflow.exceptions import MlflowException

    try:
        return _log(run, tracking_uri, experiment, (params, means, names), report, replace=replace)
    except MlflowException as exc:
        raise RulegaugeError(f"MLflow store {tracking_uri}: {exc.message}") from None


def _log(run: Run, uri: str, experiment: str,
         tables: tuple[dict[str, dict[str, str]], dict[str, dict[str, float]], dict[str, str]],
         report: Path | None, *, replace: bool) -> LoggedRun:
    from mlflow.entities import Metric, Param
    from mlflow.tracking import MlflowClient

    params, means, names = tables
    client = MlflowClient(tracking_uri=uri)
    found = client.get_experiment_by_name(experiment)
    exp_id = found.experiment_id if found is not None else client.create_experiment(experiment)
    earlier = client.search_runs([exp_id], filter_string=f"tags.`rulegauge.run_id` = '{run.run_id}'",
                                 max_results=50_000)
    if earlier and not replace:
        raise RulegaugeError(f"run {run.run_id} is already logged to experiment {experiment!r} "
                           f"({len(earlier)} MLflow runs); --replace logs it again")
    for old in earlier:
        client.delete_run(old.info.run_id)
    gold, git = run.manifest.get("goldset", {}), run.manifest.get("git") or {}
    safe = {canonical: mlflow for mlflow, canonical in names.items()}
    manifest = run.path / "manifest.json"
    n_ans = str(int(run.table("questions")["answerable"].sum()))
    stamp = int(time.time() * 1000)
    logged = []
    for config_id, config_params in params.items():
        tags = {"mlflow.runName": config_id, "rulegauge.run_id": run.run_id,
                "rulegauge.config_id": config_id, "rulegauge.goldset": str(gold.get("name", "")),
                "rulegauge.goldset_sha256": str(gold.get("sha256", "")),
                "rulegauge.commit": str(git.get("commit", "")),
                "rulegauge.kind": str(run.manifest.get("kind", ""))}
        mlrun = client.create_run(exp_id, tags=tags, run_name=config_id)
        rid = mlrun.info.run_id
        client.log_batch(
            rid, metrics=[Metric(safe[m], v, stamp, 0) for m, v in means.get(config_id, {}).items()],
            params=[Param(k, v) for k, v in {**config_params, "n_answerable": n_ans}.items()])
        client.log_artifact(rid, str(manifest))
        client.log_text(rid, json.dumps(names, indent=2, sort_keys=True), "metric-names.json")
        if report is not None:
            client.log_artifact(rid, str(report))
        client.set_terminated(rid)
        logged.append((config_id, rid))
    return LoggedRun(uri, exp_id, tuple(logged), len(earlier))
