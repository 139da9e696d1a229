"""One flag vocabulary (docs/cli.md): ``--json`` prints JSON on stdout, ``--json-file``
writes it, ``-p`` is ``--param``; the old spellings of ``gate``/``compare`` still work
for one release, each with a warning on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from rulegauge.cli.compare import register
from tests.helpers.common import FIXTURES
from tests.helpers.comparison import base_lists, write_run

POLICY = FIXTURES / "policies" / "strict.toml"
DEPRECATED = "is deprecated and will be removed in the next release"


def _cli() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    return write_run(tmp_path / "base", base_lists()), write_run(tmp_path / "same", base_lists())


def _gate(runs: tuple[Path, Path], *extra: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(_cli(), ["gate", "--baseline", str(runs[0]), "--run", str(runs[1]), *extra])
    return r.exit_code, r.stdout, r.stderr


def test_gate_json_prints_json_on_stdout_and_json_file_writes_it(runs, tmp_path) -> None:
    code, out, err = _gate(runs, "--policy", str(POLICY), "--json", "--json-file", str(tmp_path / "g.json"))
    assert code == 0 and DEPRECATED not in err
    assert json.loads(out)["passed"] is True  # stdout is one JSON document, no table
    assert json.loads((tmp_path / "g.json").read_text(encoding="utf-8")) == json.loads(out)


def test_gate_old_json_file_form_still_writes_the_file_and_warns(runs, tmp_path) -> None:
    code, out, err = _gate(runs, "--policy", str(POLICY), "--json", str(tmp_path / "old.json"))
    assert code == 0
    assert json.loads((tmp_path / "old.json").read_text(encoding="utf-8"))["passed"] is True
    assert "--json FILE " + DEPRECATED in err and "--json-file FILE" in err
    assert "PASS" in out  # the old meaning: tables on stdout, JSON in the file


def test_gate_stray_argument_without_json_is_bad_input(runs, tmp_path) -> None:
    code, _, err = _gate(runs, "--policy", str(POLICY), str(tmp_path / "x.json"))
    assert code == 2 and "--json-file FILE" in err and not (tmp_path / "x.json").exists()


def test_gate_and_compare_keep_p_for_policy_with_a_warning(runs) -> None:
    code, out, err = _gate(runs, "-p", str(POLICY))
    assert code == 0 and "PASS" in out and "-p for --policy " + DEPRECATED in err
    code, _, err = _gate(runs)
    assert code == 2 and "missing option --policy" in err
    r = CliRunner().invoke(_cli(), ["compare", str(runs[0]), str(runs[1]), "-p", str(POLICY), "--json"])
    assert r.exit_code == 0, r.output
    assert "-p for --policy " + DEPRECATED in r.stderr
    assert len(json.loads(r.stdout)["family"]["members"]) == 3  # the policy's three metrics


def test_compare_json_is_format_json(runs) -> None:
    base = ["compare", str(runs[0]), str(runs[1]), "--n-resamples", "200", "--metric", "hit@5"]
    a = CliRunner().invoke(_cli(), [*base, "--json"])
    b = CliRunner().invoke(_cli(), [*base, "--format", "json"])
    assert a.exit_code == b.exit_code == 0 and json.loads(a.stdout) == json.loads(b.stdout)


def _commands() -> list[tuple[tuple[str, ...], object]]:
    import typer.main

    from rulegauge.cli import app

    def walk(cmd: object, path: tuple[str, ...]) -> list[tuple[tuple[str, ...], object]]:
        subs = getattr(cmd, "commands", None)
        if subs:
            return [x for name, sub in sorted(subs.items()) for x in walk(sub, (*path, name))]
        return [(path, cmd)]

    return walk(typer.main.get_command(app), ())


# the canonical meaning of each short flag and of --json, in every command
SHORT = {"-p": "--param", "-c": "--config", "-o": "--out", "-m": "--metric"}


@pytest.mark.parametrize(("path", "cmd"), _commands(), ids=lambda x: " ".join(x) if isinstance(x, tuple) else "")
def test_one_flag_vocabulary(path: tuple[str, ...], cmd: object) -> None:
    shown = [p for p in cmd.params if not getattr(p, "hidden", False)]  # type: ignore[attr-defined]
    for p in shown:
        for short, long in SHORT.items():
            if short in p.opts:
                assert long in p.opts, f"rulegauge {' '.join(path)}: {short} is {p.opts}, not {long}"
        if "--json" in p.opts:
            assert p.is_flag, f"rulegauge {' '.join(path)}: --json takes no value (files: --json-file)"
    fmt = next((p for p in shown if "--format" in p.opts), None)
    if fmt is not None and "json" in (fmt.help or ""):
        assert any("--json" in p.opts for p in shown), f"rulegauge {' '.join(path)}: --format json without --json"
