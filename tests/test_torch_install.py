"""scripts/torch-install: the CPU wheel index when it answers, the default index when it
does not, the default (CUDA) build with RULEGAUGE_TORCH=cuda, nothing when torch is there.

A stub Python records every ``-m pip`` call; the reachability check is real (a local
HTTP server stands in for the CPU index; a closed port for an unreachable one)."""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.common import REPO

SCRIPT = REPO / "scripts" / "torch-install"


def _stub(tmp_path: Path, *, has_torch: bool) -> tuple[Path, Path]:
    log = tmp_path / "pip.log"
    stub = tmp_path / "python"
    stub.write_text(f"""#!/usr/bin/env bash
if [ "$1" = "-m" ]; then echo "$@" >> {log}; exit 0; fi
case "$2" in *"import torch"*) exit {0 if has_torch else 1};; esac
exec {sys.executable} "$@"
""")
    stub.chmod(0o755)
    return stub, log


@pytest.fixture
def index() -> Iterator[str]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def do_GET(self) -> None:  # every path answers 200, like an index page
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/whl/cpu"
    srv.shutdown()
    srv.server_close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _install(stub: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), str(stub)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, **env})


def test_cpu_index_when_it_answers(tmp_path: Path, index: str) -> None:
    stub, log = _stub(tmp_path, has_torch=False)
    out = _install(stub, RULEGAUGE_TORCH_INDEX=index)
    assert out.returncode == 0, out.stderr
    assert log.read_text().split() == ["-m", "pip", "install", "-q", "torch==2.13.0",
                                       "--index-url", index]


def test_default_index_when_the_cpu_index_is_unreachable(tmp_path: Path) -> None:
    stub, log = _stub(tmp_path, has_torch=False)
    out = _install(stub, RULEGAUGE_TORCH_INDEX=f"http://127.0.0.1:{_closed_port()}/whl/cpu")
    assert out.returncode == 0, out.stderr
    assert "not reachable" in out.stderr
    assert log.read_text().split() == ["-m", "pip", "install", "-q", "torch==2.13.0"]


def test_cuda_on_request_and_nothing_when_installed(tmp_path: Path, index: str) -> None:
    stub, log = _stub(tmp_path, has_torch=False)
    assert _install(stub, RULEGAUGE_TORCH="cuda", RULEGAUGE_TORCH_INDEX=index).returncode == 0
    assert "--index-url" not in log.read_text()
    (tmp_path / "installed").mkdir()
    stub2, log2 = _stub(tmp_path / "installed", has_torch=True)
    assert _install(stub2, RULEGAUGE_TORCH_INDEX=index).returncode == 0
    assert not log2.exists()
