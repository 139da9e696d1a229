"""Retrieval agreement of each embedding backend with the exact one (torch-fp32), on this CPU.

The measurement behind ``dense.backend = auto`` (:mod:`rulegauge.embedding.agreement`): for
every check set, ``rulegauge run`` with the dense arm alone (``-p dense.backend=B``, the user's
command) for torch-fp32 and each faster backend, then per backend against torch-fp32:

* recall@5 and recall@10 of ``arm-dense`` (rulegauge's page-level recall, mean over answerable
  questions), and how many questions changed either value;
* the top-10 overlap: per question, the share of torch-fp32's 10 best chunks among the
  backend's 10 best (mean, and the least over questions).

Check sets (cross-lingual questions in every one): the sample gold set on the sample corpus (57
questions, 11 asked in Russian, Persian, German or Spanish); the same gold set carried to the
sample rulebook's German edition (``goldset migrate``: English questions on German pages);
and, when ../shared is present, the Secret Hitler gold set (40 questions, 5 cross-lingual) and a
parallel gold set over AisleRiot's English rules asked in German, French, Spanish and Russian
(``rulegauge goldset parallel``, titles and first sentences, ``--max`` games).

A backend *agrees* when, on every check set, at most :data:`rulegauge.embedding.agreement.MAX_CHANGED`
of the questions (a share) change recall@5 or recall@10 and the mean top-10 overlap is at least
:data:`rulegauge.embedding.agreement.MIN_OVERLAP`. Printed: one line per check set and backend,
then the verdicts and the row to put in :data:`rulegauge.embedding.agreement.MEASURED`, with
the CPU kind (:func:`rulegauge.embedding.agreement.cpu_kind`) and the machine line.

Run: .venv/bin/python benchmarks/bench_backends.py [--shared ../shared] [--max 40] [--backends onnx-int8,torch-bf16]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
from machine import machine_line

from rulegauge.embedding.agreement import MAX_CHANGED, MIN_OVERLAP, cpu_kind
from rulegauge.embedding.backends import cpu_flags

REPO = Path(__file__).resolve().parents[1]
RG = str(Path(sys.executable).with_name("rulegauge"))
EXACT = "torch-fp32"
GRID = ('metrics = ["recall@5", "recall@10"]\n[defaults]\nk = 60\ndepth = 100\n'
        '[grid]\nk = [60]\narms = [["dense"]]\n')


def sh(*args: str, ok: tuple[int, ...] = (0,)) -> None:
    done = subprocess.run(args, capture_output=True, text=True, cwd=REPO)
    if done.returncode not in ok:
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}:\n{done.stderr[-3000:]}")


def check_sets(tmp: Path, shared: Path, most: int) -> dict[str, Path]:
    sets = {"sample": REPO / "goldsets" / "sample.yaml"}
    de2 = tmp / "sample-de2.yaml"
    sh(RG, "goldset", "migrate", "goldsets/sample.yaml", "--document",
       "bw-rules=goldsets/sample/brackwater-rulebook-de2.txt", "-o", str(de2), ok=(0, 1))
    sets["sample-de2"] = de2
    if (shared / "goldsets" / "secret-hitler.yaml").is_file():
        sets["secret-hitler"] = shared / "goldsets" / "secret-hitler.yaml"
        ar = shared / "corpora" / "aisleriot"
        out = tmp / "aisleriot-parallel.yaml"
        sh(RG, "goldset", "parallel", *(x for lang in ("en", "de", "fr", "es", "ru")
                                         for x in ("--doc", f"{lang}={ar / f'aisleriot-{lang}.txt'}")),
           *(x for lang in ("de", "fr", "es", "ru") for x in ("--ask", lang)),
           "--mode", "title", "--mode", "first-sentence", "--max", str(most), "--game", "AisleRiot",
           "-o", str(out))
        sets["aisleriot-parallel"] = out
    return sets


def run(gold: Path, backend: str, tmp: Path) -> Path:
    rid = f"{gold.stem}-{backend}"
    sh(RG, "run", "-g", str(gold), "-c", str(tmp / "dense.toml"), "-o", str(tmp / "runs"), "--run-id", rid,
       "-p", f"dense.backend={backend}", "--allow-outside", "-q")
    return tmp / "runs" / rid


def compare(exact: Path, other: Path) -> dict[str, float]:
    m0, m1 = (pd.read_parquet(p / "metrics.parquet") for p in (exact, other))
    out: dict[str, float] = {}
    changed: set[str] = set()
    for metric in ("recall@5", "recall@10"):
        a, b = (m[(m.config_id == "arm-dense") & (m.metric == metric)].set_index("question_id")["value"]
                for m in (m0, m1))
        out[metric] = float(a.mean())
        out[f"{metric} {other.name}"] = float(b.mean())
        changed |= set(a.index[(a - b.reindex(a.index)).abs() > 1e-12])
    r0, r1 = (pd.read_parquet(p / "arm_ranks.parquet") for p in (exact, other))
    top = [r[(r["rank"] <= 10)].groupby("question_id")["chunk_id"].apply(set) for r in (r0, r1)]
    overlap = [len(s & top[1].get(q, set())) / len(s) for q, s in top[0].items() if s]
    out.update(questions=float(m0.question_id.nunique()), changed=float(len(changed)),
               overlap_mean=sum(overlap) / len(overlap), overlap_min=min(overlap))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    p.add_argument("--max", type=int, default=40, help="AisleRiot games asked about")
    p.add_argument("--backends", default="onnx-int8,torch-bf16,onnx-fp32")
    args = p.parse_args()
    print("start:", machine_line(), "| cpu kind:", cpu_kind(cpu_flags()))
    verdict: dict[str, bool] = {}
    rows: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-backends-") as t:
        tmp = Path(t)
        (tmp / "dense.toml").write_text(GRID, encoding="utf-8")
        sets = check_sets(tmp, args.shared, args.max)
        for name, gold in sets.items():
            exact = run(gold, EXACT, tmp)
            for backend in args.backends.split(","):
                c = compare(exact, run(gold, backend, tmp))
                ok = c["changed"] <= MAX_CHANGED * c["questions"] and c["overlap_mean"] >= MIN_OVERLAP
                verdict[backend] = verdict.get(backend, True) and ok
                rows.setdefault(backend, {})[name] = c
                print(f"{name:19s} {backend:10s} questions {c['questions']:.0f} | recall@5 "
                      f"{c['recall@5']:.4f} -> {c[f'recall@5 {gold.stem}-{backend}']:.4f} | recall@10 "
                      f"{c['recall@10']:.4f} -> {c[f'recall@10 {gold.stem}-{backend}']:.4f} | questions "
                      f"changed {c['changed']:.0f} | top-10 overlap mean {c['overlap_mean']:.4f}, least "
                      f"{c['overlap_min']:.2f} | {'agrees' if ok else 'DISAGREES'}", flush=True)
    print(f"tolerance: at most {MAX_CHANGED:.0%} of a check set's questions change recall@5 or recall@10, "
          f"mean top-10 overlap >= {MIN_OVERLAP}")
    print("verdicts:", json.dumps(verdict))
    print("end:  ", machine_line())


if __name__ == "__main__":
    main()
