"""Docs that run: every documented command of each page, executed as written in a scratch copy
of the repository (:mod:`tests.docs_tier.runner`), in page order, its exit code and stated
output checked; a command the page marks ``skip`` is listed with its reason at the end of the
session. Markers: :mod:`tests.helpers.docs_tier`, CONTRIBUTING.md "Docs that run"."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs_tier.runner import PageRun
from tests.helpers.docs_tier import PAGES, page_blocks

pytestmark = [pytest.mark.docs, pytest.mark.slow]
RUNNABLE = [p for p in PAGES if any(not c.skip for b in page_blocks(p) for c in b.commands)]


@pytest.mark.parametrize("page", RUNNABLE)
def test_the_page_runs_as_written(page: str, tmp_path: Path, docs_cache: Path) -> None:
    run = PageRun.make(tmp_path, docs_cache)
    try:
        for block in page_blocks(page):
            outcomes = run.run_block(block)
            for o in outcomes:
                assert o.code == o.command.exit, (
                    f"{o.command.where}: `{o.command.text}` exited {o.code}, the doc says "
                    f"{o.command.exit}:\n{o.output[-3000:]}")
                assert "Traceback" not in o.output, f"{o.command.where}:\n{o.output[-3000:]}"
            for text, prefix in block.expect:
                got = "".join(o.output for o in outcomes if o.command.text.startswith(prefix))
                assert text in got, f"{block.page}:{block.line}: output lacks {text!r}:\n{got[-3000:]}"
            for name in block.files:
                assert (run.root / name).exists(), f"{block.page}:{block.line}: {name} was not written"
    finally:
        run.stop()
