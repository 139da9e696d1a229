"""Shared fixtures: the ../shared data folder, tiny corpora, a small gold set."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import typer

from harness.corpus import Chunk, Document, Page, chunk_key, make_corpus
from harness.goldset import PageRef, Question

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# rich wraps CLI output at the terminal width (80 when there is none); tests that look
# for a file path in the output must not depend on how long the checkout's path is
os.environ["COLUMNS"] = "250"
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if SHARED.is_dir():
        return
    skip = pytest.mark.skip(reason=f"real data folder {SHARED} is absent (tests marked 'shared' need it)")
    for item in items:
        if "shared" in item.keywords:
            item.add_marker(skip)


def typer_app(register) -> typer.Typer:
    """A fresh typer app with one command group registered (for CliRunner tests)."""
    app = typer.Typer()
    register(app)

    @app.callback()
    def _root() -> None:
        pass

    return app


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"real data folder {SHARED} is absent")
    return SHARED


def make_tiny_corpus():
    """Two games' worth of pages: a rulebook, an errata, an FAQ of game G."""
    docs = [
        Document("rb", "rulebook", "G", "en-1", "en", "Rulebook"),
        Document("er", "errata", "G", "en-1", "en", "Errata"),
        Document("faq", "faq", "G", "en-1", "en", "FAQ"),
    ]
    texts = {
        ("rb", 1): "Setup. Each player takes five lantern tokens and a harbour board.",
        ("rb", 2): "Turn order. On your turn move your boat up to three harbour spaces.",
        ("rb", 3): "Scoring. A lit lantern scores two points at the end of the game.",
        ("er", 1): "Correction: a lit lantern scores three points, not two.",
        ("faq", 1): "Can I move my boat four spaces? Yes, the FAQ says boats move four.",
    }
    pages = [Page(d, p, t) for (d, p), t in texts.items()]
    chunks = [Chunk(chunk_key(d, p, 0), d, p, ("H",), t, 0, len(t)) for (d, p), t in texts.items()]
    return make_corpus(docs, pages, chunks)


@pytest.fixture
def tiny_corpus():
    return make_tiny_corpus()


def q(qid: str, text: str, *reqs: tuple[str, ...], language: str = "en") -> Question:
    """Build a question; each req is a tuple of 'doc#page' alternatives."""
    parsed = tuple(tuple(PageRef(r.split("#")[0], int(r.split("#")[1])) for r in req) for req in reqs)
    return Question(qid, text, language, parsed, game="G")
