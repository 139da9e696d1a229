"""The ``metrics`` and ``fused`` tables of a grid, within size limits.

Every config of the grid is scored through the vectorised path
(:func:`rulegauge.pipeline.sweep.score_configs`): the ``metrics`` table always holds
every question x config x metric. The ``fused`` table grows as questions x configs
x chunks, so it is bounded: rows are stored for the configs in ``StorePolicy.configs``
(default every config), to ``StorePolicy.depth`` chunks per question and config
(0 = the whole list), and the estimate of its rows must stay within
``StorePolicy.max_rows``. What is not stored is recomputable from ``arm_ranks``
(``rulegauge run --from RUN -c grid.toml``). A grid over ``MAX_CONFIGS`` configs is
refused before anything is written: narrow its lists.

Both tables come from one pass over the configs (:func:`rulegauge.pipeline.sweep.config_pass`:
one ``config_scores`` per config): each stored config's rows are cut to the depth from
the same order keys its metrics are scored on (:mod:`rulegauge.pipeline.fused_rows`) and
leave as Arrow parts of about ``PART_ROWS`` rows, which the run writer streams into one
Parquet file, so memory does not grow with the fused table.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from rulegauge.core.errors import ConfigError
from rulegauge.core.limits import DEFAULT_MAX_FUSED_ROWS, count_problem
from rulegauge.core.tablerows import remember_codes
from rulegauge.fusion.configs import FusionConfig, RunConfig
from rulegauge.fusion.fuse import RankMatrix
from rulegauge.metrics.family import Metric
from rulegauge.metrics.gold import Gold
from rulegauge.metrics.ranking import score
from rulegauge.pipeline.fused_rows import ConfigRows, RowContext
from rulegauge.pipeline.sweep import ConfigScores, config_pass

MAX_CONFIGS = 5000
PART_ROWS = 1 << 16
"""Rows per streamed part of the ``fused`` table (whole configs; a config's rows are never
split; a part is one Parquet row group). 2**16 rather than 2**18: at 1,000 questions and
depth 20 the run's peak memory is 50 MB lower, at the same speed (benchmarks/README.md)."""
METRIC_PART_ROWS = 1 << 18
"""Rows per streamed part of the ``metrics`` table (whole configs; one Parquet row group):
few parts, since each is written while the scoring pass runs."""


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
                          f"into several grids and score each with `rulegauge run --from RUN -c PART.toml`")


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
    inner), outer)``), its buffers built from the names' bytes: the sequence's bytes and
    offsets once, then ``outer`` copies of them (no gather per row)."""
    enc = [x.encode() for x in names]
    block = b"".join(b * inner for b in enc)
    if len(block) * outer >= 1 << 31:  # beyond 32-bit offsets: gathered
        return pa.array(list(names), pa.string()).take(
            pa.array(np.tile(np.repeat(np.arange(len(names)), inner), outer), pa.int64()))
    ends = np.cumsum(np.repeat(np.fromiter(map(len, enc), np.int32, len(enc)), inner), dtype=np.int32)
    n = len(ends) * outer
    offsets = np.zeros(n + 1, np.int32)
    np.add(ends[None, :], (np.arange(outer, dtype=np.int32) * np.int32(len(block)))[:, None],
           out=offsets[1:].reshape(outer, len(ends)))
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(block * outer)])


def metrics_table(question_ids: Sequence[str], answerable: np.ndarray, configs: Sequence[FusionConfig],
                  specs: Sequence[Metric], values: Sequence[dict[str, np.ndarray]], *, codes: bool = True) -> pa.Table:
    """Rows per config, then metric, then question (question order of the gold set).
    ``codes``: record the config and metric codes for the summary (:func:`remember_grid_codes`)."""
    nq, nm, nc = len(question_ids), len(specs), len(configs)
    val = np.empty(nc * nm * nq, np.float64)
    for ci, per in enumerate(values):
        for mi, s in enumerate(specs):
            val[(ci * nm + mi) * nq : (ci * nm + mi + 1) * nq] = per[s.name]
    n = len(val)
    table = pa.table({
        "question_id": repeated_strings([str(q) for q in question_ids], 1, nc * nm),
        "config_id": repeated_strings([c.config_id for c in configs], nm * nq, 1),
        "metric": repeated_strings([s.name for s in specs], nq, nc),
        "value": pa.array(val, pa.float64()),
        "answerable": pa.array(np.tile(np.asarray(answerable, bool), nc * nm) if n else np.zeros(0, bool)),
    })
    if codes:
        remember_grid_codes(table, configs, specs, nq)
    return table


def remember_grid_codes(table: pa.Table, configs: Sequence[FusionConfig], specs: Sequence[Metric], nq: int) -> None:
    """Record the config and metric codes of a metrics table in :func:`metrics_table`'s row
    order, as runs (:func:`rulegauge.core.tablerows.remember_codes`: the summary reads them
    instead of scanning millions of strings)."""
    nm, nc = len(specs), len(configs)
    if not nm * nc * nq:
        return
    config_ids, metric_names = tuple(c.config_id for c in configs), tuple(s.name for s in specs)
    if len(set(config_ids)) == nc:
        remember_codes(table, "config_id", np.arange(nc) * (nm * nq), np.arange(nc), config_ids)
    if len(set(metric_names)) == nm:
        remember_codes(table, "metric", np.arange(nc * nm) * nq, np.tile(np.arange(nm), nc), metric_names)


@dataclass
class GridTables:
    """The ``metrics`` and ``fused`` tables of a grid, from one pass over its configs
    (module docstring). :meth:`fused_parts` runs the pass and yields the fused rows of
    the ``stored`` configs to ``depth`` (0 = whole lists) in parts, in table order
    (stored configs in their order, then question, then fused rank; at least one part,
    empty when nothing is stored); meanwhile the ``metrics`` rows of the configs scored so
    far leave in grid order as parts of about ``METRIC_PART_ROWS`` rows, to ``metric_sink`` when
    given (the run writer streams them into their file while the pass goes on);
    :meth:`metrics` is every config's table after it (those parts)."""

    matrix: RankMatrix
    gold: Gold
    cfg: RunConfig
    specs: Sequence[Metric]
    stored: Sequence[FusionConfig]
    depth: int
    workers: int | None = None
    metric_sink: Callable[[pa.Table], None] | None = None
    _values: dict[int, dict[str, np.ndarray]] = field(default_factory=dict, repr=False)
    _parts: list[pa.Table] = field(default_factory=list, repr=False)
    _handed: int = field(default=0, repr=False)  # configs (in grid order) already in _parts

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
        self._values.clear()
        self._parts.clear()
        self._handed = 0
        buffer: list[ConfigRows] = []
        parts = 0
        # configs whose rows are not stored send back only their metric values: forked workers
        passed = config_pass(self.matrix, self.gold, configs, one, self.workers, fork_from=len(first))
        for i, (values, rows) in zip(order, passed, strict=True):
            self._values[i] = values
            self._hand_metrics(final=False)
            if rows is not None:
                buffer.append(rows)
                if sum(map(len, buffer)) >= PART_ROWS:
                    parts += 1
                    yield ctx.part(buffer)
                    buffer = []
        self._hand_metrics(final=True)
        if buffer or not parts:
            yield ctx.part(buffer)

    def _hand_metrics(self, *, final: bool) -> None:
        """Make the metrics part of the scored configs that follow the last part in grid
        order, once they hold ``METRIC_PART_ROWS`` rows (``final``: whatever is left), and hand it
        to ``metric_sink``."""
        configs, nq = self.cfg.configs, len(self.gold.questions)
        ready = self._handed
        while ready < len(configs) and ready in self._values:
            ready += 1
        if ready == self._handed or (not final and (ready - self._handed) * len(self.specs) * nq < METRIC_PART_ROWS):
            return
        part = metrics_table(self._question_ids, self._answerable,
                             configs[self._handed : ready], self.specs,
                             [self._values.pop(i) for i in range(self._handed, ready)], codes=False)
        self._parts.append(part)
        self._handed = ready
        if self.metric_sink is not None:
            self.metric_sink(part)

    @cached_property
    def _question_ids(self) -> list[str]:
        return [q.question_id for q in self.gold.questions]

    @cached_property
    def _answerable(self) -> np.ndarray:
        return np.array([q.answerable for q in self.gold.questions], bool)

    def metrics(self) -> pa.Table:
        """Every question x config x metric (runs the pass first if :meth:`fused_parts` did not)."""
        configs, nq = self.cfg.configs, len(self.gold.questions)
        if self._handed < len(configs) or not self._parts:  # the pass alone: no fused rows, no sink
            scoring = replace(self, stored=(), depth=0, metric_sink=None)
            for _ in scoring.fused_parts():
                pass
            self._parts, self._handed = scoring._parts, scoring._handed
        parts = self._parts or [metrics_table([], np.zeros(0, bool), [], self.specs, [], codes=False)]
        table = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        remember_grid_codes(table, configs, self.specs, nq)
        return table


def grid_tables(matrix: RankMatrix, gold: Gold, cfg: RunConfig, specs: Sequence[Metric],
                stored: Sequence[FusionConfig], depth: int,
                metric_sink: Callable[[pa.Table], None] | None = None) -> GridTables:
    """The grid's tables, computed as they are read (:class:`GridTables`)."""
    return GridTables(matrix, gold, cfg, specs, stored, depth, metric_sink=metric_sink)


def whole_tables(grid: GridTables) -> tuple[pa.Table, pa.Table]:
    """(metrics, fused) in memory: for callers that read both at once (tests, notebooks)."""
    fused = pa.concat_tables(list(grid.fused_parts()))
    return grid.metrics(), fused
