"""No output over an input (rulegauge.cli.outputs): the check itself, and that every
command with ``-o`` has fault-tier rows giving it one of its inputs as output
(:mod:`tests.helpers.fault_cases_outputs`, replayed by ``pytest -m faults``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import typer

from rulegauge.cli import app
from rulegauge.cli.outputs import check_output, same_file
from rulegauge.core.errors import ConfigError
from tests.helpers.fault_cases_outputs import OUTPUT_ROWS

# -o of these names the folder of run directories: runs are written under it, never over a file
RUNS_FOLDER = "Folder that holds run directories."


def _commands(group: Any, prefix: str = "") -> dict[str, Any]:
    # typer bundles its own click: its classes are not click's, so duck-typed here
    out: dict[str, Any] = {}
    for name, cmd in group.commands.items():
        path = f"{prefix}{name}"
        if hasattr(cmd, "commands"):
            out.update(_commands(cmd, path + " "))
        else:
            out[path] = cmd
    return out


def _with_o() -> dict[str, str]:
    found = {}
    for path, cmd in _commands(typer.main.get_group(app)).items():
        for p in cmd.params:
            if "-o" in getattr(p, "opts", ()) and not getattr(p, "is_argument", False):
                found[path] = p.help or ""
    return found


def test_every_command_with_o_has_a_fault_row() -> None:
    outputs = {path for path, help_ in _with_o().items() if help_ != RUNS_FOLDER}
    assert len(outputs) >= 12
    assert outputs == set(OUTPUT_ROWS), (outputs ^ set(OUTPUT_ROWS))


@pytest.mark.parametrize("command", sorted(OUTPUT_ROWS))
def test_each_command_is_walked_by_a_row(command: str) -> None:
    assert OUTPUT_ROWS[command], command


def test_same_path_link_and_hard_link_are_the_input(tmp_path: Path) -> None:
    src = tmp_path / "j.jsonl"
    src.write_text("x\n")
    (tmp_path / "sym").symlink_to(src)
    os.link(src, tmp_path / "hard")
    (tmp_path / "d").mkdir()
    for alias in (src, tmp_path / "d" / ".." / "j.jsonl", tmp_path / "sym", tmp_path / "hard"):
        assert same_file(alias, src)
        with pytest.raises(ConfigError, match="is the input") as err:
            check_output(alias, (tmp_path / "other", src))
        assert str(alias) in str(err.value) and str(src) in str(err.value)
    with pytest.raises(ConfigError, match="through a link"):
        check_output(tmp_path / "hard", (src,), flag="--out")


def test_a_new_or_different_file_passes(tmp_path: Path) -> None:
    src = tmp_path / "j.jsonl"
    src.write_text("x\n")
    (tmp_path / "copy").write_text("x\n")  # same bytes, another file
    assert check_output(tmp_path / "new.yaml", (src, None, "")) == tmp_path / "new.yaml"
    assert check_output(tmp_path / "copy", (src,)) == tmp_path / "copy"
    assert not same_file(tmp_path / "copy", src)


def test_every_document_a_gold_set_names_is_an_input(tmp_path: Path) -> None:
    """Issue 43 item 1: the check gets the gold set's documents too, resolved from its folder."""
    from tests.helpers import fault_inputs as fi

    fi.tiny(tmp_path)
    rules = tmp_path / "docs" / "rules.txt"
    with pytest.raises(ConfigError, match=r"is the input .*rules\.txt \(document rb of the gold set "):
        check_output(rules, (tmp_path / "g.yaml",))
    (tmp_path / "alias.txt").symlink_to(rules)
    with pytest.raises(ConfigError, match="through a link"):
        check_output(tmp_path / "alias.txt", (tmp_path / "g.yaml",))
    assert check_output(tmp_path / "new.yaml", (tmp_path / "g.yaml",)) == tmp_path / "new.yaml"
    # a gold set that cannot be read names nothing: reading it for real says why
    (tmp_path / "bad.yaml").write_text("documents: [\n")
    assert check_output(rules, (tmp_path / "bad.yaml",)) == rules


def test_an_output_inside_an_input_folder_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "beir"
    src.mkdir()
    with pytest.raises(ConfigError, match=r"lies inside the input .*beir"):
        check_output(src / "out", (src,))
    with pytest.raises(ConfigError, match="lies inside the input"):
        check_output(src / "a" / ".." / "b" / "c", (src,))
    assert check_output(tmp_path / "beir-out", (src,)) == tmp_path / "beir-out"  # a sibling, not inside
