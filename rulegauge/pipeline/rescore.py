"""``rulegauge run --from RUN``: score a new grid over an existing run's stored arm ranks.

Nothing touches the corpus or the models: the source run's tables declared
``carried`` (``questions``, ``documents``, ``chunks``, ``arm_ranks``; ``question_facts``
and ``question_judgments`` when it has them; :mod:`rulegauge.store.tables`), hash-checked when the source is opened,
are copied byte for byte into a new run directory, and every config of the
new grid is fused and scored from ``arm_ranks``. Each config's arms must be arms of
the source run, searched at least as deep as the config's depth for that arm (the
largest depth of the source configs); arm parameters cannot change (they shaped
the stored ranks). The manifest records the source run, its path and the hashes
of the tables taken from it; the gold-set and corpus sections are the source's, and so
is the depth unit (``depth_unit``: the stored ranks count chunks or pages,
:mod:`rulegauge.pipeline.depth_unit`; a new grid's depths count the same unit).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from rulegauge.core.atomic import atomic_write
from rulegauge.core.digest import file_sha256
from rulegauge.core.engines import EngineInfo
from rulegauge.core.errors import ConfigError, RulegaugeError
from rulegauge.fusion.configs import RunConfig, load_config
from rulegauge.fusion.fuse import FUSION_METHODS, RankMatrix
from rulegauge.goldset.records import Question
from rulegauge.metrics.family import Metric
from rulegauge.metrics.gold import make_gold
from rulegauge.pipeline.grid_tables import check_grid_size
from rulegauge.pipeline.lifecycle import RankInputs, execute
from rulegauge.pipeline.options import Progress, RunOptions, RunResult
from rulegauge.store.provenance import base_manifest
from rulegauge.store.readback import questions_from_frame
from rulegauge.store.rundir import Run, RunWriter, open_run
from rulegauge.store.schema import REQUIRED, carried_tables


def searched_depths(configs: Any) -> dict[str, int]:
    """Arm -> depth it was searched to in a run (the largest depth any config asked)."""
    out: dict[str, int] = {}
    for arms, depths in zip(configs["arms"], configs["depths"], strict=True):
        for a, d in zip(arms, depths, strict=True):
            out[str(a)] = max(out.get(str(a), 0), int(d))
    return out


def check_grid(cfg: RunConfig, depths: dict[str, int], source: str) -> None:
    problems = []
    for c in cfg.configs:
        for a, d in zip(c.arms, c.depths, strict=True):
            if a not in depths:
                problems.append(f"{c.config_id}: arm {a!r} is not in run {source} "
                                f"(arms: {', '.join(sorted(depths))})")
            elif d > depths[a]:
                problems.append(f"{c.config_id}: depth {d} for arm {a!r}, but run {source} "
                                f"searched it to depth {depths[a]}")
    if problems:
        raise ConfigError("the grid asks for ranks the source run does not hold:\n  "
                          + "\n  ".join(problems[:20])
                          + (f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""))


@dataclass(frozen=True)
class StoredRunSource:
    """A run from another run's stored arm ranks (the
    :class:`~rulegauge.pipeline.lifecycle.RunSource` of ``rulegauge run --from``)."""

    src: Run
    cfg: RunConfig
    questions: tuple[Question, ...]
    chunks: pd.DataFrame  # chunk_id, doc_id, page
    copied: tuple[str, ...]
    resumable: bool = False

    @classmethod
    def load(cls, options: RunOptions) -> StoredRunSource:
        if options.source_run is None:
            raise ConfigError("re-scoring needs a source run (--from RUN)")
        if options.arm_overrides:
            raise ConfigError(f"--from {options.source_run}: arm parameters cannot change when "
                              f"re-scoring stored ranks (got {sorted(options.arm_overrides)})")
        if options.goldset is not None:
            raise ConfigError("--from takes the gold set of the source run; drop --goldset")
        src = open_run(options.source_run, Path(options.runs_dir))
        carried = carried_tables()  # declared on the tables (store.tables: carried=...)
        missing = [t for t, how in (*carried.items(), ("configs", REQUIRED))
                   if how == REQUIRED and not src.has_table(t)]
        if missing:
            raise RulegaugeError(f"run {src.run_id} cannot be re-scored: no {', '.join(missing)} table(s)")
        copied = tuple(t for t in carried if src.has_table(t))
        check_grid_size(options.config)
        depths = searched_depths(src.table("configs"))
        cfg = load_config(options.config, known_arms=sorted(depths), known_methods=FUSION_METHODS.names())
        check_grid(cfg, depths, src.run_id)
        judgments = src.table("question_judgments") if src.has_table("question_judgments") else None
        questions = tuple(questions_from_frame(src.table("questions"), judgments=judgments).values())
        chunks = pq.read_table(src.path / "chunks.parquet", columns=["chunk_id", "doc_id", "page"]).to_pandas()
        return cls(src, cfg, questions, chunks, copied)

    def sizes(self) -> tuple[int, int]:
        return len(self.questions), len(self.chunks)

    def preflight(self, options: RunOptions) -> None:
        """Nothing to check: no arm runs."""

    def begin(self, writer: RunWriter, run_id: str, specs: list[Metric]) -> dict[str, Any]:
        m, cfg = self.src.manifest, self.cfg
        return {
            **base_manifest(run_id), "goldset": m.get("goldset"), "corpus": m.get("corpus"),
            "arms": m.get("arms", {}), "metrics": [s.name for s in specs],
            "depth_unit": m.get("depth_unit", "chunk"),  # the stored ranks count it
            "config": {"path": cfg.path, "sha256": cfg.sha256, "configs": [c.config_id for c in cfg.configs]},
            "source_run": {"run_id": self.src.run_id, "path": str(self.src.path.resolve()),
                           "tables": {t: m["tables"][t]["sha256"] for t in self.copied}},
        }

    def inputs(self, writer: RunWriter, engine: EngineInfo, progress: Progress | None) -> RankInputs:
        """Copy the source's tables byte for byte (atomically), then build the ranks."""
        tables = {}
        for t in self.copied:
            dst = writer.file(f"{t}.parquet")
            atomic_write(dst, lambda tmp, t=t: shutil.copyfile(self.src.path / f"{t}.parquet", tmp),
                         writer.path)
            tables[t] = {"sha256": file_sha256(dst), "rows": self.src.manifest["tables"][t]["rows"]}
        writer.update_manifest({"tables": tables})  # before reading: a copy is a table of the run
        path = writer.file("arm_ranks.parquet")
        # the arms' own scores too: the score-based fusion methods fuse them (docs/fusion.md); the foreign
        # hits (corpus/foreign) where the source kept some (an older source has no such column)
        have = pq.read_schema(path).names
        columns = ["question_id", "arm", "chunk_id", "rank"] + [c for c in ("score", "foreign") if c in have]
        arm_ranks = pq.read_table(path, columns=columns).to_pandas()
        ch = self.chunks
        matrix = RankMatrix.from_arm_ranks(arm_ranks, [q.question_id for q in self.questions],
                                           self.cfg.arm_names)
        gold = make_gold(list(self.questions), matrix, dict(zip(
            ch["chunk_id"], zip(ch["doc_id"], ch["page"].astype(int), strict=True), strict=True)))
        return RankInputs(matrix, gold)

    def result(self, path: Path, metrics: pa.Table) -> RunResult:
        return RunResult(path, None, None, self.cfg, metrics)


def rescore(options: RunOptions, progress: Progress | None = None) -> RunResult:
    """Re-score ``options.config`` over ``options.source_run``'s arm ranks (see module doc)."""
    return execute(options, StoredRunSource.load, progress)
