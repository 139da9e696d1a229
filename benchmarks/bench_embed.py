"""Embedding throughput: today's path against the chosen backend, side by side, with a quality guard.

The two paths, timed alternately in one process over the same SRD 5.1 chunks
(a seeded sample) with the real e5-small model and no embedding cache:

* ``reference``: backend ``torch-fp32`` and batches in input order (the path of
  ``rulegauge run`` before this benchmark: ``embed(..., by_length=False)``);
* ``chosen``: the dense arm's default, backend ``auto`` (resolved by the CPU's features,
  ``rulegauge.embedding.backends.AUTO_RULES``: ``torch-bf16`` with AMX, ``onnx-int8`` with
  AVX-512 VNNI, ``torch-bf16`` with AVX-512 BF16, else ``torch-fp32``), batches longest
  first (what ``rulegauge run`` does now).

The reference is sentence-transformers' own fp32 ``encode`` (the peer); the machine line
(date, CPU flags, load average) is printed before and after.

Printed: wall and CPU seconds of every repeat, medians, the ratio of median
passages/s (wall and CPU; CPU time is less sensitive to other jobs on a shared
machine). Quality guard (exit 1 when broken): cosine of every passage's chosen vector
to its reference vector >= 0.99, and recall@5 of the ``arm-dense`` config within 0.01
of the reference on the Secret Hitler gold set (``rulegauge run`` once per backend;
``--srd`` adds the SRD gold set derived from its bookmarks, as tests/test_real_corpora.py
builds it: slow on a cold cache, since the reference embeds all 2,351 chunks in fp32).

``--backends onnx-int8,torch-bf16`` times several candidates in the same rotation (each
against the same reference), which is how ``AUTO_RULES`` is decided.

Usage: ``.venv/bin/python benchmarks/bench_embed.py [--sample 256] [--repeats 3] [--srd]
[--backends auto,onnx-int8]``
(needs ../shared; embeddings of the recall runs go to ``--cache-dir``, default the
user's cache, keyed by backend so fp32 and bf16 vectors never mix).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
SHARED = Path(os.environ.get("RULEGAUGE_SHARED", REPO.parent / "shared"))  # a worktree elsewhere: set it
SRD = SHARED / "corpora" / "srd-5.1" / "SRD5.1-CCBY4.0License.pdf"
SECRET_HITLER = SHARED / "goldsets" / "secret-hitler.yaml"
MIN_COSINE = 0.99
MAX_RECALL_DELTA = 0.01
AUTO_NAME = "auto"


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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, default=256, help="SRD chunks timed (seed 0)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--srd", action="store_true", help="also check recall@5 on the SRD set")
    ap.add_argument("--recall-only", action="store_true", help="skip timing and cosine")
    ap.add_argument("--cache-dir", type=Path, default=None)
    ap.add_argument("--backends", default=AUTO_NAME,
                    help="comma-separated candidates timed against the reference (default: auto)")
    args = ap.parse_args()
    if not SRD.exists():
        raise SystemExit(f"needs {SRD}")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from rulegauge.embedding.backends import resolve_backend
    from rulegauge.embedding.models import cache_root

    cache = cache_root(args.cache_dir)
    candidates = {name: resolve_backend(name).name for name in args.backends.split(",")}
    failed = False
    if not args.recall_only:
        failed = throughput_and_cosine(args, cache, candidates)
    goldsets = [SECRET_HITLER] + ([derived_srd()] if args.srd else [])
    with tempfile.TemporaryDirectory(prefix="bench-embed-") as tmp:
        for gs in goldsets:
            ref = recall_at_5(gs, "torch-fp32", cache, Path(tmp))
            for chosen_name in dict.fromkeys(candidates.values()):
                new = recall_at_5(gs, chosen_name, cache, Path(tmp))
                worst = max(abs(new[k] - ref[k]) for k in ref)
                print(f"recall@5 {gs.stem}: arm-dense fp32 {ref['arm-dense']:.3f}, {chosen_name} "
                      f"{new['arm-dense']:.3f}; largest difference over {len(ref)} configs {worst:.3f}")
                failed |= abs(new["arm-dense"] - ref["arm-dense"]) > MAX_RECALL_DELTA
    print("quality guard: " + ("FAILED" if failed else "ok"))
    return 1 if failed else 0


def throughput_and_cosine(args: argparse.Namespace, cache: Path, candidates: dict[str, str]) -> bool:
    """Time the reference and every candidate alternately (the order rotates each repeat);
    print medians and ratios; True when a candidate's cosine fails."""
    from machine import machine_line

    from rulegauge.embedding.backends import cpu_flags
    from rulegauge.embedding.cache import embed
    from rulegauge.embedding.models import load_model

    texts = srd_sample(args.sample, 0, cache)
    print("start:", machine_line(), flush=True)
    print(f"{len(texts)} SRD chunks (mean {statistics.mean(map(len, texts)):.0f} chars); "
          + ", ".join(f"backend {k} -> {v}" for k, v in candidates.items())
          + f"; AMX {'amx_bf16' in cpu_flags()}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    ref_model = load_model("e5-small", cache, "torch-fp32")
    paths = {"reference": lambda: embed(ref_model, texts, "passage", None, 32, by_length=False)}
    models = {"reference": ref_model}
    for name in candidates:
        models[name] = load_model("e5-small", cache, name)
        paths[name] = partial(embed, models[name], texts, "passage", None, 32)
    for model in models.values():  # warm-up: load the networks (ONNX: export once), first-call kernels
        model.encode_passages(texts[:4])
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in paths}
    vectors: dict[str, np.ndarray] = {}
    names = list(paths)
    for r in range(args.repeats):
        for name in names[r % len(names):] + names[:r % len(names)]:
            wall, cpu, vecs = timed(paths[name])
            times[name].append((wall, cpu))
            vectors[name] = vecs
            print(f"  repeat {r + 1} {name:>10}: wall {wall:6.1f} s  cpu {cpu:6.1f} s  "
                  f"{len(texts) / wall:6.1f} passages/s (wall)", flush=True)
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
           for k, v in times.items()}
    for k, (w, c) in med.items():
        print(f"median {k:>10}: {len(texts) / w:6.1f} passages/s wall, "
              f"{len(texts) / c:6.1f} per CPU-second")
    failed = False
    for name in candidates:
        cos = np.einsum("ij,ij->i", vectors[name].astype(np.float64),
                        vectors["reference"].astype(np.float64))
        print(f"{name} ({candidates[name]}) / reference passages/s: wall "
              f"{med['reference'][0] / med[name][0]:.2f}x, CPU {med['reference'][1] / med[name][1]:.2f}x; "
              f"cosine to fp32 per passage: min {cos.min():.6f}, median {np.median(cos):.6f}")
        failed |= bool(cos.min() < MIN_COSINE)
    print("end:  ", machine_line(), flush=True)
    return failed


def derived_srd() -> Path:
    from rulegauge.goldset.derive import from_outline

    out = Path(tempfile.mkdtemp(prefix="bench-embed-srd-")) / "srd-outline.yaml"
    return from_outline(SRD, out, doc_id="srd", game="SRD 5.1", edition="5.1",
                        max_questions=40, seed=0).path


if __name__ == "__main__":
    sys.exit(main())
