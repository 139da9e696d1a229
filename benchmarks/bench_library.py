"""Benchmark: ``rulegauge run`` on a generated library of many games, stage by stage.

The library: ``--games`` generated games (seeded, reproducible: ``bench_scale.generate``,
a rulebook and an errata per game, Zipf vocabulary), ``CHUNKS`` chunks in all, and
``QUESTIONS`` questions, each with its ``game``; the grid of ``bench_scale``: RRF with 50
values of k x 4 arm subsets = 200 configs (+3 single-arm configs), all three arms
(bm25, dense, boost), every config's fused rows stored to ``--fused-depth`` (20, as the
README's ``rulegauge run -c docs/grids/grid-200.toml --fused-depth 20``).

Vectors: the dense arm reads them from the embedding cache, in the cache's own format
(``rulegauge.embedding.cache``: ``<cache>/embeddings/<model_id>/shard-*.npz``), written
beforehand (untimed, another process) by the stand-in model ``bench-random`` of
``bench_scale`` (a unit vector seeded by the text's SHA-256, 384-d like e5-small); the
timed process refuses to embed. So the figures exclude the embedding itself, which is
given per passage by ``bench_embed.py`` (and estimated on paper below).

Timed: ``rulegauge.pipeline.retrieval.run`` (the function ``rulegauge run`` calls) in a
fresh process per size, with ``bench_scale``'s stage timers (load, bm25, boost, dense,
frames, fuse+score, write, other), wall and CPU seconds per stage, the highest RSS
sampled while each stage ran, and the process's peak RSS; growth between the sizes
(ratio and exponent per stage). Targets at 300 games / 300k chunks / 10k questions:
total under 10 minutes and peak RSS under 8 GB on 2 cores. The paper estimate of the
embedding (``--passages-per-s``, measured by ``bench_embed.py``) for this machine, a Ray
cluster and one GPU is printed at the end.

Run: .venv/bin/python benchmarks/bench_library.py [--sizes 30x30000x1000,300x300000x10000]
[--prepared DIR] (``--prepared`` keeps the generated libraries for the next invocation)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import bench_scale as bs
from machine import machine_line

STAGES = bs.STAGES


def library_options(root: Path, run_id: str, depth: int) -> Any:
    from rulegauge.pipeline.grid_tables import StorePolicy
    from rulegauge.pipeline.options import RunOptions

    return RunOptions(goldset=root / "scale.yaml", config=root / "grid.toml", runs_dir=root / "runs",
                      run_id=run_id, cache_dir=root / "cache",
                      store=StorePolicy(configs=None, depth=depth, max_rows=10**9))


def child(args: argparse.Namespace) -> None:
    games, chunks, questions = (int(x) for x in args.size.split("x"))
    bs.GAMES = games  # bench_scale.generate reads it when called
    bs.options = lambda root, run_id: library_options(root, run_id, args.fused_depth)
    if args.child == "prepare":
        bs.prepare(args.dir, chunks, questions)
    else:
        print(json.dumps(bs.measure(args.dir, "lib")))


def prepared_dir(size: str, args: argparse.Namespace) -> contextlib.AbstractContextManager[str]:
    """A temporary library folder, or ``--prepared DIR/SIZE`` kept between invocations
    (prepared once: generating 300k chunks and filling their vectors takes minutes)."""
    if args.prepared is None:
        return tempfile.TemporaryDirectory(dir=args.workdir)
    root = args.prepared / size
    root.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(root / "runs", ignore_errors=True)  # each measurement starts without runs
    return contextlib.nullcontext(str(root))


def run_size(size: str, args: argparse.Namespace) -> dict[str, Any]:
    base = [sys.executable, __file__, "--size", size, "--fused-depth", str(args.fused_depth)]
    with prepared_dir(size, args) as tmp:
        t0 = time.perf_counter()
        if not (Path(tmp) / ".prepared").exists():
            subprocess.run([*base, "--child", "prepare", "--dir", tmp], check=True)
            (Path(tmp) / ".prepared").write_text("ok\n")
        prep = time.perf_counter() - t0
        t0 = time.perf_counter()
        p = subprocess.run([*base, "--child", "measure", "--dir", tmp], capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"size {size} failed:\n{p.stderr[-4000:]}")
        out: dict[str, Any] = json.loads(p.stdout.strip().splitlines()[-1])
        out["process_s"], out["prepare_s"], out["size"] = time.perf_counter() - t0, prep, size
        fused = sum(f.stat().st_size for f in (Path(tmp) / "runs").rglob("*") if f.is_file())
        out["run_dir_mb"] = fused / 2**20
    print(f"{size}: total {out['seconds']['total']:.1f} s wall, {out['cpu_s']['total']:.1f} s CPU, "
          f"peak RSS {out['peak_rss_mb']:.0f} MB; {machine_line()}", flush=True)
    return out


def report(results: list[dict[str, Any]], args: argparse.Namespace) -> None:
    for label, key in (("wall s", "seconds"), ("CPU s", "cpu_s"), ("highest RSS MB", "rss_mb")):
        print(f"{label}:  " + " ".join(f"{s:>10}" for s in STAGES))
        for r in results:
            print(f"{r['size']:>18} " + " ".join(f"{r[key].get(s, 0.0):10.1f}" for s in STAGES))
    for r in results:
        print(f"{r['size']}: {r['chunks']} chunks, {r['questions']} questions, {r['configs']} configs, "
              f"{r['metric_rows']:,} metric rows, run directory {r['run_dir_mb']:.0f} MB, peak RSS "
              f"{r['peak_rss_mb']:.0f} MB, process {r['process_s']:.1f} s (import {r['import_s']:.1f} s)")
    if len(results) > 1:
        a, b = results[0], results[-1]
        fc, fq = b["chunks"] / a["chunks"], b["questions"] / a["questions"]
        print(f"growth {a['size']} -> {b['size']} (chunks x{fc:.0f}, questions x{fq:.0f}), CPU ratio per stage:")
        for s in STAGES:
            if a["cpu_s"].get(s, 0) > 0:
                ratio = b["cpu_s"][s] / a["cpu_s"][s]
                print(f"  {s:>10}: x{ratio:.1f} (exponent over the x{max(fc, fq):.0f} step "
                      f"{math.log(ratio) / math.log(max(fc, fq)):.2f})")
    big = results[-1]
    wall, peak = big["seconds"]["total"], big["peak_rss_mb"]
    print(f"TARGET {big['size']}: wall {wall:.0f} s (< 600: {'met' if wall < 600 else 'MISSED'}), "
          f"peak RSS {peak:.0f} MB (< 8192: {'met' if peak < 8192 else 'MISSED'})")
    texts = big["chunks"] + big["questions"]
    rate = args.passages_per_s
    print(f"embedding on paper ({texts:,} texts at {rate:.1f} passages/s per 2-core node, measured by "
          f"bench_embed.py): this machine {texts / rate / 3600:.1f} h; a Ray cluster of N such nodes "
          f"{texts / rate / 3600:.1f}/N h + ~40 s actor start (bench_engine.py: batches are independent); "
          f"one GPU at an assumed {args.gpu_passages_per_s:,.0f} passages/s "
          f"{texts / args.gpu_passages_per_s / 60:.1f} min")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="30x30000x1000,300x300000x10000", help="GAMESxCHUNKSxQUESTIONS, comma-separated")
    ap.add_argument("--fused-depth", type=int, default=20)
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--prepared", type=Path, help="keep each size's generated library under DIR/SIZE and "
                    "reuse it on the next invocation (prepare is untimed either way)")
    ap.add_argument("--passages-per-s", type=float, default=21.6,
                    help="e5-small passages/s on one node (bench_embed.py; 21.6: onnx-int8 on this Zen 4)")
    ap.add_argument("--gpu-passages-per-s", type=float, default=2000.0,
                    help="assumed e5-small passages/s on one GPU (not measured: no GPU here)")
    ap.add_argument("--log", type=Path, help="append each size's JSON result to this file")
    ap.add_argument("--child", choices=("prepare", "measure"), help=argparse.SUPPRESS)
    ap.add_argument("--size", help=argparse.SUPPRESS)
    ap.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return 0
    print("start:", machine_line(), flush=True)
    results = []
    for size in args.sizes.split(","):
        results.append(run_size(size, args))
        if args.log:
            with args.log.open("a") as f:
                f.write(json.dumps(results[-1]) + "\n")
    report(results, args)
    print("end:  ", machine_line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
