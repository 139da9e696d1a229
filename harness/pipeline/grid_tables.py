"""The ``metrics`` and ``fused`` tables of a grid, within size limits.

Every config of the grid is scored through the vectorised path
(:func:`harness.pipeline.sweep.score_configs`): the ``metrics`` table always holds
every question x config x metric. The ``fused`` table grows as questions x configs
x chunks, so it is bounded: rows are stored for the configs in ``StorePolicy.configs``
(default every config), to ``StorePolicy.depth`` chunks per question and config
(0 = the whole list), and the estimate of its rows must stay within
``StorePolicy.max_rows``. What is not stored is recomputable from ``arm_ranks``
(``harness run --from RUN -c grid.toml``). A grid over ``MAX_CONFIGS`` configs is
refused before anything is written: narrow its lists.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from harness.core.errors import ConfigError
from harness.core.limits import DEFAULT_MAX_FUSED_ROWS, count_problem
from harness.fusion.configs import FusionConfig, RunConfig
from harness.fusion.fuse import Fused, RankMatrix, fuse
from harness.metrics.family import Metric
from harness.metrics.gold import Gold
from harness.metrics.pages import fused_frame
from harness.pipeline.sweep import score_configs

MAX_CONFIGS = 5000


@dataclass(frozen=True)
class StorePolicy:
    """Which fused rows a run stores: ``configs`` (ids or names; None = all), ``depth``
    chunks per question and config (0 = all), at most ``max_rows`` rows in all."""

    configs: tuple[str, ...] | None = None
    depth: int = 0
    max_rows: int = DEFAULT_MAX_FUSED_ROWS

    def __post_init__(self) -> None:
        problems = [p for p in (count_problem("fused_depth", self.depth, minimum=0),
                                count_problem("max_fused_rows", self.max_rows, minimum=0)) if p]
        if problems:
            raise ConfigError("; ".join(problems))


def grid_size(path: Path | None) -> int:
    """Configs a grid file expands to, counted before expanding it (0 if unreadable:
    the config loader then reports the problem)."""
    if path is None:
        return 0
    try:
        raw: dict[str, Any] = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return 0
    grid = raw.get("grid")
    n = 0
    if isinstance(grid, dict):
        n = 1
        for key, default in (("k", [0]), ("arms", []), ("weights", [{}]), ("depths", [{}])):
            v = grid.get(key, default)
            n *= len(v) if isinstance(v, list) else 1
    configs = raw.get("configs", [])
    return n + (len(configs) if isinstance(configs, list) else 0)


def check_grid_size(path: Path | None, limit: int = MAX_CONFIGS) -> None:
    n = grid_size(path)
    if n > limit:
        raise ConfigError(f"{path}: the grid expands to {n:,} configs (k values x arm sets x weights x "
                          f"depths, plus listed configs); the limit is {limit:,}. Narrow its lists, or split it "
                          f"into several grids and score each with `harness run --from RUN -c PART.toml`")


def stored_configs(cfg: RunConfig, policy: StorePolicy) -> list[FusionConfig]:
    """The configs whose fused rows are stored; unknown ids or names raise."""
    if policy.configs is None:
        return list(cfg.configs)
    if tuple(policy.configs) in ((), ("none",)):
        return []
    by = {c.config_id: c for c in cfg.configs} | {c.name: c for c in cfg.configs}
    unknown = [x for x in policy.configs if x not in by]
    if unknown:
        raise ConfigError(f"--fused-config: unknown config(s) {unknown}; the grid has "
                          f"{', '.join(c.config_id for c in cfg.configs[:8])}"
                          f"{' ...' if len(cfg.configs) > 8 else ''} (or 'none')")
    return list({by[x].config_id: by[x] for x in policy.configs}.values())


def fused_rows_bound(n_questions: int, n_chunks: int, configs: Sequence[FusionConfig], depth: int) -> int:
    """Upper bound of the fused table's rows: per question and config, at most the
    chunks the config's arms can rank (sum of depths), the corpus, and ``depth``."""
    total = 0
    for c in configs:
        per = min(n_chunks, sum(int(d) for d in c.depths))
        total += min(per, depth) if depth > 0 else per
    return n_questions * total


def check_budget(n_questions: int, n_chunks: int, cfg: RunConfig, policy: StorePolicy) -> list[FusionConfig]:
    """Stored configs, after checking the fused table fits ``policy.max_rows``."""
    keep = stored_configs(cfg, policy)
    rows = fused_rows_bound(n_questions, n_chunks, keep, policy.depth)
    if rows > policy.max_rows:
        raise ConfigError(
            f"the fused table would hold up to {rows:,} rows ({n_questions:,} questions x "
            f"{len(keep):,} configs x up to {rows // max(n_questions * len(keep), 1):,} chunks); the "
            f"row budget is {policy.max_rows:,}. Narrow it: --fused-depth N (rows per question and "
            f"config, e.g. 20), --fused-config ID (store only those configs, or 'none'; every "
            f"config is still scored), or raise --max-fused-rows")
    return keep


def metrics_table(question_ids: Sequence[str], answerable: np.ndarray, configs: Sequence[FusionConfig],
                  specs: Sequence[Metric], values: Sequence[dict[str, np.ndarray]]) -> pa.Table:
    """Rows per config, then metric, then question (question order of the gold set)."""
    nq, nm, nc = len(question_ids), len(specs), len(configs)
    val = np.empty(nc * nm * nq, np.float64)
    for ci, per in enumerate(values):
        for mi, s in enumerate(specs):
            val[(ci * nm + mi) * nq : (ci * nm + mi + 1) * nq] = per[s.name]
    n = len(val)

    def dictionary(codes: np.ndarray, names: Sequence[str]) -> pa.Array:
        return pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()),
                                              pa.array(list(names), pa.string())).cast(pa.string())

    qcode = np.tile(np.arange(nq, dtype=np.int32), nc * nm)
    mcode = np.tile(np.repeat(np.arange(nm, dtype=np.int32), nq), nc)
    ccode = np.repeat(np.arange(nc, dtype=np.int32), nm * nq)
    return pa.table({
        "question_id": dictionary(qcode, [str(q) for q in question_ids]),
        "config_id": dictionary(ccode, [c.config_id for c in configs]),
        "metric": dictionary(mcode, [s.name for s in specs]),
        "value": pa.array(val, pa.float64()),
        "answerable": pa.array(np.tile(np.asarray(answerable, bool), nc * nm) if n else np.zeros(0, bool)),
    })


def grid_tables(matrix: RankMatrix, gold: Gold, cfg: RunConfig, specs: Sequence[Metric],
                stored: Sequence[FusionConfig], depth: int) -> tuple[pa.Table, pd.DataFrame]:
    """(metrics of every config, fused rows of the stored configs to ``depth``)."""
    values = score_configs(matrix, gold, cfg.configs, specs)
    answerable = np.array([q.answerable for q in gold.questions], bool)
    metrics = metrics_table([q.question_id for q in gold.questions], answerable, cfg.configs, specs, values)
    parts = []
    for c in stored:
        f = fused_frame(fuse(matrix, c), matrix, gold, cfg.arm_names)
        parts.append(f[f["fused_rank"] <= depth] if depth > 0 else f)
    if parts:
        fused = pd.concat(parts, ignore_index=True)
    else:  # no stored config: the table's columns and types, without fusing anything
        none, ints = np.zeros(0, np.int64), np.zeros(0, np.int32)
        fused = fused_frame(Fused(cfg.configs[0], none, none, ints, np.zeros(0), ints), matrix, gold, cfg.arm_names)
    return metrics, fused
