"""``rulegauge report --serve``: 127.0.0.1 only, one page, re-rendered when a run completes
(and reloaded in the browser; chart text readable at 390 px)
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


def _assert_readable_at_390px(html: str) -> None:
    """Every chart's smallest label is at least READABLE_PX at a 390 px viewport (computed
    from the CSS: max-width 100%, the figure's min-width wins)."""
    import re

    from rulegauge.analysis.report_html import READABLE_PX, shown_label_px

    found = re.findall(r'<img [^>]*width="(\d+)" height="\d+" style="min-width:(\d+)px" '
                       r'data-label-px="([\d.]+)"', html)
    assert len(found) == html.count("<img ") and len(found) >= 3
    room = 390 - 2 * 8  # the viewport less the body's padding at <= 600 px (report CSS)
    for w, min_w, px in found:
        assert float(px) > 0
        assert shown_label_px(float(px), int(w), int(min_w), room) >= READABLE_PX - 1e-9
        # at 1400 px every figure is at its natural size: labels as drawn
        assert shown_label_px(float(px), int(w), int(min_w), 1328) == float(px)
    small = min(float(px) * min(room, int(w)) / int(w) for w, _, px in found)
    assert small < READABLE_PX  # without the min-width, some label would be smaller


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
    _assert_readable_at_390px(page.read_text(encoding="utf-8"))  # chart text on a phone
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
    (runs / "run-x" / "manifest.json").write_text('{"status": "complete"}', encoding="utf-8")
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert runs_state(runs) != before
    assert heard == ["kept the previous report: broken run"]
    assert page.read_text(encoding="utf-8") == "<html>old</html>"


def test_a_run_that_starts_renders_nothing_one_that_completes_reloads_the_page(tmp_path: Path) -> None:
    from rulegauge.analysis.serve_report import PageVersion

    runs = tmp_path / "runs"
    (runs / "run-b").mkdir(parents=True)
    page = tmp_path / "report.html"
    page.write_text("<html><body>Run a</body></html>", encoding="utf-8")
    rendered: list[str] = []

    def render() -> None:
        rendered.append("b")
        page.write_text("<html><body>Run b</body></html>", encoding="utf-8")

    version = PageVersion()
    server = make_report_server(page, 0, version)
    port = server.server_address[1]
    before = runs_state(runs)
    stop = threading.Event()
    loop = threading.Thread(target=lambda: serve_report(server, render, runs, stop, poll_s=0.05,
                                                        max_polls=2000, since=before, version=version))
    loop.start()
    try:
        manifest = runs / "run-b" / "manifest.json"
        manifest.write_text('{"status": "running"}', encoding="utf-8")  # a run that starts
        assert runs_state(runs) == before == ()  # not complete: not in the state, no render
        status, body = _get(f"http://127.0.0.1:{port}/")
        assert status == 200 and "Run a" in body and "const v=0;" in body and "/version" in body
        assert _get(f"http://127.0.0.1:{port}/version") == (200, '{"version": 0, "run": ""}')
        manifest.write_text('{"status": "complete"}', encoding="utf-8")
        for _ in range(400):  # bounded wait for the render (poll 0.05 s)
            if version.version:
                break
            stop.wait(0.05)
        assert rendered == ["b"]
        assert _get(f"http://127.0.0.1:{port}/version") == (200, '{"version": 1, "run": "run-b"}')
        status, body = _get(f"http://127.0.0.1:{port}/")
        assert "Run b" in body and "const v=1;" in body  # an open page at v=0 now reloads
    finally:
        stop.set()
        loop.join(timeout=30)
    assert page.read_text(encoding="utf-8") == "<html><body>Run b</body></html>"  # the file: no script


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
