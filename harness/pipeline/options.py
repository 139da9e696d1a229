"""What a run takes and gives: options, result, the metric list, and the scoring step.

Shared by both ways of making a run (:mod:`harness.pipeline.retrieval`, from a gold
set; :mod:`harness.pipeline.rescore`, from another run's arm ranks), and light to
import: re-scoring never loads the corpus, arm or model code.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa

from harness.core.engines import EngineChoice
from harness.core.errors import ConfigError, Problem, RegistryError, ValidationError
from harness.fusion.configs import RunConfig
from harness.fusion.fuse import RankMatrix
from harness.metrics.family import Metric
from harness.metrics.ranking import DEFAULT_METRICS, parse
from harness.pipeline.grid_tables import StorePolicy, grid_tables
from harness.store.rundir import RunWriter

if TYPE_CHECKING:
    from harness.corpus.records import Corpus
    from harness.goldset.records import GoldSet

Progress = Callable[[str, int], Any]  # (description, total) -> context manager with advance(n)


@dataclass(frozen=True)
class RunOptions:
    goldset: Path | None = None
    config: Path | None = None
    runs_dir: Path = Path("runs")
    run_id: str | None = None
    metrics: tuple[str, ...] | None = None  # None: the grid's `metrics = [...]`, else DEFAULT_METRICS
    cache_dir: Path | None = None
    chunking: Any = None  # harness.corpus.chunking.ChunkingOptions; None = defaults
    answerers: tuple[tuple[str, dict[str, Any]], ...] = ()
    answer_configs: tuple[str, ...] | None = None
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


def metric_specs(options: RunOptions, cfg: RunConfig) -> list[Metric]:
    """The metrics of a run: ``-m`` names, else the grid file's top-level ``metrics``
    list, else :data:`DEFAULT_METRICS`; aliases (ranx, ir_measures) map to canonical
    names, repeats after mapping are dropped, every unknown name is reported."""
    where = "--metric" if options.metrics else f"{cfg.path}: metrics"
    names: Any = options.metrics or cfg.raw.get("metrics") or DEFAULT_METRICS
    if isinstance(names, str) or not isinstance(names, list | tuple) \
            or not all(isinstance(n, str) for n in names):
        raise ValidationError([Problem(where, f"must be a list of metric names, got {names!r}")],
                              "invalid metric list")
    specs: dict[str, Metric] = {}
    problems = []
    for n in names:
        try:
            s = parse(n)
        except RegistryError as exc:
            problems.append(Problem(where, str(exc)))
            continue
        specs.setdefault(s.name, s)
    if problems:
        raise ValidationError(problems, "invalid metric list")
    return list(specs.values())


def configs_frame(cfg: RunConfig) -> pd.DataFrame:
    return pd.DataFrame([{
        "config_id": c.config_id, "name": c.name, "kind": c.kind, "method": c.method, "k": c.k,
        "arms": list(c.arms), "weights": list(c.weights), "depths": list(c.depths),
        "ceiling": c.ceiling, "params": json.dumps(c.params(), sort_keys=True),
    } for c in cfg.configs])


def check_answering(options: RunOptions, cfg: RunConfig, stored: list[Any]) -> None:
    """Answering reads fused rows: its configs must be stored deep enough."""
    if not options.answerers:
        return
    from harness.answering.read import ReadOptions

    wanted = options.answer_configs or (cfg.configs[0].config_id,)
    have = {c.config_id for c in stored} | {c.name for c in stored}
    missing = [c for c in wanted if c not in have]
    pool = ReadOptions().pool
    if missing or 0 < options.store.depth < pool:
        raise ConfigError(f"answering reads the fused rows of {list(wanted)}: store them "
                          f"(--fused-config; missing {missing}) to a depth of at least {pool} "
                          f"(--fused-depth 0 or >= {pool}; now {options.store.depth})")


def score_and_write(writer: RunWriter, matrix: RankMatrix, gold: Any, cfg: RunConfig,
                    specs: list[Metric], stored: list[Any], depth: int,
                    progress: Progress | None) -> pa.Table:
    with (progress(f"scoring {len(cfg.configs)} configs", 1) if progress else nullcontext()) as bar:
        metrics, fused = grid_tables(matrix, gold, cfg, specs, stored, depth)
        if bar is not None:
            bar(1)
    writer.write_table("fused", fused, {"rank_*": list(cfg.arm_names)})
    writer.write_arrow("metrics", metrics)
    writer.update_manifest({"fused_rows": {"configs": [c.config_id for c in stored],
                                           "depth": depth, "rows": len(fused)}})
    return metrics
