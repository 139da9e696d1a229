"""Embedding fan-out per engine: every engine has a runner; a runner decides where the
planned batches are embedded, never which (vectors and shards are the same)."""

from __future__ import annotations

import numpy as np

from rulegauge.core.engines import engines
from rulegauge.embedding.cache import EmbeddingCache, embed, in_process
from rulegauge.embedding.fanout import EMBED_RUNNERS, runner_for
from tests.helpers.embedding_fakes import FakeModel

TEXTS = [f"Rule {i}: the lantern " + "burns " * (i % 5) for i in range(11)]


def test_every_engine_has_a_runner() -> None:
    assert EMBED_RUNNERS.names() == engines().names()
    assert runner_for("local", FakeModel) is in_process


def test_a_runner_returning_batches_in_any_order_gives_the_same_vectors_and_shards(tmp_path) -> None:
    seen: list[list[str]] = []

    def backwards(model, role, batches, batch_size):
        for batch in reversed(batches):
            seen.append([t for _, t in batch])
            yield from in_process(model, role, [batch], batch_size)

    local = embed(FakeModel(), TEXTS, "passage", EmbeddingCache(tmp_path / "a", "fake-bow"), 4)
    other = embed(FakeModel(), TEXTS, "passage", EmbeddingCache(tmp_path / "b", "fake-bow"), 4,
                  runner=backwards)
    assert np.array_equal(local, other)
    assert [len(b) for b in seen] == [3, 4, 4]  # the same planned batches, longest first
    shards = [sorted(p.name for p in (tmp_path / x / "embeddings" / "fake-bow").iterdir())
              for x in "ab"]
    assert shards[0] == shards[1] and len(shards[0]) == 3
