"""The ``collection`` loader: one JSONL file of documents (BEIR's corpus.jsonl), a page each."""

import json

import pytest

from rulegauge.core.errors import ValidationError
from rulegauge.corpus.loaders import load_document, page_labels
from rulegauge.corpus.records import DocumentSpec
from tests.helpers.common import FIXTURES

TIDEPOOL = FIXTURES / "beir" / "tidepool" / "corpus.jsonl"


def spec(path):
    return DocumentSpec("c", str(path), "rulebook", "tidepool", "1", "en", options=(("format", "collection"),))


def test_a_page_per_document_title_then_text_labelled_by_id():
    _, pages = load_document(spec(TIDEPOOL))
    records = [json.loads(line) for line in TIDEPOOL.read_text(encoding="utf-8").splitlines()]
    assert len(pages) == len(records) == 42
    assert [p.page for p in pages] == list(range(1, 43))
    assert [p.label for p in pages] == [r["_id"] for r in records] == page_labels(spec(TIDEPOOL))
    first = records[0]
    assert pages[0].text == f"{first['title']}\n\n{first['text']}"
    assert all(p.outline_headings == () for p in pages)  # no title carried to the next document


def test_missing_title_blank_lines_and_extra_keys(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"_id": "a", "text": "Only text.", "metadata": {"x": 1}}\n\n'
                    '{"_id": "b", "title": "Only a title", "text": ""}\n', encoding="utf-8")
    _, pages = load_document(spec(path))
    assert [(p.label, p.text) for p in pages] == [("a", "Only text."), ("b", "Only a title")]


def test_bad_lines_are_all_named_with_file_and_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"_id": "a", "text": "x"}\n{"_id": "a", "text": "y"}\n{"text": "z"}\n'
                    'not json\n{"_id": "d", "text": 5, "title": 3}\n', encoding="utf-8")
    with pytest.raises(ValidationError) as err:
        load_document(spec(path))
    msg = str(err.value)
    assert f"{path}:2: _id 'a' appears twice (first on line 1)" in msg
    assert f"{path}:3: '_id' must be a non-empty string" in msg
    assert f"{path}:4: invalid JSON" in msg
    assert f"{path}:5: 'text' must be a string" in msg and "'title' must be a string" in msg


def test_each_page_keeps_its_records_title_through_the_page_cache(tmp_path):
    from rulegauge.corpus.page_cache import PageCache

    records = [json.loads(line) for line in TIDEPOOL.read_text(encoding="utf-8").splitlines()]
    cache = PageCache(tmp_path)
    for _ in range(2):  # a miss, then a hit: the same titles
        _, pages = load_document(spec(TIDEPOOL), cache)
        assert [p.title for p in pages] == [r["title"] for r in records]
    assert (cache.stats.misses, cache.stats.hits) == (1, 1)
