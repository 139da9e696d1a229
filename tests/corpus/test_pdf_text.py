"""Long PDFs are read by helper processes: same texts as one process, same outcome when a helper fails."""

import sys
from pathlib import Path

import pytest

from rulegauge.corpus import pdf_text
from rulegauge.corpus.formats import PdfLoader
from rulegauge.corpus.pdf_text import PARALLEL_MIN_PAGES, spans, workers_for
from tests.helpers.documents import make_pdf


def test_spans_cover_every_page_once_in_order_with_sizes_within_one():
    for n, parts in ((64, 2), (403, 2), (403, 3), (65, 4), (5, 5)):
        got = spans(n, parts)
        assert [p for a, b in got for p in range(a, b + 1)] == list(range(1, n + 1))
        sizes = [b - a + 1 for a, b in got]
        assert max(sizes) - min(sizes) <= 1 and len(got) == parts


def test_short_documents_and_one_worker_read_in_this_process(monkeypatch):
    monkeypatch.setenv("RULEGAUGE_PDF_WORKERS", "3")
    assert workers_for(PARALLEL_MIN_PAGES - 1) == 1 and workers_for(PARALLEL_MIN_PAGES) == 3
    monkeypatch.setenv("RULEGAUGE_PDF_WORKERS", "1")
    assert workers_for(1000) == 1


@pytest.fixture
def long_pdf(tmp_path: Path) -> Path:
    pages = [[f"Page {i} of the long rulebook", f"rule {i * 7} says move {i % 5} spaces", "Ünïcödé — ок"]
             for i in range(1, PARALLEL_MIN_PAGES + 7)]
    return make_pdf(tmp_path / "long.pdf", pages)


def _load(path: Path, monkeypatch, workers: str):
    monkeypatch.setenv("RULEGAUGE_PDF_WORKERS", workers)
    done = []
    monkeypatch.setattr("rulegauge.corpus.formats.pages_done", lambda n=1: done.append(n))
    return PdfLoader().load(path), sum(done)


def test_helpers_give_the_texts_one_process_gives(long_pdf, monkeypatch):
    one, n1 = _load(long_pdf, monkeypatch, "1")
    three, n3 = _load(long_pdf, monkeypatch, "3")
    assert one == three and len(one.texts) == PARALLEL_MIN_PAGES + 6 == n1 == n3
    assert one.texts[69].startswith("Page 70 of the long rulebook")


def test_a_failing_helper_has_its_span_read_here(long_pdf, monkeypatch):
    one, _ = _load(long_pdf, monkeypatch, "1")
    monkeypatch.setattr(sys, "executable", "/bin/false")  # every helper exits 1 with no output
    two, done = _load(long_pdf, monkeypatch, "2")
    assert two == one and done == len(one.texts)


def test_helper_entry_point_writes_one_json_line_per_page(long_pdf, capsys):
    assert pdf_text._main([str(long_pdf), "3", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(",")[0] for line in lines] == ["[3", "[4", "[5"]
    assert '"Page 4 of the long rulebook' in lines[1] and lines[1].endswith("null]")
