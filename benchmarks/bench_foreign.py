"""Benchmark: foreign hits (issue 42, item 1) on the user's path, against named peers.

Foreign hits (ids from outside that match no chunk, kept at their ranks: docs/arms.md) get
rows of their own only in the runs that have some; the ordinary path builds none. Two
ratios, each against a peer measured in the same run, alternating, a fresh process per
measurement (wall and CPU seconds of that process: ``os.wait4``), medians of ``--repeats``:

1. **ordinary path**: the README's own command, ``rulegauge run --answerer extractive`` (the
   embedded sample, default grid, bm25 + dense + boost, answering), with this tree against
   the same command with the tree of ``--base`` (a commit before foreign hits: default
   ``ba519eb``, extracted with ``git archive``). Each tree has its own cache folder, warmed by
   one untimed run. Target: the ratio this / base within 1.05 (CPU seconds).
2. **foreign path**: ``rulegauge run`` on the sample with one ``external`` arm reading the
   sample's bm25 lists with an unknown id put at rank 1 of every list (57 foreign hits),
   against the same arm reading the same lists without it, this tree, default metrics plus
   ``foreign@5``. No target: what the foreign rows cost.

Run: .venv/bin/python benchmarks/bench_foreign.py [--repeats 5] [--base ba519eb]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from machine import machine_line

REPO = Path(__file__).resolve().parents[1]
LAUNCH = """import os, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(p.pid, 0)
open(sys.argv[1], "w").write(f"{time.perf_counter() - t0} {usage.ru_utime + usage.ru_stime}")
sys.exit(os.waitstatus_to_exitcode(status))
"""
"""A small launcher: wall time and CPU seconds of the rulegauge process alone."""
CLI = "import sys; from rulegauge.cli import main; sys.argv[0] = 'rulegauge'; main()"


def rulegauge(tree: Path, cwd: Path, cache: Path, *args: str) -> tuple[float, float]:
    """(wall s, CPU s) of ``rulegauge ARGS`` with the package of ``tree``, in ``cwd``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "RULEGAUGE_CACHE": str(cache), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "MPLBACKEND": "Agg", "COLUMNS": "160"}
    with tempfile.NamedTemporaryFile("r") as out, tempfile.TemporaryFile() as log:
        p = subprocess.run([sys.executable, "-c", LAUNCH, out.name, sys.executable, "-c", CLI, *args],
                           cwd=cwd, env=env, stdout=log, stderr=log)
        if p.returncode != 0:
            log.seek(0)
            raise SystemExit(f"rulegauge {' '.join(args)} failed ({p.returncode}):\n{log.read()[-3000:].decode()}")
        wall, cpu = out.read().split()
    return float(wall), float(cpu)


def base_tree(commit: str, into: Path) -> Path:
    """The tree of ``commit`` extracted into ``into`` (``git archive``)."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def captured(tmp: Path) -> tuple[Path, Path]:
    """The sample's bm25 lists as an external arm's file, without and with an unknown id at
    rank 1 of every list (this tree's own run and export)."""
    work = tmp / "captured"
    work.mkdir()
    cache = tmp / "cache-captured"
    rulegauge(REPO, work, cache, "run", "-c", str(REPO / "tests" / "fixtures" / "configs" / "lexical.toml"),
              "--run-id", "lex")
    rulegauge(REPO, work, cache, "export", "lex", "--format", "trec", "-o", "trec", "--level", "page",
              "--scores", "original", "--questions", "retrieved")
    lines = (work / "trec" / "arms" / "bm25.trec").read_text().splitlines()
    plain, foreign, seen = [], [], set()
    for line in lines:
        q, _, doc, rank, score, tag = line.split()
        if q not in seen:
            seen.add(q)
            foreign.append(f"{q} Q0 other-game#p0007.c001 1 {float(score) + 1.0!r} {tag}")
        plain.append(line)
        foreign.append(f"{q} Q0 {doc} {int(rank) + 1} {score} {tag}")
    out = []
    for name, body in (("plain", plain), ("foreign", foreign)):
        path = tmp / f"{name}.trec"
        path.write_text("\n".join(body) + "\n")
        grid = tmp / f"{name}.toml"
        grid.write_text(f'[defaults]\nk = 60\ndepth = 100\n[arms.ext]\nkind = "external"\npath = "{path}"\n'
                        '[grid]\nk = [60]\narms = [["ext", "boost"]]\n')
        out.append(grid)
    return out[0], out[1]


def medians(xs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(x[0] for x in xs), statistics.median(x[1] for x in xs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--base", default="ba519eb", help="the commit before foreign hits (the peer of the ordinary path)")
    args = ap.parse_args()
    print(machine_line())
    with tempfile.TemporaryDirectory(prefix="bench-foreign-") as t:
        tmp = Path(t)
        base = base_tree(args.base, tmp / "base")
        trees = {"this": REPO, "base": base}
        work = {name: tmp / f"work-{name}" for name in trees}  # each tree's runs/ folder
        for folder in work.values():
            folder.mkdir()
        sample = ("run", "--answerer", "extractive")
        for name, tree in trees.items():  # warm each tree's caches (page texts, embeddings): untimed
            rulegauge(tree, work[name], tmp / f"cache-{name}", *sample, "--run-id", "warm")
        times: dict[str, list[tuple[float, float]]] = {"this": [], "base": []}
        for i in range(args.repeats):
            for name in (("this", "base") if i % 2 == 0 else ("base", "this")):
                times[name].append(rulegauge(trees[name], work[name], tmp / f"cache-{name}", *sample,
                                             "--run-id", f"r{i}"))
        (tw, tc), (bw, bc) = medians(times["this"]), medians(times["base"])
        print(f"ordinary path: rulegauge run --answerer extractive (sample), medians of {args.repeats}: "
              f"this {tw:.2f} s wall / {tc:.2f} CPU-s, base {args.base} {bw:.2f} s / {bc:.2f} CPU-s: "
              f"this / base = {tw / bw:.3f} wall, {tc / bc:.3f} CPU (target <= 1.05 CPU: "
              f"{'met' if tc / bc <= 1.05 else 'missed'})")
        print("  this:", ", ".join(f"{w:.2f}/{c:.2f}" for w, c in times["this"]),
              "| base:", ", ".join(f"{w:.2f}/{c:.2f}" for w, c in times["base"]))
        plain, foreign = captured(tmp)
        ext: dict[str, list[tuple[float, float]]] = {"plain": [], "foreign": []}
        metrics = [a for m in ("hit@1", "hit@5", "recall@5", "recall@10", "MRR@10", "nDCG@10",
                               "nDCG(judged_only=True)@10", "Judged@10", "first_rel_rank", "top_score",
                               "top_score_ratio", "foreign@5") for a in ("-m", m)]
        for i in range(args.repeats):
            pair = (("plain", plain), ("foreign", foreign))
            for name, grid in (pair if i % 2 == 0 else pair[::-1]):
                ext[name].append(rulegauge(REPO, work["this"], tmp / "cache-this", "run", "-c", str(grid),
                                           "--run-id", f"{name}{i}", *metrics))
        (pw, pc), (fw, fc) = medians(ext["plain"]), medians(ext["foreign"])
        print(f"foreign path: rulegauge run, external arm (bm25's lists, 57 questions) + boost, 12 metrics, "
              f"medians of {args.repeats}: with an unknown id at rank 1 of every list {fw:.2f} s / {fc:.2f} CPU-s, "
              f"without {pw:.2f} s / {pc:.2f} CPU-s: {fw / pw:.3f} wall, {fc / pc:.3f} CPU")
    print(machine_line())


if __name__ == "__main__":
    main()
