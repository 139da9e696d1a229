"""The docs' generated tables (module map, arms, fusion methods, ranking metrics, answerers, peer names)
are what the code says now; a module without a docstring has no concept to show."""

import subprocess
import sys

from rulegauge.testing.doc_tables import NO_DOC, TABLES, module_rows, render
from tests.helpers.common import REPO


def test_every_generated_table_is_current():
    # in a fresh process: the registries as the distribution declares them, not as other tests
    # of this worker left them (stand-ins registered, built-ins replaced)
    res = subprocess.run([sys.executable, "-m", "rulegauge.testing.doc_tables", "--check"], cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, "regenerate: python -m rulegauge.testing.doc_tables\n" + res.stdout + res.stderr


def test_every_module_has_its_row_and_a_concept():
    rows = module_rows()
    assert len(rows) == len({m for m, _ in rows}) and ("core/plugins", rows[[m for m, _ in rows].index(
        "core/plugins")][1]) in rows
    assert [m for m, c in rows if c == NO_DOC] == []
    assert "testing/doc_tables" in {m for m, _ in rows} and "store/__main__" in {m for m, _ in rows}


def test_render_replaces_only_between_the_markers_and_needs_them():
    text = ("before\n<!-- generated: arms (python -m rulegauge.testing.doc_tables) -->\nold\n"
            "<!-- end generated: arms -->\nafter\n")
    assert render(text, "arms", "NEW") == text.replace("old", "NEW")
    assert render("no markers", "arms", "NEW") is None
    assert set(TABLES) == {"module-map", "arms", "fusion-methods", "ranking-metrics", "answerers", "peer-names"}
