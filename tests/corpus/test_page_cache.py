"""The page-text cache: hits, misses, invalidation by content, options and loader code."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from rulegauge.core.import_graph import closure, source_file
from rulegauge.corpus import loaders, page_cache
from rulegauge.corpus.chunking import build_corpus
from rulegauge.corpus.formats import PdfLoader
from rulegauge.corpus.loaders import load_document
from rulegauge.corpus.page_cache import PageCache, cache_key
from rulegauge.corpus.records import DocumentSpec
from tests.helpers.common import REPO
from tests.helpers.documents import make_pdf

MARKDOWN = "# Setup\nDeal five cards.\n\f# Turns\nDraw one card, then play one.\n"


def spec(path, **options):
    return DocumentSpec("rb", str(path), "rulebook", "G", "1", "en", options=tuple(options.items()))


def pages_of(spec_, cache):
    document, pages = load_document(spec_, cache)
    return document, [(p.page, p.text, p.label, p.outline_headings) for p in pages]


def test_miss_then_hit_gives_identical_pages(tmp_path):
    src = tmp_path / "rules.md"
    src.write_text(MARKDOWN, encoding="utf-8")
    cache = PageCache(tmp_path / "cache")
    first = pages_of(spec(src), cache)
    assert (cache.stats.misses, cache.stats.hits, cache.stats.writes) == (1, 0, 1)
    second = pages_of(spec(src), cache)
    assert (cache.stats.misses, cache.stats.hits) == (1, 1)
    assert first == second == pages_of(spec(src), None)
    assert len(list(cache.folder.glob("*.json"))) == 1
    assert not list(cache.folder.glob(".*.tmp-*"))  # core.atomic temporaries
    a = build_corpus([spec(src)], page_cache=cache)
    assert a.chunks == build_corpus([spec(src)]).chunks


def test_edited_file_options_and_loader_code_invalidate(tmp_path, monkeypatch):
    src = tmp_path / "rules.md"
    src.write_text(MARKDOWN, encoding="utf-8")
    cache = PageCache(tmp_path / "cache")
    pages_of(spec(src), cache)
    src.write_text(MARKDOWN.replace("five", "six"), encoding="utf-8")  # new content: miss
    _, pages = pages_of(spec(src), cache)
    assert "Deal six cards." in pages[0][1] and cache.stats.misses == 2
    _, pages = pages_of(spec(src, format="text"), cache)  # other loader: miss, other pages
    assert pages[0][1].startswith("# Setup") and cache.stats.misses == 3
    monkeypatch.setattr(page_cache, "loader_version", lambda: "changed loader code")
    pages_of(spec(src), cache)
    assert (cache.stats.misses, cache.stats.hits) == (4, 0)
    keys = {cache_key("a" * 64, "pdf", {}), cache_key("b" * 64, "pdf", {}),
            cache_key("a" * 64, "text", {}), cache_key("a" * 64, "pdf", {"x": 1})}
    assert len(keys) == 4


def test_loader_version_hashes_the_loader_source():
    page_cache.loader_version.cache_clear()
    v = page_cache.loader_version()
    assert len(v) == 64 and v == page_cache.loader_version()
    modules = set(page_cache.loader_modules())
    # derived from the loaders' imports: text extraction and title matching included (issue 42 item 6)
    assert {"rulegauge.corpus.loaders", "rulegauge.corpus.formats", "rulegauge.corpus.outline",
            "rulegauge.corpus.collection", "rulegauge.core.text", "rulegauge.corpus.pdf_text",
            "rulegauge.corpus.title_match"} <= modules
    assert not {m for m in modules if m.startswith(("rulegauge.arms", "rulegauge.pipeline", "rulegauge.embedding"))}


def test_a_change_to_any_module_that_shapes_page_text_changes_the_key():
    modules = page_cache.loader_modules()
    real = {m: source_file(m, page_cache.PACKAGE).read_bytes() for m in modules}
    base = page_cache.code_hash(modules, real.__getitem__)
    assert base == page_cache.loader_version()
    for m in modules:  # one byte more in any one of them
        assert page_cache.code_hash(modules, lambda n, m=m: real[n] + (b"#" if n == m else b"")) != base, m


def test_the_module_set_follows_imports_added_anywhere(tmp_path):
    """A loader that starts importing a new module, at top level or inside a function, relative or
    absolute, brings it into the set (the walk reads source: rulegauge.core.import_graph)."""
    pkg = tmp_path / "rulegauge"
    for rel, body in {"__init__.py": "", "corpus/__init__.py": "",
                      "corpus/loaders.py": "from .formats import x\ndef f():\n    import rulegauge.corpus.late\n",
                      "corpus/formats.py": "from rulegauge.corpus import shaping\nimport numpy\n",
                      "corpus/shaping.py": "", "corpus/late.py": "", "corpus/unrelated.py": ""}.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(body, encoding="utf-8")
    assert closure(["rulegauge.corpus.loaders"], pkg) == [
        "rulegauge", "rulegauge.corpus", "rulegauge.corpus.formats", "rulegauge.corpus.late",
        "rulegauge.corpus.loaders", "rulegauge.corpus.shaping"]


def test_damaged_entry_is_a_miss_and_is_rewritten(tmp_path):
    src = tmp_path / "rules.md"
    src.write_text(MARKDOWN, encoding="utf-8")
    cache = PageCache(tmp_path / "cache")
    expected = pages_of(spec(src), cache)
    (entry,) = cache.folder.glob("*.json")
    for damage in ("{not json", json.dumps({"version": 1, "texts": ["a"], "labels": [],
                                            "headings": [], "title": None})):
        entry.write_text(damage, encoding="utf-8")
        assert pages_of(spec(src), cache) == expected
        assert json.loads(entry.read_text(encoding="utf-8"))["texts"] == [
            t for _, t, _, _ in expected[1]]
    assert (cache.stats.misses, cache.stats.hits) == (3, 0)


def test_a_cached_pdf_is_not_parsed_again(tmp_path, monkeypatch):
    pdf = make_pdf(tmp_path / "rules.pdf", [["Setup", "Deal five cards."], ["Turns", "Draw."]],
                   outline=[(0, "Setup", 0), (0, "Turns", 1)],
                   labels=[(0, 1, "/D", None, 7)], title="Rules")
    cache = PageCache(tmp_path / "cache")
    first = pages_of(spec(pdf), cache)

    def no_pypdf(self, path):
        raise AssertionError("pypdf was called on a cache hit")

    monkeypatch.setattr(PdfLoader, "load", no_pypdf)
    second = pages_of(spec(pdf), cache)
    assert first == second and cache.stats.hits == 1
    assert [label for _, _, label, _ in second[1]] == ["7", "8"]
    assert second[0].title == "Rules"


def test_rulegauge_run_fills_the_page_cache_in_a_fresh_process(tmp_path):
    code = ("import sys; from pathlib import Path; "
            "from rulegauge.pipeline.options import RunOptions; from rulegauge.pipeline.retrieval import load_inputs; "
            "load_inputs(RunOptions(cache_dir=Path(sys.argv[1])))")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for _ in range(2):
        subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, cwd=REPO,
                       env=env, timeout=120)
    entries = list((tmp_path / "pages").glob("*.json"))
    assert entries and all(json.loads(e.read_text(encoding="utf-8"))["texts"] for e in entries)
    assert loaders.LOADERS.names()  # the cache sits in front of every registered loader


@pytest.fixture(autouse=True)
def _fresh_loader_version():
    page_cache.loader_version.cache_clear()
    yield
    page_cache.loader_version.cache_clear()
