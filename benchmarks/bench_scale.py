"""Benchmark: how each stage of `rulegauge run` grows with corpus and gold-set size.

A generated library (seed 0, reproducible): 20 games, each a rulebook and an errata
as JSONL pages of 40-80 words from a Zipf vocabulary of 20,000 synthetic words, one
chunk per page, a heading per page (unique, printed as the page's first line, so
every heading's pattern is compiled and found, as on a real rulebook's pages);
questions are 8 words drawn from one page (its relevant page) plus 2 random words.
Sizes: 5k and 50k chunks x 1k and 10k questions. The grid has 203 configs (RRF k in
1, 3, ..., 99 x 4 arm subsets of bm25/dense/boost, plus each arm alone), scored with
the default metrics; the fused rows of one config (the first) are stored, whole
lists (``--fused-config``: 10k questions x 203 configs would exceed the default row
budget, and the run would be refused with a message saying so).

What is timed: :func:`rulegauge.pipeline.retrieval.run` itself, the function
``rulegauge run`` calls, in a fresh process per repeat, with every question searched
(no sampling). The stages are the functions ``run`` calls, wrapped with timers
in the benchmark process only (nothing in ``rulegauge/`` is changed for it):

* ``load``: ``load_inputs`` (grid file, ``load_goldset``, ``build_corpus`` with a
  warm page cache, ``check_corpus``);
* ``bm25``, ``boost``, ``dense``: each arm's ``prepare`` and ``search`` over all
  questions, as ``run_arms`` calls them. ``dense`` runs from cached vectors: the
  embedding cache is filled beforehand (untimed, another process) by a registered
  stand-in model ``bench-random`` (deterministic unit vectors from the text's
  SHA-256, 384-d like e5-small); the timed process refuses to embed anything, so
  the dense stage is cache lookups, the index and the exact search. The model's own
  load time (e5-small: a few seconds) is not in it; embedding throughput is
  ``bench_embed.py``'s;
* ``frames``: ``arm_frame`` (hits to a table) and the per-arm partial Parquet files;
* ``fuse+score``: ``RankMatrix.from_arm_ranks`` + ``make_gold`` + ``grid_tables``
  (every config fused and scored, the stored config's fused rows built);
* ``write``: every ``RunWriter`` table write (questions, chunks, arm_ranks, fused,
  metrics ...);
* ``other``: the rest of ``run`` (manifest, input hashes); ``total``: all of ``run``.
  ``import`` (process start to the call) is reported apart.

Memory, in the same process (no tracemalloc: it slows Python-heavy code several
fold): a thread samples the resident set (``/proc/self/statm``) every 5 ms and each
stage reports the highest RSS seen while it ran; ``peak RSS`` is the process's
``ru_maxrss`` (the kernel's own high-water mark, imports included).

Repeats: ``--repeats`` fresh processes per size (default 3 for the smallest size,
1 for the others) and the median per stage, as wall time and as CPU time of the
process (all threads: less sensitive than wall time to other work on a shared
machine, which is why the growth is shown for both). Growth: for each stage the time ratio
between 5k and 50k chunks (1k questions) and between 1k and 10k questions (5k
chunks), and the fitted exponent ``log(ratio) / log(10)`` (1 = linear in that
dimension, 0 = independent of it). Target: peak RSS of the 50k-chunk/10k-question/
203-config run < 4 GB.

Run: .venv/bin/python benchmarks/bench_scale.py [--sizes 5000x1000,50000x1000,5000x10000,50000x10000]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from standin import SeededModel

T_START = time.perf_counter()
GAMES = 20
DEPTH = 100
DIM = 384
STAGES = ("load", "bm25", "boost", "dense", "frames", "fuse+score", "write", "other", "total")
FAKE_MODEL = "bench-random"


def generate(root: Path, n_chunks: int, n_q: int, seed: int = 0) -> Path:
    """Write the generated library and gold set under ``root``; return the gold set path."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i:05d}" for i in range(20000)])
    zipf = 1.0 / np.arange(1, len(vocab) + 1)
    zipf /= zipf.sum()
    per_game = n_chunks // GAMES
    lengths = rng.integers(40, 81, size=n_chunks + GAMES)
    pool = iter(np.split(rng.choice(vocab, size=int(lengths.sum()), p=zipf), np.cumsum(lengths)[:-1]))
    docs: list[tuple[str, str, str]] = []  # (doc_id, kind, game)
    pages: list[tuple[int, int, Any]] = []  # (doc index, page, words)
    lines = ["goldset: scale", "version: 1", "documents:"]
    for g in range(GAMES):
        for kind, n in (("rulebook", per_game - per_game // 10), ("errata", per_game // 10)):
            did = f"g{g:02d}-{kind}"
            path = root / f"{did}.jsonl"
            with path.open("w") as f:
                for p in range(1, n + 1):
                    words = next(pool)
                    heading = f"Game {g} {kind} section {p}"
                    f.write(json.dumps({"page": p, "heading": heading,
                                        "text": heading + "\n" + " ".join(words)}) + "\n")
                    pages.append((len(docs), p, words))
            docs.append((did, kind, f"Game {g:02d}"))
            lines += [f"  - id: {did}", f"    path: {path.name}", f"    kind: {kind}",
                      f"    game: Game {g:02d}", "    edition: en-1", "    language: en", f"    title: {did}"]
    lines.append("questions:")
    for i in range(n_q):
        di, p, words = pages[int(rng.integers(len(pages)))]
        text = " ".join(list(rng.choice(words, 8)) + list(rng.choice(vocab, 2)))
        lines.append(f"  - {{id: s-{i:05d}, language: en, game: {docs[di][2]!r}, question: \"{text}\", "
                     f"pages: [{docs[di][0]}#{p}]}}")
    gs = root / "scale.yaml"
    gs.write_text("\n".join(lines) + "\n")
    subsets = '[["bm25", "dense", "boost"], ["bm25", "dense"], ["bm25", "boost"], ["dense", "boost"]]'
    (root / "grid.toml").write_text(
        "[defaults]\nk = 60\ndepth = 100\n\n"
        f'[arms.dense]\nmodel = "{FAKE_MODEL}"\n\n'
        f'[grid]\nmethod = "rrf"\nk = {list(range(1, 101, 2))}\narms = {subsets}\n')
    return gs


class RandomModel(SeededModel):
    """The stand-in model (benchmarks/standin.py) that refuses to embed in the timed run."""

    def __init__(self) -> None:
        super().__init__(FAKE_MODEL, DIM, "benchmark stand-in, random unit vectors")

    def _vectors(self, role: str, texts: Any) -> np.ndarray:
        if os.environ.get("BENCH_SCALE_NO_EMBED"):
            raise RuntimeError("bench_scale: the timed run must find every vector in the cache")
        return super()._vectors(role, texts)


def register_model() -> None:
    from rulegauge.embedding.models import EMBEDDING_MODELS, ModelSpec

    if FAKE_MODEL not in EMBEDDING_MODELS:
        EMBEDDING_MODELS.add(FAKE_MODEL, ModelSpec(FAKE_MODEL, "benchmark stand-in",
                                                   lambda root, backend: RandomModel()))


def options(root: Path, run_id: str) -> Any:
    from rulegauge.fusion.configs import load_config
    from rulegauge.pipeline.grid_tables import StorePolicy
    from rulegauge.pipeline.options import RunOptions

    first = load_config(root / "grid.toml").configs[0].config_id
    return RunOptions(goldset=root / "scale.yaml", config=root / "grid.toml", runs_dir=root / "runs",
                      run_id=run_id, cache_dir=root / "cache", store=StorePolicy(configs=(first,)))


def prepare(root: Path, n_chunks: int, n_q: int) -> None:
    """Generate the files and warm the page and embedding caches (not timed)."""
    generate(root, n_chunks, n_q)
    register_model()
    from rulegauge.arms import ArmContext
    from rulegauge.arms.dense import DenseArm
    from rulegauge.pipeline.retrieval import load_inputs

    gs, corpus, _ = load_inputs(options(root, "warm"))
    arm = DenseArm(model=FAKE_MODEL)
    arm.prepare(corpus, ArmContext(cache_dir=root / "cache"))
    arm.search(gs.questions, 1)


class Clock:
    """Per-stage wall time (summed over calls) and highest sampled RSS."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.rss_mb: dict[str, float] = {}
        self._open: list[str] = []
        self._peak = 0
        self._page = os.sysconf("SC_PAGE_SIZE")
        self._stop = threading.Event()
        threading.Thread(target=self._sample, daemon=True).start()

    def _rss(self) -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * self._page

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            self._peak = max(self._peak, self._rss())

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        if self._open:  # nested: counted in the enclosing stage
            yield
            return
        self._open.append(name)
        self._peak = self._rss()
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - t0
            self.cpu[name] = self.cpu.get(name, 0.0) + time.process_time() - c0
            self._peak = max(self._peak, self._rss())
            self.rss_mb[name] = max(self.rss_mb.get(name, 0.0), self._peak / 2**20)
            self._open.pop()

    def wrap(self, name: Callable[..., str] | str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*a: Any, **k: Any) -> Any:
            with self.stage(name(*a, **k) if callable(name) else name):
                return fn(*a, **k)
        return timed


def instrument(clock: Clock) -> None:
    """Wrap the functions ``retrieval.run`` calls with the clock (this process only)."""
    import pandas as pd

    from rulegauge.arms import ARMS, load_builtin_arms
    from rulegauge.fusion.fuse import RankMatrix
    from rulegauge.pipeline import lifecycle, retrieval
    from rulegauge.store.rundir import RunWriter

    load_builtin_arms()
    targets: list[tuple[Any, str, str]] = [(retrieval, "load_inputs", "load")]
    targets += [(ARMS.get(arm), method, arm) for arm in ("bm25", "boost", "dense")
                for method in ("prepare", "search")]
    targets += [(retrieval, "arm_frame", "frames"),
                (pd.DataFrame, "to_parquet", "frames"),  # the partial arm files
                (RunWriter, "write_table", "write"), (RunWriter, "write_arrow", "write"),
                (retrieval, "make_gold", "fuse+score"),
                (lifecycle, "grid_tables", "fuse+score"),  # called by the lifecycle's score step
                (RunWriter, "write_parts", "fuse+score")]  # the fused table streams out of the scoring pass
    for owner, attr, stage in targets:
        setattr(owner, attr, clock.wrap(stage, getattr(owner, attr)))
    from_ranks = RankMatrix.__dict__["from_arm_ranks"].__func__
    setattr(RankMatrix, "from_arm_ranks", classmethod(clock.wrap("fuse+score", from_ranks)))  # noqa: B010


def measure(root: Path, run_id: str) -> dict[str, Any]:
    os.environ["BENCH_SCALE_NO_EMBED"] = "1"
    register_model()
    from rulegauge.pipeline import retrieval

    clock = Clock()
    instrument(clock)
    t_import = time.perf_counter() - T_START
    t0, c0 = time.perf_counter(), time.process_time()
    result = retrieval.run(options(root, run_id))
    total, total_cpu = time.perf_counter() - t0, time.process_time() - c0
    seconds, cpu = dict(clock.seconds), dict(clock.cpu)
    seconds["other"], cpu["other"] = total - sum(seconds.values()), total_cpu - sum(cpu.values())
    seconds["total"], cpu["total"] = total, total_cpu
    manifest = json.loads((result.path / "manifest.json").read_text())
    return {"seconds": seconds, "cpu_s": cpu, "rss_mb": clock.rss_mb, "import_s": t_import,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "chunks": len(result.corpus.chunks) if result.corpus else 0,
            "questions": len(result.goldset.questions) if result.goldset else 0,
            "configs": len(result.config.configs), "metric_rows": len(result.metrics),
            "dense_cache": manifest["arms"]["dense"].get("cache", {})}


def run_size(size: str, repeats: int, workdir: Path | None) -> dict[str, Any]:
    n, q = (int(x) for x in size.split("x"))
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        root = Path(tmp)
        subprocess.run([sys.executable, __file__, "--prepare", size, "--dir", tmp], check=True)
        runs = []
        for i in range(repeats):
            t0 = time.perf_counter()
            p = subprocess.run([sys.executable, __file__, "--measure", f"r{i}", "--dir", tmp],
                               capture_output=True, text=True)
            if p.returncode != 0:
                raise SystemExit(f"size {size} failed:\n{p.stderr[-3000:]}")
            runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
            runs[-1]["process_s"] = time.perf_counter() - t0
            print(f"  {size} repeat {i + 1}/{repeats}: total {runs[-1]['seconds']['total']:.1f} s, "
                  f"peak RSS {runs[-1]['peak_rss_mb']:.0f} MB", file=sys.stderr, flush=True)
            for old in (root / "runs").glob("*"):  # keep the disk small between repeats
                subprocess.run(["rm", "-rf", str(old)], check=True)
    med = {s: statistics.median(r["seconds"].get(s, 0.0) for r in runs) for s in STAGES}
    cpu = {s: statistics.median(r["cpu_s"].get(s, 0.0) for r in runs) for s in STAGES}
    return {"size": size, "chunks": n, "questions": q, "repeats": repeats, "median_s": med, "cpu_s": cpu,
            "runs": runs, "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
            "rss_mb": {s: max(r["rss_mb"].get(s, 0.0) for r in runs) for s in STAGES[:-2]},
            "import_s": statistics.median(r["import_s"] for r in runs),
            "process_s": statistics.median(r["process_s"] for r in runs)}


def growth_class(exponent: float) -> str:
    if exponent < 0.3:
        return "flat"
    if exponent < 0.85:
        return "sub-linear"
    if exponent < 1.15:
        return "linear"
    if exponent < 1.35:
        return "n log n-ish"
    return "super-linear"


def report(results: list[dict[str, Any]]) -> None:
    for label, key in (("wall seconds (median)", "median_s"), ("CPU seconds, all threads (median)", "cpu_s")):
        print(f"{label}:")
        print(f"{'chunks':>7} {'questions':>9} " + " ".join(f"{s:>10}" for s in STAGES)
              + f" {'import':>7} {'peak RSS':>9}")
        for r in results:
            print(f"{r['chunks']:>7} {r['questions']:>9} "
                  + " ".join(f"{r[key][s]:9.1f}s" for s in STAGES)
                  + f" {r['import_s']:6.1f}s {r['peak_rss_mb']:7.0f}MB")
    print("highest RSS while each stage ran (MB):")
    for r in results:
        print(f"{r['chunks']:>7} {r['questions']:>9} "
              + " ".join(f"{r['rss_mb'].get(s, 0):10.0f}" for s in STAGES[:-2]))
    by_size = {(r["chunks"], r["questions"]): r for r in results}
    pairs = (((5000, 1000), (50000, 1000), "x10 chunks"), ((5000, 10000), (50000, 10000), "x10 chunks @10k q"),
             ((5000, 1000), (5000, 10000), "x10 questions"), ((50000, 1000), (50000, 10000), "x10 q @50k"))
    for label, key in (("wall", "median_s"), ("CPU", "cpu_s")):
        print(f"growth of {label} time (ratio, exponent = log10 of it, class):")
        for s in STAGES:
            cells = []
            for small, big, what in pairs:
                if small in by_size and big in by_size and by_size[small][key][s] > 0:
                    ratio = by_size[big][key][s] / by_size[small][key][s]
                    e = math.log10(ratio) if ratio > 0 else float("nan")
                    cells.append(f"{what}: x{ratio:.1f} ({e:.2f} {growth_class(e)})")
            print(f"{s:>10}: " + "; ".join(cells))
    reps = ", ".join(f"{r['size']}: {r['repeats']}" for r in results)
    print(f"(medians of fresh processes per size: {reps}; every question searched; "
          f"{results[0]['runs'][0]['configs']} configs)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="5000x1000,50000x1000,5000x10000,50000x10000")
    ap.add_argument("--repeats", type=int, default=0,
                    help="fresh processes per size (0: 3 for 5000x1000, else 1)")
    ap.add_argument("--workdir", type=Path, help="where the generated files go (default: $TMPDIR)")
    ap.add_argument("--log", type=Path, help="also append each size's JSON result to this file")
    ap.add_argument("--prepare", help=argparse.SUPPRESS)
    ap.add_argument("--measure", help=argparse.SUPPRESS)
    ap.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.prepare:
        n, q = (int(x) for x in args.prepare.split("x"))
        prepare(args.dir, n, q)
        return
    if args.measure:
        print(json.dumps(measure(args.dir, args.measure)))
        return
    results = []
    for size in args.sizes.split(","):
        repeats = args.repeats or (3 if size == "5000x1000" else 1)
        results.append(run_size(size, repeats, args.workdir))
        if args.log:
            with args.log.open("a") as f:
                f.write(json.dumps(results[-1]) + "\n")
    report(results)


if __name__ == "__main__":
    main()
