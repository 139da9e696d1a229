"""The watchdog of harness.core.reaper: a block's processes (children and orphaned
grandchildren, in sessions of their own) end when the block ends and when its owner is
killed with SIGKILL; processes without the block's tag are left alone."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness.core.reaper import TAG_VAR, end_tagged, reaped, tagged
from tests.helpers.common import REPO

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")

# the owner: inside the block, a child and a grandchild whose parent exits (double fork: an
# orphan, as Ray's agents are once their raylet dies); prints the token, then waits
OWNER = textwrap.dedent("""
    import subprocess, sys, time
    from harness.core.reaper import reaped
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


def test_the_end_of_the_block_ends_what_it_started() -> None:
    owner, token = _owner("exit")
    assert owner.stdout is not None
    assert owner.stdout.readline().strip() == "done"  # the block waited for the watchdog
    assert tagged(token) == []
    assert owner.wait(timeout=10) == 0
    owner.stdout.close()


def test_the_tag_is_set_only_inside_the_block_and_nested_blocks_restore_it() -> None:
    assert TAG_VAR not in os.environ
    with reaped("outer") as outer:
        assert os.environ[TAG_VAR] == outer
        with reaped("inner") as inner:
            assert os.environ[TAG_VAR] == inner != outer
        assert os.environ[TAG_VAR] == outer
    assert TAG_VAR not in os.environ


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
