"""``rulegauge report --serve``: 127.0.0.1 only, one page, re-rendered when a run lands
(a bounded loop: ``max_polls`` / the stop event)."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from rulegauge.analysis.report import write_report
from rulegauge.analysis.serve_report import make_report_server, runs_state, serve_report
from rulegauge.core.errors import RulegaugeError
from rulegauge.store.rundir import open_run
from tests.helpers.analysis import write_synthetic_run


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def test_serves_the_report_and_rerenders_when_a_run_lands(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write_synthetic_run(runs / "run-a", created="2025-01-01T00:00:00+00:00")
    page = tmp_path / "out" / "report.html"
    rendered: list[str] = []

    def render() -> None:
        run = open_run("latest", runs)
        write_report(run, page, n_resamples=50, top=2)
        rendered.append(run.run_id)

    render()
    server = make_report_server(page, 0)
    host, port = server.server_address[:2]
    assert host == "127.0.0.1"
    stop, heard = threading.Event(), []
    result: list[int] = []
    loop = threading.Thread(target=lambda: result.append(serve_report(
        server, render, runs, stop, poll_s=0.2, max_polls=400, say=heard.append)))
    loop.start()
    try:
        status, body = _get(f"http://127.0.0.1:{port}/")
        assert status == 200 and "Run run-a" in body
        assert _get(f"http://127.0.0.1:{port}/report.html")[0] == 200
        assert _get(f"http://127.0.0.1:{port}/../secret")[0] == 404
        write_synthetic_run(runs / "run-b", created="2025-02-01T00:00:00+00:00")
        for _ in range(300):  # bounded wait for the re-render (poll 0.2 s)
            if rendered[-1] == "run-b":
                break
            stop.wait(0.2)
        assert rendered[-1] == "run-b"
        status, body = _get(f"http://127.0.0.1:{port}/")
        assert status == 200 and "Run run-b" in body
    finally:
        stop.set()
        loop.join(timeout=30)
    assert not loop.is_alive() and result and result[0] >= 1
    assert any("re-rendered" in m for m in heard)


def test_stops_after_max_polls_and_keeps_the_page_when_a_render_fails(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    page = tmp_path / "report.html"
    page.write_text("<html>old</html>", encoding="utf-8")

    def render() -> None:
        raise RulegaugeError("broken run")

    server = make_report_server(page, 0)
    (runs / "run-x").mkdir()
    before = runs_state(runs)
    heard: list[str] = []
    stop = threading.Event()
    thread = threading.Thread(target=lambda: serve_report(
        server, render, runs, stop, poll_s=0.1, max_polls=3, say=heard.append, since=before))
    thread.start()
    (runs / "run-x" / "manifest.json").write_text('{"status": "running"}', encoding="utf-8")
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert runs_state(runs) != before
    assert heard == ["kept the previous report: broken run"]
    assert page.read_text(encoding="utf-8") == "<html>old</html>"


def test_bad_port_and_poll_are_errors(tmp_path: Path) -> None:
    with pytest.raises(RulegaugeError, match="--port"):
        make_report_server(tmp_path / "r.html", 70000)
    server = make_report_server(tmp_path / "r.html", 0)
    with pytest.raises(RulegaugeError, match="--poll"):
        serve_report(server, lambda: None, tmp_path, threading.Event(), poll_s=0)
    server.server_close()


def test_cli_serve_answers_on_localhost_and_stops_on_sigterm(tmp_path: Path) -> None:
    import os
    import re
    import signal
    import subprocess
    import sys

    runs = tmp_path / "runs"
    write_synthetic_run(runs / "run-a")
    script = Path(sys.executable).with_name("rulegauge")
    cmd = [str(script)] if script.exists() else [sys.executable, "-c",
                                                 "from rulegauge.cli import main; main()"]
    args = ["report", "latest", "--runs-dir", str(runs), "-o", str(tmp_path / "r.html"),
            "--serve", "--port", "0", "--poll", "0.2"]
    env = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1", "MPLBACKEND": "Agg"}
    with subprocess.Popen([*cmd, *args], stderr=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True, env=env) as proc:
        try:
            assert proc.stderr is not None
            lines = []
            for _ in range(50):  # bounded: progress lines, then the serving line
                lines.append(proc.stderr.readline())
                found = re.search(r"serving http://127\.0\.0\.1:(\d+)/", lines[-1])
                if found or not lines[-1]:
                    break
            assert found, "".join(lines)
            status, body = _get(f"http://127.0.0.1:{found.group(1)}/")
            assert status == 200 and "Run run-a" in body
        finally:
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "stopped" in err and "Traceback" not in err and "wrote" in out
