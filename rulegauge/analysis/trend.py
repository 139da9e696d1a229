"""Trends over runs: each series per run, and mean +- k sigma alerts on the newest run.

The runs of one gold set (retrieval runs) or the imported production ruling pages
(``rulings`` runs), complete ones only, oldest first by the manifest's ``created`` time
then run id, give one value per run for each *series*:

* ``metric``: the mean of a metric per config over answerable questions (the honest mean:
  unanswerable questions' rows are left out, as in ranking means);
* ``band``: the share of questions whose rank-1 fused chunk has ``score_ratio`` (fused
  score / the config's ceiling) in a band: ``low`` below 1/3, ``mid`` from 1/3 to 2/3,
  ``high`` from 2/3 (for RRF over three arms, 1/3 is one arm's #1 vote alone); configs of
  methods without a ceiling have no band series;
* ``top1_arm``: the share of questions whose rank-1 fused chunk the arm voted for;
* ``voted_arm``: the share of stored fused rows (top ``depth``) the arm voted for.

For ruling pages, one page is one question: ``band`` uses production's printed rank-1
score ratio, and the arm shares come from the pages whose rank-1 score decodes to exactly
one rank tuple (arms named ``arm1``.. in production's order, since production prints no
arm names).

Alert rule (Shewhart's control chart, as Evidently's and Arize's mean +- k sigma monitors
use it): the newest run's value ``x`` against the ``history`` runs before it, with mean
``mu`` and sample standard deviation ``sigma`` (ddof 1); an alert when ``|x - mu| >
max(k * max(sigma, floor), tolerance)``. A rulegauge rerun is identical to the bit, so a
flat history (sigma 0) alerts on any real change; ``tolerance`` (absolute, default 0)
is the change a team accepts without an alert. The floor (:data:`SIGMA_FLOOR`) keeps a perfectly flat history from
alerting on a last-bit float difference. Non-finite values (NaN, an infinite median rank)
are left out; a series with fewer than ``min_history`` earlier values never alerts and is
counted as ``too_short``.

Reference: W. A. Shewhart, "Economic Control of Quality of Manufactured Product" (1931).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rulegauge.analysis.trend_series import ruling_series, run_series
from rulegauge.core.errors import RulegaugeError
from rulegauge.store.rundir import Run, run_kind, run_metrics
from rulegauge.store.runscan import readable

__all__ = ["SIGMA_FLOOR", "Alert", "Trend", "collect_runs", "trend"]

SIGMA_FLOOR = 1e-9
"""Smallest sigma an alert is measured against (a flat history's last-bit noise)."""
MAX_RUNS = 10_000
"""Most runs a trend reads (a runs folder of a scheduled job grows by one a day)."""


@dataclass(frozen=True)
class Alert:
    """One series of the newest run outside mean +- k sigma of its history."""

    series: str
    config_id: str
    name: str
    value: float
    mean: float
    sigma: float
    k: float
    history: int

    @property
    def direction(self) -> str:
        return "up" if self.value > self.mean else "down"


@dataclass(frozen=True)
class Trend:
    """Every series per run (``values``: run_id, created, series, config_id, name, value)
    and the alerts of the newest run."""

    kind: str
    goldset: str | None
    runs: tuple[str, ...]
    values: pd.DataFrame
    alerts: tuple[Alert, ...]
    checked: int
    too_short: int
    skipped: tuple[str, ...] = ()
    """Runs left out, each with why: ``"b (table metrics: sha256 mismatch ...)"`` (a damaged run)."""
    missing: tuple[str, ...] = ()
    """Asked metrics some runs did not score: ``"recall@5: not in run b"`` (followed over the others)."""


def collect_runs(runs_dir: Path, *, kind: str = "retrieval", goldset: str | None = None) -> list[Path]:
    """Complete runs of ``kind`` under ``runs_dir``, oldest first; for retrieval runs, of
    the gold set named ``goldset`` (default: the newest run's gold set)."""
    found: list[tuple[Path, dict[str, Any]]] = []
    for p, m in readable(runs_dir):  # a damaged run is left out, with a warning naming it
        if m.get("status") == "complete" and run_kind(m) == kind:
            found.append((p, m))
    if kind == "retrieval":
        if goldset is None and found:
            goldset = str(found[-1][1].get("goldset", {}).get("name"))
        found = [(p, m) for p, m in found if m.get("goldset", {}).get("name") == goldset]
    if len(found) > MAX_RUNS:
        raise RulegaugeError(f"{runs_dir}: {len(found):,} runs; a trend reads at most {MAX_RUNS:,}")
    return [p for p, _ in found]


def _alerts(values: pd.DataFrame, newest: str, *, k: float, min_history: int,
            tolerance: float = 0.0) -> tuple[list[Alert], int, int]:
    alerts: list[Alert] = []
    checked = too_short = 0
    for (series, config_id, name), g in values.groupby(["series", "config_id", "name"], sort=True):
        last = g[g.run_id == newest]["value"]
        history = g[g.run_id != newest]["value"].to_numpy(dtype=float)
        history = history[np.isfinite(history)]  # an infinite median rank is no level to compare
        if last.empty or not math.isfinite(float(last.iloc[0])):
            continue
        if len(history) < min_history:
            too_short += 1
            continue
        checked += 1
        x, mu = float(last.iloc[0]), float(np.mean(history))
        sigma = float(np.std(history, ddof=1)) if len(history) > 1 else 0.0
        if abs(x - mu) > max(k * max(sigma, SIGMA_FLOOR), tolerance):
            alerts.append(Alert(str(series), str(config_id), str(name), x, mu, sigma, k, len(history)))
    return alerts, checked, too_short


def trend(runs: Sequence[Path], *, kind: str = "retrieval", metrics: Sequence[str] = (),
          configs: Sequence[str] = (), k: float = 3.0, min_history: int = 3,
          tolerance: float = 0.0) -> Trend:
    """Series per run and the newest run's alerts (module docstring). ``metrics`` and
    ``configs`` narrow the series (default: every metric and config of the runs).

    Runs of different metric sets live together: each metric is followed over the runs
    that scored it (``Trend.missing`` names the others); a metric in none of them is bad
    input. A run that cannot be opened (a table failing its manifest hash) is left out
    and named in ``Trend.skipped``; the newest run is the newest readable one."""
    if not runs:
        raise RulegaugeError(f"no complete {kind} runs to follow")
    if not (k > 0 and math.isfinite(k)):
        raise RulegaugeError(f"k must be a positive number of standard deviations, got {k}")
    if not (tolerance >= 0 and math.isfinite(tolerance)):
        raise RulegaugeError(f"tolerance must be a finite number >= 0, got {tolerance}")
    if not 1 <= min_history <= MAX_RUNS:
        raise RulegaugeError(f"min_history must be 1..{MAX_RUNS}, got {min_history}")
    frames, kept, skipped = [], [], []
    scored: dict[str, set[str]] = {}  # run id -> the metrics it scored
    goldset = None
    for p in runs:
        try:  # a damaged run (a table failing its manifest hash) must not end the trend
            run = Run(p)
        except RulegaugeError as exc:
            skipped.append(f"{Path(p).name} ({exc})")
            continue
        m = run.manifest
        goldset = m.get("goldset", {}).get("name", goldset)
        df = ruling_series(run) if kind == "rulings" else run_series(run, metrics)
        frames.append(df.assign(run_id=run.run_id, created=str(m.get("created", ""))))
        kept.append(run.run_id)
        if kind != "rulings":
            scored[run.run_id] = run_metrics(run.path, m)
    if not frames:
        raise RulegaugeError(f"no readable complete {kind} run to follow; skipped: {'; '.join(skipped)}")
    values = pd.concat(frames, ignore_index=True)
    missing = _missing_metrics(scored, metrics)
    if configs:
        unknown = sorted(set(configs) - set(values["config_id"]))
        if unknown:
            raise RulegaugeError(f"config(s) {', '.join(unknown)} are in none of the runs; "
                               f"known: {', '.join(sorted(set(values['config_id'])))}")
        values = values[values["config_id"].isin(configs)]
    values = values[["run_id", "created", "series", "config_id", "name", "value"]].reset_index(drop=True)
    alerts, checked, too_short = _alerts(values, kept[-1], k=k, min_history=min_history, tolerance=tolerance)
    return Trend(kind, goldset, tuple(kept), values, tuple(alerts), checked, too_short,
                 tuple(skipped), missing)


def _missing_metrics(scored: dict[str, set[str]], metrics: Sequence[str]) -> tuple[str, ...]:
    """``"metric: not in run a, b"`` for each asked metric some runs lack (``scored``: run id
    -> its metrics, oldest first); a metric in none of them is bad input, naming theirs."""
    everywhere = set().union(*scored.values()) if scored else set()
    unknown = [m for m in dict.fromkeys(metrics) if m not in everywhere]
    if unknown:
        raise RulegaugeError(f"metric(s) {', '.join(unknown)} are in none of the runs; "
                             f"they have: {', '.join(sorted(everywhere)) or '(no metrics)'}")
    out = []
    for m in dict.fromkeys(metrics):
        lacking = [r for r, names in scored.items() if m not in names]
        if lacking:
            out.append(f"{m}: not in run {', '.join(lacking)}")
    return tuple(out)
