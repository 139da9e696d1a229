"""The on-disk embedding cache: hits, misses, atomic shards, roles, failures."""

from __future__ import annotations

import hashlib
from contextlib import contextmanager

import numpy as np
import pytest

from rulegauge.core.errors import RegistryError, RulegaugeError
from rulegauge.embedding.cache import CacheStats, EmbeddingCache, embed, text_key
from tests.helpers.embedding_fakes import FakeModel

TEXTS = ["Each player takes five lantern tokens.", "Boats move three spaces.",
         "A lit lantern scores two points."]


def test_second_run_embeds_nothing(tmp_path):
    model = FakeModel()
    first = embed(model, TEXTS, "passage", EmbeddingCache(tmp_path, model.model_id))
    assert model.calls == 1
    cache = EmbeddingCache(tmp_path, model.model_id)  # a new process: reads the shards
    second = embed(model, TEXTS, "passage", cache)
    assert model.calls == 1
    assert cache.stats == CacheStats(hits=3, misses=0, model_calls=0, shards_written=0)
    assert np.array_equal(first, second)


def test_only_new_texts_are_embedded_and_order_is_kept(tmp_path):
    model = FakeModel()
    cache = EmbeddingCache(tmp_path, model.model_id)
    embed(model, TEXTS[:2], "passage", cache)
    out = embed(model, [TEXTS[2], TEXTS[0], TEXTS[2]], "passage", cache)
    assert model.texts == [*TEXTS[:2], TEXTS[2]]  # the duplicate is embedded once
    assert cache.stats == CacheStats(hits=1, misses=2 + 1, model_calls=2, shards_written=2)
    assert np.array_equal(out[0], out[2])
    assert np.array_equal(out[1], model._vector(TEXTS[0]))


def test_roles_are_cached_separately(tmp_path):
    model = FakeModel()
    cache = EmbeddingCache(tmp_path, model.model_id)
    embed(model, TEXTS, "passage", cache)
    embed(model, TEXTS, "query", cache)
    assert model.calls == 2
    assert text_key("query", "x") == "query:" + hashlib.sha256(b"x").hexdigest()
    with pytest.raises(RegistryError, match="choose one of: query, passage"):
        embed(model, TEXTS, "document", cache)


def test_models_have_separate_folders(tmp_path):
    a, b = FakeModel("model-a"), FakeModel("model-b", dimension=32)
    embed(a, TEXTS, "passage", EmbeddingCache(tmp_path, a.model_id))
    out = embed(b, TEXTS, "passage", EmbeddingCache(tmp_path, b.model_id))
    assert b.calls == 1 and out.shape == (3, 32)
    assert sorted(p.name for p in (tmp_path / "embeddings").iterdir()) == ["model-a", "model-b"]


def test_one_shard_per_batch_survives_an_interruption(tmp_path):
    class Crashing(FakeModel):
        def encode_passages(self, texts, batch_size=32):
            if self.calls == 1:
                raise KeyboardInterrupt
            return super().encode_passages(texts, batch_size)

    crashing = Crashing()
    with pytest.raises(KeyboardInterrupt):
        embed(crashing, TEXTS, "passage", EmbeddingCache(tmp_path, "fake-bow"), batch_size=2)
    folder = tmp_path / "embeddings" / "fake-bow"
    assert len(list(folder.glob("shard-*.npz"))) == 1
    assert not list(folder.glob(".tmp-*"))
    model = FakeModel()
    (folder / ".tmp-999-dead.npz").write_bytes(b"half a write")  # ignored: not a shard
    embed(model, TEXTS, "passage", EmbeddingCache(tmp_path, model.model_id), batch_size=2)
    assert model.texts == [TEXTS[1]]  # batches go longest first: [0, 2] was stored, [1] not


def test_batches_are_longest_first_and_rows_stay_in_input_order(tmp_path):
    texts = ["bb", "a", "dddd", "cc", "eeee"]
    model = FakeModel()
    out = embed(model, texts, "passage", None, batch_size=2)
    assert model.texts == ["dddd", "eeee", "bb", "cc", "a"]  # equal lengths: input order
    assert model.calls == 3
    reference = FakeModel()
    plain = embed(reference, texts, "passage", None, batch_size=2, by_length=False)
    assert reference.texts == texts
    np.testing.assert_array_equal(out, plain)


def test_determinism_same_input_twice(tmp_path):
    model = FakeModel()
    assert np.array_equal(embed(model, TEXTS, "query"), embed(model, TEXTS, "query"))
    cache = EmbeddingCache(tmp_path, model.model_id)
    assert np.array_equal(embed(model, TEXTS, "query", cache), embed(model, TEXTS, "query", cache))


def test_empty_input_and_progress(tmp_path):
    model = FakeModel()
    assert embed(model, [], "passage").shape == (0, 64)
    seen = []

    def progress(description, total):
        seen.append((description, total))
        return lambda n: seen.append(n)

    embed(model, TEXTS, "passage", EmbeddingCache(tmp_path, model.model_id), batch_size=2,
          progress=progress)
    assert seen == [("embedding passage texts (fake-bow)", 3), 2, 1]

    @contextmanager
    def stage(description, total):  # the CLI's convention (rulegauge.cli.progress)
        seen.append((description, total))
        yield lambda n: seen.append(n)
        seen.append("closed")

    seen.clear()
    embed(model, TEXTS, "query", batch_size=2, progress=stage)
    assert seen == [("embedding query texts (fake-bow)", 3), 2, 1, "closed"]


def test_bad_model_output_fails_loudly():
    class Unnormalised(FakeModel):
        def encode_passages(self, texts, batch_size=32):
            return 2 * super().encode_passages(texts, batch_size)

    class Short(FakeModel):
        def encode_passages(self, texts, batch_size=32):
            return super().encode_passages(texts, batch_size)[:-1]

    with pytest.raises(RulegaugeError, match="not L2-normalised"):
        embed(Unnormalised(), TEXTS, "passage")
    with pytest.raises(RulegaugeError, match="shape"):
        embed(Short(), TEXTS, "passage")
    with pytest.raises(TypeError):
        embed(FakeModel(), "one string", "passage")


def test_damaged_shard_raises(tmp_path):
    folder = tmp_path / "embeddings" / "fake-bow"
    folder.mkdir(parents=True)
    with open(folder / "shard-bad.npz", "wb") as f:
        np.savez(f, keys=np.asarray(["passage:x", "passage:y"]), vectors=np.zeros((1, 64)))
    with pytest.raises(RulegaugeError, match=r"shard-bad\.npz"):
        embed(FakeModel(), TEXTS, "passage", EmbeddingCache(tmp_path, "fake-bow"))
    with pytest.raises(RulegaugeError, match="folder name"):
        EmbeddingCache(tmp_path, "../escape")


def test_cached_vectors_of_another_dimension_raise(tmp_path):
    embed(FakeModel("same-id", dimension=32), TEXTS, "passage",
          EmbeddingCache(tmp_path, "same-id"))
    with pytest.raises(RulegaugeError, match="dimension 64"):
        embed(FakeModel("same-id"), TEXTS, "passage", EmbeddingCache(tmp_path, "same-id"))
