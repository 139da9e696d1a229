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

All or nothing, through a resumable journal kept in MLflow itself: each config's MLflow run
is ``FINISHED`` only once everything of it is logged, and only when every config's run is, a
last pass tags them all ``rulegauge.export_complete = true``. An export killed part-way
leaves runs without that tag; the next export of the same run says the earlier one is
incomplete and completes it: finished runs of known configs are kept (one per config),
unfinished ones deleted, the missing configs logged, then every run tagged. A query for the
tag sees a run's configs all or none. In a file store, a run folder whose ``meta.yaml`` a
kill left torn (MLflow cannot read it) is removed first, and said. (A staging store moved
into place is not used: MLflow records absolute artifact locations and store-specific
experiment ids in every run, so a moved run would point at the staging folder.)

The default store is the local folder ``mlruns`` (MLflow's file store, which MLflow 3 keeps behind
``MLFLOW_ALLOW_FILE_STORE=true``: set here for ``file:`` URIs unless the user set it);
nothing goes over the network unless the URI is a server's. ``mlflow`` is imported inside
:func:`log_run` (the ``[mlflow]`` extra).
Reference: https://mlflow.org/docs/latest/ml/tracking/
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rulegauge.core.errors import RulegaugeError
from rulegauge.store.rundir import Run

DEFAULT_EXPERIMENT = "rulegauge"
COMPLETE_TAG = "rulegauge.export_complete"
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
    resumed: int = 0  # configs kept from an earlier, incomplete export
    notes: tuple[str, ...] = ()  # what the export found and did (torn folders, an incomplete export)


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

    notes = _sweep_torn(tracking_uri)
    try:
        logged = _log(run, tracking_uri, experiment, (params, means, names), report, replace=replace)
    except MlflowException as exc:
        raise RulegaugeError(f"MLflow store {tracking_uri}: {exc.message}") from None
    except RulegaugeError:
        raise
    except Exception as exc:  # e.g. a store file another process left torn: a message, never a traceback
        raise RulegaugeError(f"MLflow store {tracking_uri}: {type(exc).__name__}: {exc}") from None
    return dataclasses.replace(logged, notes=(*notes, *logged.notes))


def _store_folder(uri: str) -> Path | None:
    if not uri.startswith("file:"):
        return None
    from urllib.parse import unquote, urlparse

    return Path(unquote(urlparse(uri).path))


def _torn(folder: Path) -> bool:
    """A run folder MLflow cannot read: ``meta.yaml`` missing (beside other files), empty,
    not YAML, or without its ``run_id``."""
    import yaml

    meta = folder / "meta.yaml"
    if not meta.is_file():
        return any(folder.iterdir())
    try:
        data = yaml.safe_load(meta.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return True
    return not isinstance(data, dict) or not data.get("run_id")


def _sweep_torn(uri: str) -> tuple[str, ...]:
    """Remove run folders whose ``meta.yaml`` is missing or unreadable (a killed write) from a
    file store's experiments; what was removed, as notes."""
    root = _store_folder(uri)
    if root is None or not root.is_dir():
        return ()
    notes = []
    for exp in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")
                      and (p / "meta.yaml").is_file()):
        for folder in sorted(p for p in exp.iterdir() if p.is_dir() and not p.is_symlink()
                             and len(p.name) == 32 and p.name.isalnum()):
            if not _torn(folder):
                continue
            # removed, not moved: MLflow reads every folder of the store (``.trash`` as deleted
            # experiments), so debris kept anywhere inside it would break the store again
            shutil.rmtree(folder)
            notes.append(f"removed the torn MLflow run folder {folder} (meta.yaml unreadable: a killed write)")
    return tuple(notes)


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
    keep, drop, notes = _settle_earlier(earlier, list(params), run.run_id, experiment, replace=replace)
    for old in drop:
        client.delete_run(old)
    gold, git = run.manifest.get("goldset", {}), run.manifest.get("git") or {}
    safe = {canonical: mlflow for mlflow, canonical in names.items()}
    manifest = run.path / "manifest.json"
    n_ans = str(int(run.table("questions")["answerable"].sum()))
    stamp = int(time.time() * 1000)
    logged = []
    for config_id, config_params in params.items():
        if config_id in keep:
            logged.append((config_id, keep[config_id]))
            continue
        # the run id first: a file store writes tags one by one, and the journal finds runs by it
        tags = {"rulegauge.run_id": run.run_id, "mlflow.runName": config_id,
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
        client.set_terminated(rid)  # FINISHED: this config's run is whole
        logged.append((config_id, rid))
    for _config_id, rid in logged:  # the last pass: only now is the export complete
        client.set_tag(rid, COMPLETE_TAG, "true")
    replaced = len(drop) if replace else 0
    return LoggedRun(uri, exp_id, tuple(logged), replaced, len(keep), notes)


def _settle_earlier(earlier: list[Any], config_ids: list[str], run_id: str, experiment: str, *,
                    replace: bool) -> tuple[dict[str, str], list[str], tuple[str, ...]]:
    """What to do with the MLflow runs an earlier export of ``run_id`` left: (config id ->
    MLflow run id kept, MLflow run ids to delete, notes). A complete earlier export is
    refused unless ``replace``; an incomplete one is completed (module docstring)."""
    if not earlier:
        return {}, [], ()
    every = [r.info.run_id for r in earlier]
    finished: dict[str, str] = {}
    for r in sorted(earlier, key=lambda r: (r.info.start_time or 0, r.info.run_id)):
        cfg = r.data.tags.get("rulegauge.config_id", "")
        if r.info.status == "FINISHED" and cfg in config_ids and cfg not in finished:
            finished[cfg] = r.info.run_id
    complete = (len(earlier) == len(config_ids) == len(finished)
                and all(r.data.tags.get(COMPLETE_TAG) == "true" for r in earlier))
    if complete and not replace:
        raise RulegaugeError(f"run {run_id} is already logged to experiment {experiment!r} "
                             f"({len(earlier)} MLflow runs); --replace logs it again")
    if replace:
        return {}, every, ()
    note = (f"an earlier export of run {run_id} to experiment {experiment!r} is incomplete "
            f"({len(finished)} of {len(config_ids)} configs finished, {len(earlier) - len(finished)} "
            "MLflow runs unfinished or extra): completing it")
    kept = set(finished.values())
    return finished, [rid for rid in every if rid not in kept], (note,)
