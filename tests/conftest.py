"""Shared fixtures: the ../shared data folder, tiny corpora, a small gold set."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.common import SHARED, make_tiny_corpus
from tests.helpers.file_order import file_costs, longest_files_first

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# rich wraps CLI output at the terminal width (80 when there is none); tests that look
# for a file path in the output must not depend on how long the checkout's path is
os.environ["COLUMNS"] = "250"
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items[:] = longest_files_first(items, file_costs())  # tests/helpers/file_order.py: why
    if SHARED.is_dir():
        return
    skip = pytest.mark.skip(reason=f"real data folder {SHARED} is absent (tests marked 'shared' need it)")
    for item in items:
        if "shared" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"real data folder {SHARED} is absent")
    return SHARED


@pytest.fixture
def tiny_corpus():
    return make_tiny_corpus()


