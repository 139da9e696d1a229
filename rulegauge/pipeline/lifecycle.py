"""One run lifecycle: every ``rulegauge run`` goes through the same steps, whatever its source.

A *source* says where a run's ranks come from: a gold set (:class:`rulegauge.pipeline.
retrieval.GoldsetSource`: build the corpus, search every arm) or a stored run
(:class:`rulegauge.pipeline.rescore.StoredRunSource`, ``--from``: copy its tables).
:func:`execute` takes a source through the steps below; each step returns what the
manifest records and the lifecycle writes it (one manifest update per step):

1. checks, before any folder exists: run id, engine, the source's own inputs
   (:meth:`RunSource.load`), every config's fusion method (:mod:`rulegauge.fusion.contract`),
   metric list, grid size and fused-row budget, each named stage's ``preflight``
   (answering: configs stored, answerer endpoints), the source's preflight (arms);
2. the engine session opens (a dead ``--address`` writes nothing), then the writer;
3. ``begin``: the manifest's provenance sections (or, on resume, the check that the
   inputs still hash the same) and the engine;
4. ``inputs``: the source writes its tables and returns the rank matrix and gold pages;
5. ``configs``, then scoring: the ``metrics`` and ``fused`` tables of the grid;
6. each named stage's ``after_score``, on the engine of the run (answering adds its tables);
7. each named stage's ``at_status``, then status ``complete``; on any
   :class:`RulegaugeError` the status is ``failed`` with the error; the writer is closed
   either way.

The named stages are :mod:`rulegauge.pipeline.stages`: a product plugs in there, and
this module imports none (a run that names no stage never loads one).

Edge cases: a source that cannot resume (``resumable = False``) refuses a run folder
that already holds a manifest, before anything is written to it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pandas as pd
import pyarrow as pa

from rulegauge.core.engines import EngineInfo, open_engine
from rulegauge.core.errors import RulegaugeError
from rulegauge.fusion.configs import FusionConfig, RunConfig
from rulegauge.fusion.contract import check_configs
from rulegauge.fusion.fuse import RankMatrix
from rulegauge.fusion.method import config_ceiling
from rulegauge.metrics.family import Metric
from rulegauge.metrics.gold import Gold
from rulegauge.pipeline.grid_tables import check_budget, grid_tables
from rulegauge.pipeline.options import Progress, RunOptions, RunResult
from rulegauge.pipeline.run_checks import metric_specs
from rulegauge.pipeline.stages import requested
from rulegauge.store.provenance import now_iso
from rulegauge.store.rundir import MANIFEST, RunWriter, check_run_id, failure_reason, new_run_id, run_path


@dataclass(frozen=True)
class RankInputs:
    """What a source's ``inputs`` step gives the scoring: the rank matrix, the gold
    pages, and what the manifest records of the step (e.g. ``arms``)."""

    matrix: RankMatrix
    gold: Gold
    manifest: dict[str, Any] = field(default_factory=dict)


class RunSource(Protocol):
    """Where a run's inputs come from (see the module docstring for the steps)."""

    @property
    def cfg(self) -> RunConfig:
        """The grid the run scores."""
        ...

    @property
    def resumable(self) -> bool:
        """Whether an existing run folder is resumed (else refused)."""
        ...

    def sizes(self) -> tuple[int, int]:
        """(questions, chunks): what the fused-row budget is checked against."""
        ...

    def preflight(self, options: RunOptions) -> None:
        """Last checks before any folder exists (e.g. every arm's endpoint)."""
        ...

    def begin(self, writer: RunWriter, run_id: str, specs: list[Metric]) -> dict[str, Any]:
        """The manifest's provenance sections (raise when a resumed run's inputs changed)."""
        ...

    def inputs(self, writer: RunWriter, engine: EngineInfo, progress: Progress | None) -> RankInputs:
        """Write the source's tables; return what scoring reads."""
        ...

    def result(self, path: Path, metrics: pa.Table) -> RunResult:
        ...


def configs_frame(cfg: RunConfig) -> pd.DataFrame:
    """The ``configs`` table: one row per config of the grid (single-arm ones included)."""
    return pd.DataFrame([{
        "config_id": c.config_id, "name": c.name, "kind": c.kind, "method": c.method, "k": c.k,
        "arms": list(c.arms), "weights": list(c.weights), "depths": list(c.depths),
        "ceiling": config_ceiling(c), "params": json.dumps(c.params(), sort_keys=True),
    } for c in cfg.configs])


def execute(options: RunOptions, load: Callable[[RunOptions], RunSource],
            progress: Progress | None = None) -> RunResult:
    """Run the lifecycle on the source ``load(options)`` returns (a :class:`RunSource`;
    ``load`` raises on bad input, before any folder exists)."""
    if options.run_id is not None:
        check_run_id(options.run_id)
    options.engine.check()  # components load by name as the run asks for them (core/plugins)
    stages = requested(options)  # an unknown stage name fails here
    source = load(options)
    check_configs(source.cfg.configs)  # every fusion method's contract, probed before anything is written
    specs = metric_specs(options, source.cfg)
    stored = check_budget(*source.sizes(), source.cfg, options.store)
    for s, record in stages:  # e.g. a dead answerer endpoint fails here, before any retrieval work
        s.preflight(record, options, source.cfg, stored)
    source.preflight(options)
    run_id = options.run_id or new_run_id()
    path = run_path(Path(options.runs_dir), run_id)
    if not source.resumable and (path / MANIFEST).exists():
        raise RulegaugeError(f"{path} already exists; a re-scored run needs a new --run-id")
    with contextlib.ExitStack() as running:  # the engine starts before any folder: a dead --address writes nothing
        engine = running.enter_context(open_engine(options.engine))
        writer = RunWriter(path)
        try:
            writer.update_manifest({**source.begin(writer, run_id, specs),
                                    "engine": engine.describe()})
            ranks = source.inputs(writer, engine, progress)
            if ranks.manifest:
                writer.update_manifest(ranks.manifest)
            metrics = _score(writer, ranks, source.cfg, specs, stored, options, progress)
            for s, record in stages:
                s.after_score(record, writer.path, options.engine)
            for s, record in stages:
                added = s.at_status(record, writer.path)
                if added:
                    writer.update_manifest(added)
            running.close()  # the engine stops before the run is complete: a stop that fails, fails the run
            writer.update_manifest({"status": "complete", "finished": now_iso()})
            return source.result(writer.path, metrics)
        except BaseException as exc:  # whatever ended it (an interrupt too), the manifest says failed, and why
            # the disk may be what failed: then the first error is the one to show
            with contextlib.suppress(Exception):
                writer.mark_failed(failure_reason(exc))  # a complete run refused again stays complete
            raise
        finally:
            writer.close()


def _score(writer: RunWriter, ranks: RankInputs, cfg: RunConfig, specs: list[Metric],
           stored: list[FusionConfig], options: RunOptions, progress: Progress | None) -> pa.Table:
    """The ``configs``, ``fused`` and ``metrics`` tables of the grid."""
    if not writer.has_table("configs"):
        writer.write_table("configs", configs_frame(cfg))
    depth = options.store.depth
    with (progress(f"scoring {len(cfg.configs)} configs", 1) if progress else nullcontext()) as bar:
        with writer.stream("metrics") as put:  # written while the pass goes on
            grid = grid_tables(ranks.matrix, ranks.gold, cfg, specs, stored, depth, metric_sink=put)
            rows = writer.write_parts("fused", grid.fused_parts(), {"rank_*": list(cfg.arm_names)})  # the pass
        metrics = grid.metrics()
        if bar is not None:
            bar(1)
    writer.update_manifest({"fused_rows": {"configs": [c.config_id for c in stored],
                                           "depth": depth, "rows": rows}})
    return metrics
