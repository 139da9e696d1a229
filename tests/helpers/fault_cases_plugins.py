"""Fault-tier rows of issue 33, item 6: plug-ins contained.

Each row puts the fixture package ``tests/fixtures/plugins/acme_rulegauge`` in ``{root}/site`` as
two installed distributions: ``acme-rulegauge`` (the good plug-ins and the conformance suites'
planted mistakes, ``entry_points.txt``) and ``acme-hostile`` (``hostile_entry_points.txt``: a
module calling ``sys.exit()`` at import, one raising a ``BaseException`` subclass, entry points
naming ``42`` or a class of the wrong kind in every group, arms returning NaN scores, negative
ranks, one chunk five times, a score that is a string or no list at all, arms raising,
calling ``sys.exit(0)`` or interrupted mid-search, and fusion methods returning the wrong shape,
NaN or raising). The command runs with ``{root}/site`` on ``sys.path``, as pip would install them.

What must hold: a broken plug-in takes no command down (``list`` names each with its package
and cause, exit 0; commands that do not need it work), a command naming it exits 2 naming it
and the cause before any run folder, a broken result or a plug-in's exception mid-run exits 2
naming the component (and the question, where there is one), and every run that fails, for any
reason, ends ``failed`` in its manifest, never ``running``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from tests.helpers import fault_inputs as fi
from tests.helpers.common import FIXTURES
from tests.helpers.fault_case import Case

PLUGINS = FIXTURES / "plugins"
DISTRIBUTIONS = (("acme_rulegauge", "acme-rulegauge", "entry_points.txt"),
                 ("acme_hostile", "acme-hostile", "hostile_entry_points.txt"))
HOSTILE = "acme-hostile==0.1.0"

PLUGGED = ("python", "-c", "import sys; sys.path.insert(0, '{root}/site'); from rulegauge.cli import main; main()")
LIST = (*PLUGGED, "list")
RUN = (*PLUGGED, "run", "-g", "{root}/g.yaml", "-o", "{root}/runs", "--run-id", "r1", "-c", "{root}/c.toml")


def site(root: Path) -> None:
    """The fixture package and both distributions' metadata under ``{root}/site``."""
    shutil.copytree(PLUGINS / "acme_rulegauge", root / "site" / "acme_rulegauge")
    for folder, name, entry_points in DISTRIBUTIONS:
        info = root / "site" / f"{folder}-0.1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n", encoding="utf-8")
        shutil.copy(PLUGINS / entry_points, info / "entry_points.txt")


def plugged(config: str = "") -> Callable[[Path], None]:
    """Builder: the plug-in site, the tiny gold set (``g.yaml``, ``lexical.toml``) and ``c.toml``."""
    def build(root: Path) -> None:
        site(root)
        fi.tiny(root)
        if config:
            fi.write(root, "c.toml", config)
    return build


def arm(kind: str) -> str:
    """A config fusing bm25 with an arm ``x`` of ``kind``."""
    return f'[arms.bm25]\n[arms.x]\nkind = "{kind}"\n[grid]\nk = [60]\narms = [["bm25", "x"]]\n'


def method(name: str) -> str:
    """A config fusing bm25 and boost with the fusion method ``name`` (config ``f``)."""
    return ('[arms.bm25]\n[arms.boost]\n[grid]\nk = [60]\narms = [["bm25"]]\n'
            f'[[configs]]\nname = "f"\nmethod = "{name}"\narms = ["bm25", "boost"]\n')


def failed(fragment: str, *, ranks_stored: bool = False) -> Callable[[Path], None]:
    """After: run ``r1`` ended ``failed``, its manifest's error holding ``fragment``; a broken arm's
    results were never stored (``arm_ranks``), a broken fusion's scores never (``fused``)."""
    def check(root: Path) -> None:
        run = root / "runs" / "r1"
        manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["status"] == "failed", manifest
        assert fragment in manifest["error"], manifest["error"]
        assert (run / "arm_ranks.parquet").exists() == ranks_stored
        assert not (run / "fused.parquet").exists() and not (run / "metrics.parquet").exists()
    return check


def broken(name: str, group: str, cause: str) -> str:
    return f"plug-in '{name}' ({group}, from {HOSTILE}) is broken: {cause}"


def _run_fails(case_id: str, config: str, fragment: str) -> Case:
    return Case(case_id, plugged(config), RUN, 2, fragment,
                after=failed(fragment, ranks_stored=config.startswith("[arms.bm25]\n[arms.boost]")))


def ended_failed(fragment: str) -> Callable[[Path], None]:
    """After: run ``r1`` ended ``failed`` with ``fragment`` in its manifest's error, and holds no
    ``metrics`` table (the scoring broke; what came before may be stored)."""
    def check(root: Path) -> None:
        run = root / "runs" / "r1"
        manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["status"] == "failed" and fragment in manifest["error"], manifest
        assert not (run / "metrics.parquet").exists()
    return check


def _metric_fails(case_id: str, metric: str, fragment: str) -> Case:
    return Case(case_id, plugged(), (*RUN[:-2], "-c", "{root}/lexical.toml", "-m", metric), 2, fragment,
                after=ended_failed(fragment))


PLUGIN_CASES: tuple[Case, ...] = (
    # --- loading: nothing an import raises ends the program; list names each broken plug-in ----------
    Case("plugin-sys-exit-at-import-list", plugged(), LIST, 0,
         broken("acme-exits-at-import", "rulegauge.arms", "SystemExit: 3 (sys.exit at import)")),
    Case("plugin-baseexception-at-import-list", plugged(), LIST, 0,
         broken("acme-raises-at-import", "rulegauge.arms", "Planted: planted at import")),
    Case("plugin-sys-exit-at-import-run-other", plugged(), (*RUN[:-2], "-c", "{root}/lexical.toml"), 0,
         "run directory"),  # a command that does not need the broken plug-in works
    Case("plugin-sys-exit-at-import-validate", plugged(), (*PLUGGED, "validate", "{root}/g.yaml"), 0, "OK"),
    Case("plugin-sys-exit-at-import-run-named", plugged(arm("acme-exits-at-import")), RUN, 2,
         broken("acme-exits-at-import", "rulegauge.arms", "SystemExit: 3"), no_runs=True),
    Case("plugin-register-exits-list", plugged(), LIST, 0,
         broken("acme-exits", "rulegauge.commands", "SystemExit: 4 (raised by register)")),
    # --- entry points of the wrong type: refused at load, by name ---------------------------------------
    Case("plugin-int-arm-list", plugged(), LIST, 0,
         broken("acme-42", "rulegauge.arms", "refused: 42 (an int) is not an arm class")),
    Case("plugin-int-arm-run", plugged(arm("acme-42")), RUN, 2,
         broken("acme-42", "rulegauge.arms", "refused: 42 (an int) is not an arm class"), no_runs=True),
    Case("plugin-class-not-an-arm-run", plugged(arm("acme-not-an-arm")), RUN, 2,
         "is not an arm class: it lacks prepare, describe", no_runs=True),
    Case("plugin-int-fusion-run", plugged(method("acme-42")), RUN, 2,
         broken("acme-42", "rulegauge.fusion", "refused: 42 (an int) is not a FusionMethod"), no_runs=True),
    Case("plugin-class-not-a-fusion-method-run", plugged(method("acme-not-a-method")), RUN, 2,
         "NotAFusionMethod'> (a class) is not a FusionMethod", no_runs=True),
    Case("plugin-int-metric-run", plugged(), (*RUN[:-2], "-c", "{root}/lexical.toml", "-m", "acme-42@5"), 2,
         broken("acme-42", "rulegauge.metrics", "refused: 42 (an int) is not a metric family"), no_runs=True),
    Case("plugin-int-answerer-list", plugged(), LIST, 0,
         broken("acme-42", "rulegauge.answerers", "refused: 42 (an int) is not an answerer class")),
    Case("plugin-int-command-list", plugged(), LIST, 0,
         broken("acme-42", "rulegauge.commands", "refused: 42 (an int) is not a register(app) function")),
    # --- results checked where they enter; the run ends failed ------------------------------------------
    _run_fails("plugin-arm-nan-score", arm("acme-nan"), "arm x broke the arm contract (docs/plugins.md): "
               "question q1: hit 1 has a score that is not finite (nan)"),
    _run_fails("plugin-arm-negative-rank", arm("acme-negative"), "question q1: ranks must be 1..3 in list order"
               " without gaps; hit 1 has rank -1"),
    _run_fails("plugin-arm-one-chunk-five-times", arm("acme-repeat"), "is ranked more than once"),
    _run_fails("plugin-arm-string-score", arm("acme-strscore"),
               "question q1: hit 1 has score 'high' (a str), not a number"),
    _run_fails("plugin-arm-returns-none", arm("acme-none"),
               "search returned None (a NoneType), not a list of ArmResult"),
    _run_fails("plugin-arm-raises", arm("acme-raise"), f"plug-in 'acme-raise' (rulegauge.arms, from {HOSTILE}) failed "
               "as arm x: ValueError: planted: the index is corrupt"),
    _run_fails("plugin-arm-sys-exit-mid-run", arm("acme-exit"), "failed as arm x: SystemExit: 0"),
    Case("plugin-arm-interrupted", plugged(arm("acme-interrupt")), RUN, 130, "arm x: searching",
         after=failed("interrupted (KeyboardInterrupt)")),
    _run_fails("plugin-fusion-wrong-shape", method("acme-shape"), f"fusion method 'acme-shape' (rulegauge.fusion, from "
               f"{HOSTILE}) broke the fusion contract (docs/plugins.md): config f: fuse returned shape (3,), not a "
               "(1, 3) array"),
    _run_fails("plugin-fusion-nan", method("acme-nanfuse"), "config f, question q1: fused score nan"),
    _run_fails("plugin-fusion-raises", method("acme-raisefuse"), f"plug-in 'acme-raisefuse' (rulegauge.fusion, "
               f"from {HOSTILE}) failed fusing config f: ZeroDivisionError: planted"),
    _metric_fails("plugin-metric-raises-mid-run", "acme_raisemetric@5", "metric acme_raisemetric@5 (computed by "
                  "acme_rulegauge.hostile_metrics) failed scoring 1 questions: ZeroDivisionError: planted"),
    _metric_fails("plugin-metric-wrong-shape", "acme_shortmetric@5", "metric acme_shortmetric@5 (computed by "
                  "acme_rulegauge.hostile_metrics) returned shape (1, 2) for 1 questions"),
)
