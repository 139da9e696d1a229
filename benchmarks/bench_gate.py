"""Benchmark: a failing gate against a passing one on the sample, and the power table's share (issue 44).

What a user runs: ``rulegauge gate --baseline sample --run RUN --policy docs/ci/gate-policy.toml``
on a fresh run of the sample (``rulegauge run``, made once here, or ``--run``): the
**passing** gate (the service config against the committed baseline, exit 0) and the
**failing** one (``--candidate-config rrf_k60_bm25+boost``: the service without its dense
arm, a real regression: exit 1), each a fresh process, alternating, ``--repeats`` times;
wall and CPU seconds (the child's ``rusage``), medians. Peer: the passing gate, same run.

The power table (both power models of every gated metric) is computed once per baseline
and policy and kept (``rulegauge.regression.power_cache``): the **warm** figures are the
gates after the first, what CI sees with ``~/.cache/rulegauge`` restored (docs/ci); the
**cold** figures are the first gate of each kind with an empty cache
(``$RULEGAUGE_CACHE`` points at a fresh folder). The power table's share is timed in this
process on the same inputs: ``gate_power``'s seconds within ``run_gate``'s, cold and warm,
and against the failing gate's CLI wall time.

``--before DIR`` also times a source tree of rulegauge (e.g. ``git archive ba519eb
rulegauge`` unpacked) in the same rotation, imported from there: the figures before.
Targets: failing <= 1.5x passing (warm); the power table <= 20% of a failing gate.
Every run appends a line to ``benchmarks/history/bench_gate.log``.

Run: .venv/bin/python benchmarks/bench_gate.py [--repeats 5] [--run DIR] [--before DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import machine_line

REPO = Path(__file__).resolve().parents[1]
POLICY = REPO / "docs" / "ci" / "gate-policy.toml"
BASELINE = REPO / "runs" / "baselines" / "sample"
FAILING = ["--candidate-config", "rrf_k60_bm25+boost"]


def _cli(args: list[str], env: dict[str, str], expect: int) -> tuple[float, float]:
    """(wall s, CPU s) of one ``rulegauge`` process; its exit code must be ``expect``. With
    ``RG_BENCH_TREE`` in ``env`` the package is imported from that tree (an editable
    install's finder comes before ``sys.path``: it is taken out)."""
    prelude = ("import os, sys\nif os.environ.get('RG_BENCH_TREE'):\n"
               "    sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, '__module__', '')"
               ".startswith('__editable__')]\n    sys.path.insert(0, os.environ['RG_BENCH_TREE'])\n"
               "from rulegauge.cli import main\nmain()\n")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", prelude, *args],
                          capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != expect:
        raise SystemExit(f"rulegauge {' '.join(args)}: exit {done.returncode}, expected {expect}\n"
                         f"{done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _gate(run: Path, extra: list[str]) -> list[str]:
    return ["gate", "--baseline", str(BASELINE), "--run", str(run), "--policy", str(POLICY), *extra]


def _in_process(run: Path, cache: Path) -> dict[str, float]:
    """Seconds of ``run_gate`` and of its ``gate_power`` for the failing gate, cold (empty
    ``cache``) then warm (median of 3)."""
    os.environ["RULEGAUGE_CACHE"] = str(cache)
    from rulegauge.regression import gate as gate_module
    from rulegauge.regression.policy import load_policy
    from rulegauge.store.baseline import load_side

    spent: list[float] = []
    real = gate_module.gate_power

    def timed(*args: object, **kwargs: object) -> object:
        t = time.perf_counter()
        try:
            return real(*args, **kwargs)  # type: ignore[arg-type]
        finally:
            spent.append(time.perf_counter() - t)

    gate_module.gate_power = timed  # type: ignore[assignment]
    policy, base, cand = load_policy(POLICY), load_side(str(BASELINE)), load_side(str(run))
    out: dict[str, float] = {}
    for label, repeats in (("cold", 1), ("warm", 3)):
        totals, powers = [], []
        for _ in range(repeats):
            spent.clear()
            t = time.perf_counter()
            gate_module.run_gate(policy, base, cand, candidate_config="rrf_k60_bm25+boost")
            totals.append(time.perf_counter() - t)
            powers.append(sum(spent))
        out[f"{label} run_gate"] = statistics.median(totals)
        out[f"{label} power"] = statistics.median(powers)
    gate_module.gate_power = real  # type: ignore[assignment]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="warm gates of each kind")
    ap.add_argument("--run", type=Path, help="a run of the sample (default: rulegauge run, once)")
    ap.add_argument("--before", type=Path, help="a rulegauge source tree to time alongside")
    ap.add_argument("--no-log", action="store_true", help="do not append to the history log")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-gate-") as tmp:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
               "RULEGAUGE_CACHE": str(Path(tmp) / "cache")}
        if (model_cache := Path.home() / ".cache" / "rulegauge").is_dir():
            (Path(tmp) / "cache").mkdir()
            for item in model_cache.iterdir():  # the models and embeddings, not the power tables
                if item.name != "power":
                    (Path(tmp) / "cache" / item.name).symlink_to(item)
        run = args.run
        if run is None:
            _cli(["run", "--out", tmp, "--run-id", "bench"], env, 0)
            run = Path(tmp) / "bench"
        trees = {"this tree": env}
        if args.before:
            trees["before"] = {**env, "RG_BENCH_TREE": str(args.before.resolve())}
        figures: dict[str, dict[str, list[tuple[float, float]]]] = {}
        for tree, e in trees.items():
            power = Path(e["RULEGAUGE_CACHE"]) / "power"
            for kind, extra, code in (("passing", [], 0), ("failing", FAILING, 1)):
                shutil.rmtree(power, ignore_errors=True)  # each kind's first gate: cold
                figures.setdefault(tree, {})[f"cold {kind}"] = [_cli(_gate(run, extra), e, code)]
        for _ in range(args.repeats):
            for tree, e in trees.items():
                for kind, extra, code in (("passing", [], 0), ("failing", FAILING, 1)):
                    figures[tree].setdefault(f"warm {kind}", []).append(_cli(_gate(run, extra), e, code))
        inproc = _in_process(run, Path(tmp) / "inproc-cache")
    lines = [machine_line(), f"sample run {run.name} | baseline runs/baselines/sample | policy "
             f"docs/ci/gate-policy.toml (6 metrics) | failing: {' '.join(FAILING)} | "
             f"{args.repeats} warm gates of each kind, medians"]
    for tree, fig in figures.items():
        med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
               for k, v in fig.items()}
        ratio = med["warm failing"][0] / med["warm passing"][0]
        cpu_ratio = med["warm failing"][1] / med["warm passing"][1]
        lines.append(f"{tree}: " + ", ".join(f"{k} {w:.2f} s wall / {c:.2f} CPU-s" for k, (w, c) in med.items())
                     + f" | warm failing / passing {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU "
                     f"(target <= 1.5x: {'met' if ratio <= 1.5 else 'MISSED'})"
                     + (f" | cold failing / passing {med['cold failing'][0] / med['cold passing'][0]:.2f}x wall"))
    warm_fail = statistics.median(w for w, _ in figures["this tree"]["warm failing"])
    share = inproc["warm power"] / warm_fail
    lines.append(f"power table in process (failing gate): cold {inproc['cold power']:.2f} s of run_gate "
                 f"{inproc['cold run_gate']:.2f} s ({inproc['cold power'] / inproc['cold run_gate']:.0%}); "
                 f"warm {inproc['warm power']:.3f} s of {inproc['warm run_gate']:.2f} s "
                 f"({inproc['warm power'] / inproc['warm run_gate']:.0%}), {share:.1%} of the failing "
                 f"gate's CLI wall {warm_fail:.2f} s (target <= 20%: {'met' if share <= 0.2 else 'MISSED'})")
    print("\n".join(lines))
    if not args.no_log:
        with (REPO / "benchmarks" / "history" / "bench_gate.log").open("a", encoding="utf-8") as fh:
            fh.write(" | ".join(lines) + "\n")


if __name__ == "__main__":
    main()
