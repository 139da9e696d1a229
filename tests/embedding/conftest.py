"""Fixtures of the embedding tests: a seeded sample of real SRD chunks (from ../shared) and the
e5-small ``torch-fp32`` reference vectors the quality guards compare other backends against.

Both are made once per test session, not once per test or per xdist worker: the first worker
to get here builds them in the session's shared temporary folder under a file lock, the others
wait and read them (as tests/team/conftest.py does for its wheel). The reference vectors are
stored in an :class:`~rulegauge.embedding.cache.EmbeddingCache` keyed by the ``torch-fp32``
model id, so a worker that finds them never loads torch for them. The fp32 network used to be
loaded and run over the 48 SRD chunks by two tests (bf16 guard, int8 guard; ~20 CPU-s each)
and over :data:`SHORT_TEXTS` by a third.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.common import SHARED
from tests.helpers.embedding_reference import SHORT_TEXTS


def _session_folder(factory: pytest.TempPathFactory) -> Path:
    base = factory.getbasetemp()
    # xdist: each worker's basetemp is <session temp>/popen-gwN; the session's folder is its parent
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "embedding-reference"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextmanager
def _locked(folder: Path, name: str) -> Iterator[None]:
    """Hold the session-wide lock ``name``: the first worker builds, the others wait here."""
    with open(folder / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _srd_texts(folder: Path) -> list[str] | None:
    """48 SRD 5.1 chunks drawn with seed 0 (None when ../shared is absent), kept in the session
    folder (never in the repository) so the PDF is chunked once per session."""
    pdf = SHARED / "corpora" / "srd-5.1" / "SRD5.1-CCBY4.0License.pdf"
    if not pdf.exists():
        return None
    saved = folder / "srd-passages.json"
    with _locked(folder, "srd"):
        if not saved.exists():
            from rulegauge.corpus.chunking import build_corpus
            from rulegauge.corpus.ingest import spec_from_path
            from rulegauge.corpus.page_cache import PageCache
            from rulegauge.embedding.models import cache_root

            chunks = build_corpus([spec_from_path(pdf)], page_cache=PageCache(cache_root())).chunks
            rng = np.random.default_rng(0)
            texts = [chunks[i].text for i in sorted(rng.choice(len(chunks), 48, replace=False).tolist())]
            (folder / "srd-passages.tmp").write_text(json.dumps(texts), encoding="utf-8")
            (folder / "srd-passages.tmp").replace(saved)
        texts_read: list[str] = json.loads(saved.read_text(encoding="utf-8"))
    return texts_read


@pytest.fixture(scope="session")
def embedding_session(tmp_path_factory) -> Path:
    """The session's folder shared by the xdist workers (reference texts, vectors, locks)."""
    return _session_folder(tmp_path_factory)


@pytest.fixture(scope="session")
def srd_passages(embedding_session) -> list[str]:
    """48 SRD 5.1 chunks drawn with seed 0 (skips when ../shared is absent)."""
    texts = _srd_texts(embedding_session)
    if texts is None:
        pytest.skip(f"{SHARED / 'corpora' / 'srd-5.1'} is absent")
    return texts


@pytest.fixture(scope="session")
def fp32_reference(embedding_session) -> dict[str, np.ndarray]:
    """e5-small ``torch-fp32`` vectors, as the quality guards take them (``embed`` in input order,
    ``by_length=False``: one call per set, so each set's batches are what a test of its own would
    build): ``"srd"`` the 48 :func:`srd_passages` as passages (absent without ../shared),
    ``"short"`` :data:`SHORT_TEXTS` as passages (one batch of 5), ``"short-query"``
    ``SHORT_TEXTS[1]`` as a query, alone in its batch. Computed once per session."""
    from rulegauge.embedding.cache import EmbeddingCache, embed
    from rulegauge.embedding.models import load_model
    from tests.helpers.embedding_fakes import shared_model_cache

    folder = embedding_session
    srd = _srd_texts(folder)
    with _locked(folder, "fp32"):
        root = folder / "cache"
        if not root.exists():
            root.mkdir()
            shared_model_cache(root)  # the real models/ (e5 converted once per machine)
        model = load_model("e5-small", root, "torch-fp32")
        cache = EmbeddingCache(root, model.model_id)  # all hits after the first worker: no network
        sets = {"short": (SHORT_TEXTS, "passage"), "short-query": (SHORT_TEXTS[1:2], "query")}
        if srd is not None:
            sets["srd"] = (srd, "passage")
        return {name: embed(model, texts, role, cache, by_length=False)
                for name, (texts, role) in sets.items()}
