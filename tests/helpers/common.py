"""Shared test helpers: repository paths, tiny corpora, question builders, typer apps."""

from __future__ import annotations

from pathlib import Path

import typer

from rulegauge.corpus.records import Chunk, Document, Page, chunk_key, make_corpus
from rulegauge.goldset.records import PageRef, Question

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"

LEXICAL = REPO / "tests" / "fixtures" / "configs" / "lexical.toml"
FIXTURES = REPO / "tests" / "fixtures"


def typer_app(register) -> typer.Typer:
    """A fresh typer app with one command group registered (for CliRunner tests)."""
    app = typer.Typer()
    register(app)

    @app.callback()
    def _root() -> None:
        pass

    return app


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


def q(qid: str, text: str, *reqs: tuple[str, ...], language: str = "en") -> Question:
    """Build a question; each req is a tuple of 'doc#page' alternatives."""
    parsed = tuple(tuple(PageRef(r.split("#")[0], int(r.split("#")[1])) for r in req) for req in reqs)
    return Question(qid, text, language, parsed, game="G")


def rulegauge(*args: object) -> tuple[int, str]:
    """``rulegauge ARGS`` through typer's CliRunner in this process: (exit code, output)."""
    from typer.testing import CliRunner

    from rulegauge.cli import app

    res = CliRunner().invoke(app, [str(a) for a in args])
    return res.exit_code, res.output
