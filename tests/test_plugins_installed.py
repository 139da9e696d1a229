"""The plug-in tier: the registry-sensitive tests again, with the fixture plug-in package installed.

``acme-rulegauge`` (``tests/fixtures/plugins``: an arm, an answerer, fusion methods, metric
families, a table, a command group, a name that a built-in has and a module that does not exist)
is put on the path with its dist-info, as pip would install it, and one pytest process runs the
tests whose result depends on what is registered: the generated docs (module map, arms, fusion
methods, ranking metrics, answerers, docs/schemas.md) describe rulegauge's own components only,
the conformance suites pass on every component the package adds, ``rulegauge list`` and the metric
docs hold, the command groups register. The fixture's planted mistakes (``acme-lowceiling``,
``acme_wide``; ``acme-rank0`` is in the slow tier) are deselected: that the suites catch them is
asserted in tests/core/test_plugins.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers.common import FIXTURES, REPO

TIER = ("tests/testing/test_doc_tables.py", "tests/testing/test_tables.py", "tests/testing/test_metrics.py",
        "tests/testing/test_fusion.py", "tests/testing/test_arms.py", "tests/cli/test_catalog.py",
        "tests/cli/test_command_groups.py", "tests/metrics/test_info.py", "tests/store/test_table_facts.py")
"""The registry-sensitive test files (module docstring)."""
PLANTED = ("acme-lowceiling", "acme_wide")


def test_the_registry_tests_pass_with_the_fixture_plugins_installed(tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(FIXTURES / "plugins" / "acme_rulegauge", site / "acme_rulegauge")
    info = site / "acme_rulegauge-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-rulegauge\nVersion: 0.1.0\n", encoding="utf-8")
    shutil.copy(FIXTURES / "plugins" / "entry_points.txt", info / "entry_points.txt")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(site)])}
    # the suites over every component run on the plug-in's only (the quick tier runs them on the built-ins)
    deselect = "(acme or not every_registered) and " + " and ".join(f"not {name}" for name in PLANTED)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-m", "not slow",
                           "-k", deselect, "-o", "addopts=--strict-markers", *TIER],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    probe = subprocess.run([sys.executable, "-c", "from rulegauge.core import plugins; "
                            "print(plugins.origins('rulegauge.tables')['acme_reviews'])"],
                           cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert probe.stdout.strip() == "acme-rulegauge==0.1.0", probe.stderr  # the tier did run with the plug-ins
