"""The docs tier (``-m docs``): a shared embedding cache for its pages, and a summary of the
documented commands it did not run, with the reason each doc gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.docs_tier import all_commands


@pytest.fixture(scope="session")
def docs_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One embedding cache for every page (the sample is embedded once), models linked."""
    from tests.helpers.embedding_fakes import shared_model_cache

    return shared_model_cache(tmp_path_factory.mktemp("docs-cache"))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not any("docs_tier" in str(r.nodeid) for key in ("passed", "failed")
               for r in terminalreporter.stats.get(key, [])):
        return
    skipped = [c for c in all_commands() if c.skip]
    terminalreporter.section(f"docs tier: {len(skipped)} documented commands not run")
    for c in skipped:
        terminalreporter.write_line(f"{c.where}: {c.text[:90]}  -- {c.skip}")
