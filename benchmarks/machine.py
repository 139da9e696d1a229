"""The machine a benchmark ran on, printed with every figure: date, CPU, flags, load.

Import from a benchmark script (``from machine import machine_line``): the scripts'
folder is on ``sys.path`` when they run as ``python benchmarks/<script>.py``.
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path

FLAGS = ("avx2", "avx512f", "avx512_bf16", "avx512_vnni", "avx_vnni", "amx_bf16", "amx_int8", "amx_tile")
"""The CPU flags that change which kernels run (matmul, bf16, int8)."""


def cpu() -> tuple[str, list[str]]:
    """CPU model name and which of :data:`FLAGS` ``/proc/cpuinfo`` lists."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "unknown", []
    model, flags = "unknown", set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and model == "unknown":
            model = value.strip()
        elif key.strip() == "flags":
            flags.update(value.split())
    return model, [f for f in FLAGS if f in flags]


def load() -> str:
    """The 1, 5 and 15 minute load averages."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def machine_line() -> str:
    """One line: UTC time, CPU, its relevant flags, cores and load average."""
    model, flags = cpu()
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (f"{now} | {model} | flags: {' '.join(flags) or 'none of ' + ','.join(FLAGS)} | "
            f"{os.cpu_count()} cores | load average {load()}")
