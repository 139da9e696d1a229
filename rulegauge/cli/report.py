"""``rulegauge report``: write the HTML report of a run, or serve it and follow new runs."""

from __future__ import annotations

import logging
import signal
import threading
import time
import warnings
from pathlib import Path
from typing import Annotated

import typer

from rulegauge.cli.errors import bad_input_exits_2, err_console
from rulegauge.cli.outputs import check_output

log = logging.getLogger(__name__)
RunRef = Annotated[str, typer.Argument(help="Run directory, run id under --runs-dir, or 'latest'.")]


def _say(message: str) -> None:
    """A plain timestamped progress line on stderr (readable in CI logs and files)."""
    err_console.print(f"{time.strftime('%H:%M:%S')} report: {message}")


def report_cmd(
    run: RunRef = "latest",
    out: Annotated[Path, typer.Option("--out", "-o", help="HTML file to write.")] = Path(
        "report.html"),
    top_k: Annotated[int, typer.Option("--top-k", "-k", min=1,
                                       help="Fused ranks that count as 'top'.")] = 5,
    metric: Annotated[str | None, typer.Option(
        "--metric", "-m", help="Metric to compare configs on (default recall@5).")] = None,
    top: Annotated[int, typer.Option("--top", min=1, help="Configs in the charts: the N best "
                                     "on the metric, plus the service config and each arm "
                                     "alone (every config stays in the tables).")] = 20,
    config: Annotated[list[str] | None, typer.Option(
        "--config", "-c", help="Config id to chart (repeatable; replaces --top).")] = None,
    serve: Annotated[bool, typer.Option("--serve", help="Serve the report on 127.0.0.1 and "
                                        "re-render it when a run completes in --runs-dir (the page reloads itself).")] = False,
    port: Annotated[int, typer.Option("--port", help="Port for --serve (0: any free port).")] = 8765,
    poll: Annotated[float, typer.Option("--poll", min=0.1, help="Seconds between checks of --runs-dir "
                                        "for --serve.")] = 2.0,
    runs_dir: Annotated[Path, typer.Option("--runs-dir", help="Folder that holds run "
                                           "directories.")] = Path("runs"),
    human: Annotated[list[Path] | None, typer.Option(
        "--human", help="People's judgments of a sample of questions: with --auto, a section "
                        "of each config's metric under human-only and filled judgments "
                        "(Kendall's tau, PPI intervals; rulegauge judges ppi).")] = None,
    auto: Annotated[list[Path] | None, typer.Option(
        "--auto", help="Automatic judgments of the pool (with --human).")] = None,
) -> None:
    """Write one self-contained HTML report (headline, configs, sweeps, bands, tables).

    Progress goes to stderr as timestamped lines; the file is written atomically.

    Example: rulegauge report latest -o report.html --top 20 -c rrf_k60_bm25+dense

    Example: rulegauge report latest -o report.html --serve --port 8765
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.analysis.report import write_report
    from rulegauge.metrics.info import metric_info
    from rulegauge.store.fits import Wants
    from rulegauge.store.rundir import open_run

    def render() -> Path:
        # `latest` with --metric / -c: the newest run that scored them (rulegauge.store.rundir.open_run)
        info = metric_info(metric) if metric else None
        opened = open_run(run, runs_dir, metrics=(info.name,) if info else (), wants=Wants.of(configs=config))
        check_output(out, (*(human or ()), *(auto or ())), runs=(opened,))
        if bool(human) != bool(auto):
            raise typer.BadParameter("--human and --auto go together")
        from rulegauge.judging.ppi_section import filled_sections  # deferred: judging's product

        sections = filled_sections(opened, tuple(human or ()), tuple(auto or ()), _say)
        _say(f"rendering {opened.run_id}")
        # matplotlib's layout notes are about our figures, not the user's input: logged
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            path = write_report(opened, out, top_k=top_k, metric=metric, top=top,
                                config_ids=tuple(config or ()), progress=_say,
                                sections=sections)
        for w in caught:
            log.info("figure warning: %s", w.message)
        return path

    from rulegauge.analysis.serve_report import runs_state

    with bad_input_exits_2():
        since = runs_state(runs_dir)  # a run landing while this render runs is noticed
        path = render()
    typer.echo(f"wrote {path}")
    if not serve:
        return
    from rulegauge.analysis.serve_report import PageVersion, make_report_server, serve_report

    with bad_input_exits_2():
        version = PageVersion()
        server = make_report_server(path, port, version)
        stop = threading.Event()
        previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
        host, bound = str(server.server_address[0]), int(server.server_address[1])
        _say(f"serving http://{host}:{bound}/ ; re-rendering when a run completes in {runs_dir} "
             f"(checked every {poll:g} s; the page reloads itself); Ctrl-C stops")
        try:
            serve_report(server, render, runs_dir, stop, poll_s=poll, say=_say, since=since,
                         version=version)
        except KeyboardInterrupt:
            stop.set()
        finally:
            signal.signal(signal.SIGTERM, previous)
    _say("stopped")
