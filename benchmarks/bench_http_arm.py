"""Benchmark: ``rulegauge run`` with an ``http`` arm against the reference service, against
the same arms run in process.

Both sides are ``rulegauge.pipeline.retrieval.run`` on the embedded sample (57 questions),
what ``rulegauge run -c GRID`` calls: the peer is the lexical grid (``bm25`` + ``boost``
fused in process, ``tests/fixtures/configs/lexical.toml``), the measured side one ``http``
arm asking the reference service (the same two arms fused there, started in a thread of
this process, ``rulegauge serve-search``) once per question, ``--concurrency`` calls in
flight, journaled, plus its preflight call. Alternating, fresh run ids, medians of
``--repeats``; the ranks are checked equal (the service's fused list against the run's
``rrf_k60_bm25+boost``) on every repeat.

Run: .venv/bin/python benchmarks/bench_http_arm.py [--repeats 3] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the reference-service helper lives with the tests

import pandas as pd  # noqa: E402
from machine import machine_line  # noqa: E402

from rulegauge.pipeline.retrieval import RunOptions, run  # noqa: E402
from tests.helpers.common import LEXICAL  # noqa: E402
from tests.helpers.reference_service import http_grid, reference_service  # noqa: E402


def _same(in_process: Path, live: Path) -> bool:
    fused = pd.read_parquet(in_process / "fused.parquet")
    f = fused[(fused["config_id"] == "rrf_k60_bm25+boost") & (fused["fused_rank"] <= 100)]
    ranks = pd.read_parquet(live / "arm_ranks.parquet")
    return list(zip(f["question_id"], f["chunk_id"], f["fused_rank"], strict=True)) == list(
        zip(ranks["question_id"], ranks["chunk_id"], ranks["rank"], strict=True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=4)
    args = ap.parse_args()
    print(machine_line())
    peer, live = [], []
    with tempfile.TemporaryDirectory() as tmp, reference_service() as svc:
        root = Path(tmp)
        grid = http_grid(root / "g.toml", svc.url, extra=f"concurrency = {args.concurrency}",
                         grid='[["live"]]')
        for i in range(args.repeats):
            t = time.perf_counter()
            a = run(RunOptions(config=LEXICAL, runs_dir=root / "runs", run_id=f"p{i}"))
            peer.append(time.perf_counter() - t)
            t = time.perf_counter()
            b = run(RunOptions(config=grid, runs_dir=root / "runs", run_id=f"h{i}"))
            live.append(time.perf_counter() - t)
            if not _same(a.path, b.path):
                raise SystemExit("ranks differ: the http arm must give the in-process fused ranks")
    p, h = statistics.median(peer), statistics.median(live)
    print(f"in-process run {p:.2f} s, http-arm run {h:.2f} s (57 calls + 1 preflight, "
          f"concurrency {args.concurrency}): {h / p:.2f}x the in-process time; ranks identical")


if __name__ == "__main__":
    main()
