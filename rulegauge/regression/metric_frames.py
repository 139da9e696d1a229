"""The metric tables a comparison reads: ``metrics`` and every table a product registers
(:data:`METRIC_FRAMES`: answering's ``answer_metrics``; the kernel's own ``search_latency``),
as one long frame per side (:func:`long_metrics`), without importing any product: a side
holding a table outside the kernel's loads the products' frames by name (group
``rulegauge.stages``)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from rulegauge.core import plugins
from rulegauge.core.registry import Registry
from rulegauge.metrics.latency import TABLE as SEARCH_LATENCY
from rulegauge.metrics.latency import latency_frame
from rulegauge.store.baseline import Side
from rulegauge.store.tables import KERNEL_TABLES

MetricFrame = Callable[[Side], pd.DataFrame]
"""A side -> its rows of one table's metrics as one long frame: ``question_id``,
``config_id``, ``answerer``, ``metric``, ``value``, ``answerable`` [, ``outcome``]."""

METRIC_FRAMES: Registry[MetricFrame] = Registry("comparable metric table")
"""Table name -> its :data:`MetricFrame`: the tables whose metrics a comparison reads
beside ``metrics``, registered by the product that writes them (answering:
``answer_metrics``, in :mod:`rulegauge.answering.stage`; plug-in group ``rulegauge.stages``)."""

METRIC_FRAMES.add(SEARCH_LATENCY, latency_frame)  # the kernel's own measured metrics (search time)

PRODUCT_FRAMES = "rulegauge.stages"


def _load_frames(side: Side) -> None:
    """Load the products' metric frames when ``side`` holds a table outside the kernel's
    (a side whose manifest lists no tables is assumed to)."""
    tables = side.manifest.get("tables")
    if not isinstance(tables, dict) or set(tables) - set(KERNEL_TABLES):
        plugins.load(PRODUCT_FRAMES)


def long_metrics(side: Side) -> pd.DataFrame:
    """``metrics`` and every registered metric table the side has, in one frame;
    ``outcome`` where a table gives one (NaN otherwise)."""
    cols = ["question_id", "config_id", "answerer", "metric", "value", "answerable"]
    frames = [side.table("metrics").assign(answerer="")[cols]]
    _load_frames(side)
    frames += [frame(side) for name, frame in METRIC_FRAMES.items() if side.has_table(name)]
    out = pd.concat(frames, ignore_index=True)
    if "outcome" not in out.columns:
        out["outcome"] = np.nan
    return out
