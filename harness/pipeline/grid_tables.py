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

Both tables come from one pass over the configs (:func:`harness.pipeline.sweep.config_pass`:
one ``config_scores`` per config): each stored config's rows are cut to the depth from
the same order keys its metrics are scored on (:mod:`harness.pipeline.fused_rows`) and
leave as Arrow parts of about ``PART_ROWS`` rows, which the run writer streams into one
Parquet file, so memory does not grow with the fused table.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from harness.core.errors import ConfigError
from harness.core.limits import DEFAULT_MAX_FUSED_ROWS, count_problem
from harness.core.tablerows import remember_codes
from harness.fusion.configs import FusionConfig, RunConfig
from harness.fusion.fuse import RankMatrix
from harness.metrics.family import Metric
from harness.metrics.gold import Gold
from harness.metrics.ranking import score
from harness.pipeline.fused_rows import ConfigRows, RowContext
from harness.pipeline.sweep import ConfigScores, config_pass

MAX_CONFIGS = 5000
PART_ROWS = 1 << 18
"""Rows per streamed part of the ``fused`` table (whole configs; a config's rows are never split)."""


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


def repeated_strings(names: Sequence[str], inner: int, outer: int) -> pa.Array:
    """A plain string column (what readers get back) of ``len(names) * inner * outer`` rows:
    each name ``inner`` times in turn, that sequence ``outer`` times (``np.tile(np.repeat(names,
    inner), outer)``), its buffers built from the names' bytes (no gather per row)."""
    enc = [x.encode() for x in names]
    lens = np.repeat(np.array([len(b) for b in enc], np.int64), inner)
    n = len(lens) * outer
    data = b"".join(b * inner for b in enc) * outer
    if len(data) >= 1 << 31:  # beyond 32-bit offsets: gathered
        return pa.array(list(names), pa.string()).take(
            pa.array(np.tile(np.repeat(np.arange(len(names)), inner), outer), pa.int64()))
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(np.tile(lens, outer), out=offsets[1:])
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def metrics_table(question_ids: Sequence[str], answerable: np.ndarray, configs: Sequence[FusionConfig],
                  specs: Sequence[Metric], values: Sequence[dict[str, np.ndarray]]) -> pa.Table:
    """Rows per config, then metric, then question (question order of the gold set)."""
    nq, nm, nc = len(question_ids), len(specs), len(configs)
    val = np.empty(nc * nm * nq, np.float64)
    for ci, per in enumerate(values):
        for mi, s in enumerate(specs):
            val[(ci * nm + mi) * nq : (ci * nm + mi + 1) * nq] = per[s.name]
    n = len(val)

    mcode = np.tile(np.repeat(np.arange(nm, dtype=np.int32), nq), nc)
    ccode = np.repeat(np.arange(nc, dtype=np.int32), nm * nq)
    config_ids, metric_names = tuple(c.config_id for c in configs), tuple(s.name for s in specs)
    table = pa.table({
        "question_id": repeated_strings([str(q) for q in question_ids], 1, nc * nm),
        "config_id": repeated_strings(config_ids, nm * nq, 1),
        "metric": repeated_strings(metric_names, nq, nc),
        "value": pa.array(val, pa.float64()),
        "answerable": pa.array(np.tile(np.asarray(answerable, bool), nc * nm) if n else np.zeros(0, bool)),
    })
    for column, codes, names in (("config_id", ccode, config_ids), ("metric", mcode, metric_names)):
        if n and len(set(names)) == len(names):  # the summary reads them instead of scanning the strings
            remember_codes(table, column, codes, names)
    return table


@dataclass
class GridTables:
    """The ``metrics`` and ``fused`` tables of a grid, from one pass over its configs
    (module docstring). :meth:`fused_parts` runs the pass and yields the fused rows of
    the ``stored`` configs to ``depth`` (0 = whole lists) in parts, in table order
    (stored configs in their order, then question, then fused rank; at least one part,
    empty when nothing is stored); :meth:`metrics` is every config's table after it."""

    matrix: RankMatrix
    gold: Gold
    cfg: RunConfig
    specs: Sequence[Metric]
    stored: Sequence[FusionConfig]
    depth: int
    workers: int | None = None
    _values: dict[int, dict[str, np.ndarray]] = field(default_factory=dict, repr=False)

    def fused_parts(self) -> Iterator[pa.Table]:
        ctx = RowContext.build(self.matrix, self.gold, self.cfg.arm_names)
        index = {c.config_id: i for i, c in enumerate(self.cfg.configs)}
        first = [index[c.config_id] for c in self.stored]  # stored configs first, in their order
        keep = set(first)
        order = first + [i for i in range(len(self.cfg.configs)) if i not in keep]

        def one(o: ConfigScores) -> tuple[dict[str, np.ndarray], ConfigRows | None]:
            rows = ctx.rows(o, self.depth) if index[o.config.config_id] in keep else None
            return score(self.specs, o, self.gold), rows

        configs = [self.cfg.configs[i] for i in order]
        buffer: list[ConfigRows] = []
        parts = 0
        for i, (values, rows) in zip(order, config_pass(self.matrix, self.gold, configs, one, self.workers),
                                     strict=True):
            self._values[i] = values
            if rows is not None:
                buffer.append(rows)
                if sum(map(len, buffer)) >= PART_ROWS:
                    parts += 1
                    yield ctx.part(buffer)
                    buffer = []
        if buffer or not parts:
            yield ctx.part(buffer)

    def metrics(self) -> pa.Table:
        """Every question x config x metric (runs the pass first if :meth:`fused_parts` did not)."""
        if len(self._values) < len(self.cfg.configs):
            self._values.clear()
            for _ in GridTables(self.matrix, self.gold, self.cfg, self.specs, (), 0, self.workers,
                                self._values).fused_parts():
                pass
        answerable = np.array([q.answerable for q in self.gold.questions], bool)
        return metrics_table([q.question_id for q in self.gold.questions], answerable, self.cfg.configs,
                             self.specs, [self._values[i] for i in range(len(self.cfg.configs))])


def grid_tables(matrix: RankMatrix, gold: Gold, cfg: RunConfig, specs: Sequence[Metric],
                stored: Sequence[FusionConfig], depth: int) -> GridTables:
    """The grid's tables, computed as they are read (:class:`GridTables`)."""
    return GridTables(matrix, gold, cfg, specs, stored, depth)


def whole_tables(grid: GridTables) -> tuple[pa.Table, pa.Table]:
    """(metrics, fused) in memory: for callers that read both at once (tests, notebooks)."""
    fused = pa.concat_tables(list(grid.fused_parts()))
    return grid.metrics(), fused
