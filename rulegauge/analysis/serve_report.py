"""``rulegauge report --serve``: the report on 127.0.0.1, re-rendered when a run completes.

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
from dataclasses import dataclass
from pathlib import Path

from rulegauge.core.errors import RulegaugeError
from rulegauge.core.localserver import LocalServer, Reply, Request, html_reply, json_reply
from rulegauge.store.manifest import MANIFEST, read_manifest

__all__ = ["RELOAD_POLL_MS", "PageVersion", "make_report_server", "runs_state", "serve_report"]

State = tuple[tuple[str, str, int], ...]
RELOAD_POLL_MS = 2000
"""How often the served page asks ``/version`` (ms)."""


@dataclass
class PageVersion:
    """The served page's version (renders so far) and the newest complete run then."""

    version: int = 0
    run: str = ""


_RELOAD = ("<script>(()=>{{const v={version};setInterval(()=>fetch('/version',{{cache:'no-store'}})"
           ".then(r=>r.json()).then(j=>{{if(j.version!==v)location.reload()}}).catch(()=>{{}}),"
           "{ms})}})()</script>")


def with_reload(page: bytes, version: int, ms: int = RELOAD_POLL_MS) -> bytes:
    """``page`` with the reload script of ``version`` before ``</body>`` (or at the end)."""
    script = _RELOAD.format(version=int(version), ms=int(ms)).encode("ascii")
    at = page.rfind(b"</body>")
    return page + script if at < 0 else page[:at] + script + page[at:]


def runs_state(runs_dir: Path) -> State:
    """(name, status, manifest mtime in ns) of every *complete* run folder under
    ``runs_dir``, sorted by name: a run that starts, runs, fails or cannot be read is not
    in it (it renders nothing)."""
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
        if status == "complete":
            out.append((p.name, status, mtime))
    return tuple(out)


def make_report_server(page: Path, port: int = 0, version: PageVersion | None = None) -> LocalServer:
    """A server on 127.0.0.1:``port`` (0: any free port) answering GET ``/`` and
    ``/<page name>`` with ``page``'s current bytes and, given ``version``, GET ``/version``
    with it, the page carrying the reload script (module docstring)."""
    page = Path(page)

    def app(req: Request) -> Reply | None:
        if req.method == "GET" and req.path == "/version" and version is not None:
            return json_reply({"version": version.version, "run": version.run})
        if req.method != "GET" or req.path not in ("/", f"/{page.name}"):
            return json_reply({"error": "only the report is served here"}, 404)
        try:
            body = page.read_bytes()
            return html_reply(body if version is None else with_reload(body, version.version))
        except OSError:
            return json_reply({"error": "the report is being written"}, 503)

    return LocalServer(app, port)


def serve_report(server: LocalServer, render: Callable[[], object], runs_dir: Path,
                 stop: threading.Event, poll_s: float = 2.0, max_polls: int | None = None,
                 say: Callable[[str], None] = lambda message: None,
                 since: State | None = None, version: PageVersion | None = None) -> int:
    """Serve until ``stop`` is set or ``max_polls`` polls passed, re-rendering when the
    complete runs differ from ``since`` (default: their state now, :func:`runs_state`)
    and after each change, each render counted in ``version`` (the served page reloads);
    returns the number of re-renders. Closes ``server``."""
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
                    if version is not None:
                        version.run = max((name for name, _, _ in now), default="")
                        version.version += 1
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
