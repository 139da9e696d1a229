"""``rulegauge serve-search``: the reference search service on 127.0.0.1 (for the ``http`` arm)."""

from __future__ import annotations

from pathlib import Path

import typer

from rulegauge.cli.errors import bad_input_exits_2, err_console


def register(app: typer.Typer) -> None:
    app.command("serve-search")(serve_search_cmd)


def serve_search_cmd(
    goldset: Path = typer.Option(None, "--goldset", "-g", help="Gold set whose corpus is served (default: the embedded sample)."),
    port: int = typer.Option(8700, "--port", help="Port on 127.0.0.1 (0: any free port)."),
    arms: str = typer.Option("bm25,dense,boost", "--arms", help="Arms the service fuses (comma-separated)."),
) -> None:
    """Serve a gold set's corpus with the service's fused search (RRF k=60 over the arms)
    on 127.0.0.1: POST /search {"q": ..., "lang": ..., "game": ..., "k": 10, "debug": true}.

    Example: rulegauge serve-search --port 8700 --arms bm25,dense,boost
    """
    # deferred: arms, models and pandas load on use; `rulegauge --help` stays fast
    from rulegauge.arms import ARMS, load_builtin_arms
    from rulegauge.core.errors import ConfigError
    from rulegauge.pipeline.retrieval import SAMPLE_GOLDSET
    from rulegauge.pipeline.search_service import build_service, make_server

    with bad_input_exits_2():
        load_builtin_arms()
        names = [a.strip() for a in arms.split(",") if a.strip()]
        unknown = [a for a in names if a not in ARMS]
        if unknown or not names:
            raise ConfigError(f"--arms: unknown arm(s) {unknown}; choose from: {', '.join(ARMS.names())}")
        if not 0 <= port <= 65535:
            raise ConfigError(f"--port must be within 0..65535, got {port}")
        service = build_service(goldset or SAMPLE_GOLDSET, names)
        server = make_server(service, port)
    err_console.print(f"serving {len(service.corpus.chunks)} chunks of {goldset or SAMPLE_GOLDSET} "
                      f"(RRF k=60 over {'+'.join(names)}) on "
                      f"http://127.0.0.1:{server.server_address[1]}/search; Ctrl-C stops")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        err_console.print("stopped")
    finally:
        server.server_close()
