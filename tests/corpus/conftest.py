"""Fixtures of the corpus tests: the SRD 5.1 page texts, extracted once per session."""

from __future__ import annotations

import pytest

from rulegauge.corpus.page_cache import PageCache
from tests.helpers.common import SHARED
from tests.helpers.session_files import session_lock


@pytest.fixture(scope="session")
def srd_pages(tmp_path_factory: pytest.TempPathFactory) -> PageCache:
    """A page cache holding the SRD 5.1 PDF's page texts (skips when ../shared is absent).

    Extracting the 403 pages takes about 24 CPU-s (pypdf, two processes); the chunking and
    the ingest tests both read the same PDF, so the first of them in the session (under
    xdist: on any worker, under the lock) extracts it through the loader into a page cache
    in the session's shared temporary folder, and the other loads the same texts from there.
    The cache is rulegauge's own (:mod:`rulegauge.corpus.page_cache`, keyed by the file's
    hash, the loader code and pypdf): an entry holds exactly what the loader returned.
    """
    from rulegauge.corpus.ingest import spec_from_path
    from rulegauge.corpus.loaders import load_document

    pdf = SHARED / "corpora" / "srd-5.1" / "SRD5.1-CCBY4.0License.pdf"
    if not pdf.is_file():
        pytest.skip(f"{pdf} is absent")
    with session_lock(tmp_path_factory, "srd-pages") as folder:
        load_document(spec_from_path(pdf), PageCache(folder))  # parses once; a hit afterwards
    return PageCache(folder)
