"""Every documented ``rulegauge`` line, run or skipped, parses against the real CLI: a command,
flag or choice the docs name that the CLI lacks fails here (so deleting a flag fails the tier)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import typer

from rulegauge.cli import app
from tests.helpers.docs_tier import Command, all_commands, recipe_commands

pytestmark = pytest.mark.docs
COMMANDS = [c for c in all_commands() + recipe_commands() if c.is_rulegauge and not c.synopsis]


def parse_problem(root: Any, argv: list[str]) -> str:
    """Why ``argv`` does not parse against ``root`` (the CLI's top group), or ``""``; nothing
    runs. typer bundles its own click, so its classes are duck-typed here (a group has
    ``commands``), and its exceptions caught by their click names."""
    from typer._click.exceptions import ClickException

    cmd, args, ctx = root, list(argv), None
    try:
        while True:
            ctx = cmd.make_context(cmd.name or "rulegauge", args, parent=ctx)
            if not hasattr(cmd, "commands"):
                return ""
            rest = list(ctx._protected_args) + list(ctx.args)
            if not rest:
                return ""
            sub = cmd.get_command(ctx, rest[0])
            if sub is None:
                return f"no command {rest[0]!r}"
            cmd, args = sub, rest[1:]
    except ClickException as exc:
        return exc.format_message()
    except Exception as exc:
        if type(exc).__name__ == "Exit":  # --help, --version
            return ""
        raise


@pytest.fixture(scope="module")
def root() -> Any:
    return typer.main.get_command(app)


def test_the_docs_hold_commands() -> None:
    assert len(COMMANDS) >= 100


@pytest.mark.parametrize("cmd", COMMANDS, ids=[c.where for c in COMMANDS])
def test_documented_command_parses(cmd: Command, root: Any) -> None:
    for argv in cmd.rulegauge_argvs():
        problem = parse_problem(root, argv)
        assert not problem, f"{cmd.where}: `{cmd.text}`: {problem}"


def _without_option(root: Any, path: list[str], flag: str) -> Any:
    """A copy of the CLI whose command ``path`` lacks the option ``flag``."""
    new = copy.deepcopy(root)
    cmd: Any = new
    for name in path:
        cmd = cmd.commands[name]
    cmd.params = [p for p in cmd.params if flag not in getattr(p, "opts", ())]
    return new


def test_deleting_a_flag_fails_the_parse_check(root: Any) -> None:
    doc = next(c for c in COMMANDS if c.text.startswith("rulegauge pool latest --depth 5"))
    assert parse_problem(root, doc.rulegauge_argvs()[0]) == ""
    broken = _without_option(root, ["pool"], "--depth")
    assert "No such option: --depth" in parse_problem(broken, doc.rulegauge_argvs()[0])
    assert "no command 'nope'" in parse_problem(root, ["nope"])
    assert "No such option: --nope" in parse_problem(root, ["pool", "latest", "--nope"])
