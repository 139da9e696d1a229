"""A watchdog process that ends the processes a block started once the block's owner dies.

Definition: :func:`reaped` tags every process started inside the ``with`` block (the
environment variable :data:`TAG_VAR`, inherited by children and grandchildren alike: a
Ray raylet's workers and agents too) with a fresh random token, and first starts a
watchdog, ``python -m harness.core.reaper TOKEN OWNER_PID SESSION``, in a session of its own (a
Ctrl-C or hang-up of the terminal's process group does not reach it). The watchdog holds
the read end of a pipe whose write end only the owner holds; it waits until the pipe
reaches end-of-file (the owner closed it at the end of the block, or the kernel closed it
because the owner died, ``kill -9`` included) or its parent is no longer the owner, then
ends every process of this user and of the owner's session whose environment carries the
token (:func:`end_tagged`: ``SIGKILL``, repeated until two scans find none, at most
:data:`END_ROUNDS` rounds) and exits. Only the owner's session is searched (Ray's
processes keep it; the environment of a process is read only when its session matches,
since that read waits on the process's memory lock): a descendant that starts a session
of its own (``setsid``) is not followed.
At the end of the block the owner closes the pipe and waits up to :data:`WAIT_S` for the
watchdog, so when the block returns nothing it started is left running.

Only processes carrying the token are ever touched: processes this block did not start
(another run's Ray, another user's, a cluster this process merely joined) never carry it.
The owner's own environment at exec time (``/proc/PID/environ``) does not hold the tag
(it is set later, with ``os.environ``), and the owner and watchdog are skipped anyway.

Edge cases: where ``/proc`` is missing (not Linux) the watchdog finds nothing and only
exits; a zombie's environment reads empty (it is dead already, its parent reaps it).

Reference: ``pipe(7)`` (end-of-file once every write end is closed), ``proc(5)``
(``/proc/PID/environ``, ``/proc/PID/stat``).
"""

from __future__ import annotations

import os
import secrets
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

TAG_VAR = "HARNESS_REAPER_TAG"
"""The environment variable that marks the processes of one block."""
END_ROUNDS = 50
"""Scans of ``/proc`` (0.1 s apart) the watchdog makes while tagged processes remain."""
WAIT_S = 30.0
"""How long the owner waits for the watchdog at the end of the block."""
POLL_S = 1.0
"""How often the watchdog checks that its parent is still the owner."""


def _session(proc: Path) -> int:
    """The session id of a ``/proc/PID`` (its ``stat`` file: no lock on the process's memory)."""
    return int((proc / "stat").read_text().rpartition(")")[2].split()[3])


def tagged(token: str, skip: frozenset[int] = frozenset(), session: int | None = None) -> list[int]:
    """Pids of this user's live processes in ``session`` (default: this process's) whose
    environment holds ``TAG_VAR=token``. Only processes of that session are read: reading
    another process's environment waits on its memory lock, which any busy process on the
    machine may hold."""
    needle = f"{TAG_VAR}={token}".encode()
    uid = os.getuid()
    sid = os.getsid(0) if session is None else session
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        pid = int(proc.name)
        if pid in skip or pid == os.getpid():
            continue
        try:
            if proc.stat().st_uid != uid or _session(proc) != sid:
                continue
            environ = (proc / "environ").read_bytes()
        except (OSError, ValueError, IndexError):  # gone, or not ours to read
            continue
        if needle in environ.split(b"\0"):
            found.append(pid)
    return sorted(found)


def end_tagged(token: str, skip: frozenset[int] = frozenset(), session: int | None = None
               ) -> list[int]:
    """``SIGKILL`` every process of ``session`` tagged ``token`` (children started while
    doing so as well); returns the pids signalled."""
    ended: list[int] = []
    empty = 0
    for _ in range(END_ROUNDS):
        pids = tagged(token, skip, session)
        empty = 0 if pids else empty + 1
        if empty == 2:  # twice: a process caught mid-exec reads as unreadable once
            break
        for pid in pids:
            with suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        ended += [p for p in pids if p not in ended]
        time.sleep(0.1)
    return ended


def _watch(token: str, owner: int, session: int) -> None:
    """The watchdog's loop: wait for end-of-file on stdin or a new parent, then end."""
    with suppress(OSError):
        os.setsid()  # already a session leader when started by `reaped`; harmless otherwise
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)  # only the owner's end (or SIGKILL) ends us
    while os.getppid() == owner:
        ready, _, _ = select.select([sys.stdin.buffer], [], [], POLL_S)
        if ready and not os.read(sys.stdin.fileno(), 4096):
            break
    end_tagged(token, frozenset({owner}), session)


@contextmanager
def reaped(kind: str) -> Iterator[str]:
    """Tag what the block starts and start the watchdog first; yields the token."""
    token = f"{kind}-{os.getpid()}-{secrets.token_hex(8)}"
    package_root = str(Path(__file__).resolve().parents[2])
    env = {k: v for k, v in os.environ.items() if k != TAG_VAR}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    watchdog = subprocess.Popen(
        [sys.executable, "-m", "harness.core.reaper", token, str(os.getpid()), str(os.getsid(0))],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env, start_new_session=True)
    before = os.environ.get(TAG_VAR)
    os.environ[TAG_VAR] = token
    try:
        yield token
    finally:
        if before is None:
            os.environ.pop(TAG_VAR, None)
        else:
            os.environ[TAG_VAR] = before
        assert watchdog.stdin is not None
        watchdog.stdin.close()  # end-of-file: the watchdog ends what is left, then exits
        try:
            watchdog.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            end_tagged(token)
            watchdog.kill()
            watchdog.wait()


if __name__ == "__main__":
    _watch(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
