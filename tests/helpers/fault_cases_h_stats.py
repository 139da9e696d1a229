"""Fault-tier rows of issue 44, item 4: what the power command refuses. A drop the metric
cannot make (beyond its range) and a stated SD or a delta that is not a positive number are
exit 2 naming what is wrong, with no traceback and nothing written under runs/."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import fault_runs as fr
from tests.helpers.fault_case import Case


def _grid_run(root: Path) -> None:
    from tests.helpers.analysis import grid_configs

    fr.synthetic(root, "s1", configs=grid_configs())


POWER = ("rulegauge", "power", "s1", "--runs-dir", "{root}/runs")

STATS: tuple[Case, ...] = (
    Case("44-4-power-delta-beyond-range", _grid_run, (*POWER, "-m", "recall@5", "--delta", "2"), 2,
         "--delta 2 is beyond the range of recall@5: its values lie in [0, 1]"),
    Case("44-4-power-delta-beyond-range-mrr", _grid_run, (*POWER, "-m", "MRR@10", "--delta", "1.5"),
         2, "no drop exceeds 1"),
    Case("44-4-power-delta-not-positive", _grid_run, (*POWER, "--delta", "-0.1"), 2,
         "--delta must be a positive drop"),
)
