"""ONNX export cache: the key follows the model files and the recipe, a second use builds
nothing, a changed model hash builds a new folder, bad inputs fail naming the file."""

from __future__ import annotations

import json

import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.embedding import onnx_export as ox

PROV = {"weights_sha256": "a" * 64, "tokenizer_sha256": "b" * 64}


@pytest.fixture
def fake_build(monkeypatch):
    """Replace the (slow, real) export with one that writes a small file and counts calls."""
    calls = []

    def build(source, out, backend, base=None):
        calls.append((backend, base))
        out.write_bytes(f"onnx {backend}".encode())
        return {"opset": ox.OPSET, "fusions": {"Attention": 12}}

    monkeypatch.setattr(ox, "build", build)
    return calls


def test_key_follows_weights_tokenizer_backend_and_exporter_version(monkeypatch):
    key = ox.build_key(PROV, "onnx-fp32")
    assert key == ox.build_key(dict(PROV), "onnx-fp32")
    assert key != ox.build_key({**PROV, "weights_sha256": "c" * 64}, "onnx-fp32")
    assert key != ox.build_key({**PROV, "tokenizer_sha256": "c" * 64}, "onnx-fp32")
    assert key != ox.build_key(PROV, "onnx-int8")
    monkeypatch.setattr(ox, "EXPORTER_VERSION", ox.EXPORTER_VERSION + 1)
    assert key != ox.build_key(PROV, "onnx-fp32")


def test_second_use_does_not_export_and_a_changed_model_hash_does(tmp_path, fake_build):
    target = ox.onnx_folder(tmp_path, "e5-small", "onnx-fp32", PROV)
    assert target.parent == tmp_path / "models" / "onnx"
    first = ox.ensure_onnx(tmp_path / "src", target, "onnx-fp32", PROV)
    again = ox.ensure_onnx(tmp_path / "src", target, "onnx-fp32", PROV)
    assert len(fake_build) == 1 and first == again
    assert first["build_key"] == ox.build_key(PROV, "onnx-fp32")
    assert first["weights_sha256"] == PROV["weights_sha256"] and len(first["file_sha256"]) == 64
    changed = {**PROV, "weights_sha256": "d" * 64}
    other = ox.onnx_folder(tmp_path, "e5-small", "onnx-fp32", changed)
    assert other != target
    ox.ensure_onnx(tmp_path / "src", other, "onnx-fp32", changed)
    assert len(fake_build) == 2
    assert sorted(p.name for p in (tmp_path / "models" / "onnx").iterdir()) == sorted([target.name, other.name])


def test_int8_is_quantised_from_the_given_fp32_file(tmp_path, fake_build):
    base = tmp_path / "fp32.onnx"
    target = ox.onnx_folder(tmp_path, "e5-small", "onnx-int8", PROV)
    ox.ensure_onnx(tmp_path / "src", target, "onnx-int8", PROV, base)
    assert fake_build == [("onnx-int8", base)]


def test_a_broken_record_names_the_file(tmp_path):
    (tmp_path / ox.BUILD_RECORD).write_text("{not json", encoding="utf-8")
    with pytest.raises(RulegaugeError, match=r"rulegauge-onnx\.json: cannot read the build record"):
        ox.ensure_onnx(tmp_path / "src", tmp_path, "onnx-fp32", PROV)


def test_only_bert_models_and_known_backends_are_exported(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "xlm-roberta"}), encoding="utf-8")
    with pytest.raises(RulegaugeError, match="model_type 'xlm-roberta'; only bert"):
        ox.build(tmp_path, tmp_path / "out.onnx", "onnx-fp32")
    with pytest.raises(RulegaugeError, match="no ONNX recipe for backend 'torch-fp32'"):
        ox.build(tmp_path, tmp_path / "out.onnx", "torch-fp32")
