"""``harness run --from RUN``: score a new grid over an existing run's stored arm ranks.

Nothing touches the corpus or the models: the source run's ``questions``,
``question_facts`` (when it has one), ``documents``, ``chunks`` and ``arm_ranks``
tables (hash-checked when the source is opened) are copied byte for byte into a new
run directory, and every config of the
new grid is fused and scored from ``arm_ranks``. Each config's arms must be arms of
the source run, searched at least as deep as the config's depth for that arm (the
largest depth of the source configs); arm parameters cannot change (they shaped
the stored ranks). The manifest records the source run, its path and the hashes
of the tables taken from it; the gold-set and corpus sections are the source's.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from harness.core.digest import file_sha256
from harness.core.errors import ConfigError, HarnessError
from harness.fusion.configs import RunConfig, load_config
from harness.fusion.fuse import FUSION_METHODS, RankMatrix
from harness.metrics.gold import make_gold
from harness.pipeline.grid_tables import check_budget, check_grid_size
from harness.pipeline.options import (
    Progress,
    RunOptions,
    RunResult,
    check_answering,
    configs_frame,
    metric_specs,
    score_and_write,
)
from harness.store.provenance import base_manifest, now_iso
from harness.store.readback import questions_from_frame
from harness.store.rundir import MANIFEST, RunWriter, new_run_id, open_run, run_path

COPIED = ("questions", "documents", "chunks", "arm_ranks")
COPIED_IF_PRESENT = ("question_facts",)  # reference facts (answer correctness); older runs lack it


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


def rescore(options: RunOptions, progress: Progress | None = None) -> RunResult:
    """Re-score ``options.config`` over ``options.source_run``'s arm ranks (see module doc)."""
    if options.source_run is None:
        raise ConfigError("re-scoring needs a source run (--from RUN)")
    if options.arm_overrides:
        raise ConfigError(f"--from {options.source_run}: arm parameters cannot change when "
                          f"re-scoring stored ranks (got {sorted(options.arm_overrides)})")
    if options.goldset is not None:
        raise ConfigError("--from takes the gold set of the source run; drop --goldset")
    src = open_run(options.source_run, Path(options.runs_dir))
    missing = [t for t in (*COPIED, "configs") if not src.has_table(t)]
    if missing:
        raise HarnessError(f"run {src.run_id} cannot be re-scored: no {', '.join(missing)} table(s)")
    copied = [*COPIED, *(t for t in COPIED_IF_PRESENT if src.has_table(t))]
    check_grid_size(options.config)
    depths = searched_depths(src.table("configs"))
    cfg = load_config(options.config, known_arms=sorted(depths), known_methods=FUSION_METHODS.names())
    check_grid(cfg, depths, src.run_id)
    questions = list(questions_from_frame(src.table("questions")).values())
    chunks = pq.read_table(src.path / "chunks.parquet", columns=["chunk_id", "doc_id", "page"]).to_pandas()
    stored = check_budget(len(questions), len(chunks), cfg, options.store)
    check_answering(options, cfg, stored)
    specs = metric_specs(options, cfg)

    run_id = options.run_id or new_run_id()
    out = run_path(Path(options.runs_dir), run_id)  # the one run-id check (core.names)
    if (out / MANIFEST).exists():
        raise HarnessError(f"{out} already exists; a re-scored run needs a new --run-id")
    writer = RunWriter(out)
    m = src.manifest
    writer.update_manifest({
        **base_manifest(run_id), "goldset": m.get("goldset"), "corpus": m.get("corpus"),
        "arms": m.get("arms", {}), "metrics": [s.name for s in specs],
        "config": {"path": cfg.path, "sha256": cfg.sha256, "configs": [c.config_id for c in cfg.configs]},
        "source_run": {"run_id": src.run_id, "path": str(src.path.resolve()),
                       "tables": {t: m["tables"][t]["sha256"] for t in copied}},
    })
    for t in copied:
        dst = writer.file(f"{t}.parquet")
        tmp = dst.with_name(f".{dst.name}.tmp-{os.getpid()}")
        shutil.copyfile(src.path / f"{t}.parquet", tmp)
        os.replace(tmp, dst)
        writer.update_manifest({"tables": {t: {"sha256": file_sha256(dst), "rows": m["tables"][t]["rows"]}}})
    writer.write_table("configs", configs_frame(cfg))

    arm_ranks = pq.read_table(out / "arm_ranks.parquet",
                              columns=["question_id", "arm", "chunk_id", "rank"]).to_pandas()
    matrix = RankMatrix.from_arm_ranks(arm_ranks, [q.question_id for q in questions], cfg.arm_names)
    gold = make_gold(questions, matrix, dict(zip(chunks["chunk_id"],
                                                 zip(chunks["doc_id"], chunks["page"].astype(int),
                                                     strict=True), strict=True)))
    metrics = score_and_write(writer, matrix, gold, cfg, specs, stored, options.store.depth, progress)
    if options.answerers:
        from harness.answering.runner import answer_run

        answer_run(writer.path, list(options.answerers), configs=options.answer_configs)
    writer.update_manifest({"status": "complete", "finished": now_iso()})
    return RunResult(writer.path, None, None, cfg, metrics)
