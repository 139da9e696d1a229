"""``rulegauge run`` from a gold set: the source that builds the corpus and searches every arm.

:class:`GoldsetSource` loads and checks the gold set, corpus, config and parameters
(before any folder exists), then, inside the run lifecycle
(:mod:`rulegauge.pipeline.lifecycle`), writes ``questions``, ``question_facts``,
``documents``, ``chunks`` and ``arm_ranks``; scoring, fused rows, answering and the
status are the lifecycle's. ``--from`` is the other source (:mod:`rulegauge.pipeline.rescore`).

Stages write their tables as they finish (atomically), and each arm's ranks are
kept in ``.partial/`` until all arms are done, so an interrupted run resumed with
the same ``run_id`` re-does only what is missing, after checking that the gold
set, corpus and config hashes still match the manifest.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from rulegauge.arms import ARMS, ArmContext
from rulegauge.arms.base import empty_counts, make_arm, preflight_arms
from rulegauge.arms.contract import check_results, order_rule
from rulegauge.arms.results import foreign_columns
from rulegauge.core import plugins
from rulegauge.core.atomic import atomic_path
from rulegauge.core.cachedir import cache_root
from rulegauge.core.engines import EngineInfo
from rulegauge.core.errors import ConfigError, Problem, ProvenanceError, RulegaugeError, ValidationError
from rulegauge.core.names import check_name
from rulegauge.core.redact import redact_params
from rulegauge.corpus.chunking import ChunkingOptions, build_corpus
from rulegauge.corpus.page_cache import PageCache
from rulegauge.corpus.records import Corpus
from rulegauge.fusion.configs import RunConfig, load_config
from rulegauge.fusion.fuse import RankMatrix
from rulegauge.goldset.parse import check_corpus, load_goldset
from rulegauge.goldset.records import GoldSet
from rulegauge.metrics.family import Metric
from rulegauge.metrics.gold import make_gold
from rulegauge.pipeline.arm_frame import arm_frame
from rulegauge.pipeline.depth_unit import DEFAULT_PLAN, DepthPlan, best_per_page, chunk_depth, page_codes, short_lists
from rulegauge.pipeline.grid_tables import check_grid_size
from rulegauge.pipeline.lifecycle import RankInputs, execute
from rulegauge.pipeline.options import Progress, RunOptions, RunResult
from rulegauge.pipeline.run_checks import metric_specs
from rulegauge.pipeline.sample import sample_goldset, sample_grid
from rulegauge.pipeline.stages import parameter_checks
from rulegauge.store.provenance import base_manifest, check_inputs, inputs_section
from rulegauge.store.rundir import RunWriter

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLE_GOLDSET = sample_goldset()  # the wheel's package data, else the clone's goldsets/ (pipeline.sample)



def default_cache_dir() -> Path:
    return cache_root()


def _cache_dir(options: RunOptions) -> Path:
    return Path(options.cache_dir) if options.cache_dir else default_cache_dir()


def _prefixed(progress: Progress | None, arm: str) -> Progress | None:
    if progress is None:
        return None
    return lambda description, total: progress(f"arm {arm}: {description}", total)


def load_inputs(options: RunOptions, progress: Progress | None = None) -> tuple[GoldSet, Corpus, RunConfig]:
    """Load and validate gold set, corpus, config and parameters (all errors raised
    here, before any run folder exists); ``progress`` counts the documents built."""
    check_grid_size(options.config)
    arms = ARMS.view()  # each arm's module imported when the config names it (core/plugins)
    cfg = load_config(sample_grid(options.goldset, options.config), known_arms=arms, arm_classes=arms)
    check_parameters(cfg, options.arm_overrides, options)
    if options.arm_overrides:
        cfg = cfg.with_arm_params(options.arm_overrides)
    gs = load_goldset(options.goldset or SAMPLE_GOLDSET, allow_outside=options.allow_outside)
    pages = PageCache(Path(options.cache_dir) if options.cache_dir else default_cache_dir())
    n = len(gs.documents)
    with (progress(f"building the corpus: {n} documents", n) if progress else nullcontext()) as advance:
        corpus = build_corpus(gs.documents, options.chunking or ChunkingOptions(), page_cache=pages,
                              advance=advance)
    check_corpus(gs, corpus)
    return gs, corpus, cfg


def check_parameters(cfg: RunConfig, arm_overrides: dict[str, dict[str, Any]],
                     options: RunOptions) -> None:
    """Every ``-p NAME.KEY=VALUE`` names an arm of the config or a name a stage of the run
    owns (an answerer label), a parameter it accepts and a value of the right type (finite
    numbers); raise one :class:`ValidationError` with every problem, the stages' first
    (:func:`rulegauge.core.params.check_params`; :mod:`rulegauge.pipeline.stages`)."""
    from rulegauge.core.params import check_params

    labels, problems = parameter_checks(options)
    for name in arm_overrides:
        if name not in cfg.arm_names:
            problems.append(Problem("--param", f"{name!r} is neither an arm of the config ("
                                    + ", ".join(cfg.arm_names) + ") nor an answerer label ("
                                    + (", ".join(labels) or "none given") + ")"))
    for name in cfg.arm_names:
        merged = {**cfg.arm_params.get(name, {}), **arm_overrides.get(name, {})}
        kind = str(merged.pop("kind", name))
        if kind not in ARMS:
            continue
        found = check_params(ARMS.get(kind), merged, f"arm {name}")
        if not found:
            try:  # the constructor's own range checks (k1 >= 0 ...), before any folder exists
                ARMS.get(kind)(**merged)
            except RulegaugeError as exc:
                found = [f"arm {name}: {exc}"]
        where = "--param" if name in arm_overrides else cfg.path
        problems += [Problem(where, m) for m in found]
    if problems:
        raise ValidationError(problems, "bad parameters")


def questions_frame(gs: GoldSet) -> pd.DataFrame:
    return pd.DataFrame([{
        "question_id": q.question_id, "goldset": gs.name, "language": q.language,
        "question": q.question, "game": q.game, "tags": list(q.tags),
        "requirements": json.dumps([[str(r) for r in req] for req in q.requirements], ensure_ascii=False),
        "n_requirements": len(q.requirements), "answerable": q.answerable,
    } for q in gs.questions])


JUDGMENT_COLUMNS = ("question_id", "doc_id", "page", "grade", "judge_kind", "judge_id", "time", "note")


def question_judgments_frame(gs: GoldSet) -> pd.DataFrame:
    """One row per explicit judgment of a gold question (``judged:``)."""
    return pd.DataFrame([(q.question_id, j.doc_id, j.page, j.grade, j.judge_kind, j.judge_id, j.time, j.note)
                         for q in gs.questions for j in q.judged], columns=list(JUDGMENT_COLUMNS))


def question_facts_frame(gs: GoldSet) -> pd.DataFrame:
    """One row per reference fact of a gold question (``answer: {facts: ...}``)."""
    return pd.DataFrame([{"question_id": q.question_id, "fact": i, "phrasings": list(fact)}
                         for q in gs.questions for i, fact in enumerate(q.facts, start=1)],
                        columns=["question_id", "fact", "phrasings"])


def documents_frame(corpus: Corpus) -> pd.DataFrame:
    return pd.DataFrame([{
        "doc_id": d.doc_id, "kind": d.kind, "game": d.game, "edition": d.edition,
        "language": d.language, "title": d.title, "path": d.path, "source_sha256": d.source_sha256,
        "pages": corpus.page_count.get(d.doc_id, 0),
    } for d in corpus.documents])


def chunks_frame(corpus: Corpus) -> pd.DataFrame:
    return pd.DataFrame([{
        "chunk_id": c.chunk_id, "doc_id": c.doc_id, "doc_kind": corpus.doc_by_id[c.doc_id].kind,
        "page": c.page, "page_label": c.page_label, "heading_path": c.heading,
        "char_start": c.char_start, "char_end": c.char_end, "text": c.text,
    } for c in corpus.chunks])


LATENCY_COLUMNS = ["question_id", "arm", "timing", "latency_ms"]


def arm_latency_frame(arm: Any, name: str, questions: Sequence[str], seconds: float) -> pd.DataFrame:
    """An arm's rows of ``search_latency``: its own per-call times when it keeps them
    (``call_latencies``, arms/base), else its search time shared evenly by the questions
    (:mod:`rulegauge.metrics.latency`)."""
    calls = getattr(arm, "call_latencies", None)
    if callable(calls):
        got = calls()
        ms = [float(got.get(q, math.nan)) for q in questions]
        timing = "call"
    else:
        ms = [seconds * 1000.0 / len(questions)] * len(questions) if questions else []
        timing = "batch"
    return pd.DataFrame({"question_id": list(questions), "arm": name, "timing": timing,
                         "latency_ms": pd.Series(ms, dtype="float64")})[LATENCY_COLUMNS]


def run_arms(writer: RunWriter, gs: GoldSet, corpus: Corpus, cfg: RunConfig, context: ArmContext,
             progress: Progress | None, plan: DepthPlan = DEFAULT_PLAN
             ) -> tuple[pd.DataFrame, dict[str, Any], pd.DataFrame]:
    """Run every arm once over every question, resumable per arm: an arm whose ranks
    are in ``.partial/`` and whose manifest entry was written is not searched again.
    Depth counts ``plan.unit`` (:mod:`rulegauge.pipeline.depth_unit`); each arm's entry
    says its depth, unit, the chunks asked for and its short lists against ``plan.cutoff``.
    Returns the ranks, the manifest's ``arms`` entries of the arms searched now and the
    arms' search times (``search_latency``; an arm resumed from a partial written before
    they were kept has none)."""
    writer.folder(".partial")  # never through a planted link
    done = writer.read_manifest().get("arms", {})
    frames, described, timings = [], {}, []
    for name in cfg.arm_names:
        out = writer.file(f".partial/arm_ranks-{check_name('arm name', name)}.parquet")
        timed = writer.file(f".partial/search_latency-{check_name('arm name', name)}.parquet")
        if out.exists() and name in done:
            kept = pq.read_table(out).to_pandas()
            if "foreign" not in kept:  # ranks kept by a version before foreign hits: none of them is one
                kept["foreign"] = False
            frames.append(kept)
            if timed.exists():
                timings.append(pq.read_table(timed).to_pandas()[LATENCY_COLUMNS])
            continue
        kind = _kind(cfg, name)
        # a plug-in arm's own exception (SystemExit too) is exit 2 naming it, never a traceback (core/plugins)
        with plugins.guarded("rulegauge.arms", kind, f"as arm {name}"):
            df, described[name], lat = _search_one(writer, name, gs, corpus, cfg, context, progress, plan)
        timings.append(lat)
        frames.append(df)
    cols = ["question_id", "arm", "chunk_id", "doc_id", "page", "rank", "score", "foreign"]
    ranks = pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)
    latency = (pd.concat(timings, ignore_index=True)[LATENCY_COLUMNS] if timings
               else pd.DataFrame(columns=LATENCY_COLUMNS))
    return ranks, described, latency


def _kind(cfg: RunConfig, name: str) -> str:
    return str(cfg.arm_params.get(name, {}).get("kind", name))  # [arms.prod_fulltext] kind = "external"


def _search_one(writer: RunWriter, name: str, gs: GoldSet, corpus: Corpus, cfg: RunConfig, context: ArmContext,
                progress: Progress | None, plan: DepthPlan
                ) -> tuple[pd.DataFrame, dict[str, Any], pd.DataFrame]:
    """One arm's ranks (written to ``.partial/``), its manifest entry and its search times
    (written beside the ranks: :func:`arm_latency_frame`) (:func:`run_arms`)."""
    out = writer.file(f".partial/arm_ranks-{name}.parquet")
    timed = writer.file(f".partial/search_latency-{name}.parquet")
    arm = make_arm(name, cfg.arm_params.get(name, {}))
    chunks = corpus.chunk_columns
    codes = page_codes(chunks)
    depth = cfg.depth_for(name)
    asked = chunk_depth(codes, depth) if plan.unit == "page" else depth
    try:
        with (progress(f"arm {name}: searching", len(gs.questions)) if progress else nullcontext()) as bar:
            # the arm's name: its journal; its own stages (embedding) print as "arm NAME: ..."
            arm.prepare(corpus, replace(context, name=name, progress=_prefixed(progress, name)))
            start = time.perf_counter()  # the search alone: prepare (index, model) excluded
            returned = arm.search(gs.questions, asked)
            seconds = time.perf_counter() - start
            if bar is not None:
                bar(len(gs.questions))
        # foreign hits (ids the arm was given that match no chunk) get rows of their own, after the
        # corpus's: only for an arm that has some (corpus/foreign); the others read the corpus's columns
        read_over = foreign_columns(returned, chunks)
        # where results enter the run: a broken one (not an ArmResult, rank 0, a gap, NaN, a chunk twice,
        # an id neither in the corpus nor declared foreign...) is exit 2 naming the arm and the question,
        # never stored (arms/contract)
        check_results(name, returned, [q.question_id for q in gs.questions], read_over, asked, order_rule(arm))
        results = [replace(r, arm=name) for r in returned]  # the config's arm name: one kind serves several arms
        read_codes = codes if read_over is chunks else page_codes(read_over)  # each foreign hit a page of its own
        short = short_lists(results, read_over, read_codes, plan.cutoff, asked)
        if plan.unit == "page":  # ranks count pages: each page at its best chunk
            results = [best_per_page(r, read_over, read_codes, depth) for r in results]
        df = arm_frame(results, corpus, read_over)
        lat = arm_latency_frame(arm, name, [q.question_id for q in gs.questions], seconds)
        with atomic_path(timed, within=writer.path) as tmp:
            lat.to_parquet(tmp, index=False)
        with atomic_path(out, within=writer.path) as tmp:
            df.to_parquet(tmp, index=False)
        # per-arm count of empty result lists (and known reasons): the run summary reads it
        return df, {"kind": _kind(cfg, name), **redact_params(arm.describe()), **empty_counts(results),
                    "depth": depth, "depth_unit": plan.unit, "chunk_depth": asked,
                    **({"short_lists": short} if short else {})}, lat
    finally:
        close = getattr(arm, "close", None)  # engine arms stop their server or connection
        if callable(close):
            close()


@dataclass(frozen=True)
class GoldsetSource:
    """A run from a gold set: its corpus is built and every arm searched (the
    :class:`~rulegauge.pipeline.lifecycle.RunSource` of ``rulegauge run``)."""

    goldset: GoldSet
    corpus: Corpus
    cfg: RunConfig
    cache_dir: Path
    resumable: bool = True
    plan: DepthPlan = DEFAULT_PLAN

    @classmethod
    def load(cls, options: RunOptions, progress: Progress | None = None) -> GoldsetSource:
        if options.source_run is not None:
            raise ConfigError("a run --from stored arm ranks is rulegauge.pipeline.rescore.rescore(options)")
        plan = DepthPlan(options.depth_unit)  # an unknown unit: before the corpus is built
        gs, corpus, cfg = load_inputs(options, progress)
        cutoffs = [s.cutoff for s in metric_specs(options, cfg) if s.cutoff is not None]
        return cls(gs, corpus, cfg, _cache_dir(options), plan=replace(plan, cutoff=max(cutoffs, default=None)))

    def sizes(self) -> tuple[int, int]:
        return len(self.goldset.questions), len(self.corpus.chunks)

    def preflight(self, options: RunOptions) -> None:
        # arm preflight (a dead endpoint, a refused database): exit 2 before any folder exists
        preflight_arms(self.cfg.arm_names, self.corpus, self.goldset.questions,
                       ArmContext(cache_dir=self.cache_dir, arm_params=self.cfg.arm_params))

    def begin(self, writer: RunWriter, run_id: str, specs: list[Metric]) -> dict[str, Any]:
        inputs = inputs_section(self.goldset, self.corpus, self.cfg)
        existing = writer.read_manifest()
        if existing:  # a resumed run: its inputs must hash the same, its arms count depth alike
            check_inputs(existing, inputs)
            if existing.get("depth_unit", "chunk") != self.plan.unit:
                raise ProvenanceError(f"run does not match its inputs: depth unit: run has "
                                      f"{existing.get('depth_unit', 'chunk')}, options give {self.plan.unit}")
            return {}
        return {**base_manifest(run_id), **inputs, "metrics": [s.name for s in specs],
                "depth_unit": self.plan.unit}

    def inputs(self, writer: RunWriter, engine: EngineInfo, progress: Progress | None) -> RankInputs:
        gs, corpus, cfg = self.goldset, self.corpus, self.cfg
        makers: tuple[tuple[str, Callable[[], pd.DataFrame]], ...] = (
            ("questions", lambda: questions_frame(gs)),
            ("question_facts", lambda: question_facts_frame(gs)),
            ("question_judgments", lambda: question_judgments_frame(gs)),
            ("documents", lambda: documents_frame(corpus)),
            ("chunks", lambda: chunks_frame(corpus)))
        for name, make in makers:
            if not writer.has_table(name):
                writer.write_table(name, make())
        context = ArmContext(cache_dir=self.cache_dir, progress=progress, engine=engine.name,
                             run_dir=writer.path, arm_params=cfg.arm_params)
        arm_ranks, arms, latency = run_arms(writer, gs, corpus, cfg, context, progress, self.plan)
        if not writer.has_table("search_latency") and len(latency):
            writer.write_table("search_latency", latency)
        if not writer.has_table("arm_ranks"):
            writer.write_table("arm_ranks", arm_ranks)
        matrix = RankMatrix.from_arm_ranks(arm_ranks, [q.question_id for q in gs.questions],
                                           cfg.arm_names)
        gold = make_gold(gs.questions, matrix, {c.chunk_id: (c.doc_id, c.page) for c in corpus.chunks})
        return RankInputs(matrix, gold, {"arms": arms} if arms else {})

    def result(self, path: Path, metrics: pa.Table) -> RunResult:
        return RunResult(path, self.goldset, self.corpus, self.cfg, metrics)


def run(options: RunOptions = RunOptions(), progress: Progress | None = None) -> RunResult:
    """Execute (or resume) a retrieval run from a gold set; returns where it was written."""
    return execute(options, partial(GoldsetSource.load, progress=progress), progress)
