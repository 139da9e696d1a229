"""Benchmark: the whole SRD 5.1 (403 pages) through `rulegauge run` with all three arms.

Corpus: ``../shared/corpora/srd-5.1/SRD5.1-CCBY4.0License.pdf``, default chunking.
Gold set: derived from the PDF's bookmarks (:func:`rulegauge.goldset.derive.from_outline`,
``--questions`` sampled with seed 0) into a temporary folder. Config: the default
grid (bm25, dense e5-small, boost; 8 fused configs plus the 3 single-arm ones).

Each run is a fresh Python process (so peak memory is that run's own):
``pipeline.run`` with a timing progress hook. Stages:

* ingest: from the start of the run to its first arm stage (gold-set load,
  PDF text extraction, chunking, writing the corpus tables);
* embed: the dense arm's "embedding passage texts" stage (0 when cached);
* dense arm: model load + passage embedding + query embedding + search;
* bm25 arm, boost arm: prepare + search; fuse: fusion and metrics of every config;
* total: the whole ``pipeline.run`` call; process: the child process from start to
  exit as the parent sees it (imports included: torch and sentence-transformers are
  imported only when something must be embedded); cpu: the child's user+system CPU
  seconds (less sensitive than wall time to other jobs on a shared machine); peak RSS:
  ``ru_maxrss`` of the process.

``--backend`` sets the dense arm's backend (default ``auto``: int8 on AVX-512 VNNI CPUs; the
resolved name is printed from the manifest). Page texts go through the page-text cache
in the same temporary cache folder, so the cold run extracts the PDF with pypdf and
the warm runs read the cached pages. After the warm runs, one more warm run goes
through the real CLI (``rulegauge run -g ... --cache-dir ...`` as a subprocess).

The first run starts from an empty embedding cache (a temporary cache whose
``models/`` links to the real model cache, so the e5 conversion is not timed);
the following runs reuse it and must embed nothing (asserted: zero model calls,
zero misses; the cache hit count is printed). Warm figures are medians over
``--warm`` runs; ratios are warm median / cold run.

Run: .venv/bin/python benchmarks/bench_srd.py [--questions 200] [--warm 2] [--backend auto]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared"
PDF = SHARED / "corpora" / "srd-5.1" / "SRD5.1-CCBY4.0License.pdf"
STAGES = ("ingest_s", "embed_s", "arm_bm25_s", "arm_dense_s", "arm_boost_s", "fuse_s", "total_s",
          "process_s", "cpu_s")


class StageTimer:
    """A ``progress(description, total)`` hook that records each stage's wall time."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.first: float | None = None
        self.spans: dict[str, float] = {}

    def __call__(self, description: str, total: int) -> object:
        if self.first is None:
            self.first = time.perf_counter() - self.start
        return self._span(description)

    @contextmanager
    def _span(self, description: str) -> Iterator[Callable[[int], None]]:
        t = time.perf_counter()
        try:
            yield lambda n=1: None
        finally:
            self.spans[description] = self.spans.get(description, 0.0) + time.perf_counter() - t

    def stage(self, prefix: str) -> float:
        return sum(v for k, v in self.spans.items() if k.startswith(prefix))


def child(goldset: Path, cache: Path, runs: Path, run_id: str, backend: str) -> dict[str, object]:
    """One timed run in this process (called in a subprocess by :func:`main`)."""
    from rulegauge.pipeline.options import RunOptions
    from rulegauge.pipeline.retrieval import run

    timer = StageTimer()
    result = run(RunOptions(goldset=goldset, runs_dir=runs, run_id=run_id, cache_dir=cache,
                            arm_overrides={"dense": {"backend": backend}},
                            allow_outside=True),  # a derived gold set in a temp folder
                 progress=timer)
    total = time.perf_counter() - timer.start
    manifest = json.loads((result.path / "manifest.json").read_text(encoding="utf-8"))
    cache_stats = manifest["arms"]["dense"]["cache"]
    m = result.metrics
    r5 = m[(m["metric"] == "recall@5") & m["answerable"]].groupby("config_id")["value"].mean()
    return {"ingest_s": timer.first, "embed_s": timer.stage("embedding passage"),
            "arm_bm25_s": timer.stage("arm bm25"), "arm_dense_s": timer.stage("arm dense"),
            "arm_boost_s": timer.stage("arm boost"), "fuse_s": timer.stage("fusing"),
            "total_s": total, "backend": manifest["arms"]["dense"]["backend_resolved"],
            "cpu_s": sum(resource.getrusage(resource.RUSAGE_SELF)[:2]),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "pages": result.corpus.page_count[result.corpus.documents[0].doc_id],
            "chunks": len(result.corpus.chunks), "questions": len(result.goldset.questions),
            "cache": cache_stats, "recall@5": {k: float(v) for k, v in r5.items()}}


ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
       "TOKENIZERS_PARALLELISM": "false"}


def _spawn(goldset: Path, cache: Path, runs: Path, run_id: str, backend: str) -> dict[str, object]:
    cmd = [sys.executable, __file__, "--child", str(goldset), str(cache), str(runs), run_id,
           backend]
    start = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=ENV)
    return {**json.loads(out.stdout.strip().splitlines()[-1]),
            "process_s": time.perf_counter() - start}


def _cli_run(goldset: Path, cache: Path, cwd: Path, backend: str) -> tuple[float, float, dict]:
    """``rulegauge run`` as a user types it; (wall s, CPU s, the dense arm's manifest)."""
    rulegauge = Path(sys.executable).with_name("rulegauge")
    cmd = [str(rulegauge), "run", "-g", str(goldset), "--allow-outside", "--cache-dir", str(cache),
           "--run-id", "cli",
           "-p", f"dense.backend={backend}"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, text=True, env=ENV, cwd=cwd)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    manifest = json.loads((cwd / "runs" / "cli" / "manifest.json").read_text(encoding="utf-8"))
    return wall, sum(after[:2]) - sum(before[:2]), manifest["arms"]["dense"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=200, help="bookmarks sampled (seed 0)")
    ap.add_argument("--warm", type=int, default=2, help="runs reusing the embedding cache")
    ap.add_argument("--backend", default="auto", help="the dense arm's backend")
    args = ap.parse_args()
    if not PDF.exists():
        raise SystemExit(f"needs {PDF}")
    from rulegauge.embedding.models import cache_root
    from rulegauge.goldset.derive import from_outline

    with tempfile.TemporaryDirectory(prefix="bench-srd-") as tmp:
        work = Path(tmp)
        derived = from_outline(PDF, work / "srd-outline.yaml", doc_id="srd", game="SRD 5.1",
                               edition="5.1", max_questions=args.questions, seed=0)
        cache = work / "cache"
        cache.mkdir()
        real_models = cache_root() / "models"
        real_models.mkdir(parents=True, exist_ok=True)
        (cache / "models").symlink_to(real_models, target_is_directory=True)
        print(f"SRD 5.1: {derived.questions} questions from {derived.candidates} usable "
              f"bookmarks; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
              flush=True)
        cold = _spawn(derived.path, cache, work / "runs", "cold", args.backend)
        print(f"dense backend: {args.backend} -> {cold['backend']}", flush=True)
        _show("cold", cold)
        warm = []
        for i in range(args.warm):
            w = _spawn(derived.path, cache, work / "runs", f"warm-{i + 1}", args.backend)
            c = w["cache"]
            if c["model_calls"] or c["misses"]:  # type: ignore[index]
                raise SystemExit(f"warm run {i + 1} embedded texts again: {c}")
            _show(f"warm {i + 1}", w)
            warm.append(w)
        wall, cpu, dense = _cli_run(derived.path, cache, work, args.backend)
        if dense["cache"]["misses"]:
            raise SystemExit(f"the CLI warm run embedded texts again: {dense['cache']}")
        print(f"CLI warm run (rulegauge run as a subprocess): {wall:.1f} s wall, {cpu:.1f} s CPU",
              flush=True)
    if warm:
        med = {k: statistics.median(float(w[k]) for w in warm) for k in (*STAGES, "peak_rss_mb")}
        _show("warm median", {**warm[0], **med})
        print("ratio warm/cold: " + ", ".join(
            f"{k.removesuffix('_s')} {med[k] / float(cold[k]):.2f}" for k in
            ("ingest_s", "arm_dense_s", "total_s", "process_s", "cpu_s", "peak_rss_mb")
            if float(cold[k])))
    print("recall@5 (cold run): " + ", ".join(
        f"{k} {v:.3f}" for k, v in sorted(cold["recall@5"].items())))  # type: ignore[union-attr]


def _show(label: str, r: dict[str, object]) -> None:
    c = r["cache"]
    print(f"{label:>12}: " + " ".join(f"{k.removesuffix('_s')} {float(r[k]):.1f}s"
                                      for k in STAGES)
          + f" | peak RSS {float(r['peak_rss_mb']):.0f} MB | {r['pages']} pages, {r['chunks']} "
          f"chunks, {r['questions']} questions | embedding cache: {c['hits']} hits, "  # type: ignore[index]
          f"{c['misses']} misses, {c['model_calls']} model calls", flush=True)  # type: ignore[index]


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "--child":
        print(json.dumps(child(Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]),
                               sys.argv[5], sys.argv[6])))
    else:
        main()
