"""Metric against one fusion parameter: RRF's ``k`` or one arm's weight, one line per
arm subset.

A grid varies a few parameters at once (docs/grids/grid-200.toml: 50 values of k x 4
arm subsets). :func:`sweep_frame` reads each config's parameters from the run's
``configs`` table (``method``, ``arms``, ``weights``, ``depths`` and the ``params``
JSON, :mod:`rulegauge.fusion.configs`) and groups the configs that differ *only* in the
swept parameter into one line: for ``k``, the same method, arm subset, weights, depths
and other parameters; for ``weight:<arm>``, the same with every other arm's weight
held. A group with fewer than two distinct values is no line. One-arm configs
(``kind == "arm"``) are left out: they have no fused parameters.

:func:`sweep_figure` draws one line per group (label: the arm subset, plus the method
and held parameters when several groups share a subset), points of chosen configs
ringed and the service config in red. Values are the metric's aggregate over its
scope (:func:`rulegauge.metrics.info.scored_rows`), the same numbers as the tables.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from rulegauge.analysis.figures import BEST, MAX_WIDTH_IN, SERVICE, plain_text

__all__ = ["sweep_figure", "sweep_frame", "sweep_params"]


def _params(row: Mapping[Any, Any]) -> dict[str, object]:
    raw = row.get("params")
    p: dict[str, object] = json.loads(str(raw)) if isinstance(raw, str) and raw else {}
    p.setdefault("method", str(row["method"]))
    arms = [str(a) for a in list(row["arms"])]
    p["arms"] = arms
    p["weights"] = dict(zip(arms, (float(w) for w in list(row["weights"])), strict=True))
    if "depths" in row and row["depths"] is not None:
        p["depths"] = [int(d) for d in list(row["depths"])]
    if row.get("k") is not None and math.isfinite(float(row["k"])):
        p.setdefault("k", float(row["k"]))
    return p


def sweep_params(configs: pd.DataFrame) -> list[str]:
    """The parameters some line can sweep in this run: ``k`` and ``weight:<arm>``, in
    that order (arms by name), those with at least one line of two points."""
    frame = sweep_frame(configs, pd.Series(dtype=float), None)
    return list(dict.fromkeys(frame["param"])) if not frame.empty else []


def sweep_frame(configs: pd.DataFrame, values: pd.Series, param: str | None) -> pd.DataFrame:
    """Columns ``param``, ``line`` (label), ``subset`` (arm subset), ``x``,
    ``config_id``, ``value`` (``values[config_id]``, NaN when absent): one row per
    config on a line of ``param`` (every sweepable parameter when None), sorted by
    parameter, line and x."""
    rows = []
    fused = [r for r in configs.to_dict(orient="records") if str(r["kind"]) != "arm"]
    parsed = [(str(r["config_id"]), _params(r)) for r in fused]
    arms = sorted({a for _, p in parsed for a in p["arms"]})  # type: ignore[attr-defined]
    names = ["k", *(f"weight:{a}" for a in arms)]
    for name in names if param is None else [param]:
        groups: dict[str, list[tuple[float, str]]] = {}
        subsets: dict[str, str] = {}
        for cid, p in parsed:
            held = dict(p)
            if name == "k":
                if "k" not in held:
                    continue
                x = float(held.pop("k"))  # type: ignore[arg-type]
            else:
                arm = name.split(":", 1)[1]
                weights = dict(held["weights"])  # type: ignore[call-overload]
                if arm not in weights:
                    continue
                x = float(weights.pop(arm))
                held["weights"] = weights
            key = json.dumps(held, sort_keys=True)
            groups.setdefault(key, []).append((x, cid))
            subsets[key] = "+".join(p["arms"])  # type: ignore[arg-type]
        lines = {k: g for k, g in groups.items() if len({x for x, _ in g}) >= 2}
        per_subset: dict[str, int] = {}
        for k in lines:
            per_subset[subsets[k]] = per_subset.get(subsets[k], 0) + 1
        for key, g in lines.items():
            held = json.loads(key)
            label = subsets[key]
            if per_subset[label] > 1:  # name what else is held
                extra = {k: v for k, v in held.items() if k not in ("arms", "depths")}
                label += " (" + ", ".join(f"{k}={v}" for k, v in sorted(extra.items())) + ")"
            for x, cid in g:
                rows.append({"param": name, "line": label, "subset": subsets[key], "x": x,
                             "config_id": cid, "value": float(values.get(cid, math.nan))})
    cols = ["param", "line", "subset", "x", "config_id", "value"]
    frame = pd.DataFrame(rows, columns=cols)
    return frame.sort_values(["param", "line", "x", "config_id"], kind="stable").reset_index(drop=True)


@plain_text
def sweep_figure(frame: pd.DataFrame, metric: str, chosen: tuple[str, ...] = (),
                 service: str | None = None) -> Figure:
    """One panel: ``metric`` against the frame's parameter, one line per group
    (:func:`sweep_frame` for one parameter). Chosen configs ringed, the service red."""
    param = str(frame["param"].iloc[0]) if len(frame) else "k"
    fig = Figure(figsize=(min(MAX_WIDTH_IN, 6.6), 4.0), layout="constrained")
    ax = fig.subplots()
    marked = set(chosen)
    for line, g in frame.groupby("line", sort=True):
        ax.plot(g["x"], g["value"], marker="o", ms=3, lw=1.4, label=str(line))
        ring = g[g["config_id"].isin(marked)]
        ax.scatter(ring["x"], ring["value"], s=46, facecolors="none", edgecolors=BEST, lw=1)
    svc = frame[frame["config_id"] == service]
    if len(svc):
        ax.scatter(svc["x"], svc["value"], s=70, color=SERVICE, zorder=5, label="service config")
    ax.set_xlabel("RRF k" if param == "k" else f"weight of {param.split(':', 1)[1]}", fontsize=10)
    ax.set_ylabel(f"{metric} (mean over its scope)", fontsize=10)
    ax.grid(color="#eee")
    ax.tick_params(labelsize=9)
    if np.isfinite(frame["value"].to_numpy(float)).any():
        ax.legend(fontsize=8, loc="best", title="arm subset", title_fontsize=8)
    return fig
