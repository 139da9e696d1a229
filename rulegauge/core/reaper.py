"""A watchdog process that ends the processes a block started once the block's owner dies.

Definition: :func:`reaped` starts a watchdog, ``python -m rulegauge.core.reaper TOKEN
OWNER_PID SESSION``, in a session of its own (a Ctrl-C or hang-up of the terminal's process
group does not reach it), and then marks what the block starts with a fresh random token
(the environment variable :data:`TAG_VAR`, inherited by children and grandchildren alike).
The watchdog holds the read end of a pipe whose write end only the owner holds; it waits
until the pipe reaches end-of-file (the owner closed it at the end of the block, or the
kernel closed it because the owner died, ``kill -9`` included) or its parent is no longer
the owner, then ends the block's processes (:func:`end_tagged`: ``SIGKILL``, repeated until
two scans find none, at most :data:`END_ROUNDS` rounds) and exits.

The block's processes ("only what this block started") are the processes of this user and
of the owner's session that either
* carry the token in ``/proc/PID/environ`` (the environment they were started with), or
* belong to the block's :class:`Lineage`: the owner's descendants started no earlier than
  the watchdog, recorded by pid and start time by a scan every :data:`POLL_S` while the owner
  lives, so a process whose parent died later (reparented to init) is still known, and a
  recycled pid is never taken for it; children of such processes and of tagged ones count too.
Two rules because ``/proc/PID/environ`` is not the environment but the memory it was
placed in at ``exec``: a process may reuse that memory. The ``setproctitle`` code in Ray's
agents (``ray::DashboardAgent``, ``ray::RuntimeEnvAgent``) does: it copies the environment
elsewhere, takes the command line's memory and the environment strings after it (up to the
first one the process changed) for the title, and fills that with NUL bytes. The raylet
orders the agents' environment differently on each start, so the token was erased in some
starts (2 of 11) and the agents, orphaned when the raylet died, outlived the driver. The
block therefore also sets ``SPT_NOENV=1`` (:data:`KEEP_ENV`: setproctitle then keeps to
the command line's own memory; Ray sets it for its workers itself), and the lineage
catches whatever erases its environment anyway, once one scan saw it under the owner.
Never touched: processes of another user, of another session (a descendant that calls
``setsid`` is not followed), started before the block, or of another block or cluster
(another run's Ray, a cluster this process merely joined): none is a descendant started
inside this block, and none carries its token. The owner and the watchdog are never
signalled; a signal goes through a pidfd after the start time was checked again, so a pid
reused meanwhile is safe.

Only cheap fields are read for every process of this user (``stat``: parent, session,
start time, state); the environment is read only when the session matches, since that read
waits on the process's memory lock, which any busy process on the machine may hold. At the
end of the block the owner closes the pipe and waits up to :data:`WAIT_S` for the watchdog,
so when the block returns nothing it started is left running.

Edge cases: where ``/proc`` is missing (not Linux) the watchdog finds nothing and only
exits; zombies are skipped (dead already; their parent reaps them); a process started and
orphaned between two scans without the token is missed (none of Ray's, with ``SPT_NOENV``).

Reference: ``pipe(7)`` (end-of-file once every write end is closed), ``proc(5)``
(``/proc/PID/stat`` fields 4, 6, 22; ``/proc/PID/environ``), ``pidfd_open(2)``,
setproctitle's README (``SPT_NOENV``).
"""

from __future__ import annotations

import os
import secrets
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

TAG_VAR = "RULEGAUGE_REAPER_TAG"
"""The environment variable that marks the processes of one block."""
KEEP_ENV = {"SPT_NOENV": "1"}
"""Set inside the block too: ``setproctitle`` (Ray's agents) then leaves the environment's
memory, and so the token in ``/proc/PID/environ``, as it was."""
END_ROUNDS = 50
"""Scans of ``/proc`` (0.1 s apart) the watchdog makes while the block's processes remain."""
WAIT_S = 30.0
"""How long the owner waits for the watchdog at the end of the block."""
POLL_S = 0.5
"""How often the watchdog records the owner's descendants and checks its parent."""


@dataclass(frozen=True)
class Proc:
    """One process as its ``/proc/PID/stat`` shows it (no lock on the process's memory)."""

    pid: int
    ppid: int
    session: int
    start: int
    """Clock ticks after boot (field 22): with the pid, it names one process for ever."""
    zombie: bool


def read_proc(pid: int) -> Proc:
    """The :class:`Proc` of ``pid``; raises ``OSError`` when it is gone."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text.rpartition(")")[2].split()  # the name (field 2) may hold spaces and ")"
    return Proc(pid, int(fields[1]), int(fields[3]), int(fields[19]),
                fields[0] in ("Z", "X"))


def processes(session: int | None = None) -> dict[int, Proc]:
    """This user's live processes in ``session`` (default: this process's), by pid, without
    this process and zombies."""
    uid, me = os.getuid(), os.getpid()
    sid = os.getsid(0) if session is None else session
    table = {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if proc.stat().st_uid != uid:
                continue
            info = read_proc(int(proc.name))
        except (OSError, ValueError, IndexError):  # gone, or not a process
            continue
        if info.session == sid and info.pid != me and not info.zombie:
            table[info.pid] = info
    return table


def carrying(table: dict[int, Proc], token: str) -> list[int]:
    """The pids of ``table`` whose environment holds ``TAG_VAR=token``."""
    needle = f"{TAG_VAR}={token}".encode()
    found = []
    for pid in table:
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:  # gone, or not ours to read
            continue
        if needle in environ.split(b"\0"):
            found.append(pid)
    return sorted(found)


def tagged(token: str, skip: frozenset[int] = frozenset(), session: int | None = None) -> list[int]:
    """Pids of this user's live processes in ``session`` (default: this process's) whose
    environment holds ``TAG_VAR=token``, without ``skip``."""
    return [pid for pid in carrying(processes(session), token) if pid not in skip]


class Lineage:
    """The descendants of the owner (pid ``owner`` started at ``owner_start``) started no
    earlier than ``since`` (clock ticks after boot), as the scans so far saw them: pid ->
    start time. A child is followed only through its parent being the owner or recorded,
    so what the owner started before the block, and its children, stay out."""

    def __init__(self, owner: int, owner_start: int, since: int) -> None:
        self.owner = (owner, owner_start)
        self.since = since
        self.known: dict[int, int] = {}

    def scan(self, table: dict[int, Proc], roots: Iterable[int] = ()) -> list[int]:
        """Record the descendants ``table`` shows (of the owner, of what was recorded, and of
        ``roots``, which are recorded too when started since ``since``); forget what has
        ended (or whose pid now names another process); return the recorded pids."""
        self.known = {pid: start for pid, start in self.known.items()
                      if pid in table and table[pid].start == start}
        children: dict[int, list[Proc]] = {}
        for proc in table.values():
            children.setdefault(proc.ppid, []).append(proc)
        self.known.update({table[p].pid: table[p].start for p in roots
                           if p in table and table[p].start >= self.since})
        pid, start = self.owner
        owner_alive = pid in table and table[pid].start == start  # not a pid reused since
        todo = [*([pid] if owner_alive else []), *self.known]
        while todo:
            for child in children.get(todo.pop(), []):
                if child.pid not in self.known and child.pid != pid and child.start >= self.since:
                    self.known[child.pid] = child.start
                    todo.append(child.pid)
        return sorted(self.known)


def _kill(proc: Proc) -> None:
    """``SIGKILL`` ``proc`` unless its pid names another process by now."""
    try:
        fd = os.pidfd_open(proc.pid)  # holds this process: its pid cannot be reused meanwhile
    except OSError:  # gone (or no pidfd on this kernel: checked below, then a plain signal)
        fd = -1
    try:
        if read_proc(proc.pid).start != proc.start:
            return
        if fd >= 0:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        else:
            os.kill(proc.pid, signal.SIGKILL)
    except (OSError, ValueError, IndexError):  # ended meanwhile
        pass
    finally:
        if fd >= 0:
            os.close(fd)


def end_tagged(token: str, skip: frozenset[int] = frozenset(), session: int | None = None,
               lineage: Lineage | None = None) -> list[int]:
    """``SIGKILL`` every process of ``session`` tagged ``token`` or (with ``lineage``) of the
    block's lineage, and the children those start meanwhile; returns the pids signalled."""
    ended: list[int] = []
    empty = 0
    for _ in range(END_ROUNDS):
        table = processes(session)
        found = set(carrying(table, token))
        if lineage is not None:
            found.update(lineage.scan(table, found))
        pids = sorted(found - skip)
        empty = 0 if pids else empty + 1
        if empty == 2:  # twice: a process caught mid-exec reads as unreadable once
            break
        for pid in pids:
            _kill(table[pid])
        ended += [p for p in pids if p not in ended]
        time.sleep(0.1)
    return ended


def _watch(token: str, owner: int, session: int) -> None:
    """The watchdog's loop: record the lineage until end-of-file on stdin or a new parent,
    then end the block's processes."""
    with suppress(OSError):
        os.setsid()  # already a session leader when started by `reaped`; harmless otherwise
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)  # only the owner's end (or SIGKILL) ends us
    try:
        owner_start = read_proc(owner).start
    except (OSError, ValueError, IndexError):  # the owner is gone already: the token only
        owner_start = -1
    lineage = Lineage(owner, owner_start, read_proc(os.getpid()).start)  # we start the block
    while os.getppid() == owner:
        lineage.scan(processes(session))
        ready, _, _ = select.select([sys.stdin.buffer], [], [], POLL_S)
        if ready and not os.read(sys.stdin.fileno(), 4096):
            break
    end_tagged(token, frozenset({owner}), session, lineage)


@contextmanager
def reaped(kind: str) -> Iterator[str]:
    """Start the watchdog first, then tag what the block starts; yields the token."""
    token = f"{kind}-{os.getpid()}-{secrets.token_hex(8)}"
    package_root = str(Path(__file__).resolve().parents[2])
    env = {k: v for k, v in os.environ.items() if k != TAG_VAR}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    watchdog = subprocess.Popen(
        [sys.executable, "-m", "rulegauge.core.reaper", token, str(os.getpid()), str(os.getsid(0))],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env, start_new_session=True)
    marks = {**KEEP_ENV, TAG_VAR: token}
    before = {key: os.environ.get(key) for key in marks}
    os.environ.update(marks)
    try:
        yield token
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
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
