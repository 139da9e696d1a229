"""Benchmark: the four local servers under load (issue 33, item 8).

Each server (judging page, review page, ``serve-search`` over bm25 + boost, ``report
--serve``) runs in this process on 127.0.0.1 (``rulegauge.core.localserver``), built by
``tests/helpers/local_servers.py``. Peer: the same requests from one client, one at a
time (``--single`` of them; its median). Measured: ``--requests`` requests (reads and
posts alternating: the page's state and skip, a search, the report page) from
``--concurrency`` threads, while one slowloris client holds a connection with half a
request sent. Printed per server: errors, the single-client median, the loaded median and
p99, and p99 / single-client median (a ratio; the clients share the machine's cores with
the servers).

Run: .venv/bin/python benchmarks/bench_servers.py [--requests 2000] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the server builders live with the tests

from machine import machine_line  # noqa: E402

from tests.helpers.local_servers import BUILDERS, SERVERS, load_test, single_client  # noqa: E402


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--single", type=int, default=200)
    ap.add_argument("--server", action="append", choices=SERVERS)
    args = ap.parse_args()
    print(machine_line())
    print("server\terrors\tslowloris dropped\tsingle median ms\tloaded median ms\tp99 ms\t"
          "p99 / single median")
    for name in args.server or SERVERS:
        with tempfile.TemporaryDirectory() as tmp, BUILDERS[name](Path(tmp)) as target:
            single = statistics.median(single_client(target, args.single))
            got = load_test(target, args.requests, args.concurrency)
            lat = list(got.latencies)
            print(f"{name}\t{len(got.errors)} of {args.requests}\t{got.slowloris_dropped}\t"
                  f"{single * 1e3:.2f}\t{statistics.median(lat) * 1e3:.1f}\t{p99(lat) * 1e3:.0f}\t"
                  f"{p99(lat) / single:.0f}x", flush=True)


if __name__ == "__main__":
    main()
