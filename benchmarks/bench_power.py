"""Simulation check of the gate's power prediction (issue 34): plant a drop, run the real gate.

For a gold set, a grid and a metric, the script runs ``rulegauge run`` (or reads ``--run``),
takes the paired differences of the config and its grid neighbours (centred), and for each
target power (0.5, 0.8, 0.95) plants the MDE at that power in ``--sims`` resamples of the
questions and runs the real gate (``rulegauge.regression.gate.run_gate``, its permutation
test and multiplicity rule) on each: ``rulegauge.testing.power_simulation``. The MDE is the
one the gate prints (``--method resampled``, the default: the permutation test by resampling
the same differences, with the gate's n_resamples and seed; ``--method t-test``: the paired
t-test's). Printed per target: the planted drop, the predicted power, the paired t-test's
power at that drop, the gate's detection rate with the number of simulations and the
binomial standard error, the paired t-test's rate on the same replicates, and the gate's
rate by control variate over ``--control`` more t-test replicates (same expectation,
smaller error). One seed (``--seed``) drives one local
generator. The shape of the differences (share of questions that differ, kurtosis) is
printed too: the prediction is normal theory, and few differing questions bend it
(docs/gate.md, "The simulation check"). ``--model loss`` checks the whole-question-loss
model instead (``rulegauge.regression.power_models``, issue 44): per target the fewest lost
questions the model detects at that power are planted (drawn questions above the metric's
floor set to it: every relevant page lost) and the gate's rate is compared with the model's
power at that number (``simulate_loss``). Each run's lines are appended to
``benchmarks/history/bench_power.log``.

Run: .venv/bin/python benchmarks/bench_power.py [--goldset ../shared/goldsets/secret-hitler.yaml]
     [--grid docs/grids/grid-200.toml] [--metric recall@5] [--sims 1000] [--control 100000]
     [--model shift|loss]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import scipy.stats
from machine import machine_line

REPO = Path(__file__).resolve().parents[1]
SERVICE = "rrf_k60_bm25+dense+boost"


def _run(goldset: str | None, grid: Path, out: Path) -> Path:
    exe = Path(sys.executable).with_name("rulegauge")
    cmd = [str(exe), "run", "-c", str(grid), "--out", str(out), "--run-id", "power", "--fused-depth", "1"]
    if goldset:
        cmd += ["-g", goldset, "--allow-outside"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"rulegauge run failed ({done.returncode}): {done.stderr[-2000:]}")
    return out / "power"


def main() -> None:
    from rulegauge.regression.power import Resampling
    from rulegauge.store.rundir import open_run
    from rulegauge.testing.power_simulation import TARGETS, difference_pool, simulate, simulate_loss

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--goldset", help="gold set YAML (default: the embedded sample)")
    ap.add_argument("--run", help="an existing run directory instead of running the grid")
    ap.add_argument("--grid", type=Path, default=REPO / "docs" / "grids" / "grid-200.toml")
    ap.add_argument("--metric", default="recall@5")
    ap.add_argument("--config", default=SERVICE)
    ap.add_argument("--sims", type=int, default=1000, help="gate runs per target power")
    ap.add_argument("--control", type=int, default=100_000, help="t-test replicates per target")
    ap.add_argument("--resamples", type=int, default=2000, help="the gate's n_resamples")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--method", choices=("resampled", "t-test"), default="resampled",
                    help="how the MDE is predicted (the gate's [gate] power_method)")
    ap.add_argument("--model", choices=("shift", "loss"), default="shift",
                    help="the regression planted: a uniform shift (the MDE the gate prints) or "
                         "whole questions lost (the whole-question-loss MDE)")
    ap.add_argument("--no-log", action="store_true", help="do not append to the history log")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-power-") as tmp:
        path = Path(args.run) if args.run else _run(args.goldset, args.grid, Path(tmp))
        run = open_run(path)
        pool = difference_pool(run, args.metric, args.config)
        man = {k: run.manifest.get(k) for k in ("goldset", "corpus")}
        resampling = Resampling(args.resamples, args.seed)
        if args.model == "loss":
            results = simulate_loss(pool, TARGETS, n_sims=args.sims, resampling=resampling,
                                    alpha=args.alpha, n_control=args.control, manifest=man)
        else:
            results = simulate(pool, TARGETS, n_sims=args.sims, resampling=resampling,
                               alpha=args.alpha, n_control=args.control, manifest=man,
                               method=args.method)
    d = pool.differences
    lines = [machine_line(),
             f"gold set {args.goldset or 'sample'} | run {pool.run_id} | {args.metric} around "
             f"{pool.config} | n {pool.n} questions | {len(pool.neighbours)} neighbours "
             f"({', '.join(pool.neighbours)}) | sd {pool.sd:.4f} | differing pairs "
             f"{pool.differing} of {d.size} | excess kurtosis "
             f"{scipy.stats.kurtosis(d):.2f} | gate n_resamples {args.resamples}, alpha "
             f"{args.alpha:g}, seed {args.seed} | model {args.model} | prediction "
             f"{'whole-question loss' if args.model == 'loss' else args.method}",
             f"{'target':>6} {'delta':>8} {'predicted':>9} {'t-test':>7} {'gate (sims)':>16} "
             f"{'SE':>6} {'gap':>7} {'t same':>7} {'controlled':>11} {'SE':>6} {'gap':>7}"]
    for r in results:
        ok = ("within 5 points" if abs(r.gap) <= 0.05 else
              "outside 5 points by less than 2 SE: too few --sims to tell" if abs(r.gap) - 0.05 < 2 * r.se
              else "MISSED by more than 5 points")
        lost = f" lost {r.lost:>3}" if r.lost >= 0 else ""
        lines.append(f"{r.target:>6.2f}{lost} {r.delta:>8.4f} {r.predicted:>9.3f} "
                     f"{r.t_predicted:>7.3f} {r.observed:>8.3f} ({r.n_sims:>5}) {r.se:>6.3f} {r.gap:>+7.3f} "
                     f"{r.t_same / r.n_sims:>7.3f} {r.controlled:>11.3f} {r.controlled_se:>6.3f} "
                     f"{r.controlled - r.predicted:>+7.3f}  {ok}")
    print("\n".join(lines))
    if not args.no_log:
        log = REPO / "benchmarks" / "history" / "bench_power.log"
        log.parent.mkdir(exist_ok=True)
        with log.open("a", encoding="utf-8") as fh:
            fh.write(" | ".join(lines) + "\n")


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    main()
