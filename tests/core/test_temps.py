"""Temporaries of dead processes (rulegauge.core.temps): held by their owner's lock while it
lives, swept by the next writer of the same target, never while the owner lives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from rulegauge.core import temps
from rulegauge.core.atomic import atomic_dir, atomic_path, temp_name, write_text
from rulegauge.store.runlock import RunLock
from tests.helpers.common import REPO

# a child that starts an atomic write of ARGV[1] (a folder with "dir"), says where, and waits
# on stdin for ever: the test kills it there, mid-write (no sleep: it blocks on a read)
HOLDER = """
import sys
from pathlib import Path
from rulegauge.core.atomic import atomic_dir, atomic_path
target = Path(sys.argv[1])
with (atomic_dir(target) if sys.argv[2] == "dir" else atomic_path(target)) as tmp:
    (tmp / "part" if sys.argv[2] == "dir" else tmp).write_text("half")
    print(tmp, flush=True)
    sys.stdin.read()
"""


def _holder(target: Path, kind: str) -> tuple[subprocess.Popen[str], Path]:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(target), kind], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout is not None
    tmp = Path(proc.stdout.readline().strip())
    assert tmp.exists() and temps.TEMP.match(tmp.name), tmp
    return proc, tmp


def _kill(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    assert proc.wait() == -signal.SIGKILL
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(proc.stdout)


def test_a_live_writers_temporary_is_kept_and_a_killed_ones_swept(tmp_path: Path) -> None:
    for kind, target in (("dir", tmp_path / "imported"), ("file", tmp_path / "g.yaml")):
        proc, tmp = _holder(target, kind)
        try:
            assert temps.sweep(tmp_path) == [] and tmp.exists()  # its owner lives: held
            assert not temps.owner_gone(tmp)
        finally:
            _kill(proc)
        assert temps.owner_gone(tmp)
        if kind == "dir":  # the next write of the same target sweeps it
            with atomic_dir(target) as new:
                (new / "part").write_text("whole")
        else:
            write_text(target, "whole")
        assert not tmp.exists()
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_an_unlocked_temporary_of_a_live_pid_is_kept(tmp_path: Path) -> None:
    """An older writer held no lock: its temporary is kept while its pid lives."""
    mine = temp_name(tmp_path / "x.parquet")  # this process's pid, no lock held
    mine.write_text("x")
    dead = tmp_path / f".x.parquet.tmp-{_dead_pid()}-0123abcd"
    dead.write_text("x")
    other = tmp_path / ".x.parquet.bak"  # not a temporary's name: never touched
    other.write_text("x")
    assert temps.sweep(tmp_path, "x.parquet") == [dead]
    assert mine.exists() and other.exists()
    assert temps.sweep(tmp_path, "other") == []


def test_the_writer_holds_its_own_temporary_in_this_process_too(tmp_path: Path) -> None:
    with atomic_path(tmp_path / "a.txt") as tmp:
        tmp.write_text("x")
        assert not temps.owner_gone(tmp)  # another open of it cannot take the lock
        assert temps.sweep(tmp_path) == []
    assert (tmp_path / "a.txt").read_text() == "x"


def test_taking_a_run_lock_sweeps_the_run_folder(tmp_path: Path) -> None:
    run = tmp_path / "r1"
    (run / ".partial" / "arm").mkdir(parents=True)
    pid = _dead_pid()
    left = [run / f".metrics.parquet.tmp-{pid}-0123abcd",
            run / ".partial" / "arm" / f".bm25.parquet.tmp-{pid}-89abcdef"]
    for p in left:
        p.write_text("half")
    (run / "metrics.parquet").write_text("kept")
    key = RunLock.acquire(run)
    try:
        assert not any(p.exists() for p in left)
        assert (run / "metrics.parquet").read_text() == "kept"
    finally:
        RunLock.release(key)
