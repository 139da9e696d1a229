"""A fork server for the fault tier: ``rulegauge ARGS`` in a process of its own per case,
without paying the interpreter's start and the big imports each time.

One fresh interpreter (started by :func:`zygote`, no threads of ours, nothing of pytest's) imports
rulegauge's CLI module and the libraries every command loads (numpy, pandas, pyarrow), then forks
one child per request. The child is the process a case checks: its own pid and process group,
the case's folder as cwd, exactly the case's environment, stdin from ``/dev/null``, stdout and
stderr into files; it runs ``rulegauge.cli.main`` with the case's arguments, runs the ``atexit``
handlers and exits with the code a fresh ``python -m rulegauge`` would give (``SystemExit``'s
code, 1 with the interpreter's traceback for an uncaught exception, 130 for
``KeyboardInterrupt``). No registry is loaded before the fork: plug-ins load in the child, as
in a real start. A child past its deadline is killed with its process group.

Why: the fault tier's 230 rows each started an interpreter that imported pandas and pyarrow
again (about 0.4 s of each row's 0.8 s in its subprocess).
Besides those, the server imports the third-party modules nearly every child imported after
the fork (pydantic through typer, the document loaders' libraries: see ``SERVER``); none of them
is a rulegauge registry, and a child cannot block an import anyway (its ``sys.path`` is fixed).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SERVER = r'''
import atexit, json, os, signal, sys, time, traceback
import numpy, pandas, pyarrow, pyarrow.parquet  # what every command loads: imported once, here
# third-party modules (no rulegauge registry) that ~250 of the ~270 children imported after the
# fork (measured: typer._adapters pulls in pydantic, ~0.3 CPU-s a child; the document loaders pypdf,
# PIL, fontTools, cryptography, snowballstemmer, yaml); plug-ins and registries still load in the child
import concurrent.futures, http.client, multiprocessing.queues, statistics
import fontTools.ttLib, PIL.Image, pydantic, pypdf, snowballstemmer, typer._adapters, yaml
import rulegauge.cli

def child(req):
    os.setpgrp()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL if sig != signal.SIGINT else signal.default_int_handler)
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    for fd, path in ((1, req["out"]), (2, req["err"])):
        f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(f, fd)
        os.close(f)
    sys.stdin = open(0, closefd=False)
    sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
    sys.argv = ["rulegauge", *req["args"]]
    code = 0
    try:
        rulegauge.cli.main()
    except SystemExit as exc:
        c = exc.code
        code = 0 if c is None else c if isinstance(c, int) else (print(c, file=sys.stderr) or 1)
    except KeyboardInterrupt:
        traceback.print_exc()
        code = 130
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code & 0xFF)

out = sys.stdout
for line in sys.stdin:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        child(req)
    deadline = time.monotonic() + req["timeout"]
    status, timed_out = None, False
    while status is None:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = os.waitstatus_to_exitcode(st)
        elif time.monotonic() > deadline:
            timed_out = True
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        else:
            time.sleep(0.005)
    out.write(json.dumps({"code": status, "timeout": timed_out}) + "\n")
    out.flush()
'''


@dataclass
class Zygote:
    """The running fork server (:func:`zygote`)."""

    proc: subprocess.Popen[str]
    scratch: Path

    def run(self, args: Sequence[str], *, cwd: Path, env: Mapping[str, str],
            timeout_s: float) -> subprocess.CompletedProcess[str]:
        """``rulegauge *args`` in a forked child (module docstring); raises
        :class:`subprocess.TimeoutExpired` past ``timeout_s``, as :func:`subprocess.run` does."""
        out, err = self.scratch / "stdout", self.scratch / "stderr"
        req = {"args": list(args), "cwd": str(cwd), "env": dict(env), "out": str(out),
               "err": str(err), "timeout": timeout_s}
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the fork server ended (exit {self.proc.wait()})")
        reply = json.loads(line)
        stdout = out.read_text(encoding="utf-8", errors="replace")
        stderr = err.read_text(encoding="utf-8", errors="replace")
        if reply["timeout"]:
            raise subprocess.TimeoutExpired(["rulegauge", *args], timeout_s, stdout, stderr)
        return subprocess.CompletedProcess(["rulegauge", *args], reply["code"], stdout, stderr)


@contextmanager
def zygote(scratch: Path, env: Mapping[str, str]) -> Iterator[Zygote]:
    """Start the fork server with ``env`` (its own imports only; each child gets the case's
    environment) and stop it on exit."""
    scratch.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=dict(env), cwd=scratch)
    try:
        yield Zygote(proc, scratch)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
