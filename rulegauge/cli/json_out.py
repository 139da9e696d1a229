"""``--json`` for commands whose result is a sentence (validate, export, pool, baseline save).

With ``--json`` such a command prints one JSON object on stdout and nothing else there: its result
with ``"ok": true``, or, on bad input, ``{"ok": false, "error": MESSAGE, "problems": [{"where",
"message"}, ...]}`` (every collected problem; none for a single error) while the message still goes
to stderr and the exit code is still 2, so ``rulegauge validate g.yaml --json | jq .problems`` works
in CI. Keys are the command's own; paths are printed as given.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer

from rulegauge.cli.errors import bad_input_exits_2
from rulegauge.core.errors import RulegaugeError, ValidationError
from rulegauge.core.redact import redact_text

JSON_HELP = "Print the result as one JSON object on stdout (with ok, or ok false and the problems)."


def echo_json(result: dict[str, Any]) -> None:
    """``{"ok": true, **result}`` on stdout, indented."""
    typer.echo(json.dumps({"ok": True, **result}, indent=2, ensure_ascii=False, default=str))


@contextmanager
def json_errors(*, enabled: bool) -> Iterator[None]:
    """:func:`~rulegauge.cli.errors.bad_input_exits_2`, and with ``enabled`` the error as JSON on
    stdout first (module docstring)."""
    with bad_input_exits_2():
        try:
            yield
        except RulegaugeError as exc:
            if enabled:
                problems = [{"where": redact_text(p.where), "message": redact_text(p.message)}
                            for p in (exc.problems if isinstance(exc, ValidationError) else ())]
                typer.echo(json.dumps({"ok": False, "error": redact_text(str(exc)), "problems": problems},
                                      indent=2, ensure_ascii=False))
            raise
