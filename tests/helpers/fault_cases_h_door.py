"""Fault-tier rows of the plug-in door: issue 42 item 3 and issue 43 items 2, 11 and 19.

Each row installs, under ``{root}/site``, the fixture package ``tests/fixtures/plugins`` as the
distributions of :mod:`tests.helpers.fault_cases_plugins` (``acme-rulegauge``, ``acme-hostile``)
plus ``acme-door`` (``door_entry_points.txt``, ``acme_rulegauge/door.py``): command groups that
register ``run``, a group ``goldset``, a nameless group holding ``validate``, one whose
``register`` raises after adding ``acme-half``, one setting the top-level callback and one adding
to rulegauge's own app; engines whose start or stop raises and an entry point that is no engine.

What must hold: ``rulegauge run`` and ``validate`` are the built-ins (a CI gate is never passed by
a plug-in that evaluates nothing), every ``goldset`` subcommand is there, a refused group leaves
nothing registered (``acme-half``: no such command), ``rulegauge list`` names each refused group
with its package and cause, and a run on an engine whose start raises exits 2 naming the engine
and its package before any run folder, one whose stop raises exits 2 and ends ``failed``.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from tests.helpers import fault_inputs as fi
from tests.helpers.fault_case import Case
from tests.helpers.fault_cases_plugins import PLUGINS, site

DOOR = "acme-door==0.1.0"
PLUGGED = ("python", "-c", "import sys; sys.path.insert(0, '{root}/site'); from rulegauge.cli import main; main()")
LIST = (*PLUGGED, "list")
RUN = (*PLUGGED, "run", "-g", "{root}/g.yaml", "-o", "{root}/runs", "--run-id", "r1", "-c", "{root}/lexical.toml")


def door_site(root: Path, *, commands: bool = True) -> None:
    """The three fixture distributions under ``{root}/site``; ``commands=False`` leaves out every
    ``rulegauge.commands`` entry point (command groups register when the CLI starts)."""
    site(root)
    info = root / "site" / "acme_door-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-door\nVersion: 0.1.0\n", encoding="utf-8")
    shutil.copy(PLUGINS / "door_entry_points.txt", info / "entry_points.txt")
    if not commands:
        for found in (root / "site").glob("*.dist-info/entry_points.txt"):
            text = found.read_text(encoding="utf-8")
            found.write_text(re.sub(r"\[rulegauge\.commands\][^\[]*", "", text), encoding="utf-8")


def plugged(root: Path) -> None:
    """Builder: the plug-in site and the tiny gold set (``g.yaml``, ``lexical.toml``)."""
    door_site(root)
    fi.tiny(root)


def broken(name: str, cause: str) -> str:
    return f"plug-in '{name}' (rulegauge.commands, from {DOOR}) is broken: {cause}"


def ended(status: str, fragment: str = "") -> Callable[[Path], None]:
    """After: run ``r1`` ended ``status`` (its manifest's error holding ``fragment``)."""
    def check(root: Path) -> None:
        manifest = json.loads((root / "runs" / "r1" / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["status"] == status and fragment in manifest.get("error", ""), manifest
    return check


def engine_failed(name: str, doing: str, cause: str) -> str:
    return f"plug-in '{name}' (rulegauge.engines, from {DOOR}) failed {doing} engine {name}: {cause}"


H_DOOR_CASES: tuple[Case, ...] = (
    # --- #42 item 3, #43 item 2: a plug-in command or group whose name is taken is refused -----------
    Case("i43-2-i42-3-plugin-run-refused-list", plugged, LIST, 0,
         broken("acme-run", "refused: the command 'run' is taken (by rulegauge)")),
    Case("i43-2-i42-3-plugin-run-is-the-builtin", plugged, RUN, 0, "run directory",
         after=ended("complete")),  # the built-in evaluated it: a run folder, complete
    Case("i43-2-i42-3-plugin-goldset-group-refused-list", plugged, LIST, 0,
         broken("acme-goldset", "refused: the command 'goldset' is taken (by rulegauge)")),
    Case("i43-2-i42-3-plugin-goldset-subcommands-kept", plugged, (*PLUGGED, "goldset", "--help"), 0, "from-qrels"),
    Case("i43-2-i42-3-plugin-nameless-group-validate-refused", plugged, (*PLUGGED, "validate", "{root}/g.yaml"), 0,
         "OK"),
    Case("i43-2-i42-3-plugin-nameless-group-refused-list", plugged, LIST, 0,
         broken("acme-unnamed", "refused: the command 'validate' is taken (by rulegauge)")),
    Case("i43-2-i42-3-plugin-callback-refused", plugged, LIST, 0,
         broken("acme-callback", "refused: it sets the rulegauge callback")),
    Case("i43-2-i42-3-plugin-into-own-app-refused", plugged, (*PLUGGED, "acme-sneak"), 2, "No such command"),
    # --- #43 item 19: a group whose register fails leaves nothing registered ---------------------------
    Case("i43-19-register-fails-listed-broken", plugged, LIST, 0,
         broken("acme-half", "RuntimeError: planted: register failed after adding acme-half (raised by register)")),
    Case("i43-19-register-fails-command-absent", plugged, (*PLUGGED, "acme-half"), 2, "No such command 'acme-half'"),
    Case("i43-19-a-good-group-still-registers", plugged, (*PLUGGED, "acme-hello"), 0, "hello from acme-rulegauge"),
    # --- #43 item 11: engines contained like arms and fusion methods -----------------------------------
    Case("i43-11-engine-start-raises", plugged, (*RUN, "--engine", "acme-crash"), 2,
         engine_failed("acme-crash", "starting", "ConnectionError: planted: no scheduler at tcp://10.0.0.9:8786"),
         no_runs=True),
    Case("i43-11-engine-stop-raises-run-failed", plugged, (*RUN, "--engine", "acme-stopfail"), 2,
         engine_failed("acme-stopfail", "stopping", "RuntimeError: planted: the workers did not shut down"),
         after=ended("failed", "failed stopping engine acme-stopfail")),
    Case("i43-11-engine-not-an-engine", plugged, (*RUN, "--engine", "acme-not-an-engine"), 2,
         f"plug-in 'acme-not-an-engine' (rulegauge.engines, from {DOOR}) is broken: refused: "
         "'a string where an Engine belongs' (a str) is not an Engine", no_runs=True),
)
