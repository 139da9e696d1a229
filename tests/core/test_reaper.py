"""The watchdog of rulegauge.core.reaper: a block's processes (children and orphaned
grandchildren, tagged or recorded in the block's lineage) end when the block ends and when
its owner is killed with SIGKILL; processes neither tagged nor descended from the block are
left alone. The lineage rule is checked on a made-up process table too (no /proc needed)."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import textwrap
import time
from contextlib import suppress
from pathlib import Path

import pytest

from rulegauge.core.reaper import KEEP_ENV, TAG_VAR, Lineage, Proc, end_tagged, read_proc, reaped, tagged
from tests.helpers.common import REPO

NO_PROC = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")

# the owner: inside the block, a child and a grandchild whose parent exits (double fork: an
# orphan, as Ray's agents are once their raylet dies); prints the token, then waits
OWNER = textwrap.dedent("""
    import subprocess, sys, time
    from rulegauge.core.reaper import reaped
    with reaped("test") as token:
        sleeper = [sys.executable, "-c", "import time; time.sleep(120)"]
        child = subprocess.Popen(sleeper)
        subprocess.Popen([sys.executable, "-c",
                          "import subprocess, sys; subprocess.Popen(sys.argv[1:])",
                          *sleeper]).wait()
        print(token, flush=True)
        if sys.argv[1] == "wait":
            time.sleep(120)
    print("done", flush=True)
""")


def _wait_until(predicate, timeout_s: float) -> float:
    start = time.monotonic()
    while not predicate():
        assert time.monotonic() - start < timeout_s, f"still there after {timeout_s} s"
        time.sleep(0.1)
    return time.monotonic() - start


def _owner(mode: str) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    owner = subprocess.Popen([sys.executable, "-c", OWNER, mode], stdout=subprocess.PIPE,
                             text=True, env=env)
    assert owner.stdout is not None
    token = owner.stdout.readline().strip()
    assert token.startswith("test-")
    return owner, token


@NO_PROC
def test_a_sigkilled_owners_processes_end_and_untagged_ones_stay() -> None:
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        owner, token = _owner("wait")
        assert len(tagged(token)) == 2  # the child and the orphaned grandchild
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(timeout=10)
        owner.stdout.close()  # type: ignore[union-attr]
        _wait_until(lambda: not tagged(token), 15)
        assert bystander.poll() is None  # not tagged: never touched
    finally:
        bystander.kill()
        bystander.wait()


@NO_PROC
def test_the_end_of_the_block_ends_what_it_started() -> None:
    owner, token = _owner("exit")
    assert owner.stdout is not None
    assert owner.stdout.readline().strip() == "done"  # the block waited for the watchdog
    assert tagged(token) == []
    assert owner.wait(timeout=10) == 0
    owner.stdout.close()


@NO_PROC
def test_the_tag_is_set_only_inside_the_block_and_nested_blocks_restore_it() -> None:
    assert TAG_VAR not in os.environ
    spt = os.environ.get("SPT_NOENV")  # restored, whatever it was
    with reaped("outer") as outer:
        assert os.environ[TAG_VAR] == outer
        assert os.environ["SPT_NOENV"] == KEEP_ENV["SPT_NOENV"] == "1"
        with reaped("inner") as inner:
            assert os.environ[TAG_VAR] == inner != outer
        assert os.environ[TAG_VAR] == outer
    assert TAG_VAR not in os.environ
    assert os.environ.get("SPT_NOENV") == spt


@NO_PROC
def test_end_tagged_ends_only_processes_with_the_token() -> None:
    token = f"t-{secrets.token_hex(8)}"  # unique: another test session may run this test too
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    mine = subprocess.Popen(sleeper, env={**os.environ, TAG_VAR: token})
    other = subprocess.Popen(sleeper, env={**os.environ, TAG_VAR: token + "0"})
    try:
        assert tagged(token) == [mine.pid]
        assert end_tagged(token) == [mine.pid]
        assert mine.wait(timeout=10) == -signal.SIGKILL
        assert other.poll() is None
    finally:
        for proc in (mine, other):
            proc.kill()
            proc.wait()


def _proc(pid: int, ppid: int, start: int, session: int = 7) -> Proc:
    return Proc(pid, ppid, session, start, zombie=False)


def _table(*procs: Proc) -> dict[int, Proc]:
    return {p.pid: p for p in procs}


def test_a_lineage_keeps_the_blocks_orphans_and_nothing_older_or_foreign() -> None:
    """Owner 100 (started at tick 10), block since tick 50: its raylet 101 (tick 60) and the
    raylet's agent 102 (tick 70) are the block's; a child the owner started before the block
    (103, tick 20) and that child's own child (104, tick 80) are not, nor unrelated 105/106."""
    lineage = Lineage(100, 10, since=50)
    first = _table(_proc(100, 1, 10), _proc(101, 100, 60), _proc(102, 101, 70),
                   _proc(103, 100, 20), _proc(104, 103, 80), _proc(105, 1, 90), _proc(106, 999, 90))
    assert lineage.scan(first) == [101, 102]
    # the owner and the raylet died; the agent, reparented to init, starts a child: both kept
    second = _table(_proc(102, 1, 70), _proc(107, 102, 95), _proc(103, 1, 20), _proc(105, 1, 90))
    assert lineage.scan(second) == [102, 107]
    # 102 ended and its pid names a new process (tick 200); the owner's pid is reused too,
    # and that new process's child is no descendant of the owner
    third = _table(_proc(102, 1, 200), _proc(107, 1, 95), _proc(100, 1, 300), _proc(108, 100, 310))
    assert lineage.scan(third) == [107]
    # a tagged process (a root) is the block's with its children when started since the block
    fourth = _table(_proc(107, 1, 95), _proc(109, 1, 120), _proc(110, 109, 130), _proc(111, 1, 5),
                    _proc(112, 111, 140))
    assert lineage.scan(fourth, roots=[109, 111]) == [107, 109, 110]
    assert lineage.scan({}) == []  # all ended


# a child that erases its environment's memory as setproctitle does (proc(5): fields 50-51
# of stat are where /proc/PID/environ reads), so its tag is gone; its parent lives on
ERASER = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    fields = Path("/proc/self/stat").read_text().rpartition(")")[2].split()
    start, end = int(fields[47]), int(fields[48])
    with open("/proc/self/mem", "r+b", buffering=0) as mem:
        mem.seek(start)
        mem.write(bytes(end - start))
    print(os.getppid(), os.getpid(), flush=True)
    time.sleep(120)
""")
ERASING_OWNER = textwrap.dedent("""
    import subprocess, sys, time
    from rulegauge.core.reaper import reaped
    with reaped("test") as token:
        print(token, flush=True)
        subprocess.Popen([sys.executable, "-c",
                          "import subprocess, sys, time; subprocess.Popen(sys.argv[1:]); time.sleep(120)",
                          sys.executable, "-c", sys.argv[1]])
        time.sleep(120)
""")


def _switches(pid: int) -> int:
    """Voluntary context switches of ``pid``: the watchdog makes one per wait between scans."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("voluntary_ctxt_switches:")[1].split()[0])


def _ended(pid: int) -> bool:
    try:
        return read_proc(pid).zombie  # killed; its new parent has not collected it yet
    except OSError:
        return True


@NO_PROC
@pytest.mark.faults  # a fault-tier row: a process that erased its environment, then orphaned
def test_an_untagged_orphan_the_watchdog_saw_ends_with_the_owner() -> None:
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    owner = subprocess.Popen([sys.executable, "-c", ERASING_OWNER, ERASER], stdout=subprocess.PIPE,
                             text=True, env=env)
    assert owner.stdout is not None
    left: list[Proc] = []  # killed here only when the watchdog failed
    try:
        token = owner.stdout.readline().strip()
        parent, erased = map(int, owner.stdout.readline().split())
        left += [read_proc(parent), read_proc(erased)]
        assert Path(f"/proc/{erased}/environ").read_bytes().strip(b"\0") == b""
        assert tagged(token) == [parent]  # the tag is gone from the child's environment
        watchdog = next(int(p.name) for p in Path("/proc").glob("[0-9]*")
                        if b"rulegauge.core.reaper" in (p / "cmdline").read_bytes()
                        and token.encode() in (p / "cmdline").read_bytes())
        seen = _switches(watchdog)  # wait until the watchdog scanned with the child there
        _wait_until(lambda: _switches(watchdog) >= seen + 3, 30)
        os.kill(parent, signal.SIGKILL)  # the child is an orphan now: only the lineage has it
        _wait_until(lambda: read_proc(erased).ppid != parent, 10)
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(timeout=10)
        _wait_until(lambda: _ended(erased), 15)
        assert bystander.poll() is None  # neither tagged nor the block's: never touched
    finally:
        owner.kill()
        owner.wait()
        owner.stdout.close()
        for proc in left:
            with suppress(OSError):
                if read_proc(proc.pid).start == proc.start:  # not a pid reused since
                    os.kill(proc.pid, signal.SIGKILL)
        bystander.kill()
        bystander.wait()
