"""Command groups from entry points: each registers into a scratch app first, and is copied
into rulegauge's own only when it registered without raising and takes no name already taken.

Definition: the group ``rulegauge.commands`` holds ``register(app)`` functions, rulegauge's own
(``core`` first: run, list, validate head ``--help``; the others in name order) and a team's
package's, in the load order of :mod:`rulegauge.core.entry_points`. A command's name is what
typer dispatches on: a command's own name (or its function's, ``_`` as ``-``), a group's name,
and the commands of a group added without a name (typer merges them into the parent).

Edge cases: a plug-in whose ``register`` raises (``SystemExit`` too, not ``KeyboardInterrupt``)
leaves nothing registered; one whose commands or groups take a name rulegauge or an earlier
package has (``run``, ``goldset``), sets the top-level callback, or adds to rulegauge's own app
instead of the one it is given is refused whole. Each is recorded broken
(:func:`rulegauge.core.plugins.broken`, ``rulegauge list``), so ``rulegauge run`` is always the
built-in. A built-in doing any of these raises, a bug of rulegauge's own.

Reference: typer's ``Typer.add_typer`` and click's command dispatch (a later command of the
same name replaces the earlier one: the reason for the scratch app).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer
from typer.main import get_command_name, solve_typer_info_defaults

from rulegauge.core.entry_points import BUILTIN, Entry, entries
from rulegauge.core.errors import RegistryError
from rulegauge.core.plugins import import_entry, last_line, record_broken
from rulegauge.core.registry import shown

GROUP = "rulegauge.commands"


def command_names(app: typer.Typer) -> list[str]:
    """The names ``app`` dispatches on (module docstring), in registration order."""
    out = [info.name or get_command_name(info.callback.__name__) for info in app.registered_commands
           if info.callback is not None]
    for info in app.registered_groups:
        name = solve_typer_info_defaults(info).name
        if name:
            out.append(name)
        elif info.typer_instance is not None:  # added without a name: its commands join the parent
            out += command_names(info.typer_instance)
    return out


def _registers(entry: Entry) -> Callable[[typer.Typer], Any] | None:
    """The entry point's ``register(app)``, or None with it recorded broken (a built-in raises)."""
    ok, obj = import_entry(entry)
    if ok and not callable(obj):
        if entry.package == BUILTIN:
            raise RegistryError(f"{GROUP} entry point {entry.name!r}: {shown(obj)} is not callable")
        record_broken(entry, f"refused: {shown(obj)} is not a register(app) function")
        return None
    return obj if ok else None


def _refusal(entry: Entry, scratch: typer.Typer, taken: dict[str, str]) -> str | None:
    """Why what ``entry`` registered into ``scratch`` may not join ``app`` (module docstring)."""
    if scratch.registered_callback is not None:
        return "refused: it sets the rulegauge callback (a plug-in adds commands only)"
    names = command_names(scratch)
    clash = [n for n in dict.fromkeys(names) if n in taken or names.count(n) > 1]
    if clash:
        return "refused: " + "; ".join(f"the command {n!r} is taken (by {taken.get(n, entry.package)})"
                                       for n in clash)
    return None


def register_commands(app: typer.Typer) -> None:
    """Add every command group of :data:`GROUP` to ``app`` (module docstring)."""
    taken = dict.fromkeys(command_names(app), "rulegauge")
    # rulegauge's own first (core heading --help), so a package's group can never go before them
    for entry in sorted(entries(GROUP), key=lambda e: (e.package != BUILTIN, e.name != "core")):
        register = _registers(entry)
        if register is None:
            continue
        scratch = typer.Typer()
        before = (len(app.registered_commands), len(app.registered_groups), app.registered_callback)
        try:
            register(scratch)
            error = None
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # nothing a plug-in's register raises ends the program
            if entry.package == BUILTIN:
                raise
            error = f"{last_line(exc)} (raised by register)"
        if before != (len(app.registered_commands), len(app.registered_groups), app.registered_callback):
            del app.registered_commands[before[0]:], app.registered_groups[before[1]:]
            app.registered_callback = before[2]
            error = error or "refused: it registered into rulegauge's own app, not the one it was given"
        error = error or _refusal(entry, scratch, taken)
        if error is not None:
            if entry.package == BUILTIN:
                raise RegistryError(f"{GROUP} entry point {entry.name!r}: {error}")
            record_broken(entry, error)
            continue
        app.registered_commands += scratch.registered_commands
        app.registered_groups += scratch.registered_groups
        taken.update(dict.fromkeys(command_names(scratch), "rulegauge" if entry.package == BUILTIN else entry.package))
