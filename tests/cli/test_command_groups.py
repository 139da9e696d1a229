"""Command groups from entry points (rulegauge.cli.command_groups): a group registers into a
scratch app and joins rulegauge's only when it raised nothing and takes no name already taken."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from rulegauge.cli import command_groups
from rulegauge.cli.command_groups import command_names, register_commands
from rulegauge.core import plugins
from rulegauge.core.entry_points import Entry
from rulegauge.core.errors import RegistryError


def _cmd(app: typer.Typer, name: str) -> None:
    app.command(name)(lambda: typer.echo(name))


def builtin(app: typer.Typer) -> None:
    _cmd(app, "run")
    sub = typer.Typer()
    _cmd(sub, "lint")
    app.add_typer(sub, name="goldset")


def steals_run(app: typer.Typer) -> None:
    _cmd(app, "fine")  # a free name beside the taken one: the group is refused whole
    _cmd(app, "run")


def nameless(app: typer.Typer) -> None:
    sub = typer.Typer()
    _cmd(sub, "goldset")
    app.add_typer(sub)  # no name: typer merges its commands into the parent


def half(app: typer.Typer) -> None:
    _cmd(app, "half")
    raise SystemExit(3)


def good(app: typer.Typer) -> None:
    def hello_world() -> None:
        typer.echo("hi")

    app.command()(hello_world)  # named after its function: hello-world


@pytest.fixture
def groups(monkeypatch: pytest.MonkeyPatch):
    """``register_commands`` over the entry points a test gives: ``(name, function, package)``."""
    for state in ("_broken", "_failed"):
        monkeypatch.setattr(plugins, state, type(getattr(plugins, state))())

    def declare(*declared: tuple[str, object, str]) -> typer.Typer:
        funcs = {(name, pkg): func for name, func, pkg in declared}
        monkeypatch.setattr(command_groups, "entries", lambda group: tuple(
            Entry(group, name, f"m:{name}", pkg, i) for i, (name, _, pkg) in enumerate(declared)))
        monkeypatch.setattr(command_groups, "import_entry", lambda e: (True, funcs[(e.name, e.package)]))
        app = typer.Typer()
        register_commands(app)
        return app

    return declare


def test_command_names_are_what_typer_dispatches_on() -> None:
    app = typer.Typer()
    builtin(app)
    nameless(app)
    good(app)
    assert command_names(app) == ["run", "hello-world", "goldset", "goldset"]


def test_a_group_taking_a_name_or_failing_is_refused_whole(groups) -> None:
    app = groups(("core", builtin, "builtin"), ("a-steal", steals_run, "acme==1"), ("b-nameless", nameless, "acme==1"),
                 ("c-half", half, "acme==1"), ("d-good", good, "acme==1"))
    assert command_names(app) == ["run", "hello-world", "goldset"]  # the built-ins and the good group only
    why = {b.name: b.error for b in plugins.broken()}
    assert why == {"a-steal": "refused: the command 'run' is taken (by rulegauge)",
                   "b-nameless": "refused: the command 'goldset' is taken (by rulegauge)",
                   "c-half": "SystemExit: 3 (raised by register)"}
    result = CliRunner().invoke(app, ["run"])
    assert result.exit_code == 0 and result.output == "run\n"
    assert CliRunner().invoke(app, ["fine"]).exit_code == 2  # nothing of a refused group stays


def test_a_later_package_cannot_take_an_earlier_packages_name(groups) -> None:
    # a package's group named "core" still comes after rulegauge's own
    groups(("a", good, "acme==1"), ("core", steals_run, "acme==1"), ("b", good, "beta==2"),
           ("core", builtin, "builtin"))
    assert {b.name: (b.package, b.error) for b in plugins.broken()} == {
        "core": ("acme==1", "refused: the command 'run' is taken (by rulegauge)"),
        "b": ("beta==2", "refused: the command 'hello-world' is taken (by acme==1)")}


def test_a_builtin_group_that_clashes_is_a_bug(groups) -> None:
    with pytest.raises(RegistryError, match=r"rulegauge\.commands entry point 'two': refused: the command 'run'"):
        groups(("core", builtin, "builtin"), ("two", steals_run, "builtin"))
