"""ONNX Runtime backends on the real e5-small: the fp32 graph reproduces torch, int8 passes
the quality guard on SRD chunks, the manifest records the build (slow: exports once per
machine into the user's model cache, then reuses it)."""

from __future__ import annotations

import numpy as np
import pytest

from rulegauge.embedding.cache import embed
from rulegauge.embedding.models import load_model
from tests.helpers.embedding_fakes import shared_model_cache
from tests.helpers.embedding_reference import SHORT_TEXTS as TEXTS


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", a.astype(np.float64), b.astype(np.float64))


@pytest.mark.slow
def test_onnx_fp32_reproduces_torch_fp32_and_records_its_build(fp32_reference, tmp_path):
    """torch's vectors: the session's fp32 reference (``encode_passages(TEXTS)``, one batch of 5,
    and ``encode_queries(TEXTS[1:2])``, computed once per session, tests/embedding/conftest.py)."""
    root = shared_model_cache(tmp_path)
    torch_fp32 = load_model("e5-small", root, "torch-fp32")  # its id only: the network never loads
    ref = fp32_reference["short"]
    model = load_model("e5-small", root, "onnx-fp32")
    vecs = model.encode_passages(TEXTS)
    assert vecs.dtype == np.float32 and vecs.shape == (len(TEXTS), 384)
    assert cosines(ref, vecs).min() >= 0.9999
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    alone = model.encode_queries(TEXTS[1:2])  # one text: no padding in its batch
    assert cosines(fp32_reference["short-query"], alone)[0] >= 0.9999
    d = model.describe()
    assert (d["backend"], d["engine"], d["dtype"]) == ("onnx-fp32", "onnx", "float32")
    assert d["onnx_build"]["fusions"]["Attention"] == 12 and d["onnxruntime"]
    assert d["model_id"] != torch_fp32.model_id
    unopened = load_model("e5-small", root, "onnx-fp32")  # a fully cached run: never opens the file
    assert unopened.describe()["onnx_build"] == d["onnx_build"] and unopened._onnx is None


@pytest.mark.slow
@pytest.mark.shared
def test_onnx_int8_passes_the_quality_guard_on_srd_chunks(srd_passages, fp32_reference, tmp_path):
    """All 48 SRD chunks (int8's margin is thinner: 1 - cosine up to 0.0048 measured) against the
    session's fp32 reference (tests/embedding/conftest.py)."""
    root = shared_model_cache(tmp_path)
    ref = fp32_reference["srd"]
    model = load_model("e5-small", root, "onnx-int8")
    new = embed(model, srd_passages, "passage", None)
    cos = cosines(ref, new)
    assert cos.min() >= 0.99, cos.min()
    assert not np.array_equal(ref, new)
    # one text per ONNX call: a passage's int8 vector does not depend on its batch mates
    alone = model.encode_passages([srd_passages[5], srd_passages[0]])
    np.testing.assert_array_equal(alone, new[[5, 0]])
    build = model.describe()["onnx_build"]
    assert build["quantisation"]["per_channel"] is True and build["backend"] == "onnx-int8"
