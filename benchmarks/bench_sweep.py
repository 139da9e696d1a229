"""Benchmark: scoring a 200-config grid from stored arm ranks, as a user runs it, against ranx.

Synthetic data (seed 0): 1,000 questions x 3 arms, each arm ranking 100 of 400
candidate pages per question (one chunk per page), 1-3 relevant pages per question;
200 configs = 50 values of k x 4 arm subsets (unweighted RRF at full depth, which
ranx's ``rrf`` can express too). The arm ranks are written as a complete run
directory (tables + manifest), so rulegauge side is exactly what a user types:

* **CLI**: ``rulegauge run --from SRC -c grid200.toml --fused-config none -m recall@10
  -m MRR@10 -m nDCG@10 -m hit@5`` in a fresh process (``subprocess``), from process
  start to every table written and the summary printed: the same four metrics ranx
  computes (the ratio). The default set (9 metrics, ``first_rel_rank`` over the whole
  fused list included) is timed too and printed beside it.
* **in-process scoring step**: :func:`rulegauge.pipeline.sweep.score_configs`, the step
  that command runs for every config, on the same four metrics ranx computes.
* **peer**: ranx ``fuse(method="rrf")`` + ``evaluate`` (recall@10, MRR@10, nDCG@10,
  hit@5) on a subset of the configs (about 0.2 s per config; rates are
  question-configs per second, so the ratio is fair); numba's JIT is warmed first.

Medians of ``--repeats`` runs (the machine is shared and noisy). Agreement: the
per-question values of the two sides are compared wherever no fused tie touches
the top 11 (ranx breaks ties its own way; rulegauge by exact score, then chunk id).

Run: .venv/bin/python benchmarks/bench_sweep.py [--questions 1000] [--ranx-configs 8] [--repeats 3]

``--fused``: the stored fused rows against scoring alone, as the README runs it: the CLI
``rulegauge run --from SRC -c grid200.toml --fused-depth 20`` and ``... --fused-config none``
(default metrics), each also on a one-config grid (1 + 3 single-arm configs), so the
*marginal* rate (question-configs/s of the 199 extra configs: process start, imports and
reads cancel out) is a ratio of ranx fuse+evaluate measured in the same repeats; the wall
time, CPU seconds and peak RSS of every process (``wait4``; the CPU-second marginal against
ranx's CPU seconds is printed beside the wall one: on a shared machine it moves less with
the load). Targets: depth 20 >= 10x ranx, none >= 40x
ranx, peak RSS of the depth-20 run within 1.5x of the none run.

``--methods``: every fusion method side by side instead (docs/fusion.md): per method 200
configs (50 depth cutoffs 51..100 x the 4 arm subsets, unit weights; RRF at k=60; CombSUM /
CombMNZ min-max, hybrid min-max arithmetic), the arms' scores a noisy relevance signal;
the in-process scoring step and the CLI ``rulegauge run --from SRC -c GRID --fused-config
none -m ...`` per method, interleaved, medians of ``--repeats``; each method's rate as a
ratio of RRF's measured in the same repeats (target: every method >= 0.5x RRF).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from machine import machine_line

from rulegauge.fusion.configs import FusionConfig
from rulegauge.fusion.fuse import RankMatrix
from rulegauge.goldset.records import PageRef, Question
from rulegauge.metrics.gold import make_gold
from rulegauge.metrics.page_lists import Candidates, page_lists
from rulegauge.metrics.ranking import compute, parse
from rulegauge.pipeline.sweep import ConfigScores, DenseRanks, score_configs

METRICS = ("recall@10", "MRR@10", "nDCG@10", "hit@5")
RANX = {"recall@10": "recall@10", "MRR@10": "mrr@10", "nDCG@10": "ndcg@10", "hit@5": "hit_rate@5"}
ARMS = ("a", "b", "c")
SUBSETS = (("a", "b", "c"), ("a", "b"), ("a", "c"), ("b", "c"))
KS = tuple(range(1, 101, 2))


def make_data(n_q: int, seed: int = 0, depth: int = 100, pool: int = 400):
    rng = np.random.default_rng(seed)
    qids = [f"q{i:05d}" for i in range(n_q)]
    docs = np.array([f"d#{p}" for p in range(1, pool + 1)])
    q_col, arm_col, doc_col, rank_col = [], [], [], []
    questions = []
    for qid in qids:
        rel = rng.choice(pool, size=int(rng.integers(1, 4)), replace=False) + 1
        questions.append(Question(qid, "x", "en", tuple((PageRef("d", int(p)),) for p in sorted(rel))))
        base = rng.random(pool)  # arms are correlated with relevance
        base[rel - 1] += 0.6
        for arm in ARMS:
            noisy = base + rng.normal(0, 0.5, pool)
            top = np.argsort(-noisy, kind="stable")[:depth]
            q_col += [qid] * depth
            arm_col += [arm] * depth
            doc_col += list(docs[top])
            rank_col += list(range(1, depth + 1))
    ar = pd.DataFrame({"question_id": q_col, "arm": arm_col, "chunk_id": doc_col, "rank": rank_col})
    return qids, questions, ar, pool


def configs() -> list[FusionConfig]:
    return [FusionConfig(f"k{k}-{'+'.join(a)}", f"k{k}-{'+'.join(a)}", "grid", "rrf", float(k), a,
                         (1.0,) * len(a), (100,) * len(a)) for k in KS for a in SUBSETS]


def grid_toml(path: Path) -> Path:
    arms = ", ".join("[" + ", ".join(f'"{x}"' for x in a) + "]" for a in SUBSETS)
    path.write_text(f"[defaults]\ndepth = 100\n[grid]\nk = {list(KS)}\narms = [{arms}]\n")
    return path


def write_source_run(root: Path, questions: list[Question], ar: pd.DataFrame, pool: int) -> Path:
    """A complete run directory holding the generated arm ranks (what `rulegauge run` stores)."""
    from rulegauge.pipeline.lifecycle import configs_frame
    from rulegauge.store.provenance import base_manifest, now_iso
    from rulegauge.store.rundir import RunWriter

    w = RunWriter(root / "source")
    w.update_manifest({**base_manifest("source"), "goldset": {"name": "synthetic", "sha256": "-"},
                       "corpus": {"content_hash": "-", "chunks": pool}, "config": {"sha256": "-"}})
    w.write_table("questions", pd.DataFrame([{
        "question_id": q.question_id, "goldset": "synthetic", "language": "en", "question": q.question,
        "game": None, "tags": [], "requirements": json.dumps([[str(r) for r in req] for req in q.requirements]),
        "n_requirements": len(q.requirements), "answerable": True} for q in questions]))
    w.write_table("documents", pd.DataFrame([{
        "doc_id": "d", "kind": "rulebook", "game": "g", "edition": "1", "language": "en", "title": "d",
        "path": "d", "source_sha256": "-", "pages": pool}]))
    w.write_table("chunks", pd.DataFrame([{
        "chunk_id": f"d#{p}", "doc_id": "d", "doc_kind": "rulebook", "page": p, "page_label": str(p),
        "heading_path": "", "char_start": 0, "char_end": 1, "text": "x"} for p in range(1, pool + 1)]))
    full = ar.assign(doc_id="d", page=ar["chunk_id"].str.slice(2).astype("int32"),
                     score=ar["score"] if "score" in ar else 1.0 / ar["rank"], rank=ar["rank"].astype("int32"))
    w.write_table("arm_ranks", full[["question_id", "arm", "chunk_id", "doc_id", "page", "rank", "score"]])

    from rulegauge.fusion.configs import RunConfig

    arm_configs = tuple(FusionConfig(f"arm-{a}", f"arm-{a}", "arm", "rrf", 60.0, (a,), (1.0,), (100,))
                        for a in ARMS)
    w.write_table("configs", configs_frame(RunConfig("<generated>", "", {}, arm_configs, {})))
    w.update_manifest({"status": "complete", "finished": now_iso()})
    return w.path


def cli_run(source: Path, grid: Path, out: Path, run_id: str, metrics: tuple[str, ...] = ()) -> float:
    """Seconds of ``rulegauge run --from`` in a fresh process (``metrics``: its ``-m`` list;
    empty = the default 9)."""
    return cli_measure(source, grid, out, run_id, ["--fused-config", "none"], metrics)[0]


def cli_measure(source: Path, grid: Path, out: Path, run_id: str, store: list[str],
                metrics: tuple[str, ...] = ()) -> tuple[float, float, float]:
    """(seconds, peak RSS in MB, CPU seconds) of ``rulegauge run --from SRC -c GRID <store> [-m ...]``
    in a fresh process, from start to exit (RSS and CPU of that process alone: ``os.wait4``)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "160"}
    rulegauge = Path(sys.executable).with_name("rulegauge")
    chosen = [a for m in metrics for a in ("-m", m)]
    with tempfile.TemporaryFile() as log, tempfile.NamedTemporaryFile("r") as peak:
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-c", LAUNCH, peak.name, str(rulegauge), "run", "--from", str(source),
                            "-c", str(grid), "-o", str(out), "--run-id", run_id, *store, *chosen],
                           env=env, stdout=log, stderr=log)
        dt = time.perf_counter() - t0
        if p.returncode != 0:
            log.seek(0)
            raise SystemExit(f"rulegauge run --from failed ({p.returncode}):\n{log.read()[-2000:].decode()}")
        rss_kb, cpu = peak.read().split()
        return dt, int(rss_kb) / 1024, float(cpu)


LAUNCH = """import os, subprocess, sys
p = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(p.pid, 0)
open(sys.argv[1], "w").write(f"{usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}")
sys.exit(os.waitstatus_to_exitcode(status))
"""
"""A small launcher process: a child's peak RSS (Linux ``ru_maxrss``) counts the memory of the
process it was forked from, so rulegauge is started from this small one, not from the benchmark."""


def ranx_runs(ar: pd.DataFrame, questions: list[Question]):
    from ranx import Qrels, Run

    runs = {}
    for arm in ARMS:
        sub = ar[ar["arm"] == arm]
        d: dict[str, dict[str, float]] = {}
        for qid, doc, rank in zip(sub["question_id"], sub["chunk_id"], sub["rank"], strict=True):
            d.setdefault(qid, {})[doc] = 1.0 / rank
        runs[arm] = Run.from_dict(d, name=arm)
    qrels = Qrels.from_dict({x.question_id: {str(p[0]): 1 for p in x.requirements} for x in questions})
    return runs, qrels


def ranx_sweep(runs, qrels, cfgs, *, per_question: bool = False):
    from ranx import evaluate
    from ranx import fuse as rfuse

    out = {}
    for c in cfgs:
        fused = rfuse([runs[a] for a in c.arms], norm=None, method="rrf", params={"k": int(c.k)})
        out[c.config_id] = evaluate(qrels, fused, list(RANX.values()), return_mean=not per_question)
    return out


def tie_free_difference(matrix, gold, theirs, cfgs):
    """Largest per-question difference where no fused tie touches the top 11, and the
    number of such question-configs (out of all compared)."""
    dense, cands = DenseRanks.build(matrix), Candidates.build(matrix, gold)
    specs = [parse(m) for m in METRICS]
    worst, clean_n, total = 0.0, 0, 0
    for c in cfgs:
        scores = ConfigScores.of(dense, cands, c)
        ours = compute(specs, page_lists(scores, gold, 10))
        top = -np.sort(-scores.scores, axis=1)[:, :12]
        clean = ~(np.abs(np.diff(top, axis=1)) <= 1e-15).any(axis=1)
        for m in METRICS:
            d = np.abs(ours[m] - np.asarray(theirs[c.config_id][RANX[m]]))[clean]
            worst = max(worst, float(d.max(initial=0.0)))
        clean_n += int(clean.sum())
        total += len(clean)
    return worst, clean_n, total


METHODS = (("rrf", ()), ("combsum", (("norm", "min-max"),)), ("combmnz", (("norm", "min-max"),)),
           ("hybrid", (("mean", "arithmetic"), ("norm", "min-max"))), ("relscore", ()), ("borda", ()), ("isr", ()))


def method_configs(method: str, opts: tuple[tuple[str, str], ...]) -> list[FusionConfig]:
    nan = float("nan")
    return [FusionConfig(f"{method}-{d}-{'+'.join(a)}", f"{method}-{d}-{'+'.join(a)}", "grid", method,
                         60.0 if method == "rrf" else nan, a, (1.0,) * len(a), (d,) * len(a), opts)
            for d in range(51, 101) for a in SUBSETS]


def method_grid(path: Path, method: str, opts: tuple[tuple[str, str], ...]) -> Path:
    arms = ", ".join("[" + ", ".join(f'"{x}"' for x in a) + "]" for a in SUBSETS)
    depths = ", ".join("{" + ", ".join(f"{x} = {d}" for x in ARMS) + "}" for d in range(51, 101))
    extra = "".join(f'{k} = ["{v}"]\n' for k, v in opts)
    path.write_text(f'[defaults]\ndepth = 100\n[grid]\nmethod = ["{method}"]\n{extra}arms = [{arms}]\n'
                    f"depths = [{depths}]\n")
    return path


def methods_main(args: argparse.Namespace) -> None:
    print(f"machine: {machine_line()}")
    qids, questions, ar, pool = make_data(args.questions)
    rng = np.random.default_rng(1)
    ar = ar.assign(score=1.0 / ar["rank"] + rng.normal(0, 0.002, len(ar)))  # arm scores: noisy, rank-consistent
    matrix = RankMatrix.from_arm_ranks(ar, qids, ARMS)
    gold = make_gold(questions, matrix, {f"d#{p}": ("d", p) for p in range(1, pool + 1)})
    specs = [parse(m) for m in METRICS]
    inproc: dict[str, list[float]] = {m: [] for m, _ in METHODS}
    cli: dict[str, list[float]] = {m: [] for m, _ in METHODS}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source = write_source_run(root, questions, ar, pool)
        for _ in range(args.repeats):
            for method, opts in METHODS:
                cfgs = method_configs(method, opts)
                t0 = time.perf_counter()
                score_configs(matrix, gold, cfgs, specs)
                inproc[method].append(len(qids) * len(cfgs) / (time.perf_counter() - t0))
                if args.cli:
                    grid = method_grid(root / f"{method}.toml", method, opts)
                    dt = cli_run(source, grid, root / "out", f"{method}-{len(cli[method])}", METRICS)
                    cli[method].append(len(qids) * (len(cfgs) + 3) / dt)
    print(f"machine at the end: {machine_line()}")
    print(f"data: {len(qids)} questions x 200 configs per method x {len(ARMS)} arms (depths 51..100 x 4 subsets), "
          f"medians of {args.repeats}")
    rrf_in, rrf_cli = statistics.median(inproc["rrf"]), statistics.median(cli["rrf"]) if cli["rrf"] else 0.0
    for method, _ in METHODS:
        line = (f"{method:9s} scoring step {statistics.median(inproc[method]):>9,.0f} q-c/s "
                f"({statistics.median(inproc[method]) / rrf_in:.2f}x rrf)")
        if cli[method]:
            line += (f"; CLI {statistics.median(cli[method]):>9,.0f} q-c/s "
                     f"({statistics.median(cli[method]) / rrf_cli:.2f}x rrf)")
        print(line)


def fused_main(args: argparse.Namespace) -> None:
    """The ``--fused`` comparison (module docstring)."""
    from machine import machine_line

    qids, questions, ar, pool = make_data(args.questions)
    cfgs = configs()
    runs, qrels = ranx_runs(ar, questions)
    ranx_cfgs = cfgs[:: max(1, len(cfgs) // args.ranx_configs)][: args.ranx_configs]
    ranx_sweep(runs, qrels, ranx_cfgs[:1])  # warm numba's JIT outside the timing
    cases = {"depth 20": ["--fused-depth", "20"], "none": ["--fused-config", "none"]}
    wall: dict[tuple[str, str], list[float]] = {}
    rss: dict[tuple[str, str], list[float]] = {}
    cpu: dict[tuple[str, str], list[float]] = {}
    tr: list[float] = []
    cr: list[float] = []  # ranx's CPU seconds (one thread): a ratio less bent by the machine's load
    print(machine_line())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source = write_source_run(root, questions, ar, pool)
        grids = {"200": grid_toml(root / "grid200.toml"), "1": root / "grid1.toml"}
        grids["1"].write_text('[defaults]\ndepth = 100\n[grid]\nk = [60]\narms = [["a", "b", "c"]]\n')
        for i in range(args.repeats):
            for case, store in cases.items():
                for size, grid in grids.items():
                    dt, mb, cs = cli_measure(source, grid, root / "out", f"{case[0]}{size}-{i}", store)
                    wall.setdefault((case, size), []).append(dt)
                    rss.setdefault((case, size), []).append(mb)
                    cpu.setdefault((case, size), []).append(cs)
            t0, c0 = time.perf_counter(), time.process_time()
            ranx_sweep(runs, qrels, ranx_cfgs)
            tr.append(time.perf_counter() - t0)
            cr.append(time.process_time() - c0)
        rows = len(pd.read_parquet(root / "out" / "d200-0" / "fused.parquet", columns=["fused_rank"]))
    med = statistics.median
    rate_r = len(qids) * len(ranx_cfgs) / med(tr)
    print(f"data: {len(qids)} questions x {len(cfgs)} configs (+3 single-arm) x {len(ARMS)} arms at depth 100; "
          f"{args.repeats} repeats, medians; load after: {os.getloadavg()[0]:.2f}")
    print(f"ranx fuse+evaluate ({len(ranx_cfgs)} configs): median {med(tr):.2f} s -> {rate_r:,.0f} q-c/s")
    for case in cases:
        big, small = med(wall[(case, "200")]), med(wall[(case, "1")])
        marginal = len(qids) * (len(cfgs) - 1) / (big - small)
        target = 10 if case == "depth 20" else 40
        print(f"CLI --{'fused-depth 20' if case == 'depth 20' else 'fused-config none'}: 200 configs {big:.2f} s, "
              f"1 config {small:.2f} s -> marginal {marginal:,.0f} q-c/s = {marginal / rate_r:.1f}x ranx "
              f"(target >= {target}x); start to exit {len(qids) * (len(cfgs) + 3) / big:,.0f} q-c/s; "
              f"peak RSS {med(rss[(case, '200')]):,.0f} MB (1 config: {med(rss[(case, '1')]):,.0f} MB)")
        cbig, csmall = med(cpu[(case, "200")]), med(cpu[(case, "1")])
        print(f"  CPU seconds (all threads): 200 configs {cbig:.2f}, 1 config {csmall:.2f} -> marginal "
              f"{len(qids) * (len(cfgs) - 1) / (cbig - csmall):,.0f} q-c per CPU-s = "
              f"{len(qids) * (len(cfgs) - 1) / (cbig - csmall) / (len(qids) * len(ranx_cfgs) / med(cr)):.1f}x "
              f"ranx's {len(qids) * len(ranx_cfgs) / med(cr):,.0f}")
    ratio = med(rss[("depth 20", "200")]) / med(rss[("none", "200")])
    print(f"fused rows stored at depth 20: {rows:,}; peak RSS depth 20 / none: {ratio:.2f}x (target <= 1.5x)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=1000)
    ap.add_argument("--ranx-configs", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--methods", action="store_true", help="every fusion method side by side (module docstring)")
    ap.add_argument("--no-cli", dest="cli", action="store_false", help="with --methods: the scoring step only")
    ap.add_argument("--fused", action="store_true",
                    help="--fused-depth 20 against --fused-config none, marginal rates and peak RSS (docstring)")
    args = ap.parse_args()
    if args.fused:
        fused_main(args)
        return
    if args.methods:
        methods_main(args)
        return

    qids, questions, ar, pool = make_data(args.questions)
    cfgs = configs()
    specs = [parse(m) for m in METRICS]
    matrix = RankMatrix.from_arm_ranks(ar, qids, ARMS)
    gold = make_gold(questions, matrix, {f"d#{p}": ("d", p) for p in range(1, pool + 1)})
    runs, qrels = ranx_runs(ar, questions)
    ranx_cfgs = cfgs[:: max(1, len(cfgs) // args.ranx_configs)][: args.ranx_configs]
    ranx_sweep(runs, qrels, ranx_cfgs[:1])  # warm numba's JIT outside the timing

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source = write_source_run(root, questions, ar, pool)
        grid = grid_toml(root / "grid200.toml")
        tc, td, ts, tr = [], [], [], []
        for i in range(args.repeats):
            tc.append(cli_run(source, grid, root / "out", f"r{i}", METRICS))
            td.append(cli_run(source, grid, root / "out", f"d{i}"))
            t0 = time.perf_counter()
            score_configs(matrix, gold, cfgs, specs)
            ts.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            ranx_sweep(runs, qrels, ranx_cfgs)
            tr.append(time.perf_counter() - t0)
        n_cfg = len(pd.read_parquet(root / "out" / "r0" / "configs.parquet"))
    qc = len(qids) * len(cfgs)
    rate_c = len(qids) * n_cfg / statistics.median(tc)
    rate_d = len(qids) * n_cfg / statistics.median(td)
    rate_s = qc / statistics.median(ts)
    rate_r = len(qids) * len(ranx_cfgs) / statistics.median(tr)
    print(f"data: {len(qids)} questions x {len(cfgs)} configs x {len(ARMS)} arms at depth 100 "
          f"(the CLI also scores the 3 single-arm configs: {n_cfg})")
    print(f"CLI `rulegauge run --from SRC -c grid200.toml --fused-config none -m ...` with ranx's 4 metrics "
          f"(subprocess, start to exit): median {statistics.median(tc):.2f} s -> {rate_c:,.0f} question-configs/s")
    print(f"  the same with the default 9 metrics (first_rel_rank over the whole list included): median "
          f"{statistics.median(td):.2f} s -> {rate_d:,.0f} question-configs/s ({rate_d / rate_r:.1f}x ranx)")
    print(f"in-process scoring step (score_configs, 4 metrics): median {statistics.median(ts):.3f} s "
          f"-> {rate_s:,.0f} question-configs/s")
    print(f"ranx fuse+evaluate ({len(ranx_cfgs)} configs): median {statistics.median(tr):.2f} s "
          f"-> {rate_r:,.0f} question-configs/s")
    print(f"ratios: CLI/ranx {rate_c / rate_r:.1f}x (target >= 25x); "
          f"scoring step/ranx {rate_s / rate_r:.1f}x (target >= 100x)")
    theirs = ranx_sweep(runs, qrels, ranx_cfgs, per_question=True)
    worst, clean, total = tie_free_difference(matrix, gold, theirs, ranx_cfgs)
    print(f"largest per-question difference where no fused tie touches the top 11: {worst:.3g} "
          f"({clean} of {total} question-configs tie-free)")


if __name__ == "__main__":
    main()
