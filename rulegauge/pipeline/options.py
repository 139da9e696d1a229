"""What a run takes and gives: :class:`RunOptions` and :class:`RunResult`.

Options only (frozen records, light to import): the steps that read them are in
:mod:`rulegauge.pipeline.lifecycle`, the checks in :mod:`rulegauge.pipeline.run_checks`.
A product's options are its own record, carried opaquely in :attr:`RunOptions.stages`
under its stage's name (:mod:`rulegauge.pipeline.stages`): the kernel never imports the
product to type it, and each product checks and reads only its own record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa

from rulegauge.core.engines import EngineChoice
from rulegauge.fusion.configs import RunConfig
from rulegauge.pipeline.grid_tables import StorePolicy

if TYPE_CHECKING:
    from rulegauge.corpus.records import Corpus
    from rulegauge.goldset.records import GoldSet

Progress = Callable[[str, int], Any]  # (description, total) -> context manager with advance(n)


@dataclass(frozen=True)
class RunOptions:
    goldset: Path | None = None
    config: Path | None = None
    runs_dir: Path = Path("runs")
    run_id: str | None = None
    metrics: tuple[str, ...] | None = None  # None: the grid's `metrics = [...]`, else DEFAULT_METRICS
    cache_dir: Path | None = None
    chunking: Any = None  # rulegauge.corpus.chunking.ChunkingOptions; None = defaults
    depth_unit: str = "chunk"  # what an arm's depth counts: chunk or page (pipeline.depth_unit)
    # (stage name, that stage's own options record), in order: the products a run adds
    # (rulegauge.pipeline.stages; answering's record is rulegauge.answering.stage.AnswerStage)
    stages: tuple[tuple[str, object], ...] = ()
    arm_overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    allow_outside: bool = False  # documents outside the gold set's folder (load_goldset)
    store: StorePolicy = field(default_factory=StorePolicy)
    source_run: Path | None = None  # re-score this run's arm ranks (no corpus, no models)
    engine: EngineChoice = field(default_factory=EngineChoice)  # where embedding/answering run


@dataclass(frozen=True)
class RunResult:
    """What a run wrote: its directory, inputs, and the metrics table as Arrow
    (``metrics`` converts it to pandas on first use: millions of rows for a large grid)."""

    path: Path
    goldset: GoldSet | None  # None for a run re-scored from another run's arm ranks
    corpus: Corpus | None
    config: RunConfig
    metrics_table: pa.Table

    @cached_property
    def metrics(self) -> pd.DataFrame:
        df: pd.DataFrame = self.metrics_table.to_pandas()
        return df
