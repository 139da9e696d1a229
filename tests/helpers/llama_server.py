"""A real local model server for tests: llama.cpp's OpenAI-compatible server.

:func:`llama_server` starts ``python -m llama_cpp.server`` (llama-cpp-python's
``server`` extra) with the packaged Qwen2.5 GGUF (:mod:`rulegauge.answering.gguf`)
on 127.0.0.1 and a free port, waits until ``GET /v1/models`` answers, and stops
it afterwards. Context and threads are kept small so that a few answers take
minutes on two cores; OpenMP threads sleep instead of spinning at barriers
(``OMP_WAIT_POLICY=PASSIVE`` unless set): on a shared two-core machine two spinning threads
generated 0.2 tokens/s, two sleeping ones 1.4 (2026-11-30, load average 9).
:func:`llama_missing` says why the tier cannot run (the ``llama`` extra not installed,
or a llama-cpp-python built with AMX, which crashes on this project's machines); under
``RULEGAUGE_REQUIRE_LLAMA=1`` (``.ci/run``) a
missing extra is a failure, not a skip.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.error import URLError
from urllib.request import urlopen

MODEL_ALIAS = "qwen2.5-coder-1.5b"
N_CTX = 2048


def llama_missing() -> str | None:
    """Why the real-server tier cannot run here, or None."""
    for mod in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "pydantic_settings"):
        if importlib.util.find_spec(mod) is None:
            return f"module {mod} is missing: install the llama extra (pip install -e '.[llama]')"
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode(errors="replace")
    if "AMX_INT8 = 1" in info:
        return ("llama-cpp-python was built with AMX (-march=native), whose weight repacking "
                "segfaults on the first generation on this project's machines: re-run "
                "`RULEGAUGE_EXTRAS=dev,llama bash scripts/setup` (scripts/llama-wheel builds it "
                "without)")
    from rulegauge.answering import gguf

    try:
        if not gguf.default_model_path().is_file():
            gguf.part_files()
    except Exception as exc:  # missing part packages are named by gguf itself
        return str(exc)
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class LlamaServer:
    base_url: str
    model: str
    log: Path
    startup_s: float


@contextmanager
def llama_server(log: Path, threads: int = 2, timeout_s: float = 300.0) -> Iterator[LlamaServer]:
    """Start the server, yield where it listens, stop it (module docstring)."""
    from rulegauge.answering.gguf import assemble_gguf

    model = assemble_gguf()
    port = free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model),
           "--model_alias", MODEL_ALIAS, "--host", "127.0.0.1", "--port", str(port),
           "--n_ctx", str(N_CTX), "--n_threads", str(threads), "--n_threads_batch", str(threads),
           "--seed", "0"]
    start = time.perf_counter()
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                env={"OMP_WAIT_POLICY": "PASSIVE", **os.environ,
                                     "PYTHONUNBUFFERED": "1"})
    base = f"http://127.0.0.1:{port}"
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {proc.returncode}: "
                                   + log.read_text(errors="replace")[-2000:])
            try:
                with urlopen(f"{base}/v1/models", timeout=2.0) as reply:  # our own server on 127.0.0.1
                    if reply.status == 200:
                        break
            except (URLError, OSError):
                pass
            if time.perf_counter() - start > timeout_s:
                raise RuntimeError(f"llama_cpp.server did not answer within {timeout_s} s: "
                                   + log.read_text(errors="replace")[-2000:])
            time.sleep(0.5)
        yield LlamaServer(base, MODEL_ALIAS, log, time.perf_counter() - start)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@contextmanager
def required_llama_server(log: Path) -> Iterator[LlamaServer]:
    """:func:`llama_server`, or a skip naming why it cannot run (a failure under
    ``RULEGAUGE_REQUIRE_LLAMA=1``). Test modules wrap it in a module-scoped fixture."""
    import pytest

    why = llama_missing()
    if why:
        if os.environ.get("RULEGAUGE_REQUIRE_LLAMA") == "1":
            pytest.fail(f"RULEGAUGE_REQUIRE_LLAMA=1 but the real-model tier cannot run: {why}")
        pytest.skip(why)
    with llama_server(log) as s:
        yield s


def rulegauge_cli(*args: str, cwd: Path, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    """``rulegauge ARGS`` in a fresh process (the venv's console script, else ``python -c``)."""
    exe = Path(sys.executable).with_name("rulegauge")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-c", "from rulegauge.cli import main; main()"]
    return subprocess.run([*cmd, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "COLUMNS": "250"})
