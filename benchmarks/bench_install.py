"""Benchmark: what a CI gate installs (issue 32): the bare core against ``ranx`` + ``ir-measures``.

Both are installed the same way in the same run, each into fresh virtual environments, through
pip's ordinary client (its cache and index as configured: run it twice, the first warms the
cache for both): rulegauge's wheel built from this tree (no extra: ``pip install rulegauge``),
and the peer ``pip install ranx ir-measures``. Measured per side: site-packages bytes,
distributions installed (pip and setuptools left out on both sides), and install wall seconds
(median of ``--repeats`` fresh environments). Printed: each figure and the ratio core / peer.
Targets (docs: benchmarks/README.md): site-packages <= 0.7x, packages <= 1x, seconds <= 1x.
Each run's line is appended to ``benchmarks/history/bench_install.log``.

Run: .venv/bin/python benchmarks/bench_install.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the wheel and venv helpers live with the tests (tests/team uses them)

from machine import machine_line  # noqa: E402

from tests.helpers.bare_venv import (  # noqa: E402
    build_wheel,
    distributions,
    fresh_venv,
    pip_install,
    site_packages_size,
)

PEER = ("ranx", "ir-measures")
TOOLING = {"pip", "setuptools", "wheel"}


def measure(specs: tuple[str | Path, ...], repeats: int, scratch: Path, label: str) -> tuple[int, int, float]:
    """(site-packages bytes, distributions, median install seconds) over ``repeats`` fresh venvs."""
    seconds, size, count = [], 0, 0
    for i in range(repeats):
        python = fresh_venv(scratch / f"{label}-{i}")
        done = pip_install(python, *specs)
        if done.returncode != 0:
            raise SystemExit(f"{label}: pip install failed: {done.last_line()}")
        seconds.append(done.seconds)
        size = site_packages_size(python)
        count = len([d for d in distributions(python) if d.lower() not in TOOLING])
    return size, count, statistics.median(seconds)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-install-") as tmp:
        scratch = Path(tmp)
        wheel = build_wheel(scratch / "wheel")
        core = measure((wheel,), args.repeats, scratch, "core")
        peer = measure(PEER, args.repeats, scratch, "peer")
    rows = (("site-packages MB", core[0] / 1e6, peer[0] / 1e6, 0.7), ("packages", core[1], peer[1], 1.0),
            ("install s (median)", core[2], peer[2], 1.0))
    lines = [machine_line(), f"{'measure':<20} {'core':>10} {'ranx+ir-measures':>18} {'ratio':>7} target"]
    for name, ours, theirs, target in rows:
        ratio = ours / theirs
        lines.append(f"{name:<20} {ours:>10.1f} {theirs:>18.1f} {ratio:>6.2f}x <= {target}x "
                     + ("met" if ratio <= target else "MISSED"))
    print("\n".join(lines))
    log = REPO / "benchmarks" / "history" / "bench_install.log"
    log.parent.mkdir(exist_ok=True)
    with log.open("a", encoding="utf-8") as fh:
        fh.write(" | ".join(lines) + "\n")


if __name__ == "__main__":
    main()
