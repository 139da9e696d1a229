"""``rulegauge report --serve``: the report on 127.0.0.1, re-rendered when a run lands.

:func:`serve_report` serves one HTML file (``/`` and ``/<its name>``; anything else
is 404) from a :class:`rulegauge.core.localserver.LocalServer` (127.0.0.1 only, the
Host allow-list, socket timeouts), and polls the runs folder: every ``poll_s`` seconds it reads the folder's manifests
(:func:`runs_state`: run name, status, manifest mtime) and, when they changed,
calls ``render()`` again (the caller's closure opens ``latest`` anew, so a run that
completes becomes the report). A render that fails keeps the previous page and
reports the error through ``say``. The loop is bounded: it ends when ``stop`` is set
(the CLI sets it on Ctrl-C and SIGTERM) or after ``max_polls`` polls.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from rulegauge.core.errors import RulegaugeError
from rulegauge.core.localserver import LocalServer, Reply, Request, html_reply, json_reply
from rulegauge.store.manifest import MANIFEST, read_manifest

__all__ = ["make_report_server", "runs_state", "serve_report"]

State = tuple[tuple[str, str, int], ...]


def runs_state(runs_dir: Path) -> State:
    """(name, status, manifest mtime in ns) of every run folder under ``runs_dir``,
    sorted by name; a run whose manifest cannot be read has status ``?``."""
    runs_dir = Path(runs_dir)
    if not runs_dir.is_dir():
        return ()
    out = []
    for p in sorted(runs_dir.iterdir()):
        mp = p / MANIFEST
        if p.is_symlink() or not mp.is_file():
            continue
        try:
            status = str(read_manifest(p).get("status", "?"))
            mtime = mp.stat().st_mtime_ns
        except (RulegaugeError, OSError):
            status, mtime = "?", 0
        out.append((p.name, status, mtime))
    return tuple(out)


def make_report_server(page: Path, port: int = 0) -> LocalServer:
    """A server on 127.0.0.1:``port`` (0: any free port) answering GET ``/`` and
    ``/<page name>`` with ``page``'s current bytes."""
    page = Path(page)

    def app(req: Request) -> Reply | None:
        if req.method != "GET" or req.path not in ("/", f"/{page.name}"):
            return json_reply({"error": "only the report is served here"}, 404)
        try:
            return html_reply(page.read_bytes())
        except OSError:
            return json_reply({"error": "the report is being written"}, 503)

    return LocalServer(app, port)


def serve_report(server: LocalServer, render: Callable[[], object], runs_dir: Path,
                 stop: threading.Event, poll_s: float = 2.0, max_polls: int | None = None,
                 say: Callable[[str], None] = lambda message: None,
                 since: State | None = None) -> int:
    """Serve until ``stop`` is set or ``max_polls`` polls passed, re-rendering when the
    runs folder differs from ``since`` (default: its state now, :func:`runs_state`)
    and after each change; returns the number of re-renders. Closes ``server``."""
    if poll_s <= 0:
        raise RulegaugeError(f"--poll must be above 0 seconds, got {poll_s}")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                              daemon=True)
    thread.start()
    state = runs_state(runs_dir) if since is None else since
    renders, polls = 0, 0
    try:
        while not stop.wait(poll_s):
            polls += 1
            now = runs_state(runs_dir)
            if now != state:
                state = now
                try:
                    render()
                    renders += 1
                    say(f"re-rendered after a change under {runs_dir}")
                except RulegaugeError as exc:
                    say(f"kept the previous report: {exc}")
            if max_polls is not None and polls >= max_polls:
                break
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
    return renders
