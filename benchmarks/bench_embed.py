"""Embedding throughput of every backend on this machine, which one ``auto`` picks, a quality
guard, and a cold collection-scale run through the CLI.

**Throughput** (the default): every concrete backend of
``rulegauge.embedding.backends.BACKENDS`` (``torch-fp32``: sentence-transformers' own fp32
``encode``, the peer; ``torch-bf16``; ``onnx-fp32``; ``onnx-int8``) embeds the same seeded
sample of SRD 5.1 chunks with the real e5-small model and no embedding cache, through
``embed`` as ``rulegauge run`` calls it (batches of 32, longest first, the threads of
``embedding_threads``), alternately in one process (the order rotates each repeat). Printed per
backend: the medians of passages/s by wall time and per CPU-second, the ratio to fp32, the
cores used (CPU-s / wall: at load average L on C cores a process gets about C / L of each
core it asks for), the cosine of every passage's vector to its fp32 vector (min and median);
then which backend ``auto`` resolves to on this CPU (the fastest measured to agree with
torch-fp32 in retrieval on this CPU kind, ``benchmarks/bench_backends.py``), and the fastest
backend within the cosine guard. The machine line (date,
CPU flags, load average) is printed before and after, and one line per run is appended to
``benchmarks/history/bench_embed.log``.

Quality guard (exit 1 when broken): the cosine of every passage's vector to its fp32 vector
>= 0.99 for the backend ``auto`` picks (others are reported, marked when below); with
``--recall``, also recall@5 of the ``arm-dense`` config within 0.01 of fp32 on the Secret
Hitler gold set (``rulegauge run`` once per backend; ``--srd`` adds the SRD gold set derived
from its bookmarks, as tests/test_real_corpora.py builds it: slow on a cold cache, since the
reference embeds all 2,351 chunks in fp32).

**Cold run** (``--cold N``): N chunks of generated rule-like text (:func:`rule_pages`,
seeded; one chunk per page) and 20 questions written as a gold set, then ``rulegauge run``
(the CLI, a subprocess: bm25 and dense, ``-p dense.backend=--cold-backend``, default
``auto``) with a fresh cache folder whose ``models/`` links to the real model cache (so the
one-off e5 conversion and ONNX export are not timed; the embeddings and page texts are
cold). Printed: wall, CPU seconds, cores used and peak RSS of the process (``wait4``), load
average sampled every 10 s; then the same command again, warm (every vector cached: asserted,
zero misses), so the embedding's share is the difference: embedding passages/s = N /
(cold wall - warm wall). ``--cold-only`` skips the throughput part.

Usage: ``.venv/bin/python benchmarks/bench_embed.py [--sample 64] [--repeats 3]
[--backends torch-fp32,onnx-int8] [--recall [--srd]] [--cold 10000 [--cold-backend auto]]
[--cold-only] [--no-log]`` (needs ../shared, or ``RULEGAUGE_SHARED``, for the SRD sample;
the recall runs' embeddings go to ``--cache-dir``, default the user's cache, keyed by backend
so fp32 and bf16 vectors never mix).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
SHARED = Path(os.environ.get("RULEGAUGE_SHARED", REPO.parent / "shared"))  # a worktree elsewhere: set it
SRD = SHARED / "corpora" / "srd-5.1" / "SRD5.1-CCBY4.0License.pdf"
SECRET_HITLER = SHARED / "goldsets" / "secret-hitler.yaml"
HISTORY = REPO / "benchmarks" / "history" / "bench_embed.log"
MIN_COSINE = 0.99
MAX_RECALL_DELTA = 0.01
REFERENCE = "torch-fp32"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def srd_sample(n: int, seed: int, cache: Path) -> list[str]:
    from rulegauge.corpus.chunking import build_corpus
    from rulegauge.corpus.ingest import spec_from_path
    from rulegauge.corpus.page_cache import PageCache

    corpus = build_corpus([spec_from_path(SRD)], page_cache=PageCache(cache))
    texts = [c.text for c in corpus.chunks]
    rng = np.random.default_rng(seed)
    idx = sorted(rng.choice(len(texts), size=min(n, len(texts)), replace=False).tolist())
    return [texts[i] for i in idx]


def timed(fn) -> tuple[float, float, np.ndarray]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def log_history(line: str, *, enabled: bool) -> None:
    """Append one line to ``benchmarks/history/bench_embed.log`` (the README keeps the latest)."""
    if enabled:
        HISTORY.parent.mkdir(parents=True, exist_ok=True)
        with HISTORY.open("a", encoding="utf-8") as f:
            f.write(line + "\n")


# ---------------------------------------------------------------------------
# Throughput of every backend
# ---------------------------------------------------------------------------

def throughput(args: argparse.Namespace, cache: Path, names: list[str]) -> tuple[bool, str]:
    """Time every backend alternately; print the table; (guard failed, history line)."""
    from machine import machine_line

    from rulegauge.embedding.backends import auto_rule, embedding_threads
    from rulegauge.embedding.cache import embed
    from rulegauge.embedding.models import load_model

    texts = srd_sample(args.sample, 0, cache)
    start_line = machine_line()
    print("start:", start_line, flush=True)
    print(f"{len(texts)} SRD chunks (mean {statistics.mean(map(len, texts)):.0f} chars); "
          f"{embedding_threads()} embedding threads; backends {', '.join(names)}", flush=True)
    models = {name: load_model("e5-small", cache, name) for name in names}
    for model in models.values():  # warm-up: load the networks (ONNX: export once), first-call kernels
        model.encode_passages(texts[:4])
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in names}
    vectors: dict[str, np.ndarray] = {}
    loads: list[float] = []
    for r in range(args.repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:
            wall, cpu, vecs = timed(partial(embed, models[name], texts, "passage", None, 32))
            times[name].append((wall, cpu))
            vectors[name] = vecs
            loads.append(os.getloadavg()[0])
            print(f"  repeat {r + 1} {name:>10}: wall {wall:6.1f} s  cpu {cpu:6.1f} s  "
                  f"{len(texts) / wall:6.1f} passages/s  cores used {cpu / wall:4.2f}  "
                  f"load {loads[-1]:.1f}", flush=True)
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in times.items()}
    rate = {k: (len(texts) / w, len(texts) / c) for k, (w, c) in med.items()}
    feature, auto_pick, _ = auto_rule()
    cosines: dict[str, np.ndarray] = {}
    print(f"{'backend':>10} {'pass/s wall':>11} {'per CPU-s':>9} {'x fp32':>6} {'x fp32 CPU':>10} "
          f"{'cores':>5} {'min cos':>8} {'median cos':>10}")
    for name in names:
        cos = (np.einsum("ij,ij->i", vectors[name].astype(np.float64), vectors[REFERENCE].astype(np.float64))
               if REFERENCE in vectors else np.full(len(texts), np.nan))
        cosines[name] = cos
        ref = rate.get(REFERENCE, rate[name])
        flag = "  below the guard" if cos.min() < MIN_COSINE else ""
        print(f"{name:>10} {rate[name][0]:11.1f} {rate[name][1]:9.1f} {rate[name][0] / ref[0]:5.2f}x "
              f"{rate[name][1] / ref[1]:9.2f}x {med[name][1] / med[name][0]:5.2f} {cos.min():8.6f} "
              f"{np.median(cos):10.6f}{flag}")
    within = [n for n in names if not cosines[n].min() < MIN_COSINE]
    fastest = max(within, key=lambda n: rate[n][0]) if within else None
    fastest_cpu = max(within, key=lambda n: rate[n][1]) if within else None
    print(f"auto -> {auto_pick} (CPU kind {feature}: the fastest measured to agree with torch-fp32 in "
          f"retrieval, embedding/agreement.py, else torch-fp32); fastest within the cosine guard (min "
          f"cosine >= {MIN_COSINE}): {fastest} by wall time, {fastest_cpu} per CPU-second")
    end_line = machine_line()
    print("end:  ", end_line, flush=True)
    failed = auto_pick in cosines and bool(cosines[auto_pick].min() < MIN_COSINE)
    summary = "; ".join(
        f"{n} {rate[n][0]:.1f}/s wall {rate[n][1]:.1f}/CPU-s "
        f"({rate[n][0] / rate.get(REFERENCE, rate[n])[0]:.2f}x fp32) cores {med[n][1] / med[n][0]:.2f} "
        f"min cos {cosines[n].min():.6f}" for n in names)
    line = (f"{start_line} | throughput, {len(texts)} SRD chunks, medians of {args.repeats}, load during "
            f"{min(loads):.1f}-{max(loads):.1f} | {summary} | auto -> {auto_pick} (CPU kind {feature}), "
            f"fastest within guard {fastest} (CPU-s: {fastest_cpu})")
    return failed, line


# ---------------------------------------------------------------------------
# Recall guard (opt-in)
# ---------------------------------------------------------------------------

def recall_at_5(goldset: Path, backend: str, cache: Path, runs: Path) -> dict[str, float]:
    """Mean recall@5 over answerable questions per config of a ``rulegauge run``."""
    from rulegauge.pipeline.options import RunOptions
    from rulegauge.pipeline.retrieval import run

    result = run(RunOptions(goldset=goldset, runs_dir=runs, run_id=f"{goldset.stem}-{backend}",
                            cache_dir=cache, arm_overrides={"dense": {"backend": backend}},
                            allow_outside=True))  # documents beside the gold sets in ../shared
    m = result.metrics
    r5 = m[(m["metric"] == "recall@5") & m["answerable"]].groupby("config_id")["value"].mean()
    return {str(k): float(v) for k, v in r5.items()}


def recall_guard(args: argparse.Namespace, cache: Path, names: list[str]) -> bool:
    goldsets = [SECRET_HITLER] + ([derived_srd()] if args.srd else [])
    failed = False
    with tempfile.TemporaryDirectory(prefix="bench-embed-") as tmp:
        for gs in goldsets:
            ref = recall_at_5(gs, REFERENCE, cache, Path(tmp))
            for name in (n for n in names if n != REFERENCE):
                new = recall_at_5(gs, name, cache, Path(tmp))
                worst = max(abs(new[k] - ref[k]) for k in ref)
                print(f"recall@5 {gs.stem}: arm-dense fp32 {ref['arm-dense']:.3f}, {name} "
                      f"{new['arm-dense']:.3f}; largest difference over {len(ref)} configs {worst:.3f}")
                failed |= abs(new["arm-dense"] - ref["arm-dense"]) > MAX_RECALL_DELTA
    return failed


def derived_srd() -> Path:
    from rulegauge.goldset.derive import from_outline

    out = Path(tempfile.mkdtemp(prefix="bench-embed-srd-")) / "srd-outline.yaml"
    return from_outline(SRD, out, doc_id="srd", game="SRD 5.1", edition="5.1",
                        max_questions=40, seed=0).path


# ---------------------------------------------------------------------------
# Cold run at collection scale, through the CLI
# ---------------------------------------------------------------------------

ACTORS = ("the active player", "each player", "the player to your left", "the defender", "the attacker",
          "the first player", "an opponent", "the owner of the card", "every other player", "the winner")
VERBS = ("draws", "discards", "places", "moves", "reveals", "exhausts", "returns", "spends", "gains", "loses")
THINGS = ("a card", "two cards", "one resource token", "a worker", "three coins", "the top card of the deck",
          "a damage marker", "one unit", "a shield token", "an action card", "the event tile", "a die")
PLACES = ("from the supply", "to the discard pile", "onto an adjacent region", "into their hand",
          "to the bottom of the deck", "onto the board", "from the reserve", "to the box")
WHENS = ("At the start of the round", "During the action phase", "When a combat ends", "After scoring",
         "Before any cards are drawn", "If the deck is empty", "Once per turn", "At the end of each turn",
         "When a region is conquered", "Whenever a tie occurs")
EXCEPTIONS = ("unless they already control that region", "except during the first round",
              "if they have fewer than five cards", "as long as the supply is not empty",
              "only if no other player has passed", "even when the card is face down")
RULINGS = ("This effect cannot be cancelled.", "Ties are broken in turn order.",
           "A player may not exceed ten cards in hand.", "Exhausted cards are readied during the refresh phase.",
           "Round fractions down.", "If two effects apply at once, the active player chooses the order.")


def rule_sentence(rng: random.Random) -> str:
    """One rule sentence: a timing, an actor doing something with something somewhere, maybe an
    exception, maybe a ruling (the vocabulary and clause shapes of a rulebook's prose)."""
    s = f"{rng.choice(WHENS)}, {rng.choice(ACTORS)} {rng.choice(VERBS)} {rng.choice(THINGS)} {rng.choice(PLACES)}"
    if rng.random() < 0.4:
        s += f", {rng.choice(EXCEPTIONS)}"
    s += "."
    if rng.random() < 0.25:
        s += " " + rng.choice(RULINGS)
    if rng.random() < 0.2:
        s += f" See section {rng.randint(1, 40)}.{rng.randint(1, 9)}."
    return s


def rule_pages(n: int, seed: int = 0, low: int = 700, high: int = 1150) -> list[str]:
    """``n`` pages of generated rule prose (seeded: the same pages for the same arguments), each
    of whole sentences up to a length drawn from ``low``-``high`` characters (so at most ``high``;
    mean about 870 with the defaults), short enough to be one chunk each under the default
    chunking (1,200 characters)."""
    rng = random.Random(seed)
    pages = []
    for _ in range(n):
        target = rng.randint(low, high)
        text = rule_sentence(rng)
        while True:
            nxt = rule_sentence(rng)
            if len(text) + 1 + len(nxt) > target:
                break
            text += " " + nxt
        pages.append(text)
    return pages


def write_cold_corpus(root: Path, n: int, seed: int = 0, questions: int = 20, docs: int = 50) -> Path:
    """``n`` generated pages over ``docs`` JSONL rulebooks and a gold set of ``questions``
    questions (a sentence of a page each, that page relevant) under ``root``; its path."""
    pages = rule_pages(n, seed)
    rng = random.Random(seed + 1)
    lines = ["goldset: cold-embedding", "version: 1", "documents:"]
    where: list[tuple[str, int, str]] = []
    per_doc = -(-n // docs)
    for d in range(docs):
        block = pages[d * per_doc:(d + 1) * per_doc]
        if not block:
            break
        did = f"game{d:03d}-rulebook"
        with (root / f"{did}.jsonl").open("w", encoding="utf-8") as f:
            for p, text in enumerate(block, 1):
                heading = f"Game {d} section {p}"
                f.write(json.dumps({"page": p, "heading": heading, "text": heading + "\n" + text}) + "\n")
                where.append((did, p, text))
        lines += [f"  - id: {did}", f"    path: {did}.jsonl", "    kind: rulebook", f"    game: Game {d:03d}",
                  "    edition: en-1", "    language: en", f"    title: {did}"]
    lines.append("questions:")
    for i in range(questions):
        did, p, text = where[rng.randrange(len(where))]
        question = text.split(". ")[0].replace('"', "'") + "?"
        lines.append(f"  - {{id: c-{i:03d}, language: en, question: \"{question}\", pages: [{did}#{p}]}}")
    gs = root / "cold.yaml"
    gs.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "grid.toml").write_text('[defaults]\nk = 60\ndepth = 100\n\n[arms.dense]\n\n'
                                    '[grid]\nmethod = "rrf"\nk = [60]\narms = [["bm25", "dense"]]\n',
                                    encoding="utf-8")
    return gs


def cli_run(root: Path, cache: Path, run_id: str, backend: str) -> dict[str, Any]:
    """``rulegauge run`` on the generated corpus as a subprocess: wall, CPU s and peak RSS of
    that process (``wait4``), load average every 10 s, and the dense arm's manifest."""
    rulegauge = Path(sys.executable).with_name("rulegauge")
    cmd = [str(rulegauge), "run", "-g", str(root / "cold.yaml"), "-c", str(root / "grid.toml"),
           "--cache-dir", str(cache), "-o", str(root / "runs"), "--run-id", run_id, "-q",
           "-p", f"dense.backend={backend}"]
    loads = [os.getloadavg()[0]]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(10):
            loads.append(os.getloadavg()[0])

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.perf_counter()
    with open(root / f"{run_id}.stderr", "w", encoding="utf-8") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=ENV, cwd=root)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    done.set()
    sampler.join()
    if proc.returncode:
        raise SystemExit(f"rulegauge run exited {proc.returncode}: {(root / f'{run_id}.stderr').read_text()[-2000:]}")
    run_dir = root / "runs" / run_id
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    import pyarrow.parquet as pq

    chunks = pq.read_metadata(run_dir / "chunks.parquet").num_rows
    cpu = usage.ru_utime + usage.ru_stime
    return {"wall": wall, "cpu": cpu, "rss_mb": usage.ru_maxrss / 1024, "loads": loads, "chunks": chunks,
            "dense": manifest["arms"]["dense"]}


def cold(args: argparse.Namespace, cache: Path) -> str:
    """The cold run and its warm rerun; print and return the history line."""
    from machine import machine_line

    with tempfile.TemporaryDirectory(prefix="bench-embed-cold-") as tmp:
        root = Path(tmp)
        write_cold_corpus(root, args.cold)
        fresh = root / "cache"
        fresh.mkdir()
        (cache / "models").mkdir(parents=True, exist_ok=True)
        (fresh / "models").symlink_to(cache / "models", target_is_directory=True)
        start_line = machine_line()
        print("cold start:", start_line, flush=True)
        c = cli_run(root, fresh, "cold", args.cold_backend)
        w = cli_run(root, fresh, "warm", args.cold_backend)
    dense, stats = c["dense"], c["dense"]["cache"]
    if w["dense"]["cache"]["misses"]:
        raise SystemExit(f"the warm rerun embedded texts again: {w['dense']['cache']}")
    embed_s = c["wall"] - w["wall"]
    loads = c["loads"]
    print(f"cold run ({c['chunks']} chunks, {stats['misses']} texts embedded in {stats['model_calls']} model "
          f"calls, backend {args.cold_backend} -> {dense['backend_resolved']}, "
          f"{dense['model_describe']['threads']} threads): wall {c['wall']:.1f} s, CPU {c['cpu']:.1f} s, "
          f"cores used {c['cpu'] / c['wall']:.2f}, peak RSS {c['rss_mb']:.0f} MB; load average during "
          f"{min(loads):.1f}-{max(loads):.1f} (median {statistics.median(loads):.1f})")
    print(f"warm rerun (every vector cached): wall {w['wall']:.1f} s, CPU {w['cpu']:.1f} s, peak RSS "
          f"{w['rss_mb']:.0f} MB; embedding = cold - warm = {embed_s:.1f} s -> "
          f"{c['chunks'] / embed_s:.1f} passages/s ({c['chunks'] / c['wall']:.1f} over the whole cold run)")
    end_line = machine_line()
    print("cold end:  ", end_line, flush=True)
    return (f"{start_line} | cold CLI run, {c['chunks']} generated chunks, backend {args.cold_backend} -> "
            f"{dense['backend_resolved']}, load during {min(loads):.1f}-{max(loads):.1f} | wall {c['wall']:.1f} s, "
            f"CPU {c['cpu']:.1f} s, cores {c['cpu'] / c['wall']:.2f}, peak RSS {c['rss_mb']:.0f} MB; warm rerun "
            f"{w['wall']:.1f} s; embedding {embed_s:.1f} s = {c['chunks'] / embed_s:.1f} passages/s | end: {end_line}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, default=64, help="SRD chunks timed (seed 0)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--backends", default="all",
                    help="comma-separated backends timed (default: every concrete backend; torch-fp32 is the peer)")
    ap.add_argument("--recall", action="store_true", help="also check recall@5 (rulegauge run per backend)")
    ap.add_argument("--srd", action="store_true", help="with --recall: also the SRD outline gold set")
    ap.add_argument("--cold", type=int, default=0, metavar="N", help="cold CLI run over N generated chunks")
    ap.add_argument("--cold-backend", default="auto", help="the dense arm's backend in the cold run")
    ap.add_argument("--cold-only", action="store_true", help="skip the throughput part")
    ap.add_argument("--no-log", action="store_true", help=f"do not append to {HISTORY.relative_to(REPO)}")
    ap.add_argument("--cache-dir", type=Path, default=None)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from rulegauge.embedding.backends import BACKENDS
    from rulegauge.embedding.models import cache_root

    cache = cache_root(args.cache_dir)
    concrete = [n for n in BACKENDS.names() if BACKENDS.get(n).dtype is not None]
    names = concrete if args.backends == "all" else [BACKENDS.get(n).name for n in args.backends.split(",")]
    names = [REFERENCE] + [n for n in names if n != REFERENCE]  # cosines are to fp32's vectors
    failed = False
    if not args.cold_only:
        if not SRD.exists():
            raise SystemExit(f"needs {SRD} (set RULEGAUGE_SHARED)")
        failed, line = throughput(args, cache, names)
        log_history(line, enabled=not args.no_log)
        if args.recall:
            failed |= recall_guard(args, cache, names)
        print("quality guard: " + ("FAILED" if failed else "ok"))
    if args.cold:
        log_history(cold(args, cache), enabled=not args.no_log)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
