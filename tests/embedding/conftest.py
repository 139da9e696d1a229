"""Fixtures of the embedding tests: a seeded sample of real SRD chunks (from ../shared)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.common import SHARED


@pytest.fixture(scope="session")
def srd_passages() -> list[str]:
    """48 SRD 5.1 chunks drawn with seed 0 (skips when ../shared is absent)."""
    from rulegauge.corpus.chunking import build_corpus
    from rulegauge.corpus.ingest import spec_from_path
    from rulegauge.corpus.page_cache import PageCache
    from rulegauge.embedding.models import cache_root

    pdf = SHARED / "corpora" / "srd-5.1" / "SRD5.1-CCBY4.0License.pdf"
    if not pdf.exists():
        pytest.skip(f"{pdf} is absent")
    chunks = build_corpus([spec_from_path(pdf)], page_cache=PageCache(cache_root())).chunks
    rng = np.random.default_rng(0)
    return [chunks[i].text for i in sorted(rng.choice(len(chunks), 48, replace=False).tolist())]
