"""The run store under concurrency and failure: locks, temp names, ENOSPC, run ids."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.store.rundir import RunWriter, check_run_id, run_path, temp_name
from tests.helpers.common import LEXICAL, REPO

ENV = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}

HOLD = """
import sys, time
from pathlib import Path
from rulegauge.store.rundir import RunWriter
w = RunWriter(Path(sys.argv[1]))
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
"""


def test_second_process_is_refused_while_the_first_writes(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path / "r1"), "30"], env=ENV,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(RulegaugeError, match=rf"run r1 .* is being written by another process "
                                               rf"\(pid {holder.pid}\)"):
            RunWriter(tmp_path / "r1")
        RunWriter(tmp_path / "r2").close()  # other run ids are free
    finally:
        holder.kill()
        holder.wait(timeout=10)
        if holder.stdout is not None:
            holder.stdout.close()
    RunWriter(tmp_path / "r1").close()  # the lock went with the process: resume at once


def test_writers_in_one_process_share_the_lock(tmp_path: Path) -> None:
    a = RunWriter(tmp_path / "r")
    b = RunWriter(tmp_path / "r")  # a run that answers opens its run again
    b.update_manifest({"x": 1})
    b.close()
    a.update_manifest({"y": 2})
    assert a.read_manifest() == {"x": 1, "y": 2}
    a.close()


def test_cli_second_writer_exits_2(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path / "runs" / "same"), "60"],
                              env=ENV, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        proc = subprocess.run([sys.executable, "-c", "from rulegauge.cli import main; main()", "run",
                               "-c", str(LEXICAL), "-o", str(tmp_path / "runs"), "--run-id",
                               "same"], env=ENV, capture_output=True, text=True, timeout=300)
    finally:
        holder.kill()
        holder.wait(timeout=10)
        if holder.stdout is not None:
            holder.stdout.close()
    assert proc.returncode == 2, proc.stderr
    assert "is being written by another process" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_six_processes_on_one_run_id_lose_nothing(tmp_path: Path) -> None:
    """Each process either writes the whole run or is refused (exit 2); the manifest
    that says complete lists every table and every table matches its hash."""
    cmd = [sys.executable, "-c", "from rulegauge.cli import main; main()", "run", "-c", str(LEXICAL),
           "-o", str(tmp_path / "runs"), "--run-id", "same"]
    procs = [subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(6)]
    results = [(p.wait(timeout=600), p.stderr.read() if p.stderr else "") for p in procs]
    for p in procs:
        for stream in (p.stdout, p.stderr):
            if stream is not None:
                stream.close()
    codes = [rc for rc, _ in results]
    assert set(codes) <= {0, 2} and 0 in codes, results
    for rc, err in results:
        assert "Traceback" not in err
        if rc == 2:
            assert "is being written by another process" in err, err
    from rulegauge.store.rundir import Run

    run = Run(tmp_path / "runs" / "same")  # verifies every table against its hash
    assert run.manifest["status"] == "complete"
    assert {"questions", "documents", "chunks", "configs", "arm_ranks", "fused",
            "metrics"} <= set(run.tables())
    assert not [p for p in (tmp_path / "runs" / "same").rglob("*") if ".tmp" in p.name]


def test_temp_names_are_unique_per_process_and_call(tmp_path: Path) -> None:
    names = {temp_name(tmp_path / "metrics.parquet").name for _ in range(50)}
    assert len(names) == 50
    assert all(f"-{os.getpid()}-" in n for n in names)


ENOSPC = """
import errno, sys
import pyarrow.parquet as pq
def full(*a, **k):
    open(a[1], "wb").write(b"PAR1 half")  # a temporary file is started, then the disk fills
    raise OSError(errno.ENOSPC, "No space left on device")
pq.write_table = full
from rulegauge.cli import main
sys.argv = ["rulegauge", "run", "-c", sys.argv[1], "-o", sys.argv[2], "--run-id", "full"]
main()
"""


def test_enospc_is_a_clear_error_and_nothing_is_half_written(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", ENOSPC, str(LEXICAL), str(tmp_path / "runs")],
                          env=ENV, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "no space left on device" in proc.stderr and "questions.parquet" in proc.stderr
    assert "Traceback" not in proc.stderr
    folder = tmp_path / "runs" / "full"
    assert not list(folder.glob("*.parquet")) and not list(folder.glob(".*tmp*"))
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest.get("tables", {}) == {} and manifest["status"] != "complete"


def test_enospc_on_the_manifest_keeps_the_old_one(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    w = RunWriter(tmp_path / "r")
    w.update_manifest({"a": 1})

    def full(self: Path, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full)
    with pytest.raises(RulegaugeError, match=r"manifest\.json: cannot write \(no space left on device"):
        w.update_manifest({"b": 2})
    monkeypatch.undo()
    assert w.read_manifest() == {"a": 1}
    with pytest.raises(RulegaugeError, match="missing columns"):
        w.write_table("metrics", pd.DataFrame({"x": [1]}))
    w.close()


@pytest.mark.parametrize("bad", ["../../x", "..", ".", "/tmp/x", "a/b", ".hidden", "", "a b",
                                 "x" * 129, "a\nb"])
def test_run_ids_are_confined(bad: str, tmp_path: Path) -> None:
    with pytest.raises(RulegaugeError, match="bad run id"):
        run_path(tmp_path, bad)
    assert not any(tmp_path.iterdir())


def test_good_run_ids(tmp_path: Path) -> None:
    assert run_path(tmp_path, "run-20261130-101500-ab12") == tmp_path / "run-20261130-101500-ab12"
    assert check_run_id("v1.2_final") == "v1.2_final"
