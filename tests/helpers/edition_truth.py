"""Where each page of the sample rulebook went in a later edition: the hand-made truth files of
``tests/fixtures/migrate/`` that the migration tests check carried labels against."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from typing import Any

from rulegauge.corpus.records import split_page_key
from tests.helpers.common import FIXTURES


def edition_truth(name: str) -> tuple[dict[str, Any], Callable[[str, str], str]]:
    """The truth file ``tests/fixtures/migrate/<name>-truth.toml`` and its ``true_page(question
    id, old page)``: the page a label of the rulebook belongs on in that edition (``split``:
    a page whose questions went to different pages, by question; else ``pages``, by page);
    pages of other documents stay where they were."""
    truth = tomllib.loads((FIXTURES / "migrate" / f"{name}-truth.toml").read_text(encoding="utf-8"))

    def true_page(question_id: str, old: str) -> str:
        doc, page = split_page_key(old)
        if doc != "bw-rules":
            return old
        return f"bw-rules#{truth['split'].get(f'{question_id} {old}') or truth['pages'][str(page)]}"

    return truth, true_page
