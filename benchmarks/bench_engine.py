"""Engines side by side: `local` against `ray` on SRD embedding and on 200 answer calls.

Every measurement runs in its own process (this script with ``--phase``), so each has its
own driver memory figure (peak RSS, ``ru_maxrss``) and the ray phases start their own
single-node cluster, as ``rulegauge run --engine ray`` does without ``--address``.

* Embedding: a seeded sample of SRD 5.1 chunks (``--sample``, default 128 of 2,351; the
  whole SRD takes over 7 minutes per engine on this 2-core machine under load) embedded by
  ``rulegauge.embedding.cache.embed`` into a fresh cache with the dense arm's model and
  batching (e5-small, backend ``auto``, 32 per batch), through the engine's runner
  (``rulegauge.embedding.fanout``): what ``rulegauge run`` does for the dense arm. Timed: the
  embedding call (for ray: Ray Data planning, actor start and model load on the worker,
  the batches, the shards); the cluster start is reported on its own. The vectors of
  both engines must be identical (exit 1 otherwise).
* Answering: ``--calls`` (200) questions asked of a local HTTP chat server answering every
  call after ``--latency`` (50 ms), through the engine's asker (``rulegauge.answering.fanout``)
  with the ``ollama`` answerer, at ``workers`` = 1 and 8. Reported: wall time of the whole
  ask (for ray: the actor start too) and the steady rate from the first answer to the last.

Ratios: ray/local embedding time (target <= 1.3), and per engine the concurrency-8 rate over
the serial rate (target >= 8x). Medians of ``--repeats``, engines alternating.

Usage: ``.venv/bin/python benchmarks/bench_engine.py [--sample 128] [--repeats 3]`` (needs
../shared and the [ray] extra).
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
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
SRD = REPO.parent / "shared" / "corpora" / "srd-5.1" / "SRD5.1-CCBY4.0License.pdf"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def srd_sample(n: int, seed: int) -> list[str]:
    from rulegauge.corpus.chunking import build_corpus
    from rulegauge.corpus.ingest import spec_from_path
    from rulegauge.corpus.page_cache import PageCache
    from rulegauge.embedding.models import cache_root

    corpus = build_corpus([spec_from_path(SRD)], page_cache=PageCache(cache_root()))
    texts = [c.text for c in corpus.chunks]
    rng = np.random.default_rng(seed)
    idx = sorted(rng.choice(len(texts), size=min(n, len(texts)), replace=False).tolist())
    return [texts[i] for i in idx]


def phase_embed(args: argparse.Namespace) -> dict[str, float]:
    from functools import partial

    from rulegauge.core.engines import EngineChoice, open_engine
    from rulegauge.embedding.backends import resolve_backend
    from rulegauge.embedding.cache import EmbeddingCache, embed
    from rulegauge.embedding.fanout import runner_for
    from rulegauge.embedding.models import cache_root, load_model

    texts = srd_sample(args.sample, 0)
    backend = resolve_backend("auto").name
    model = load_model("e5-small", cache_root(), backend)
    loader = partial(load_model, "e5-small", cache_root(), backend)
    start = time.perf_counter()
    with open_engine(EngineChoice(args.engine)) as info, \
            tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter() - start
        cache = EmbeddingCache(tmp, model.model_id)
        wall, cpu = time.perf_counter(), time.process_time()
        vectors = embed(model, texts, "passage", cache, 32, runner=runner_for(info.name, loader))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    np.save(args.vectors, vectors)
    return {"startup_s": started, "embed_s": wall, "driver_cpu_s": cpu,
            "passages": len(texts), "peak_rss_mb": peak_rss_mb()}


def phase_answer(args: argparse.Namespace) -> dict[str, float]:
    from functools import partial

    from rulegauge.answering.answerers import make_answerer
    from rulegauge.answering.answerers.base import ANSWERERS
    from rulegauge.answering.fanout import ASKERS
    from rulegauge.answering.requests import AnswerRequest
    from rulegauge.core.engines import EngineChoice, open_engine

    params = {"model": "stub", "base_url": args.url, "retries": 0}
    answerer = make_answerer("ollama", **params)
    jobs = [("c", AnswerRequest(f"q{i}", f"How far may boat {i} move?", "en", ()))
            for i in range(args.calls)]
    arrived: list[float] = []
    with open_engine(EngineChoice(args.engine)) as info:
        start = time.perf_counter()
        ASKERS.get(info.name)(answerer, partial(ANSWERERS.get("ollama"), **params), jobs,
                              args.workers, lambda c, r, resp: arrived.append(time.perf_counter()))
        wall = time.perf_counter() - start
    steady = (len(arrived) - 1) / (arrived[-1] - arrived[0])
    return {"wall_s": wall, "steady_calls_per_s": steady, "calls": len(arrived),
            "peak_rss_mb": peak_rss_mb()}


def run_phase(*argv: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, *argv], capture_output=True, text=True,
                         check=False, env={**os.environ, "TOKENIZERS_PARALLELISM": "false"})
    if out.returncode != 0:
        raise SystemExit(f"phase {argv} failed:\n{out.stderr[-3000:]}")
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def med(rows: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, default=128, help="SRD chunks embedded (seed 0)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--latency", type=float, default=0.05, help="server seconds per call")
    ap.add_argument("--skip-embed", action="store_true")
    ap.add_argument("--skip-answer", action="store_true")
    ap.add_argument("--phase", choices=["embed", "answer"], help=argparse.SUPPRESS)
    ap.add_argument("--engine", default="local", help=argparse.SUPPRESS)
    ap.add_argument("--workers", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--url", help=argparse.SUPPRESS)
    ap.add_argument("--vectors", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.phase:
        print(json.dumps(phase_embed(args) if args.phase == "embed" else phase_answer(args)))
        return 0

    print(f"load average at start: {os.getloadavg()}")
    status = 0
    if not args.skip_embed:
        emb: dict[str, list[dict[str, float]]] = {"local": [], "ray": []}
        with tempfile.TemporaryDirectory() as tmp:
            for rep in range(args.repeats):
                for engine in ("local", "ray"):
                    vec = str(Path(tmp) / f"{engine}-{rep}.npy")
                    emb[engine].append(run_phase("--phase", "embed", "--engine", engine,
                                                 "--sample", str(args.sample), "--vectors", vec))
                    print(f"embed {engine} #{rep + 1}: {emb[engine][-1]}", flush=True)
                same = np.array_equal(np.load(Path(tmp) / f"local-{rep}.npy"),
                                      np.load(Path(tmp) / f"ray-{rep}.npy"))
                print(f"  vectors identical: {same}")
                status |= 0 if same else 1
        ratio = med(emb["ray"], "embed_s") / med(emb["local"], "embed_s")
        print(f"embedding {args.sample} SRD chunks, medians: local {med(emb['local'], 'embed_s'):.1f} s, "
              f"ray {med(emb['ray'], 'embed_s'):.1f} s (+ cluster start {med(emb['ray'], 'startup_s'):.1f} s): "
              f"ray/local = {ratio:.2f}x (target <= 1.3); driver peak RSS local "
              f"{med(emb['local'], 'peak_rss_mb'):.0f} MB, ray {med(emb['ray'], 'peak_rss_mb'):.0f} MB")

    if args.skip_answer:
        return status
    from tests.helpers.chat_server import chat_server, delay

    ans: dict[tuple[str, int], list[dict[str, float]]] = {}
    for rep in range(args.repeats):
        for engine in ("local", "ray"):
            for workers in (1, 8):
                with chat_server([delay(args.latency)] * args.calls) as srv:
                    row = run_phase("--phase", "answer", "--engine", engine, "--workers",
                                    str(workers), "--calls", str(args.calls), "--url", srv.base_url)
                ans.setdefault((engine, workers), []).append(row)
                print(f"answer {engine} workers={workers} #{rep + 1}: {row}", flush=True)
    for engine in ("local", "ray"):
        serial, eight = ans[(engine, 1)], ans[(engine, 8)]
        print(f"{engine}: {args.calls} calls at {args.latency * 1000:.0f} ms: serial "
              f"{med(serial, 'wall_s'):.2f} s, workers=8 {med(eight, 'wall_s'):.2f} s wall "
              f"({med(serial, 'wall_s') / med(eight, 'wall_s'):.2f}x); steady rate "
              f"{med(serial, 'steady_calls_per_s'):.1f} -> {med(eight, 'steady_calls_per_s'):.1f} "
              f"calls/s ({med(eight, 'steady_calls_per_s') / med(serial, 'steady_calls_per_s'):.2f}x, "
              f"target >= 8x); driver peak RSS {med(eight, 'peak_rss_mb'):.0f} MB")
    print(f"load average at end: {os.getloadavg()}")
    return status


if __name__ == "__main__":
    sys.exit(main())
